"""The human rendering of log lines keeps to the same allow-list as JSON, and ``auto`` picks it
only on a terminal (a pty here), JSON on a pipe or a file."""

from __future__ import annotations

import io
import json
import logging
import os
import pty
import sys

from pressroom.logs import ACCESS_LOGGER, chosen_format, configure_logging, formatter


def _record(name: str, msg: str, **fields: object) -> logging.LogRecord:
    return logging.makeLogRecord(
        {"name": name, "levelno": logging.INFO, "levelname": "INFO", "msg": msg, **fields}
    )


def test_a_human_line_has_the_allowed_fields_only_and_never_an_exception_message() -> None:
    human = formatter("human")
    line = human.format(
        _record(
            "pressroom.worker",
            "job complete",
            job_id="j-1",
            pages=3,
            trace_id="abc",
            path="/home/jane/Jane Doe payslip.pdf",
        )
    )
    assert line.endswith(" info    job complete  job_id=j-1 pages=3"), line
    document_text = "cannot parse " + "Jane" + " Doe's account"  # not in the frames' source
    try:
        raise ValueError(document_text)
    except ValueError:
        failed = _record(
            "pressroom.worker", "internal error", job_id="j-2", exc_info=sys.exc_info()
        )
    text = human.format(failed)
    assert "error=ValueError" in text and "test_papercuts_logformat.py" in text
    assert "Jane" not in text


def test_an_access_line_names_the_route_template_status_size_and_time() -> None:
    record = _record(
        ACCESS_LOGGER,
        "request",
        method="GET",
        route="/v1/jobs/{job_id}",
        status=404,
        bytes=120,
        seconds=0.0031,
        job_id=None,
        query="name=Jane",
    )
    assert formatter("human").format(record)[8:] == " GET /v1/jobs/{job_id} 404 120 B 3 ms"
    as_json = json.loads(formatter("json").format(record))
    assert as_json["route"] == "/v1/jobs/{job_id}" and "query" not in as_json


def test_auto_is_human_on_a_terminal_and_json_elsewhere() -> None:
    leader, follower = pty.openpty()
    try:
        with open(follower, "w", closefd=False) as terminal:
            assert chosen_format("auto", terminal) == "human"
            assert chosen_format("json", terminal) == "json"
    finally:
        os.close(leader)
        os.close(follower)
    assert chosen_format("auto", io.StringIO()) == "json"
    assert chosen_format("human", io.StringIO()) == "human"


def test_human_lines_leave_successful_requests_to_debug_level() -> None:
    out = io.StringIO()
    access = logging.getLogger(ACCESS_LOGGER)
    try:
        for level in (logging.INFO, logging.DEBUG):
            configure_logging(level, fmt="human", stream=out)
            for status in (200, 503):
                access.info(
                    "request", extra={"method": "GET", "route": "/healthz", "status": status}
                )
        lines = out.getvalue().splitlines()
        assert [line[9:] for line in lines] == [
            "GET /healthz 503",
            "GET /healthz 200",
            "GET /healthz 503",
        ]
    finally:
        configure_logging()
