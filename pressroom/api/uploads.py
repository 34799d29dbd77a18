"""Stream a multipart upload to private scratch: bounded memory, size cap enforced mid-stream."""

from __future__ import annotations

import asyncio
import errno
import hashlib
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from python_multipart.multipart import MultipartParser, parse_options_header

from pressroom.errors import (
    BadRequest,
    PressroomError,
    RequestTimeout,
    StorageFull,
    TooLarge,
)
from pressroom.web.single import unknown_message

MAX_FIELD_BYTES = 8192
MAX_FIELDS = 32
HEAD_BYTES = 1024
# Everything that is not the file — every field, every part header, the boundaries — counts
# against this, so a body of many small fields cannot grow past the file cap.
MAX_FORM_OVERHEAD = 64 * 1024


@dataclass
class UploadedForm:
    fields: dict[str, str] = field(default_factory=dict)
    path: Path | None = None
    size: int = 0
    sha256: str = ""
    head: bytes = b""


class _Collector:
    """python-multipart callbacks: small fields into memory, the one ``file`` part to disk."""

    def __init__(
        self,
        dest: Path,
        max_bytes: int,
        before_file: Callable[[dict[str, str]], object] | None = None,
        known: Iterable[str] | None = None,
    ) -> None:
        self.dest = dest
        self.max_bytes = max_bytes
        self.before_file = before_file
        self.known = None if known is None else frozenset(known) | {"file"}
        self.parts = 0
        self.form = UploadedForm()
        self.error: PressroomError | None = None
        self._header_field = b""
        self._header_value = b""
        self._headers: dict[bytes, bytes] = {}
        self._name: str | None = None
        self._is_file = False
        self._value = bytearray()
        self._out: IO[bytes] | None = None
        self._digest = hashlib.sha256()

    def callbacks(self) -> dict[str, Any]:
        return {
            "on_part_begin": self.part_begin,
            "on_header_field": lambda d, s, e: self._append("_header_field", d[s:e]),
            "on_header_value": lambda d, s, e: self._append("_header_value", d[s:e]),
            "on_header_end": self.header_end,
            "on_headers_finished": self.headers_finished,
            "on_part_data": self.part_data,
            "on_part_end": self.part_end,
        }

    def _append(self, attr: str, data: bytes) -> None:
        value = getattr(self, attr) + data
        if len(value) > MAX_FIELD_BYTES:
            self.error = self.error or BadRequest("a multipart header is too long")
            return
        setattr(self, attr, value)

    def part_begin(self) -> None:
        self.parts += 1
        if self.parts > MAX_FIELDS + 1:  # nameless parts count too
            self.error = self.error or BadRequest("too many form parts")
        self._headers = {}
        self._name = None
        self._is_file = False
        self._value = bytearray()

    def header_end(self) -> None:
        self._headers[self._header_field.lower()] = self._header_value
        self._header_field = b""
        self._header_value = b""

    def headers_finished(self) -> None:
        _, params = parse_options_header(self._headers.get(b"content-disposition", b""))
        name = params.get(b"name")
        self._name = name.decode("utf-8", "replace") if name is not None else None
        if self.known is not None and self._name is None:
            # a part with no plain name (none, or only RFC 5987's name*=) is read by no one
            # here, though a proxy before us may take it for a field: refused, never dropped
            self.error = self.error or BadRequest("a form part without a name")
            return
        if self.known is not None and self._name is not None and self._name not in self.known:
            # refused on its name, before a byte of it is read (a stray file part included)
            self.error = self.error or BadRequest(unknown_message(self._name, self.known))
            return
        # the client's file name is never read further: it can carry a person's name
        self._is_file = self._name == "file"
        if self._is_file:
            if self.form.path is not None:
                self.error = self.error or BadRequest("send exactly one 'file' part")
                return
            if self.error is not None:
                return
            if self.before_file is not None:
                # the fields sent before the file are judged before a byte of it is written
                try:
                    self.before_file(dict(self.form.fields))
                except PressroomError as exc:
                    self.error = exc
                    return
            self.form.path = self.dest
            try:
                self._out = self._open_dest()
            except OSError as exc:
                self.error = _write_error(exc)

    def _open_dest(self) -> IO[bytes]:
        return self.dest.open("xb")

    def part_data(self, data: bytes, start: int, end: int) -> None:
        if self.error is not None:
            return
        chunk = data[start:end]
        if self._is_file and self._out is not None:
            self.form.size += len(chunk)
            if self.form.size > self.max_bytes:
                self.error = TooLarge(f"the upload exceeds {self.max_bytes:,} bytes")
                return
            if len(self.form.head) < HEAD_BYTES:
                self.form.head += chunk[: HEAD_BYTES - len(self.form.head)]
            self._digest.update(chunk)
            try:
                self._out.write(chunk)
            except OSError as exc:
                self.error = _write_error(exc)
        else:
            self._value += chunk
            if len(self._value) > MAX_FIELD_BYTES:
                self.error = BadRequest(f"form field {self._name!r} is too long")

    def part_end(self) -> None:
        if self._is_file and self._out is not None:
            self._out.close()
            self._out = None
        elif self._name is not None and self.error is None:
            if self._name in self.form.fields:
                # the last would win here while a gateway may read the first: neither does
                self.error = BadRequest(
                    f"form field {self._name[:64]!r} is given more than once; send each once"
                )
                return
            if len(self.form.fields) >= MAX_FIELDS:
                self.error = BadRequest("too many form fields")
                return
            self.form.fields[self._name] = self._value.decode("utf-8", "replace")

    def close(self) -> None:
        if self._out is not None:
            try:
                self._out.close()
            except OSError as exc:  # the last buffered bytes did not fit
                self.error = self.error or _write_error(exc)
            self._out = None


