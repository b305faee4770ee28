"""Read and write references (TextGrid, STM, plain text), hypotheses (CTM, JSON, text) and names lists.

Formats are chosen by file extension; the recording id defaults to the file stem. Every
reader refuses bad input with an :class:`~toolkit.errors.InputError` naming the file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from toolkit.errors import InputError
from toolkit.formats.ctm import read_ctm_hypothesis, write_ctm
from toolkit.formats.names import read_names, write_names
from toolkit.formats.plaintext import read_plaintext_hypothesis, read_plaintext_reference
from toolkit.formats.stm import read_stm_reference, write_stm
from toolkit.formats.text import read_text
from toolkit.formats.textgrid import DURATION_TOLERANCE, read_textgrid, write_textgrid
from toolkit.records import Hypothesis, Reference
from toolkit.store import atomic_write_json

__all__ = [
    "REFERENCE_SUFFIXES", "NAMES_SUFFIX",
    "read_reference", "write_reference_textgrid", "write_stm",
    "read_hypothesis", "write_ctm", "write_hypothesis_json",
    "read_names", "write_names",
]

REFERENCE_SUFFIXES = {".textgrid": "textgrid", ".stm": "stm", ".txt": "text"}
NAMES_SUFFIX = ".names.txt"


def read_reference(path: str | Path, recording_id: str | None = None, duration: float | None = None,
                   names_path: str | Path | None = None) -> Reference:
    """Read a ``.TextGrid``, ``.stm`` or ``.txt`` reference, with names from ``names_path`` if given.

    ``duration`` (the recording's, in seconds) bounds TextGrid intervals and ends an untimed text.
    """
    path = Path(path)
    kind = REFERENCE_SUFFIXES.get(path.suffix.lower())
    if kind is None or path.name.lower().endswith(NAMES_SUFFIX):
        raise InputError(path, f"unknown reference format '{path.suffix}' (expected .TextGrid, .stm or .txt)")
    if kind == "textgrid":
        reference = read_textgrid(path, recording_id, duration)
    elif kind == "stm":
        reference = read_stm_reference(path, recording_id)
        _check_within(path, reference, duration)
    else:
        reference = read_plaintext_reference(path, recording_id)
    if names_path is not None:
        reference.names = read_names(names_path)
    return reference


def write_reference_textgrid(reference: Reference, path: str | Path, duration: float) -> Path:
    """Write ``reference`` as a Praat TextGrid covering ``0..duration`` seconds, atomically."""
    return write_textgrid(reference, path, duration)


def read_hypothesis(path: str | Path, recording_id: str | None = None) -> Hypothesis:
    """Read a ``.ctm``, ``.json`` (:meth:`Hypothesis.to_json`) or ``.txt`` hypothesis."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".ctm":
        return read_ctm_hypothesis(path, recording_id)
    if suffix == ".txt":
        return read_plaintext_hypothesis(path, recording_id)
    if suffix == ".json":
        return _read_hypothesis_json(path, recording_id)
    raise InputError(path, f"unknown hypothesis format '{path.suffix}' (expected .ctm, .json or .txt)")


def write_hypothesis_json(hypothesis: Hypothesis, path: str | Path) -> Path:
    """Write ``hypothesis.to_json()`` atomically."""
    return atomic_write_json(path, hypothesis.to_json())


def _read_hypothesis_json(path: Path, recording_id: str | None) -> Hypothesis:
    try:
        hypothesis = Hypothesis.from_json(json.loads(read_text(path)))
    except json.JSONDecodeError as error:
        raise InputError(path, f"malformed JSON at line {error.lineno}: {error.msg}") from None
    except (KeyError, TypeError, AttributeError) as error:
        raise InputError(path, f"not a hypothesis record ({type(error).__name__}: {error})") from None
    if recording_id is not None and hypothesis.recording_id != recording_id:
        raise InputError(path, f"hypothesis is for recording '{hypothesis.recording_id}', "
                               f"expected '{recording_id}'")
    previous = -math.inf
    for index, word in enumerate(hypothesis.words, 1):
        if word.timed:
            if word.start < 0 or word.end < word.start:  # type: ignore[operator]
                raise InputError(path, f"word {index} '{word.text}' has impossible times "
                                       f"{word.start}-{word.end}")
            if word.start < previous:  # type: ignore[operator]
                raise InputError(path, f"word {index} '{word.text}' at {word.start} s is out of order")
            previous = word.start  # type: ignore[assignment]
    return hypothesis


def _check_within(path: Path, reference: Reference, duration: float | None) -> None:
    """Refuse STM segments that end after the recording."""
    if duration is None:
        return
    for utterance in reference.utterances:
        if utterance.end > duration + DURATION_TOLERANCE:
            raise InputError(path, f"segment {utterance.start:g}-{utterance.end:g} s ends after the "
                                   f"recording's duration ({duration:g} s)")
