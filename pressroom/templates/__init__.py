"""Brand templates: a folder with ``template.toml`` and assets, identified by content hash."""

from __future__ import annotations

import hashlib
import re
import string
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pressroom.errors import TemplateError, UnknownTemplate

BUILTIN_DIR = Path(__file__).parent / "builtin"
DEFAULT_TEMPLATE = "plain"
PLACEHOLDERS = frozenset({"title", "date", "page", "pages", "page_count", "organisation"})

RGB = tuple[float, float, float]


@dataclass(frozen=True, slots=True)
class Band:
    height: float = 0.0  # points
    left: str = ""
    centre: str = ""
    right: str = ""
    font_size: float = 9.0
    logo: bool = False


@dataclass(frozen=True, slots=True)
class Cover:
    heading: str
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Template:
    name: str
    version: str
    organisation: str
    default_title: str
    band_colour: RGB | None
    band_text_colour: RGB
    accent_colour: RGB
    header: Band
    footer: Band
    cover: Cover | None
    logo: bytes | None
    content_hash: str
    # redaction boxes widened to whole multiples of this many points (0: the value's own
    # width), so a box's width tells less of how long the value was
    box_quantum: float = 0.0
    # how the bands fit on a page that keeps its size: "inside" (the source scaled into the
    # area between them) or "margin" (over the page's own margins where they are blank,
    # inside where they are not)
    fit: str = "inside"
    # the defaults a job may override: "pdf" or "pdfa"; whether a sidecar text is written
    output_type: str = "pdf"
    sidecar: bool = False
    # the OCR languages of a job that names none ([ocr] languages = "eng+deu"); () for the
    # service's setting
    languages: tuple[str, ...] = ()

    @property
    def identity(self) -> str:
        """``name@version+hash``: an in-place edit changes it even when the version does not."""
        return f"{self.name}@{self.version}+{self.content_hash[:12]}"


