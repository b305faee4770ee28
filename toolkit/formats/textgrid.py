"""Praat TextGrid references (via praatio): the annotators' interchange format.

Tiers: ``utterances`` (one interval per turn, verbatim text; several speakers may use one tier
each, named ``utterances/SPEAKER``), ``words`` (optional timed words), ``speech`` (``speech`` or
``nonspeech``; unlabelled means not annotated) and ``unresolved``. Empty labels are gaps;
other tiers are ignored. A file is refused, naming it, when it is malformed, truncated,
has intervals out of order, overlapping, reversed, negative or beyond the recording.
"""

from __future__ import annotations

import math
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from praatio import textgrid as praat
from praatio.utilities import textgrid_io

from toolkit.core.data_files import parse_json
from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_text
from toolkit.core.text import read_text
from toolkit.core.transcripts import NONSPEECH, SPEECH, Interval, Reference, Utterance, Word

UTTERANCES = "utterances"
WORDS = "words"
SPEECH_TIER = "speech"
UNRESOLVED = "unresolved"
SPEAKER_SEPARATOR = "/"
UNKNOWN_SPEAKER = "unknown"  # tier utterances/unknown holds unnamed speakers' turns next to named ones
# An interval may end this far past the recording's duration (rounding in other tools).
DURATION_TOLERANCE = 0.01
_EPS = 1e-9


@dataclass(frozen=True)
class _Tier:
    """One tier as written in the file, entries in file order."""

    name: str
    is_interval: bool
    entries: list[tuple[float, float, str]]


def read_textgrid(path: str | Path, recording_id: str | None = None, duration: float | None = None) -> Reference:
    """Read and validate a TextGrid; ``duration`` (seconds), when known, bounds every labelled interval."""
    tiers = {tier.name: tier for tier in _parse(path, read_text(path))}
    ours = [name for name in tiers if _is_utterance_tier(name) or name in (WORDS, SPEECH_TIER, UNRESOLVED)]
    if not any(_is_utterance_tier(name) for name in ours):
        raise InputError(path, f"no '{UTTERANCES}' tier (tiers: {', '.join(tiers) or 'none'})")
    for name in ours:
        _validate(path, tiers[name], duration)

    def labelled(name: str) -> list[tuple[float, float, str]]:
        tier = tiers.get(name)
        return [] if tier is None else [(s, e, " ".join(t.split())) for s, e, t in tier.entries if t.strip()]

    utterances = sorted(
        (
            Utterance(s, e, text, _speaker(name))
            for name in ours
            if _is_utterance_tier(name)
            for s, e, text in labelled(name)
        ),
        key=lambda u: (u.start, u.end, u.speaker),
    )
    speech = []
    for start, end, label in labelled(SPEECH_TIER):
        if label not in (SPEECH, NONSPEECH):
            raise InputError(
                path,
                f"tier '{SPEECH_TIER}' has label '{label}' at {start:g}-{end:g} s; "
                f"expected '{SPEECH}', '{NONSPEECH}' or empty (not annotated)",
            )
        speech.append(Interval(start, end, label))
    return Reference(
        recording_id=recording_id or Path(path).stem,
        utterances=utterances,
        words=[Word(text, s, e) for s, e, text in labelled(WORDS)],
        speech=speech,
        unresolved=[Interval(s, e, label) for s, e, label in labelled(UNRESOLVED)],
    )


