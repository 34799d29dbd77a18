"""Log lines carry ids and codes only: an unexpected field never reaches the output."""

from __future__ import annotations

import json
import logging

from pressroom.logs import JsonFormatter


def test_only_allowed_fields_and_no_exception_message() -> None:
    formatter = JsonFormatter()
    record = logging.makeLogRecord(
        {
            "name": "pressroom.worker",
            "levelno": logging.INFO,
            "levelname": "INFO",
            "msg": "job complete",
            "job_id": "j-1",
            "pages": 3,
            "filename_hint": "Jane Doe payout.pdf",
            "path": "/home/jane/scan.pdf",
        }
    )
    line = json.loads(formatter.format(record))
    assert line["job_id"] == "j-1" and line["pages"] == 3
    assert "Jane" not in json.dumps(line)
    document_text = "cannot parse " + "Jane Doe's account " + "1234" + "5678"
    try:
        raise ValueError(document_text)
    except ValueError:
        import sys

        record = logging.makeLogRecord(
            {
                "name": "pressroom.worker",
                "levelname": "ERROR",
                "msg": "internal error",
                "job_id": "j-2",
                "exc_info": sys.exc_info(),
            }
        )
    line = json.loads(formatter.format(record))
    assert line["error"] == "ValueError" and "test_logs.py" in line["traceback"]
    assert "Jane" not in json.dumps(line) and "12345678" not in json.dumps(line)
