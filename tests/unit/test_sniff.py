"""Types come from content, never from names."""

from __future__ import annotations

import pytest

from pressroom.errors import BadMime
from pressroom.models import SourceKind
from pressroom.pipeline.sniff import sniff_bytes


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"%PDF-1.7\n%\xe2\xe3", SourceKind.PDF),
        (b"\r\n   junk before header %PDF-1.4\n", SourceKind.PDF),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", SourceKind.PNG),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", SourceKind.JPEG),
        (b"II*\x00\x08\x00\x00\x00", SourceKind.TIFF),
        (b"MM\x00*\x00\x00\x00\x08", SourceKind.TIFF),
    ],
)
def test_known_types_by_magic(head: bytes, kind: SourceKind) -> None:
    assert sniff_bytes(head) is kind


@pytest.mark.parametrize(
    "head",
    [
        b"",
        b"<!DOCTYPE html><html><body>%PDF-1.4 is mentioned late"[:10],
        b"<html><body>hello</body></html>",
        b"PK\x03\x04 a zip file",
        b"GIF89a",
    ],
)
def test_other_content_is_bad_mime(head: bytes) -> None:
    with pytest.raises(BadMime) as info:
        sniff_bytes(head)
    assert info.value.code == "BAD_MIME"