def write_textgrid(reference: Reference, path: str | Path, duration: float) -> Path:
    """Write ``reference`` as a long-format TextGrid spanning ``0..duration``, atomically."""
    speakers = sorted({u.speaker for u in reference.utterances}) or [""]
    tiers: list[tuple[str, list[tuple[float, float, str]]]] = []
    for speaker in speakers:
        name = UTTERANCES if speakers == [""] else f"{UTTERANCES}{SPEAKER_SEPARATOR}{speaker or UNKNOWN_SPEAKER}"
        tiers.append((name, [(u.start, u.end, u.text) for u in reference.utterances if u.speaker == speaker]))
    untimed = [w.text for w in reference.words if not w.timed]
    if untimed:
        raise InputError(path, f"cannot store untimed words in a TextGrid tier: {' '.join(untimed[:5])}")
    tiers.append((WORDS, [(w.start, w.end, w.text) for w in reference.words]))  # type: ignore[misc]
    tiers.append((SPEECH_TIER, [(i.start, i.end, i.label) for i in reference.speech]))
    tiers.append((UNRESOLVED, [(i.start, i.end, i.label or "?") for i in reference.unresolved]))

    grid = praat.Textgrid(0.0, _time(duration))
    for name, entries in tiers:
        intervals = []
        for start, end, label in entries:
            if end > duration + DURATION_TOLERANCE and end != float("inf"):
                raise InputError(
                    path,
                    f"tier '{name}' interval {start:g}-{end:g} s ends after the recording's duration {duration:g} s",
                )
            intervals.append((_time(start), _time(min(end, duration)), label))
        try:
            grid.addTier(praat.IntervalTier(name, intervals, 0.0, _time(duration)))
        except Exception as error:  # praatio reports overlaps/reversals with its own exception types
            raise InputError(path, f"tier '{name}': {error}".replace("\n", " ")) from None
    with tempfile.TemporaryDirectory() as scratch:
        draft = Path(scratch) / "draft.TextGrid"
        grid.save(
            str(draft),
            format="long_textgrid",
            includeBlankSpaces=True,
            minimumIntervalLength=None,
            reportingMode="error",
        )
        text = draft.read_text(encoding="utf-8")
    return atomic_write_text(path, text)


def _time(seconds: float) -> float:
    """Microsecond precision; praatio writes floats with repr and cannot read back ``5e-05``,
    so times under 0.1 ms are rounded to 0 or 0.1 ms."""
    value = round(seconds, 6)
    if 0 < value < 1e-4:
        return 0.0 if value < 5e-5 else 1e-4
    return value


def _is_utterance_tier(name: str) -> bool:
    return name == UTTERANCES or name.startswith(UTTERANCES + SPEAKER_SEPARATOR)


def _speaker(tier_name: str) -> str:
    speaker = tier_name.partition(SPEAKER_SEPARATOR)[2]
    return "" if speaker == UNKNOWN_SPEAKER else speaker


_LONG_TIER_COUNT = re.compile(r"^\s*size\s*=\s*(\d+)", re.MULTILINE)
_LONG_ENTRY_COUNT = re.compile(r"(?:intervals|points):\s*size\s*=\s*(\d+)")
_SHORT_TIER_HEADER = re.compile(
    r'"(?:IntervalTier|TextTier)"\s*\n\s*"(?:[^"]|"")*"\s*\n\s*\S+\s*\n\s*\S+\s*\n\s*(\d+)\s*\n'
)
_NEGATIVE = re.compile(r"(?:xmin|xmax|number)\s*=\s*-\s*0*\.?0*[1-9]")


def _parse(path: str | Path, text: str) -> list[_Tier]:
    """Parse with praatio, then check what praatio tolerates: truncation and negative times."""
    stripped = text.lstrip()
    is_json = stripped.startswith("{")
    if not is_json and not (
        stripped.startswith("File type") and "ooTextFile" in stripped[:40] and '"TextGrid"' in stripped[:80]
    ):
        raise InputError(
            path, "malformed TextGrid: missing the 'File type = \"ooTextFile\"' / 'Object class = \"TextGrid\"' header"
        )
    if _NEGATIVE.search(text):
        raise InputError(path, "malformed TextGrid: it has a negative time")
    if is_json:
        parse_json(text, path)  # refuses NaN, infinities, huge numbers and deep nesting, which praatio takes
    try:
        raw = textgrid_io.parseTextgridStr(text, includeEmptyIntervals=True)
        tiers = [
            _Tier(
                t["name"],
                t["class"] == praat.INTERVAL_TIER,
                [
                    (float(e[0]), float(e[1]), str(e[2]))
                    if t["class"] == praat.INTERVAL_TIER
                    else (float(e[0]), float(e[0]), str(e[1]))
                    for e in t["entries"]
                ],
            )
            for t in raw["tiers"]
        ]
    except Exception as error:  # praatio's parser fails with assorted exception types
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InputError(path, f"malformed TextGrid: {detail}") from None
    if not is_json:
        _check_counts(path, text, tiers)
    seen: set[str] = set()
    for tier in tiers:
        if tier.name in seen:
            raise InputError(path, f"malformed TextGrid: two tiers are named '{tier.name}'")
        seen.add(tier.name)
    return tiers


