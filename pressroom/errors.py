"""One error taxonomy: the class says whether a retry can help, the code says why.

Every error Pressroom raises on purpose is defined here, under ``PermanentError``,
``TransientError`` or ``ReviewRequired`` (or the API's refusals: ``Unauthorized``, ``NotFound``,
``Forbidden``, ``Conflict``, ``Refused``). Private control-flow exceptions that never leave the
module that raises them (``_Late`` in notify/webhooks.py, ``LeaseLost`` in worker/lease.py,
``TooBig`` in engines/streams.py) stay beside their one use.

Over 500 lines: one class per reason code, each with its family, HTTP status and exit code: the
taxonomy is one table on purpose (a test keeps every error class here).
"""

from __future__ import annotations

from typing import Any

# what a command's exit status says (the family's ``exit_code`` below for an error of ours)
EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_TEMPORARY = 75  # try again later (sysexits EX_TEMPFAIL)
EXIT_INTERRUPTED = 130


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
    # where the check found what held the output (``corrections.SheetFinding``s): the error's
    # own detail, as a parser's error names its line. What the engine found, and the review
    # sheet, travel as a value (``outcomes.Held``), never on the error
    rechecked: tuple[Any, ...] = ()


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


class UnsupportedScript(PermanentError):
    """A redaction for names of a page whose text is mostly in a script or language the loaded
    name models were not made for, refused (``PRESSROOM_UNSUPPORTED_SCRIPT=refuse``): its text
    was read, so it is not an unreadable scan, and an OCR pack (``UNSUPPORTED_LANGUAGE``) would
    not help."""

    code = "UNSUPPORTED_SCRIPT"


class UnsupportedForm(PermanentError):
    """An XFA form whose pages hold no appearances of their own: a viewer builds what it shows,
    so flattening would deliver it empty."""

    code = "UNSUPPORTED_FORM"


class UnknownTemplate(PermanentError):
    code = "UNKNOWN_TEMPLATE"
    http_status = 400


class DeadlineExceeded(PermanentError):
    code = "DEADLINE_EXCEEDED"


class OutputCheckFailed(ReviewRequired):
    code = "OUTPUT_CHECK_FAILED"


class TextReadBack(OutputCheckFailed):
    """A page's text layer extracts back short of what OCR read. A redaction holds it (the
    check cannot vouch for what it reads); a plain job delivers it with a warning."""


class OutputInvalid(PermanentError):
    """A plain job's output failed its structural check: nothing is delivered and nothing is
    held (no one could approve a broken file); the message says which check."""

    code = "OUTPUT_INVALID"


class PdfaUnreachable(PermanentError):
    """A plain job asked for PDF/A-2b whose output breaks a clause Pressroom cannot mend: the
    message names it; the same job as a plain PDF goes through."""

    code = "PDFA_UNREACHABLE"


class RedactionLeak(ReviewRequired):
    """A redacted value is still in the output (read back by another parser, or by OCR)."""

    code = "REDACTION_LEAK"


class TooManyFindings(ReviewRequired):
    """A page holds more findings than a person could judge (``PRESSROOM_MAX_PAGE_FINDINGS``):
    burned as found, held for a person rather than published."""

    code = "TOO_MANY_FINDINGS"


class OutputChanged(ReviewRequired):
    """A retry made other bytes than the artifact already stored for the same digest: the new
    output is kept under a versioned key and a human picks, rather than either winning silently."""

    code = "OUTPUT_CHANGED"


class ReviewRequested(ReviewRequired):
    """The job asked for every redaction to be seen by a person (``review=always``): the output
    passed its checks and waits for a reviewer's approval."""

    code = "REVIEW_REQUESTED"


class DoubtfulNames(ReviewRequired):
    """More of the redaction's name findings are doubtful than the operator's setting allows
    (``PRESSROOM_DOUBT_HOLD_SHARE``): every one of them is burned, and a person looks at the
    held copy, where they are marked."""

    code = "DOUBTFUL_NAMES"


class NamesImplausible(ReviewRequired):
    """Many of the document's name findings never appear with a given name, a title or a
    person's verb: the detector is over-firing on this document (a brochure's product words, a
    table's headers). Every one is burned, and a person looks at the held copy."""

    code = "NAMES_IMPLAUSIBLE"


class UnsupportedScriptHeld(ReviewRequired):
    """A redaction for names of a page whose text is mostly in a script or language the loaded
    name models were not made for (``PRESSROOM_UNSUPPORTED_SCRIPT=hold``): what applies
    (accounts, addresses, names by rule) ran and was burned, and a person looks at the held copy,
    since nothing says the names were found."""

    code = "UNSUPPORTED_SCRIPT"


