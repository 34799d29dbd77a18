"""Write ``orgs.txt``: organisation names from the Open Funder Registry (Crossref, CC0 1.0),
read from a local mirror of github.com/inveniosoftware/invenio-openaire, which carries the
registry as ``invenio_openaire/data/fundref_registry.rdf.gz`` (its data README states the CC0
licence). Run once while developing; nothing is downloaded:

    .venv-test/bin/python -m corpora.news.build_orgs PATH-OF-THE-MIRROR

Kept: English preferred labels of companies, foundations, societies and other non-profits, of
two to six words, without commas, brackets or digits. Many carry a person's name ("William
Penn Foundation", "Pratt & Whitney"): the whole is an organisation, which is the point.
"""

from __future__ import annotations

import gzip
import io
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

RDF = "invenio_openaire/data/fundref_registry.rdf.gz"
OUT = Path(__file__).with_name("orgs.txt")
NS = {
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "skosxl": "http://www.w3.org/2008/05/skos-xl#",
    "svf": "http://data.crossref.org/fundingdata/xml/schema/grant/grant-1.2/",
}
LANG = "{http://www.w3.org/XML/1998/namespace}lang"
KEEP = {  # kind of body: at most this many names of it, spread over the registry
    "corporate": 1400,
    "foundation": 1000,
    "professional associations and societies": 500,
    "other non-profit": 500,
}


def names(raw: bytes) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {k: [] for k in KEEP}
    for _ev, el in ET.iterparse(io.BytesIO(gzip.decompress(raw)), events=("end",)):
        if el.tag != f"{{{NS['skos']}}}Concept":
            continue
        label = el.find("skosxl:prefLabel/skosxl:Label/skosxl:literalForm", NS)
        sub = el.find("svf:fundingBodySubType", NS)
        if label is not None and sub is not None and sub.text in out and label.get(LANG) == "en":
            name = " ".join((label.text or "").split())
            words = name.split()
            if (
                2 <= len(words) <= 6
                and not any(c in name for c in ",()[]/;:\"'\u2019")
                and not any(c.isdigit() for c in name)
            ):
                out[sub.text].append(name)
        el.clear()
    return out


def main(argv: list[str]) -> None:
    git_dir = Path(argv[0])
    git_dir = git_dir / ".git" if (git_dir / ".git").is_dir() else git_dir
    commit = subprocess.run(
        ["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    raw = subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"HEAD:{RDF}"], capture_output=True, check=True
    ).stdout
    found = names(raw)
    kept: set[str] = set()
    for kind, limit in KEEP.items():
        xs = sorted(set(found[kind]))
        step = max(1, len(xs) // limit)
        kept.update(xs[::step][:limit])
    head = (
        "# Organisation names: the Open Funder Registry (Crossref), CC0 1.0 (public domain).\n"
        f"# Read from github.com/inveniosoftware/invenio-openaire@{commit[:12]} {RDF}.\n"
        "# Built by corpora/news/build_orgs.py; one name a line.\n"
    )
    OUT.write_text(head + "\n".join(sorted(kept)) + "\n", encoding="utf-8")
    print(f"{len(kept)} names written")


if __name__ == "__main__":
    main(sys.argv[1:])
