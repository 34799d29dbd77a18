"""The one schema, for SQLite and PostgreSQL alike (Alembic migrations mirror it)."""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)

metadata = MetaData()

jobs = Table(
    "jobs",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("tenant", String(64), nullable=False),
    Column("lane", String(16), nullable=False),
    Column("state", String(16), nullable=False),
    Column("stage", String(16)),
    Column("attempts", Integer, nullable=False),
    Column("max_attempts", Integer, nullable=False),
    Column("reason", String(32)),
    Column("message", Text),
    Column("source_key", String(255)),
    Column("source_sha256", String(64), nullable=False),
    Column("source_bytes", Integer, nullable=False),
    Column("kind", String(32), nullable=False),
    Column("template", String(255), nullable=False),
    Column("title", Text),
    Column("options", JSON, nullable=False),
    Column("idempotency_key", String(255)),
    Column("request_hash", String(64)),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("next_eligible_at", Float, nullable=False),
    Column("started_at", Float),
    Column("finished_at", Float),
    Column("lease_owner", String(64)),
    Column("lease_expires_at", Float),
    Column("artifact_key", String(255)),
    Column("artifact_sha256", String(64)),
    Column("pages", Integer),
    Column("deadline_at", Float),
    Column("trace_id", String(32)),
    Column("customer", String(128)),
    Column("verification", String(16)),  # allowed | denied: the decision, never the evidence
    Column("pages_estimate", Integer),
    Column("parent_span_id", String(16)),
    Column("cancel_requested_at", Float),  # a running job stops at its next stage boundary
    # a held redaction's pages and findings (boxes and classes only): the reviewer's desk
    Column("review_sheet", JSON(none_as_null=True)),
    # the work units admission and fair claiming charge: pages, plus a redaction's text size
    Column("cost", Integer),
    # what became of the document: {"text_layer", "flattened", "notes"}; counts, never text
    Column("result", JSON(none_as_null=True)),
    # the client's label, ``p:`` + text or sealed (``labels``), and its keyed digest
    Column("label", Text),
    Column("label_digest", String(64)),
    # how far the running attempt got: steps done of steps in all, as the pipeline reports
    # them page by page (a reviewer's desk shows a rebuild's); none while it waits
    Column("progress_done", Integer),
    Column("progress_total", Integer),
    UniqueConstraint("tenant", "idempotency_key", name="uq_jobs_tenant_idempotency"),
    UniqueConstraint("artifact_key", name="uq_jobs_artifact_key"),
)
Index("ix_jobs_claim", jobs.c.lane, jobs.c.state, jobs.c.next_eligible_at)
Index("ix_jobs_tenant_created", jobs.c.tenant, jobs.c.created_at)
Index("ix_jobs_lease", jobs.c.state, jobs.c.lease_expires_at)
Index("ix_jobs_tenant_state", jobs.c.tenant, jobs.c.state)
Index("ix_jobs_tenant_label", jobs.c.tenant, jobs.c.label_digest)
# each tenant's waiting jobs in claim order: a fair claim probes one tenant's oldest
_WAITING_ROWS = text("state IN ('accepted', 'retrying')")
Index(
    "ix_jobs_fair",
    jobs.c.lane,
    jobs.c.tenant,
    jobs.c.next_eligible_at,
    jobs.c.created_at,
    jobs.c.id,
    postgresql_where=_WAITING_ROWS,
    sqlite_where=_WAITING_ROWS,
)

# Weighted fair claiming (``jobs.claims``): per lane, each tenant's virtual time (the work it
# was given there, each unit divided by its weight) and the lane's clock; per tenant, a weight.
fair_shares = Table(
    "fair_shares",
    metadata,
    Column("lane", String(16), primary_key=True),
    Column("tenant", String(64), primary_key=True),
    Column("vtime", Float, nullable=False),
)

lane_clocks = Table(
    "lane_clocks",
    metadata,
    Column("lane", String(16), primary_key=True),
    Column("clock", Float, nullable=False),
)

tenant_weights = Table(
    "tenant_weights",
    metadata,
    Column("tenant", String(64), primary_key=True),
    Column("weight", Integer, nullable=False),
    Column("updated_at", Float, nullable=False),
)

