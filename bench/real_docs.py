"""Real documents nobody here made: public PDFs from public projects' test folders, by manifest.

Pressroom's own corpora are generated; these are not. Each document is a file committed to a public
repository (the test folders of OCRmyPDF, pikepdf, pdfplumber, tabula-java, camelot, PDFBox, pdf.js,
pypdf and pdfminer.six): government reports and notices, election results, voting records, donor
and expenditure tables, transcripts, forms, brochures, slides, scans with and without an old OCR
layer, and files in other scripts. Nothing of them is committed here: the manifest names each by
repository, commit, path and SHA-256, and ``materialise`` copies it out of a local mirror (the
search tool's ``fetch`` brings one to ``/work/.mirror/OWNER+NAME/repo``; any clone, bare or not,
under ``--mirrors`` does) into a cache folder, checking the hash. Nothing is downloaded at run
time.

The set is split in two halves by a stable hash of each document's SHA-256: ``tune`` (rules may be
tuned on it) and ``held-out`` (never looked at while tuning; report it apart). Copies of one page
share a half through their ``group``: OCRmyPDF's ``linn.pdf`` is also its ``cardinal.pdf`` (turned,
four pages), ``ccitt.pdf``, ``jbig2.pdf`` and ``jbig2_baddevicen.pdf`` (encoded otherwise),
``skew.pdf`` and ``rotated_skew.pdf`` (skewed, turned), ``poster.pdf`` (scaled up), and pikepdf's
``sandwich.pdf`` (with an OCR layer), all ``held-out``; OCRmyPDF's ``graph_ocred.pdf`` is its
``graph.pdf`` with an OCR layer. (Its ``multipage.pdf``, a binding of other test pages, is left
out: its pages belong to several groups.) The split never changes between runs or machines, and
adding a document never moves another.

Licences: the repositories' own licences are in ``LICENCES``; the documents inside are their
authors' (most are US federal, state or EU publications). They are read to measure redaction only:
never trained on, never committed, never copied into a test.

    python bench/real_docs.py --cache DIR [--half tune|held-out|all]   # copy out, check, list
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

MIRRORS = Path(os.environ.get("PRESSROOM_MIRRORS", "/work/.mirror"))
CACHE = Path(os.environ.get("PRESSROOM_REAL_DOCS", Path.home() / ".cache" / "pressroom-real-docs"))
HALVES = ("tune", "held-out")
SALT = b"pressroom real documents, issue 41: "

# each repository's licence (its test files are shipped under it unless a file says otherwise)
LICENCES = {
    "ocrmypdf/OCRmyPDF": "MPL-2.0 (test resources: see the repository's REUSE notes)",
    "pikepdf/pikepdf": "MPL-2.0 (test resources: see the repository's REUSE notes)",
    "jsvine/pdfplumber": "MIT",
    "tabulapdf/tabula-java": "MIT",
    "camelot-dev/camelot": "MIT",
    "apache/pdfbox": "Apache-2.0",
    "mozilla/pdf.js": "Apache-2.0",
    "py-pdf/pypdf": "BSD-3-Clause",
    "pdfminer/pdfminer.six": "MIT",
}


@dataclass(frozen=True, slots=True)
class Doc:
    repo: str  # owner/name on GitHub
    commit: str
    path: str  # inside the repository
    sha256: str
    kind: str  # report, table, people-table, election, notice, transcript, form, brochure,
    # slides, paper, prose, other-script, scan, scan-ocr (a scan with an earlier OCR layer), other
    group: str = ""  # documents of one content (a page and its copies) share a half by it

    @property
    def half(self) -> str:
        return half_of(f"group:{self.group}" if self.group else self.sha256)

    @property
    def name(self) -> str:
        """The cache file's name: the hash, so no two documents meet and no path leaks."""
        return f"{self.sha256[:16]}.pdf"

    def mirror(self, mirrors: Path = MIRRORS) -> Path:
        """The git directory of this document's repository under ``mirrors``."""
        base = mirrors / self.repo.replace("/", "+")
        for cand in (base / "repo", base / ".git", base):
            if (cand / "objects").is_dir():
                return cand
        return base / "repo"


