"""Limits and settings, read from the environment once, by entry points only."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

MIB = 1024 * 1024


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
    # Streams walked to measure one page (forms, images, patterns, glyph procedures,
    # appearances): a scan has one, a heavy page hundreds; the walk itself must stay cheap.
    max_page_objects: int = 10_000

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Limits:
        def _int(name: str, default: int) -> int:
            raw = env.get(name)
            if raw is None or raw.strip() == "":
                return default
            value = int(raw)
            if value <= 0:
                raise ValueError(f"{name} must be a positive integer")
            return value

        d = cls()
        return cls(
            max_bytes=_int("PRESSROOM_MAX_BYTES", d.max_bytes),
            max_pages=_int("PRESSROOM_MAX_PAGES", d.max_pages),
            max_pixels=_int("PRESSROOM_MAX_PIXELS", d.max_pixels),
            max_dpi=_int("PRESSROOM_MAX_DPI", d.max_dpi),
            min_dpi=_int("PRESSROOM_MIN_DPI", d.min_dpi),
            max_document_pixels=_int("PRESSROOM_MAX_DOCUMENT_PIXELS", d.max_document_pixels),
            max_page_operators=_int("PRESSROOM_MAX_PAGE_OPERATORS", d.max_page_operators),
            max_document_operators=_int(
                "PRESSROOM_MAX_DOCUMENT_OPERATORS", d.max_document_operators
            ),
            max_page_content_bytes=_int(
                "PRESSROOM_MAX_PAGE_CONTENT_BYTES", d.max_page_content_bytes
            ),
            max_page_text_bytes=_int("PRESSROOM_MAX_PAGE_TEXT_BYTES", d.max_page_text_bytes),
            max_page_objects=_int("PRESSROOM_MAX_PAGE_OBJECTS", d.max_page_objects),
        )


@dataclass(frozen=True, slots=True)
class Settings:
    data_dir: Path = Path("pressroom-data")
    scratch_dir: Path = field(default_factory=lambda: Path(tempfile.gettempdir()))
    limits: Limits = field(default_factory=Limits)
    template_dirs: tuple[Path, ...] = ()
    languages: tuple[str, ...] = ("eng",)
    database_url: str = ""  # empty: SQLite in the data dir
    storage_url: str = ""  # empty: a folder in the data dir
    public_url: str = ""  # empty: links are built from each request's own base URL
    lease_s: float = 30.0  # a dead worker's job is retried this long after its last heartbeat
    link_ttl_s: float = 900.0
    retention_s: float = 7 * 24 * 3600.0
    max_attempts: int = 4
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

    @property
    def sqlite_default(self) -> str:
        return f"sqlite:///{(self.data_dir / 'pressroom.db').resolve()}"

    @property
    def db_url(self) -> str:
        return self.database_url or self.sqlite_default

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        extra = tuple(Path(p) for p in env.get("PRESSROOM_TEMPLATE_DIRS", "").split(":") if p)
        langs = tuple(x for x in env.get("PRESSROOM_OCR_LANGUAGES", "eng").split("+") if x)
        return cls(
            database_url=env.get("PRESSROOM_DATABASE_URL", ""),
            storage_url=env.get("PRESSROOM_STORAGE_URL", ""),
            public_url=env.get("PRESSROOM_PUBLIC_URL", "").rstrip("/"),
            lease_s=float(env.get("PRESSROOM_LEASE_SECONDS", "30")),
            link_ttl_s=float(env.get("PRESSROOM_LINK_TTL_SECONDS", "900")),
            retention_s=float(env.get("PRESSROOM_RETENTION_SECONDS", str(7 * 24 * 3600))),
            max_attempts=int(env.get("PRESSROOM_MAX_ATTEMPTS", "4")),
            webhook_allow_private=env.get("PRESSROOM_WEBHOOK_ALLOW_PRIVATE", "") in ("1", "true"),
            storage_timeout_s=float(env.get("PRESSROOM_STORAGE_TIMEOUT_SECONDS", "30")),
            stop_timeout_s=float(env.get("PRESSROOM_STOP_TIMEOUT_SECONDS", "60")),
            data_dir=Path(env.get("PRESSROOM_DATA_DIR", "pressroom-data")),
            scratch_dir=Path(env.get("PRESSROOM_SCRATCH_DIR") or tempfile.gettempdir()),
            limits=Limits.from_env(env),
            template_dirs=extra,
            languages=langs or ("eng",),
            trusted_proxies=tuple(
                p.strip() for p in env.get("PRESSROOM_TRUSTED_PROXIES", "").split(",") if p.strip()
            ),
            review_retention_s=float(
                env.get("PRESSROOM_REVIEW_RETENTION_SECONDS", str(30 * 24 * 3600))
            ),
            header_timeout_s=float(env.get("PRESSROOM_HEADER_TIMEOUT_SECONDS", "10")),
            body_timeout_s=float(env.get("PRESSROOM_BODY_TIMEOUT_SECONDS", "15")),
            upload_deadline_s=float(env.get("PRESSROOM_UPLOAD_DEADLINE_SECONDS", "600")),
            tenant_max_stored_bytes=int(env.get("PRESSROOM_TENANT_MAX_STORED_BYTES", "0")),
            tenant_max_bytes_per_hour=int(env.get("PRESSROOM_TENANT_MAX_BYTES_PER_HOUR", "0")),
            worker_memory_limit_bytes=int(
                float(env.get("PRESSROOM_WORKER_MEMORY_LIMIT_MB", "1536")) * 1024 * 1024
            ),
        )
