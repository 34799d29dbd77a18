"""Tesseract, in process, through tesserocr: one API object per process, reused for every page."""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from pressroom.engines.orientation import Orientation
from pressroom.errors import DeadlineExceeded, EngineUnavailable, PixelLimit, UnreadableScan
from pressroom.languages import TESSDATA_CANDIDATES, find_tessdata
from pressroom.models import Box, OcrResult, Word

if TYPE_CHECKING:
    from PIL import Image

# where the data is looked for, and the refusal when a language is missing: pressroom.languages
__all__ = ["TESSDATA_CANDIDATES", "TesseractEngine", "find_tessdata", "tesseract_version"]


# Tesseract's coordinates are 16-bit: a wider or taller image fails recognition at once
MAX_SIDE = 32767


def _tesserocr() -> Any:
    # OpenMP inside Tesseract fights our process-level parallelism; it must be off before load.
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    try:
        import tesserocr
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise EngineUnavailable(f"tesserocr is not importable: {exc}") from None
    return tesserocr


def tesseract_version() -> str:
    """The version of the libtesseract that tesserocr loaded (probed apart from any OCR run)."""
    first = str(_tesserocr().tesseract_version()).splitlines()[0]
    return first.replace("tesseract", "").strip()


def _to_gray_bytes(image: Image.Image) -> tuple[bytes, int, int]:
    if image.mode != "L":
        image = image.convert("L")
    return image.tobytes(), image.width, image.height


class _Apis:
    """A process's Tesseract API objects, one per set of languages, and the OSD one: shared by
    the engines ``with_languages`` makes, so a worker loads each set once."""

    def __init__(self) -> None:
        self.recognizers: dict[tuple[Path, tuple[str, ...]], Any] = {}
        self.osd: Any = None
        self.lock = threading.Lock()


@dataclass
class TesseractEngine:
    """The production ``OcrEngine``. Not thread-safe: one per worker process."""

    languages: tuple[str, ...] = ("eng",)
    tessdata: Path | None = None
    tessdata_prefix: str = ""  # settings.tessdata_prefix: tried before the usual folders

    def __post_init__(self) -> None:
        self._apis = _Apis()
        self._lock = self._apis.lock

    def with_languages(self, languages: tuple[str, ...]) -> TesseractEngine:
        """This engine reading ``languages`` (a job's), sharing the loaded API objects."""
        if tuple(languages) == self.languages:
            return self
        # checked now, before the job does any work: a missing pack is UNSUPPORTED_LANGUAGE
        folder = find_tessdata(languages, self.tessdata_prefix)
        other = TesseractEngine(tuple(languages), folder, self.tessdata_prefix)
        other._apis = self._apis
        other._lock = self._apis.lock
        return other

    def twin(self) -> TesseractEngine:
        """An engine reading as this one does, with Tesseract API objects of its own: for
        another thread (an API object reads one image at a time; ``redact.pages``)."""
        return TesseractEngine(self.languages, self.tessdata, self.tessdata_prefix)

    @property
    def name(self) -> str:
        return f"tesseract-{tesseract_version()}"

    def _folder(self) -> Path:
        if self.tessdata is None:
            self.tessdata = find_tessdata(self.languages, self.tessdata_prefix)
        return self.tessdata

    def _recognizer(self) -> Any:
        folder = self._folder()
        key = (folder, self.languages)
        api = self._apis.recognizers.get(key)
        if api is None:
            t = _tesserocr()
            try:
                api = t.PyTessBaseAPI(
                    path=str(folder),
                    lang="+".join(self.languages),
                    psm=t.PSM.AUTO,
                    oem=t.OEM.LSTM_ONLY,
                )
            except RuntimeError as exc:
                raise EngineUnavailable(f"Tesseract failed to start: {exc}") from None
            self._apis.recognizers[key] = api
        return api

    def _orientation_api(self) -> Any:
        # OSD needs its own API: on a recogniser API it returns nonsense or aborts the process.
        if self._apis.osd is None:
            t = _tesserocr()
            given = self.tessdata
            folder = (
                given
                if given is not None and (given / "osd.traineddata").is_file()
                else find_tessdata(("osd",), self.tessdata_prefix)
            )
            try:
                osd = t.PyTessBaseAPI(path=str(folder), lang="osd", psm=t.PSM.OSD_ONLY)
                # 20 characters instead of 50: 0.18 s instead of 0.45 s a page at 150 dpi, and
                # still right on every page of the bench corpus (confidence 6-13 on real text).
                osd.SetVariable("min_characters_to_try", "20")
            except RuntimeError as exc:
                raise EngineUnavailable(f"Tesseract OSD failed to start: {exc}") from None
            self._apis.osd = osd
        return self._apis.osd

    def recognize(
        self,
        image: Image.Image,
        *,
        dpi: float,
        timeout: float | None = None,
        adaptive: bool = False,
    ) -> OcrResult:
        """Read ``image``; ``adaptive`` binarises by tiles (text on tinted or uneven ground,
        which one global Otsu threshold turns into a solid block)."""
        t = _tesserocr()
        api = self._recognizer()
        if max(image.size) > MAX_SIDE:  # Tesseract would fail it at once, time or no time
            raise PixelLimit(
                f"a page renders {image.width:,} x {image.height:,} pixels; OCR reads at most "
                f"{MAX_SIDE:,} a side"
            )
        data, width, height = _to_gray_bytes(image)
        with self._lock:
            api.SetVariable("thresholding_method", "1" if adaptive else "0")
            api.SetImageBytes(data, width, height, 1, width)
            api.SetSourceResolution(round(dpi))
            started = time.monotonic()
            ok = api.Recognize(timeout=0 if timeout is None else max(1, int(timeout * 1000)))
            if not ok:
                api.Clear()
                if timeout is not None and time.monotonic() - started >= 0.9 * timeout:
                    raise DeadlineExceeded("recognition ran out of time")
                raise UnreadableScan("OCR could not read a page")
            result = _collect(t, api)
            api.Clear()
        return result

    def detect_orientation(self, image: Image.Image, *, dpi: float) -> Orientation | None:
        """Clockwise degrees that make the page upright, and Tesseract's confidence; the
        script it saw, and whether this engine's languages read it."""
        osd = self._orientation_api()
        data, width, height = _to_gray_bytes(image)
        with self._lock:
            osd.SetImageBytes(data, width, height, 1, width)
            osd.SetSourceResolution(round(dpi))
            try:
                found = osd.DetectOrientationScript()
            except RuntimeError:
                found = None
            osd.Clear()
        if not found:
            return None
        # orient_deg is the counter-clockwise turn that makes the page upright (measured: a page
        # turned 90° counter-clockwise reports 270); Pressroom speaks clockwise.
        ccw = int(found["orient_deg"]) % 360
        script = str(found.get("script_name") or "")
        script_confidence = float(found.get("script_conf") or 0.0)
        return Orientation(
            (360 - ccw) % 360 if ccw else 0,
            float(found["orient_conf"]),
            script,
            script_confidence,
            script_confidence >= MIN_SCRIPT_CONFIDENCE
            and script not in readable_scripts(self.languages),
        )