def _write_error(exc: OSError) -> PressroomError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StorageFull("no space left for the upload; try again later")
    return BadRequest(f"the upload could not be stored ({exc.errno})")


async def _chunks(
    body: AsyncIterator[bytes], idle_s: float, deadline_s: float
) -> AsyncIterator[bytes]:
    """``body``'s chunks, refused when the client pauses longer than ``idle_s`` or the whole
    body takes longer than ``deadline_s`` (a trickle of bytes cannot hold a connection and its
    scratch file open forever)."""
    ends = time.monotonic() + deadline_s
    it = body.__aiter__()
    while True:
        left = ends - time.monotonic()
        if left <= 0:
            raise RequestTimeout(f"the upload took longer than {deadline_s:g} s")
        try:
            chunk = await asyncio.wait_for(it.__anext__(), min(idle_s, left))
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise RequestTimeout("the upload stalled; send the body without long pauses") from None
        yield chunk


async def receive_upload(
    content_type: str,
    body: AsyncIterator[bytes],
    dest: Path,
    *,
    max_bytes: int,
    before_file: Callable[[dict[str, str]], object] | None = None,
    known: Iterable[str] | None = None,
    idle_s: float = 15.0,
    deadline_s: float = 600.0,
) -> UploadedForm:
    """Parse ``body`` as multipart/form-data; the ``file`` part lands at ``dest`` (0600).

    ``before_file`` sees the fields sent ahead of the file and may refuse them before any of
    the file is written. With ``known``, a part of another name (besides ``file``) is refused
    naming it as soon as its headers are read. The whole body may not exceed ``max_bytes``
    plus a small allowance for fields and part headers."""
    mime, params = parse_options_header(content_type)
    boundary = params.get(b"boundary")
    if mime != b"multipart/form-data" or not boundary:
        raise BadRequest("send multipart/form-data with the document in a part named 'file'")
    collector = _Collector(dest, max_bytes, before_file, known)
    parser = MultipartParser(boundary, collector.callbacks())  # type: ignore[arg-type]
    received = 0
    try:
        async for chunk in _chunks(body, idle_s, deadline_s):
            received += len(chunk)
            if received > max_bytes + MAX_FORM_OVERHEAD:
                raise TooLarge(f"the upload exceeds {max_bytes:,} bytes")
            parser.write(chunk)
            if collector.error is not None:
                raise collector.error
        parser.finalize()
        if collector.error is not None:
            raise collector.error
    except PressroomError:
        raise
    except Exception:
        raise BadRequest("the multipart body is malformed") from None
    finally:
        collector.close()
    if collector.error is not None:
        raise collector.error
    form = collector.form
    if form.path is None:
        raise BadRequest("no part named 'file' in the upload")
    form.sha256 = collector._digest.hexdigest()
    return form