def half_of(key: str) -> str:
    """``tune`` or ``held-out``, from a hash of the document's SHA-256, or of its group where
    it has one (stable, about even)."""
    return HALVES[hashlib.sha256(SALT + key.encode()).digest()[0] & 1]


DOCS: tuple[Doc, ...] = (
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "examples/pdfs/ag-energy-round-up-2017-02-24.pdf",
        "4b9774416291f79421a85fac7ecbb8bf2bc625df9a7207d9dcd3ba845f3146fb",
        "report",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "examples/pdfs/ca-warn-report.pdf",
        "f52f80bd057313c8abec2e854c65c4d96658e72744c836e81d3048d8a5861046",
        "table",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "examples/pdfs/san-jose-pd-firearm-sample.pdf",
        "9ad73ac371e7c9479c0ac4fe6a2741d50b5ba70698b588b1b8eefac6513ee187",
        "table",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/150109DSP-Milw-505-90D.pdf",
        "901409e8e3d504a07ca1793e0b05d4b58e333760026dc1996d27edee9365a513",
        "report",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/2023-06-20-PV.pdf",
        "8e01f32e6a40f956aad593b0e54c5cec7684285ff4be0c7b754dce3711c67bb4",
        "minutes-fr",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/cupertino_usd_4-6-16.pdf",
        "944ab863d7c83521d6250cc8682d2c985a6ae82622de1d461bb80c21a654206a",
        "notice",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/federal-register-2020-17221.pdf",
        "ac419e4e084ea7a7a33a7be3f129dd07bc705b1a9e45ad751e33357f17d60f5c",
        "notice",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/issue-336-example.pdf",
        "59ad0eb8dc9601782a72bc4cabe2390ee2e4eed03d545f874c7425b6d40492cd",
        "other-script",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/issue-461-example.pdf",
        "34f3fe05d1c8e242f0e2d2204399f46aebcbef630834d544deb4a0d625846d63",
        "other-script",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/issue-33-lorem-ipsum.pdf",
        "951e9ab1d5ec310429f89173357a7c9f84b08153fd7f81b5d060ed2487869f16",
        "other",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/issue-848.pdf",
        "7ac8ec08037168a6c55e770e577341483b6bff4de604c3410857248ae9f371c6",
        "prose",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/issue-90-example.pdf",
        "9ed459c53bdd5ae91a08b3bacc5d93f3944dfddac9b6a140a4ea6b5e6eea2a61",
        "people-table",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/issue-912.pdf",
        "317f8e045ec0a67a272bcfd0d38e33f6aaf1110d0a57a26faa739dbdc4bc09bb",
        "table",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/issue-982-example.pdf",
        "c18ea7dc2e8d075f22ca0030e83000adc05cd4f75218c1d774564aa91b5edd94",
        "paper",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/la-precinct-bulletin-2014-p1.pdf",
        "a87eb3ca32462296ad07e6c62ab05c85527a5d7daca6f33d531eb4ae3f263b95",
        "election",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/nics-background-checks-2015-11.pdf",
        "4f0ae6e017b0e97de211da8fd97316e55bd927af5740d6ce95e1b7b1539f9407",
        "table",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/pdffill-demo.pdf",
        "2594a5364ea598047a7389b4f35a5e0908c973c7aa4bc6d8c5e8fb34baaba426",
        "brochure",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/pr-136-example.pdf",
        "bd7d7a3c3114e0c809d275227439e4997578a7fa3de57b5110a594172320cb74",
        "other-script",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/scotus-transcript-p1.pdf",
        "c63508c7b195e6b6c398311fb1f3a36de31f604e3ae94b486a6776f1f144b379",
        "transcript",
    ),
    Doc(
        "jsvine/pdfplumber",
        "147f2c4c07dc1191fc1d05bb589b4f6af3aaf74a",
        "tests/pdfs/senate-expenditures.pdf",
        "16921f0fc9b2c6039b23b694e0317917118ad7dd2b3a95a88518b7e144df527c",
        "people-table",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/linn.pdf",
        "e923f6e8e036185f8f2aae5f7fdeefd8ac658d627cebd4ebf630de4cbf0a2d64",
        "scan",
        group="linn",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/cardinal.pdf",
        "ebd7b2233aea5f320562df9635901bbd8e734cb42c85defa1059163d4b1d6ccb",
        "scan",
        group="linn",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/c02-22.pdf",
        "ae6a3bec3809e1540911bda42dabb42ffbd63cfda17e74a5c3e9dcd87129462a",
        "scan",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/epson.pdf",
        "3fce2d6e5baffec839ffc86b7c91903b139399392ea76a09bdfcca40cb8b5a4d",
        "scan",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/francais.pdf",
        "600c27f8dd2ef085a94d3500f6ccdb3b37f4b89aa8ffdf9a00a06a1367887e8b",
        "scan",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/ccitt.pdf",
        "5f4b129bf0eb0d32358a917cd1754c6fd68cac589ad79076b6d0191ebe84f0f1",
        "scan",
        group="linn",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/jbig2.pdf",
        "210b845b62eab7118bc1e6076a3235a37eb947218254198c6102d06422f35037",
        "scan",
        group="linn",
    ),
    Doc(
        "pikepdf/pikepdf",
        "96ab3e100cd941c46993aca4c3e852833b7f2bc5",
        "tests/resources/congress.pdf",
        "aa56b73d2ca24841b9aab2d617f941579238ef5096ea4d65f2cd15e8ffaba502",
        "scan",
    ),
    Doc(
        "pikepdf/pikepdf",
        "96ab3e100cd941c46993aca4c3e852833b7f2bc5",
        "tests/resources/sandwich.pdf",
        "f151acaf4970369708cd9650f9680a0f9598e8b401c6187b8b3a148eeff41c7c",
        "scan-ocr",
        group="linn",
    ),
    Doc(
        "pikepdf/pikepdf",
        "96ab3e100cd941c46993aca4c3e852833b7f2bc5",
        "tests/resources/form_210966.pdf",
        "784040814eb4777eccb161755d436ccf70c0d285c7dbbfe0c800173806abc83a",
        "form",
    ),
    Doc(
        "pikepdf/pikepdf",
        "96ab3e100cd941c46993aca4c3e852833b7f2bc5",
        "tests/resources/form_dd0293.pdf",
        "0691d01c9bf7f42263b24fa5577fc742a4acec69eee64bd47db572bc63362463",
        "form",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/Publication_of_award_of_Bids_for_Transport_Sector__August_2016.pdf",
        "038126d57e3d9aadfee6c3ac44acc66d4fbdc13598dad8deadd7ec76a2a7d2ab",
        "table",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/argentina_diputados_voting_record.pdf",
        "101064f0dc6aaafbab30ebccce14f290e695ef220b01699254df607f2000b61e",
        "people-table",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/arabic.pdf",
        "4b3b6372245359ae714acae84cc6399fe2c937488579baa2bbfb9888f41e4171",
        "other-script",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/campaign_donors.pdf",
        "e08bf501a22136360ac22020caae5ce21934de8cf18c62ca293dd02b8971088e",
        "people-table",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/china.pdf",
        "ed8cf637429ea739958f057bd4431bc9578f1839ea6795259718c62d96974524",
        "table",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/cs-en-us-pbms.pdf",
        "474811ff9a40cdf83fd4cfe7a262202a813010a493054554ba00d81df8050489",
        "report",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/failing_sort.pdf",
        "a9857a3cfb36c312f6fcb733823e865ab654235e33311aa59953e8ada73228c6",
        "brochure",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/frx_2012_disclosure.pdf",
        "aa80de941ee2999798e2d36b63b475861468bcb958cb7106e9afcc12242ad54a",
        "people-table",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/m27.pdf",
        "0d46d58f7a19daed873c3b0659efd5a9a116aa70db035a0565674a385b0cb505",
        "people-table",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/schools.pdf",
        "d73a342af0250f36b08b718dbf6b73def928e103aa7911ff18018534aa5c87fb",
        "people-table",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/should_detect_rulings.pdf",
        "ea7c01fd7a96a6cc4d4a13641bcc78308cb90eb91cc726138d59532cc16564c4",
        "people-table",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/sydney_disclosure_contract.pdf",
        "18dc9dd6e472dabb16d203d9d2107c88104a8ec7f1d61f5df21131cb2e0d90ae",
        "form",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/us-007.pdf",
        "0362973d6150f1af4cc5ebf1f15808bbf3d161090f9ab68be7523c90c26f1eb6",
        "notice",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/twotables.pdf",
        "72a9d20672e4d581ae9933a07cbe9a6f6db40632218fb7e73bd923dee033d8cd",
        "other-script",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/S2MNCEbirdisland.pdf",
        "08a12a3530730ac983dffb4d4dd376e7dee2c98a183868da35dc6f632fe3d463",
        "report",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/icdar2013-dataset/competition-dataset-us/us-011a.pdf",
        "ff0ae1d4c2094cebe523b2d2b31d1934dfa2bd6f6c0373bb5537258deb1a9677",
        "report",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/icdar2013-dataset/competition-dataset-us/us-025.pdf",
        "3d6ce39e886e2a555bd732d06c32e982b811b302115225ddd56ffdb5207fa588",
        "report",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/icdar2013-dataset/competition-dataset-us/us-036.pdf",
        "9f29c863f89ba02e7c80e2c3da1f93f0a4036e67cfc791e57571765db0899b1b",
        "brochure",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/icdar2013-dataset/competition-dataset-us/us-027.pdf",
        "338c0cb8a9cea35f7c92fde16345617e3a82523f77ae1176122cc008e7dd8333",
        "report",
    ),
    Doc(
        "tabulapdf/tabula-java",
        "2cdf3b4fd3f7e921dca8cc6814cdd9316be40f0f",
        "src/test/resources/technology/tabula/icdar2013-dataset/competition-dataset-eu/eu-007.pdf",
        "643d49e88d3a03dc7c360ab1af4d53ecfd0a409cd818aa835e84da38c55c2bef",
        "table",
    ),
    Doc(
        "camelot-dev/camelot",
        "2b80d0bc692d1b22203c3385e77da8201675aa50",
        "tests/files/electoral_roll.pdf",
        "b1f583f7c226f6f14d1b2e8898b5cea2e2806b9d991f4de7e763941c9b48515f",
        "people-table",
    ),
    Doc(
        "camelot-dev/camelot",
        "2b80d0bc692d1b22203c3385e77da8201675aa50",
        "tests/files/background_lines_1.pdf",
        "fe4c0ea9c600f03fdc8c4d6d030265116178a71fa02fcbf6f4d0ae149ea608fb",
        "report",
    ),
    Doc(
        "camelot-dev/camelot",
        "2b80d0bc692d1b22203c3385e77da8201675aa50",
        "tests/files/good_energy.pdf",
        "5eefb5e27d9f3956b22be28c6a5acdfda4f75d2df1da788b06563b49af4693ef",
        "brochure",
    ),
    Doc(
        "camelot-dev/camelot",
        "2b80d0bc692d1b22203c3385e77da8201675aa50",
        "tests/files/issue_288.pdf",
        "8c4d32863db2904d824c5ebe2c2a4f78a32e4c864c465c0cecf01a3996576d28",
        "people-table",
    ),
    Doc(
        "camelot-dev/camelot",
        "2b80d0bc692d1b22203c3385e77da8201675aa50",
        "tests/files/split_text_lattice.pdf",
        "15b8cf2901342f88a7d4d57da6e7c98a4bb29c6b9b022707af2adf593a3db9a2",
        "table",
    ),
    Doc(
        "camelot-dev/camelot",
        "2b80d0bc692d1b22203c3385e77da8201675aa50",
        "tests/files/vertical_header.pdf",
        "eb1092be407cb17cd25837c52758d1305f6719268c6f824f73a7d2bd18c95760",
        "election",
    ),
    Doc(
        "camelot-dev/camelot",
        "2b80d0bc692d1b22203c3385e77da8201675aa50",
        "tests/files/detect_vertical_false.pdf",
        "3d4b69483a261b5b2a734e9deaf5c1feb6807a086a783f63aab299c22f54046c",
        "brochure",
    ),
    Doc(
        "camelot-dev/camelot",
        "2b80d0bc692d1b22203c3385e77da8201675aa50",
        "tests/files/table_region.pdf",
        "d320aa29f8a2470b049f3b56af86bad0e6c34ac56d8386ae9dd92976e4c5828d",
        "brochure",
    ),
    Doc(
        "apache/pdfbox",
        "89a917394c762257017c27e0cf5189605776aa57",
        "pdfbox/src/test/resources/input/PDFBOX-3038-001033-p2.pdf",
        "f4489abfd221fea0520e00fa9e769e1844c875f67aa130c0243acf6f1e4379e9",
        "transcript",
    ),
    Doc(
        "apache/pdfbox",
        "89a917394c762257017c27e0cf5189605776aa57",
        "pdfbox/src/test/resources/input/PDFBOX-3042-003177-p2.pdf",
        "4db9f5e127325b375689ed8336fa71fa61b2d3068a796fbdf1ae78ee396e1576",
        "report",
    ),
    Doc(
        "apache/pdfbox",
        "89a917394c762257017c27e0cf5189605776aa57",
        "pdfbox/src/test/resources/input/PDFBOX-3062-002207-p1.pdf",
        "be6adc030bef968741ccc825ed59d0aef65462f86f19fd7b535dd89e6137aa97",
        "notice",
    ),
    Doc(
        "apache/pdfbox",
        "89a917394c762257017c27e0cf5189605776aa57",
        "pdfbox/src/test/resources/org/apache/pdfbox/pdmodel/documentinterchange/logicalstructure/PDFBOX-2725-878725.pdf",
        "2391439547bd98bad35a7f5574f88bf80b9043ac60abdf825d20b2f069328853",
        "notice",
    ),
    Doc(
        "apache/pdfbox",
        "89a917394c762257017c27e0cf5189605776aa57",
        "pdfbox/src/test/resources/input/merge/PDFBOX-4417-001031.pdf",
        "068bd51d5c74ad032d97a0ccf7964a92c48e19c3b51a87929f35c11018322ad6",
        "report",
    ),
    Doc(
        "apache/pdfbox",
        "89a917394c762257017c27e0cf5189605776aa57",
        "pdfbox/src/test/resources/input/merge/PDFBOX-5792-240045.pdf",
        "aa34c5ebc43b47240901f651f20b28601a586e1c560d0297fc2313154ae8a349",
        "report",
    ),
    Doc(
        "apache/pdfbox",
        "89a917394c762257017c27e0cf5189605776aa57",
        "pdfbox/src/test/resources/input/merge/PDFBOX-5811-362972.pdf",
        "fd7bbd087f837ff27a95ca5677878ba994e977b7fea71cd9b60811c2fd1ed30a",
        "report",
    ),
    Doc(
        "apache/pdfbox",
        "89a917394c762257017c27e0cf5189605776aa57",
        "pdfbox/src/test/resources/input/rendering/source.pdf",
        "2db2bc95562d7a98c20f3294cca6e87b8c47867c60c2debbcb2081e42e0d62e9",
        "prose-cs",
    ),
    Doc(
        "apache/pdfbox",
        "89a917394c762257017c27e0cf5189605776aa57",
        "pdfbox/src/test/resources/input/rendering/survey.pdf",
        "2e8b87ea72de7dd54176354706a5d7ff9e64a12624e603ffac64aa55743bf581",
        "form",
    ),
    Doc(
        "apache/pdfbox",
        "89a917394c762257017c27e0cf5189605776aa57",
        "pdfbox/src/test/resources/input/PDFBOX-3110-poems-beads.pdf",
        "9d715ce4e964f6ccbf50e1d1c42ca5f01425a079a5c39a9581c876c56afca1b3",
        "prose-de",
    ),
    Doc(
        "mozilla/pdf.js",
        "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "test/pdfs/160F-2019.pdf",
        "f41f0818365ffd14ca4e55c0556355193bd76632b970d60cc2dec554cac6f379",
        "form",
    ),
    Doc(
        "mozilla/pdf.js",
        "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "test/pdfs/bigboundingbox.pdf",
        "6cd3d57b85891021af2de75ac304a6efc2894793dab7594968b0b5efcd1d0013",
        "form",
    ),
    Doc(
        "mozilla/pdf.js",
        "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "test/pdfs/bug1669099.pdf",
        "ce40a4f30d332478930eea0318e4784db5b3d6e4956bfff8256bf765fa22181c",
        "form",
    ),
    Doc(
        "mozilla/pdf.js",
        "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "test/pdfs/chrome-text-selection-markedContent.pdf",
        "256551a6dabf4ae27b603a820bc58a15fa082919b023c7a181b491b92ef05b44",
        "report",
    ),
    Doc(
        "mozilla/pdf.js",
        "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "test/pdfs/file_pdfjs_test.pdf",
        "851fb6bfa4143203a284833c38138df1914a7ccca5e911dfaef8eb4e17e66b49",
        "slides",
    ),
    Doc(
        "mozilla/pdf.js",
        "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "test/pdfs/issue11913.pdf",
        "996da6eebc2c04487ab8cda464ccd6ef02148f4813c54a400a9e151ceeec844f",
        "transcript",
    ),
    Doc(
        "mozilla/pdf.js",
        "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "test/pdfs/issue12295.pdf",
        "b4f8476db03a9f1e3359d13fd83700942da16ab71b5c46a922e97f3de5f8f90c",
        "form",
    ),
    Doc(
        "mozilla/pdf.js",
        "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "test/pdfs/issue14117.pdf",
        "52537869a32f0bc04a6f676b9ded451cca0c744024fb36491d051494d96d4548",
        "report",
    ),
    Doc(
        "mozilla/pdf.js",
        "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "test/pdfs/issue20232.pdf",
        "8d433cacb07b0ce16a476193ed9cac6ac5c54a47cbb5b9365a8bfe6254be302c",
        "other-script",
    ),
    Doc(
        "mozilla/pdf.js",
        "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "test/pdfs/issue16538.pdf",
        "308a2cabdc09425e52c08582fe7ab8183f507d3748a6e393ea9ebe8b5f752c5d",
        "other-script",
    ),
    Doc(
        "mozilla/pdf.js",
        "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "test/pdfs/issue12963.pdf",
        "bd61f8496b77a479301705c00558ae8cd9e1c24cc8ee01817875f3f8dffb7b7e",
        "scan-ocr",
    ),
    Doc(
        "mozilla/pdf.js",
        "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "test/pdfs/issue6127.pdf",
        "75e1a2b98eb8fe6d65b6ac0e34ccfe3ad0a1d7bc0a08165301a14f5fb4caa73a",
        "form",
    ),
    Doc(
        "mozilla/pdf.js",
        "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "test/pdfs/issue840.pdf",
        "a06ddb834e9aec52ee0ec3837fa8afc296b8a411fa9f8217d555cf3597c52c5d",
        "table",
    ),
    Doc(
        "mozilla/pdf.js",
        "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "test/pdfs/pr12564.pdf",
        "9840c2aea98182955f561b33bbecd66866b809b1e3debb0102defb24d7f332a0",
        "brochure",
    ),
    Doc(
        "mozilla/pdf.js",
        "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "test/pdfs/issue918.pdf",
        "e1d8246bd5ea9f8f1eab8a58ef7cba661d455d9048a1082ad6ab328d921125b7",
        "prose",
    ),
    Doc(
        "mozilla/pdf.js",
        "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "test/pdfs/prefilled_f1040.pdf",
        "899edb271684d2451337e225268003324a583a7d3429e23efd69f1654adf9bf9",
        "form",
    ),
    Doc(
        "mozilla/pdf.js",
        "0f26334f9d6f96119f6e5164fb65832fbbde7344",
        "test/pdfs/issue13211.pdf",
        "01465d3183ca951834ebb546762323130cd3691d262352166eb446b47dfef144",
        "other-script",
    ),
    Doc(
        "py-pdf/pypdf",
        "f6853ccd3ff492309c84060186aabc88ed472ffd",
        "resources/Seige_of_Vicksburg_Sample_OCR.pdf",
        "e8b9d461f035f8ce2440f9061d35b2164148eb3511a487aacfc26a94cb9d90fe",
        "scan-ocr",
    ),
    Doc(
        "py-pdf/pypdf",
        "f6853ccd3ff492309c84060186aabc88ed472ffd",
        "resources/SF424_page2.pdf",
        "bdc3c9b43ea8facaddc50ed3a6ce9a6311fba05271710bc40e01ffda4fa7993c",
        "form",
    ),
    Doc(
        "pdfminer/pdfminer.six",
        "9e1243c4ad000bf9bbe60e81fc8dde2fccc0ed3b",
        "samples/contrib/issue-625-identity-cmap.pdf",
        "e891a2bd07b176e75acec752288ab38f8a5064fde2688c14c45ca538b856ff2e",
        "form",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/tagged.pdf",
        "94324b1221ae3105ce0b6ee1abb84f37bf9b9e3c91dc6e8301b786ceb768fcea",
        "prose",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/toc.pdf",
        "7a185e63e5c486bf84f56aa76e7f6d9f68a9aab44f0c1c85c2d6668165423133",
        "prose",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/link.pdf",
        "303a922356bd9a1cd0c8323f85c26128949d59a2b63acf51776cc51c2f461cda",
        "prose",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/cmyk.pdf",
        "6d3e47ad66c94d02436aca48f881a20f594bc0ded731001ebe4639497d697cd3",
        "brochure",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/palette.pdf",
        "bc2d0a6749c22e043fd4aecc9ff0a0ed0b949b20c6caca29661d98b5275a1a12",
        "other",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/kcs.pdf",
        "8e7727b1e554334ef032ca89fbe858b3b951643324c7ee1533220bcf192ca60a",
        "scan",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/lichtenstein.pdf",
        "d7f2f944de30876e21b10caa465bc617e8fbd00285bdd1fc648d39793ebd76f8",
        "other",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/masks.pdf",
        "ae8197d8a10b6db0f9a05681600e373b63489134b37529a40d484d380117d909",
        "scan",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/poster.pdf",
        "0253f46fd6a97a2578e20b6d917dd4d0787d6356ac1ec2d79053d6bbdcef78b4",
        "scan",
        group="linn",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/skew.pdf",
        "6be6b54d49df71351974774404e299b756d8d3cbeb2c4a31f15fae8dd983d72f",
        "scan",
        group="linn",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/rotated_skew.pdf",
        "5122c07d05a61219eb9f8305776ef16def6b34c29358e05c5ae2e884a351438f",
        "scan",
        group="linn",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/jbig2_baddevicen.pdf",
        "cfbb474ccfa65bcd50e3f9656a2adb8b4dbe831697b69c0e0ef9f6077ee6cf8e",
        "scan",
        group="linn",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/graph.pdf",
        "11fa2cef6845341795dc4103e68b31df5ff4fc72a7b7fa42904eb22b9bd70613",
        "other",
        group="graph",
    ),
    Doc(
        "ocrmypdf/OCRmyPDF",
        "62b42095eca831faaa3c84ddb699674788c4c1b7",
        "tests/resources/graph_ocred.pdf",
        "36784b0f8a37f124c7015a68c53d732b07519c30aa1b333e7ec1ba8a69cb6120",
        "scan-ocr",
        group="graph",
    ),
)


