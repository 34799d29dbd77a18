"""``pressroom keys rewrap``: every data key moved under the current key-encryption key, nothing
re-encrypted.

Blobs (format 2): the key block is rewritten and the sealed body copied byte for byte
(``storage.crypto.rewrap_blob``). Sealed columns (``s2:``): the wrapped data key inline in each
value is replaced, its sealed text kept; rows sharing a column key cost one unwrap and one wrap
between them (the keyring's cache). What cannot be re-wrapped is said, not hidden: a format 1
blob (its header, wrapped key included, is bound into every segment) is left as it is —
readable with its master key until retention removes it; an ``s1:`` value (sealed with the
master key itself, no data key) is re-sealed ``s2:`` when a KMS is on (a few bytes, re-encrypted).

Idempotent: what is already under the current KEK is counted and skipped, so a run stopped
half-way is simply run again. A KMS that does not answer stops the run with its code (what
was done stays done); an item whose key is refused or that no key opens is counted and left.
"""

from __future__ import annotations

import functools
import struct
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from pressroom.errors import BlobNotFound, EncryptionError, KmsKeyRefused, MasterKeyMissing
from pressroom.jobs.sealed import SealedValue, SqlSealedColumns
from pressroom.labels import Labels
from pressroom.service import Services
from pressroom.storage.crypto import EncryptedBlobStore, rewrap_blob

AREAS = ("sources", "review", "artifacts", "scratch")


def rewrap_blobs(
    blobs: EncryptedBlobStore, scratch: Path, progress: Callable[[str, int], None]
) -> Counter[str]:
    """Every blob of every area re-wrapped: counts by outcome (``rewrapped``, ``current``,
    ``format1``, ``plain``, ``gone``, ``refused``, ``unreadable``). A blob deleted or rewritten
    while it was copied is ``gone``, never brought back (the write is conditional)."""
    counts: Counter[str] = Counter()
    for area in AREAS:
        for key, _ in list(blobs.inner.list(area)):
            step = functools.partial(rewrap_blob, blobs.inner, key, blobs.keyring, scratch)
            counts[_outcome(step)] += 1
            progress("blobs", sum(counts.values()))
    return counts


def _outcome(step: Callable[[], str]) -> str:
    """One item's outcome; a KMS or a store that does not answer stops the run (run it again
    later), one item that cannot be opened does not: it is counted ``refused`` (the KMS
    refused its key, or its key is not one this process accepts), ``gone`` (deleted since the
    listing: a source delivered, an artifact past retention) or ``unreadable`` (no configured
    key opens it, it fails its integrity check, or its header is not well formed)."""
    try:
        return step()
    except KmsKeyRefused:
        return "refused"
    except BlobNotFound:
        return "gone"
    except (MasterKeyMissing, EncryptionError, ValueError, KeyError, TypeError, struct.error):
        return "unreadable"


def rewrap_columns(
    columns: SqlSealedColumns, labels: Labels, progress: Callable[[str, int], None]
) -> Counter[str]:
    """Every sealed column value re-wrapped: counts (``rewrapped``, ``current``, ``changed``
    — rewritten by someone else meanwhile, left to the next run —, ``refused``,
    ``unreadable``)."""
    counts: Counter[str] = Counter()
    for value in columns.values():

        def step(value: SealedValue = value) -> str:
            new = labels.rewrap(value.binding, value.stored, value.purpose)
            if new is None:
                return "current"
            return "rewrapped" if columns.replace(value, new) else "changed"

        counts[_outcome(step)] += 1
        progress("values", sum(counts.values()))
    return counts


def rewrap(
    services: Services, progress: Callable[[str, int], None] = lambda _what, _n: None
) -> dict[str, Counter[str]]:
    """Blobs then sealed columns, under the current KEK. Nothing to do without encryption."""
    found: dict[str, Counter[str]] = {"blobs": Counter(), "values": Counter()}
    if isinstance(services.blobs, EncryptedBlobStore):
        scratch = services.settings.scratch_dir
        scratch.mkdir(parents=True, exist_ok=True)
        found["blobs"] = rewrap_blobs(services.blobs, scratch, progress)
    found["values"] = rewrap_columns(SqlSealedColumns(services.store.db), services.labels, progress)
    return found
