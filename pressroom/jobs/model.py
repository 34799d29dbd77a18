"""Job values as the store hands them out; states and lanes are closed sets."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from pressroom.orders import JobOrder


class JobState(enum.StrEnum):
    ACCEPTED = "accepted"
    RUNNING = "running"
    RETRYING = "retrying"
    COMPLETE = "complete"
    REJECTED = "rejected"
    REVIEW = "review"

    @property
    def terminal(self) -> bool:
        return self in (JobState.COMPLETE, JobState.REJECTED, JobState.REVIEW)


class Lane(enum.StrEnum):
    BULK = "bulk"
    INTERACTIVE = "interactive"


@dataclass(frozen=True, slots=True)
class NewJob:
    """What the API knows when it accepts an upload. No file name, ever."""

    id: str
    tenant: str
    lane: Lane
    source_key: str
    source_sha256: str
    source_bytes: int
    kind: str
    template: str
    title: str | None = None
    # what the client asked for (``orders.JobOrder``; its template is ``template``); None:
    # nothing beyond the template
    order: JobOrder | None = None
    idempotency_key: str | None = None
    request_hash: str | None = None
    deadline_s: float | None = None
    trace_id: str | None = None
    parent_span_id: str | None = None
    customer: str | None = None
    pages_estimate: int | None = None
    cost: int | None = None  # work units charged: pages, plus a redaction's text size
    label: str | None = None  # as stored: ``labels.Labels.seal``'s value, never opened here
    label_digest: str | None = None

    def __post_init__(self) -> None:
        if self.order is not None and self.order.template != self.template:
            raise ValueError("the order names another template than the job")

    def stored_order(self) -> dict[str, Any]:
        """The order as its row stores it."""
        return (self.order or JobOrder(template=self.template)).to_json()


@dataclass(frozen=True, slots=True)
class Job:
    id: str
    tenant: str
    lane: Lane
    state: JobState
    stage: str | None
    attempts: int
    max_attempts: int
    reason: str | None
    message: str | None
    source_key: str | None
    source_sha256: str
    source_bytes: int
    kind: str
    template: str
    title: str | None
    # what the client asked for, read from the row's JSON once (``jobs.rows``); a stored order
    # this version cannot read carries its refusal (``JobOrder.check``)
    order: JobOrder
    idempotency_key: str | None
    request_hash: str | None
    created_at: float
    updated_at: float
    next_eligible_at: float
    started_at: float | None
    finished_at: float | None
    lease_owner: str | None
    lease_expires_at: float | None
    artifact_key: str | None
    artifact_sha256: str | None
    pages: int | None
    deadline_at: float | None
    trace_id: str | None
    customer: str | None = None
    verification: str | None = None
    pages_estimate: int | None = None
    parent_span_id: str | None = None
    cost: int | None = None
    # a held redaction's ``corrections.ReviewSheet`` as stored (boxes and classes, no text)
    review_sheet: dict[str, Any] | None = None
    # what became of the document (``text_layer``, ``flattened``, ``notes``): counts only
    result: dict[str, Any] | None = None
    label: str | None = None  # as stored (sealed or ``p:``): ``Services.labels.open`` reads it
    # how far the running attempt got: (steps done, steps in all) as the pipeline reports them
    # (a redaction: every page read, then every page built); None while it waits
    progress: tuple[int, int] | None = None
    timings: dict[str, float] = field(default_factory=dict)
    decisions: tuple[ReviewDecision, ...] = ()


@dataclass(frozen=True, slots=True)
class ReviewDecision:
    """A reviewer's decision on a held job: ``approve``, ``reject`` or ``apply`` (corrections
    sent back through the redaction), when, by which key id."""

    action: str
    at: float
    key_id: str
    role: str | None = None  # the deciding key's: tenant, reviewer or operator


@dataclass(frozen=True, slots=True)
class Task:
    """One page range of a split job (``jobs.tasks``): pages ``first_page`` to ``end_page``
    (exclusive, 0-based), tried ``attempts`` times so far, this claim included."""

    job_id: str
    number: int
    first_page: int
    end_page: int
    attempts: int


# the stage of a job whose page-range tasks are out, and the states of a task
SPLIT = "split"
TASK_WAITING, TASK_RUNNING, TASK_DONE = "waiting", "running", "done"

# states of a job that is not finished: waiting its turn, or waiting and running
WAITING = (JobState.ACCEPTED.value, JobState.RETRYING.value)
UNFINISHED = (*WAITING, JobState.RUNNING.value)


@dataclass(frozen=True, slots=True)
class Cancellation:
    """What a tenant's cancel did: ``cancelled`` (ended now, or before), ``requested`` (a
    running job stops at its next stage boundary), ``repeated`` (asked before, still
    stopping) or ``finished`` (too late: it ended otherwise). ``freed``: blobs the job no
    longer holds, for the caller to delete."""

    outcome: str
    job: Job
    freed: tuple[str, ...] = ()


CANCELLED = "CANCELLED"