class Missing(Exception):
    """A document that could not be copied out: no mirror, commit not there, or a wrong hash."""


def select(half: str = "all", kinds: Iterable[str] = ()) -> list[Doc]:
    """The manifest's documents of one half (or ``all``), of the given kinds (or every kind)."""
    wanted = set(kinds)
    return [
        d for d in DOCS if (half == "all" or d.half == half) and (not wanted or d.kind in wanted)
    ]


def materialise_one(doc: Doc, cache: Path = CACHE, mirrors: Path = MIRRORS) -> Path:
    """The document's bytes at ``cache/NAME``, from the mirror (``git show COMMIT:PATH``) unless
    a copy with the right hash is there already. Raises ``Missing`` with the reason."""
    out = cache / doc.name
    if out.is_file() and hashlib.sha256(out.read_bytes()).hexdigest() == doc.sha256:
        return out
    git_dir = doc.mirror(mirrors)
    if not git_dir.is_dir():
        raise Missing(f"no mirror of github.com/{doc.repo} under {mirrors}")
    run = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{doc.commit}:{doc.path}"],
        capture_output=True,
        check=False,
    )
    if run.returncode != 0:
        raise Missing(f"{doc.repo}@{doc.commit[:10]}:{doc.path} is not in the mirror")
    got = hashlib.sha256(run.stdout).hexdigest()
    if got != doc.sha256:
        raise Missing(f"{doc.repo}:{doc.path}: SHA-256 {got[:16]}… is not the manifest's")
    cache.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".part")
    tmp.write_bytes(run.stdout)
    tmp.replace(out)
    return out


