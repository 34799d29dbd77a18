"""A checked output's way out of the worker: its artifact key (the digest of what made it:
the source, the template that built it, the policy, the kind of output, our engine and the
OCR engine's, the detector), stored put-if-absent, kept apart under a versioned key when a
retry made other bytes, or held privately for a reviewer — then the job completed."""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from pressroom import ENGINE_VERSION
from pressroom.corrections import corrected_reason
from pressroom.errors import Corrected, OutputChanged, ReviewRequested
from pressroom.outcomes import Held
from pressroom.pipeline.core import DocumentResult, JobOptions
from pressroom.pipeline.inspect import file_sha256
from pressroom.pipeline.sidecar import sidecar_path, sidecar_text
from pressroom.processing import Processing
from pressroom.redact.detect.ner import model_identity
from pressroom.redact.policy import RedactionPolicy
from pressroom.settings import RedactionSettings
from pressroom.stages import Stage
from pressroom.storage import (
    artifact_key,
    review_key,
    sidecar_key,
    stored_sha256,
    versioned_artifact_key,
)
from pressroom.worker.context import JobRun
from pressroom.worker.lease import stage

log = logging.getLogger("pressroom.worker")


def artifact_digest(
    source_sha256: str,
    template_hash: str,
    policy: RedactionPolicy,
    *,
    engine: str,
    detector: str = "",
    keep_pixels: bool = False,
    output: tuple[str, ...] = (),
) -> str:
    """What makes an output: the source, the template's content, the policy, whether pixels are
    kept, our engine and the OCR engine's version, the detector (its model and the operator's
    recognisers) when something is redacted — and nothing else on the job (a webhook URL or a
    policy's expiry changes no byte of it). Another version is another key, so a retry after an
    upgrade is a new output rather than a changed one."""
    parts: list[object] = [source_sha256, template_hash, list(policy.classes), ENGINE_VERSION]
    if keep_pixels:  # appended only when set: digests of earlier jobs stay what they were
        parts.append("keep-pixels")
    parts += output  # the kind of output asked for (output_digest): none for a plain PDF
    parts.append(engine)
    if detector:
        parts.append(detector)
    material = json.dumps(parts)
    return hashlib.sha256(material.encode()).hexdigest()


def output_digest(options: JobOptions) -> tuple[str, ...]:
    """What of the kind of output asked for changes the artifact: PDF/A, a sidecar text, a
    document without text allowed, an optimisation level (each named only when asked, so the
    digests of jobs that ask for none stay what they were)."""
    asked = options.output_choices()
    out = ["output-type=pdfa"] if asked["output_type"] == "pdfa" else []
    out += [name.replace("_", "-") for name in ("sidecar", "allow_no_text") if asked[name]]
    out += [f"optimize={asked['optimize']}"] if asked["optimize"] else []
    # the languages read with: another set is another text layer (English alone, the default
    # since the start, is not named, so earlier digests stay what they were)
    if options.languages not in ((), ("eng",)):
        out.append("languages=" + "+".join(options.languages))
    if options.ocr != "skip":  # another reading of pages that carry text
        out.append(f"ocr={options.ocr}")
    return tuple(out)


def detector_identity(policy: RedactionPolicy, redaction: RedactionSettings) -> str:
    """The detector a redaction policy runs (model and operator recognisers); "" for none."""
    if not policy.classes:
        return ""
    return json.dumps([model_identity(redaction.ner_model), list(redaction.recognizers)])


def run_digest(run: JobRun) -> str:
    """The artifact digest of ``run``'s output: its template is the one loaded for the run,
    the one that built the bytes (never the template as it is on disk by now)."""
    policy, options = run.policy, run.options
    return artifact_digest(
        run.job.source_sha256,
        run.template.content_hash,
        policy,
        engine=run.engine.name,
        detector=detector_identity(policy, run.services.settings.redaction),
        keep_pixels=options.keep_pixels,
        output=output_digest(options),
    )


def held_anyway(run: JobRun, processing: Processing, result: DocumentResult) -> Held | None:
    """A checked redaction that still goes to a person: a rebuild with a reviewer's corrections
    goes back to that reviewer, and a job that asked for review always is reviewed."""
    if not processing.redacts:
        return None
    options = run.options
    if options.corrections is not None:
        corrected = Corrected(
            corrected_reason(
                options.corrections,
                sum(result.redacted.values()),
                result.overridden,
                sheet=result.sheet,  # what is burned, counted as the desk counts it
            )
        )
        return Held(corrected, sheet=result.sheet)
    if run.order.review_always:
        asked = ReviewRequested("every check passed; the job asked for a person to approve it")
        return Held(asked, sheet=result.sheet)
    return None


