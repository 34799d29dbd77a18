"""Peak memory of a worker on each PDF and image bomb, and on honest pages just under the caps.

Each file (built by ``tests/bombs.py``) is processed in a fresh child process set up as a
worker is (``OMP_THREAD_LIMIT=1``, the real Tesseract engine, the named-entity model loaded),
once plainly and once with redaction (names, addresses, account numbers) where the bomb aims at
redaction. Printed per run: the outcome (the reason code, or ``complete``), seconds, and the
child's peak resident memory (VmHWM, read by the child as it ends; ``ru_maxrss`` from
``wait4`` when it was killed first) next to the same child's memory before the file was
opened. The target: every bomb under 1 GiB, refused before the memory is spent.

    .venv-test/bin/python bench/bomb_bench.py [--only NAME ...] [--no-redact] [--json out.json]

Prints figures; asserts nothing. About two minutes, most of it the honest pages' OCR.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import bombs  # noqa: E402

GIB = 1 << 30
# A child that runs away is stopped here, well above the target, so a regression shows as a
# figure (or "killed") instead of taking the machine down.
CHILD_ADDRESS_SPACE = 8 * GIB
CHILD_TIMEOUT_S = 300

_CHILD = """
import json, resource, sys, time
from pathlib import Path

def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) * 1024
    return 0

limit = int(sys.argv[4])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from pressroom.engines.tesseract import TesseractEngine
from pressroom.errors import PressroomError
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.plain import process_document
from pressroom.redact.detect.detector import Detector
from pressroom.redact.engine import redact_document
from pressroom.redact.policy import RedactionPolicy
from pressroom.settings import Settings
from pressroom.templates import resolve_template

settings = Settings.from_env()
engine = TesseractEngine(languages=settings.languages, tessdata_prefix=settings.tessdata_prefix)
classes = ("name", "address", "account-number")
Detector.for_classes(classes).find("Letter to Jane Smith at 12 Main Street")  # the model, loaded
ready = hwm()
src, out, mode = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
options = JobOptions(template=resolve_template("sample"), limits=settings.limits)
started = time.perf_counter()
try:
    if mode == "redact":
        done = redact_document(src, out, options, RedactionPolicy(classes), engine)
        outcome = getattr(done, "code", "complete")  # a hold says its code
    else:
        process_document(src, out, options, engine)
        outcome = "complete"
except PressroomError as exc:
    outcome = exc.code
except MemoryError:
    outcome = "MemoryError"
print(json.dumps({"outcome": outcome, "seconds": time.perf_counter() - started,
                  "ready": ready, "peak": hwm()}))
