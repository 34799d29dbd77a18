"""Intake: an upload's fields judged, then the job admitted, its source stored and its row
inserted — all of ``POST /v1/jobs`` but HTTP, so the route only streams and answers."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pressroom.errors import (
    BadRequest,
    QuotaExceeded,
    TooBigForQuota,
    TransientError,
    UnknownTemplate,
)
from pressroom.jobs.admission import REFUSALS, Admission, admit, work_units
from pressroom.jobs.model import Job, Lane, NewJob
from pressroom.jobs.store import AdmissionFigures, Queue, Tenancy
from pressroom.labels import Labels, parse_label
from pressroom.languages import check_listed, job_languages, parse_languages
from pressroom.models import OCR_MODES, OcrMode
from pressroom.orders import JobOrder
from pressroom.pipeline.pagecount import count_work
from pressroom.pipeline.sniff import sniff_bytes
from pressroom.redact.detect.registry import check_policy_classes
from pressroom.redact.policy import RedactionPolicy, parse_policy
from pressroom.service import Services
from pressroom.settings import Settings
from pressroom.storage import BlobStore, source_key
from pressroom.templates import REGISTERED_NAME, Template, registered_template, templates_for

# the API's logger: the log allow-list and operators' filters know uploads by it
log = logging.getLogger("pressroom.api")
MAX_TITLE = 200
MAX_DEADLINE_S = 30 * 24 * 3600.0
MAX_IDEMPOTENCY_KEY = 255
MAX_WEBHOOK_URL = 2048
CUSTOMER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@:-]{0,127}$")
# every small field ``parse_submit`` reads (the upload's ``file`` part aside): the API refuses
# any other, so a misspelt ``redact`` is 400 rather than a job published unredacted
SUBMIT_FIELDS = frozenset(
    """template lane title label deadline customer redact expires_at keep_pixels webhook_url
    review output_type sidecar allow_no_text optimize languages ocr""".split()
)


@dataclass(frozen=True, slots=True)
class SubmitRequest:
    """What a client asked for with an upload, every field judged; the file is separate."""

    template: str
    lane: Lane
    title: str | None
    deadline: float | None
    customer: str | None
    policy: RedactionPolicy
    keep_pixels: bool
    webhook_url: str | None
    idempotency_key: str | None
    # a redaction's output goes to the review desk even when every check passes
    review_always: bool = False
    output_type: str | None = None  # "pdf" or "pdfa"; None: the template's default
    sidecar: bool | None = None  # None: the template's default
    allow_no_text: bool = False
    optimize: int = 0
    label: str | None = None  # the client's name for the job (≤ 200 characters), as given
    languages: tuple[str, ...] | None = None  # OCR languages; None: the template's, the setting
    ocr: OcrMode = "skip"  # what OCR does with PDF pages that carry text (pipeline.ocrmode)


def parse_template(fields: Mapping[str, str], allowed: frozenset[str] | None) -> str:
    """The registered template's name asked for (``plain`` when none), if this tenant may use
    it; nothing is loaded."""
    name = fields.get("template") or "plain"
    if not REGISTERED_NAME.match(name):
        raise UnknownTemplate("template must be a registered template's name (a-z, 0-9, _ and -)")
    if allowed is not None and name not in allowed:
        # the same answer as for a name that does not exist: another tenant's brand is private
        # (checked before loading anything, so a broken brand of theirs says nothing either)
        raise UnknownTemplate("unknown template")
    return name


def parse_submit(
    fields: Mapping[str, str],
    *,
    allowed: frozenset[str] | None,
    idempotency_key: str | None,
    now: float,
    partial: bool = False,
) -> SubmitRequest:
    """Every small field of an upload judged, in a fixed order, with no I/O: safe on the event
    loop, and on the fields sent ahead of the file before a byte of it is written
    (``partial``: a rule across fields that one sent after the file may still meet, such as
    ``review=always`` needing ``redact``, waits for the whole form)."""
    template = parse_template(fields, allowed)
    try:
        lane = Lane(fields.get("lane") or "bulk")
    except ValueError:
        raise BadRequest("lane must be 'bulk' or 'interactive'") from None
    title = fields.get("title") or None
    if title is not None and (len(title) > MAX_TITLE or "\x00" in title):
        raise BadRequest(f"title must be at most {MAX_TITLE} printable characters")
    label = parse_label(fields.get("label"))
    if idempotency_key is not None and (
        not idempotency_key.strip() or len(idempotency_key) > MAX_IDEMPOTENCY_KEY
    ):
        raise BadRequest(f"Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY} characters")
    deadline = _seconds(fields.get("deadline"), "deadline")
    customer = fields.get("customer") or None
    if customer is not None and not CUSTOMER_RE.match(customer):
        raise BadRequest("customer must be an id of letters, digits and ._@:- (≤ 128)")
    policy = parse_policy(fields.get("redact"), fields.get("expires_at"), now=now)
    keep_pixels = _flag(fields.get("keep_pixels"), "keep_pixels")
    url = fields.get("webhook_url") or None
    if url and (len(url) > MAX_WEBHOOK_URL or not url.startswith(("https://", "http://"))):
        raise BadRequest(
            f"webhook_url must be an http(s) URL of at most {MAX_WEBHOOK_URL} characters"
        )
    review = fields.get("review") or "doubt"
    if review not in ("doubt", "always"):
        raise BadRequest("review must be 'doubt' (the default) or 'always'")
    if review == "always" and policy.empty and not partial:
        raise BadRequest("review=always needs a redaction policy (redact=...)")
    output_type = fields.get("output_type") or None
    if output_type not in (None, "pdf", "pdfa"):
        raise BadRequest("output_type must be 'pdf' or 'pdfa'")
    sidecar = _flag(fields["sidecar"], "sidecar") if fields.get("sidecar") else None
    allow_no_text = _flag(fields.get("allow_no_text"), "allow_no_text")
    optimize = fields.get("optimize", "0")
    if optimize not in ("0", "1", "2"):
        raise BadRequest("optimize must be 0, 1 or 2")
    languages = parse_languages(fields["languages"]) if fields.get("languages") else None
    ocr = next((m for m in OCR_MODES if m == (fields.get("ocr") or "skip")), None)
    if ocr is None:
        raise BadRequest("ocr must be 'skip' (the default), 'redo' or 'force'")
    return SubmitRequest(
        template,
        lane,
        title,
        deadline,
        customer,
        policy,
        keep_pixels,
        url,
        idempotency_key,
        review_always=review == "always",
        output_type=output_type,
        sidecar=sidecar,
        allow_no_text=allow_no_text,
        optimize=int(optimize),
        label=label,
        languages=languages,
        ocr=ocr,
    )


def _flag(raw: str | None, name: str) -> bool:
    """A boolean form field: absent, ``true`` or ``false``; anything else is refused."""
    if raw is None or raw == "false":
        return False
    if raw == "true":
        return True
    raise BadRequest(f"{name} must be 'true' or 'false'")


def _seconds(raw: str | None, name: str) -> float | None:
    if raw is None or raw == "":
        return None
    try:
        value = float(raw)
    except ValueError:
        raise BadRequest(f"{name} must be a number of seconds") from None
    if not math.isfinite(value) or value <= 0 or value > MAX_DEADLINE_S:
        raise BadRequest(f"{name} must be between 0 and {MAX_DEADLINE_S:.0f} seconds")
    return value


@dataclass(frozen=True, slots=True)
class Ticket:
    """What intake learnt before the body: who, which templates they may use, when the request
    began, and whether its Idempotency-Key was already used (a replay is coming)."""

    tenant: str
    idempotency_key: str | None
    allowed: frozenset[str] | None
    started: float
    known: bool

    def parse(self, fields: Mapping[str, str], *, partial: bool = False) -> SubmitRequest:
        return parse_submit(
            fields,
            allowed=self.allowed,
            idempotency_key=self.idempotency_key,
            now=self.started,
            partial=partial,
        )


@dataclass(frozen=True, slots=True)
class Received:
    """An upload streamed to scratch: its fields, where the file is, and what it measured."""

    fields: Mapping[str, str]
    path: Path
    size: int
    sha256: str
    head: bytes


@dataclass(frozen=True, slots=True)
class Accepted:
    job: Job
    created: bool  # False: a replay of an Idempotency-Key found the job it made before


@dataclass(frozen=True, slots=True)
class Intake:
    """The upload's path into the queue; each method is blocking (the API runs it in a thread,
    except ``precheck``, which is pure)."""

    queue: Queue
    tenancy: Tenancy
    figures: AdmissionFigures
    blobs: BlobStore
    settings: Settings
    admission: Admission
    clock: Callable[[], float]
    labels: Labels = field(default_factory=Labels)

    @classmethod
    def of(cls, services: Services) -> Intake:
        store = services.store
        return cls(
            store.queue,
            store.tenancy,
            store.stats,
            services.blobs,
            services.settings,
            services.admission,
            services.clock,
            services.labels,
        )

    def allowed_templates(self, tenant: str) -> frozenset[str] | None:
        """The templates this tenant may use under the template policy; None: every one."""
        own = self.tenancy.allowed_templates(tenant)
        policy = self.settings.template_policy
        any_list = own is not None or (policy == "builtin" and self.tenancy.any_allow_list())
        return templates_for(own, any_list, policy)

    def open(self, tenant: str, idempotency_key: str | None, least_bytes: int) -> Ticket:
        """Before a byte of the body is read: a tenant over quota already (or certainly after
        this body, of at least ``least_bytes``) is refused now, unless this is a retry of an
        upload that was accepted."""
        allowed = self.allowed_templates(tenant)
        started = self.clock()
        known = idempotency_key is not None and self.queue.find_idempotent(tenant, idempotency_key)
        if not known:  # a retry of an accepted upload adds nothing: never refused for quota
            self.check_quota(tenant, least_bytes)
        return Ticket(tenant, idempotency_key, allowed, started, known)

    def precheck(self, ticket: Ticket, fields: Mapping[str, str]) -> None:
        """The fields sent ahead of the file, judged before it is written: pure, no I/O."""
        ticket.parse(fields, partial=True)

    def accept(self, ticket: Ticket, upload: Received, trace_id: str, span_id: str) -> Accepted:
        """Sniff, judge every field (the template loaded), check the policy and the webhook,
        count pages, then — unless a replay — admit; store the source, insert the row with
        admission checked again in its transaction, and clean up whatever a refusal leaves."""
        who = ticket.tenant
        kind = sniff_bytes(upload.head)
        request, template = self._judge(ticket, upload.fields)
        order = self._order(request, template)
        redaction = not request.policy.empty
        cap = self.settings.limits.max_detect_chars
        pages, text_chars = count_work(upload.path, kind.value, text_cap=cap if redaction else 0)
        units = work_units(pages, text_chars, redaction=redaction, text_cap=cap)
        lane = request.lane
        deadline_s = request.deadline or self.admission.default_deadline(lane, pages)
        now = self.clock()
        # known before the body: a replay (asked once); else asked again, since a racing
        # upload with the same key may have been accepted while this body arrived
        replay = ticket.known or (
            ticket.idempotency_key is not None
            and self.queue.find_idempotent(who, ticket.idempotency_key)
        )
        if not replay:  # a replay was admitted the first time; it adds no work
            self._admit(who, upload.size, lane, (pages, units), deadline_s, now=now)
        job_id = str(uuid.uuid4())
        new = NewJob(
            id=job_id,
            tenant=who,
            lane=lane,
            source_key=source_key(who, job_id),
            source_sha256=upload.sha256,
            source_bytes=upload.size,
            kind=kind.value,
            template=order.template,
            title=self.labels.seal(job_id, request.title, purpose="title"),
            order=order,
            idempotency_key=request.idempotency_key,
            request_hash=request_hash(request, upload.sha256, order),
            deadline_s=deadline_s,
            trace_id=trace_id,
            parent_span_id=span_id,
            customer=request.customer,
            pages_estimate=pages,
            cost=units,
            label=self.labels.seal(job_id, request.label),
            label_digest=self.labels.digest(who, request.label),
        )

        def admit_again(conn: Any) -> None:
            # the same rules, in the insert's own transaction: an upload that raced this one
            # past the first check cannot take us over a quota or a deadline
            self._admit(
                who, upload.size, lane, (pages, units), deadline_s, now=self.clock(), conn=conn
            )

        job, created = self._enqueue(new, upload.path, None if replay else admit_again)
        log.info(
            "job accepted",
            extra={"job_id": job.id, "tenant": who, "bytes": upload.size, "replay": not created},
        )
        return Accepted(job, created)

    def _enqueue(
        self, new: NewJob, path: Path, check: Callable[[Any], None] | None
    ) -> tuple[Job, bool]:
        """The source stored, then the row inserted (``check`` in its transaction); a refused
        or failed insert takes its source back with it."""
        key = new.source_key
        # The source first, then the row: there is never a job without its source. A
        # source without a row (a crash in between) is swept after an hour.
        self.blobs.put_file(key, path)
        try:
            job, created = self.queue.insert(
                new, now=self.clock(), max_attempts=self.settings.max_attempts, check=check
            )
        except REFUSALS as refusal:
            self.blobs.delete(key)
            self.figures.record_refusal(new.tenant, new.lane.value, refusal.code, now=self.clock())
            raise
        except TransientError:
            # the commit may have gone through before the connection dropped: keep the source
            # (a retry with the Idempotency-Key finds the job; an orphan is swept in an hour)
            raise
        except BaseException:
            self.blobs.delete(key)
            raise
        if not created:  # a replay: the job it made before keeps the source it stored then
            self.blobs.delete(key)
        return job, created

    def _admit(
        self,
        who: str,
        size: int,
        lane: Lane,
        work: tuple[int, int],
        deadline_s: float,
        *,
        now: float,
        conn: Any = None,
    ) -> None:
        """The tenant's byte quotas, then admission's figures for ``work`` (pages, units); with
        ``conn``, checked again in the insert's transaction, where a refusal is recorded by the
        caller, not here."""
        self.check_quota(who, size, conn=conn)
        admit(
            self.figures,
            self.admission,
            tenant=who,
            lane=lane,
            pages=work[0],
            units=work[1],
            deadline_s=deadline_s,
            now=now,
            conn=conn,
            record=conn is None,
        )

    def _judge(self, ticket: Ticket, fields: Mapping[str, str]) -> tuple[SubmitRequest, Template]:
        """Every field, in the order ``parse_submit`` keeps, with the template also loaded
        (a broken brand is refused before the fields after it are judged)."""
        template = registered_template(
            parse_template(fields, ticket.allowed), self.settings.template_dirs
        )
        request = ticket.parse(fields)
        if not request.policy.empty:
            # refused here, nothing loaded
            check_policy_classes(request.policy.classes, self.settings.redaction)
        self.check_languages(self.languages_of(request, template), request.lane)
        return request, template

    def languages_of(self, request: SubmitRequest, template: Template) -> tuple[str, ...]:
        """The job's OCR languages: its own, else its template's, else the setting's."""
        return job_languages(request.languages, template.languages, self.settings.languages)

    def check_languages(self, languages: tuple[str, ...], lane: Lane) -> None:
        """At the door: against the languages the setting lists, else those every live worker
        of the lane reports; with neither known, the worker checks (and refuses the same)."""
        available: tuple[str, ...] | None = self.settings.languages_available or None
        if available is None:
            available = self.figures.worker_languages(lane.value, now=self.clock())
        if available is not None:
            check_listed(languages, available)

    def _order(self, request: SubmitRequest, template: Template) -> JobOrder:
        """The job's order as stored: every choice made explicit (the template's defaults and
        the languages resolved: a later edit of the template or the setting does not change
        what an accepted job asked for), the webhook URL checked."""
        url = None
        if request.webhook_url:
            from pressroom.notify.webhooks import check_url

            url = check_url(request.webhook_url, allow_private=self.settings.webhook_allow_private)
        return JobOrder(
            template=request.template,
            redact=request.policy.classes,
            expires_at=request.policy.expires_at if not request.policy.empty else None,
            keep_pixels=request.keep_pixels,
            output_type=request.output_type or template.output_type,
            sidecar=template.sidecar if request.sidecar is None else request.sidecar,
            allow_no_text=request.allow_no_text,
            optimize=request.optimize,
            ocr=request.ocr,
            languages=self.languages_of(request, template),
            review_always=request.review_always,
            webhook_url=url,
        )

    def check_quota(self, tenant: str, incoming: int, conn: Any = None) -> None:
        """Per-tenant byte quotas: sources still held, and bytes accepted in the last hour.
        With ``conn``, inside the insert's transaction (serialised per tenant with
        admission's)."""
        settings = self.settings
        if not settings.tenant_max_stored_bytes and not settings.tenant_max_bytes_per_hour:
            return
        for cap, what in (
            (settings.tenant_max_stored_bytes, "stored sources"),
            (settings.tenant_max_bytes_per_hour, "uploads in an hour"),
        ):
            if cap and incoming > cap:  # waiting cannot help: refused for good, no Retry-After
                raise TooBigForQuota(
                    f"{incoming:,} bytes; this tenant's {what} may not pass {cap:,}"
                )
        now = self.clock()
        held, last_hour = self.figures.tenant_bytes(tenant, since=now - 3600.0, conn=conn)
        if settings.tenant_max_stored_bytes and held + incoming > settings.tenant_max_stored_bytes:
            raise QuotaExceeded(
                f"this tenant's stored sources would pass {settings.tenant_max_stored_bytes:,} "
                "bytes",
                retry_after=3600.0,
            )
        if settings.tenant_max_bytes_per_hour and (
            last_hour + incoming > settings.tenant_max_bytes_per_hour
        ):
            raise QuotaExceeded(
                f"this tenant's uploads would pass {settings.tenant_max_bytes_per_hour:,} bytes "
                "in an hour",
                retry_after=600.0,
            )


def request_hash(request: SubmitRequest, sha256: str, order: JobOrder) -> str:
    """What an Idempotency-Key's replay must match: the file and every choice made with it
    (the order as stored, less its format's version: a hash stays what it was before the
    version key)."""
    options = {k: v for k, v in order.to_json().items() if k != "v"}
    canonical = json.dumps(
        {
            "sha256": sha256,
            "template": request.template,
            "lane": request.lane.value,
            "title": request.title,
            "label": request.label,
            "deadline": request.deadline,
            "customer": request.customer,
            "options": options,
        },
        sort_keys=True,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()
