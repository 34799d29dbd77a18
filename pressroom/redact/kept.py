"""Pixels a redaction renders once and reads twice: pass one's grey rendering of a page, which
the build burns when the page shows no colour and is stored at the resolution it was read at;
and the read-back's rendering of a rebuilt output page, which the solid-box check reads whole
and re-detection reads a band at a time. Each was rendered again where it was needed (about a
tenth of a second a 300-dpi page, every time).

Kept by key, the most recent first, up to ``max_bytes`` in all (a document's first pages go
where its last ones come in: a one-page document keeps its page, a long one its last few); a
kept image is handed out as a copy, so no reader's drawing reaches another's. Safe to share
between the threads of one document's pass one."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

from PIL import Image

# about five 300-dpi Letter pages in grey: enough for a page's two readings, a bounded share
# of a worker's memory
KEPT_BYTES = 48 * 1024 * 1024


def _bytes(image: Image.Image) -> int:
    return image.width * image.height * len(image.getbands())


class Kept:
    """Images by key, with what was learnt of each (``info``), up to ``max_bytes``."""

    def __init__(self, max_bytes: int = KEPT_BYTES) -> None:
        self.max_bytes = max_bytes
        self._images: OrderedDict[Hashable, tuple[Image.Image, Any]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()
        self.hits = 0  # images handed out again (what the tests count)

    def put(self, key: Hashable, image: Image.Image, info: Any = None) -> None:
        """Keep ``image`` (not a copy: the caller hands it over or only reads it)."""
        size = _bytes(image)
        with self._lock:
            old = self._images.pop(key, None)
            if old is not None:
                self._held -= _bytes(old[0])
            if size > self.max_bytes:
                return
            self._images[key] = (image, info)
            self._held += size
            while self._held > self.max_bytes:
                _key, (gone, _info) = self._images.popitem(last=False)
                self._held -= _bytes(gone)

    def get(self, key: Hashable) -> tuple[Image.Image, Any] | None:
        """A copy of the image kept under ``key``, and its ``info``; None where none is."""
        with self._lock:
            got = self._images.get(key)
            if got is None:
                return None
            self._images.move_to_end(key)
            self.hits += 1
            image, info = got
        return image.copy(), info

    def clear(self) -> None:
        with self._lock:
            self._images.clear()
            self._held = 0
