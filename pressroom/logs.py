"""structlog JSON log lines with an allow-list of fields: job ids, tenants, stages, codes,
counts, bytes, durations — never file names, paths, customer ids or document text, whatever a
caller passes.

Pressroom's modules log through the standard library (``log.info("job complete",
extra={...})``); structlog's ``ProcessorFormatter`` renders those records, and the job context
a worker binds (``bind_job``: job id, tenant, lane, stage) is merged into every line logged
while the job runs. The allow-list is the last step before rendering, so an unexpected field
never reaches the output; an exception keeps its class and frames, never its message (which
may quote the input).

Two renderings of the same allow-listed fields: JSON lines for a collector (the default when
the log goes to a file or a pipe) and short human lines for a person at a terminal (``make
run``). On a terminal the access log shows only the requests that failed (4xx, 5xx; every
request at debug level), so the service's own summary is not scrolled away by its polling.
"""

from __future__ import annotations

import logging
import sys
import time
import traceback
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any, Literal, TextIO

import structlog

ALLOWED = frozenset(
    {
        "job_id",
        "tenant",
        "lane",
        "stage",
        "code",
        "state",
        "bytes",
        "pages",
        "attempt",
        "seconds",
        "exit_code",
        "replay",
        "ok",
        "count",
        "trace_id",
        "key_id",  # an API key's id (k_…), never the key: the audit of key changes
        "role",
        # an adaptive pool's decision (worker/pool.py): its size before and after
        "from_size",
        "to_size",
        # the access log (api.timing): the route's template, never the path a client sent
        "method",
        "route",
        "status",
    }
)
_ALWAYS = ("ts", "level", "logger", "event")
ACCESS_LOGGER = "pressroom.access"  # api.timing's: one line per request

# a human line leaves out what only a collector uses (the trace id joins lines to traces)
_NOT_FOR_A_PERSON = ("error", "traceback", "trace_id")

LogFormat = Literal["auto", "json", "human"]
LOG_FORMATS: tuple[LogFormat, ...] = ("auto", "json", "human")


def _allow_list(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Any:
    line: dict[str, Any] = {k: event[k] for k in _ALWAYS if k in event}
    for key, value in event.items():
        if key in ALLOWED:
            line[key] = value if isinstance(value, int | float | bool | None) else str(value)
    exc_info = event.get("exc_info")
    if exc_info:
        if exc_info is True:
            exc_info = sys.exc_info()
        if isinstance(exc_info, BaseException):
            exc_info = (type(exc_info), exc_info, exc_info.__traceback__)
        if exc_info[0] is not None:
            # The frames say where; the exception's own message may quote input: it stays out.
            line["error"] = exc_info[0].__name__
            line["traceback"] = "".join(traceback.format_tb(exc_info[2]))
    return line


def _record_fields(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Any:
    record = event.get("_record")
    if record is not None:
        event.setdefault("logger", record.name)
        event["ts"] = round(record.created, 3)
        if record.exc_info:
            event["exc_info"] = record.exc_info
    return event


_PRE_CHAIN: list[Any] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.stdlib.ExtraAdder(),
    _record_fields,
]


def _human(_logger: Any, _method: str, line: MutableMapping[str, Any]) -> str:
    """One allow-listed line as a person reads it: the time, then an access line as
    ``GET /v1/jobs/{job_id} 404 120 B 3 ms``, any other as its level, event and fields."""
    ts = line.get("ts")
    when = time.strftime("%H:%M:%S", time.localtime(ts if isinstance(ts, int | float) else None))
    if line.get("logger") == ACCESS_LOGGER and "route" in line:
        seconds = line.get("seconds")
        text = f"{when} {line.get('method', '')} {line['route']} {line.get('status', '')}"
        if "bytes" in line:
            text += f" {line['bytes']} B"
        if isinstance(seconds, int | float):
            text += f" {seconds * 1000:.0f} ms"
        if line.get("job_id") not in (None, "None"):
            text += f" job {line['job_id']}"
    else:
        level = str(line.get("level", "info"))
        fields = " ".join(
            f"{k}={v}"
            for k, v in line.items()
            if k not in _ALWAYS and k not in _NOT_FOR_A_PERSON and v is not None
        )
        text = f"{when} {level:<7} {line.get('event', '')}" + (f"  {fields}" if fields else "")
    if "error" in line:
        text += f"  error={line['error']}"
        frames = str(line.get("traceback", "")).rstrip("\n")
        if frames:
            text += "\n" + "\n".join("    " + f for f in frames.splitlines())
    return text


def formatter(fmt: Literal["json", "human"] = "json") -> logging.Formatter:
    """The allow-listed fields of a record, as a JSON line or a human one."""
    render: Any = structlog.processors.JSONRenderer(sort_keys=False) if fmt == "json" else _human
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_PRE_CHAIN,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            _allow_list,
            render,
        ],
    )


class _FailedRequestsOnly(logging.Filter):
    """On a terminal, the access log's successful requests are shown at debug level only."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name != ACCESS_LOGGER:
            return True
        status = getattr(record, "status", None)
        if not isinstance(status, int) or status >= 400:
            return True
        return logging.getLogger("pressroom").isEnabledFor(logging.DEBUG)


def log_format(value: str) -> LogFormat:
    """A setting's or flag's value as a format (the settings refuse any other value)."""
    if value not in LOG_FORMATS:
        raise ValueError(f"not a log format: {value!r}")
    return value


def chosen_format(fmt: LogFormat, stream: TextIO) -> Literal["json", "human"]:
    """``auto``: human lines on a terminal, JSON lines anywhere else (a file, a pipe, a
    container's log collector)."""
    if fmt != "auto":
        return fmt
    try:
        return "human" if stream.isatty() else "json"
    except (AttributeError, ValueError):  # a closed or stand-in stream
        return "json"


def configure_logging(
    level: int = logging.INFO, *, fmt: LogFormat = "auto", stream: TextIO | None = None
) -> None:
    """Pressroom's records to ``stream`` (stderr), allow-listed, in the format ``fmt`` asks
    (``auto``: see ``chosen_format``)."""
    stream = stream or sys.stderr
    rendered = chosen_format(fmt, stream)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter(rendered))
    if rendered == "human":
        handler.addFilter(_FailedRequestsOnly())
    root = logging.getLogger("pressroom")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
    structlog.configure(
        processors=[
            *_PRE_CHAIN[:2],
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )


@contextmanager
def bind_job(**fields: Any) -> Iterator[None]:
    """Every line logged in this block carries these fields (job id, tenant, lane, stage)."""
    tokens = structlog.contextvars.bind_contextvars(**fields)
    try:
        yield
    finally:
        structlog.contextvars.reset_contextvars(**tokens)


def bind_stage(stage: str) -> None:
    structlog.contextvars.bind_contextvars(stage=stage)
