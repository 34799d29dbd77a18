"""`pressroom detect --redact name` on a one-page product brochure with no person in it: product
and feature names, UI labels in capitals ("PLAY", "MIDI"), capitalised headings whose words the
text also uses in lower case ("Song" / "songs", "Sequence" / "sequence", "Track" / "tracks") and a
company's name. Issue 41: OCRmyPDF's test page `linn.pdf`, a brochure of this kind, gave 27 name
findings, all burned and delivered `ok`. The dry run must exit 0 with at most 3 name findings,
none on a word the same document uses in lower case (a common noun there, not a name).

The brochure is made here (its kind copied from linn.pdf, not its text), so the case always runs;
linn.pdf itself runs too where a local mirror of OCRmyPDF is found at test time (the search tool's
`fetch` brings one to /work/.mirror/ocrmypdf+OCRmyPDF/repo; `PRESSROOM_OCRMYPDF_MIRROR` names
another git directory or clone), and only that case is skipped, with a message, where none is.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from pressroom.synth import text_pdf
from tests.e2e.test_cli import run_cli

MAX_NAMES = 3
LETTERS = re.compile(r"[^\W\d_]+")

# A fictional instrument's one-page sheet: no person anywhere in it.
BROCHURE = [
    "The Kestrel Arranger",
    "24 Track MIDI Pattern Workstation",
    "The Kestrel Arranger is a compact composition and performance tool for the working",
    "musician. It is powerful, quick to learn and built for the stage. Its features include:",
    "- Transport controls like a tape machine: PLAY, STOP, RECORD, REWIND and LOCATE.",
    "- Each of the 64 patterns holds 24 polyphonic tracks, and each track may be set to",
    "  any of 16 MIDI channels. Drives up to 16 synthesizers at once!",
    "- A 3.5 inch disk drive saves whole songs in seconds, up to 90,000 notes a disk.",
    "- One track or all of them may be TRANSPOSED with a single key.",
    "- QUANTIZE tidies timing during playback without clipping notes.",
    "- Optional SMPTE sync and a wired remote.",
    "Recording a Sequence",
    "To record a sequence, press RECORD and PLAY, then play the keyboard along with the",
    "click. When the sequence loops back to bar 1 you hear what you played, in time.",
    "Overdub on another track while the first track plays; MUTE or SOLO any track.",
    "Editing",
    "Hold ERASE and press a note just before it sounds, and it is gone. STEP mode adds",
    "or changes notes one at a time. COPY moves bars within a sequence or to another one.",
    "Creating a Song",
    "Record each section (verse, chorus, bridge) as its own sequence, then use CHAIN to",
    "join them into a song. Songs can loop their last bars for a long fade.",
    "Pattern, Track and Song Modes",
    "Pattern mode edits one pattern; Track mode shows every track of it; Song mode plays",
    "the chain. A song may hold 250 steps.",
    "More Features",
    "- A 40 character Display guides every step; the HELP key explains each screen.",
    "- Two FOOTSWITCH inputs for PLAY/STOP, PUNCH IN or TAP TEMPO.",
    "- TEMPO from 30 to 300 BPM, in tenths, or tapped in; tempo changes within a song.",
    "- Any TIME SIGNATURE, changed anywhere in a song.",
    "See your Kestrel dealer for a demonstration.",
    "Kestrel Instruments, Inc.",
]

LINN_PATH = "tests/resources/linn.pdf"


def ocrmypdf_mirror() -> Path | None:
    named = os.environ.get("PRESSROOM_OCRMYPDF_MIRROR")
    base = Path(named) if named else Path("/work/.mirror/ocrmypdf+OCRmyPDF/repo")
    for git_dir in (base / ".git", base):
        if (git_dir / "objects").is_dir():
            return git_dir
    return None


def linn_pdf(dest: Path) -> Path | None:
    """linn.pdf out of a local mirror of OCRmyPDF, or None where there is none."""
    git_dir = ocrmypdf_mirror()
    if git_dir is None:
        return None
    run = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"HEAD:{LINN_PATH}"],
        capture_output=True,
        check=False,
    )
    if run.returncode != 0 or not run.stdout.startswith(b"%PDF"):
        return None
    dest.write_bytes(run.stdout)
    return dest


def lower_case_words(text: str) -> set[str]:
    """The words a document writes in lower case: common nouns and the rest, never names."""
    return {w for w in LETTERS.findall(text) if w.islower()}


def name_findings(pdf: Path, scratch: Path) -> list[str]:
    run = run_cli("detect", "--redact", "name", str(pdf), scratch=scratch)
    assert run.returncode == 0, run.stderr
    found = [json.loads(line) for line in run.stdout.splitlines()]
    assert all(f["class"] == "name" for f in found)
    return [str(f["value"]) for f in found]


def check_brochure(values: list[str], text: str) -> None:
    common = lower_case_words(text)
    on_common = [v for v in values if any(w.lower() in common for w in LETTERS.findall(v))]
    assert not on_common, f"name findings on words the brochure uses in lower case: {on_common}"
    assert len(values) <= MAX_NAMES, f"{len(values)} name findings on a brochure: {values}"


def test_a_generated_brochure_has_no_names(tmp_path: Path) -> None:
    pdf = text_pdf([BROCHURE], tmp_path / "brochure.pdf")
    text = "\n".join(BROCHURE)
    # the page is of linn's kind: the words it is about, capitalised and in lower case
    common = lower_case_words(text)
    assert {"song", "songs", "sequence", "track", "play"} <= common
    check_brochure(name_findings(pdf, tmp_path), text)
    # the same page with a person on it: the dry run still finds people there
    contact = "Questions? Ask our product manager, Margaret Okonkwo, at the Leeds office."
    pdf = text_pdf([[*BROCHURE[:-2], contact, *BROCHURE[-2:]]], tmp_path / "contact.pdf")
    assert any("Okonkwo" in v for v in name_findings(pdf, tmp_path))


def test_ocrmypdf_linn_brochure_has_no_names(tmp_path: Path) -> None:
    pdf = linn_pdf(tmp_path / "linn.pdf")
    if pdf is None:
        pytest.skip(
            "no local mirror of github.com/ocrmypdf/OCRmyPDF (fetch it to "
            "/work/.mirror/ocrmypdf+OCRmyPDF/repo or set PRESSROOM_OCRMYPDF_MIRROR); the "
            "generated brochure ran"
        )
    # the page is a scan: its words as Pressroom reads them, from a plain run's sidecar text
    out = tmp_path / "out"
    plain = run_cli("process", str(pdf), "-o", str(out), "--sidecar", scratch=tmp_path)
    assert plain.returncode == 0, plain.stderr
    text = (out / "linn.txt").read_text()
    assert {"song", "sequence", "track"} <= lower_case_words(text)
    check_brochure(name_findings(pdf, tmp_path), text)
