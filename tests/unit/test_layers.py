"""Imports go one way, held by a test: every module of the package sits in one layer of
ARCHITECTURE.md, imports only from its own layer or those below, never along a forbidden pair,
and no two modules (nor two folders) import each other, however indirectly.

Every import counts: at module level, inside a function (a lazy import does not break a
circle, it hides one), under ``TYPE_CHECKING``, and ``from package import module`` as an import
of that module. The table below is ARCHITECTURE.md's, and a test holds the two together."""

from __future__ import annotations

import ast
import shutil
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import pressroom

PACKAGE = Path(pressroom.__file__).parent
ROOT = PACKAGE.parent

# top to bottom; a module's layer is that of the longest prefix naming it
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("commands", ("cli",)),
    ("composition", ("app",)),
    ("faces", ("api", "desk", "client", "web")),  # web: the kit under both faces
    (
        "services",
        (
            "intake", "review", "control", "deskstore", "worker", "notify", "housekeeping",
            "lifecycle",
            "offline", "hotfolder", "verify", "backup", "effective", "service", "jobs.admission",
            "processing", "testing", "bench", "errorcodes",
            "rewrap",
        ),
    ),
    ("pipeline", ("pipeline", "redact")),
    (
        "ports and adapters",
        ("jobs", "memstore", "storage", "engines", "templates", "signing", "scratch",
         "deskport", "scanning"),
    ),
    (
        "core values",
        (
            "", "models", "corrections", "jsondepth", "errors", "settings", "stages", "orders",
            "outcomes", "jobs.model", "pixels", "tenants", "keys", "languages", "times", "fsutil",
            "logs", "tracing", "hints", "labels", "synth", "parentwatch",
            "kek",
        ),
    ),
)  # fmt: skip

# pairs no module of the first may import from the second, whatever their layers say
FORBIDDEN: tuple[tuple[str, str], ...] = (
    # the two faces share only the web kit; the composition module alone knows both
    ("api", "desk"),
    ("desk", "api"),
    ("api", "app"),
    ("desk", "app"),
    ("api", "cli"),
    ("desk", "cli"),
    ("client", "api"),
    ("client", "desk"),
    ("web", "api"),
    ("web", "desk"),
    ("desk", "jobs"),  # the desk goes through its port (deskport), never the store
    ("desk", "storage"),
    # the core pipeline does not know its variant, nor the queue, nor the blobs
    ("pipeline", "redact"),
    ("pipeline", "jobs"),
    ("pipeline", "storage"),
    ("redact", "jobs"),
    ("redact", "storage"),
    ("engines", "pipeline"),
    # the queue knows no documents and no blobs; the blobs know no queue
    ("jobs", "pipeline"),
    ("jobs", "storage"),
    ("jobs", "engines"),
    ("storage", "jobs"),
    ("engines", "jobs"),
    ("engines", "storage"),
    # the offline use case stands below its commands
    ("offline", "cli"),
    ("service", "api"),
)


