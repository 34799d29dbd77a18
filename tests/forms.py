"""PDFs with forms and annotations, built here (CI fetches nothing): a filled text field with no
appearance of its own, a ticked checkbox, a stamp, a hidden and a NoView annotation, a sticky
note, and an XFA-only form."""

from __future__ import annotations

from pathlib import Path

import pikepdf
from pikepdf import Array, Dictionary, Name, String

from pressroom.synth import text_pdf

FIELD_VALUE = "2140 FIDE, Section A"
STAMP = "APPROVED BY QUINCE"  # Quince: a surname a redaction of names burns
HIDDEN = "HIDDENWORD"
NOVIEW = "NOVIEWWORD"
NOTE = "Call Marguerite back"
INTRO = "Membership application form for the club, please fill in every field below."
CHECKBOX_RECT = (72.0, 560.0, 84.0, 572.0)  # PDF points, y up


def _form_xobject(
    pdf: pikepdf.Pdf, ops: bytes, bbox: tuple[float, float, float, float], font: pikepdf.Object
) -> pikepdf.Stream:
    return pdf.make_stream(
        ops,
        Type=Name.XObject,
        Subtype=Name.Form,
        BBox=Array(list(bbox)),
        Resources=Dictionary(Font=Dictionary(Hv=font)),
    )


def form_pdf(path: Path, *, size: tuple[float, float] = (612.0, 792.0)) -> Path:
    """One typed page with a field, a checkbox, a stamp, hidden things and a sticky note."""
    base = text_pdf([[INTRO]], path.with_name(f"{path.stem}-base.pdf"))
    pdf = pikepdf.open(base)
    page = pdf.pages[0]
    if size != (612.0, 792.0):
        page.obj.MediaBox = Array([0, 0, *size])
    helv = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type1,
            BaseFont=Name.Helvetica,
            Encoding=Name.WinAnsiEncoding,
        )
    )
    dingbats = pdf.make_indirect(
        Dictionary(Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.ZapfDingbats)
    )
    field = pdf.make_indirect(
        Dictionary(
            Type=Name.Annot,
            Subtype=Name.Widget,
            FT=Name.Tx,
            T=String("rating"),
            V=String(FIELD_VALUE),
            Rect=Array([72, 600, 372, 624]),
            DA=String("/Helv 12 Tf 0 g"),
            F=4,
            P=page.obj,
        )
    )
    ticked = pdf.make_stream(  # a check mark, as form software draws one: ZapfDingbats "4"
        b"q 0 g BT /ZaDb 10 Tf 1.5 2 Td (4) Tj ET Q",
        Type=Name.XObject,
        Subtype=Name.Form,
        BBox=Array([0, 0, 12, 12]),
        Resources=Dictionary(Font=Dictionary(ZaDb=dingbats)),
    )
    unticked = pdf.make_stream(
        b"", Type=Name.XObject, Subtype=Name.Form, BBox=Array([0, 0, 12, 12])
    )
    check = pdf.make_indirect(
        Dictionary(
            Type=Name.Annot,
            Subtype=Name.Widget,
            FT=Name.Btn,
            T=String("agree"),
            V=Name.Yes,
            AS=Name.Yes,
            Rect=Array(list(CHECKBOX_RECT)),
            F=4,
            AP=Dictionary(N=Dictionary(Yes=ticked, Off=unticked)),
            P=page.obj,
        )
    )
    stamp = pdf.make_indirect(
        Dictionary(
            Type=Name.Annot,
            Subtype=Name.Stamp,
            Rect=Array([300, 500, 520, 526]),
            F=4,
            AP=Dictionary(
                N=_form_xobject(
                    pdf,
                    f"q 0.8 0 0 rg BT /Hv 16 Tf 2 6 Td ({STAMP}) Tj ET Q".encode(),
                    (0, 0, 220, 26),
                    helv,
                )
            ),
        )
    )

    def hidden(word: str, flags: int, y: int) -> pikepdf.Object:
        return pdf.make_indirect(
            Dictionary(
                Type=Name.Annot,
                Subtype=Name.FreeText,
                Rect=Array([72, y, 272, y + 20]),
                F=flags,
                AP=Dictionary(
                    N=_form_xobject(
                        pdf, f"BT /Hv 12 Tf 2 4 Td ({word}) Tj ET".encode(), (0, 0, 200, 20), helv
                    )
                ),
            )
        )

    note = pdf.make_indirect(
        Dictionary(
            Type=Name.Annot,
            Subtype=Name.Text,
            Rect=Array([500, 700, 520, 720]),
            Contents=String(NOTE),
            F=4,
        )
    )
    page.obj.Annots = Array(
        [field, check, stamp, hidden(HIDDEN, 2, 450), hidden(NOVIEW, 32, 420), note]
    )
    pdf.Root.AcroForm = Dictionary(
        Fields=Array([field, check]),
        DA=String("/Helv 0 Tf 0 g"),
        DR=Dictionary(Font=Dictionary(Helv=helv)),
    )
    pdf.save(path)
    pdf.close()
    base.unlink()
    return path