# OSD's script confidence on print it knows, measured at 150 dpi: 2.5-6.7 on English, 4-22 on
# Russian, Greek and Hebrew; 0.6-1.7 on scripts it does not know (Georgian, made-up glyphs),
# where the script it names is a guess.
MIN_SCRIPT_CONFIDENCE = 2.0

# Scripts OSD names that every language reads (digits and punctuation) or that Latin-script
# languages read (Fraktur is Latin print)
_LATIN = frozenset({"Latin", "Common", "Fraktur"})
# The script of each Tesseract language that is not written in Latin, by OSD's names; a code
# not listed reads Latin
_SCRIPTS: dict[str, frozenset[str]] = {
    **dict.fromkeys(("chi_sim", "chi_tra", "chi_sim_vert", "chi_tra_vert"), frozenset({"Han"})),
    **dict.fromkeys(("jpn", "jpn_vert"), frozenset({"Japanese", "Han", "Hiragana", "Katakana"})),
    **dict.fromkeys(("kor", "kor_vert"), frozenset({"Korean", "Hangul", "Han"})),
    **dict.fromkeys(
        (
            "rus",
            "ukr",
            "bel",
            "bul",
            "mkd",
            "srp",
            "kaz",
            "kir",
            "mon",
            "tgk",
            "tat",
            "uzb_cyrl",
            "aze_cyrl",
        ),
        frozenset({"Cyrillic"}),
    ),
    **dict.fromkeys(("ell", "grc"), frozenset({"Greek"})),
    **dict.fromkeys(("ara", "fas", "urd", "pus", "uig", "snd"), frozenset({"Arabic"})),
    **dict.fromkeys(("heb", "yid"), frozenset({"Hebrew"})),
    **dict.fromkeys(("hin", "mar", "nep", "san"), frozenset({"Devanagari"})),
    **dict.fromkeys(("ben", "asm"), frozenset({"Bengali"})),
    "tha": frozenset({"Thai"}),
    "tam": frozenset({"Tamil"}),
    "tel": frozenset({"Telugu"}),
    "kan": frozenset({"Kannada"}),
    "mal": frozenset({"Malayalam"}),
    "guj": frozenset({"Gujarati"}),
    "pan": frozenset({"Gurmukhi"}),
    "ori": frozenset({"Oriya"}),
    "sin": frozenset({"Sinhala"}),
    "khm": frozenset({"Khmer"}),
    "lao": frozenset({"Lao"}),
    "mya": frozenset({"Myanmar"}),
    "kat": frozenset({"Georgian"}),
    "hye": frozenset({"Armenian"}),
    "amh": frozenset({"Ethiopic"}),
    "tir": frozenset({"Ethiopic"}),
    "bod": frozenset({"Tibetan"}),
    "dzo": frozenset({"Tibetan"}),
    "div": frozenset({"Thaana"}),
    "syr": frozenset({"Syriac"}),
    "chr": frozenset({"Cherokee"}),
}


