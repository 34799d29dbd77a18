"""Every reason code, with what it means: docs/errors.md is generated from this table and the
classes in errors.py (``python -m pressroom.errorcodes --markdown``), and a test keeps the two
the same — a code added to errors.py without a line here fails that test."""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass

from pressroom import errors
from pressroom.errors import (
    PermanentError,
    PressroomError,
    Refused,
    ReviewRequired,
    TransientError,
)
from pressroom.jobs.backoff import ONCE_MORE

# the codes set where they happen rather than by a class: (family, HTTP status or None)
LOOSE_CODES: dict[str, tuple[str, int | None]] = {
    "INTERNAL_ERROR": ("permanent", 500),  # a bug: not ours to classify, never retried
    "LEASE_EXPIRED": ("transient", None),  # the worker died mid-job (SIGKILL, OOM)
    "SOURCE_MISSING": ("permanent", None),
    "CANCELLED": ("permanent", None),  # a tenant's DELETE: the job ends rejected, not retried
    "RETRIES_EXHAUSTED": ("permanent", None),
    "REVIEW_REJECTED": ("permanent", None),  # a reviewer said no: the job ends rejected
    "METHOD_NOT_ALLOWED": ("refusal", 405),  # the framework's, answered as a problem
    "UNAVAILABLE": ("transient", None),  # the CLI's client could not reach the service
}

