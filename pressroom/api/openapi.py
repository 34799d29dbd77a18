"""What the OpenAPI document says beyond what FastAPI infers: the problem body of every error,
the job's shape, the streamed multipart upload, the bearer scheme, and binary answers — as
pieces a route's decorator applies (``problems(401, 404)``), so a new route is described by a
line, not a schema.

Over 500 lines: mostly data, the JSON Schemas of the job, the upload form and the problem body,
written once and held to the routes by schemathesis."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from fastapi.utils import generate_unique_id

from pressroom.api.headers import MAX_PREFER_WAIT_S
from pressroom.api.uploads import MAX_FIELD_BYTES, MAX_FIELDS
from pressroom.intake import MAX_DEADLINE_S, MAX_IDEMPOTENCY_KEY, MAX_TITLE, MAX_WEBHOOK_URL
from pressroom.jobs.model import JobState, Lane
from pressroom.labels import LABEL_PATTERN, MAX_LABEL
from pressroom.redact.policy import CLASSES
from pressroom.web.problems import PROBLEM, PROBLEM_TYPE

BEARER = "bearerAuth"
SCHEMAS = "#/components/schemas/"
Responses = dict[int | str, dict[str, Any]]

# what each status means on this API, whichever route answers it; the code in the body says
# exactly why (docs/errors.md lists every code)
STATUS_MEANING = {
    400: "The request is malformed: a bad, unknown or repeated field, header or parameter, "
    "or JSON nested too deep.",
    401: "No API key, or one that is unknown, expired or revoked.",
    403: "The key is valid but lacks the role this needs, or a link's signature is wrong.",
    404: "No such resource for this caller (another tenant's looks the same as none).",
    408: "The client stopped sending its request for too long.",
    409: "The resource is not in a state that allows this.",
    410: "The link has expired; fetch the job again for a fresh one.",
    413: "Too large: bytes, pages, pixels, or the tenant's quota.",
    415: "The file is not a PDF, PNG, JPEG or TIFF (judged by its content).",
    422: "Well formed but refused: encrypted or corrupt input, a reused Idempotency-Key, "
    "a deadline that cannot be met.",
    429: "Refused for now (queue full, quota reached): retry after Retry-After seconds.",
    503: "A dependency is down (database, storage, disk full): retry after Retry-After seconds.",
}

_HEADER_STRING = {"schema": {"type": "string"}}
STATUS_HEADERS: dict[int, dict[str, Any]] = {
    401: {
        "WWW-Authenticate": {
            **_HEADER_STRING,
            "required": True,
            "description": 'Always `Bearer realm="pressroom"`.',
        }
    },
    429: {
        "Retry-After": {
            "schema": {"type": "integer", "minimum": 1},
            "required": True,
            "description": "Seconds to wait before trying again.",
        }
    },
    503: {
        "Retry-After": {
            "schema": {"type": "integer", "minimum": 1},
            "required": True,
            "description": "Seconds to wait before trying again.",
        }
    },
}

PROBLEM_SCHEMA: dict[str, Any] = {
    "title": "Problem",
    "type": "object",
    "description": "An RFC 9457 problem: every error this API answers has this body.",
    "required": ["type", "title", "status", "detail", "code"],
    "properties": {
        "type": {
            "type": "string",
            "description": f"`{PROBLEM_TYPE}` and the code in lower case, `-` for `_`.",
        },
        "title": {"type": "string", "description": "The code, readable."},
        "status": {"type": "integer", "description": "The HTTP status, repeated."},
        "detail": {"type": "string", "description": "What happened this time."},
        "code": {
            "type": "string",
            "pattern": "^[A-Z][A-Z0-9_]*$",
            "description": "Pressroom's stable reason code (docs/errors.md).",
        },
    },
}

_NUMBER_OR_NULL = {"type": ["number", "null"]}
_STRING_OR_NULL = {"type": ["string", "null"]}
JOB_SCHEMA: dict[str, Any] = {
    "title": "Job",
    "type": "object",
    "description": "One upload's job as its tenant sees it.",
    "properties": {
        "id": {"type": "string"},
        "state": {"type": "string", "enum": [s.value for s in JobState]},
        "stage": {**_STRING_OR_NULL, "description": "The pipeline stage it is in or ended in."},
        "lane": {"type": "string", "enum": [lane.value for lane in Lane]},
        "reason": {**_STRING_OR_NULL, "description": "Why it was rejected or held (a code)."},
        "message": _STRING_OR_NULL,
        "attempts": {"type": "integer", "minimum": 0},
        "pages": {"type": ["integer", "null"]},
        "template": {"type": "string"},
        "label": {
            **_STRING_OR_NULL,
            "description": "The label the client gave (a file name, a case number), or null.",
        },
        "title": {**_STRING_OR_NULL, "description": "The output PDF's title as asked for."},
        "redact": {
            "type": "array",
            "items": {"type": "string", "enum": list(CLASSES)},
            "description": "The classes redacted (empty: no redaction).",
        },
        "timings": {
            "type": "object",
            "additionalProperties": {"type": "number"},
            "description": "Seconds spent in each stage.",
        },
        "decisions": {
            "type": "array",
            "description": "Every review decision, oldest first: what, when, by which key id.",
            "items": {
                "type": "object",
                "required": ["action", "at", "key_id"],
                "properties": {
                    "action": {"type": "string", "enum": ["apply", "approve", "reject"]},
                    "at": {"type": "number", "description": "Epoch seconds."},
                    "key_id": {"type": "string", "description": "The deciding key's id."},
                    "role": {
                        "type": ["string", "null"],
                        "enum": ["tenant", "reviewer", "operator", None],
                        "description": "The deciding key's role.",
                    },
                },
            },
        },
        "created_at": {"type": "number", "description": "Epoch seconds."},
        "finished_at": _NUMBER_OR_NULL,
        "trace_id": _STRING_OR_NULL,
        "deadline_at": _NUMBER_OR_NULL,
        "customer": _STRING_OR_NULL,
        "verification": _STRING_OR_NULL,
        "artifact_url": {
            **_STRING_OR_NULL,
            "description": "A signed download link, once the job is complete; short-lived.",
        },
        "artifact_sha256": _STRING_OR_NULL,
        "output_type": {
            "type": "string",
            "enum": ["pdf", "pdfa"],
            "description": "The kind of output: a PDF, or PDF/A-2b for archiving.",
        },
        "sidecar": {"type": "boolean", "description": "Whether a sidecar text is made."},
        "optimize": {
            "type": "integer",
            "enum": [0, 1, 2],
            "description": "The lossless optimisation level asked for.",
        },
        "languages": {
            "type": "string",
            "description": "The OCR languages the job is read with, Tesseract codes joined "
            "with '+' (the job's own, else its template's, else the service's setting).",
        },
        "allow_no_text": {
            "type": "boolean",
            "description": "Whether a document in which no page yields text is delivered.",
        },
        "ocr": {
            "type": "string",
            "enum": ["skip", "redo", "force"],
            "description": "What OCR does with PDF pages that carry text, as asked.",
        },
        "text_layer": {
            "type": ["string", "null"],
            "enum": ["text", "empty", None],
            "description": "'empty' when no page yielded text and the job allowed it "
            "(allow_no_text); null until the job is done.",
        },
        "flattened": {
            "type": ["integer", "null"],
            "description": "Form fields and annotations drawn into their pages.",
        },
        "notes": {
            "type": ["integer", "null"],
            "description": "Sticky notes (text annotations) with words: no page shows them.",
        },
        "dropped": {
            "type": ["array", "null"],
            "items": {
                "type": "string",
                "enum": [
                    "title",
                    "author",
                    "subject",
                    "keywords",
                    "outlines",
                    "destinations",
                    "links",
                    "page labels",
                ],
            },
            "description": "What of the source's own structure a redaction left out because it "
            "held a value it removes (kinds only, never their text); a redaction never keeps a "
            "structure tree. Empty for a plain job, which keeps them all; null until the job is "
            "done.",
        },
        "warnings": {
            "type": ["array", "null"],
            "items": {"type": "string"},
            "description": "What the output check found that the job was delivered with all the "
            "same, e.g. 'page 3: the text layer extracts back to 93% of what OCR read' (page "
            "numbers and shares, never text); null until the job is done.",
        },
        "sidecar_url": {
            **_STRING_OR_NULL,
            "description": "A signed download link to the sidecar text (the text layer as plain "
            "text, a form feed between pages), once a job that asked for one is complete; "
            "short-lived, like artifact_url.",
        },
    },
}

# every field is always sent, null where it has no value yet
JOB_SCHEMA["required"] = list(JOB_SCHEMA["properties"])

JOB_LIST_SCHEMA: dict[str, Any] = {
    "title": "JobList",
    "type": "object",
    "required": ["jobs"],
    "properties": {
        "jobs": {"type": "array", "items": {"$ref": SCHEMAS + "Job"}},
        "next": {**_STRING_OR_NULL, "description": "The next page's URL, null on the last."},
    },
}

CUSTOMER_SCHEMA: dict[str, Any] = {
    "title": "Customer",
    "type": "object",
    "required": ["tenant", "id"],
    "properties": {
        "tenant": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"},
        "id": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._@:-]{0,127}$"},
        "status": {"type": "string", "enum": ["active", "suspended"], "default": "active"},
    },
    "additionalProperties": False,
}

_CLASS = "(" + "|".join(CLASSES) + ")"
SUBMIT_FORM_SCHEMA: dict[str, Any] = {
    "title": "SubmitForm",
    "type": "object",
    "description": (
        "The upload, streamed: send the small fields before `file` and they are judged before "
        f"a byte of the file is written. At most {MAX_FIELDS} parts; a field at most "
        f"{MAX_FIELD_BYTES} bytes; every field at most once (a repeated field is 400 "
        "`BAD_REQUEST` naming it, whatever the order); no field but these (an unknown one, a "
        "misspelt `redact` say, is 400 `BAD_REQUEST` naming it and the field it resembles, "
        "never ignored)."
    ),
    "required": ["file"],
    "maxProperties": MAX_FIELDS,
    # a field this version does not read is refused: ignored, a typo could turn redaction off
    "additionalProperties": False,
    # review=always holds a redaction for a person: without a policy there is none to hold
    "if": {"properties": {"review": {"const": "always"}}, "required": ["review"]},
    "then": {"required": ["redact"]},
    "properties": {
        "file": {
            "type": "string",
            "format": "binary",
            "description": "The scan: a PDF, PNG, JPEG or TIFF (judged by its content), at most "
            "PRESSROOM_MAX_BYTES bytes and PRESSROOM_MAX_PAGES pages.",
        },
        "template": {
            "type": "string",
            "pattern": "^[a-z0-9][a-z0-9_-]{0,63}$",
            "default": "plain",
            "description": "A registered template this tenant may use (the page's branding).",
        },
        "lane": {
            "type": "string",
            "enum": [lane.value for lane in Lane],
            "default": Lane.BULK.value,
            "description": "`interactive` for a few pages someone waits for; `bulk` otherwise.",
        },
        "title": {
            "type": "string",
            "maxLength": MAX_TITLE,
            "pattern": "^[^\\u0000]*$",
            "description": "The output PDF's title (no NUL).",
        },
        "label": {
            "type": "string",
            "maxLength": MAX_LABEL,
            "pattern": LABEL_PATTERN,
            "description": "The job's label, of the client's choosing (a file name, a case "
            "number; one line, no control characters): shown on the desk and in listings, "
            "used for the download's file name, filtered on with `GET /v1/jobs?label=`. Never "
            "taken from the document; sealed at rest when encryption is on; never logged.",
        },
        "deadline": {
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": MAX_DEADLINE_S,
            "description": "Seconds from now by which the job must finish, or it is rejected "
            "(refused at once when even an empty queue could not meet it).",
        },
        "customer": {
            "type": "string",
            "pattern": "^[A-Za-z0-9][A-Za-z0-9._@:-]{0,127}$",
            "description": "The tenant's customer the document belongs to (checked by the "
            "identity verifier when one is configured).",
        },
        "redact": {
            "type": "string",
            "pattern": f"^{_CLASS}(,{_CLASS})*$",
            "description": "What to black out, comma-separated: " + ", ".join(CLASSES) + ".",
        },
        "expires_at": {
            "type": "string",
            # epoch seconds: the form a schema can state; ISO 8601 is accepted as well
            "pattern": "^[0-9]{1,12}(\\.[0-9]{1,6})?$",
            "description": "When the redaction policy stops being valid, in the future (a "
            "policy past it is refused: EXPIRED): epoch seconds, or an ISO 8601 time.",
        },
        "keep_pixels": {
            "type": "string",
            "enum": ["true", "false"],
            "default": "false",
            "description": "Keep the scan's pixels as they are under the text layer.",
        },
        "output_type": {
            "type": "string",
            "enum": ["pdf", "pdfa"],
            "description": "pdfa: PDF/A-2b for archiving. Default: the template's, else pdf.",
        },
        "sidecar": {
            "type": "string",
            "enum": ["true", "false"],
            "description": "Also make the text layer as plain text (sidecar_url in the job). "
            "Default: the template's, else false.",
        },
        "optimize": {
            "type": "string",
            "enum": ["0", "1", "2"],
            "default": "0",
            "description": "Smaller output, losslessly: 1 recompresses every Flate stream at "
            "the best level, 2 also stores grey and RGB images with a PNG predictor.",
        },
        "languages": {
            "type": "string",
            "maxLength": 160,
            "pattern": "^[a-z]{3}(_[a-z]{2,5}){0,2}(\\+[a-z]{3}(_[a-z]{2,5}){0,2}){0,7}$",
            "description": "OCR languages, Tesseract codes joined with '+' (`eng+deu`). "
            "Default: the template's, else the service's `PRESSROOM_OCR_LANGUAGES`. A language "
            "the workers lack is refused with 400 `UNSUPPORTED_LANGUAGE`, naming its Debian "
            "package (`tesseract-ocr-deu`) and the languages installed.",
        },
        "ocr": {
            "type": "string",
            "enum": ["skip", "redo", "force"],
            "default": "skip",
            "description": "PDF pages that carry text: `skip` keeps their text and reads only "
            "pages without (the default); `redo` takes an earlier OCR layer (invisible text) "
            "out and reads the page again; `force` renders every page to an image and reads "
            "it (vector text becomes pixels). Image sources read the same in every mode.",
        },
        "allow_no_text": {
            "type": "string",
            "enum": ["true", "false"],
            "default": "false",
            "description": "Deliver a document in which no page yields text (a photo, a blank "
            "page) with an empty text layer instead of refusing it UNREADABLE_SCAN; a "
            "redaction of one is held for review (NO_TEXT).",
        },
        "review": {
            "type": "string",
            "enum": ["doubt", "always"],
            "default": "doubt",
            "description": "When a redaction goes to the review desk: only when its checks "
            "doubt it (the default), or always (held REVIEW_REQUESTED for a person to approve). "
            "'always' needs redact.",
        },
        "webhook_url": {
            "type": "string",
            "format": "uri",
            "maxLength": MAX_WEBHOOK_URL,
            "pattern": "^https?://",
            "description": "Where to POST the job's events (Standard Webhooks signatures); "
            "never a private address.",
        },
    },
}

_AREA: dict[str, Any] = {
    "type": "object",
    "required": ["page", "box"],
    "additionalProperties": False,
    "properties": {
        "page": {"type": "integer", "minimum": 1, "maximum": 100_000},
        "box": {
            "type": "array",
            "items": {"type": "number", "minimum": 0, "maximum": 20_000},
            "minItems": 4,
            "maxItems": 4,
            "description": "x0, y0, x1, y1 in points from the top-left of the upright page "
            "(the desk's frame): x0 < x1 and y0 < y1, at least 1 pt wide and high (refused "
            "400 otherwise; a rule this schema cannot state).",
        },
    },
}
CORRECTIONS_SCHEMA: dict[str, Any] = {
    "title": "Corrections",
    "type": "object",
    "additionalProperties": False,
    "description": "A reviewer's whole set of corrections, as the desk sends them: finding "
    "boxes removed (their words stay there), boxes drawn (burned exactly there), areas whose "
    "words go wherever they occur. Each key at most once.",
    "properties": {
        name: {"type": "array", "items": _AREA, "maxItems": 500}
        for name in ("removed", "manual", "every")
    },
}
# a finding as the review sheet gives it (corrections.SheetFinding): its place, never a value
_SHEET_FINDING: dict[str, Any] = {
    "type": "object",
    "required": ["page", "class", "box"],
    "properties": {
        "page": {"type": "integer", "minimum": 1},
        "class": {"type": "string"},
        "box": _AREA["properties"]["box"],
        "doubt": {"type": "boolean"},
        "lines": {
            "type": "array",
            "description": "Where the finding's words stand on more than one line: one box "
            "per line (what is burned); absent for a finding on one line.",
            "items": _AREA["properties"]["box"],
            "minItems": 2,
        },
    },
}
REVIEW_SHEET_SCHEMA: dict[str, Any] = {
    "title": "ReviewSheet",
    "type": "object",
    "required": ["pages", "findings", "corrections"],
    "description": "A held redaction as the desk shows it: boxes and classes, never a value.",
    "properties": {
        "pages": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "width_pt": {"type": "number"},
                    "height_pt": {"type": "number"},
                    "rotation": {"type": "integer", "enum": [0, 90, 180, 270]},
                    "level": {"type": "number"},
                    "output": {
                        "type": "object",
                        "description": "Where the page lies on its output page: a point "
                        "(x, y) here is at (left + scale x, top + scale y) there, in points.",
                        "properties": {
                            "scale": {"type": "number"},
                            "offset_pt": {"type": "array", "items": {"type": "number"}},
                            "bands_pt": {
                                "type": "array",
                                "items": {"type": "number"},
                                "description": "The output page's footer and header heights.",
                            },
                        },
                    },
                },
            },
        },
        "findings": {"type": "array", "items": _SHEET_FINDING},
        "rechecked": {
            "type": "array",
            "description": "Present only for a copy a check of the output held: what the check "
            "found again (re-detection, text under a burned or drawn box, a box not solid, a "
            "page read with too little confidence, or below 300 dpi showing more than its own "
            "text), by page, class and box, never a value. The class is the finding's, or "
            "`leak`, `under-box`, `unsolid`, `low-confidence`, `low-resolution`, `unreadable`.",
            "items": _SHEET_FINDING,
        },
        "corrections": {"$ref": SCHEMAS + "Corrections"},
    },
}
CORRECTIONS_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": SCHEMAS + "Corrections"}}},
    }
}

TEMPLATE_LIST_SCHEMA: dict[str, Any] = {
    "title": "TemplateList",
    "type": "object",
    "required": ["templates"],
    "properties": {
        "templates": {
            "type": "array",
            "items": {
                "title": "TemplateInfo",
                "type": "object",
                "required": ["name", "usable"],
                "properties": {
                    "name": {"type": "string", "description": "What a job's `template` names."},
                    "usable": {
                        "type": "boolean",
                        "description": "False: the template is broken (see `code`).",
                    },
                    "code": {"type": "string", "description": "Why it cannot be used."},
                    "identity": {
                        "type": "string",
                        "description": "`name@version+hash`: changes with any edit of its files.",
                    },
                    "version": {"type": "string"},
                    "content_hash": {"type": "string", "description": "sha256 of its files."},
                    "builtin": {"type": "boolean", "description": "Shipped with Pressroom."},
                    "cover": {"type": "boolean", "description": "Adds a cover page."},
                    "output_type": {"type": "string", "enum": ["pdf", "pdfa"]},
                    "sidecar": {"type": "boolean"},
                    "languages": {
                        **_STRING_OR_NULL,
                        "description": "Its OCR languages (`eng+deu`); null: the service's.",
                    },
                },
            },
        }
    },
}

COMPONENT_SCHEMAS = {
    "TemplateList": TEMPLATE_LIST_SCHEMA,
    "Problem": PROBLEM_SCHEMA,
    "Corrections": CORRECTIONS_SCHEMA,
    "ReviewSheet": REVIEW_SHEET_SCHEMA,
    "Job": JOB_SCHEMA,
    "JobList": JOB_LIST_SCHEMA,
    "Customer": CUSTOMER_SCHEMA,
    "SubmitForm": SUBMIT_FORM_SCHEMA,
}


def problems(*statuses: int) -> Responses:
    """A ``responses=`` entry for each error status a route can answer: a problem+json body,
    with ``WWW-Authenticate`` on 401 and ``Retry-After`` on 429 and 503."""
    answers: Responses = {}
    for status in statuses:
        answer: dict[str, Any] = {
            "description": STATUS_MEANING[status],
            "content": {PROBLEM: {"schema": {"$ref": SCHEMAS + "Problem"}}},
        }
        if status in STATUS_HEADERS:
            answer["headers"] = STATUS_HEADERS[status]
        answers[status] = answer
    return answers


def json_body(schema: str, description: str, status: int = 200) -> Responses:
    """A JSON answer with one of the named component schemas."""
    return {
        status: {
            "description": description,
            "content": {"application/json": {"schema": {"$ref": SCHEMAS + schema}}},
        }
    }


def job(
    *statuses: int, description: str = "The job.", headers: dict[str, Any] | None = None
) -> Responses:
    """A ``Job`` answered with each of these statuses."""
    answers: Responses = {}
    for status in statuses:
        answers.update(json_body("Job", description, status))
        if headers:
            answers[status]["headers"] = headers
    return answers


BINARY = {"schema": {"type": "string", "format": "binary"}}


def pdf(description: str) -> Responses:
    """A PDF answered as a stream (never JSON). ``application/octet-stream`` is listed after
    ``application/pdf`` so that generators which know only the generic type (openapi-python-
    client) still make the download a function returning a file; the bytes are the same."""
    return {
        200: {
            "description": description + " Sent as `application/pdf`.",
            "content": {"application/pdf": BINARY, "application/octet-stream": BINARY},
        }
    }


def text(media_type: str, description: str) -> Responses:
    return {
        200: {"description": description, "content": {media_type: {"schema": {"type": "string"}}}}
    }


# the route reads the body itself (streamed to scratch); this is only what it expects
SUBMIT_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {"$ref": SCHEMAS + "SubmitForm"},
                "encoding": {"file": {"contentType": "application/octet-stream"}},
            }
        },
    }
}
SUBMIT_HEADERS = {
    "Location": {"schema": {"type": "string"}, "required": True, "description": "The job's URL."}
}
CUSTOMER_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": SCHEMAS + "Customer"}}},
    }
}
# open on loopback, an operator key from anywhere else: the key is one of two ways in
LOOPBACK_OR_BEARER: dict[str, Any] = {"security": [{}]}
# documented, not enforced here: intake judges the key and says why it refuses one
IDEMPOTENCY_KEY: dict[str, Any] = {
    "description": "The same key with the same upload answers the same job; another upload "
    "with it is refused (IDEMPOTENCY_CONFLICT).",
    "json_schema_extra": {"minLength": 1, "maxLength": MAX_IDEMPOTENCY_KEY, "pattern": "\\S"},
}
PREFER_WAIT = (
    f"`wait=N`: hold the answer up to N seconds (at most {MAX_PREFER_WAIT_S:g}); "
    "`respond-async`: answer 202 at once, even beside `wait`."
)


# Every operation's id, named for what it does: a generated client's functions carry these
# names (``submit_job``, not ``submit_v1_jobs_post``). A route missing here fails at start-up.
OPERATION_IDS = {
    "health.healthz": "health",
    "health.readyz": "ready",
    "jobs.submit": "submit_job",
    "jobs.show": "get_job",
    "jobs.list_jobs": "list_jobs",
    "jobs.cancel": "cancel_job",
    "jobs.redrive": "redrive_job",
    "jobs.delete_artifact": "delete_artifact",
    "downloads.download": "download_artifact",
    "downloads.download_sidecar": "download_sidecar",
    "keys.list_keys": "list_keys",
    "keys.create_key": "create_key",
    "keys.revoke_key": "revoke_key",
    "operations.metrics": "get_metrics",
    "operations.dashboard": "get_dashboard",
    "review.review_queue": "list_review_queue",
    "review.held_copy": "get_held_copy",
    "review.approve": "approve_job",
    "review.reject": "reject_job",
    "review.review_sheet": "get_review_sheet",
    "review.corrections": "apply_corrections",
    "tenancy.webhook_secret": "get_webhook_secret",
    "tenancy.rotate_webhook_secret": "rotate_webhook_secret",
    "tenancy.set_customer": "set_customer",
    "templates.list_templates": "list_templates",
}
ROUTES_PACKAGE = "pressroom.api.routes."
# one tag per resource, in the order the documentation pages show them
TAGS = [
    {"name": "jobs", "description": "Upload a document, follow its job, cancel it."},
    {"name": "artifacts", "description": "Signed, short-lived downloads of a job's output."},
    {"name": "review", "description": "Held outputs: the review queue and its decisions."},
    {"name": "templates", "description": "The brand templates a tenant may use."},
    {"name": "webhooks", "description": "The tenant's webhook signing secret."},
    {"name": "customers", "description": "A tenant's customer registry (operator)."},
    {"name": "keys", "description": "API keys (operator)."},
    {"name": "operations", "description": "Health, readiness, metrics and the dashboard."},
]


def operation_id(route: APIRoute) -> str:
    """FastAPI's ``generate_unique_id_function``: the id from ``OPERATION_IDS``; routes outside
    the document (the desk, the documentation pages) keep FastAPI's own."""
    module = route.endpoint.__module__
    if not route.include_in_schema or not module.startswith(ROUTES_PACKAGE):
        return generate_unique_id(route)
    return OPERATION_IDS[f"{module.removeprefix(ROUTES_PACKAGE)}.{route.endpoint.__name__}"]