class NoText(ReviewRequired):
    """A redaction of a document in which no page yields text (``allow_no_text``): there was
    nothing to detect, so nothing says it is safe; a person looks before it is published."""

    code = "NO_TEXT"


class Corrected(ReviewRequired):
    """A reviewer's corrections were applied and the rebuilt output passed every check: it is
    held again for that reviewer to look at and approve, never published by the rebuild itself."""

    code = "CORRECTED"


class EngineUnavailable(TransientError):
    """The OCR engine could not start (missing language data, library failure)."""

    code = "ENGINE_UNAVAILABLE"


class BadRequest(PermanentError):
    """The request itself is malformed (not the document): a missing part, a bad field."""

    code = "BAD_REQUEST"
    http_status = 400


class TemplateError(UnknownTemplate):
    """A template exists but cannot be used as written: a missing key, a value of the wrong
    type or out of range, a file that does not parse. Its own code, so an operator can tell a
    broken template from a name nobody registered."""

    code = "BAD_TEMPLATE"
    http_status = 400


class UnsupportedPolicy(PermanentError):
    code = "UNSUPPORTED_POLICY"
    http_status = 400


class UnsupportedLanguage(PermanentError):
    """OCR languages that are not installed (or not Tesseract codes at all): installing the
    pack fixes it, retrying does not."""

    code = "UNSUPPORTED_LANGUAGE"
    http_status = 400


class PolicyExpired(PermanentError):
    code = "EXPIRED"
    http_status = 400


class ExpiryPassed(PermanentError):
    """A new key's expiry that has already passed: the key would never work."""

    code = "EXPIRED"
    http_status = 400


class EncryptionError(PermanentError):
    """A blob that fails its integrity check: tampered, truncated, or not the blob stored
    under this key. Retrying cannot help."""

    code = "STORAGE_INTEGRITY"


class MasterKeyMissing(TransientError):
    """The blob was sealed with a master key this process does not have (a rotation not yet
    rolled out everywhere): retried, so fixing the configuration saves the job."""

    code = "STORAGE_KEY_UNAVAILABLE"


class KmsKeyRefused(MasterKeyMissing):
    """The KMS refused the key-encryption key (disabled, pending deletion, access denied,
    unknown, no credentials): nothing is sealed or opened without it, and no plaintext stands
    in. Retried, so re-enabling the key or granting access saves the job."""

    code = "KMS_KEY_REFUSED"


class KmsUnavailable(TransientError):
    """The KMS did not answer (unreachable, timed out, throttled, its own fault): the job is
    retried with backoff; nothing is written unsealed meanwhile."""

    code = "KMS_UNAVAILABLE"


class StorageUnavailable(TransientError):
    code = "STORAGE_UNAVAILABLE"


class BadConfig(PermanentError):
    """A setting is missing or out of range; the process refuses to start. Not the client's
    fault, so a request that meets it is answered 500."""

    code = "BAD_CONFIG"
    http_status = 500
    exit_code = 2


class UnsafeFolder(BadConfig):
    """A folder the process keeps its own state in is not its own: another user owns it, or
    group or others may write it without the sticky bit, or it is a link. Refused before any
    file in it is opened."""

    code = "UNSAFE_FOLDER"


class UntrustedBackup(PermanentError):
    """A backup whose schema carries objects (tables, indexes, triggers, views) that its own
    revision does not define: refused before anything is restored."""

    code = "UNTRUSTED_BACKUP"


class LifecycleNeedsS3(PermanentError):
    """`storage lifecycle` on local storage: lifecycle rules are the bucket's; on a local
    folder housekeeping does their work."""

    code = "LIFECYCLE_NEEDS_S3"


class LifecycleRefused(PermanentError):
    """The bucket refused to read or write its lifecycle configuration (no permission, no
    such bucket, a rule it does not accept): the same call fails again until that is fixed."""

    code = "LIFECYCLE_REFUSED"


class RecognizerConfigError(BadConfig):
    """An operator's recogniser factory does not load: retrying the job cannot help until the
    configuration is fixed."""

    code = "RECOGNIZER_CONFIG"


class NerModelError(RecognizerConfigError):
    """The configured model is not installed or cannot be loaded: a configuration error."""


class Unauthorized(PressroomError):
    code = "UNAUTHORIZED"
    http_status = 401
    exit_code = 2


class NotFound(PressroomError):
    code = "NOT_FOUND"
    http_status = 404
    exit_code = 2


class BlobNotFound(NotFound):
    """No blob under the key: the API's 404; a worker that meets it has a bug (INTERNAL_ERROR)."""

    exit_code = 1


