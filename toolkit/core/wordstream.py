"""One definition of a valid word stream: what every stage that emits words promises.

A stream (the words of one recording or of one decoded unit, in reading order) is valid when

* every text is a non-empty string of valid Unicode, with no replacement character (U+FFFD)
  and no whitespace inside;
* a word has both times or neither; times are finite and ``0 <= start <= end <= duration``;
* the starts of timed words never decrease;
* no two timed words cover the same stretch: they overlap by at most half the shorter one.

Untimed words may sit anywhere: they have no time to be out of order. Recognizer output and
time mapping are made valid by :func:`drop_contradicting_times` (a word whose times contradict
the words before it keeps its text and loses its times, counted, never guessed); every other
stage must keep a valid stream valid, which the pipeline checks after each one (:func:`check_stream`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from toolkit.core.errors import ToolkitError
from toolkit.core.transcripts import Word

REPLACEMENT_CHARACTER = "\ufffd"
# Float slack for "inside the recording" and "at most half": times pass through sums and maps.
_EPSILON = 1e-6


@dataclass(frozen=True)
class StreamProblem:
    """The first thing wrong at one word: its 0-based index in the stream, what is wrong, and the
    index of the earlier word it contradicts (None when the word is wrong on its own)."""

    index: int
    word: Word
    problem: str
    other: int | None = None

    def __str__(self) -> str:
        at = "" if self.word.start is None else f" at {self.word.start:g} s"
        return f"word {self.index + 1} {self.word.text!r}{at} {self.problem}"


class StreamError(ToolkitError):
    """A stage produced an invalid word stream (a bug in that stage): which words, and their first problem."""

    def __init__(self, where: str, problem: StreamProblem) -> None:
        self.where = where
        self.problem = f"{where}: {problem}"
        super().__init__(self.problem)


def overlap_too_much(a: Word, b: Word) -> bool:
    """Whether two timed words cover the same stretch: they overlap by more than half the shorter one."""
    overlap = min(a.end, b.end) - max(a.start, b.start)  # type: ignore[type-var, operator]
    shorter = min(a.end - a.start, b.end - b.start)  # type: ignore[operator]
    return overlap > 0.5 * shorter + _EPSILON


def text_problem(text: object) -> str | None:
    """What is wrong with a word's text, or None."""
    if not isinstance(text, str) or not text or text != text.strip():
        return f"has text {text!r}: a word is a non-empty string without surrounding space"
    if any(ch.isspace() for ch in text):
        return "has whitespace inside its text"
    if REPLACEMENT_CHARACTER in text:
        return "holds the replacement character U+FFFD (a character split across tokens)"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode (a lone surrogate)"
    return None


def time_problem(word: Word, duration: float | None) -> str | None:
    """What is wrong with one word's own times (both or neither, finite, ordered, inside the recording), or None."""
    if (word.start is None) != (word.end is None):
        return "has a start or an end but not both"
    if word.start is None:
        return None
    if not (math.isfinite(word.start) and math.isfinite(word.end)):  # type: ignore[arg-type]
        return f"has a time that is not finite ({word.start}-{word.end})"
    if word.start < 0 or word.end < word.start:  # type: ignore[operator]
        return f"has impossible times {word.start:g}-{word.end:g} s"
    if duration is not None and word.end > duration + _EPSILON:  # type: ignore[operator]
        return f"ends at {word.end:g} s, after the recording ({duration:g} s)"
    return None


def stream_problems(words: Sequence[Word], duration: float | None = None, limit: int = 10) -> list[StreamProblem]:
    """Up to ``limit`` problems of ``words`` as a stream (the rules above), in stream order."""
    problems: list[StreamProblem] = []
    order = _Order(words)
    for index, word in enumerate(words):
        if len(problems) >= limit:
            break
        problem, other = text_problem(word.text) or time_problem(word, duration), None
        if problem is None and word.timed:
            problem, other = order.problem(word)
            order.add(index)
        if problem is not None:
            problems.append(StreamProblem(index, word, problem, other))
    return problems


class _Order:
    """The timed words seen so far, to tell whether the next one starts too early or covers one of them."""

    def __init__(self, words: Sequence[Word]) -> None:
        self.words = words
        self.latest: int | None = None  # the earlier word with the latest start
        self.open: list[tuple[float, int]] = []  # (end, index) of earlier timed words, smallest end first

    def add(self, index: int) -> None:
        start, end = self.words[index].span
        if self.latest is None or start >= self.words[self.latest].span[0]:
            self.latest = index
        heapq.heappush(self.open, (end, index))
        latest_start = self.words[self.latest].span[0]
        while self.open[0][0] <= latest_start:  # ended before any valid later word starts: cannot overlap one
            heapq.heappop(self.open)
            if not self.open:
                break

    def problem(self, word: Word) -> tuple[str | None, int | None]:
        """What is wrong with ``word`` after the words added so far, and which of them it contradicts."""
        if self.latest is not None and word.start < self.words[self.latest].start:  # type: ignore[operator]
            latest = self.words[self.latest]
            return (
                f"is out of order: it starts before word {self.latest + 1} {latest.text!r} ({latest.start:g} s)",
                self.latest,
            )
        for _, earlier in self.open:
            other = self.words[earlier]
            if overlap_too_much(other, word):
                return (
                    f"covers the same stretch as word {earlier + 1} {other.text!r} "
                    f"({other.start:g}-{other.end:g} s) by more than half",
                    earlier,
                )
        return None, None


def check_stream(words: Sequence[Word], duration: float | None, where: str) -> None:
    """Raise :class:`StreamError` ``"<where>: <first problem>"`` unless ``words`` is a valid stream."""
    problems = stream_problems(words, duration, limit=1)
    if problems:
        raise StreamError(where, problems[0])


def drop_contradicting_times(words: Sequence[Word]) -> tuple[list[Word], int]:
    """``words`` with the times removed from each timed word that starts before an earlier kept one or
    covers the same stretch as one; the text stays. Returns the words and how many lost their times.

    For recognizer output and mapped times, whose times come from outside the toolkit's control:
    contradicting times are not guessed into order, they are dropped and counted.
    """
    kept: list[Word] = []
    order = _Order(kept)
    dropped = 0
    for word in words:
        if word.timed and order.problem(word)[0] is not None:
            word = replace(word, start=None, end=None)
            dropped += 1
        kept.append(word)
        if word.timed:
            order.add(len(kept) - 1)
    return kept, dropped
