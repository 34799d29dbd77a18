"""Which pipeline a job runs — plain or redaction — chosen in one place for the CLI and the
worker alike."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from pressroom.errors import ReviewRequired
from pressroom.outcomes import Held
from pressroom.pipeline.core import DocumentResult, JobOptions, Progress
from pressroom.pipeline.ocr import OcrEngine
from pressroom.pipeline.plain import process_document
from pressroom.pipeline.prepare import prepare
from pressroom.pipeline.sidecar import sidecar_path, sidecar_text
from pressroom.redact.policy import RedactionPolicy
from pressroom.stages import StageTimer


@dataclass(frozen=True, slots=True)
class Processing:
    """How one document is processed: redacted under ``policy`` when it names a class, plain
    otherwise."""

    policy: RedactionPolicy | None = None

    @property
    def redacts(self) -> bool:
        return self.policy is not None and not self.policy.empty

    @property
    def holds_output(self) -> bool:
        """Whether an output the checks doubt (``Held``) is kept for a reviewer. Only
        a redaction's is: a person judges what was removed, with the findings beside it; a
        plain output that fails its check has nothing to judge and is not kept."""
        return self.redacts

    def __call__(
        self,
        source: Path,
        output: Path,
        options: JobOptions,
        engine: OcrEngine,
        *,
        progress: Progress | None = None,
        timer: StageTimer | None = None,
    ) -> DocumentResult | Held:
        """``source`` made into a checked output at ``output`` (a scratch path), or ``Held``:
        the checks doubt it (a redaction's held copy stays at ``output`` for a reviewer, with
        every finding and the review sheet; a plain output's hold has nothing to judge). A
        hold is a value here, whichever check found it: nothing past this point catches
        ``ReviewRequired``. Stage timings go to ``timer`` as they are taken, so a caller has
        them when it fails too. Forms and annotations are first drawn into their pages
        (``pipeline.flatten``): the result is still the source's (its hash), with what was
        flattened counted."""
        timer = timer or StageTimer()
        try:
            with prepare(source, output, options, timer=timer) as ready:
                if self.policy is None or self.policy.empty:
                    result = process_document(
                        ready, output, options, engine, progress=progress, timer=timer
                    )
                else:
                    # imported only here: detection's recognisers are not loaded for plain jobs
                    from pressroom.redact.engine import redact_document

                    # what the rework took out (an earlier layer, or every word of a page
                    # rendered under force) is read from the flattened source and burned too
                    done = redact_document(
                        ready, output, options, self.policy, engine, progress=progress, timer=timer
                    )
                    if isinstance(done, Held):
                        return done
                    result = done
                if options.wants_sidecar:
                    # a redaction's sticky notes are not redacted: they stay out
                    notes = ready.flat.notes if not self.redacts else ()
                    offset = result.output_pages - result.pages
                    text = sidecar_text(output, result.layouts, offset, notes)
                    sidecar_path(output).write_text(text, encoding="utf-8")
        except ReviewRequired as exc:  # a check's doubt raised before or beside the engine's
            return Held(exc)
        if not ready.changed:
            return result
        # (the result's source_sha256 is the source's own: inspection hashed it, not the copy)
        return replace(result, flattened=ready.flat.flattened, notes=len(ready.flat.notes))
