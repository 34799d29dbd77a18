"""Work counted, never timed: the lines of chosen modules run while a call runs (the tests that
say a step grows linearly with pages or values count these at two sizes)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from types import FrameType, ModuleType
from typing import Any


def steps(fn: Callable[[], object], *modules: ModuleType) -> int:
    """Lines of ``modules`` run while ``fn`` runs: their work, whatever the clock."""
    count = 0
    files = {m.__file__ for m in modules}

    def local(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def calls(frame: FrameType, event: str, arg: object) -> Any:
        return local if frame.f_code.co_filename in files else None

    gc.collect()  # what an earlier, larger run left is gone before this one's is made
    before = sys.gettrace()
    sys.settrace(calls)
    try:
        fn()
    finally:
        sys.settrace(before)
    return count
