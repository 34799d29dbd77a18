"""Log lines carry ids and codes only: an unexpected field never reaches the output."""

from __future__ import annotations

import json
import logging

from pressroom.logs import bind_job, formatter


def test_only_allowed_fields_and_no_exception_message() -> None:
    fmt = formatter()
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
    line = json.loads(fmt.format(record))
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
    line = json.loads(fmt.format(record))
    assert line["error"] == "ValueError" and "test_logs.py" in line["traceback"]
    assert "Jane" not in json.dumps(line) and "12345678" not in json.dumps(line)

    assert line["level"] == "error" and line["event"] == "internal error"


def test_job_context_is_on_every_line_logged_while_the_job_runs() -> None:
    fmt = formatter()

    def emit() -> dict[str, object]:
        record = logging.makeLogRecord(
            {"name": "pressroom.pipeline", "levelname": "INFO", "msg": "page read"}
        )
        result: dict[str, object] = json.loads(fmt.format(record))
        return result

    with bind_job(job_id="j-9", tenant="acme", lane="bulk", stage=None):
        from pressroom.logs import bind_stage

        bind_stage("ocr")
        inside = emit()
    outside = emit()
    assert (inside["job_id"], inside["tenant"], inside["stage"]) == ("j-9", "acme", "ocr")
    assert "job_id" not in outside and "stage" not in outside
