"""Templates: built-ins load, identity follows content, mistakes are refused clearly."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pressroom.errors import UnknownTemplate
from pressroom.templates import BUILTIN_DIR, load_template, resolve_template, template_folders


def test_builtins_are_plain_and_sample() -> None:
    assert {"plain", "sample"} <= set(template_folders())
    plain = resolve_template(None)
    assert plain.name == "plain"
    assert plain.header.height == 0 and plain.footer.height == 0 and plain.cover is None
    sample = resolve_template("sample")
    assert sample.cover is not None and sample.logo is not None and sample.header.height > 0


def test_editing_in_place_changes_identity_even_with_the_same_version(tmp_path: Path) -> None:
    folder = tmp_path / "brand"
    shutil.copytree(BUILTIN_DIR / "sample", folder)
    before = load_template(folder)
    toml = folder / "template.toml"
    toml.write_text(toml.read_text().replace("Harbour Lane Services", "Harbour Lane Svcs"))
    after = load_template(folder)
    assert after.version == before.version
    assert after.identity != before.identity
    (folder / "logo.png").write_bytes((folder / "logo.png").read_bytes() + b"\0")
    assert load_template(folder).identity != after.identity


def test_unknown_template_is_refused() -> None:
    with pytest.raises(UnknownTemplate) as info:
        resolve_template("no-such-brand")
    assert info.value.code == "UNKNOWN_TEMPLATE"
    assert "plain" in info.value.message


def test_unknown_placeholder_is_refused_at_load(tmp_path: Path) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "template.toml").write_text(
        'name = "bad"\nversion = "1"\n[footer]\nheight = 20\nleft = "{author}"\n'
    )
    with pytest.raises(UnknownTemplate, match=r"\{author\}"):
        load_template(folder)


def test_template_folder_given_as_path(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    shutil.copytree(BUILTIN_DIR / "plain", folder)
    assert resolve_template(str(folder)).name == "plain"


def test_logo_outside_the_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "evil"
    folder.mkdir()
    (folder / "template.toml").write_text(
        'name = "evil"\nversion = "1"\nlogo = "../../etc/passwd"\n'
    )
    with pytest.raises(UnknownTemplate, match="inside the template folder"):
        load_template(folder)


BROKEN = [
    ('name = "b"\nversion = "1"\n[header]\nheight = "tall"\n', "height"),
    ('name = "b"\nversion = "1"\n[footer]\nheight = 900\n', "height"),
    ('name = "b"\nversion = "1"\n[header]\nfont_size = true\n', "font_size"),
    ('name = "b"\nversion = "1"\n[header]\nfont_size = 0\n', "font_size"),
    ('name = "b"\nversion = "1"\n[header]\nlogo = "yes"\n', "logo"),
    ('name = "b"\nversion = "1"\n[header]\nleft = 3\n', "left"),
    ('name = "b"\nversion = "1"\nheader = 1\n', "[header]"),
    ('name = "b"\nversion = "1"\ncolours = "red"\n', "[colours]"),
    ('name = "b"\nversion = "1"\n[colours]\nband = "red"\n', "band"),
    ('name = "b"\nversion = "1"\nlogo = 5\n', "logo"),
    ('name = "b"\nversion = "1"\ncover = "yes"\n', "[cover]"),
    ('name = "b"\nversion = "1"\n[cover]\nlines = [1, 2]\n', "lines"),
    ('name = "b"\nversion = "1"\n[cover]\nheading = ["x"]\n', "heading"),
    ('name = ["b"]\nversion = "1"\n', "name"),
    ('name = "b"\n', "version"),
    ('version = "1"\n', "name"),
    ('name = "b"\nversion = "1"\norganisation = 7\n', "organisation"),
    ('name = "b"\nversion = "1"\n[output]\ntype = "tiff"\n', "type"),
    ('name = "b"\nversion = "1"\n[redaction]\nbox_quantum = "wide"\n', "box_quantum"),
    ('name = "b" version = 1', "parse"),
]


@pytest.mark.parametrize(("toml", "named"), BROKEN)
def test_a_broken_template_is_bad_template_naming_the_key(
    tmp_path: Path, toml: str, named: str
) -> None:
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "template.toml").write_text(toml)
    with pytest.raises(UnknownTemplate) as info:  # a PressroomError: one line, never a traceback
        load_template(folder)
    assert info.value.code == "BAD_TEMPLATE" and info.value.http_status == 400
    assert info.value.exit_code == 2
    assert named in info.value.message


def test_a_version_written_as_a_number_reads_as_text(tmp_path: Path) -> None:
    folder = tmp_path / "n"
    folder.mkdir()
    (folder / "template.toml").write_text('name = "n"\nversion = 2\n')
    assert load_template(folder).identity.startswith("n@2+")