def xfa_pdf(path: Path) -> Path:
    """A dynamic XFA form: its one page says only "please wait"; no field has an appearance."""
    base = text_pdf(
        [["Please wait... If this message is not eventually replaced by the proper contents"]],
        path.with_name(f"{path.stem}-base.pdf"),
    )
    pdf = pikepdf.open(base)
    xdp = pdf.make_stream(b'<xdp:xdp xmlns:xdp="http://ns.adobe.com/xdp/"><template/></xdp:xdp>')
    pdf.Root.AcroForm = Dictionary(Fields=Array([]), XFA=xdp)
    pdf.save(path)
    pdf.close()
    base.unlink()
    return path


def needs_rendering_pdf(path: Path) -> Path:
    """A LiveCycle dynamic form as some tools write it: no AcroForm at all, the catalog's
    /NeedsRendering set, a page with nothing a person would keep."""
    base = text_pdf([["Please wait while the form loads in a viewer that supports it."]], path)
    with pikepdf.open(base, allow_overwriting_input=True) as pdf:
        pdf.Root.NeedsRendering = True
        pdf.save(path)
    return path


def field_pdf(
    path: Path,
    *,
    value: str,
    flags: int = 0,
    appearance: str | None = None,
    need_appearances: bool = False,
    actions: bool = False,
) -> Path:
    """One typed page with one text field: ``value``, field ``flags`` (8192: a password),
    an appearance that draws ``appearance`` (None: no appearance of its own), and optionally
    the form's NeedAppearances set or a formatting script."""
    base = text_pdf([[INTRO]], path.with_name(f"{path.stem}-base.pdf"))
    pdf = pikepdf.open(base)
    page = pdf.pages[0]
    helv = pdf.make_indirect(
        Dictionary(Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Helvetica)
    )
    field = Dictionary(
        Type=Name.Annot,
        Subtype=Name.Widget,
        FT=Name.Tx,
        T=String("secret"),
        V=String(value),
        Ff=flags,
        Rect=Array([72, 600, 372, 624]),
        DA=String("/Helv 12 Tf 0 g"),
        F=4,
        P=page.obj,
    )
    if appearance is not None:
        field.AP = Dictionary(
            N=_form_xobject(
                pdf, f"BT /Hv 12 Tf 2 6 Td ({appearance}) Tj ET".encode(), (0, 0, 300, 24), helv
            )
        )
    if actions:
        field.AA = Dictionary(F=Dictionary(S=Name.JavaScript, JS=String("AFSpecial_Format(3);")))
    indirect = pdf.make_indirect(field)
    page.obj.Annots = Array([indirect])
    pdf.Root.AcroForm = Dictionary(
        Fields=Array([indirect]),
        DA=String("/Helv 0 Tf 0 g"),
        DR=Dictionary(Font=Dictionary(Helv=helv)),
        NeedAppearances=need_appearances,
    )
    pdf.save(path)
    pdf.close()
    base.unlink()
    return path


def free_text_pdf(path: Path) -> Path:
    """A reviewer's free-text note with words but no appearance of its own."""
    base = text_pdf([[INTRO]], path.with_name(f"{path.stem}-base.pdf"))
    pdf = pikepdf.open(base)
    pdf.pages[0].obj.Annots = Array(
        [
            pdf.make_indirect(
                Dictionary(
                    Type=Name.Annot,
                    Subtype=Name.FreeText,
                    Rect=Array([72, 500, 300, 530]),
                    Contents=String("Checked by the treasurer"),
                    DA=String("/Helv 12 Tf 0 g"),
                    F=4,
                )
            )
        ]
    )
    pdf.save(path)
    pdf.close()
    base.unlink()
    return path
