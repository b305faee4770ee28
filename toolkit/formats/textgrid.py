"""Praat TextGrid references (via praatio): the annotators' interchange format.

Tiers: ``utterances`` (one interval per turn, verbatim text; several speakers may use one tier
each, named ``utterances/SPEAKER``), ``words`` (optional timed words), ``speech`` (``speech`` or
``nonspeech``; unlabelled means not annotated), ``unresolved`` and ``derived_times`` (one interval saying the
word times were derived by forced alignment: model, weights sha256, measured p95 onset error). Empty labels are gaps;
other tiers are ignored. A file is refused, naming it, when it is malformed, truncated,
has intervals out of order, overlapping, reversed, negative or beyond the recording.
"""

from __future__ import annotations

import math
import re
import tempfile
from dataclasses import dataclass
from itertools import compress, repeat
from operator import itemgetter
from pathlib import Path

import numpy as np
from praatio import textgrid as praat
from praatio.utilities import textgrid_io
from praatio.utilities.constants import INTERVAL_TIER, POINT_TIER

from toolkit.core.data_files import parse_json
from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_text
from toolkit.core.text import read_text
from toolkit.core.transcripts import (
    DERIVED_METHOD,
    NONSPEECH,
    SPEECH,
    DerivedTimes,
    Interval,
    Reference,
    Utterance,
    Word,
)
from toolkit.formats.praat_text import PraatEnd, PraatValueError, PraatValues, praat_floats

UTTERANCES = "utterances"
WORDS = "words"
SPEECH_TIER = "speech"
UNRESOLVED = "unresolved"
DERIVED_TIER = "derived_times"
_DERIVED_LABEL = re.compile(
    rf"{DERIVED_METHOD}; model=(?P<model>.+?); weights_sha256=(?P<sha>[0-9a-f]{{64}}); "
    r"onset_p95_s=(?P<p95>unmeasured|\d+(\.\d+)?)"
)
SPEAKER_SEPARATOR = "/"
UNKNOWN_SPEAKER = "unknown"  # tier utterances/unknown holds unnamed speakers' turns next to named ones
# An interval may end this far past the recording's duration (rounding in other tools).
DURATION_TOLERANCE = 0.01
_EPS = 1e-9


@dataclass(frozen=True)
class _Tier:
    """One tier as written in the file, its entries in file order as three columns (a point's end is its time)."""

    name: str
    is_interval: bool
    starts: list[float]
    ends: list[float]
    texts: list[str]

    @property
    def entries(self) -> list[tuple[float, float, str]]:
        return list(zip(self.starts, self.ends, self.texts))

    def labelled(self) -> tuple[list[float], list[float], list[str]]:
        """The entries with a label, white space in it collapsed, as columns (map and compress: no loop of
        ours over a tier's tens of thousands of entries)."""
        keep = list(map(str.strip, self.texts))
        labels = list(map(" ".join, map(str.split, compress(self.texts, keep))))
        return list(compress(self.starts, keep)), list(compress(self.ends, keep)), labels


def read_textgrid(path: str | Path, recording_id: str | None = None, duration: float | None = None) -> Reference:
    """Read and validate a TextGrid; ``duration`` (seconds), when known, bounds every labelled interval."""
    tiers = {tier.name: tier for tier in _parse(path, read_text(path))}
    ours = [
        name for name in tiers if _is_utterance_tier(name) or name in (WORDS, SPEECH_TIER, UNRESOLVED, DERIVED_TIER)
    ]
    if not any(_is_utterance_tier(name) for name in ours):
        raise InputError(path, f"no '{UTTERANCES}' tier (tiers: {', '.join(tiers) or 'none'})")
    for name in ours:
        _validate(path, tiers[name], duration)

    def labelled(name: str) -> list[tuple[float, float, str]]:
        tier = tiers.get(name)
        return [] if tier is None else list(zip(*tier.labelled()))

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
        words=_words(tiers.get(WORDS)),
        speech=speech,
        unresolved=[Interval(s, e, label) for s, e, label in labelled(UNRESOLVED)],
        derived_times=_derived(path, [label for _, _, label in labelled(DERIVED_TIER)]),
    )


