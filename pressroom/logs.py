"""structlog JSON log lines with an allow-list of fields: job ids, tenants, stages, codes,
counts, bytes, durations — never file names, paths, customer ids or document text, whatever a
caller passes.

Pressroom's modules log through the standard library (``log.info("job complete",
extra={...})``); structlog's ``ProcessorFormatter`` renders those records, and the job context
a worker binds (``bind_job``: job id, tenant, lane, stage) is merged into every line logged
while the job runs. The allow-list is the last step before rendering, so an unexpected field
never reaches the output; an exception keeps its class and frames, never its message (which
may quote the input).
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

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
        # the access log (api.timing): the route's template, never the path a client sent
        "method",
        "route",
        "status",
    }
)
_ALWAYS = ("ts", "level", "logger", "event")


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


def formatter() -> logging.Formatter:
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_PRE_CHAIN,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            _allow_list,
            structlog.processors.JSONRenderer(sort_keys=False),
        ],
    )


def configure_logging(level: int = logging.INFO) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter())
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
