"""Wiring: settings in, the store, blob storage and signer the API and workers share."""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pressroom.errors import BadConfig, PressroomError
from pressroom.jobs.admission import Admission
from pressroom.jobs.backoff import RetryPolicy
from pressroom.jobs.migrate import upgrade
from pressroom.jobs.sql import SqlJobStore, make_engine
from pressroom.settings import Settings
from pressroom.signing import Signer
from pressroom.storage import BlobStore
from pressroom.storage.crypto import EncryptedBlobStore, master_keys_from_env
from pressroom.storage.local import LocalBlobStore
from pressroom.verify import RegistryVerifier, Verifier, verifier_from_env

KEY_FILE = "api-key"
ORPHAN_AGE_S = 3600.0
HISTORY_S = 30 * 24 * 3600.0  # job events and stage timings behind metrics and the dashboard
SECRET_FILE = "signing.key"
MIN_SIGNING_KEY = 32


@dataclass
class Services:
    settings: Settings
    store: SqlJobStore
    blobs: BlobStore
    signer: Signer
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    clock: Callable[[], float] = time.time
    admission: Admission = field(default_factory=Admission)
    verifier: Verifier | None = None  # None: the registry of this store

    def verify(self) -> Verifier:
        if self.verifier is None:
            self.verifier = RegistryVerifier(self.store)
        return self.verifier


def _private_file(path: Path, make: Callable[[], bytes]) -> bytes:
    """Read ``path``, creating it 0600 with ``make()`` the first time (race-safe)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes()
    with os.fdopen(fd, "wb") as out:
        data = make()
        out.write(data)
    return data


def open_blob_store(settings: Settings, env: Mapping[str, str] | None = None) -> BlobStore:
    """``s3://bucket/prefix`` → S3 (``AWS_*`` variables); anything else → a local folder;
    wrapped in envelope encryption when a master key is configured."""
    env = os.environ if env is None else env
    url = settings.storage_url
    blobs: BlobStore
    if url.startswith("s3://"):
        from pressroom.storage.s3 import S3BlobStore

        blobs = S3BlobStore.from_url(url, timeout_s=settings.storage_timeout_s)
    else:
        folder = url.removeprefix("file://") if url else str(settings.data_dir / "blobs")
        blobs = LocalBlobStore(Path(folder))
    keys = master_keys_from_env(env)
    if keys is not None:
        blobs = EncryptedBlobStore(blobs, keys[0], keys[1])
    return blobs


def open_services(settings: Settings, *, migrate: bool = True) -> Services:
    settings.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    engine = make_engine(settings.db_url)
    if migrate:
        upgrade(engine)
    store = SqlJobStore(engine)
    blobs = open_blob_store(settings)
    secret = os.environ.get("PRESSROOM_SIGNING_KEY", "").encode() or _private_file(
        settings.data_dir / SECRET_FILE, lambda: secrets.token_hex(32).encode()
    )
    if len(secret.strip()) < MIN_SIGNING_KEY:
        # a short key makes download links guessable offline from one signed URL
        raise BadConfig(
            f"PRESSROOM_SIGNING_KEY must be at least {MIN_SIGNING_KEY} characters "
            "(e.g. `openssl rand -hex 32`)"
        )
    return Services(
        settings=settings,
        store=store,
        blobs=blobs,
        signer=Signer(secret, ttl_s=settings.link_ttl_s),
        retry=RetryPolicy(max_attempts=settings.max_attempts),
        clock=store.clock(),
        admission=Admission.from_env(),
        verifier=verifier_from_env(store),
    )


def housekeeping(services: Services) -> dict[str, int]:
    """Delete expired artifacts, sources kept for dead letters past the retention window,
    orphan sources (a crash between blob and row), and old events and timings."""
    now = services.clock()
    removed = {"artifacts": 0, "orphans": 0, "dead_sources": 0, "expired_reviews": 0}
    for job_id in services.store.expired_reviews(before=now - services.settings.review_retention_s):
        keys = services.store.expire_review(job_id, now=services.clock())
        for key in keys or ():
            if key:
                services.blobs.delete(key)
        removed["expired_reviews"] += keys is not None
    before = now - services.settings.retention_s
    for job_id, key in services.store.expired_rejected_sources(before=before):
        # a dead letter keeps its source for a redrive, but not forever: it holds personal data
        services.blobs.delete(key)
        services.store.delete_source_key(job_id)
        removed["dead_sources"] += 1
    services.store.prune_history(before=now - HISTORY_S)
    for job_id, key in services.store.expired_artifacts(before=now - services.settings.retention_s):
        services.blobs.delete(key)
        services.store.forget_artifact(job_id)
        removed["artifacts"] += 1
    for prefix in ("sources", "review"):
        for key, mtime in list(services.blobs.list(prefix)):
            if now - mtime < ORPHAN_AGE_S:
                continue
            parts = key.split("/")
            job = services.store.get(parts[2]) if len(parts) == 4 else None
            if job is None or key not in (job.source_key, job.artifact_key):
                services.blobs.delete(key)
                removed["orphans"] += 1
    removed["staging"] = sweep_staging(services.blobs, ORPHAN_AGE_S)
    return removed


def sweep_staging(blobs: object, max_age_s: float) -> int:
    """Half-written local copies a crash left (S3 writes are atomic and leave none)."""
    while blobs is not None:
        if isinstance(blobs, LocalBlobStore):
            return blobs.sweep_staging(max_age_s)
        blobs = getattr(blobs, "inner", None)
    return 0


def start_housekeeping(services: Services, every_s: float = 300.0) -> threading.Event:
    """Run ``housekeeping`` in a background thread until the returned event is set."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every_s):
            try:
                housekeeping(services)
            except PressroomError:
                continue

    threading.Thread(target=loop, name="housekeeping", daemon=True).start()
    return stop


def ensure_default_key(services: Services) -> Path | None:
    """On first start, a key for tenant ``default`` written 0600 into the data dir."""
    path = services.settings.data_dir / KEY_FILE
    if services.store.has_keys():
        return path if path.exists() else None
    key = services.store.create_key("default", now=services.clock())
    _private_file(path, lambda: (key + "\n").encode())
    return path
