"""One error taxonomy: the class says whether a retry can help, the code says why."""

from __future__ import annotations

from typing import Any


class PressroomError(Exception):
    """Base of every error Pressroom raises on purpose."""

    code: str = "INTERNAL_ERROR"
    http_status: int = 500
    exit_code: int = 1

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else self.code

    def one_line(self) -> str:
        return f"{self.code}: {self.message}"


class PermanentError(PressroomError):
    """Bad input: retrying cannot help. The job is dead-lettered with ``code``."""

    http_status = 422
    exit_code = 2


class ReviewRequired(PressroomError):
    """The output needs a human's judgement before anyone sees it."""

    code = "OUTPUT_CHECK_FAILED"
    http_status = 409
    exit_code = 3
    # what detection found, for the person who judges the held copy (set by the redaction engine)
    findings: list[Any] = []  # noqa: RUF012  (replaced per instance, never mutated)


class TransientError(PressroomError):
    """Something outside the input failed; the same work may succeed later."""

    code = "TRANSIENT"
    http_status = 503
    exit_code = 75


class BadMime(PermanentError):
    code = "BAD_MIME"
    http_status = 415


class TooLarge(PermanentError):
    code = "TOO_LARGE"
    http_status = 413


class PageLimit(PermanentError):
    code = "PAGE_LIMIT"
    http_status = 413


class PixelLimit(PermanentError):
    code = "PIXEL_LIMIT"
    http_status = 413


class Encrypted(PermanentError):
    code = "ENCRYPTED"


class Corrupt(PermanentError):
    code = "CORRUPT"


class UnreadableScan(PermanentError):
    code = "UNREADABLE_SCAN"


class UnknownTemplate(PermanentError):
    code = "UNKNOWN_TEMPLATE"
    http_status = 400


class DeadlineExceeded(PermanentError):
    code = "DEADLINE_EXCEEDED"


class OutputCheckFailed(ReviewRequired):
    code = "OUTPUT_CHECK_FAILED"


class EngineUnavailable(TransientError):
    """The OCR engine could not start (missing language data, library failure)."""

    code = "ENGINE_UNAVAILABLE"


class BadRequest(PermanentError):
    """The request itself is malformed (not the document): a missing part, a bad field."""

    code = "BAD_REQUEST"
    http_status = 400


class Unauthorized(PressroomError):
    code = "UNAUTHORIZED"
    http_status = 401
    exit_code = 2


class NotFound(PressroomError):
    code = "NOT_FOUND"
    http_status = 404
    exit_code = 2


class UnauthorizedCustomer(PermanentError):
    """The verifier said no: the customer is unknown, suspended or denied. Never retried."""

    code = "UNAUTHORIZED_CUSTOMER"
    http_status = 403


class VerifierUnavailable(TransientError):
    """The identity service timed out or failed: the job is retried with backoff."""

    code = "VERIFIER_UNAVAILABLE"


class Forbidden(PressroomError):
    """A valid key without the role this needs (an operator key for operator routes)."""

    code = "FORBIDDEN"
    http_status = 403
    exit_code = 2


class Conflict(PressroomError):
    code = "CONFLICT"
    http_status = 409
    exit_code = 2


class Refused(PressroomError):
    """Refused at the door for now: 429 with Retry-After (seconds)."""

    http_status = 429
    exit_code = 75

    def __init__(self, message: str, *, retry_after: float, code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.retry_after = max(1, int(retry_after + 0.999))


class Overloaded(Refused):
    code = "OVERLOADED"


class QuotaExceeded(Refused):
    code = "QUOTA_EXCEEDED"


class ContentLimit(PermanentError):
    """A page's drawing instructions inflate past the per-page caps (a content-stream bomb)."""

    code = "CONTENT_LIMIT"
    http_status = 413


class MemoryLimit(TransientError):
    """The worker passed its resident-memory ceiling on this job; retried once, then permanent."""

    code = "MEMORY_LIMIT"


class ReviewExpired(PermanentError):
    """A held copy waited in review past the retention window; the job ends rejected."""

    code = "REVIEW_EXPIRED"


class StorageFull(TransientError):
    """Local disk or the blob store is out of space: 503 with Retry-After, nothing kept."""

    code = "STORAGE_FULL"


class RequestTimeout(BadRequest):
    """The client stopped sending its request (headers or body) for too long."""

    code = "REQUEST_TIMEOUT"
    http_status = 408


class BadConfig(PressroomError):
    """A setting is missing or out of range; the process refuses to start."""

    code = "BAD_CONFIG"
    exit_code = 2


# -- signed links --
class BadSignature(PressroomError):
    """A download link whose signature does not match what it opens (or was never signed)."""

    code = "BAD_SIGNATURE"
    http_status = 403


class LinkExpired(PressroomError):
    """A download link past its expiry; the job's page gives a fresh one."""

    code = "LINK_EXPIRED"
    http_status = 410
