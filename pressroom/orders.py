"""A job's order: what a client asked for, typed once at the door and read back from the job's
row by every reader — the worker, the job's JSON, review, the desk, downloads and the outbox.

The row keeps it as JSON in its ``options`` column (the template's name has a column of its
own). ``JobOrder.to_json`` writes it, ``JobOrder.from_json`` reads it, and every fallback for
a row stored before a key existed lives in ``from_json`` and nowhere else. A stored value this
version does not understand is refused, never guessed: a misspelt redaction class is the API's
refusal (``UNSUPPORTED_POLICY``), anything else ``BAD_REQUEST``, as a worker refused a bad
stored OCR mode or corrections before there was an order.

Only core values are imported here: the order knows no pipeline, store or web.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pressroom.corrections import Corrections
from pressroom.errors import BadRequest, PermanentError, UnsupportedPolicy
from pressroom.models import OCR_MODES, OcrMode

# the version ``to_json`` writes; a row without "v" was stored before the order had one
VERSION = 1
# the classes of personal data a policy may name, in their canonical order: the names of
# ``redact.detect.registry`` (which holds their recognisers, too heavy for a core value; a
# test holds the two equal)
POLICY_CLASSES = ("name", "address", "account-number")
OUTPUT_TYPES = ("pdf", "pdfa")
OPTIMIZE_LEVELS = (0, 1, 2)
# every key a row's order may hold, "v" aside (each written only when it is not the default)
KEYS = frozenset(
    {
        "redact",
        "expires_at",
        "keep_pixels",
        "output_type",
        "sidecar",
        "allow_no_text",
        "optimize",
        "ocr",
        "languages",
        "review",
        "webhook_url",
        "corrections",
    }
)


@dataclass(frozen=True, slots=True)
class JobOrder:
    """What a client asked for with a document. Built by the API's intake (every choice made
    explicit: the template's defaults and the languages resolved, so a later edit of the
    template or the setting does not change what an accepted job reads), by the offline
    ``process``, and by the review folder's note. The title and the label are not in it: they
    are sealed at rest in columns of their own."""

    template: str = "plain"  # the registered template's name (offline: as given)
    # the redaction policy: the classes of personal data to remove (canonical order), and when
    # the policy expires (epoch seconds); no classes: a plain job
    redact: tuple[str, ...] = ()
    expires_at: float | None = None
    keep_pixels: bool = False  # each scan's pixels kept as they are (not levelled)
    # the kind of output: None for the template's default (an offline order that chose none;
    # an order read from a row is always explicit)
    output_type: str | None = None
    sidecar: bool | None = None
    allow_no_text: bool = False
    optimize: int = 0
    ocr: OcrMode = "skip"
    # the OCR languages; () when none were stored (a row from before they were per job):
    # ``languages_or`` gives the reading process's setting then
    languages: tuple[str, ...] = ()
    review_always: bool = False  # a redaction goes to a person even when every check passes
    webhook_url: str | None = None  # checked at the door (``notify.webhooks.check_url``)
    # a reviewer's corrections, stored by the desk's Apply (the job is rebuilt with them)
    corrections: Corrections | None = None
    # a stored order this version could not read: (code, message) of the refusal; only
    # ``stored`` sets it, and ``check`` raises it (the worker rejects such a job)
    refused: tuple[str, str] | None = None

    @property
    def redacts(self) -> bool:
        return bool(self.redact)

    def languages_or(self, default: tuple[str, ...]) -> tuple[str, ...]:
        """The languages the job is read with. The one rule for a row stored without them
        (before languages were per job): the setting of the process that reads it — the
        worker's for the work; the API, which cannot know the worker's, shows its own (the
        same variable, ``PRESSROOM_OCR_LANGUAGES``)."""
        return self.languages or default

    def check(self) -> JobOrder:
        """This order, or the refusal ``stored`` kept (a ``PermanentError`` with its code)."""
        if self.refused is not None:
            code, message = self.refused
            raise PermanentError(message, code=code)
        return self

    def to_json(self) -> dict[str, Any]:
        """The order as the row stores it (the template aside): each choice only when it is
        not the default, in the shape rows had before the version key, so earlier rows and
        their request hashes read the same."""
        if self.refused is not None:
            raise ValueError("an order that could not be read is never stored again")
        out: dict[str, Any] = {"v": VERSION}
        if self.redact:
            out["redact"] = list(self.redact)
            out["expires_at"] = self.expires_at
        if self.keep_pixels:
            out["keep_pixels"] = True
        if self.output_type == "pdfa":
            out["output_type"] = "pdfa"
        if self.sidecar:
            out["sidecar"] = True
        if self.allow_no_text:
            out["allow_no_text"] = True
        if self.optimize:
            out["optimize"] = self.optimize
        if self.ocr != "skip":
            out["ocr"] = self.ocr
        if self.languages:
            out["languages"] = "+".join(self.languages)
        if self.review_always:
            out["review"] = "always"
        if self.webhook_url:
            out["webhook_url"] = self.webhook_url
        if self.corrections is not None:
            out["corrections"] = self.corrections.as_json()
        return out

    @classmethod
    def from_json(cls, raw: Mapping[str, Any] | None, *, template: str) -> JobOrder:
        """A row's order (``template``: its template column). Every old row's fallback is
        here: a key absent is the default it had when the row was stored — no output choice
        was stored before there were any (a PDF, no sidecar), no ``ocr`` is ``skip``, no
        ``review`` is review on doubt only, no ``languages`` is ``languages_or``'s setting.
        A value not understood is refused (``UnsupportedPolicy`` for a class of personal
        data no recogniser knows, as the API refuses it; ``BadRequest`` for the rest)."""
        if raw is not None and not isinstance(raw, Mapping):
            raise BadRequest("stored order: not an object")
        raw = dict(raw or {})
        version = raw.pop("v", 0)
        if version not in (0, VERSION):
            raise BadRequest(f"stored order: version {version!r} is not one this worker reads")
        unknown = sorted(set(raw) - KEYS)
        if unknown:
            raise BadRequest(f"stored order: unknown field {unknown[0]!r}")
        return cls(
            template=template,
            redact=_classes(raw.get("redact")),
            expires_at=_expiry(raw.get("expires_at")),
            keep_pixels=_flag(raw, "keep_pixels"),
            output_type=_choice(raw.get("output_type") or "pdf", OUTPUT_TYPES, "output_type"),
            sidecar=_flag(raw, "sidecar"),
            allow_no_text=_flag(raw, "allow_no_text"),
            optimize=_optimize(raw.get("optimize")),
            ocr=_ocr(raw.get("ocr")),
            languages=_languages(raw.get("languages")),
            review_always=_choice(raw.get("review") or "doubt", ("doubt", "always"), "review")
            == "always",
            webhook_url=_text(raw.get("webhook_url"), "webhook_url"),
            # checked when they were sent; parsed again here as the worker always did
            corrections=Corrections.parse(raw["corrections"]) if raw.get("corrections") else None,
        )

    @classmethod
    def stored(cls, raw: Mapping[str, Any] | None, *, template: str) -> JobOrder:
        """``from_json`` for a store handing a row out: never raises (one row a reader cannot
        read must not stop a claim, a list or the transaction that ends a job). A refused
        order keeps its refusal in ``refused`` and nothing else; whoever acts on it calls
        ``check`` (the worker rejects the job, the outbox sends no webhook)."""
        try:
            return cls.from_json(raw, template=template)
        except PermanentError as exc:
            return cls(template=template, refused=(exc.code, exc.message))


def _classes(raw: object) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list | tuple) or not all(isinstance(c, str) for c in raw):
        raise BadRequest("stored order: redact must be a list of class names")
    for name in raw:
        if name not in POLICY_CLASSES:
            # the API's words for the same refusal (``redact.policy.parse_policy``)
            raise UnsupportedPolicy(
                f"cannot redact {name!r}; supported: {', '.join(POLICY_CLASSES)}"
            )
    return tuple(raw)


def _expiry(raw: object) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        raise BadRequest("stored order: expires_at must be epoch seconds")
    return raw  # as stored: an order read and written again keeps its very JSON


def _flag(raw: Mapping[str, Any], name: str) -> bool:
    value = raw.get(name, False)
    if not isinstance(value, bool):
        raise BadRequest(f"stored order: {name} must be true or false")
    return value


def _choice(value: object, allowed: tuple[str, ...], name: str) -> str:
    if value not in allowed:
        raise BadRequest(f"stored order: {name} must be one of {', '.join(allowed)}")
    return str(value)


def _optimize(raw: object) -> int:
    if raw is None:
        return 0
    if isinstance(raw, bool) or raw not in OPTIMIZE_LEVELS:
        raise BadRequest("stored order: optimize must be 0, 1 or 2")
    return int(raw)


def _ocr(raw: object) -> OcrMode:
    for mode in OCR_MODES:
        if (raw or "skip") == mode:
            return mode
    raise BadRequest("ocr must be 'skip' (the default), 'redo' or 'force'")


def _languages(raw: object) -> tuple[str, ...]:
    if raw is None or raw == "":
        return ()
    if not isinstance(raw, str) or not all(raw.split("+")):
        raise BadRequest("stored order: languages must be codes joined by '+'")
    return tuple(raw.split("+"))


def _text(raw: object, name: str) -> str | None:
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str):
        raise BadRequest(f"stored order: {name} must be text")
    return raw
