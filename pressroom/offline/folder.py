"""The review folder (``OUTDIR/review``), as ``pressroom process`` writes it and the offline
desk (``desk.folder``) reads it: for each held document the held copy ``STEM.pdf`` and its note
``STEM.findings.json`` — the check's code and reason, the findings (with their values: the note
stays in the private folder, the desk shows classes and counts only), the review sheet, and
what a rebuild needs (``Rebuild``: the source's path and SHA-256, the policy, template, title,
pixel option and output choices). Decisions are appended to ``decisions.jsonl`` beside them.
Every write is a private temporary file moved into place; the folder is 0700, its files 0600."""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pressroom.corrections import Corrections
from pressroom.fsutil import place_copy
from pressroom.orders import JobOrder
from pressroom.outcomes import Held

if TYPE_CHECKING:
    from pressroom.redact.policy import RedactionPolicy


NOTE_SUFFIX = ".findings.json"
DECISIONS = "decisions.jsonl"
KEY_ID = "offline"  # the one person at an offline desk
TEMP_PREFIX = ".pressroom-"
# A held file's stem as an item id: letters (any script), digits, '_', '.', '-' and inner
# spaces, never a separator, never hidden (a leading '.'), never "..": an id is a name in this
# folder, never a path.
STEM_RE = re.compile(r"\w(?:[\w .-]{0,126}[\w.-])?")
MAX_WIDTH_PX = 4000
REBUILDING = "a rebuild with corrections is running; wait for it to finish"
# a failed rebuild's code in the note, until the next rebuild holds the item again
APPLY_FAILED = "apply_failed"
# when the held copy was rebuilt with the reviewer's corrections
REBUILT_AT = "rebuilt_at"
# in the note from an Apply until its rebuild holds the item again or fails: found with no
# rebuild running, the desk was stopped while it ran (said as INTERRUPTED)
APPLYING = "apply_started"
INTERRUPTED = "APPLY_INTERRUPTED"
HELD_SHA256 = "held_sha256"
# shown, and approval refused, where the held copy is not the one its note describes
MISMATCH = "HELD_COPY_MISMATCH"


def safe_stem(stem: str) -> bool:
    return STEM_RE.fullmatch(stem) is not None and ".." not in stem


def stored_languages(stored: object, default: tuple[str, ...]) -> tuple[str, ...]:
    """The languages a held copy was read with (a copy held before they were kept: the
    setting's)."""
    return tuple(str(stored).split("+")) if stored else default


@dataclass(frozen=True, slots=True)
class Rebuild:
    """What a held document was made from, so the desk can make it again: the source's
    absolute path and SHA-256, the policy (classes and expiry as given), the template as given
    (a name, or a folder's absolute path), the title and whether pixels were kept."""

    input: Path
    input_sha256: str
    policy: dict[str, Any]  # RedactionPolicy.as_options(): {"redact": [...], "expires_at": ...}
    template: str | None
    title: str | None
    keep_pixels: bool
    # the kind of output asked for: output_type, sidecar, allow_no_text, optimize
    output: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "input": str(self.input),
            "input_sha256": self.input_sha256,
            "policy": self.policy,
            "template": self.template,
            "title": self.title,
            "keep_pixels": self.keep_pixels,
            "output": self.output,
        }

    @classmethod
    def of(
        cls,
        source: Path,
        policy: RedactionPolicy | None,
        template: str | None,
        title: str | None,
        keep_pixels: bool,
        output: Mapping[str, Any] | None = None,
        read: Path | None = None,
    ) -> Rebuild:
        """``read``: the file that was read, when not ``source`` itself (the copy the malware
        scanner passed): its digest is kept, so the desk rebuilds only from those bytes."""
        from pressroom.pipeline.inspect import file_sha256

        return cls(
            source.resolve(),
            file_sha256(read or source),
            policy.as_options() if policy is not None else {"redact": [], "expires_at": None},
            template_as_given(template),
            title,
            keep_pixels,
            dict(output or {}),
        )

    def order(self, classes: tuple[str, ...], corrections: Corrections | None) -> JobOrder:
        """What the held copy was asked for, as an order (``classes``: the note's policy once
        parsed and checked): the output choices it was made with (a note written before they
        were kept: None, the template's defaults), its languages (none kept: the reading
        process's setting), and the reviewer's ``corrections``."""
        from pressroom.pipeline.ocrmode import ocr_mode

        output = self.output
        return JobOrder(
            template=self.template or "plain",
            redact=classes,
            expires_at=self.policy.get("expires_at"),
            keep_pixels=self.keep_pixels,
            output_type=output.get("output_type"),
            sidecar=output.get("sidecar"),
            allow_no_text=bool(output.get("allow_no_text")),
            optimize=int(output.get("optimize") or 0),
            languages=stored_languages(output.get("languages"), ()),
            ocr=ocr_mode(str(output.get("ocr") or "skip")),
            corrections=corrections,
        )

    @classmethod
    def parse(cls, note: Mapping[str, Any]) -> Rebuild | None:
        """The rebuild facts of a note, or None for a note written before they were kept."""
        source, sha, policy = note.get("input"), note.get("input_sha256"), note.get("policy")
        if not isinstance(source, str) or not isinstance(policy, dict):
            return None
        template, title = note.get("template"), note.get("title")
        return cls(
            Path(source),
            sha if isinstance(sha, str) else "",
            policy,
            template if isinstance(template, str) else None,
            title if isinstance(title, str) else None,
            bool(note.get("keep_pixels", False)),
            dict(note["output"]) if isinstance(note.get("output"), dict) else {},
        )


