"""How many threads a redaction's first pass reads pages with (issue 46, item 3): the
service's setting, and the offline `-j N` share of a run of fewer redactions than processes."""

from __future__ import annotations

from pressroom.cli.process import threads_shared
from pressroom.orders import JobOrder
from pressroom.pipeline.core import JobOptions
from pressroom.settings import Settings
from pressroom.templates import resolve_template


def options(settings: Settings) -> JobOptions:
    template = resolve_template("plain")
    return JobOptions.of(JobOrder(template=template.name), template, settings)


def test_the_service_reads_with_one_thread_unless_told() -> None:
    assert options(Settings.from_env({})).page_threads == 1
    told = Settings.from_env({"PRESSROOM_REDACT_THREADS": "3"})
    assert options(told).page_threads == 3


def test_fewer_redactions_than_processes_share_the_processes() -> None:
    settings = Settings.from_env({})
    assert threads_shared(settings, 4, 1).redaction.page_threads == 4
    assert threads_shared(settings, 4, 2).redaction.page_threads == 2
    assert threads_shared(settings, 4, 3).redaction.page_threads == 1
    assert threads_shared(settings, 2, 5) is settings  # every process has a document
    assert threads_shared(settings, 1, 1) is settings  # -j 1
    told = Settings.from_env({"PRESSROOM_REDACT_THREADS": "3"})
    assert threads_shared(told, 4, 2).redaction.page_threads == 3  # never fewer than told