def publish(run: JobRun, built: Path, result: DocumentResult) -> None:
    """Store the checked output under its digest's key (put-if-absent: a retry that made
    other bytes is held apart for a human) and complete the job."""
    claim, job = run.claim, run.job
    services, queue = run.services, claim.queue
    digest = run_digest(run)
    key = artifact_key(job.tenant, job.id, digest)
    text: Path | None = None
    if run.options.wants_sidecar:
        text = sidecar_path(built)
        if not text.exists():  # a split job's assembled output: read it back now
            offset = result.output_pages - result.pages
            text.write_text(sidecar_text(built, result.layouts, offset), encoding="utf-8")
    with stage(claim, Stage.PUBLISH):
        written = services.blobs.put_if_absent(key, built)
        if not written and stored_sha256(run.services.blobs, key) != result.output_sha256:
            # an earlier attempt stored other bytes under this digest: neither
            # copy may win silently, so the new one is kept apart for a human
            changed = _store_version(run, digest, built, result.output_sha256)
            if text is not None:  # beside the copy it belongs to, never over another's
                services.blobs.put_file(sidecar_key(changed), text)
            hold(
                run,
                Held(OutputChanged("a retry made an output that differs from the stored one")),
                built,
                key=changed,
            )
            return
        if text is not None:
            # these very bytes are stored: their text goes beside them, before the job
            # completes (a complete job's sidecar link always finds its text)
            services.blobs.put_file(sidecar_key(key), text)
        if queue.complete(
            job.id,
            claim.owner,
            artifact_key=key,
            artifact_sha256=result.output_sha256,
            pages=result.pages,
            now=claim.now(),
            result={
                "text_layer": result.text_layer,
                "flattened": result.flattened,
                "notes": result.notes,
                # the source's carriers a redaction left out (kinds, never their text)
                "dropped": list(result.dropped),
                # what the output check found that delivers all the same (page numbers and
                # shares, never text)
                "warnings": list(result.warnings),
            },
        ):
            if job.source_key:
                services.blobs.delete(job.source_key)
            queue.delete_source_key(job.id)
            claim.drop_parts()
        elif claim.cancel(key):
            return
    log.info(
        "job complete",
        extra={"job_id": job.id, "pages": result.pages, "attempt": job.attempts},
    )


def hold(run: JobRun, held: Held, built: Path, *, key: str | None = None) -> None:
    """Keep the doubtful output privately for a reviewer (no link is ever made for it);
    ``key``: where it is already stored (a changed output's versioned key)."""
    claim, job = run.claim, run.job
    services = run.services
    if key is None and built.exists():
        key = review_key(job.tenant, job.id, file_sha256(built))
        services.blobs.put_file(key, built)
    if _label_carries(run, held):
        # before the hold is seen: the job never shows the value as its name again, and
        # an approved copy downloads as ID.pdf
        claim.queue.withhold_label(job.id, claim.owner)
        log.info("label withheld", extra={"job_id": job.id})
    sheet = held.sheet.as_json() if held.sheet is not None else None
    if not claim.queue.hold(
        job.id,
        claim.owner,
        code=held.code,
        message=held.message,
        now=claim.now(),
        artifact_key=key,
        sheet=sheet,
        result=dict(held.result) if held.result is not None else None,
    ):
        claim.cancel(*([key] if key else []))
        return
    log.info("job held for review", extra={"job_id": job.id, "code": held.code})


def _label_carries(run: JobRun, held: Held) -> bool:
    """Whether a held redaction's label carries a value it found (the engine's label
    check, or any finding's value in it)."""
    job = run.job
    if job.label is None:
        return False
    from pressroom.redact.leaks import LABEL_HELD, carries_value  # a redaction's module

    if held.message == LABEL_HELD:
        return True
    values = [str(f.value) for f in held.findings if isinstance(getattr(f, "value", None), str)]
    return carries_value(run.services.labels.open(job.id, job.label), values)


def _store_version(run: JobRun, digest: str, built: Path, sha: str) -> str:
    """The new output under the first free versioned key (v2, v3, …), never over another
    blob; a version already holding these very bytes (an earlier attempt's) is reused."""
    job = run.job
    version = 2
    while True:
        key = versioned_artifact_key(job.tenant, job.id, digest, version)
        if (
            run.services.blobs.put_if_absent(key, built)
            or stored_sha256(run.services.blobs, key) == sha
        ):
            return key
        version += 1
