"""One typed configuration, read once by entry points: every variable in one table, one reader.

``Settings.from_env()`` reads the environment (and, when ``PRESSROOM_CONFIG`` names one, a TOML
file whose keys are the same variable names; the environment wins) through one function that
names the variable, the value's problem and what is accepted. ``VARIABLES`` is the only list of
what Pressroom reads; ``docs/configuration.md`` is generated from it
(``python -m pressroom.settings --markdown``) and a test keeps the two the same. The module is
long because that table, with a line of meaning per variable, lives here and nowhere else.

Over 500 lines: the ``VARIABLES`` table, one row and a line of meaning per variable, is most of
it.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from pressroom.errors import BadConfig

MIB = 1024 * 1024
HOUR = 3600.0
DEFAULT_NER_MODEL = "pressroom_names_en"


@dataclass(frozen=True, slots=True)
class Limits:
    """What the engine refuses. Every field has an environment variable ``PRESSROOM_MAX_*``."""

    max_bytes: int = 256 * MIB
    max_pages: int = 2000
    # per bitmap made (render, upscale, redaction raster): 100 Mpx is A0 at 250 dpi, A3 at 600;
    # an honest 146 Mpx page peaked at 1.1 GB redacting, the NER model loaded (bomb_bench.py)
    max_pixels: int = 100_000_000
    max_dpi: int = 400  # rendering above this costs time and buys no accuracy
    min_dpi: int = 150
    # Every bitmap one pass over a document makes, summed: a document at the page limit of
    # letter pages at the highest resolution we render (2,000 x 15 Mpx = 30 Gpx) fits; 2,000
    # pages each just under max_pixels (300 Gpx, hours of work) does not.
    max_document_pixels: int = 32_000_000_000
    # A page's drawing instructions, inflated, with every form they draw counted each time it
    # is drawn (PDFium parses a form again at each use). Scans have a handful of operators and
    # heavy born-digital pages (charts, maps, CAD) tens to hundreds of thousands. PDFium holds
    # 5-180 bytes per operator once parsed (measured: paths ~90, rectangles ~180); a page of
    # 950 thousand rectangles peaked at 560 MB in a worker with the model loaded, ~10 s. A
    # 40 KB file can otherwise inflate to 10 million (measured: 2.7 GB, 70 s).
    max_page_operators: int = 1_000_000
    # Every page's operators, summed: PDFium loads and renders about half a million a second
    # (measured: 900 thousand took 0.5 s to load and 1.4 s to render), so this is a few minutes
    # of drawing; a 2,000-page manual at 20,000 operators a page fits, 2,000 pages sharing one
    # near-cap content stream (an hour and more from a 229 KB upload) do not.
    max_document_operators: int = 50_000_000
    # The inflated bytes themselves (held while parsed); a million operators take 5-20 MiB.
    max_page_content_bytes: int = 32 * MIB
    # Bytes of text a page's strings show: PDFium's text page keeps ~110 bytes per character
    # (measured), and every page's text is extracted. A dense page has 5-20 thousand; a sheet
    # of tiny print on a poster a few hundred thousand. A million is ~120 MB.
    max_page_text_bytes: int = 1_000_000
    # Characters of one page a redaction hands to detection (its own text, or OCR's): a dense
    # page of 10 pt print holds 3-6 thousand, a page of 8 pt small print in two columns under
    # 20 thousand. Detection costs grow with the text; a page of 100,000 tiny words (600
    # thousand characters, 3 KB compressed) held a worker for minutes. Past it: TEXT_LIMIT.
    max_detect_chars: int = 100_000
    # Findings one page of a redaction may carry: a dense page of names and addresses (a donor
    # list, a roll call) has a few hundred; past this a person could not judge them and the
    # job is held TOO_MANY_FINDINGS (everything found still burned).
    max_page_findings: int = 1_000
    # Streams walked to measure one page (forms, images, patterns, glyph procedures,
    # appearances): a scan has one, a heavy page hundreds; the walk itself must stay cheap.
    max_page_objects: int = 10_000

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Limits:
        return _section(cls, "limits", env)


@dataclass(frozen=True, slots=True)
class AdmissionSettings:
    """What the door admits: the throughput prior, the lanes' caps and deadlines, tenant quotas."""

    prior_pages_per_min: float = 20.0  # per worker, until throughput has been measured
    queue_cap_bulk: int = 20_000
    queue_cap_interactive: int = 500
    deadline_bulk_s: float = 24 * HOUR
    deadline_interactive_s: float = 120.0
    tenant_max_active: int = 5_000
    tenant_pages_per_hour: int = 200_000


@dataclass(frozen=True, slots=True)
class VerifierSettings:
    """Who says a job's customer may be served: the tenant's registry, or an HTTP service."""

    kind: str = "registry"
    url: str = ""
    timeout_s: float = 5.0
    concurrency: int = 4
    rate_per_s: float = 10.0

    def __post_init__(self) -> None:
        if self.kind == "http" and not self.url.startswith(("http://", "https://")):
            raise BadConfig(
                "PRESSROOM_VERIFIER_URL: expected an http:// or https:// URL when "
                f"PRESSROOM_VERIFIER=http, got {self.url!r}"
            )


@dataclass(frozen=True, slots=True)
class ScannerSettings:
    """The malware scanner every source passes (``scanning.py``): none, or clamd at an
    address; checked here so a typo stops the process instead of every job."""

    kind: str = "none"
    clamd_address: str = "/run/clamav/clamd.ctl"  # Debian's clamav-daemon LocalSocket
    # the connect, each chunk's send, the whole verdict after the last byte (engines/clamd.py):
    # well above a 256 MiB scan (about 20 s at ClamAV's defaults, bench/scan_cost.py)
    timeout_s: float = 60.0
    retry_s: float = 60.0  # offline: how long an unreachable scanner is tried again

    def __post_init__(self) -> None:
        address = self.clamd_address
        if "://" in address:  # tcp://clamd:3310 would be taken for a socket path
            raise BadConfig(
                "PRESSROOM_CLAMD_ADDRESS: expected a Unix socket path or host:port, not a URL "
                f"({address.split('://', 1)[0]}://...)"
            )
        if "/" in address:
            return
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise BadConfig(
                "PRESSROOM_CLAMD_ADDRESS: expected a Unix socket path or host:port, "
                f"got {address!r}"
            )


