"""Adversarial-detection benchmark (not a test): seconds per page of detection on pages built to
be expensive, beside an ordinary dense page, in one run.

    .venv-test/bin/python bench/detect_cost_bench.py [--chars 100000] [--rounds 1] [--profile]

Each page is at most ``--chars`` characters (the default is ``PRESSROOM_MAX_DETECT_CHARS``'s
default, 100,000: a page over it is refused ``TEXT_LIMIT`` before detection). For every page
it prints two times, policy ``name,address,account-number`` with the model loaded:

- ``text``: ``Detector.find_all`` on the page as one text (``pressroom detect --jsonl``);
- ``page``: what a worker runs on one reading of a page: its words laid out in lines,
  ``detection.detect`` (the reading order with the model, rows and columns without it), then
  ``plan.covered_words`` with the values found, then the page's findings as a reviewer and
  ``pressroom detect`` list them (``findings.page_findings``: boxes, propagation, and the
  de-duplication that was quadratic in the findings of a page).

then each time as a multiple of the ordinary page's (its own path), and PASS when both are under 10x
(the target), FAIL otherwise. A page over the cap is shown refused, by the worker's own check.
The ordinary page is ~3,000 words of the redaction corpus (``corpora/documents``: news,
letters, statements, invoices, forms), with its names, addresses and account numbers.
``--profile`` adds each recogniser's seconds at 10k, 30k and 100k characters of each page, and
how much they grew from 30k to 100k (3.3x is linear).
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpora.documents.kinds import documents
from pressroom.errors import TextLimit
from pressroom.models import Box, PageInfo, Word
from pressroom.redact.detect import Finding
from pressroom.redact.detect.accounts import AccountNumberRecognizer
from pressroom.redact.detect.addresses import AddressRecognizer
from pressroom.redact.detect.detector import (
    Detector,
    extend_names,
    merge_spans,
    name_tokens,
    propagate_text,
    resolve,
)
from pressroom.redact.detect.name_words import census
from pressroom.redact.detect.names import NameRecognizer
from pressroom.redact.detection import Hit, detect
from pressroom.redact.findings import page_findings
from pressroom.redact.plan import covered_words
from pressroom.redact.scan import PageScan, _check_read
from pressroom.settings import Limits

TARGET = 10.0
CHAR_W, LINE_H = 6.0, 12.0
WRAP = 100  # characters a line on the pages of words


def _repeat(unit: str, n: int) -> str:
    return (unit * (n // len(unit) + 1))[:n].rstrip()


def _wrap(words: list[str], n: int) -> str:
    """Words in lines of about ``WRAP`` characters, at most ``n`` characters in all."""
    lines: list[str] = []
    line: list[str] = []
    size = 0
    for w in words:
        if size + len(w) + 1 > n:
            break
        if line and sum(len(x) + 1 for x in line) + len(w) > WRAP:
            lines.append(" ".join(line))
            line = []
        line.append(w)
        size += len(w) + 1
    lines.append(" ".join(line))
    return "\n".join(lines)


def _census_words(n: int) -> str:
    first, last = census()
    rnd = random.Random(1)
    given, family = sorted(first)[:3000], sorted(last)[:3000]
    pairs = (f"{rnd.choice(given).title()} {rnd.choice(family).title()}" for _ in range(n))
    return _wrap(" ".join(pairs).split(), n)


def _census_repeated(n: int) -> str:
    """Fifty census names written again and again (a roll call, a donor list pasted twice)."""
    first, last = census()
    rnd = random.Random(5)
    given, family = sorted(first)[:200], sorted(last)[:200]
    fifty = [f"{rnd.choice(given).title()} {rnd.choice(family).title()}" for _ in range(50)]
    return _wrap(" ".join(fifty[i % 50] for i in range(n // 12)).split(), n)


def _capital_words(n: int) -> str:
    rnd = random.Random(2)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rnd.choices(letters, k=rnd.randint(3, 9))).title() for _ in range(n // 3)]
    return _wrap(words, n)


def _numbers(n: int, width: int) -> str:
    rnd = random.Random(3)
    low = 10 ** (width - 1) if width > 1 else 1
    return _wrap([str(rnd.randint(low, 10**width - 1)) for _ in range(n // 2)], n)


def _iban(rnd: random.Random) -> str:
    """A valid German IBAN with random account digits, written in groups."""
    bban = "".join(rnd.choices("0123456789", k=18))
    check = 98 - int(bban + "131400") % 97  # "DE" is 13 14
    value = f"DE{check:02d}{bban}"
    return " ".join(value[i : i + 4] for i in range(0, len(value), 4))


def adversarial(n: int) -> dict[str, str]:
    """Pages of at most ``n`` characters, each built to make some recogniser work hard."""
    rnd = random.Random(4)
    sentence = "Alpha Beta said that Gamma Delta wrote this note for the office".split()
    return {
        "tiny words (attacker's sentence)": _wrap(sentence * (n // 8), n),
        "one-letter words (a b c)": _wrap(list("abcdefgh") * (n // 2), n),
        "capitalised words": _capital_words(n),
        "capitalised census names": _census_words(n),
        "census names repeated (50 names)": _census_repeated(n),
        # the security review's page (N3): one name, 12,000 times, 96,198 characters
        "one name repeated (Ann Lee x12,000)": _repeat("Ann Lee ", min(n, 96_199)),
        "digits and spaces (1 2 3)": _wrap([str(i % 10) for i in range(n // 2)], n),
        "digit pairs (12 34 56)": _numbers(n, 2),
        "five-digit runs (ZIP-like)": _numbers(n, 5),
        "run of dots": "." * (n - 1),
        "run of mixed punctuation": _repeat(".,;:-!?/()'\"", n - 1),
        "run of tabs (text only)": "\t" * (n - 1),
        "line without spaces: letters": _repeat("abcdefghij", n - 1),
        "line without spaces: letters+digits": _repeat("A1b2C3d4E5", n - 1),
        "line without spaces: digits": _repeat("1234567890", n - 1),
        "Mr. A- repeated": _repeat("Mr. A-", n - 1),
        "street lines": _wrap("12 Elm Street, Leeds LS1 4DY".split() * (n // 24), n),
        "US addresses": _wrap("1600 Main Street, Springfield, IL 62701".split() * (n // 36), n),
        "IBANs": _wrap(" ".join(_iban(rnd) for _ in range(n // 20)).split(), n),
        # the shapes of lists and tables (redact/detect/structure.py): a scorers' bracket that
        # never closes, initials that never end in a name, ranked lines with a bracket
        "scorers' bracket, unclosed": ("Leeds 2 (" + _repeat("A B C 1, ", n - 10))[: n - 1],
        "runs of initials": _wrap("A B C D E F G H c J K b L".split() * (n // 26), n),
        "ranked results lines": "\n".join(
            f"{i % 999 + 1}. Abc Def Ghi (Xyz) 12.3" for i in range(n // 30)
        )[: n - 1],
    }


def ordinary(words: int = 3000) -> str:
    """About ``words`` words of the redaction corpus, line by line as the pages print them."""
    lines: list[str] = []
    count = 0
    for split in ("dev", "held-out"):
        for doc in documents(split, 27):
            for page in range(len(doc.pages)):
                drawn = [w for w in doc.words if w.page == page]
                line: list[str] = []
                top = None
                for w in drawn:
                    if top is not None and abs(w.box[1] - top) > 2:
                        lines.append(" ".join(line))
                        line = []
                    line.append(w.text)
                    top = w.box[1]
                    count += 1
                lines.append(" ".join(line))
                if count >= words:
                    return "\n".join(lines)
    return "\n".join(lines)


def words_of(text: str) -> list[Word]:
    """The page's words as a reader gives them: one line of the text a line of the page."""
    out: list[Word] = []
    for row, line in enumerate(text.split("\n")):
        col = 0
        for token in line.split(" "):
            if token.strip():
                x0, y0 = col * CHAR_W, row * LINE_H
                box = Box(x0, y0, x0 + len(token) * CHAR_W, y0 + LINE_H * 0.8)
                out.append(Word(token, 95.0, box, (x0, y0 + LINE_H * 0.8), box.width, 10.0, 0, row))
            col += len(token) + 1
    return out


