"""A hot folder (`pressroom watch`): each file that lands in INBOX is processed once.

What a file goes through:

1. **Settled.** A file is taken only once its size and modification time have stayed the same
   for ``settle_s`` seconds (by ``clock``, injectable): a scanner writing over SMB or NFS, or a
   copy still under way, is left alone until it is whole. Hidden names (``.x``), editors' and
   browsers' partial files (``~x``, ``*.part``, ``*.tmp``, ``*.crdownload``, ``*.filepart``,
   ``*.swp``), folders, links and second names of a file (hard links) are never taken.
2. **Claimed.** It is moved into the state folder's ``work/`` (``INBOX/.pressroom/`` unless
   ``state`` names another): a second scan does not see it again, and a watcher that stopped
   (SIGKILL, a power cut) finds it there when it starts again and reads it then.
3. **Known?** Its size is checked from ``stat`` (nothing is read of a file over
   ``max_bytes``), then its content's SHA-256 is looked up in the ledger (``ledger`` in the
   state folder, one hash a line, appended and synced once the output is in place). Content
   done before is not done again: the file moves to ``.done/``, ``skipped: duplicate``.
4. **Processed** by the handler (offline, or through the service with the hash as the
   idempotency key, so the service too takes it once).
5. **Moved aside**: into ``INBOX/.done/`` when delivered (or held for review), into
   ``INBOX/.failed/`` when refused, with ``NAME.reason`` beside it (the code and message, one
   line, every control character escaped). A name already there is never written over: the
   file takes ``NAME (2).pdf``. A temporary failure (exit 75: the service down) stays claimed
   and is tried again later, waiting 5 s, then 10, up to 5 min. The sources of a redacting
   watcher leave ``.done/`` after ``keep_done_s``.

Where each part lives: ``folders`` (the folders trusted, files moved without ever landing on
one, fresh names: how the watcher holds out against whoever else may write INBOX),
``inbox`` (the folder watched and the watcher's own: settling, claiming, the ledger, tries,
moving aside, the retention of ``.done/``; steps 1, 2, 3's ledger and 5) and ``watcher`` (the
loop over them: hashing, batches, the handler, tries again; steps 3 and 4, and the wait).
"""

from pressroom.hotfolder.folders import dir_mode, fresh_name, move_fresh, taken
from pressroom.hotfolder.inbox import Inbox
from pressroom.hotfolder.watcher import Handled, Watcher, watching
from pressroom.parentwatch import leave_with_parent

__all__ = [
    "Handled",
    "Inbox",
    "Watcher",
    "dir_mode",
    "fresh_name",
    "leave_with_parent",
    "move_fresh",
    "taken",
    "watching",
]