def derived_label(derived: DerivedTimes) -> str:
    """The ``derived_times`` tier's one label: ``forced alignment; model=M; weights_sha256=H; onset_p95_s=X``."""
    p95 = "unmeasured" if derived.onset_p95_s is None else f"{derived.onset_p95_s:g}"
    return f"{DERIVED_METHOD}; model={derived.model}; weights_sha256={derived.weights_sha256}; onset_p95_s={p95}"


def _derived(path: str | Path, labels: list[str]) -> DerivedTimes | None:
    """The provenance of derived word times, from the ``derived_times`` tier's one label (none: marked times)."""
    if not labels:
        return None
    found = _DERIVED_LABEL.fullmatch(labels[0])
    if len(labels) > 1 or found is None:
        raise InputError(
            path, f"tier '{DERIVED_TIER}' must hold one label '{derived_label(DerivedTimes('MODEL', 64 * '0', 0.5))}'"
        )
    p95 = found["p95"]
    return DerivedTimes(found["model"], found["sha"], None if p95 == "unmeasured" else float(p95))


def _words(tier: _Tier | None) -> list[Word]:
    """The timed words of the ``words`` tier."""
    if tier is None:
        return []
    starts, ends, labels = tier.labelled()
    return Word.from_columns(labels, starts, ends)


def write_textgrid(reference: Reference, path: str | Path, duration: float) -> Path:
    """Write ``reference`` as a long-format TextGrid spanning ``0..duration``, atomically."""
    speakers = sorted({u.speaker for u in reference.utterances}) or [""]
    tiers: list[tuple[str, list[tuple[float, float, str]]]] = []
    for speaker in speakers:
        name = UTTERANCES if speakers == [""] else f"{UTTERANCES}{SPEAKER_SEPARATOR}{speaker or UNKNOWN_SPEAKER}"
        tiers.append((name, [(u.start, u.end, u.text) for u in reference.utterances if u.speaker == speaker]))
    turns = [u.text for u in reference.utterances if not (math.isfinite(u.start) and math.isfinite(u.end))]
    if turns:  # a plain-text reference's: an interval would invent its times
        raise InputError(path, f"cannot store untimed turns in a TextGrid tier (time them first): {turns[0][:60]}")
    untimed = [w.text for w in reference.words if not w.timed]
    if untimed:
        raise InputError(path, f"cannot store untimed words in a TextGrid tier: {' '.join(untimed[:5])}")
    tiers.append((WORDS, [(w.start, w.end, w.text) for w in reference.words]))  # type: ignore[misc]
    tiers.append((SPEECH_TIER, [(i.start, i.end, i.label) for i in reference.speech]))
    tiers.append((UNRESOLVED, [(i.start, i.end, i.label or "?") for i in reference.unresolved]))
    if reference.derived_times is not None:
        tiers.append((DERIVED_TIER, [(0.0, duration, derived_label(reference.derived_times))]))

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


def _parse(path: str | Path, text: str) -> list[_Tier]:
    """The file's tiers: a text TextGrid (long or short) as Praat reads it, a JSON one with praatio."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        tiers = _parse_json(path, text)
    elif stripped.startswith("File type") and "ooTextFile" in stripped[:40] and '"TextGrid"' in stripped[:80]:
        tiers = _parse_text(path, text)
    else:
        raise InputError(
            path, "malformed TextGrid: missing the 'File type = \"ooTextFile\"' / 'Object class = \"TextGrid\"' header"
        )
    seen: set[str] = set()
    for tier in tiers:
        if tier.name in seen:
            raise InputError(path, f"malformed TextGrid: two tiers are named '{tier.name}'")
        seen.add(tier.name)
    return tiers


def _parse_json(path: str | Path, text: str) -> list[_Tier]:
    """praatio's JSON TextGrid, after our JSON checks (NaN, infinities, huge numbers, deep nesting)."""
    parse_json(text, path)
    try:
        raw = textgrid_io.parseTextgridStr(text, includeEmptyIntervals=True)
        tiers = []
        for t in raw["tiers"]:
            entries = [
                (float(e[0]), float(e[1]), str(e[2]))
                if t["class"] == INTERVAL_TIER
                else (float(e[0]), float(e[0]), str(e[1]))
                for e in t["entries"]
            ]
            tiers.append(_Tier(t["name"], t["class"] == INTERVAL_TIER, *_columns(entries)))
        return tiers
    except Exception as error:  # praatio's parser fails with assorted exception types
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InputError(path, f"malformed TextGrid: {detail}") from None