def materialise(
    docs: Sequence[Doc], cache: Path = CACHE, mirrors: Path = MIRRORS
) -> tuple[list[tuple[Doc, Path]], list[tuple[Doc, str]]]:
    """Every document copied out and checked: (document, file) pairs, and (document, reason)
    for those that could not be."""
    found: list[tuple[Doc, Path]] = []
    missing: list[tuple[Doc, str]] = []
    for doc in docs:
        try:
            found.append((doc, materialise_one(doc, cache, mirrors)))
        except Missing as exc:
            missing.append((doc, str(exc)))
    return found, missing


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--cache", type=Path, default=CACHE)
    ap.add_argument("--mirrors", type=Path, default=MIRRORS)
    ap.add_argument("--half", choices=(*HALVES, "all"), default="all")
    args = ap.parse_args(argv)
    found, missing = materialise(select(args.half), args.cache, args.mirrors)
    for doc, path in found:
        print(f"{doc.half:8}  {doc.kind:13}  {path.name}  {doc.repo}:{doc.path}")
    for _doc, why in missing:
        print(f"missing: {why}", file=sys.stderr)
    counts = {h: sum(1 for d, _ in found if d.half == h) for h in HALVES}
    print(
        f"{len(found)} documents ({counts['tune']} tune, {counts['held-out']} held-out), "
        f"{len(missing)} missing"
    )
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