"""


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    what: str
    make: Callable[[Path], Path]
    modes: tuple[str, ...] = ("plain", "redact")
    bomb: bool = True  # False: an honest page just under a cap, expected to go through


CASES = [
    Case(
        "operators",
        "41 KB -> 20 MB of paths, 4.5 M operators",
        lambda p: bombs.operator_bomb(p, 20),
    ),
    Case("content-bytes", "100 KB -> 50 MB of content", lambda p: bombs.operator_bomb(p, 50)),
    Case(
        "form-fanout", "2 KB: a form drawn 10^7 times", lambda p: bombs.form_fanout_bomb(p, 10, 7)
    ),
    Case("text", "20 KB -> 4 MB of shown text", lambda p: bombs.text_bomb(p, 4)),
    Case("image-6-deep", "30k x 30k image, 6 forms down", lambda p: bombs.nested_image_bomb(p, 6)),
    Case(
        "image-10-deep", "30k x 30k image, 10 forms down", lambda p: bombs.nested_image_bomb(p, 10)
    ),
    Case(
        "image-annotation",
        "30k x 30k image in an appearance",
        lambda p: bombs.nested_image_bomb(p, 6, via="annotation"),
    ),
    Case("inline-image", "30k x 30k inline image", bombs.inline_image_bomb),
    Case("jpeg-liar", "100 px declared, 30k x 30k coded", bombs.jpeg_liar),
    Case("big-text-page", "14,400 pt page with text", lambda p: bombs.big_text_page(p, 14_400)),
    Case(
        "low-dpi-png",
        "9k x 9k PNG at 50 dpi (81 Mpx, under the cap; 729 Mpx upscaled)",
        lambda p: bombs.low_dpi_png(p.with_suffix(".png"), 9_000, 50),
    ),
    # an outside attacker's spellings (attack review): each drew a 30k x 30k image past the scan
    Case("do-after-comment", "/Im %x<LF>Do", lambda p: bombs.image_drawn_as(p, b"/Im %x\nDo")),
    Case("do-after-nul", "/Im<NUL>Do", lambda p: bombs.image_drawn_as(p, b"/Im\x00Do")),
    Case(
        "inline-glued",
        "BI/W 30000/H 30000 (no spaces)",
        lambda p: bombs.inline_image_spelled(p, b"BI/W %d/H %d/CS/G/BPC 8/F/Fl"),
    ),
    Case(
        "inherited-64-deep",
        "resources on the root of a 64-deep page tree",
        lambda p: bombs.deep_tree_inherited_image(p, 64),
    ),
    Case(
        "form-memo",
        "a form measured first under a caller's 1-pixel /X",
        bombs.form_measured_under_small_resources,
    ),
    Case(
        "xref-size", "trailer claims 150 M objects", lambda p: bombs.xref_size_liar(p, 150_000_000)
    ),
    Case("page-tree", "1 page, /Count 5,000,000", lambda p: bombs.lying_page_tree(p, 5_000_000)),
    Case("repeated-kids", "1.8 MB: one page listed 300k times", lambda p: bombs.repeated_kids(p)),
    # honest pages just under the caps: what the caps still let through costs this much
    Case(
        "near-operator-cap",
        "900 k operators of rectangles (the costliest kind)",
        lambda p: bombs.operator_bomb(p, 5.9, b"0 0 1 1 re f\n"),
        bomb=False,
    ),
    Case(
        "near-text-cap",
        "0.9 MB of shown text",
        lambda p: bombs.text_bomb(p, 0.85),
        bomb=False,
    ),
    Case(
        "near-image-cap",
        "9,800 x 9,800 image (96 Mpx), 6 forms down",
        lambda p: bombs.nested_image_bomb(p, 6, 9_800),
        modes=("plain",),
        bomb=False,
    ),
    Case(
        "near-pixel-cap",
        "2,350 pt page with text: 96 Mpx at 300 dpi",
        lambda p: bombs.big_text_page(p, 2_350),
        modes=("redact",),
        bomb=False,
    ),
    Case(
        "near-upscale-cap",
        "3,260 px PNG at 50 dpi: upscaled to 96 Mpx",
        lambda p: bombs.low_dpi_png(p.with_suffix(".png"), 3_260, 50),
        modes=("plain",),
        bomb=False,
    ),
]


def run_child(src: Path, out: Path, mode: str) -> dict[str, Any]:
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(src), str(out), mode, str(CHILD_ADDRESS_SPACE)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    try:
        stdout, stderr = child.communicate(timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        child.kill()
        stdout, stderr = child.communicate()
    # the child is reaped by communicate(); its own peak comes back on stdout
    lines = stdout.decode().strip().splitlines()
    if child.returncode == 0 and lines:
        result: dict[str, Any] = json.loads(lines[-1])
        return result
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    tail = stderr.decode().strip().splitlines()[-1:] or [""]
    return {
        "outcome": f"died rc={child.returncode} {tail[0][:60]}",
        "seconds": time.perf_counter() - started,
        "ready": 0,
        "peak": peak,  # the largest of any child so far: an upper bound
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="case names")
    parser.add_argument("--no-redact", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    cases = [c for c in CASES if args.only is None or c.name in args.only]
    rows = []
    with tempfile.TemporaryDirectory(prefix="pressroom-bombs-") as tmp:
        folder = Path(tmp)
        header = (
            f"{'case':<18} {'file':>9} {'mode':<6} {'outcome':<16} {'s':>6} "
            f"{'ready MiB':>9} {'peak MiB':>9}  {'<=1GiB':<6} what"
        )
        print(header)
        print("-" * len(header))
        for case in cases:
            src = case.make(folder / f"{case.name}.pdf")
            for mode in case.modes:
                if mode == "redact" and args.no_redact:
                    continue
                got = run_child(src, folder / "out.pdf", mode)
                peak, ready = int(got["peak"]), int(got["ready"])
                row = {
                    "case": case.name,
                    "what": case.what,
                    "bomb": case.bomb,
                    "file_bytes": src.stat().st_size,
                    "mode": mode,
                    **got,
                }
                rows.append(row)
                print(
                    f"{case.name:<18} {_size(src.stat().st_size):>9} {mode:<6} "
                    f"{got['outcome']!s:<16} {float(got['seconds']):>6.1f} "
                    f"{ready / 2**20:>9.0f} {peak / 2**20:>9.0f}  "
                    f"{'yes' if peak <= GIB else 'NO':<6} {case.what}",
                    flush=True,
                )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2))


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n / 1024:.0f} KB"


if __name__ == "__main__":
    main()
