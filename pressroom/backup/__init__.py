"""The SQLite job store copied out and back in through SQLite's online backup API, which reads
one consistent snapshot while the service serves: `pressroom db backup` and `db restore`; and
the whole of what a restore needs — that database, the blob store's files, the keys when asked
and a manifest of SHA-256 sums — in one folder or tar: `pressroom backup` and `restore`.

Where each part lives: ``sqlite`` (`db backup` and `db restore`: one snapshot copied, never a
half-written file, never over a database in use), ``schema`` (the schema's revision, and the
schema a backup may carry, judged against what its revision's migrations make), ``postgres``
(pg_dump's snapshot, judged before pg_restore puts it back), ``manifest`` (what a backup may
hold, its manifest of sums, its members read from a folder or a tar), ``bundle`` (`pressroom
backup`: everything in one folder or tar), ``unbundle`` (`pressroom restore`: every file
checked against the manifest before anything moves into place) and ``files`` (new files made
exclusively, made durable, moved into place without replacing one).
"""

from pressroom.backup.bundle import Bundle, backup_all
from pressroom.backup.schema import known_revisions, reference_schema
from pressroom.backup.sqlite import Copied, backup, database_path, keep_also, restore
from pressroom.backup.unbundle import restore_all

__all__ = [
    "Bundle",
    "Copied",
    "backup",
    "backup_all",
    "database_path",
    "keep_also",
    "known_revisions",
    "reference_schema",
    "restore",
    "restore_all",
]
