"""Read and write references (TextGrid, STM, plain text), hypotheses (CTM, JSON, text) and names lists.

Formats are chosen by file extension; the recording id defaults to the file stem. Every
reader refuses bad input with an :class:`~toolkit.core.errors.InputError` naming the file.
"""

from __future__ import annotations

import math
from dataclasses import fields
from functools import lru_cache
from itertools import repeat
from operator import le
from pathlib import Path
from typing import Any

from toolkit.core.data_files import read_json
from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_json
from toolkit.core.transcripts import Hypothesis, Reference, Word
from toolkit.formats.ctm import read_ctm_hypothesis, write_ctm
from toolkit.formats.ids import describe_difference
from toolkit.formats.names import read_names, write_names
from toolkit.formats.plaintext import read_plaintext_hypothesis, read_plaintext_reference
from toolkit.formats.stm import read_stm_reference, write_stm
from toolkit.formats.textgrid import DURATION_TOLERANCE, read_textgrid, write_textgrid
from toolkit.formats.words import checked_word

__all__ = [
    "REFERENCE_SUFFIXES",
    "NAMES_SUFFIX",
    "read_reference",
    "write_reference_textgrid",
    "write_stm",
    "read_hypothesis",
    "read_words_json",
    "hypothesis_json_id",
    "write_ctm",
    "write_hypothesis_json",
    "read_names",
    "write_names",
]

REFERENCE_SUFFIXES = {".textgrid": "textgrid", ".stm": "stm", ".txt": "text"}
NAMES_SUFFIX = ".names.txt"
_WORD_FIELDS = {f.name for f in fields(Word)}


def read_reference(
    path: str | Path,
    recording_id: str | None = None,
    duration: float | None = None,
    names_path: str | Path | None = None,
    channel: str | None = None,
) -> Reference:
    """Read a ``.TextGrid``, ``.stm`` or ``.txt`` reference, with names from ``names_path`` if given.

    ``duration`` (the recording's, in seconds) bounds TextGrid intervals and STM segments (a plain text's turns
    are untimed); ``channel`` chooses one channel of an STM recording.
    """
    path = Path(path)
    kind = REFERENCE_SUFFIXES.get(path.suffix.lower())
    if kind is None or path.name.lower().endswith(NAMES_SUFFIX):
        raise InputError(path, f"unknown reference format '{path.suffix}' (expected .TextGrid, .stm or .txt)")
    if kind == "textgrid":
        reference = read_textgrid(path, recording_id, duration)
    elif kind == "stm":
        reference = read_stm_reference(path, recording_id, channel)
        _check_within(path, reference, duration)
    else:
        reference = read_plaintext_reference(path, recording_id)
    if names_path is not None:
        reference.names = read_names(names_path)
    return reference


def write_reference_textgrid(reference: Reference, path: str | Path, duration: float) -> Path:
    """Write ``reference`` as a Praat TextGrid covering ``0..duration`` seconds, atomically."""
    return write_textgrid(reference, path, duration)


