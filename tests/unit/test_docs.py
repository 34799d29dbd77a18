"""The documentation cannot drift from the CLI it describes, nor point at missing anchors."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

from pressroom.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
CLI_DOC = ROOT / "docs" / "cli.md"
PAGES = [
    ROOT / "README.md",
    ROOT / "ARCHITECTURE.md",
    ROOT / "bench" / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
]
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


def _section(text: str, command: str) -> str:
    """The part of cli.md under the ``## `pressroom COMMAND…``` heading."""
    match = re.search(rf"^## `pressroom {command}\b.*?(?=^## |\Z)", text, re.S | re.M)
    assert match, f"docs/cli.md has no section for `pressroom {command}`"
    return match.group(0)


def _code(text: str) -> str:
    """Only what is set as code: a flag named in prose does not count as documented."""
    return "\n".join(re.findall(r"`([^`\n]+)`", text) + FENCE.findall(text))


def test_cli_doc_lists_every_command_and_option() -> None:
    text = CLI_DOC.read_text()
    for path, parser in _commands(build_parser()):
        code = _code(_section(text, path[0]) if path else text)
        for word in [*path[1:], *(f for a in parser._actions for f in a.option_strings)]:
            if word in ("-h", "--help"):
                continue
            assert re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", code), (
                f"`pressroom {' '.join(path)}`: {word} is not in docs/cli.md"
            )


def _anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#+ (.+)$", FENCE.sub("", page.read_text()), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_links_between_pages_resolve() -> None:
    broken = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", FENCE.sub("", page.read_text())):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            dest = (page.parent / file).resolve() if file else page
            if not dest.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
                continue
            if anchor and anchor not in _anchors(dest):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, broken
