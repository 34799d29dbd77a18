"""Build the fonts Pressroom ships (pressroom/fonts/Pressroom{Sans,Serif,Mono}-*.ttf) from
Liberation 2.1.5 (SIL Open Font License 1.1; Debian's fonts-liberation2 package), metric-
compatible with Helvetica/Arial, Times and Courier: each cut down to the glyphs of the Latin
text encodings a PDF's simple fonts use (WinAnsi, MacRoman, Standard, ISO Latin-1) and stripped
of hinting, so one costs about 20 KB, not 400. A modified font may not carry the Reserved Font
Names (Liberation; Arimo, Tinos, Cousine), so these are renamed "Pressroom Sans/Serif/Mono";
the copyright and licence names stay in each font, and the licence beside them
(pressroom/fonts/OFL.txt).

    apt-get install fonts-liberation2   # or: apt-get download fonts-liberation2; dpkg-deb -x
    .venv-test/bin/python scripts/build_fonts.py [LIBERATION_DIR [DEJAVU_SANS_TTF]]

Pressroom Dingbats is DejaVu Sans 2.37 (fonts-dejavu-core: Bitstream Vera licence, DejaVu's
changes public domain), cut to the glyphs of ZapfDingbats' codes and renamed, as the Vera
licence asks of a modified font.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fontTools import subset
from fontTools.agl import toUnicode
from fontTools.encodings.MacRoman import MacRoman
from fontTools.encodings.StandardEncoding import StandardEncoding

OUT = Path(__file__).resolve().parent.parent / "pressroom" / "fonts"
FAMILIES = ("Sans", "Serif", "Mono")
STYLES = ("Regular", "Bold", "Italic", "BoldItalic")


def repertoire() -> set[int]:
    """Every code point the simple-font encodings can name."""
    points = {b for b in range(0x20, 0x7F)} | set(range(0xA0, 0x100))
    points |= {ord(bytes([b]).decode("cp1252", "ignore") or " ") for b in range(0x80, 0xA0)}
    for name in list(StandardEncoding) + list(MacRoman):
        if name and name != ".notdef":
            text = toUnicode(name)
            if len(text) == 1:
                points.add(ord(text))
    return points


def rename(font: object, family: str, style: str) -> None:
    """The family, full, PostScript and unique names say Pressroom, never Liberation."""
    table = font["name"]  # type: ignore[index]
    spaced = {"Regular": "Regular", "Bold": "Bold", "Italic": "Italic", "BoldItalic": "Bold Italic"}
    names = {
        1: f"Pressroom {family}",
        3: f"Pressroom {family} {spaced[style]} 2.1.5-pressroom1",
        4: f"Pressroom {family} {spaced[style]}",
        6: f"Pressroom{family}-{style}",
        16: f"Pressroom {family}",
        17: spaced[style],
    }
    for record in list(table.names):
        if record.nameID in names:
            table.setName(
                names[record.nameID],
                record.nameID,
                record.platformID,
                record.platEncID,
                record.langID,
            )
        elif record.nameID not in (0, 2, 5, 7, 8, 9, 11, 12, 13, 14):
            table.removeNames(nameID=record.nameID)
    for record in table.names:
        text = record.toUnicode()
        if record.nameID not in (0, 7, 13) and any(
            reserved in text for reserved in ("Liberation", "Arimo", "Tinos", "Cousine")
        ):
            raise SystemExit(f"name {record.nameID} still carries a reserved name: {text}")


def dingbats(dejavu: Path) -> None:
    """Pressroom Dingbats: DejaVu Sans's glyphs for ZapfDingbats' codes (a form's check marks,
    crosses, circles, stars), for the ZapfDingbats a source leaves out. A symbolic font: its
    (3,0) and (1,0) cmaps map the codes themselves, its (3,1) cmap their Unicode."""
    from fontTools.ttLib.tables._c_m_a_p import cmap_format_4

    sys.path.insert(0, str(OUT.parent.parent))
    from pressroom.engines.fonts import ZAPF_UNICODE

    options = subset.Options()
    options.hinting = False
    options.name_IDs = ["*"]
    options.notdef_outline = True
    options.recalc_timestamp = False
    options.layout_features = []
    font = subset.load_font(str(dejavu), options)
    sub = subset.Subsetter(options)
    sub.populate(unicodes=set(ZAPF_UNICODE.values()))
    sub.subset(font)
    best = font.getBestCmap()
    by_code = {c: best[u] for c, u in ZAPF_UNICODE.items() if u in best}
    for platform, encoding, offset in ((3, 0, 0xF000), (1, 0, 0)):
        table = cmap_format_4(4)
        table.platformID, table.platEncID, table.language = platform, encoding, 0
        table.cmap = {offset + c: g for c, g in by_code.items()}
        font["cmap"].tables.append(table)
    table = font["name"]
    for record in list(table.names):
        if record.nameID in (1, 3, 4, 6, 16):
            value = {
                1: "Pressroom Dingbats",
                3: "Pressroom Dingbats 2.37-pressroom1",
                4: "Pressroom Dingbats",
                6: "PressroomDingbats-Regular",
                16: "Pressroom Dingbats",
            }[record.nameID]
            table.setName(value, record.nameID, record.platformID, record.platEncID, record.langID)
        elif record.nameID not in (0, 2, 5, 7, 8, 9, 11, 12, 13, 14):
            table.removeNames(nameID=record.nameID)
    for record in table.names:
        if record.nameID not in (0, 7, 13) and (
            "Vera" in record.toUnicode() or "Bitstream" in record.toUnicode()
        ):
            raise SystemExit(f"name {record.nameID} still carries a reserved name")
    out = OUT / "PressroomDingbats-Regular.ttf"
    font.save(str(out))
    missing = sorted(hex(c) for c in ZAPF_UNICODE if c not in by_code)
    print(f"{out.name}: {out.stat().st_size:,} bytes; codes without a glyph: {missing}")


def main(argv: list[str]) -> int:
    source = Path(argv[1] if len(argv) > 1 else "/usr/share/fonts/truetype/liberation2")
    points = repertoire()
    for family in FAMILIES:
        for style in STYLES:
            name = f"Liberation{family}-{style}.ttf"
            ours = f"Pressroom{family}-{style}.ttf"
            options = subset.Options()
            options.hinting = False
            options.desubroutinize = True
            options.name_IDs = ["*"]  # the copyright and licence names stay with the font
            options.notdef_outline = True
            options.recalc_timestamp = False
            options.layout_features = []
            font = subset.load_font(str(source / name), options)
            sub = subset.Subsetter(options)
            sub.populate(unicodes=points)
            sub.subset(font)
            rename(font, family, style)
            subset.save_font(font, str(OUT / ours), options)
            print(f"{ours}: {(OUT / ours).stat().st_size:,} bytes")
    dingbats(Path(argv[2] if len(argv) > 2 else "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