@dataclass(frozen=True, slots=True)
class StorageSettings:
    """The blob store's extras: where download links point, and the master keys at rest."""

    s3_public_endpoint: str = ""
    # boto3 reads these itself; we read them only to know whether S3 is AWS (public) or not
    aws_endpoint_url: str = ""
    aws_endpoint_url_s3: str = ""
    master_key: str = field(default="", repr=False)
    master_key_file: str = ""
    master_keys_old: tuple[str, ...] = field(default=(), repr=False)
    # the key-encryption key in a KMS (the AWS KMS API): set, it seals every new data key
    kms_key_id: str = ""
    # earlier KMS keys (ids or ARNs) still accepted for reading; no other key is ever asked
    kms_keys_old: tuple[str, ...] = ()
    kms_endpoint_url: str = ""

    def __post_init__(self) -> None:
        if self.kms_endpoint_url and not self.kms_endpoint_url.startswith(("http://", "https://")):
            raise BadConfig(
                "PRESSROOM_KMS_ENDPOINT_URL: expected an http:// or https:// URL, got "
                f"{self.kms_endpoint_url!r}"
            )


@dataclass(frozen=True, slots=True)
class TracingSettings:
    exporter: str = "none"


@dataclass(frozen=True, slots=True)
class RedactionSettings:
    """The model slot and the operator's own recognisers."""

    ner_model: str = DEFAULT_NER_MODEL
    recognizers: tuple[str, ...] = ()  # module:callable factories
    # a redaction whose name findings are doubtful past this share is held for a person
    doubt_hold_share: float = 0.5
    # a redaction for names (or addresses) of a page in a script or language those recognisers
    # were not made for: "hold" it for a person after what applies ran, or "refuse" it
    unsupported_script: str = "hold"
    # the share of OCR-read pages the read-back OCRs whole again (the rest, where the output
    # shows the pixels pass one read: the rows of their burned boxes only, ``redact.reread``);
    # 1: every one, as before
    redetect_sample: float = 0.1
    # readers a redaction's first pass reads a PDF's pages with: forked processes
    # (``redact.procs``), or threads where the process may not fork (``redact.pages``); the
    # offline ``-j N`` raises it for a run of fewer redactions than processes
    page_threads: int = 1

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> RedactionSettings:
        return _section(cls, "redaction", os.environ if env is None else env)

    @classmethod
    def given(cls, redaction: RedactionSettings | None) -> RedactionSettings:
        """The entry point's settings; None (a tool or test that builds pipeline options by
        hand) reads the environment, as the tool's own entry point would."""
        return cls.from_env() if redaction is None else redaction


@dataclass(frozen=True, slots=True)
class WebhookSettings:
    """The webhook sender's pool; ``DeliveryConfig`` adds the lease rules and checks them."""

    senders: int = 4
    per_tenant: int = 2
    deadline_s: float = 15.0
    max_response_bytes: int = 64 * 1024
    # after POST /v1/webhook-secret/rotate the old secret still signs (a second signature)
    secret_overlap_s: float = 24 * HOUR


@dataclass(frozen=True, slots=True)
class PoolSettings:
    """Adaptive worker pools (``worker/adaptive.py``). Off by default: the shipped deployments
    size each container's memory for a fixed count of workers and let the Kubernetes HPA add
    pods on queue depth, and two controllers steering by the same queue fight; on, a pool
    moves between its floor and ceiling (a ceiling of 0: the count it started with, or the
    host's CPU count if larger)."""

    adaptive: bool = False
    bulk_min: int = 1
    bulk_max: int = 0
    interactive_min: int = 1
    interactive_max: int = 0
    queue_age_target_s: float = 30.0
    interval_s: float = 5.0
    cooldown_s: float = 30.0
    psi_some_high: float = 10.0
    psi_full_high: float = 2.0
    memory_low_percent: float = 10.0
    psi_file: str = ""  # empty: the cgroup's own memory.pressure, else /proc/pressure/memory

    def __post_init__(self) -> None:
        for lane, low, high in (
            ("BULK", self.bulk_min, self.bulk_max),
            ("INTERACTIVE", self.interactive_min, self.interactive_max),
        ):
            if high and high < low:
                raise BadConfig(
                    f"PRESSROOM_POOL_{lane}_MAX: expected 0 or at least "
                    f"PRESSROOM_POOL_{lane}_MIN ({low}), got {high}"
                )
        if self.memory_low_percent >= 50:
            raise BadConfig(
                "PRESSROOM_POOL_MEMORY_LOW_PERCENT: expected under 50 (growth needs twice it "
                f"free), got {self.memory_low_percent:g}"
            )