def content_hash(folder: Path) -> str:
    """sha256 over every file's relative path and bytes, in a stable order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if rel.startswith(".") or "__pycache__" in rel:
            continue
        data = path.read_bytes()
        digest.update(rel.encode() + b"\0" + str(len(data)).encode() + b"\0")
        digest.update(data)
    return digest.hexdigest()


def _colour(value: object, field: str) -> RGB:
    if not isinstance(value, str) or len(value) != 7 or not value.startswith("#"):
        raise TemplateError(f"template colour {field} must look like #RRGGBB")
    try:
        r, g, b = (int(value[i : i + 2], 16) for i in (1, 3, 5))
    except ValueError:
        raise TemplateError(f"template colour {field} must look like #RRGGBB") from None
    return (r / 255.0, g / 255.0, b / 255.0)


def _check_text(text: str, where: str) -> str:
    for _, name, _, _ in string.Formatter().parse(text):
        if name is not None and name not in PLACEHOLDERS:
            raise TemplateError(
                f"template field {where} uses {{{name}}}; allowed: "
                + ", ".join("{" + p + "}" for p in sorted(PLACEHOLDERS))
            )
    return text


def _number(raw: dict[str, object], key: str, default: float, where: str, top: float) -> float:
    """A number of points from 0 to ``top``; a string, a boolean or a table is refused."""
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= top:
        raise TemplateError(f"template [{where}] {key} must be a number from 0 to {top:g}")
    return float(value)


def _text(raw: dict[str, object], key: str, default: str | None, where: str) -> str:
    """A string field; ``default`` None means the key is required."""
    if key not in raw and default is not None:
        return default
    if key not in raw:
        raise TemplateError(f"template.toml lacks {key!r}")
    value = raw[key]
    if not isinstance(value, str):
        raise TemplateError(f"template {where}{key} must be a string")
    return value


def _font_size(raw: dict[str, object], where: str) -> float:
    size = _number(raw, "font_size", 9, where, 72)
    if size <= 0:
        raise TemplateError(f"template [{where}] font_size must be a number from 0 to 72")
    return size


def _flag(raw: dict[str, object], key: str, where: str) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise TemplateError(f"template [{where}] {key} must be true or false")
    return value


def _band(raw: object, where: str) -> Band:
    if raw is None:
        return Band()
    if not isinstance(raw, dict):
        raise TemplateError(f"template section [{where}] must be a table")
    return Band(
        height=_number(raw, "height", 0, where, 200),
        left=_check_text(_text(raw, "left", "", f"[{where}] "), f"{where}.left"),
        centre=_check_text(_text(raw, "centre", "", f"[{where}] "), f"{where}.centre"),
        right=_check_text(_text(raw, "right", "", f"[{where}] "), f"{where}.right"),
        font_size=_font_size(raw, where),
        logo=_flag(raw, "logo", where),
    )


def _box_quantum(raw: object) -> float:
    if raw is None:
        return 0.0
    if not isinstance(raw, dict):
        raise TemplateError("template section [redaction] must be a table")
    value = raw.get("box_quantum", 0)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 144:
        raise TemplateError("template [redaction] box_quantum must be a number of points, 0 to 144")
    return float(value)


FITS = ("inside", "margin")
OUTPUT_TYPES = ("pdf", "pdfa")


def _output(raw: object) -> tuple[str, bool]:
    if raw is None:
        return OUTPUT_TYPES[0], False
    if not isinstance(raw, dict):
        raise TemplateError("template section [output] must be a table")
    kind = raw.get("type", OUTPUT_TYPES[0])
    if kind not in OUTPUT_TYPES:
        raise TemplateError('template [output] type must be "pdf" or "pdfa"')
    sidecar = raw.get("sidecar", False)
    if not isinstance(sidecar, bool):
        raise TemplateError("template [output] sidecar must be true or false")
    return str(kind), sidecar


def _languages(raw: object) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise TemplateError("template section [ocr] must be a table")
    value = raw.get("languages", "")
    if not isinstance(value, str):
        raise TemplateError('template [ocr] languages must be a string such as "eng+deu"')
    if not value:
        return ()
    from pressroom.errors import UnsupportedLanguage
    from pressroom.languages import parse_languages

    try:
        return parse_languages(value)
    except UnsupportedLanguage as exc:
        raise TemplateError(f"template [ocr] languages: {exc.message}") from None


def _fit(raw: object) -> str:
    if raw is None:
        return FITS[0]
    if not isinstance(raw, dict):
        raise TemplateError("template section [page] must be a table")
    value = raw.get("fit", FITS[0])
    if value not in FITS:
        raise TemplateError('template [page] fit must be "inside" or "margin"')
    return str(value)


def load_template(folder: Path) -> Template:
    toml_path = folder / "template.toml"
    if not toml_path.is_file():
        raise UnknownTemplate("no template.toml in the template folder")
    try:
        raw = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TemplateError(f"template.toml does not parse: {exc}") from None
    colours = raw.get("colours", {})
    if not isinstance(colours, dict):
        raise TemplateError("template section [colours] must be a table")
    logo: bytes | None = None
    logo_name = _text(raw, "logo", "", "")
    if logo_name:
        logo_path = (folder / logo_name).resolve()
        if folder.resolve() not in logo_path.parents or not logo_path.is_file():
            raise TemplateError("template logo must be a file inside the template folder")
        logo = logo_path.read_bytes()
    cover_raw = raw.get("cover")
    cover = None
    if cover_raw is not None and not isinstance(cover_raw, dict):
        raise TemplateError("template section [cover] must be a table")
    if cover_raw:
        lines = cover_raw.get("lines", [])
        if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
            raise TemplateError("template [cover] lines must be a list of strings")
        cover = Cover(
            heading=_check_text(
                _text(cover_raw, "heading", "{organisation}", "[cover] "), "cover.heading"
            ),
            lines=tuple(_check_text(x, "cover.lines") for x in lines),
        )
    band = colours.get("band")
    output = _output(raw.get("output"))
    version = raw.get("version")
    if isinstance(version, int | float) and not isinstance(version, bool):
        raw = {**raw, "version": str(version)}  # version = 2 reads as well as version = "2"
    try:
        return Template(
            name=_text(raw, "name", None, ""),
            version=_text(raw, "version", None, ""),
            organisation=_text(raw, "organisation", "", ""),
            default_title=_text(raw, "default_title", "Document", ""),
            band_colour=_colour(band, "band") if band else None,
            band_text_colour=_colour(colours.get("band_text", "#000000"), "band_text"),
            accent_colour=_colour(colours.get("accent", "#000000"), "accent"),
            header=_band(raw.get("header"), "header"),
            footer=_band(raw.get("footer"), "footer"),
            cover=cover,
            logo=logo,
            content_hash=content_hash(folder),
            box_quantum=_box_quantum(raw.get("redaction")),
            fit=_fit(raw.get("page")),
            output_type=output[0],
            sidecar=output[1],
            languages=_languages(raw.get("ocr")),
        )
    except KeyError as exc:
        raise TemplateError(f"template.toml lacks {exc.args[0]!r}") from None


def template_folders(extra: Iterable[Path] = ()) -> dict[str, Path]:
    """Every known template by name; folders given later override built-ins of the same name."""
    found: dict[str, Path] = {}
    for root in (BUILTIN_DIR, *extra):
        found.update(template_folders_of(root))
    return found


def builtin_names() -> frozenset[str]:
    """The templates shipped with Pressroom (open to every tenant under either policy)."""
    return frozenset(template_folders_of(BUILTIN_DIR))


def template_folders_of(root: Path) -> dict[str, Path]:
    if not root.is_dir():
        return {}
    return {c.name: c for c in sorted(root.iterdir()) if (c / "template.toml").is_file()}


def templates_for(own: frozenset[str] | None, any_list: bool, policy: str) -> frozenset[str] | None:
    """The templates a tenant may use, None for every registered one: its own allow-list when
    it has one; else, under the ``builtin`` policy once any tenant has a list, only the
    built-in templates (a tenant must not print in another customer's brand by guessing its
    name); else every template."""
    if own is not None:
        return own
    if policy == "builtin" and any_list:
        return builtin_names()
    return None


REGISTERED_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}\Z")  # \Z: no newline after


def registered_template(name: str | None, extra: Iterable[Path] = ()) -> Template:
    """A template by registered name only, as the API and its workers take it: never a path
    (``../../srv/evil`` or ``/srv/evil`` with a template.toml of its own), and an unknown name
    says nothing of the names there are (another tenant's brand is not for listing)."""
    name = name or DEFAULT_TEMPLATE
    if not REGISTERED_NAME.match(name):
        raise UnknownTemplate("template must be a registered template's name (a-z, 0-9, _ and -)")
    folders = template_folders(extra)
    if name not in folders:
        raise UnknownTemplate("unknown template")
    return load_template(folders[name])


def resolve_template(name: str | None, extra: Iterable[Path] = ()) -> Template:
    """A template by name (a built-in or one in ``extra``), or a path to a template folder."""
    name = name or DEFAULT_TEMPLATE
    candidate = Path(name)
    if ("/" in name or name.startswith(".")) and (candidate / "template.toml").is_file():
        return load_template(candidate)
    folders = template_folders(extra)
    if name not in folders:
        raise UnknownTemplate(
            f"unknown template {name!r}; known: {', '.join(sorted(folders)) or 'none'}"
        )
    return load_template(folders[name])