def _parse_text(path: str | Path, text: str) -> list[_Tier]:
    """Walk the file's values (toolkit.formats.praat_text): header, then each tier and its entries.

    The declared counts are the file's own length: a file cut anywhere runs out of values early
    (or keeps values past its last tier) and is refused, never read as a shorter reference.
    """
    values = PraatValues(text)
    tiers: list[_Tier] = []
    try:
        values.text("the file type")
        values.text("the object class")
        values.number("the grid's xmin")
        values.number("the grid's xmax")
        declared = 0 if values.flag() == "<absent>" else values.count("the number of tiers")
        for number in range(1, declared + 1):
            if not values.remaining:
                raise PraatEnd(f"it declares {declared} tiers but holds {len(tiers)}")
            tiers.append(_read_tier(values, number))
    except PraatEnd as end:
        raise InputError(path, f"malformed or truncated TextGrid: {end.what}") from None
    except PraatValueError as error:
        raise InputError(path, f"malformed TextGrid: {error}") from None
    if values.remaining:
        raise InputError(
            path, f"malformed or truncated TextGrid: it declares {declared} tiers but more follows the last one"
        )
    return tiers


def _read_tier(values: PraatValues, number: int) -> _Tier:
    """One tier: class, name, xmin, xmax, its entry count, then each entry (start, end, text)."""
    kind = values.text(f"tier {number}'s class")
    if kind not in (INTERVAL_TIER, POINT_TIER):
        raise PraatValueError(f"tier {number}'s class should be IntervalTier or TextTier, found '{kind}'")
    name = values.text(f"tier {number}'s name")
    try:
        values.number(f"tier '{name}': its xmin")
        values.number(f"tier '{name}': its xmax")
        size = values.count(f"tier '{name}': its interval count")
    except PraatEnd:
        raise PraatEnd(f"tier '{name}' has no interval count") from None
    columns = _entries_at_once(values, size, kind == INTERVAL_TIER)
    if columns is None:
        entries: list[tuple[float, float, str]] = []
        try:
            for entry in range(1, size + 1):
                where = f"tier '{name}' {'interval' if kind == INTERVAL_TIER else 'point'} {entry}"
                start = values.number(f"{where}: its start")
                end = values.number(f"{where}: its end") if kind == INTERVAL_TIER else start
                if start < 0 or end < 0:
                    raise PraatValueError(f"{where} has a negative time")
                entries.append((start, end, values.text(f"{where}: its text")))
        except PraatEnd:
            raise PraatEnd(f"tier '{name}' declares {size} intervals but holds {len(entries)}") from None
        columns = _columns(entries)
    return _Tier(name, kind == INTERVAL_TIER, *columns)


def _columns(entries: list[tuple[float, float, str]]) -> tuple[list[float], list[float], list[str]]:
    """Entries as three columns: starts, ends, texts."""
    starts, ends, texts = (list(column) for column in zip(*entries)) if entries else ([], [], [])
    return starts, ends, texts