def module_names(package: Path) -> dict[str, Path]:
    """Every module of the package by its dotted name below ``pressroom`` ("" for the package)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(package: Path) -> list[tuple[str, str, int]]:
    """(importer, imported, line) for every import of one of the package's own modules,
    wherever it stands in the file; ``from a import b`` imports ``a.b`` when that is a module."""
    names = module_names(package)
    found = []
    for name, path in names.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            else:
                continue
            for target in targets:
                if target == "pressroom" or target.startswith("pressroom."):
                    inner = target.removeprefix("pressroom").removeprefix(".")
                    if inner in names and inner != name:
                        found.append((name, inner, node.lineno))
    return sorted(set(found))


def _under(name: str, prefix: str) -> bool:
    """``name`` is the module ``prefix`` or inside it ("": the package's own ``__init__``)."""
    return name == prefix or (prefix != "" and name.startswith(prefix + "."))


def layer_of(name: str) -> int | None:
    best: tuple[int, int] | None = None
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if _under(name, prefix) and (best is None or len(prefix) > best[1]):
                best = (rank, len(prefix))
    return None if best is None else best[0]


def _root(name: str, prefixes: Iterable[str]) -> str | None:
    """The prefix of a FORBIDDEN side naming ``name`` (the longest), if any."""
    named = [p for p in prefixes if _under(name, p)]
    return max(named, key=len) if named else None


def breaches(package: Path) -> list[str]:
    """Every import that climbs a layer or runs along a forbidden pair, as ``a:line -> b``."""
    out = []
    for importer, imported, line in imports(package):
        mine, theirs = layer_of(importer), layer_of(imported)
        where = f"pressroom.{importer}:{line} -> pressroom.{imported}"
        if mine is None or theirs is None:
            continue  # unplaced: its own test says so
        if theirs < mine:
            out.append(f"{where} (up: {LAYERS[mine][0]} -> {LAYERS[theirs][0]})")
        for first, second in FORBIDDEN:
            if _under(importer, first) and _under(imported, second):
                # jobs.model is a core value every layer may use, the desk excepted
                if second == "jobs" and imported == "jobs.model" and first != "desk":
                    continue
                out.append(f"{where} (never {first} -> {second})")
    return out


def circles(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected groups of more than one node (Tarjan, iterative)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        if a != b:
            graph[a].add(b)
            graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            node, todo = work[-1]
            step = next(todo, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    group.append(top)
                    if top == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def folder_of(name: str) -> str:
    return name.split(".")[0]


def test_every_module_sits_in_a_layer() -> None:
    assert [n for n in module_names(PACKAGE) if layer_of(n) is None] == []


def test_imports_point_down_and_never_along_a_forbidden_pair() -> None:
    assert breaches(PACKAGE) == []


def test_no_two_modules_import_each_other_however_indirectly() -> None:
    # a package importing its own submodule (an __init__ re-export) is not a circle
    edges = [(a, b) for a, b, _ in imports(PACKAGE) if not _under(b, a)]
    assert circles(edges) == []


def test_no_two_folders_import_each_other() -> None:
    edges = [(folder_of(a), folder_of(b)) for a, b, _ in imports(PACKAGE)]
    assert circles(edges) == []


def test_the_layers_are_architecture_mds() -> None:
    """Each layer's name and each module or folder it holds is written in ARCHITECTURE.md."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    missing = [name for name, _ in LAYERS if name not in text]
    for _, prefixes in LAYERS:
        for prefix in prefixes:
            if not prefix:
                continue
            path = prefix.replace(".", "/")
            shown = f"{path}/" if (PACKAGE / path).is_dir() else f"{path}.py"
            if shown not in text:
                missing.append(shown)
    assert missing == []


def test_an_upward_import_added_anywhere_is_caught(tmp_path: Path) -> None:
    """The contract can fail: a copy of the package with one lazy import added inside a
    function of the pipeline's core (the variant, the API) breaks it three ways."""
    copy = tmp_path / "pressroom"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.ttf", "*.gz"))
    core = copy / "pipeline" / "core.py"
    core.write_text(
        core.read_text(encoding="utf-8")
        + "\n\ndef _late() -> None:\n"
        + "    from pressroom.redact import engine  # noqa: F401\n"
        + "    if False:\n"
        + "        import pressroom.api.app  # noqa: F401\n",
        encoding="utf-8",
    )
    found = breaches(copy)
    assert any("pipeline.core" in b and "never pipeline -> redact" in b for b in found)
    assert any("pipeline.core" in b and "up: pipeline -> faces" in b for b in found)
    edges = [(a, b) for a, b, _ in imports(copy) if not _under(b, a)]
    assert circles(edges) != []  # redact.engine imports pipeline.core: now a circle


def test_architecture_md_reads_whole_from_a_fresh_clone() -> None:
    """It names no file outside the repository (a clone has no ``../shared``)."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert "../" not in text


LONG = 500  # lines; a module past it says why in its docstring, in a line of its own


def test_a_module_over_500_lines_says_why() -> None:
    """One concept per module: a module that grows past ``LONG`` lines either is cut along its
    use cases or says, in its docstring, ``Over 500 lines: <why>``."""
    unexplained = []
    for name, path in module_names(PACKAGE).items():
        text = path.read_text(encoding="utf-8")
        if text.count("\n") <= LONG:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if "Over 500 lines: " not in doc:
            unexplained.append(f"pressroom.{name} ({text.count(chr(10))} lines)")
    assert unexplained == []
