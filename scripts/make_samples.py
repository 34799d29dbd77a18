"""Write the bundled sample scans that `make run` processes (synthetic, no personal data)."""

from __future__ import annotations

import sys
from pathlib import Path

from pressroom import synth


def main(target: str) -> None:
    out = Path(target)
    out.mkdir(parents=True, exist_ok=True)
    dpi = 200
    first = synth.draw_page(synth.page_lines(11, 10), dpi=dpi, height_in=5.5)
    second = synth.draw_page(
        synth.page_lines(12, 10), dpi=dpi, height_in=5.5, font="DejaVuSans.ttf"
    )
    # A two-page scanned waiver, the second page fed upside down.
    synth.image_pdf(
        [first.image, synth.distort(second.image, rotate=180)], out / "waiver-scan.pdf", dpi
    )
    # A payout form photographed slightly crooked.
    crooked = synth.draw_page(synth.page_lines(13, 8), dpi=dpi, height_in=4.5)
    synth.save_jpeg(synth.distort(crooked.image, skew=1.5), out / "payout-form.jpg", dpi)
    # A faint fax, scanned sideways, as a bilevel TIFF.
    faint = synth.draw_page(synth.page_lines(14, 8), dpi=dpi, height_in=4.5)
    synth.save_tiff(
        [synth.distort(faint.image, faint=True, rotate=90)],
        out / "faint-fax.tif",
        dpi,
        bilevel=False,
    )
    # A born-digital letter: its text is kept, not OCR'd.
    synth.text_pdf([synth.page_lines(15, 12)], out / "letter.pdf")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "samples")
