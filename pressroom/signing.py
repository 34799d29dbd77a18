"""Signed, short-lived download links: HMAC over what the link opens and until when."""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

from pressroom.errors import BadSignature, LinkExpired

# ``expires`` exactly as links spell it: ASCII digits, no sign, no leading zero. Any other
# spelling of the same time (+N, 0N, spaces, N_NNN, other scripts' digits) is another link.
_EXPIRES = re.compile(r"[1-9][0-9]{0,11}")


def binding(artifact_sha256: str | None, artifact_key: str | None) -> str:
    """What a link is bound to: the output's digest, which the job keeps after its artifact is
    deleted (so a link's signature is still checked first), else its key."""
    return artifact_sha256 or artifact_key or ""


def sidecar_binding(bound: str) -> str:
    """What a sidecar text's link is bound to: its output's binding, marked as the text's."""
    return f"sidecar:{bound}"


@dataclass(frozen=True, slots=True)
class Signer:
    secret: bytes
    ttl_s: float = 900.0

    def _mac(self, job_id: str, bound: str, expires: str) -> str:
        message = f"{job_id}\n{bound}\n{expires}".encode()
        return hmac.new(self.secret, message, hashlib.sha256).hexdigest()

    def sign(self, job_id: str, bound: str, *, now: float) -> tuple[int, str]:
        expires = int(now + self.ttl_s)
        return expires, self._mac(job_id, bound, str(expires))

    def verify(self, job_id: str, bound: str, expires: str, signature: str, *, now: float) -> None:
        """Raise ``BadSignature`` (403) or ``LinkExpired`` (410); return when the link is good.
        The MAC covers ``expires`` as received."""
        if not _EXPIRES.fullmatch(expires):
            raise BadSignature("the link's signature does not match")
        if not hmac.compare_digest(
            self._mac(job_id, bound, expires).encode(), signature.encode("utf-8", "replace")
        ):
            raise BadSignature("the link's signature does not match")
        if int(expires) < now:
            raise LinkExpired("the link has expired; fetch the job again for a fresh one")


def artifact_links(
    signer: Signer,
    job_id: str,
    artifact_sha256: str | None,
    artifact_key: str,
    base: str,
    *,
    sidecar: bool,
    now: float,
) -> tuple[str, str | None]:
    """A complete job's signed download links (the PDF's, and its sidecar text's when it has
    one, signed apart: neither opens the other), under ``base``: the job JSON's and the
    webhook's."""
    bound = binding(artifact_sha256, artifact_key)
    expires, signature = signer.sign(job_id, bound, now=now)
    pdf = f"{base}/v1/artifacts/{job_id}?expires={expires}&signature={signature}"
    if not sidecar:
        return pdf, None
    expires, signature = signer.sign(job_id, sidecar_binding(bound), now=now)
    return pdf, f"{base}/v1/artifacts/{job_id}/sidecar?expires={expires}&signature={signature}"