def _check_counts(path: str | Path, text: str, tiers: list[_Tier]) -> None:
    """Refuse a file whose declared tier/interval counts disagree with its content (truncation)."""
    long_format = "item [" in text or "item[" in text
    if long_format:
        header = re.split(r"item ?\[", text, maxsplit=1)[0]
        declared_tiers = _LONG_TIER_COUNT.search(header)
        declared_entries = [int(n) for n in _LONG_ENTRY_COUNT.findall(text)]
    else:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        declared_tiers = None
        if "<exists>" in lines and lines.index("<exists>") + 1 < len(lines):
            declared_tiers = re.match(r"(\d+)", lines[lines.index("<exists>") + 1])
        declared_entries = [int(n) for n in _SHORT_TIER_HEADER.findall(text)]
    if len(declared_entries) != len(tiers):
        headed = len(declared_entries)
        name = tiers[headed].name if headed < len(tiers) else "?"
        raise InputError(
            path,
            f"malformed or truncated TextGrid: tier '{name}' has no interval count "
            f"(only {headed} of {len(tiers)} tier headers are complete)",
        )
    if declared_tiers is not None and int(declared_tiers.group(1)) != len(tiers):
        raise InputError(
            path, f"malformed or truncated TextGrid: it declares {declared_tiers.group(1)} tiers but holds {len(tiers)}"
        )
    for tier, declared in zip(tiers, declared_entries):
        if declared != len(tier.entries):
            raise InputError(
                path,
                f"malformed or truncated TextGrid: tier '{tier.name}' declares "
                f"{declared} intervals but holds {len(tier.entries)}",
            )


def _validate(path: str | Path, tier: _Tier, duration: float | None) -> None:
    """Refuse reversed, negative, out-of-order, overlapping or too-late intervals in one of our tiers."""
    if not tier.is_interval:
        raise InputError(path, f"tier '{tier.name}' must be an interval tier, not a point tier")
    previous: tuple[int, float, float] | None = None
    for number, (start, end, label) in enumerate(tier.entries, 1):
        where = f"tier '{tier.name}' interval {number} ({start:g}-{end:g} s)"
        if not (math.isfinite(start) and math.isfinite(end)):
            raise InputError(path, f"{where} has a time that is not a finite number")
        if start < 0:
            raise InputError(path, f"{where} starts before 0")
        if end < start or (label.strip() and end - start <= _EPS):
            raise InputError(path, f"{where} ends before it starts" if end < start else f"{where} has zero length")
        if previous is not None:
            p_number, p_start, p_end = previous
            if start < p_start - _EPS:
                raise InputError(
                    path, f"{where} is out of order: it starts before interval {p_number} ({p_start:g}-{p_end:g} s)"
                )
            if start < p_end - _EPS:
                raise InputError(path, f"{where} overlaps interval {p_number} ({p_start:g}-{p_end:g} s)")
        if duration is not None and label.strip() and end > duration + DURATION_TOLERANCE:
            raise InputError(path, f"{where} ends after the recording's duration ({duration:g} s)")
        previous = (number, start, end)