def _entries_at_once(
    values: PraatValues, size: int, intervals: bool
) -> tuple[list[float], list[float], list[str]] | None:
    """A tier's entries read as one block when every value is of its kind (the common case, and fast), as
    columns; None when anything is off, so that the entries are read again one by one to say what is wrong."""
    ready = values.columns(size) if intervals else None
    if ready is not None:
        return ready
    width = 3 if intervals else 2
    block = values.entries(size, width)
    if block is None:
        return None
    texts = block[width - 1 :: width]
    quoted = min(map(len, texts), default=2) > 1 and all(map(str.startswith, texts, repeat('"')))
    times = praat_floats(block[0::3] + block[1::3] if intervals else block[0::2]) if quoted else None
    if times is not None and all(map(str.endswith, texts, repeat('"'))):
        starts, ends = (times[:size], times[size:]) if intervals else (times, times)
        if min(starts, default=0.0) >= 0 and min(ends, default=0.0) >= 0:
            return starts, ends, _unquoted(texts)
    values.rewind(size * width)
    return None


_INSIDE_QUOTES = itemgetter(slice(1, -1))


def _unquoted(texts: list[str]) -> list[str]:
    """Texts in double quotes without them, their doubled quotes undone where the tier has any (most have none)."""
    inside = list(map(_INSIDE_QUOTES, texts))
    return [text.replace('""', '"') for text in inside] if '""' in "".join(inside) else inside


def _validate(path: str | Path, tier: _Tier, duration: float | None) -> None:
    """Refuse reversed, negative, out-of-order, overlapping or too-late intervals in one of our tiers."""
    if not tier.is_interval:
        raise InputError(path, f"tier '{tier.name}' must be an interval tier, not a point tier")
    if _all_right(tier, duration):
        return
    previous = (0, -math.inf, -math.inf)
    for number, (start, end, label) in enumerate(tier.entries, 1):
        problem = _interval_problem(start, end, bool(label.strip()), previous, duration)
        if problem is not None:
            where = f"tier '{tier.name}' interval {number} ({start:g}-{end:g} s)"
            raise InputError(path, f"{where} {problem}")
        previous = (number, start, end)


def _all_right(tier: _Tier, duration: float | None) -> bool:
    """Whether no interval has any problem of :func:`_interval_problem`, tested a condition at a time over the
    whole tier as arrays (finite times from 0, each ending after it starts and starting after the one before ends);
    False when any may, so that the intervals are checked one by one to name the first wrong one."""
    if not tier.starts:
        return True
    starts, ends = np.array(tier.starts, dtype=float), np.array(tier.ends, dtype=float)
    if not (np.isfinite(starts).all() and np.isfinite(ends).all() and starts.min() >= 0):
        return False
    if not (starts <= ends).all() or not (starts[1:] >= ends[:-1] - _EPS).all():
        return False
    if any(tier.texts[k].strip() for k in np.flatnonzero(ends - starts <= _EPS)):  # a labelled zero-length one
        return False
    if duration is None or ends.max() <= duration + DURATION_TOLERANCE:
        return True
    return not any(tier.texts[k].strip() for k in np.flatnonzero(ends > duration + DURATION_TOLERANCE))


def _interval_problem(
    start: float, end: float, labelled: bool, previous: tuple[int, float, float], duration: float | None
) -> str | None:
    """What is wrong with one interval after ``previous`` (number, start, end), or None; the message is
    built only for a wrong one (a long tier has tens of thousands of right ones)."""
    if not (math.isfinite(start) and math.isfinite(end)):
        return "has a time that is not a finite number"
    if start < 0:
        return "starts before 0"
    if end < start:
        return "ends before it starts"
    if labelled and end - start <= _EPS:
        return "has zero length"
    p_number, p_start, p_end = previous
    if start < p_start - _EPS:
        return f"is out of order: it starts before interval {p_number} ({p_start:g}-{p_end:g} s)"
    if start < p_end - _EPS:
        return f"overlaps interval {p_number} ({p_start:g}-{p_end:g} s)"
    if duration is not None and labelled and end > duration + DURATION_TOLERANCE:
        return f"ends after the recording's duration ({duration:g} s)"
    return None