def _timed(fn: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def page_work(detector: Detector, words: list[Word]) -> None:
    """One reading of a page as the worker runs it: detection, then the words it covers."""
    if detector.model is not None:
        detector.model._last = None  # the model's cache of the text it read last
    hits = detect(words, detector)
    values = {h.finding.value for h in hits}
    tokens = name_tokens(h.finding.value for h in hits if h.finding.kind == "name")
    covered_words(words, hits, values, tokens)
    by_kind: dict[str, set[str]] = {}
    for h in hits:
        by_kind.setdefault(h.finding.kind, set()).add(h.finding.value)
    page_findings(_scan(words, hits), by_kind, tokens)


def _scan(words: list[Word], hits: list[Hit]) -> PageScan:
    """The page as pass one leaves it: its own words (72 dpi: a pixel is a point), their hits."""
    info = PageInfo(0, 612.0, 792.0, 0, None, True, sum(len(w.text) for w in words))
    return PageScan(info, 0, 72.0, (612, 792), [], list(words), [], list(hits))


def text_work(detector: Detector, text: str) -> None:
    if detector.model is not None:
        detector.model._last = None
    detector.find_all(text)


def profile(detector: Detector, pages: Callable[[int], dict[str, str]]) -> None:
    """Each recogniser's seconds on each page at three sizes."""
    sizes = (10_000, 30_000, 100_000)
    model = detector.model
    assert model is not None
    found: list[Finding] = []

    def steps(text: str) -> dict[str, Callable[[], object]]:
        def rules() -> None:
            found.clear()
            for r in (NameRecognizer(), AddressRecognizer(), AccountNumberRecognizer()):
                found.extend(r.find(text))

        def ner() -> None:
            model._last = None
            found.extend(model.find(text))

        return {
            "names": lambda: NameRecognizer().find(text),
            "addresses": lambda: AddressRecognizer().find(text),
            "accounts": lambda: AccountNumberRecognizer().find(text),
            "ner (model)": ner,
            "extend_names": lambda: extend_names(text, found),
            "resolve": lambda: resolve(found, model.others(text)),
            "propagate+merge": lambda: merge_spans(text, found + propagate_text(text, found)),
            "_rules": rules,
        }

    table: dict[str, dict[str, list[float]]] = {}
    for n in sizes:
        for name, text in pages(n).items():
            row = table.setdefault(name, {})
            order = steps(text)
            order["_rules"]()
            for step in ("names", "addresses", "accounts", "ner (model)"):
                row.setdefault(step, []).append(_timed(order[step], 1))
            for step in ("extend_names", "resolve", "propagate+merge"):
                row.setdefault(step, []).append(_timed(order[step], 1))
    print()
    print("Per recogniser, seconds at 10k / 30k / 100k characters (growth 30k->100k; 3.3x linear)")
    for name, row in table.items():
        print(f"  {name}")
        for step, secs in row.items():
            grow = secs[2] / secs[1] if secs[1] > 1e-4 else float("nan")
            figures = " ".join(f"{s:8.3f}" for s in secs)
            print(f"    {step:16s} {figures}   x{grow:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=Limits().max_detect_chars)
    parser.add_argument("--rounds", type=int, default=1, help="best of N per page")
    parser.add_argument("--profile", action="store_true", help="each recogniser at 3 sizes")
    args = parser.parse_args()

    limits = Limits(max_detect_chars=args.chars)
    detector = Detector.for_classes(["name", "address", "account-number"])
    detector.find_all("Dear Ms Adaeze Okafor, we paid GB29 NWBK 6016 1331 9268 19.")  # warm
    base_text = ordinary()
    base_words = words_of(base_text)
    base_page = _timed(lambda: page_work(detector, base_words), max(args.rounds, 3))
    base_find = _timed(lambda: text_work(detector, base_text), max(args.rounds, 3))

    print("Detection cost per page: adversarial pages beside an ordinary dense page")
    print(f"  cap {args.chars:,} characters a page; policy name,address,account-number; model on")
    print(
        f"  {'page':38s} {'chars':>8s} {'words':>7s} {'text s':>8s} {'page s':>8s} "
        f"{'x text':>7s} {'x page':>7s}  target: both <{TARGET:g}x"
    )
    print(
        f"  {'ordinary dense page (corpus)':38s} {len(base_text):8,d} {len(base_words):7,d} "
        f"{base_find:8.3f} {base_page:8.3f} {1.0:7.1f} {1.0:7.1f}"
    )
    worst = 0.0
    failed = 0
    pages = adversarial(args.chars)
    pages["1 MB of capitalised words"] = _capital_words(1_000_000)
    for name, text in pages.items():
        words = words_of(text)
        try:
            _check_read(0, words, words, limits)
            if len(text) > limits.max_detect_chars:  # what the CLI path refuses the same way
                raise TextLimit(name)
        except TextLimit:
            print(
                f"  {name:38s} {len(text):8,d} {len(words):7,d} {'-':>8s} {'-':>8s} "
                f"{'-':>7s} {'-':>7s}  PASS (refused TEXT_LIMIT)"
            )
            continue
        find = _timed(lambda: text_work(detector, text), args.rounds)  # noqa: B023
        page = _timed(lambda: page_work(detector, words), args.rounds)  # noqa: B023
        by_text, by_page = find / base_find, page / base_page
        worst = max(worst, by_text, by_page)
        verdict = "PASS" if max(by_text, by_page) < TARGET else "FAIL"
        failed += verdict == "FAIL"
        print(
            f"  {name:38s} {len(text):8,d} {len(words):7,d} {find:8.3f} {page:8.3f} "
            f"{by_text:7.1f} {by_page:7.1f}  {verdict}",
            flush=True,
        )
    print(f"  worst {worst:.1f}x the ordinary page; {failed} page(s) over {TARGET:g}x")
    if args.profile:
        profile(detector, adversarial)


if __name__ == "__main__":
    main()
