"""OpenTelemetry spans per stage, continuing the caller's W3C trace (off by default).

``PRESSROOM_OTEL_EXPORTER``: ``none`` (default: spans cost nothing), ``console`` (JSON on
stderr), or ``otlp`` (OTLP over HTTP; ``OTEL_EXPORTER_OTLP_ENDPOINT`` and the other standard
``OTEL_*`` variables apply). The API opens an ``accept`` span under the incoming
``traceparent``; the job keeps the trace id and that span's id, and the worker that runs the job
opens a ``job`` span under it, with one child span per stage (verify, fetch, inspect, ocr,
render, check, publish, …). Spans carry job ids, stage names, codes and counts — never file
names, paths, customer ids or document text.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, Status, StatusCode, TraceFlags

from pressroom.settings import TracingSettings

_provider: Any = None  # an SDK TracerProvider once configured; None: tracing is off
# An exception's message and traceback may quote the document: spans never record them, only
# the error's stable code (or class) as the status.
_QUIET: dict[str, bool] = {"record_exception": False, "set_status_on_exception": False}


@contextmanager
def _status(current: Any) -> Iterator[None]:
    try:
        yield
    except BaseException as exc:
        code = getattr(exc, "code", None) or type(exc).__name__
        current.set_status(Status(StatusCode.ERROR, str(code)))
        current.set_attribute("pressroom.error", str(code))
        raise


def configure(exporter: Any = None, settings: TracingSettings | None = None) -> None:
    """Set up tracing for this process. ``exporter``: a SpanExporter (tests), or None for the
    one ``settings`` names (``PRESSROOM_OTEL_EXPORTER``; none when not given)."""
    global _provider
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    processor: Any
    if exporter is not None:
        processor = SimpleSpanProcessor(exporter)
    else:
        kind = (settings or TracingSettings()).exporter
        if kind == "none":
            _provider = None
            return
        if kind == "console":
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter

            processor = BatchSpanProcessor(ConsoleSpanExporter())
        else:  # otlp: the settings were checked when read
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            processor = BatchSpanProcessor(OTLPSpanExporter())
    provider = TracerProvider(resource=Resource.create({"service.name": "pressroom"}))
    provider.add_span_processor(processor)
    _provider = provider


def shutdown() -> None:
    global _provider
    if _provider is not None:
        _provider.shutdown()
    _provider = None


def enabled() -> bool:
    return _provider is not None


def _tracer() -> Any:
    if _provider is None:
        return trace.NoOpTracer()
    return _provider.get_tracer("pressroom")


def remote_parent(trace_id: str | None, span_id: str | None) -> Any:
    """An OpenTelemetry context whose parent is the given W3C ids (the caller's span)."""
    if not trace_id or not span_id:
        return otel_context.Context()
    parent = SpanContext(
        trace_id=int(trace_id, 16),
        span_id=int(span_id, 16),
        is_remote=True,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )
    return trace.set_span_in_context(NonRecordingSpan(parent))


@contextmanager
def accept_span(trace_id: str, parent_span_id: str | None) -> Iterator[str]:
    """The API's span for one upload; yields the span id the job's spans will hang under."""
    if _provider is None:
        # no span is recorded, but the job still continues the caller's trace
        yield parent_span_id or secrets.token_hex(8)
        return
    if parent_span_id is None:
        # no caller span: our trace id (already on the job) under a virtual root
        parent_span_id = secrets.token_hex(8)
    with (
        _tracer().start_as_current_span(
            "accept", context=remote_parent(trace_id, parent_span_id), **_QUIET
        ) as span,
        _status(span),
    ):
        yield format(span.get_span_context().span_id, "016x")


@contextmanager
def job_span(
    job_id: str, trace_id: str | None, parent_span_id: str | None, **attrs: Any
) -> Iterator[None]:
    """The worker's span for one attempt at a job, under the API's accept span."""
    if _provider is None:
        yield
        return
    with (
        _tracer().start_as_current_span(
            "job",
            context=remote_parent(trace_id, parent_span_id),
            attributes={"pressroom.job_id": job_id, **attrs},
            **_QUIET,
        ) as current,
        _status(current),
    ):
        yield


@contextmanager
def span(name: str, **attrs: Any) -> Iterator[None]:
    """A child of the current span (a no-op when tracing is off)."""
    if _provider is None:
        yield
        return
    with (
        _tracer().start_as_current_span(name, attributes=attrs or None, **_QUIET) as current,
        _status(current),
    ):
        yield
