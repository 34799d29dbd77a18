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
