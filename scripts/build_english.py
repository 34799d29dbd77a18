"""Build ``pressroom/redact/detect/english.txt.gz``: the lower-case words of SCOWL's American
English list (Debian's ``wamerican``, /usr/share/dict/american-english), the common nouns,
verbs and adjectives that the names detectors weigh a capitalised word against ("Song",
"Stabilizer", "AIRFARE"). Proper nouns (listed with a capital) are left out.

    python scripts/build_english.py [--source /usr/share/dict/american-english]

Licence: SCOWL, Copyright 2000-2011 Kevin Atkinson, with a permission notice that allows use,
copy, modification, distribution and sale for any purpose (an MIT-like notice; its sources
are public domain or carry the same notice); see the README's data table. The notice is written
at the head of the built file.
"""

from __future__ import annotations

import argparse
import gzip
import re
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "pressroom/redact/detect/english.txt.gz"
NOTICE = """# Lower-case words of SCOWL's American English list (Debian wamerican 2020.12.07),
# built by scripts/build_english.py.
# Copyright 2000-2011 by Kevin Atkinson. Permission to use, copy, modify, distribute and sell
# these word lists, the associated scripts, the output created from the scripts, and its
# documentation for any purpose is hereby granted without fee, provided that the above
# copyright notice appears in all copies and that both that copyright notice and this
# permission notice appear in supporting documentation. Kevin Atkinson makes no
# representations about the suitability of this array for any purpose. It is provided "as is"
# without express or implied warranty.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=Path("/usr/share/dict/american-english"))
    args = parser.parse_args()
    words = sorted(
        {
            line.strip()
            for line in args.source.read_text("utf-8").splitlines()
            if re.fullmatch(r"[a-z]{2,}", line.strip())
        }
    )
    with gzip.GzipFile(OUT, "wb", mtime=0) as out:
        out.write((NOTICE + "\n".join(words) + "\n").encode())
    print(f"{len(words)} words -> {OUT}")


if __name__ == "__main__":
    main()
