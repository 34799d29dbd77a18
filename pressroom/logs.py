"""JSON log lines with an allow-list of fields: job ids, codes, counts, durations — never file
names, paths or document text, whatever a caller passes in ``extra``."""

from __future__ import annotations

import json
import logging
import sys
import time
import traceback

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
    }
)
_RESERVED = frozenset(vars(logging.makeLogRecord({})))


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key in _RESERVED or key not in ALLOWED:
                continue
            line[key] = value if isinstance(value, int | float | bool | None) else str(value)
        if record.exc_info and record.exc_info[0] is not None:
            # The frames say where; the exception's own message may quote input, so it stays out.
            line["error"] = record.exc_info[0].__name__
            line["traceback"] = "".join(traceback.format_tb(record.exc_info[2]))
        return json.dumps(line)


def configure_logging(level: int = logging.INFO) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger("pressroom")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
    logging.Formatter.converter = time.gmtime
