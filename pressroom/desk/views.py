"""The desk's pages from Jinja2 template files (``pressroom/desk/templates/*.html``, shipped
with the package), autoescaped: a value is markup only where a template says so, which none
does. ``PRESSROOM_DESK_TEMPLATES`` (``Settings.desk_templates``) may name a folder whose files
of the same names are used instead (an operator's restyling, or new wording); the package's
files fill in the rest.
"""

from __future__ import annotations

import re
import time
from functools import lru_cache
from typing import Any
from urllib.parse import quote

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PackageLoader, StrictUndefined


def item_url(item_id: str) -> str:
    return "/review/jobs/" + quote(item_id, safe="")


def kind_class(kind: str) -> str:
    return "k-" + (re.sub(r"[^a-z0-9-]", "-", str(kind).lower())[:40] or "x")


def when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(at))


def iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def span(seconds: float) -> str:
    seconds = abs(seconds)
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    if seconds < 36 * 3600:
        return f"{round(seconds / 3600)} h"
    return f"{round(seconds / 86400)} d"


@lru_cache(maxsize=4)
def environment(overrides: str | None) -> Environment:
    loaders: list[Any] = []
    if overrides:
        loaders.append(FileSystemLoader(overrides))
    loaders.append(PackageLoader("pressroom.desk", "templates"))
    env = Environment(
        loader=ChoiceLoader(loaders),
        autoescape=True,  # every file, whatever its name: there is no unescaped page
        undefined=StrictUndefined,  # a misspelt value is an error in the tests, not a blank
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(item_url=item_url, kind_class=kind_class, when=when, iso=iso, span=span)
    return env


def render(name: str, overrides: str | None = None, **values: Any) -> str:
    return environment(overrides or None).get_template(name).render(**values)