def readable_scripts(languages: tuple[str, ...]) -> frozenset[str]:
    """The scripts (OSD's names) that text in ``languages`` is written in; Tesseract's
    ``script/Han``-style models read the script they are named after."""
    scripts = set(_LATIN)
    for language in languages:
        if language.startswith("script/"):
            scripts.add(language.split("/", 1)[1])
        else:
            scripts |= _SCRIPTS.get(language, frozenset())
    return frozenset(scripts)


class _Raw(NamedTuple):
    line: int
    text: str
    confidence: float
    box: Box
    baseline: float
    angle: float
    alpha: bool  # three letters or more
    in_dictionary: bool


def _text(w: Any, level: Any) -> str:
    try:
        return str(w.GetUTF8Text(level) or "")
    except RuntimeError:  # tesserocr raises for an empty result instead of returning ""
        return ""


def _collect(t: Any, api: Any) -> OcrResult:
    RIL = t.RIL
    vertical = _mostly_vertical(t, api)
    iterator = api.GetIterator()
    # First pass: words with their line's baseline; the line's size needs all its words.
    raw: list[_Raw] = []
    line = -1
    base: tuple[tuple[int, int], tuple[int, int]] | None = None
    angle = 0.0
    for w in t.iterate_level(iterator, RIL.WORD):
        if w.IsAtBeginningOf(RIL.TEXTLINE) or line < 0:
            line += 1
            base = w.Baseline(RIL.TEXTLINE)
            angle = _angle(base)
        text = _text(w, RIL.WORD).strip()
        bbox = w.BoundingBox(RIL.WORD)
        if not text or bbox is None:
            continue
        x0, y0, x1, y1 = (float(v) for v in bbox)
        alpha = sum(c.isalpha() for c in text) >= 3
        raw.append(
            _Raw(
                line,
                text,
                float(w.Confidence(RIL.WORD)),
                Box(x0, y0, x1, y1),
                _baseline_at(base, x0, default=y1),
                angle,
                alpha,
                alpha and bool(w.WordIsFromDictionary()),
            )
        )
    sizes: dict[int, float] = {}
    for r in raw:
        sizes[r.line] = max(sizes.get(r.line, 1.0), r.baseline - r.box.y0)
    words: list[Word] = []
    for r in raw:
        size = sizes[r.line]
        th = math.radians(r.angle)
        # the box is axis-aligned; on a sloped line the word itself is a little shorter
        advance = (r.box.width - size * abs(math.sin(th))) / max(math.cos(th), 0.5)
        words.append(
            Word(
                text=r.text,
                confidence=r.confidence,
                box=r.box,
                origin=(r.box.x0, r.baseline),
                advance=max(advance, 1.0),
                size=size,
                angle=r.angle,
                line=r.line,
            )
        )
    return OcrResult(
        words=tuple(words),
        mean_confidence=float(api.MeanTextConf()) if words else 0.0,
        dictionary_words=sum(1 for r in raw if r.in_dictionary),
        alpha_words=sum(1 for r in raw if r.alpha),
        vertical=vertical,
    )


def _mostly_vertical(t: Any, api: Any) -> bool:
    """Most of the text sits in blocks read top to bottom (a speck of noise read as a vertical
    block must not condemn a page of horizontal lines)."""
    RIL = t.RIL
    vertical = horizontal = 0
    for block in t.iterate_level(api.GetIterator(), RIL.BLOCK):
        try:
            _orient, direction, _order, _deskew = block.Orientation()
        except RuntimeError:
            continue
        size = len(_text(block, RIL.BLOCK).strip())
        if direction == t.WritingDirection.TOP_TO_BOTTOM:
            vertical += size
        else:
            horizontal += size
    return vertical > horizontal


def _angle(base: tuple[tuple[int, int], tuple[int, int]] | None) -> float:
    """Counter-clockwise slope of a baseline given in y-down pixels, in degrees."""
    if not base:
        return 0.0
    (bx0, by0), (bx1, by1) = base
    if bx1 == bx0:
        return 0.0
    return -math.degrees(math.atan2(by1 - by0, bx1 - bx0))


def _baseline_at(
    base: tuple[tuple[int, int], tuple[int, int]] | None, x: float, *, default: float
) -> float:
    if not base:
        return default
    (bx0, by0), (bx1, by1) = base
    if bx1 == bx0:
        return float(by0)
    return float(by0 + (by1 - by0) * (x - bx0) / (bx1 - bx0))
