"""Blob storage port: sources and artifacts by key, the same layout on disk and on S3. Every
key Pressroom writes is built here, and read back here (``parse_key``): nobody splits a key by
position."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from pressroom.tenants import TENANT_RE as TENANT_RE

_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*$")


def check_key(key: str) -> str:
    """Keys are built by Pressroom from ids and hashes; anything else is a bug, refused here."""
    if not _KEY.match(key) or ".." in key.split("/"):
        raise ValueError("invalid blob key")
    return key


def source_key(tenant: str, job_id: str) -> str:
    return check_key(f"sources/{tenant}/{job_id}/source")


def review_key(tenant: str, job_id: str, digest: str) -> str:
    """Held outputs, for reviewers only: never behind a download link."""
    return check_key(f"review/{tenant}/{job_id}/{digest}.pdf")


def artifact_key(tenant: str, job_id: str, digest: str) -> str:
    return check_key(f"artifacts/{tenant}/{job_id}/{digest}.pdf")


def sidecar_key(artifact: str) -> str:
    """Where an output's sidecar text is stored: beside it, under the same digest (deleted
    with it: ``delete_output`` takes the job's whole folder)."""
    if not artifact.endswith(".pdf"):
        raise ValueError("an artifact's key ends in .pdf")
    return check_key(artifact[: -len(".pdf")] + ".txt")


def versioned_artifact_key(tenant: str, job_id: str, digest: str, version: int) -> str:
    """The ``version``-th different output (2, 3, …) made under one artifact digest: a retry
    whose bytes differ from the stored copy's goes here, so no stored output is overwritten."""
    if version < 2:
        raise ValueError("the first output is artifact_key's")
    return check_key(f"artifacts/{tenant}/{job_id}/{digest}.v{version}.pdf")


def parts_prefix(tenant: str, job_id: str) -> str:
    """Where a split job's page-range parts are stored (a folder of keys, deleted with the
    tasks)."""
    return check_key(f"scratch/{tenant}/{job_id}/parts")


def part_key(tenant: str, job_id: str, number: int) -> str:
    return check_key(f"{parts_prefix(tenant, job_id)}/{number:04d}.pdf")


def pages_key(tenant: str, job_id: str, number: int) -> str:
    """The part's page record (layout and what the output check must find), beside it."""
    return record_key(part_key(tenant, job_id, number))


def record_key(part: str) -> str:
    """The page record stored beside the part at ``part``."""
    return check_key(part.removesuffix(".pdf") + ".json")


@dataclass(frozen=True)
class BlobKey:
    """A key read back into what it names: its area (``sources``, ``review``, ``artifacts``,
    ``scratch``), the tenant, the job, and the rest of the path."""

    area: str
    tenant: str
    job_id: str
    rest: str


def parse_key(key: str) -> BlobKey | None:
    """What ``key`` names, or None for a key of no job's layout: ``sources/T/J/source``,
    ``review/T/J/D.pdf``, ``artifacts/T/J/D[.vN].pdf|.txt`` and ``scratch/T/J/parts/N.pdf|.json``
    — exactly the shapes the builders above write."""
    parts = key.split("/")
    shapes = {"sources": 4, "review": 4, "artifacts": 4, "scratch": 5}
    if not parts or shapes.get(parts[0]) != len(parts):
        return None
    return BlobKey(parts[0], parts[1], parts[2], "/".join(parts[3:]))


def named_digest(key: str) -> str:
    """The digest an output's key is named by (``review_key``: the held copy's SHA-256;
    ``artifact_key``: the inputs' digest), read back by ``parse_key``."""
    named = parse_key(key)
    if named is None or named.area not in ("review", "artifacts") or "/" in named.rest:
        raise ValueError("not an output's key")
    return named.rest.removesuffix(".pdf")


def stored_sha256(blobs: BlobStore, key: str) -> str:
    """The SHA-256 of the blob stored at ``key``, read a megabyte at a time."""
    digest = hashlib.sha256()
    with blobs.open(key) as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def is_artifact_key(key: str) -> bool:
    """An output stored where a complete job's link may point (not a reviewer-only copy)."""
    return key.startswith("artifacts/")


def delete_output(blobs: BlobStore, key: str) -> None:
    """Delete ``key``; for an artifact, every other output stored for its job as well (an
    earlier attempt's copy kept beside an ``OUTPUT_CHANGED`` version), so none outlives the
    job's own; for a page-range part, its page record beside it."""
    blobs.delete(key)
    named = parse_key(key)
    if named is not None and named.area == "scratch" and key.endswith(".pdf"):
        blobs.delete(record_key(key))
    if is_artifact_key(key):
        for other, _ in list(blobs.list(key.rsplit("/", 1)[0])):
            blobs.delete(other)


class BlobStore(Protocol):
    def put_file(self, key: str, path: Path) -> None:
        """Store ``path`` under ``key``, replacing what was there."""

    def put_if_absent(self, key: str, path: Path) -> bool:
        """Store ``path`` under ``key`` unless the key exists; True when this call wrote it."""

    def get_to_path(self, key: str, dest: Path) -> None: ...

    def open(self, key: str) -> BinaryIO: ...

    def size(self, key: str) -> int: ...

    def exists(self, key: str) -> bool: ...

    def reachable(self) -> None:
        """Return when the store answers and can be written; raise ``StorageUnavailable``
        otherwise (``/readyz``). Cheap: one request or one ``stat``."""

    def delete(self, key: str) -> None: ...

    def list(self, prefix: str) -> Iterator[tuple[str, float]]:
        """Keys under ``prefix`` with their modification time (epoch seconds)."""

    def download_url(
        self, key: str, ttl_s: float, filename: str, media_type: str = "application/pdf"
    ) -> str | None:
        """A URL clients can fetch ``key`` from directly for ``ttl_s`` seconds, or None when
        the API must stream it (local disk, encrypted blobs, a private endpoint)."""