def read_hypothesis(path: str | Path, recording_id: str | None = None, channel: str | None = None) -> Hypothesis:
    """Read a ``.ctm``, ``.json`` (:meth:`Hypothesis.to_json`) or ``.txt`` hypothesis (``channel``: of a CTM)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".ctm":
        return read_ctm_hypothesis(path, recording_id, channel)
    if suffix == ".txt":
        return read_plaintext_hypothesis(path, recording_id)
    if suffix == ".json":
        return _read_hypothesis_json(path, recording_id)
    raise InputError(path, f"unknown hypothesis format '{path.suffix}' (expected .ctm, .json or .txt)")


def read_words_json(path: str | Path) -> list[Word]:
    """The words of a ``{"words": [{"text", "start", "end"[, "confidence"]}, ...]}`` file (what an external
    recognizer writes for one piece of audio; other top-level keys are ignored), each checked like a CTM line."""
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("words"), list):
        raise InputError(path, "not a words file: expected an object with a list 'words'")
    words = _words_at_once(data["words"])
    return _checked_words(path, data["words"]) if words is None else words


def write_hypothesis_json(hypothesis: Hypothesis, path: str | Path) -> Path:
    """Write ``hypothesis.to_json()`` atomically."""
    return atomic_write_json(path, hypothesis.to_json())


def _hypothesis_record(path: Path) -> dict[str, Any]:
    """A hypothesis JSON file's top level, checked: an object with a string 'recording_id' and a list 'words'.

    Pairing reads the id and then the words of the same file: the parsed file is kept for the next
    call while its size, modification time and inode stay the same (callers never change it), until its words
    are read (:func:`_read_hypothesis_json` lets it go).
    """
    try:
        stat = path.stat()
    except OSError:
        return _parsed_hypothesis_record(path, None)
    return _parsed_hypothesis_record(path, (stat.st_size, stat.st_mtime_ns, stat.st_ino))


@lru_cache(maxsize=2)
def _parsed_hypothesis_record(path: Path, stamp: tuple[int, int, int] | None) -> dict[str, Any]:
    data = read_json(path)
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("recording_id"), str)
        or not isinstance(data.get("words"), list)
    ):
        raise InputError(
            path, "not a hypothesis record: expected an object with a string 'recording_id' and a list 'words'"
        )
    return data


def hypothesis_json_id(path: str | Path) -> str:
    """The recording a hypothesis JSON file is for, without checking its words (pairing needs only that)."""
    return str(_hypothesis_record(Path(path))["recording_id"])


def _read_hypothesis_json(path: Path, recording_id: str | None) -> Hypothesis:
    """A :meth:`Hypothesis.to_json` file, every field type-checked and every word checked like a CTM line."""
    data = _hypothesis_record(path)
    if not isinstance(data.get("arm", ""), str) or not isinstance(data.get("meta", {}), dict):
        raise InputError(path, "not a hypothesis record: 'arm' must be a string and 'meta' an object")
    if recording_id is not None and data["recording_id"] != recording_id:
        raise InputError(
            path,
            f"hypothesis is for recording '{data['recording_id']}', "
            f"expected '{recording_id}'{describe_difference(data['recording_id'], recording_id)}",
        )
    words = _words_at_once(data["words"])
    if words is None:
        words = _checked_words(path, data["words"])
    _parsed_hypothesis_record.cache_clear()  # its thousands of word objects freed for what the caller does next
    return Hypothesis(data["recording_id"], words, data.get("arm", ""), dict(data.get("meta", {})))


def _checked_words(path: Path, items: list[Any]) -> list[Word]:
    """Every word checked like a CTM line, one by one: an InputError names the first wrong one."""
    words = []
    previous = -math.inf
    for index, item in enumerate(items, 1):
        if not isinstance(item, dict) or not set(item) <= _WORD_FIELDS or "text" not in item:
            raise InputError(
                path,
                f"word {index}: expected an object with 'text' and optional "
                f"{', '.join(sorted(_WORD_FIELDS - {'text'}))}, got {item!r}"[:300],
            )
        word = checked_word(
            path,
            f"word {index}",
            item["text"],
            item.get("start"),
            item.get("end"),
            item.get("confidence"),
            item.get("segment_id"),
        )
        if word.timed:
            if word.start < previous:  # type: ignore[operator]
                raise InputError(path, f"word {index} '{word.text}' at {word.start} s is out of order")
            previous = word.start  # type: ignore[assignment]
        words.append(word)
    return words


_NUMBERS = (int, float)
_OPTIONAL_NUMBERS = {int, float, type(None)}


def _words_at_once(items: list[Any]) -> list[Word] | None:
    """The words when every one passes :func:`_checked_words`'s checks, tested a field at a time over all words
    (the common case, and fast); None when any may not, so that they are checked one by one to say which."""
    if not set(map(type, items)) <= {dict} or not set().union(*items) <= _WORD_FIELDS:
        return None
    texts, starts, ends, confidences, segments = (
        _field(items, key) for key in ("text", "start", "end", "confidence", "segment_id")
    )
    times = set(map(type, starts)) | set(map(type, ends))
    if not (
        set(map(type, texts)) <= {str}
        and all(map(str.strip, texts))
        and times | set(map(type, confidences)) <= _OPTIONAL_NUMBERS
        and set(map(type, segments)) <= {str, type(None)}
        and (_all_timed_forward(starts, ends) if times <= set(_NUMBERS) else _timed_or_not(starts, ends))
    ):
        return None
    onsets = [s for s in starts if s is not None]
    numbers = onsets + [e for e in ends if e is not None] + [c for c in confidences if c is not None]
    if onsets != sorted(onsets) or not all(map(math.isfinite, numbers)):  # timed words in time order
        return None
    return Word.from_columns(texts, _as_floats(starts), _as_floats(ends), _as_floats(confidences), segments)


def _field(items: list[dict[str, Any]], key: str) -> list[Any]:
    """One field of every word, None where a word has none."""
    return list(map(dict.get, items, repeat(key)))


def _all_timed_forward(starts: list[float], ends: list[float]) -> bool:
    """Whether every word (all timed) starts at 0 or later and ends no earlier than it starts, a condition at a time
    over all words."""
    return min(starts, default=0) >= 0 and all(map(le, starts, ends))


def _timed_or_not(starts: list[Any], ends: list[Any]) -> bool:
    """Whether every word has both times, in order from 0, or neither, word by word."""
    return all(
        (s is None and e is None) or (type(s) in _NUMBERS and type(e) in _NUMBERS and 0 <= s <= e)
        for s, e in zip(starts, ends)
    )


def _as_floats(values: list[Any]) -> list[float | None]:
    """Numbers as floats (a JSON ``1`` is an int), None kept."""
    return [None if v is None else float(v) for v in values] if int in set(map(type, values)) else values


def _check_within(path: Path, reference: Reference, duration: float | None) -> None:
    """Refuse STM segments that end after the recording."""
    if duration is None:
        return
    for utterance in reference.utterances:
        if utterance.end > duration + DURATION_TOLERANCE:
            raise InputError(
                path,
                f"segment {utterance.start:g}-{utterance.end:g} s ends after the recording's duration ({duration:g} s)",
            )
