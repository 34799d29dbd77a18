"""Desk picture memory benchmark (not a test): security finding N4, reproduced.

    .venv-test/bin/python bench/desk_picture_memory.py [--widths 3999 3998 3997 3996] [--lines 70]
        [--images]

A one-page 480 x 3000 pt PDF of text (a tall page: its height follows the width asked for) is
held with `pressroom process --redact name --review always`, and `pressroom review` serves the
review folder in a child process, as a reviewer runs it. Signed in through the printed link, we
ask for one small picture (so Pillow and PDFium are loaded before "before" is read), then one
maximal source picture alone, then the maximal pictures of ``--widths`` all at once (distinct
widths, so no cache could serve one from another). Both desks draw through
pressroom/desk/render.py, so the offline desk's figures are the API's.

Printed: the server's resident memory before each phase, its peak during it (VmHWM, reset
before the phase through /proc/PID/clear_refs, and the highest VmRSS sampled every 5 ms), and
after it; each request's seconds, status and picture size; and the peak against the shipped
limits (Kubernetes 1536 MiB, systemd MemoryMax and compose mem_limit 2 GiB). Asserts nothing.

``--images`` adds image-file sources, which PNG and TIFF cannot decode below their own size:
an 8000 x 12000 px page (96 MP, just under the default per-bitmap limit) as an RGB PNG, a
JPEG and a bilevel TIFF, each drawn by ``render.source_page_png`` at the widest, the widths
of ``--widths`` at once on threads of a fresh child process (the desk's own code without its
web server: what an upload of such a page costs the API at its desk). Printed as above.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pikepdf
from pikepdf import Array, Dictionary, Name

PRESSROOM = Path(sys.executable).with_name("pressroom")
MIB = 1024 * 1024
LIMITS = (("Kubernetes limits.memory", 1536 * MIB), ("systemd MemoryMax / compose", 2048 * MIB))
LINE = "Jane Whitfield wrote to the council about the bridge on Mill Street again."


def tall_pdf(path: Path, lines: int, size: tuple[float, float] = (480, 3000)) -> Path:
    """One page of ``size`` points with ``lines`` lines of Helvetica spread down its height."""
    width, height = size
    lead = (height - 144) / max(1, lines)
    ops = [f"BT /F1 10 Tf {lead:.2f} TL 36 {height - 72:.2f} Td"]
    ops += [f"<{LINE.encode('cp1252').hex()}> Tj T*" for _ in range(lines)]
    ops.append("ET")
    pdf = pikepdf.Pdf.new()
    font = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type1,
            BaseFont=Name.Helvetica,
            Encoding=Name.WinAnsiEncoding,
        )
    )
    page = pikepdf.Page(
        Dictionary(
            Type=Name.Page,
            MediaBox=Array([0, 0, width, height]),
            Resources=Dictionary(Font=Dictionary(F1=font)),
            Contents=pdf.make_stream("\n".join(ops).encode()),
        )
    )
    pdf.pages.append(page)
    pdf.save(path)
    return path


def _status(pid: int, field: str) -> int:
    """A memory figure of /proc/PID/status in bytes (0 once the process is gone)."""
    try:
        with Path(f"/proc/{pid}/status").open() as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class Sampler:
    """The highest VmRSS of a process while the block runs, read every ``every`` seconds."""

    def __init__(self, pid: int, every: float = 0.005) -> None:
        self.pid, self.every = pid, every
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _status(self.pid, "VmRSS"))
            self._stop.wait(self.every)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _reset_peak(pid: int) -> bool:
    """Reset the process's VmHWM to its VmRSS (Linux: ``5`` to clear_refs); False if refused."""
    try:
        with Path(f"/proc/{pid}/clear_refs").open("w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def _picture(client: httpx.Client, item: str, width: int) -> tuple[int, float, int, str]:
    start = time.monotonic()
    response = client.get(f"/review/jobs/{item}/pages/1/source.png", params={"w": width})
    seconds = time.monotonic() - start
    size = "-"
    if response.status_code == 200 and response.content.startswith(b"\x89PNG"):
        w = int.from_bytes(response.content[16:20], "big")
        h = int.from_bytes(response.content[20:24], "big")
        size = f"{w} x {h} ({w * h / 1e6:.1f} MP)"
    return width, seconds, response.status_code, size


def _phase(
    name: str, pid: int, client: httpx.Client, item: str, widths: list[int]
) -> tuple[int, int]:
    before = _status(pid, "VmRSS")
    reset = _reset_peak(pid)
    start = time.monotonic()
    with Sampler(pid) as sampler, ThreadPoolExecutor(len(widths)) as pool:
        results = list(pool.map(lambda w: _picture(client, item, w), widths))
    wall = time.monotonic() - start
    hwm = _status(pid, "VmHWM") if reset else 0
    peak = max(sampler.peak, hwm)
    after = _status(pid, "VmRSS")
    print(f"\n{name}: {len(widths)} request(s), {wall:.1f} s in all")
    for width, seconds, code, size in results:
        print(f"  w={width}: {code} in {seconds:.2f} s, picture {size}")
    print(
        f"  server RSS: before {before / MIB:.0f} MiB, peak {peak / MIB:.0f} MiB "
        f"(VmHWM {'%.0f MiB' % (hwm / MIB) if reset else 'not reset'}, "
        f"sampled {sampler.peak / MIB:.0f} MiB), after {after / MIB:.0f} MiB"
    )
    return before, peak


def run(widths: list[int], lines: int, tmp: Path) -> None:
    source = tall_pdf(tmp / "tall.pdf", lines)
    out = tmp / "out"
    hold = ["--redact", "name", "--review", "always", "-q"]
    made = subprocess.run(
        [str(PRESSROOM), "process", str(source), "-o", str(out), *hold],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if not (out / "review" / "tall.pdf").is_file():
        raise SystemExit(f"the page was not held for review: {made.stdout}{made.stderr}")
    server = subprocess.Popen(
        [str(PRESSROOM), "review", str(out / "review"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        link = server.stdout.readline().split(": ", 1)[1].strip()
        base = link.split("/review/")[0]
        with httpx.Client(base_url=base, timeout=600, follow_redirects=True) as client:
            client.get(link).raise_for_status()
            print("a 480 x 3000 pt page, held by `pressroom process`, served by `pressroom review`")
            _phase("warm-up (w=200)", server.pid, client, "tall", [200])
            _, one = _phase("one maximal picture", server.pid, client, "tall", [max(widths) - 4])
            before, peak = _phase("at once", server.pid, client, "tall", widths)
        print(
            f"\npeak against the shipped limits (the pictures' own share: "
            f"{(peak - before) / MIB:.0f} MiB above the {before / MIB:.0f} MiB before):"
        )
        for name, limit in LIMITS:
            print(
                f"  {name} {limit / MIB:.0f} MiB: one picture {one / MIB:.0f} MiB "
                f"({100 * one / limit:.0f} %), {len(widths)} at once {peak / MIB:.0f} MiB "
                f"({100 * peak / limit:.0f} %)"
            )
    finally:
        server.terminate()
        server.wait(60)


_IMAGES = """
import sys, threading, time
from pathlib import Path
from pressroom.pipeline.pictures import source_page_png
from pressroom.models import SourceKind

def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024

path, kind = Path(sys.argv[1]), SourceKind(sys.argv[2])
widths = [int(w) for w in sys.argv[3:]]
source_page_png(path, kind, 0, None, 200)  # Pillow loaded and warm
before = status("VmRSS")
open("/proc/self/clear_refs", "w").write("5")
start = time.monotonic()
threads = [
    threading.Thread(target=source_page_png, args=(path, kind, 0, None, w)) for w in widths
]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(before, status("VmHWM"), status("VmRSS"), time.monotonic() - start)
"""


def images(widths: list[int], tmp: Path) -> None:
    from PIL import Image

    page = Image.new("RGB", (8000, 12000), "white")
    page.paste((0, 0, 0), (1000, 1000, 2000, 2000))
    print(f"\nimage sources, 8000 x 12000 px (96 MP), {len(widths)} maximal pictures at once:")
    for name, kind in (("RGB PNG", "png"), ("JPEG", "jpeg"), ("bilevel TIFF", "tiff")):
        path = tmp / f"page.{kind}"
        if kind == "png":
            page.save(path, "PNG", compress_level=1)
        elif kind == "jpeg":
            page.save(path, "JPEG", quality=80)
        else:
            page.convert("1").save(path, "TIFF", compression="group4")
        done = subprocess.run(
            [sys.executable, "-c", _IMAGES, str(path), kind, *map(str, widths)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode:
            print(f"  {name}: failed: {done.stderr[-500:]}")
            continue
        before, peak, after, seconds = (float(v) for v in done.stdout.split())
        print(
            f"  {name}: {seconds:.1f} s; RSS before {before / MIB:.0f} MiB, peak "
            f"{peak / MIB:.0f} MiB (+{(peak - before) / MIB:.0f}), after {after / MIB:.0f} MiB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--widths", type=int, nargs="+", default=[3999, 3998, 3997, 3996])
    parser.add_argument("--lines", type=int, default=70, help="lines of text on the tall page")
    parser.add_argument("--images", action="store_true", help="image-file sources too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="desk-picture-") as tmp:
        run(args.widths, args.lines, Path(tmp))
        if args.images:
            images(args.widths, Path(tmp))


if __name__ == "__main__":
    main()
