"""One validation of a hypothesis word, shared by the CTM and JSON readers so both apply the same rules;
and one time-order check of a line-per-item file (CTM words, STM segments)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from toolkit.core.errors import InputError
from toolkit.core.transcripts import Word


def is_number(value: Any) -> bool:
    """A real JSON/TOML number (``true`` and ``false`` are not numbers)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def checked_word(
    path: str | Path, where: str, text: Any, start: Any, end: Any, confidence: Any = None, segment_id: Any = None
) -> Word:
    """A :class:`Word` whose text is a non-empty string and whose times are both absent or both finite,
    ``0 <= start <= end``, confidence absent or finite; else an InputError naming ``where`` in ``path``."""
    if not isinstance(text, str) or not text.strip():
        raise InputError(path, f"{where}: word text must be a non-empty string, not {text!r}")
    if (start is None) != (end is None):
        raise InputError(path, f"{where}: word '{text}' has a start or an end but not both")
    for name, value in (("start", start), ("end", end), ("confidence", confidence)):
        if value is None:
            continue
        if not is_number(value):
            raise InputError(path, f"{where}: word '{text}' {name} {value!r} is not a number")
        if not math.isfinite(value):
            raise InputError(path, f"{where}: word '{text}' {name} {value!r} is not a finite number")
    if start is not None and (start < 0 or end < start):
        raise InputError(
            path,
            f"{where}: word '{text}' has impossible times {start:g}-{end:g} s "
            f"({'negative start' if start < 0 else 'it ends before it starts'})",
        )
    if segment_id is not None and not isinstance(segment_id, str):
        raise InputError(path, f"{where}: word '{text}' segment_id must be a string, not {segment_id!r}")
    return Word(
        text,
        None if start is None else float(start),
        None if end is None else float(end),
        None if confidence is None else float(confidence),
        segment_id,
    )


# Times that differ by less than this are the same time (rounding in other tools).
TIME_EPS = 1e-9


class LineOrder:
    """Refuses a line that starts before the previous line of the same recording and channel (or other key)."""

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self._last: dict[tuple[str, ...], tuple[int, float]] = {}

    def check(self, key: tuple[str, ...], number: int, start: float, what: str) -> None:
        """``what`` (say "word 'sim' at 2.5 s") starts on line ``number`` at ``start``."""
        if key in self._last and start < self._last[key][1] - TIME_EPS:
            line, previous = self._last[key]
            raise InputError(self.path, f"line {number}: {what} is out of order (line {line} starts at {previous:g} s)")
        self._last[key] = (number, start)