@dataclass(frozen=True, slots=True)
class Settings:
    data_dir: Path = Path("pressroom-data")
    scratch_dir: Path = field(default_factory=lambda: Path(tempfile.gettempdir()))
    limits: Limits = field(default_factory=Limits)
    template_dirs: tuple[Path, ...] = ()
    languages: tuple[str, ...] = ("eng",)
    languages_available: tuple[str, ...] = ()  # empty: what live workers report
    database_url: str = ""  # empty: SQLite in the data dir
    storage_url: str = ""  # empty: a folder in the data dir
    public_url: str = ""  # empty: links are built from each request's own base URL
    desk_templates: str = ""  # a folder of the desk's page templates that replace the package's
    api_docs: bool = True  # /docs and /redoc, served from the package
    access_log: bool = True  # one line per HTTP request on stderr (JSON; human: failed ones)
    log_format: str = "auto"  # logs.LOG_FORMATS: human on a terminal, JSON anywhere else
    # "open": a tenant with no allow-list may use every template; "builtin": once any tenant
    # has an allow-list, a tenant without one may use only the built-in templates
    template_policy: str = "builtin"
    lease_s: float = 30.0  # a dead worker's job is retried this long after its last heartbeat
    link_ttl_s: float = 900.0
    retention_s: float = 7 * 24 * 3600.0
    max_attempts: int = 4
    # a document over this many pages is read as page-range tasks of at most half as many
    # pages, spread over every worker of its lane (0: never split)
    split_pages: int = 50
    webhook_allow_private: bool = False
    storage_timeout_s: float = 30.0  # S3 read timeout; connects give up after 5 s
    stop_timeout_s: float = 60.0  # on SIGTERM, how long running jobs may take to finish
    # Proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (addresses or networks);
    # none by default: the socket peer is the client. With any, nothing is open without a key.
    trusted_proxies: tuple[str, ...] = ()
    # a held copy waits this long for a reviewer, then the job ends REVIEW_EXPIRED
    review_retention_s: float = 30 * 24 * 3600.0
    # a client must finish sending its request headers this soon after connecting (or after
    # its previous response), and may pause its body no longer than this between chunks
    header_timeout_s: float = 10.0
    body_timeout_s: float = 15.0
    upload_deadline_s: float = 600.0  # a whole upload, however it trickles
    # per tenant: bytes of sources still held (0: no cap) and bytes uploaded in the last hour
    tenant_max_stored_bytes: int = 0
    tenant_max_bytes_per_hour: int = 0
    # resident memory a worker process may reach before its job is stopped (MEMORY_LIMIT)
    worker_memory_limit_bytes: int = 1536 * 1024 * 1024
    signing_key: str = field(default="", repr=False)  # empty: a key file in the data dir
    api_key: str = field(default="", repr=False)  # `submit`'s key; empty: the data dir's file
    server_url: str = "http://127.0.0.1:8080"  # where `submit` sends
    tessdata_prefix: str = ""  # empty: the usual install folders
    admission: AdmissionSettings = field(default_factory=AdmissionSettings)
    verifier: VerifierSettings = field(default_factory=VerifierSettings)
    scanner: ScannerSettings = field(default_factory=ScannerSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)
    tracing: TracingSettings = field(default_factory=TracingSettings)
    redaction: RedactionSettings = field(default_factory=RedactionSettings)
    webhooks: WebhookSettings = field(default_factory=WebhookSettings)
    pools: PoolSettings = field(default_factory=PoolSettings)

    @property
    def sqlite_default(self) -> str:
        return f"sqlite:///{(self.data_dir / 'pressroom.db').resolve()}"

    @property
    def db_url(self) -> str:
        return self.database_url or self.sqlite_default

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Every variable, checked: a bad value is ``BadConfig`` naming it. With
        ``PRESSROOM_CONFIG`` set, that TOML file supplies what the environment does not."""
        env = dict(os.environ if env is None else env)
        path = env.get(CONFIG_FILE, "").strip()
        if path:
            env = {**read_config_file(Path(path)), **env}
        top = _values("", env)
        sections = {name: _section(kind, name, env) for name, kind in SECTIONS.items()}
        return cls(**top, **sections)


SECTIONS: dict[str, type[Any]] = {
    "limits": Limits,
    "admission": AdmissionSettings,
    "verifier": VerifierSettings,
    "scanner": ScannerSettings,
    "storage": StorageSettings,
    "tracing": TracingSettings,
    "redaction": RedactionSettings,
    "webhooks": WebhookSettings,
    "pools": PoolSettings,
}


# -- one reader ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cast:
    """How one kind of value is read: ``parse`` raises ValueError on a value it refuses."""

    expected: str  # completes "expected ..." in the error and names the type in the docs
    parse: Callable[[str], Any]


def _whole(raw: str, least: int) -> int:
    try:
        value = int(raw)
    except ValueError:
        number = float(raw)  # "1e6" and "20000.0" are whole numbers too
        if not number.is_integer():
            raise
        value = int(number)
    if value < least:
        raise ValueError("out of range")
    return value


def _positive(raw: str) -> float:
    value = float(raw)
    if not math.isfinite(value) or value <= 0:
        raise ValueError("out of range")
    return value


def _not_negative(raw: str) -> float:
    value = float(raw)
    if not math.isfinite(value) or value < 0:
        raise ValueError("out of range")
    return value


def _boolean(raw: str) -> bool:
    word = raw.strip().lower()
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("0", "false", "no", "off"):
        return False
    raise ValueError("not a boolean")


def _split(raw: str, sep: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in raw.split(sep) if part.strip())


def _choice(*values: str) -> Cast:
    def parse(raw: str) -> str:
        word = raw.strip().lower()
        if word not in values:
            raise ValueError("not one of the choices")
        return word

    return Cast("one of " + ", ".join(values), parse)


POSITIVE_INT = Cast("a positive whole number", lambda raw: _whole(raw, 1))
COUNT = Cast("a whole number, 0 or more", lambda raw: _whole(raw, 0))
BYTES_CAP = Cast("a whole number of bytes, 0 for no cap", lambda raw: _whole(raw, 0))
SECONDS = Cast("a positive number of seconds", _positive)
WAIT = Cast("a number of seconds, 0 or more (0: do not wait)", _not_negative)
POSITIVE = Cast("a positive number", _positive)
MEMORY_CAP = Cast("a number of MiB, 0 for no limit", lambda raw: int(_not_negative(raw) * MIB))
BOOLEAN = Cast("1, true, yes or on, or 0, false, no or off", _boolean)
TEXT = Cast("text", lambda raw: raw)
BASE_URL = Cast("a URL", lambda raw: raw.strip().rstrip("/"))
PATH = Cast("a path", lambda raw: Path(raw.strip()))
PATHS = Cast("paths separated by ':'", lambda raw: tuple(Path(p) for p in _split(raw, ":")))
LANGUAGES = Cast("Tesseract language codes joined by '+'", lambda raw: _languages(raw) or ("eng",))
SOME_LANGUAGES = Cast("Tesseract language codes joined by '+'", lambda raw: _languages(raw))
LIST = Cast("a comma-separated list", lambda raw: _split(raw, ","))
URL = Cast("a URL", lambda raw: raw.strip())
NAME = Cast("a name", lambda raw: raw.strip())
SHARE = Cast("a share from 0 to 1 (1: never)", lambda raw: _share(raw))


def _languages(raw: str) -> tuple[str, ...]:
    from pressroom.errors import UnsupportedLanguage
    from pressroom.languages import parse_languages

    if not raw.strip():
        return ()
    try:
        return parse_languages(raw.strip())
    except UnsupportedLanguage as exc:
        raise ValueError(exc.message) from None


def _share(raw: str) -> float:
    value = float(raw)
    if not 0.0 <= value <= 1.0:
        raise ValueError("not between 0 and 1")
    return value


@dataclass(frozen=True, slots=True)
class Var:
    """One environment variable: where it lands (``section.field``), how it is read, what for."""

    name: str
    field: str
    cast: Cast
    meaning: str
    default: str | None = None  # shown in the docs when the field's own default would mislead


def read(env: Mapping[str, str], var: Var) -> Any:
    """The variable's value, or ``_UNSET`` when absent or blank; a refused value is BadConfig
    naming the variable, the value and what is accepted."""
    raw = env.get(var.name)
    if raw is None or not raw.strip():
        return _UNSET
    try:
        return var.cast.parse(raw)
    except ValueError:
        raise BadConfig(f"{var.name}: expected {var.cast.expected}, got {raw!r}") from None


_UNSET: Any = object()
_T = TypeVar("_T")


def _values(section: str, env: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for var in VARIABLES:
        owner, _, name = var.field.rpartition(".")
        if owner != section:
            continue
        value = read(env, var)
        if value is not _UNSET:
            out[name] = value
    return out


def _section(kind: type[_T], section: str, env: Mapping[str, str]) -> _T:
    return kind(**_values(section, env))


CONFIG_FILE = "PRESSROOM_CONFIG"


def read_config_file(path: Path) -> dict[str, str]:
    """A TOML file of ``PRESSROOM_…`` keys, as the environment would hold them."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BadConfig(f"{CONFIG_FILE}: cannot read {str(path)!r} ({exc})") from None
    known = {var.name for var in VARIABLES}
    out: dict[str, str] = {}
    for key, value in data.items():
        if key not in known:
            raise BadConfig(f"{CONFIG_FILE}: {str(path)!r} sets {key!r}, which is not a setting")
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, int | float | str):
            out[key] = str(value)
        else:
            raise BadConfig(f"{key}: expected a string, number or boolean in {str(path)!r}")
    return out


