"""Limits and settings, read from the environment once, by entry points only."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """What the engine refuses. Every field has an environment variable ``PRESSROOM_MAX_*``."""

    max_bytes: int = 256 * MIB
    max_pages: int = 2000
    max_pixels: int = 150_000_000  # per page, at the resolution we would decode it
    max_dpi: int = 400  # rendering above this costs time and buys no accuracy
    min_dpi: int = 150

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Limits:
        def _int(name: str, default: int) -> int:
            raw = env.get(name)
            if raw is None or raw.strip() == "":
                return default
            value = int(raw)
            if value <= 0:
                raise ValueError(f"{name} must be a positive integer")
            return value

        d = cls()
        return cls(
            max_bytes=_int("PRESSROOM_MAX_BYTES", d.max_bytes),
            max_pages=_int("PRESSROOM_MAX_PAGES", d.max_pages),
            max_pixels=_int("PRESSROOM_MAX_PIXELS", d.max_pixels),
            max_dpi=_int("PRESSROOM_MAX_DPI", d.max_dpi),
            min_dpi=_int("PRESSROOM_MIN_DPI", d.min_dpi),
        )


@dataclass(frozen=True, slots=True)
class Settings:
    data_dir: Path = Path("pressroom-data")
    scratch_dir: Path = field(default_factory=lambda: Path(tempfile.gettempdir()))
    limits: Limits = field(default_factory=Limits)
    template_dirs: tuple[Path, ...] = ()
    languages: tuple[str, ...] = ("eng",)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        extra = tuple(Path(p) for p in env.get("PRESSROOM_TEMPLATE_DIRS", "").split(":") if p)
        langs = tuple(x for x in env.get("PRESSROOM_OCR_LANGUAGES", "eng").split("+") if x)
        return cls(
            data_dir=Path(env.get("PRESSROOM_DATA_DIR", "pressroom-data")),
            scratch_dir=Path(env.get("PRESSROOM_SCRATCH_DIR") or tempfile.gettempdir()),
            limits=Limits.from_env(env),
            template_dirs=extra,
            languages=langs or ("eng",),
        )