MEANINGS = {
    "BAD_CONFIG": "A setting is missing or out of range: the process does not start (exit 2); "
    "a request that meets it is answered 500.",
    "BAD_MIME": "Not a PDF, PNG, JPEG or TIFF by its content, or empty.",
    "BAD_REQUEST": "The request itself is malformed: a missing part, a bad field, header or "
    "parameter, or a value too long to store.",
    "BAD_SIGNATURE": "A download link whose signature does not match what it opens.",
    "CONFLICT": "The job is not in a state that allows this (e.g. a redrive of a job that is "
    "not a dead letter).",
    "CONTENT_LIMIT": "A page's drawing instructions, shown text or objects pass the caps.",
    "CORRUPT": "The file cannot be parsed, rendered or decoded.",
    "TEXT_LIMIT": "A page of a redaction job holds more text than detection reads "
    "(`PRESSROOM_MAX_DETECT_CHARS`): refused before it is read, never delivered unredacted.",
    "DEADLINE_EXCEEDED": "The job cannot finish, or did not finish, inside its deadline.",
    "ENCRYPTED": "A PDF that needs a password to open; a PDF with only an owner password "
    "(permissions) is processed, its output unencrypted.",
    "ENGINE_UNAVAILABLE": "The OCR engine could not start (a library failure; language data "
    "missing for the job is `UNSUPPORTED_LANGUAGE`).",
    "EXPIRED": "The redaction policy's `expires_at` has passed.",
    "FORBIDDEN": "A valid key without the role this needs (an operator key for operator routes).",
    "IDEMPOTENCY_CONFLICT": "The same Idempotency-Key was used before with a different request.",
    "INTERNAL_ERROR": "A bug: the job is dead-lettered at once, its traceback logged with the "
    "job id only.",
    "LEASE_EXPIRED": "The worker running the job died (SIGKILL, out of memory, abort): the "
    "lease ran out and the job is retried.",
    "CORRECTED": "A reviewer's corrections were applied at the desk and the rebuilt output "
    "passed every check: it waits in review for that reviewer's approval.",
    "CSRF_REJECTED": "A sign-in or change at the reviewer's desk (/review) without the form's "
    "token or with another session's: reload the page and try again.",
    "DOUBTFUL_NAMES": "Three or more of the redaction's name findings, and more of them than "
    "`PRESSROOM_DOUBT_HOLD_SHARE` allows, are doubtful: every one is burned, and the copy is "
    "held for a person, with the doubtful ones marked at the desk.",
    "REVIEW_REQUESTED": "The job asked for a person to see its redaction (`review=always`): "
    "the output passed every check and waits in review for approval.",
    "INVALID_CURSOR": "A job-list cursor the service did not write (edited or truncated): "
    "start again from the first page.",
    "LIFECYCLE_FOREIGN_RULES": "`storage lifecycle --apply`: the bucket has lifecycle rules "
    "this store did not make (their IDs are not its own `pressroom-AREA@PREFIX`: an "
    "operator's, or another store's), and S3 replaces a bucket's whole configuration: "
    "nothing was written. "
    "`--force` writes them back, unchanged, beside Pressroom's (exit 2).",
    "LIFECYCLE_OVERLAP": "`storage lifecycle --apply`: rules on the bucket share keys with "
    "this store's — another Pressroom store's prefix inside or around this one's, or a foreign "
    "rule on keys Pressroom's would expire — so one's rules would delete the other's objects: "
    "nothing was written, `--force` or not; give each store a prefix of its own (exit 2).",
    "LIFECYCLE_NEEDS_S3": "`storage lifecycle` with local storage: lifecycle rules are an S3 "
    "feature; on a local folder housekeeping (in `serve`) deletes what has expired (exit 2).",
    "LIFECYCLE_REFUSED": "`storage lifecycle`: the bucket refused to read or write its "
    "lifecycle configuration (the S3 code in brackets: `AccessDenied` wants "
    "s3:GetLifecycleConfiguration and s3:PutLifecycleConfiguration; `NoSuchBucket`) (exit 2).",
    "LINK_EXPIRED": "A download link past its expiry; fetch the job for a fresh one.",
    "MEMORY_LIMIT": "The worker passed its resident-memory ceiling on this job: retried once, "
    "permanent the second time in a row.",
    "METHOD_NOT_ALLOWED": "The path exists but does not take this method (`Allow` lists those "
    "it takes).",
    "NOT_FOUND": "No such job, artifact or path for this caller.",
    "NAMES_IMPLAUSIBLE": "The detector found many 'names' that never appear with a given "
    "name, a title or a person's verb: the detector is over-firing on this document. Each is "
    "burned; the copy is held for a person.",
    "NO_TEXT": "A redaction of a document in which no page yields text, delivered only because "
    "`allow_no_text` was asked: detection had nothing to read, so the output is held for a "
    "person.",
    "OUTPUT_CHANGED": "A retry made an output that differs from the one already stored for the "
    "job: the new one is kept under a versioned key and held for review; both stay stored.",
    "OUTPUT_CHECK_FAILED": "A redaction's output check failed: the copy is held for a human's "
    "review.",
    "OUTPUT_INVALID": "A plain job's output failed its structural check (pages, parsing, what it "
    "may carry): nothing is delivered and nothing is held; the message names the check.",
    "OVERLOADED": "The lane's queue is full: come back after Retry-After seconds.",
    "PAGE_LIMIT": "More pages than PRESSROOM_MAX_PAGES.",
    "PDFA_UNREACHABLE": "A plain job asked for PDF/A-2b and the output breaks a clause Pressroom "
    "cannot mend (the message names it): nothing is delivered; as a plain PDF it goes through.",
    "PIXEL_LIMIT": "A bitmap, or a document's bitmaps together, past the pixel caps.",
    "PRIVATE_ADDRESS": "A webhook URL that resolves to a private, loopback, link-local or "
    "multicast address.",
    "QUOTA_EXCEEDED": "The tenant's quota (jobs, stored bytes, bytes an hour) is reached: 429 "
    "for now, 413 when this upload alone is larger than the quota.",
    "RECOGNIZER_CONFIG": "An operator's recogniser factory or the configured model does not "
    "load: fix the setting and redrive.",
    "REDACTION_LEAK": "A redacted value is still in the output (read back by another parser, "
    "or by OCR): held for review.",
    "REQUEST_TIMEOUT": "The client stopped sending its request (headers or body) for too long.",
    "RETRIES_EXHAUSTED": "A transient failure outlasted the job's attempts: dead-lettered; "
    "redrive it once the cause is fixed.",
    "REVIEW_EXPIRED": "Nobody reviewed a held copy inside the retention window.",
    "REVIEW_REJECTED": "A reviewer rejected the held copy.",
    "CANCELLED": "The tenant cancelled the job (DELETE /v1/jobs/{id}) before it ended; its "
    "source and any held copy are deleted. Counted as a cancel, not a dead letter.",
    "SOURCE_MISSING": "The stored source is gone (deleted by retention or by hand).",
    "STORAGE_FULL": "Local disk or the blob store is out of space; nothing was kept.",
    "STORAGE_INTEGRITY": "A stored blob fails its integrity check: tampered, truncated, or not "
    "the blob stored under this key.",
    "STORAGE_KEY_UNAVAILABLE": "The blob was sealed with a master key this process does not "
    "have (a rotation not yet rolled out everywhere).",
    "STORAGE_UNAVAILABLE": "The blob store did not answer.",
    "KMS_KEY_REFUSED": "The KMS refused the key-encryption key (disabled, pending deletion, "
    "access denied, unknown): nothing is sealed or opened, never a plaintext fallback; "
    "retried, so re-enabling the key or granting access saves the job.",
    "KMS_UNAVAILABLE": "The KMS did not answer (unreachable, timed out, throttled): retried "
    "with backoff; nothing is written unsealed meanwhile.",
    "SCHEMA_BEHIND": "`/readyz` only: the database's schema revision is not this code's "
    "(run `pressroom db upgrade`, or the migration Job, before sending traffic).",
    "STORE_UNAVAILABLE": "The job database did not answer (down, unreachable, pool exhausted).",
    "TOO_LARGE": "The upload passes PRESSROOM_MAX_BYTES.",
    "TOO_MANY_FINDINGS": "A page holds more findings than a person could judge "
    "(`PRESSROOM_MAX_PAGE_FINDINGS`): every one is burned and the copy is held for a person; "
    "`pressroom detect` prints the first ones and says how many more there were.",
    "TRANSIENT": "Something outside the input failed; the same work may succeed later.",
    "UNAUTHORIZED": "No API key, or one that is unknown, expired or revoked (`WWW-Authenticate: "
    "Bearer`).",
    "UNAUTHORIZED_CUSTOMER": "The identity verifier said no: the customer is unknown, suspended "
    "or denied.",
    "UNAVAILABLE": "The CLI's client could not reach the service (exit 75).",
    "UNKNOWN_TEMPLATE": "No such template for this tenant (or not one it may use).",
    "BAD_TEMPLATE": "The template exists but cannot be used as written: its `template.toml` "
    "lacks a key, has a value of the wrong type or out of range, or does not parse. The "
    "message names the key; fix the file (`pressroom templates` lists every template's state).",
    "UNREADABLE_SCAN": "Recognition found no usable text. The line ends with the way past it: "
    "`(try --allow-no-text or --ocr force)` from the CLI, `(try allow_no_text=true or "
    "ocr=force)` in the API's `message`.",
    "UNSAFE_FOLDER": "A folder the watcher keeps its state in (or moves files into) is not "
    "its own: owned by another user, writable by group or others without the sticky bit, or a "
    "link. Refused at start and on every use (exit 2); nothing in it is opened.",
    "UNTRUSTED_BACKUP": "`db restore` and `restore`: the backup carries schema objects "
    "(tables, indexes, triggers, views; in a PostgreSQL dump also functions and any other kind) "
    "that its revision does not define; or, for `restore`, a file differs from the backup's "
    "manifest (size or SHA-256), is missing, or is not listed in it: refused, nothing is "
    "written.",
    "UNSUPPORTED_FORM": "An XFA form with no appearances of its own (a dynamic form: the viewer "
    "builds its pages). Pressroom keeps what a form shows by drawing it into the page, and "
    "cannot for this one; save it as a static PDF (print to PDF) and send that.",
    "UNSUPPORTED_SCRIPT": "A redaction for names or addresses of a page whose text is mostly "
    "in a script or language those recognisers were not made for (Cyrillic, Arabic, CJK…; "
    "French prose where only English models are loaded), or of a page whose own text is in a "
    "script the job's OCR languages do not read. Its text was read: it is not "
    "`UNREADABLE_SCAN`. Per `PRESSROOM_UNSUPPORTED_SCRIPT`, held for a person after what "
    "applies ran and was burned (`hold`, the default), or refused (`refuse`). The message "
    "names the writing, the pages and the recognisers.",
    "UNSUPPORTED_LANGUAGE": "An OCR language whose Tesseract data is not installed where the "
    "job runs, or a code that is no Tesseract language: the message names the Debian package "
    "(`tesseract-ocr-deu`) and the languages installed, and a code that is none the nearest "
    "one (`'fr'`: `did you mean 'fra'?`). See docs/languages.md.",
    "UNSUPPORTED_POLICY": "A redaction class Pressroom does not support, or a malformed "
    "`expires_at`.",
    "VERIFIER_UNAVAILABLE": "The identity service timed out or failed.",
    "MALWARE_FOUND": "The malware scanner (`PRESSROOM_SCANNER`) found a signature in the "
    "source; the reason names the signature. Nothing of the file was processed.",
    "SCAN_TOO_LARGE": "The scanner refused the source as longer than it scans (clamd's "
    "`StreamMaxLength`): set it at least to `PRESSROOM_MAX_BYTES`. Never a pass.",
    "SCANNER_UNAVAILABLE": "The malware scanner was down, refused, timed out or answered "
    "something unknown: never a pass. Retried with backoff, then dead-lettered with this "
    "code; `pressroom process` retries for about a minute, then exits 75.",
}

