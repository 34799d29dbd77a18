"""A child process that must not outlive the process that started it (a pool's process, a
redaction's page reader): ``leave_with_parent``."""

from __future__ import annotations

import multiprocessing
import os
import threading

from pressroom.errors import EXIT_TEMPORARY


def leave_with_parent() -> None:
    """In a process of a pool: exit the moment the process that started it is gone (killed,
    SIGKILL included), whatever this one is doing. The parent is the one recorded at spawn
    (``multiprocessing.parent_process()``, as `serve`'s workers take it): its sentinel, a pipe
    only the parent holds open, reads as ended when the parent dies. The watching thread is
    named ``parent-watch`` (``redact.procs`` lets a fork by it)."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        parent.join()  # waits on the sentinel: no polling, no pid that could be reused
        os._exit(EXIT_TEMPORARY)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