stage_timings = Table(
    "job_stage_timings",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("job_id", String(36), ForeignKey("jobs.id", ondelete="CASCADE"), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("stage", String(16), nullable=False),
    Column("seconds", Float, nullable=False),
    Column("recorded_at", Float, nullable=False),
)
Index("ix_stage_timings_job", stage_timings.c.job_id)

# A big document's page ranges (``jobs.tasks``): never jobs themselves; gone with their job.
tasks = Table(
    "tasks",
    metadata,
    Column("job_id", String(36), ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True),
    Column("number", Integer, primary_key=True),  # 0, 1, … in page order
    Column("first_page", Integer, nullable=False),  # 0-based, inclusive
    Column("end_page", Integer, nullable=False),  # exclusive
    Column("state", String(16), nullable=False),  # waiting | running | done
    Column("attempts", Integer, nullable=False),
    Column("reason", String(32)),
    Column("next_eligible_at", Float, nullable=False),
    Column("lease_owner", String(64)),
    Column("lease_expires_at", Float),
    Column("part_key", String(255)),
    Column("updated_at", Float, nullable=False),
)
Index("ix_tasks_claim", tasks.c.state, tasks.c.next_eligible_at)

# every review decision: who (the key's id, never the key), when, what changed
review_decisions = Table(
    "review_decisions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("job_id", String(36), ForeignKey("jobs.id", ondelete="CASCADE"), nullable=False),
    Column("tenant", String(64), nullable=False),
    Column("key_id", String(16), nullable=False),
    Column("action", String(16), nullable=False),
    Column("at", Float, nullable=False),
    Column("detail", JSON, nullable=False),
)
Index("ix_review_decisions_job", review_decisions.c.job_id)

api_keys = Table(
    "api_keys",
    metadata,
    Column("key_hash", String(64), primary_key=True),
    Column("tenant", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("revoked_at", Float),
    # tenant | operator | reviewer
    Column("role", String(16), nullable=False, server_default="tenant"),
    Column("id", String(16)),  # shown and used to revoke; never the secret
    Column("expires_at", Float),
    Column("last_used_at", Float),
)
Index("ix_api_keys_id", api_keys.c.id, unique=True)

# A desk session: its id travels in the signed cookie, and only a row here that has not ended
# makes it good (sign-out ends every copy of the cookie at once).
desk_sessions = Table(
    "desk_sessions",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("key_id", String(16), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False),
    Column("ended_at", Float),
)
Index("ix_desk_sessions_expires", desk_sessions.c.expires_at)

# Brands a tenant may use; a tenant with no rows may use every registered template.
template_allow = Table(
    "template_allow",
    metadata,
    Column("tenant", String(64), primary_key=True),
    Column("template", String(64), primary_key=True),
    Column("created_at", Float, nullable=False),
)

customers = Table(
    "customers",
    metadata,
    Column("tenant", String(64), primary_key=True),
    Column("customer", String(128), primary_key=True),
    Column("status", String(16), nullable=False),  # active | suspended
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
)

# What metrics count over time: a retry (reason), a dead letter (reason), a deadline miss,
# an admission refusal (reason). Rows, so every process's events add up in one place.
job_events = Table(
    "job_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("job_id", String(36)),
    Column("tenant", String(64), nullable=False),
    Column("lane", String(16), nullable=False),
    Column(
        "kind", String(24), nullable=False
    ),  # retry | dead_letter | deadline_miss | refused | attempt | cancelled | scan | pool
    Column("reason", String(32), nullable=False),
    Column("at", Float, nullable=False),
)
Index("ix_job_events_kind_at", job_events.c.kind, job_events.c.at)

# Running totals behind the Prometheus counters, one row per (kind, lane, reason): events pruned
# are added here in the prune's own transaction; a total is this row plus the events kept.
counters = Table(
    "counters",
    metadata,
    Column("kind", String(24), primary_key=True),
    Column("lane", String(16), primary_key=True),
    Column("reason", String(32), primary_key=True),
    Column("value", BigInteger, nullable=False),
)

# Live worker processes (a row refreshed while they run): admission divides by their number.
workers = Table(
    "workers",
    metadata,
    Column("owner", String(64), primary_key=True),
    Column("lanes", String(64), nullable=False),
    Column("seen_at", Float, nullable=False),
    Column("languages", String(255)),  # its installed OCR languages, '+'-joined (0013)
)

webhook_deliveries = Table(
    "webhook_deliveries",
    metadata,
    Column("id", String(36), primary_key=True),  # also the webhook-id header: stable per event
    Column("job_id", String(36), ForeignKey("jobs.id", ondelete="CASCADE"), nullable=False),
    Column("tenant", String(64), nullable=False),
    Column("url", Text, nullable=False),
    Column("event", String(32), nullable=False),
    Column("payload", JSON, nullable=False),
    Column("state", String(16), nullable=False),  # pending | delivered | failed
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_at", Float, nullable=False),
    Column("last_error", String(64)),
    Column("created_at", Float, nullable=False),
    Column("delivered_at", Float),
    Column("lease_owner", String(64)),
    Column("lease_expires_at", Float),
)
Index("ix_webhook_due", webhook_deliveries.c.state, webhook_deliveries.c.next_attempt_at)

webhook_secrets = Table(
    "webhook_secrets",
    metadata,
    Column("tenant", String(64), primary_key=True),
    Column("secret", Text, nullable=False),
    Column("created_at", Float, nullable=False),
    # after a rotation the old secret still signs (a second signature) until previous_until
    Column("previous_secret", Text),
    Column("previous_until", Float),
)