WORKER = {
    "permanent": "no: dead letter",
    "transient": "yes, with backoff",
    "review": "no: held for review",
    "refusal": "— (API only)",
}
# where the family alone would say the wrong thing about the worker
WORKER_EXCEPTIONS = {
    "LEASE_EXPIRED": "yes, as a transient failure",
    "UNAVAILABLE": "— (CLI only)",
    "LIFECYCLE_FOREIGN_RULES": "— (CLI only)",
    "LIFECYCLE_NEEDS_S3": "— (CLI only)",
    "LIFECYCLE_OVERLAP": "— (CLI only)",
    "LIFECYCLE_REFUSED": "— (CLI only)",
    "CANCELLED": "no: ends rejected (not a dead letter)",
    "SCANNER_UNAVAILABLE": "yes, with backoff; then dead letter with this code",
}


@dataclass(frozen=True, slots=True)
class Code:
    code: str
    statuses: tuple[int, ...]
    families: tuple[str, ...]
    meaning: str

    @property
    def retried(self) -> str:
        if self.code in ONCE_MORE:
            return "once, then dead letter"
        if self.code in WORKER_EXCEPTIONS:
            return WORKER_EXCEPTIONS[self.code]
        return "; ".join(WORKER[family] for family in self.families)


def family(cls: type[PressroomError]) -> str:
    if issubclass(cls, TransientError):
        return "transient"
    if issubclass(cls, ReviewRequired):
        return "review"
    if issubclass(cls, PermanentError):
        return "permanent"
    return "refusal"  # the API's own: Unauthorized, NotFound, Forbidden, Conflict, Refused


