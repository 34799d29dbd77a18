"""The effective settings as `pressroom config show` prints them: every variable of
``settings.VARIABLES`` with its value and where the value came from, secrets masked.

Masking fails closed. The table carries no "secret" flag, so a variable is secret by its name
(``KEY``, ``SECRET``, ``TOKEN``, ``PASSWORD``…) unless the table reads it as a number or a
boolean (its parser refuses anything else, so nothing secret can hide there). Every other
value loses the credentials a URL or a ``key=value`` string can carry, and a secret's text is
masked wherever else it shows up.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pressroom.settings import MEMORY_CAP, MIB, VARIABLES, Settings

MASK = "********"
_SECRET_WORDS = (
    "KEY",
    "SECRET",
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "AUTH",
    "HEADERS",
    "COOKIE",
    "SIGNATURE",
    "PRIVATE_KEY",
)
_SECRET_NAME = re.compile("|".join(_SECRET_WORDS), re.IGNORECASE)
# ``scheme://userinfo@``: a password, or a bare token, before the host; up to the last ``@``,
# since people write ``/``, ``?`` and ``@`` into passwords unencoded (a path's ``@`` hides the
# host too: fail closed)
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<info>\S*)@")
# ``name=value`` in a query string or a libpq keyword string, the name secret-like
_PAIR = re.compile(
    r"(?P<name>[\w.-]*(?:password|passwd|pwd|secret|token|key|signature|credential|auth)"
    r"[\w.-]*)=(?P<value>[^&;\s]*)",
    re.IGNORECASE,
)
# below this a "secret" is too short to mask elsewhere without masking ordinary words
_LEAST_ECHO = 6

Value = str | int | float | bool | list[str]


@dataclass(frozen=True, slots=True)
class Shown:
    """One variable as shown: its name, its value (masked or cleaned), and its source:
    ``set`` (by the environment or the ``PRESSROOM_CONFIG`` file) or ``default``."""

    name: str
    value: Value
    source: str
    masked: bool

    def line(self) -> str:
        return f"{self.name} = {_text(self.value)}  ({self.source})"

    def record(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "source": self.source,
            "masked": self.masked,
        }


def secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def scrub(text: str) -> str:
    """``text`` without the credentials a URL or a ``key=value`` string can carry."""

    def userinfo(match: re.Match[str]) -> str:
        user, colon, _password = match["info"].partition(":")
        # a user with a password keeps the user; a bare userinfo may be a token itself
        return match["scheme"] + (f"{user}:{MASK}" if colon else MASK) + "@"

    text = _USERINFO.sub(userinfo, text)
    return _PAIR.sub(lambda m: f"{m['name']}={MASK}", text)


def effective(env: Mapping[str, str] | None = None) -> list[Shown]:
    """Every variable, in the table's order, read as every command reads them (``None``: the
    process's environment and its ``PRESSROOM_CONFIG`` file, through ``Settings.from_env``;
    a bad value is ``BAD_CONFIG``). A value equal to the default is shown as ``default``,
    any other as ``set`` (by the environment or the file: only settings.py reads the
    environment, and it does not say which)."""
    settings = Settings.from_env(env)
    defaults = _defaults()
    raw: list[tuple[str, Value, str, bool]] = []
    secrets: set[str] = set()
    for var in VARIABLES:
        value = _json(_field(settings, var.field))
        source = "default" if value == _json(_field(defaults, var.field)) else "set"
        if var.cast is MEMORY_CAP and isinstance(value, int):
            value = value / MIB  # held in bytes, set in MiB: shown as set
        hide = secret_name(var.name) and not isinstance(value, bool | int | float)
        if hide:
            for item in value if isinstance(value, list) else [str(value)]:
                secrets.update(_pieces(item))
            value = MASK if value else ""
        raw.append((var.name, value, source, hide))
    secrets.update(_url_passwords(value for _n, value, _s, _h in raw))
    return [
        Shown(name, value if hide else _clean(value, secrets), source, hide)
        for name, value, source, hide in raw
    ]


def _defaults() -> Settings:
    """The settings with no variable set (what the reference page calls the defaults)."""
    return Settings.from_env({})


def _field(settings: Settings, path: str) -> Any:
    value: Any = settings
    for part in path.split("."):
        value = getattr(value, part)
    return value


def _json(value: Any) -> Value:
    if isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, tuple | list):
        return [str(item) for item in value]
    return str(value)  # a Path


def _pieces(raw: str) -> set[str]:
    """A secret's text and each comma-separated part: masked wherever else they show."""
    parts = {raw.strip(), *(p.strip() for p in raw.split(","))}
    return {p for p in parts if len(p) >= _LEAST_ECHO}


def _url_passwords(values: Any) -> set[str]:
    found: set[str] = set()
    for value in values:
        for text in value if isinstance(value, list) else [value]:
            if not isinstance(text, str):
                continue
            for match in _USERINFO.finditer(text):
                found.update(_pieces(match["info"].partition(":")[2] or match["info"]))
            for match in _PAIR.finditer(text):
                found.update(_pieces(match["value"]))
    return found


def _clean(value: Value, secrets: set[str]) -> Value:
    if isinstance(value, list):
        return [str(_clean(item, secrets)) for item in value]
    if not isinstance(value, str):
        return value
    text = scrub(value)
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def _text(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ", ".join(value) or "(none)"
    return str(value) or "(empty)"