def check_operation_ids(routers: Iterable[APIRouter]) -> None:
    """At start-up, not at the first ``/openapi.json``: every documented route has its id."""
    for router in routers:
        for route in router.routes:
            if isinstance(route, APIRoute):
                operation_id(route)


def _without_framework_validation(schema: dict[str, Any]) -> None:
    """FastAPI documents a 422 ``HTTPValidationError`` on every route with a parameter; this
    API answers a refused parameter with a 400 problem instead (``problems.validation_error``)."""
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            answer = operation.get("responses", {}).get("422", {})
            if "HTTPValidationError" in str(answer.get("content", "")):
                del operation["responses"]["422"]
                operation["responses"].setdefault("400", problems(400)[400])
    components = schema.get("components", {}).get("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)


def openapi_of(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """``app.openapi``: FastAPI's document with the shared schemas and the bearer scheme, built
    once."""

    def build() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
                tags=app.openapi_tags,
            )
            _without_framework_validation(schema)
            components = schema.setdefault("components", {})
            components.setdefault("schemas", {}).update(COMPONENT_SCHEMAS)
            components.setdefault("securitySchemes", {})[BEARER] = {
                "type": "http",
                "scheme": "bearer",
                "description": "A tenant's API key, or an operator key for operator routes.",
            }
            app.openapi_schema = schema
        return app.openapi_schema

    return build