def error_classes() -> list[type[PressroomError]]:
    """Every class that stands for a code (the bases that only group others are left out)."""
    bases = (PressroomError, PermanentError, Refused)
    return [
        cls
        for _, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, PressroomError) and cls.__module__ == errors.__name__
        if cls not in bases
    ]


def codes() -> list[Code]:
    """Every code once, its statuses and families merged across the classes that share it."""
    seen: dict[str, tuple[set[int], set[str]]] = {}
    for cls in error_classes():
        statuses, families = seen.setdefault(cls.code, (set(), set()))
        statuses.add(cls.http_status)
        families.add(family(cls))
    for code, (kind, status) in LOOSE_CODES.items():
        statuses, families = seen.setdefault(code, (set(), set()))
        if status is not None:
            statuses.add(status)
        families.add(kind)
    missing = sorted(set(seen) - set(MEANINGS))
    if missing:
        raise KeyError(f"no meaning in pressroom/errorcodes.py for {', '.join(missing)}")
    return [
        Code(code, tuple(sorted(statuses)), tuple(sorted(families)), MEANINGS[code])
        for code, (statuses, families) in sorted(seen.items())
    ]


def markdown() -> str:
    """docs/errors.md."""
    lines = [
        "# Error codes",
        "",
        "<!-- Generated from pressroom/errors.py and pressroom/errorcodes.py by",
        "     `python -m pressroom.errorcodes --markdown`; edit those, not this file. -->",
        "",
        "Every refusal and failure carries one of these codes: as a rejected job's `reason`, as",
        "`code` in an API problem body (`application/problem+json`), and first on the one line",
        "the CLI prints. The family says whether trying again can help: **permanent** (the input",
        "or the request is at fault), **transient** (something outside it failed), **review** (a",
        "human decides), **refusal** (the API's answer to this request; a job never carries it).",
        "HTTP status is the API's answer; — where only a job or the CLI carries the code.",
        "",
        "| code | HTTP | family | worker retries | meaning |",
        "|---|---|---|---|---|",
    ]
    for code in codes():
        http = ", ".join(str(s) for s in code.statuses) or "—"
        lines.append(
            f"| `{code.code}` | {http} | {', '.join(code.families)} | {code.retried} "
            f"| {code.meaning} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] != ["--markdown"]:
        sys.exit("usage: python -m pressroom.errorcodes --markdown")
    sys.stdout.write(markdown())
