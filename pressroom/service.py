"""Wiring: settings in, the store, blob storage and signer the API and workers share."""

from __future__ import annotations

import functools
import os
import secrets
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pressroom.errors import BadConfig, MasterKeyMissing
from pressroom.housekeeping import housekeeping
from pressroom.jobs.admission import Admission
from pressroom.jobs.backoff import RetryPolicy
from pressroom.jobs.migrate import upgrade
from pressroom.jobs.sql import SqlJobStore
from pressroom.jobs.transport import make_engine
from pressroom.kek import Keyring
from pressroom.labels import Labels
from pressroom.scanning import Scanner
from pressroom.settings import ScannerSettings, Settings
from pressroom.signing import Signer
from pressroom.storage import BlobStore
from pressroom.storage.crypto import EncryptedBlobStore, master_keys
from pressroom.storage.kms import keyring_from_settings
from pressroom.storage.local import LocalBlobStore
from pressroom.verify import Verifier, verifier_from_settings

KEY_FILE = "api-key"
SECRET_FILE = "signing.key"
MIN_SIGNING_KEY = 32


@dataclass
class Services:
    settings: Settings
    store: SqlJobStore
    blobs: BlobStore
    signer: Signer
    verifier: Verifier  # customer verification: the tenant's registry, or an identity service
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    clock: Callable[[], float] = time.time
    admission: Admission = field(default_factory=Admission)
    labels: Labels = field(default_factory=Labels)  # jobs' labels: sealed, opened, digested
    # every source passes it before it is read (the worker's scan stage); None: no scanner
    scanner: Scanner | None = None


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


def open_blob_store(settings: Settings, keyring: Keyring | None = None) -> BlobStore:
    """``s3://bucket/prefix`` → S3 (``AWS_*`` variables); anything else → a local folder;
    wrapped in envelope encryption when a KMS key or a master key is configured (``keyring``:
    the one ``open_services`` shares with the sealed columns; None: made from the settings)."""
    url = settings.storage_url
    blobs: BlobStore
    if url.startswith("s3://"):
        from pressroom.storage.s3 import S3BlobStore

        blobs = S3BlobStore.from_url(
            url, timeout_s=settings.storage_timeout_s, storage=settings.storage
        )
    else:
        folder = url.removeprefix("file://") if url else str(settings.data_dir / "blobs")
        blobs = LocalBlobStore(Path(folder))
    ring = keyring or keyring_from_settings(settings.storage)
    if ring is not None:
        blobs = EncryptedBlobStore(blobs, keyring=ring)
    return blobs


def open_services(settings: Settings, *, migrate: bool = True) -> Services:
    settings.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    tighten_data_dir(settings.data_dir)
    engine = make_engine(settings.db_url)
    if migrate:
        upgrade(engine)
    store = SqlJobStore(engine)
    keyring = keyring_from_settings(settings.storage)
    blobs = open_blob_store(settings, keyring)
    keys = master_keys(settings.storage)
    secret = settings.signing_key.encode() or _private_file(
        settings.data_dir / SECRET_FILE, lambda: secrets.token_hex(32).encode()
    )
    if len(secret.strip()) < MIN_SIGNING_KEY:
        # a short key makes download links guessable offline from one signed URL
        raise BadConfig(
            f"PRESSROOM_SIGNING_KEY must be at least {MIN_SIGNING_KEY} characters "
            "(e.g. `openssl rand -hex 32`)"
        )
    kms = keyring if keyring is not None and keyring.current.kind == "kms" else None
    labels = Labels(secret, keys[0] if keys else None, tuple(keys[1]) if keys else (), kms=kms)
    if labels.sealing:
        store.outbox.seal_secret, store.outbox.open_secret = secret_box(labels)
    return Services(
        settings=settings,
        store=store,
        blobs=blobs,
        signer=Signer(secret, ttl_s=settings.link_ttl_s),
        retry=RetryPolicy(max_attempts=settings.max_attempts),
        clock=store.db.clock(),
        admission=Admission.from_settings(settings.admission),
        verifier=verifier_from_settings(store.tenancy, settings.verifier),
        labels=labels,
        scanner=open_scanner(settings.scanner),
    )


def open_scanner(settings: ScannerSettings, *, asked: bool = False) -> Scanner | None:
    """The malware scanner ``PRESSROOM_SCANNER`` names (None: none); ``asked``: a command's
    ``--scan``, which means clamd at its configured address whatever the setting says."""
    if settings.kind == "none" and not asked:
        return None
    from pressroom.engines.clamd import ClamdScanner

    return ClamdScanner(settings.clamd_address, timeout_s=settings.timeout_s)


PLAIN_SECRET = "whsec_"  # a secret kept as is starts so; a sealed one never does


def secret_box(
    labels: Labels,
) -> tuple[Callable[[str, str], str], Callable[[str, str], str]]:
    """How the outbox keeps webhook secrets with encryption on: sealed with the master key
    (with a KMS key: under a column data key the KMS generated), bound to the tenant; one kept
    as is (from before encryption) still reads. A sealed one that no key opens fails closed
    (MasterKeyMissing, retried; a KMS that does not answer: KmsUnavailable): never a guess."""

    def seal(tenant: str, secret: str) -> str:
        sealed = labels.seal(tenant, secret, purpose="webhook-secret")
        assert sealed is not None
        return sealed

    def open_(tenant: str, stored: str) -> str:
        if stored.startswith(PLAIN_SECRET):
            return stored
        opened = labels.open(tenant, stored, purpose="webhook-secret")
        if opened is None:
            raise MasterKeyMissing("a webhook secret is sealed with a master key not configured")
        return opened

    return seal, open_


def tighten_data_dir(data_dir: Path) -> None:
    """One mode rule however the data dir came to be (a volume, ``mkdir``, a command run
    under another umask): the folder and every folder in it 0700, every file 0600 — the
    database and its ``-wal``/``-shm`` included. Only what this user owns is touched, two
    levels deep (below that, every folder is made 0700 under the umask every command sets;
    blobs are many, and every worker opens the data dir)."""
    uid = os.geteuid()
    top = [p for p in data_dir.iterdir()] if data_dir.is_dir() else []
    below = [c for p in top if p.is_dir() and not p.is_symlink() for c in p.iterdir()]
    for path in (data_dir, *top, *below):
        try:
            info = path.lstat()
        except OSError:
            continue  # removed meanwhile
        if info.st_uid != uid or stat.S_ISLNK(info.st_mode):
            continue
        want = 0o700 if stat.S_ISDIR(info.st_mode) else 0o600
        if stat.S_IMODE(info.st_mode) & 0o077:
            path.chmod(stat.S_IMODE(info.st_mode) & want)


def housekeeper(services: Services) -> Callable[[], dict[str, int]]:
    """``housekeeping`` bound to this service's store, blobs, clock and retention windows."""
    return functools.partial(
        housekeeping,
        services.store.retention,
        services.blobs,
        clock=services.clock,
        retention_s=services.settings.retention_s,
        review_retention_s=services.settings.review_retention_s,
        prune_sessions=services.store.tenancy.prune_sessions,
    )


def ensure_default_key(services: Services) -> Path | None:
    """On first start, a key for tenant ``default`` written 0600 into the data dir."""
    path = services.settings.data_dir / KEY_FILE
    if services.store.tenancy.has_keys():
        return path if path.exists() else None
    key = services.store.tenancy.create_key("default", now=services.clock())
    _private_file(path, lambda: (key + "\n").encode())
    return path
