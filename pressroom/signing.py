"""Signed, short-lived download links: HMAC over what the link opens and until when."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from pressroom.errors import BadSignature, LinkExpired


@dataclass(frozen=True, slots=True)
class Signer:
    secret: bytes
    ttl_s: float = 900.0

    def _mac(self, job_id: str, artifact_key: str, expires: int) -> str:
        message = f"{job_id}\n{artifact_key}\n{expires}".encode()
        return hmac.new(self.secret, message, hashlib.sha256).hexdigest()

    def sign(self, job_id: str, artifact_key: str, *, now: float) -> tuple[int, str]:
        expires = int(now + self.ttl_s)
        return expires, self._mac(job_id, artifact_key, expires)

    def verify(
        self, job_id: str, artifact_key: str, expires: str, signature: str, *, now: float
    ) -> None:
        """Raise ``BadSignature`` (403) or ``LinkExpired`` (410); return when the link is good."""
        try:
            when = int(expires)
        except ValueError:
            raise BadSignature("the link's signature does not match") from None
        if not hmac.compare_digest(
            self._mac(job_id, artifact_key, when).encode(), signature.encode("utf-8", "replace")
        ):
            raise BadSignature("the link's signature does not match")
        if when < now:
            raise LinkExpired("the link has expired; fetch the job again for a fresh one")
