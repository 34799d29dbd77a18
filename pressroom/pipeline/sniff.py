"""Decide a file's type from its first bytes, never from its name."""

from __future__ import annotations

from pathlib import Path

from pressroom.errors import BadMime
from pressroom.models import SourceKind

_HEAD = 1024


def sniff_bytes(head: bytes) -> SourceKind:
    if not head:
        raise BadMime("the file is empty")
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return SourceKind.PNG
    if head.startswith(b"\xff\xd8\xff"):
        return SourceKind.JPEG
    if head[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):
        return SourceKind.TIFF
    # The PDF header may follow a little junk; readers accept it within the first 1 KiB.
    if b"%PDF-" in head[:_HEAD]:
        return SourceKind.PDF
    raise BadMime("not a PDF, PNG, JPEG or TIFF file (by its content)")


def sniff_file(path: Path) -> SourceKind:
    with path.open("rb") as fh:
        return sniff_bytes(fh.read(_HEAD))


def sniffed(path: Path) -> SourceKind | None:
    """The file's kind, or None for one we do not read (inspection refuses it, saying why)."""
    try:
        return sniff_file(path)
    except BadMime:
        return None