def template_as_given(name: str | None) -> str | None:
    """A template folder given as a path is kept absolute (the desk may run elsewhere); a
    name stays a name."""
    if name is not None and ("/" in name or name.startswith(".")):
        return str(Path(name).resolve())
    return name


def hold(
    folder: Path,
    stem: str,
    built: Path | None,
    held: Held,
    rebuild: Rebuild,
    *,
    now: float | None = None,
    keep_previous: bool = False,
    rebuilt_at: float | None = None,
) -> Path:
    """``built`` (when there is one) and its note (why it is ``held``, what was found, the
    sheet) into ``folder`` as ``STEM.pdf`` and ``STEM.findings.json``: the copy first, then
    the note, each moved into place whole. With no output built, a copy already there goes
    (it is another run's), unless ``keep_previous`` (a rebuild that made nothing leaves the
    copy the reviewer was looking at)."""
    folder.mkdir(mode=0o700, exist_ok=True)
    folder.chmod(0o700)
    dest = folder / f"{stem}.pdf"
    if built is not None and built.is_file():
        place_private_copy(built, dest)
    elif not keep_previous:
        dest.unlink(missing_ok=True)
    sheet = held.sheet.as_json() if held.sheet is not None else None
    from pressroom.pipeline.inspect import file_sha256

    kept = dest.is_file()
    note: dict[str, Any] = {
        "code": held.code,
        "reason": held.message,
        "source": stem,
        "held_copy": dest.name if kept else None,
        # which copy this note describes: a copy placed by a rebuild whose note never followed
        # (a full disk, a desk killed between the two) is not the one the desk shows
        HELD_SHA256: file_sha256(dest) if kept else None,
        "findings": [f.as_json() for f in held.findings],
        "sheet": sheet,
        **rebuild.as_json(),
        "held_at": time.time() if now is None else now,
    }
    if rebuilt_at is not None:  # a desk's rebuild: the page says when it happened
        note[REBUILT_AT] = rebuilt_at
    write_json(folder / f"{stem}{NOTE_SUFFIX}", note)
    return folder


def place_text(text: str, dest: Path) -> None:
    """A sidecar text beside its delivered PDF, whole or not at all, never over a file that
    is there (a hard link, then the staged name goes)."""
    staged = dest.with_name(f"{TEMP_PREFIX}{dest.name}")
    try:
        staged.write_text(text, encoding="utf-8")
        staged.chmod(0o644)
        with contextlib.suppress(FileExistsError):  # looked for a moment ago: never over it
            os.link(staged, dest)
    finally:
        staged.unlink(missing_ok=True)


def place_private_copy(built: Path, dest: Path) -> None:
    place_copy(built, dest, mode=0o600, prefix=TEMP_PREFIX)


def write_json(path: Path, value: Any) -> None:
    """``value`` as ``path`` (0600), whole or not at all."""
    fd, name = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    tmp = Path(name)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(value, out, indent=2, ensure_ascii=False)
            out.flush()
            os.fsync(out.fileno())
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