# -- every variable, in one place ------------------------------------------------------------

_V = Var
VARIABLES: tuple[Var, ...] = (
    # where things are
    _V(
        "PRESSROOM_DATA_DIR",
        "data_dir",
        PATH,
        "The SQLite database, local blobs, the link-signing key and the default API key.",
    ),
    _V(
        "PRESSROOM_SCRATCH_DIR",
        "scratch_dir",
        PATH,
        "Working files of running jobs and uploads in progress.",
        default="the system's temporary folder",
    ),
    _V(
        "PRESSROOM_DATABASE_URL",
        "database_url",
        TEXT,
        "A PostgreSQL URL shared by every host; empty: SQLite in the data dir (one host).",
    ),
    _V(
        "PRESSROOM_STORAGE_URL",
        "storage_url",
        TEXT,
        "`s3://bucket/prefix` (with the `AWS_*` variables) or a folder; "
        "empty: `blobs/` in the data dir.",
    ),
    _V(
        "PRESSROOM_PUBLIC_URL",
        "public_url",
        BASE_URL,
        "The base URL of links handed out; empty: each request's own base URL.",
    ),
    _V(
        "PRESSROOM_API_DOCS",
        "api_docs",
        BOOLEAN,
        "Serve the API's documentation pages (`/docs`, Swagger UI; `/redoc`, ReDoc) from the "
        "package, nothing from another site; off: both answer 404 (`/openapi.json` stays).",
    ),
    _V(
        "PRESSROOM_ACCESS_LOG",
        "access_log",
        BOOLEAN,
        "One line per HTTP request in the service's log (method, route template, status, "
        "bytes, duration, job id; never a query string, key, signature or file name); in the "
        "human format (`PRESSROOM_LOG_FORMAT`) only failed requests (4xx, 5xx) are shown.",
    ),
    _V(
        "PRESSROOM_LOG_FORMAT",
        "log_format",
        _choice("auto", "json", "human"),
        "The log on stderr, of `serve` and its workers alike: `json` (one JSON line a "
        "record), `human` (short lines; of the access log only failed requests), or `auto`: "
        "human on a terminal, JSON anywhere else (a file, a pipe, a log collector). "
        "`serve --log-format` overrides it.",
    ),
    _V(
        "PRESSROOM_TEMPLATE_POLICY",
        "template_policy",
        _choice("builtin", "open"),
        "Templates for a tenant with no allow-list: `builtin` (once any tenant has an "
        "allow-list, only the built-in templates) or `open` (every registered template).",
    ),
    _V(
        "PRESSROOM_DESK_TEMPLATES",
        "desk_templates",
        TEXT,
        "A folder of the review desk's page templates (Jinja2) used instead of the package's "
        "files of the same names; empty: the package's.",
    ),
    _V(
        "PRESSROOM_TEMPLATE_DIRS",
        "template_dirs",
        PATHS,
        "Folders of brand templates, besides the built-in ones.",
    ),
    _V(
        "PRESSROOM_OCR_LANGUAGES",
        "languages",
        LANGUAGES,
        "The OCR languages of a job that names none (nor does its template), e.g. `eng+deu`; "
        "each needs its Tesseract pack (`tesseract-ocr-deu`). See docs/languages.md.",
    ),
    _V(
        "PRESSROOM_OCR_LANGUAGES_AVAILABLE",
        "languages_available",
        SOME_LANGUAGES,
        "The OCR languages the workers have installed, for the API's check at the door (a job "
        "asking for another is refused `UNSUPPORTED_LANGUAGE`); empty: what live workers "
        "report in their heartbeat (none reported: the worker checks).",
    ),
    _V(
        "TESSDATA_PREFIX",
        "tessdata_prefix",
        TEXT,
        "A folder of `*.traineddata`, tried before the usual install folders.",
    ),
    # jobs
    _V(
        "PRESSROOM_LEASE_SECONDS",
        "lease_s",
        SECONDS,
        "A dead worker's job is retried this long after its last heartbeat.",
    ),
    _V(
        "PRESSROOM_MAX_ATTEMPTS",
        "max_attempts",
        POSITIVE_INT,
        "Tries of a job that keeps failing for a transient reason before it is dead-lettered.",
    ),
    _V(
        "PRESSROOM_SPLIT_PAGES",
        "split_pages",
        COUNT,
        "A document over this many pages is read as page-range tasks of at most half as many "
        "pages, which every worker of its lane can take; 0 never splits. Redactions stay whole.",
    ),
    _V(
        "PRESSROOM_STOP_TIMEOUT_SECONDS",
        "stop_timeout_s",
        WAIT,
        "On SIGTERM, how long running jobs may take to finish.",
    ),
    _V(
        "PRESSROOM_WORKER_MEMORY_LIMIT_MB",
        "worker_memory_limit_bytes",
        MEMORY_CAP,
        "Resident memory a worker may reach before its job is stopped (`MEMORY_LIMIT`); 0 "
        "turns the watchdog off.",
        default="1536",
    ),
    _V(
        "PRESSROOM_RETENTION_SECONDS",
        "retention_s",
        SECONDS,
        "How long artifacts and dead letters' sources are kept.",
    ),
    _V(
        "PRESSROOM_REVIEW_RETENTION_SECONDS",
        "review_retention_s",
        SECONDS,
        "How long a held copy waits for a reviewer before the job ends `REVIEW_EXPIRED`.",
    ),
    _V(
        "PRESSROOM_LINK_TTL_SECONDS",
        "link_ttl_s",
        SECONDS,
        "How long a signed download link works.",
    ),
    _V(
        "PRESSROOM_STORAGE_TIMEOUT_SECONDS",
        "storage_timeout_s",
        SECONDS,
        "S3 read timeout (connects give up after 5 s).",
    ),
    # the HTTP service
    _V(
        "PRESSROOM_TRUSTED_PROXIES",
        "trusted_proxies",
        LIST,
        "Proxies (addresses or networks) whose `X-Forwarded-*` headers are believed; "
        "with any, nothing is open without a key.",
    ),
    _V(
        "PRESSROOM_HEADER_TIMEOUT_SECONDS",
        "header_timeout_s",
        SECONDS,
        "A client must finish its request headers this soon after connecting.",
    ),
    _V(
        "PRESSROOM_BODY_TIMEOUT_SECONDS",
        "body_timeout_s",
        SECONDS,
        "The longest pause allowed between chunks of a request body.",
    ),
    _V(
        "PRESSROOM_UPLOAD_DEADLINE_SECONDS",
        "upload_deadline_s",
        SECONDS,
        "A whole upload, however it trickles.",
    ),
    _V(
        "PRESSROOM_TENANT_MAX_STORED_BYTES",
        "tenant_max_stored_bytes",
        BYTES_CAP,
        "Per tenant: bytes of sources still held.",
    ),
    _V(
        "PRESSROOM_TENANT_MAX_BYTES_PER_HOUR",
        "tenant_max_bytes_per_hour",
        BYTES_CAP,
        "Per tenant: bytes uploaded in the last hour.",
    ),
    _V(
        "PRESSROOM_SIGNING_KEY",
        "signing_key",
        TEXT,
        "The key that signs download links (at least 32 characters; the same on every "
        "host); empty: a key file made in the data dir.",
    ),
    _V(
        "PRESSROOM_WEBHOOK_ALLOW_PRIVATE",
        "webhook_allow_private",
        BOOLEAN,
        "Let webhooks reach private and loopback addresses (tests, closed networks).",
    ),
    # the `submit` client
    _V("PRESSROOM_URL", "server_url", BASE_URL, "Where `pressroom submit` sends files."),
    _V(
        "PRESSROOM_API_KEY",
        "api_key",
        TEXT,
        "`pressroom submit`'s API key; empty: the data dir's `api-key` file.",
    ),
    # limits
    _V(
        "PRESSROOM_MAX_BYTES",
        "limits.max_bytes",
        POSITIVE_INT,
        "The largest upload or input file, in bytes.",
    ),
    _V("PRESSROOM_MAX_PAGES", "limits.max_pages", POSITIVE_INT, "Pages in one document."),
    _V(
        "PRESSROOM_MAX_PIXELS",
        "limits.max_pixels",
        POSITIVE_INT,
        "Pixels of any one bitmap made (render, upscale, redaction raster).",
    ),
    _V(
        "PRESSROOM_MAX_DPI",
        "limits.max_dpi",
        POSITIVE_INT,
        "The highest resolution pages are rendered at.",
    ),
    _V(
        "PRESSROOM_MIN_DPI",
        "limits.min_dpi",
        POSITIVE_INT,
        "The lowest resolution pages are rendered at.",
    ),
    _V(
        "PRESSROOM_MAX_DOCUMENT_PIXELS",
        "limits.max_document_pixels",
        POSITIVE_INT,
        "Every bitmap one pass over a document makes, summed.",
    ),
    _V(
        "PRESSROOM_MAX_PAGE_OPERATORS",
        "limits.max_page_operators",
        POSITIVE_INT,
        "Drawing operators on one page, forms counted each time they are drawn.",
    ),
    _V(
        "PRESSROOM_MAX_DOCUMENT_OPERATORS",
        "limits.max_document_operators",
        POSITIVE_INT,
        "Drawing operators of every page, summed.",
    ),
    _V(
        "PRESSROOM_MAX_PAGE_CONTENT_BYTES",
        "limits.max_page_content_bytes",
        POSITIVE_INT,
        "A page's inflated content streams, in bytes.",
    ),
    _V(
        "PRESSROOM_MAX_DETECT_CHARS",
        "limits.max_detect_chars",
        POSITIVE_INT,
        "Characters of one page a redaction job hands to detection; past it TEXT_LIMIT.",
    ),
    _V(
        "PRESSROOM_MAX_PAGE_FINDINGS",
        "limits.max_page_findings",
        POSITIVE_INT,
        "Findings one page of a redaction may carry; past it the job is held TOO_MANY_FINDINGS.",
    ),
    _V(
        "PRESSROOM_MAX_PAGE_TEXT_BYTES",
        "limits.max_page_text_bytes",
        POSITIVE_INT,
        "Bytes of text a page's strings show.",
    ),
    _V(
        "PRESSROOM_MAX_PAGE_OBJECTS",
        "limits.max_page_objects",
        POSITIVE_INT,
        "Streams walked to measure one page.",
    ),
    # admission
    _V(
        "PRESSROOM_PRIOR_PAGES_PER_MIN",
        "admission.prior_pages_per_min",
        POSITIVE,
        "Pages a minute per worker assumed until throughput has been measured.",
    ),
    _V(
        "PRESSROOM_QUEUE_CAP_BULK",
        "admission.queue_cap_bulk",
        COUNT,
        "Jobs waiting in the bulk lane before uploads are refused `OVERLOADED`.",
    ),
    _V(
        "PRESSROOM_QUEUE_CAP_INTERACTIVE",
        "admission.queue_cap_interactive",
        COUNT,
        "Jobs waiting in the interactive lane before uploads are refused `OVERLOADED`.",
    ),
    _V(
        "PRESSROOM_DEADLINE_BULK_SECONDS",
        "admission.deadline_bulk_s",
        SECONDS,
        "A bulk job's deadline when the upload names none.",
    ),
    _V(
        "PRESSROOM_DEADLINE_INTERACTIVE_SECONDS",
        "admission.deadline_interactive_s",
        SECONDS,
        "An interactive job's deadline when the upload names none (plus 10 s a page).",
    ),
    _V(
        "PRESSROOM_TENANT_MAX_ACTIVE",
        "admission.tenant_max_active",
        COUNT,
        "Per tenant: jobs not yet finished.",
    ),
    _V(
        "PRESSROOM_TENANT_PAGES_PER_HOUR",
        "admission.tenant_pages_per_hour",
        COUNT,
        "Per tenant: pages accepted in the last hour.",
    ),
    # verifier
    _V(
        "PRESSROOM_VERIFIER",
        "verifier.kind",
        _choice("registry", "http"),
        "Who says a job's customer may be served: the tenant's registry or an HTTP service.",
    ),
    _V(
        "PRESSROOM_VERIFIER_URL",
        "verifier.url",
        TEXT,
        "The identity service's URL (with `PRESSROOM_VERIFIER=http`).",
    ),
    _V(
        "PRESSROOM_VERIFIER_TIMEOUT_SECONDS",
        "verifier.timeout_s",
        SECONDS,
        "One question to the identity service.",
    ),
    _V(
        "PRESSROOM_VERIFIER_CONCURRENCY",
        "verifier.concurrency",
        POSITIVE_INT,
        "Questions in flight at once, per process.",
    ),
    _V(
        "PRESSROOM_VERIFIER_RATE",
        "verifier.rate_per_s",
        POSITIVE,
        "Questions a second, per process.",
    ),
    # scanner
    _V(
        "PRESSROOM_SCANNER",
        "scanner.kind",
        _choice("none", "clamd"),
        "The malware scanner every source passes before it is read: none, or ClamAV's daemon "
        "(`clamd`); with clamd a scan that cannot run is never a pass.",
    ),
    _V(
        "PRESSROOM_CLAMD_ADDRESS",
        "scanner.clamd_address",
        NAME,
        "clamd's socket: a Unix socket path, or `host:port` for its TCP socket (not a URL: "
        "`tcp://…` is BAD_CONFIG).",
    ),
    _V(
        "PRESSROOM_SCANNER_TIMEOUT",
        "scanner.timeout_s",
        SECONDS,
        "The scanner's time limit, each part of a scan alone: the connect, each chunk's send "
        "(at most 1 MiB), and the whole answer after the last chunk (one deadline, never "
        "renewed by a byte). Past it the scan is SCANNER_UNAVAILABLE.",
    ),
    _V(
        "PRESSROOM_SCANNER_RETRY_SECONDS",
        "scanner.retry_s",
        WAIT,
        "`pressroom process`, `watch` and `detect`: how long a scanner that cannot be reached "
        "is tried again, with backoff, before the file ends SCANNER_UNAVAILABLE (exit 75); "
        "a try after the first has its timeout cut to what is left of this.",
    ),
    # storage
    _V(
        "PRESSROOM_S3_PUBLIC_ENDPOINT",
        "storage.s3_public_endpoint",
        URL,
        "The S3 endpoint clients outside can reach, for signed links; "
        "empty: AWS's own, or links streamed by the API.",
    ),
    _V(
        "AWS_ENDPOINT_URL",
        "storage.aws_endpoint_url",
        URL,
        "Read by boto3; set means S3 is not AWS (MinIO), so links are streamed.",
    ),
    _V(
        "AWS_ENDPOINT_URL_S3",
        "storage.aws_endpoint_url_s3",
        URL,
        "As `AWS_ENDPOINT_URL`, for S3 only.",
    ),
    _V(
        "PRESSROOM_MASTER_KEY",
        "storage.master_key",
        TEXT,
        "Base64 of 32 bytes: blobs are encrypted at rest under it; empty: not encrypted.",
    ),
    _V(
        "PRESSROOM_MASTER_KEY_FILE",
        "storage.master_key_file",
        TEXT,
        "A file holding the master key instead.",
    ),
    _V(
        "PRESSROOM_MASTER_KEYS_OLD",
        "storage.master_keys_old",
        LIST,
        "Keys (files or base64) of a rotation, still accepted for reading.",
    ),
    _V(
        "PRESSROOM_KMS_KEY_ID",
        "storage.kms_key_id",
        TEXT,
        "A KMS key (id, ARN or alias) as key-encryption key: set, every blob and sealed value "
        "is sealed under a data key the KMS generates (boto3's credentials and region); the "
        "master key, if any, then only reads what it sealed before.",
    ),
    _V(
        "PRESSROOM_KMS_KEYS_OLD",
        "storage.kms_keys_old",
        LIST,
        "Earlier KMS keys (ids or ARNs, not aliases) still accepted for reading after a "
        "rotation; a blob or value naming any other KMS key is refused unopened.",
    ),
    _V(
        "PRESSROOM_KMS_ENDPOINT_URL",
        "storage.kms_endpoint_url",
        TEXT,
        "The KMS API's endpoint when it is not AWS's (any KMS speaking the AWS KMS API).",
    ),
    # tracing
    _V(
        "PRESSROOM_OTEL_EXPORTER",
        "tracing.exporter",
        _choice("none", "console", "otlp"),
        "OpenTelemetry spans per stage (`otlp` reads the standard `OTEL_*` variables).",
    ),
    # redaction
    _V(
        "PRESSROOM_NER_MODEL",
        "redaction.ner_model",
        NAME,
        "The spaCy pipeline that finds people (a package or a folder).",
    ),
    _V(
        "PRESSROOM_DOUBT_HOLD_SHARE",
        "redaction.doubt_hold_share",
        SHARE,
        "A redaction is held for a person (`DOUBTFUL_NAMES`) when more than this share of its "
        "name findings, and three or more, are doubtful; doubtful names are burned either way.",
    ),
    _V(
        "PRESSROOM_UNSUPPORTED_SCRIPT",
        "redaction.unsupported_script",
        _choice("hold", "refuse"),
        "A redaction for names (or addresses) of a page mostly in a script or language those "
        "recognisers were not made for (Cyrillic, Arabic, CJK…; French prose under the English "
        "models), or whose own text is in a script the job's OCR languages do not read: `hold` "
        "runs what applies (accounts, addresses, names by rule), burns it and holds the copy "
        "for a person; `refuse` rejects the job. Both say `UNSUPPORTED_SCRIPT` and name the "
        "writing; neither is `UNREADABLE_SCAN`.",
    ),
    _V(
        "PRESSROOM_REDETECT_SAMPLE",
        "redaction.redetect_sample",
        Cast("a share from 0 to 1 (1: every page)", _share),
        "The share of a redaction's OCR-read pages that the read-back OCRs whole again, to "
        "audit the reading of the rest: on every other such page whose output shows the "
        "pixels pass one read it OCRs only the rows of each burned box, a line above and "
        "below, beside the output's text (a page with nothing burned: its text alone). Which "
        "pages: drawn from the source's digest, so the same document is read the same way. "
        "1 reads every such page whole, as before; a page read at other pixels than the "
        "output shows (an image file at its own resolution, a page turned, levelled or "
        "scaled by a template) is always read whole, and one read from its own text never.",
    ),
    _V(
        "PRESSROOM_REDACT_THREADS",
        "redaction.page_threads",
        POSITIVE_INT,
        "Readers a redaction's first pass reads a PDF's pages with: forked processes, each "
        "with a Tesseract and handles on the file of its own, where the process may fork (the "
        "command line); else threads, which gain little (tesserocr reads one image at a time "
        "in a process). Detection's findings are propagated, and the output built and checked, "
        "whole, after every page is read. 1 in the service, where each worker process takes "
        "a job of its own (and renews its lease on a thread: it does not fork). `pressroom "
        "process -j N` with fewer redactions than N gives each its share of the N. "
        "Measured on 2 cores, a 10-page 300-dpi scan (held at its leak check: "
        "mostly the first pass), two runs each, alternating: one reader 13.4 and 14.4 s, two "
        "processes 9.1 and 10.1 s.",
    ),
    _V(
        "PRESSROOM_RECOGNIZERS",
        "redaction.recognizers",
        LIST,
        "The operator's recogniser factories, `module:callable`.",
    ),
    # webhooks
    _V(
        "PRESSROOM_WEBHOOK_SENDERS",
        "webhooks.senders",
        POSITIVE_INT,
        "Webhook sends in flight at once, per process.",
    ),
    _V(
        "PRESSROOM_WEBHOOK_PER_TENANT",
        "webhooks.per_tenant",
        POSITIVE_INT,
        "Of those, at most this many for one tenant.",
    ),
    _V(
        "PRESSROOM_WEBHOOK_DEADLINE_SECONDS",
        "webhooks.deadline_s",
        SECONDS,
        "One send, start to end (at most 50: a delivery's lease is 60 s).",
    ),
    _V(
        "PRESSROOM_WEBHOOK_MAX_RESPONSE_BYTES",
        "webhooks.max_response_bytes",
        POSITIVE_INT,
        "Bytes of a webhook's response body read; the rest is never read.",
    ),
    _V(
        "PRESSROOM_WEBHOOK_SECRET_OVERLAP_SECONDS",
        "webhooks.secret_overlap_s",
        Cast("a number of seconds, 0 or more (0: the old secret stops at once)", _not_negative),
        "After a secret rotation, how long the old secret still signs beside the new one.",
    ),
    # adaptive worker pools
    _V(
        "PRESSROOM_POOL_ADAPTIVE",
        "pools.adaptive",
        BOOLEAN,
        "Each lane's worker pool grows and shrinks between its floor and ceiling by queue age "
        "and memory pressure; off: the fixed count `serve`/`worker` were given.",
    ),
    _V(
        "PRESSROOM_POOL_BULK_MIN",
        "pools.bulk_min",
        POSITIVE_INT,
        "The fewest bulk workers an adaptive pool keeps.",
    ),
    _V(
        "PRESSROOM_POOL_BULK_MAX",
        "pools.bulk_max",
        COUNT,
        "The most bulk workers an adaptive pool runs; 0: the count it started with, or the "
        "CPU count if larger.",
    ),
    _V(
        "PRESSROOM_POOL_INTERACTIVE_MIN",
        "pools.interactive_min",
        POSITIVE_INT,
        "The fewest interactive workers an adaptive pool keeps.",
    ),
    _V(
        "PRESSROOM_POOL_INTERACTIVE_MAX",
        "pools.interactive_max",
        COUNT,
        "The most interactive workers an adaptive pool runs; 0: the count it started with, or "
        "the CPU count if larger.",
    ),
    _V(
        "PRESSROOM_POOL_QUEUE_AGE_TARGET_SECONDS",
        "pools.queue_age_target_s",
        WAIT,
        "An adaptive pool grows while its lane's oldest waiting job is older than this.",
    ),
    _V(
        "PRESSROOM_POOL_INTERVAL_SECONDS",
        "pools.interval_s",
        SECONDS,
        "How often an adaptive pool looks at its signals and decides.",
    ),
    _V(
        "PRESSROOM_POOL_COOLDOWN_SECONDS",
        "pools.cooldown_s",
        WAIT,
        "After a shrink on memory pressure, how long an adaptive pool does not grow.",
    ),
    _V(
        "PRESSROOM_POOL_PSI_SOME_HIGH",
        "pools.psi_some_high",
        POSITIVE,
        "Memory pressure (PSI `some` avg10, % of time some task stalled on memory) at which "
        "an adaptive pool halves; it grows only under a quarter of it.",
    ),
    _V(
        "PRESSROOM_POOL_PSI_FULL_HIGH",
        "pools.psi_full_high",
        POSITIVE,
        "Memory pressure (PSI `full` avg10, % of time every task stalled) at which an "
        "adaptive pool halves; it grows only under a quarter of it.",
    ),
    _V(
        "PRESSROOM_POOL_MEMORY_LOW_PERCENT",
        "pools.memory_low_percent",
        POSITIVE,
        "Available memory (of the host, or the cgroup's limit) under this percentage halves "
        "an adaptive pool; it grows only over twice it, with room for one more worker.",
    ),
    _V(
        "PRESSROOM_POOL_PSI_FILE",
        "pools.psi_file",
        TEXT,
        "The PSI file an adaptive pool reads.",
        default="the cgroup's memory.pressure, else /proc/pressure/memory",
    ),
)