class UnauthorizedCustomer(PermanentError):
    """The verifier said no: the customer is unknown, suspended or denied. Never retried."""

    code = "UNAUTHORIZED_CUSTOMER"
    http_status = 403


class VerifierUnavailable(TransientError):
    """The identity service timed out or failed: the job is retried with backoff."""

    code = "VERIFIER_UNAVAILABLE"


# -- the malware scanner (scanning.py) --


class MalwareFound(PermanentError):
    """The scanner found a signature in the source: never processed, never retried. The
    message names the signature, never the file."""

    code = "MALWARE_FOUND"


class ScanTooLarge(PermanentError):
    """The scanner refused the stream as longer than it scans (clamd's StreamMaxLength): not a
    pass, and the same file would be refused again until the operator raises the limit."""

    code = "SCAN_TOO_LARGE"


class ScannerUnavailable(TransientError):
    """The scanner is down, refused the connection, timed out or answered what it never
    answers: never a pass; retried with backoff, dead-lettered with this code at the end."""

    code = "SCANNER_UNAVAILABLE"


class Forbidden(PressroomError):
    """A valid key without the role this needs (an operator key for operator routes)."""

    code = "FORBIDDEN"
    http_status = 403
    exit_code = 2


class CsrfRejected(Forbidden):
    """A sign-in or a change at the reviewer's desk without the form's token, or with a token
    that is not this session's."""

    code = "CSRF_REJECTED"


class Conflict(PressroomError):
    code = "CONFLICT"
    http_status = 409
    exit_code = 2


class ForeignLifecycleRules(Conflict):
    """The bucket has lifecycle rules Pressroom did not make, and writing ours would replace
    them (S3 keeps one configuration per bucket): refused without ``--force``."""

    code = "LIFECYCLE_FOREIGN_RULES"


class LifecycleOverlap(Conflict):
    """The bucket's lifecycle rules and this store's would share keys: another Pressroom
    store's prefix inside or around this one's, or a foreign rule on keys ours would expire.
    Refused whatever ``--force`` says: one store's rules would delete another's objects."""

    code = "LIFECYCLE_OVERLAP"


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


class TextLimit(PermanentError):
    """A page of a redaction job holds more text than detection reads: refused, never
    delivered unredacted (detection's cost grows with the text it is handed)."""

    code = "TEXT_LIMIT"
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


class PrivateAddress(BadRequest):
    """A webhook URL that resolves to a private, loopback, link-local or multicast address."""

    code = "PRIVATE_ADDRESS"


class InvalidCursor(BadRequest):
    """A job-list cursor this service did not write (edited, truncated, from another
    deployment): start again from the first page."""

    code = "INVALID_CURSOR"


class RequestTimeout(BadRequest):
    """The client stopped sending its request (headers or body) for too long."""

    code = "REQUEST_TIMEOUT"
    http_status = 408


# -- the job store --


class StoreUnavailable(TransientError):
    """The job database did not answer (down, unreachable, pool exhausted)."""

    code = "STORE_UNAVAILABLE"


class SchemaBehind(TransientError):
    """The database's schema is not the one this code was written for (``/readyz``): a
    migration has yet to run, or the database was migrated by newer code."""

    code = "SCHEMA_BEHIND"


class UnstorableValue(PermanentError):
    """A value the column cannot hold (too long, a NUL): the request's fault, so the API shows
    it as the bad request it is."""

    code = "BAD_REQUEST"
    http_status = 400


class DuplicateRow(Exception):
    """A unique or foreign key refused a row. The store catches it where a race is expected
    (two first uses at once); anywhere else it is a bug, so deliberately not a PressroomError."""


class IdempotencyConflict(PermanentError):
    """The same Idempotency-Key was used before with a different request."""

    code = "IDEMPOTENCY_CONFLICT"
    http_status = 422
    exit_code = 2


class DeadlineUnreachable(PermanentError):
    """Refused at the door: this upload cannot finish inside its deadline even on an empty
    queue. Not a 429: retrying the same request cannot help."""

    code = "DEADLINE_EXCEEDED"
    http_status = 422


class TooBigForQuota(PermanentError):
    code = "QUOTA_EXCEEDED"
    http_status = 413


# -- signed links --
class BadSignature(Forbidden):
    """A download link whose signature does not match what it opens (or was never signed):
    an API refusal like a missing role, with its own code."""

    code = "BAD_SIGNATURE"
    http_status = 403
    exit_code = PressroomError.exit_code


class LinkExpired(PermanentError):
    """A download link past its expiry; the job's page gives a fresh one (the same link never
    works again, so retrying it cannot help)."""

    code = "LINK_EXPIRED"
    http_status = 410
    exit_code = PressroomError.exit_code
