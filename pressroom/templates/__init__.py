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


def _band(raw: object, where: str) -> Band:
    if raw is None:
        return Band()
    if not isinstance(raw, dict):
        raise TemplateError(f"template section [{where}] must be a table")
    height = float(raw.get("height", 0))
    if not 0 <= height <= 200:
        raise TemplateError(f"template [{where}] height must be between 0 and 200 points")
    return Band(
        height=height,
        left=_check_text(str(raw.get("left", "")), f"{where}.left"),
        centre=_check_text(str(raw.get("centre", "")), f"{where}.centre"),
        right=_check_text(str(raw.get("right", "")), f"{where}.right"),
        font_size=float(raw.get("font_size", 9)),
        logo=bool(raw.get("logo", False)),
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
    logo: bytes | None = None
    logo_name = raw.get("logo")
    if logo_name:
        logo_path = (folder / str(logo_name)).resolve()
        if folder.resolve() not in logo_path.parents or not logo_path.is_file():
            raise TemplateError("template logo must be a file inside the template folder")
        logo = logo_path.read_bytes()
    cover_raw = raw.get("cover")
    cover = None
    if cover_raw:
        cover = Cover(
            heading=_check_text(str(cover_raw.get("heading", "{organisation}")), "cover.heading"),
            lines=tuple(_check_text(str(x), "cover.lines") for x in cover_raw.get("lines", [])),
        )
    band = colours.get("band")
    output = _output(raw.get("output"))
    try:
        return Template(
            name=str(raw["name"]),
            version=str(raw["version"]),
            organisation=str(raw.get("organisation", "")),
            default_title=str(raw.get("default_title", "Document")),
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
        if not root.is_dir():
            continue
        for child in sorted(root.iterdir()):
            if (child / "template.toml").is_file():
                found[child.name] = child
    return found


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