# -- the reference page ----------------------------------------------------------------------

_TITLES = {
    "": "General",
    "limits": "Limits (`settings.limits`)",
    "admission": "Admission (`settings.admission`)",
    "verifier": "Customer verification (`settings.verifier`)",
    "scanner": "Malware scanning (`settings.scanner`)",
    "storage": "Storage (`settings.storage`)",
    "tracing": "Tracing (`settings.tracing`)",
    "redaction": "Redaction (`settings.redaction`)",
    "webhooks": "Webhooks (`settings.webhooks`)",
    "pools": "Adaptive worker pools (`settings.pools`)",
}


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, tuple):
        return ", ".join(str(v) for v in value) or "(none)"
    return str(value) or "(empty)"


def markdown() -> str:
    """docs/configuration.md, from the table above."""
    defaults = {"": Settings(), **{name: kind() for name, kind in SECTIONS.items()}}
    lines = [
        "# Configuration",
        "",
        "<!-- Generated from pressroom/settings.py by `python -m pressroom.settings --markdown`;",
        "     edit the table there, not this file. -->",
        "",
        "Pressroom reads these variables once, when a command starts. A value it cannot use",
        "stops the command with one line naming the variable and what it accepts",
        "(`BAD_CONFIG`, exit 2). A blank value counts as unset. Booleans are `1`, `true`, `yes`",
        "or `on`, and `0`, `false`, `no` or `off`, in any case.",
        "",
        f"`{CONFIG_FILE}` may name a TOML file whose keys are these variable names, e.g.",
        "`PRESSROOM_LEASE_SECONDS = 60`; a variable set in the environment wins over the file.",
    ]
    for section, title in _TITLES.items():
        lines += [
            "",
            f"## {title}",
            "",
            "| Variable | Type | Default | Meaning |",
            "|---|---|---|---|",
        ]
        for var in VARIABLES:
            owner, _, name = var.field.rpartition(".")
            if owner != section:
                continue
            default = var.default or _shown(getattr(defaults[section], name))
            lines.append(f"| `{var.name}` | {var.cast.expected} | {default} | {var.meaning} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] != ["--markdown"]:
        sys.exit("usage: python -m pressroom.settings --markdown > docs/configuration.md")
    sys.stdout.write(markdown())


def child_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """The environment for a tool Pressroom runs (pg_dump, pg_restore): this process's own with
    ``extra`` over it. Kept here, where the environment is read, so every other module reads
    its configuration from ``Settings``."""
    return {**os.environ, **extra}


def source_date(environ: Mapping[str, str] | None = None) -> datetime | None:
    """The date the reproducible-builds convention asks for (``SOURCE_DATE_EPOCH``, seconds
    since 1970, UTC), for `process`: every date an output carries is this one, so the same
    input makes the same bytes on every run. Not a Pressroom setting (no ``PRESSROOM_``): the
    convention's own name. A value that is not such a number is BAD_CONFIG."""
    raw = (os.environ if environ is None else environ).get("SOURCE_DATE_EPOCH")
    if raw is None or raw == "":
        return None
    if not raw.isdigit():
        raise BadConfig(f"SOURCE_DATE_EPOCH must be whole seconds since 1970, not {raw[:40]!r}")
    try:
        return datetime.fromtimestamp(int(raw), UTC)
    except (OverflowError, OSError, ValueError):
        raise BadConfig(f"SOURCE_DATE_EPOCH is out of range: {raw[:40]}") from None
