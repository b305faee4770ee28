"""Characters a recognizer split across words, joined back from the text of its tokens.

Whisper's byte-level tokens can cut a multi-byte UTF-8 character ("ç", "ã", "é") in two, and
faster-whisper's word splitter can then put the halves in two words, each decoded alone as the
replacement character U+FFFD ("fa\ufffd" + "\ufffdo" for "faço"). The segments' whole token
sequence decodes to the true text; ``join_split_characters`` walks the words' text against it,
joins the words a character was split across into one (first start, last end, mean
confidence) and gives every word its true text. A byte sequence that is invalid in the whole
text too (the model emitted half a character) cannot be joined: its U+FFFD is removed, and a
word left without text is dropped. Both are counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from toolkit.core.wordstream import REPLACEMENT_CHARACTER

# Characters of agreement needed after a run of U+FFFD to say where the true text resumes.
_RESYNC = 12


@dataclass(frozen=True)
class RawWord:
    """A recognizer word as the library gives it: text with its leading space, times, confidence, segment."""

    text: str
    start: float
    end: float
    confidence: float
    segment: int


@dataclass(frozen=True)
class Repaired:
    """The words with true text, and what it took: words joined, characters removed, words dropped."""

    words: list[RawWord]
    joined: int = 0
    removed: int = 0
    dropped: int = 0


def join_split_characters(words: Sequence[RawWord], true_text: str | None) -> Repaired:
    """``words`` whose concatenated text differs from ``true_text`` only by runs of U+FFFD, repaired (above).

    Words with no U+FFFD are returned unchanged; without ``true_text``, or when the words cannot
    be matched to it, they keep their text with every U+FFFD removed.
    """
    if not any(REPLACEMENT_CHARACTER in w.text for w in words):
        return Repaired(list(words))
    boundaries = None if true_text is None else _boundary_map("".join(w.text for w in words), true_text)
    if boundaries is None:
        return _remove_replacements(list(words), 0)
    groups: list[list[RawWord]] = []
    offset = 0
    for word in words:
        if groups and offset not in boundaries:  # a character was split here: join with the word before
            groups[-1].append(word)
        else:
            groups.append([word])
        offset += len(word.text)
    joined = sum(len(g) - 1 for g in groups)
    merged, offset = [], 0
    for group in groups:
        length = sum(len(w.text) for w in group)
        text = true_text[boundaries[offset] : boundaries[offset + length]]  # type: ignore[index]
        merged.append(
            RawWord(
                text, group[0].start, group[-1].end, sum(w.confidence for w in group) / len(group), group[0].segment
            )
        )
        offset += length
    return _remove_replacements(merged, joined)


def _boundary_map(written: str, true_text: str) -> dict[int, int] | None:
    """For each position of ``written`` that is a character boundary of ``true_text`` too, the position there;
    None when the two differ by more than runs of U+FFFD standing for true characters."""
    i = j = 0
    positions = {0: 0}
    while i < len(written) and j < len(true_text):
        if written[i] == true_text[j]:
            i, j = i + 1, j + 1
            positions[i] = j
            continue
        if written[i] != REPLACEMENT_CHARACTER:
            return None
        run = len(written[i:]) - len(written[i:].lstrip(REPLACEMENT_CHARACTER))
        after = written[i + run : i + run + _RESYNC].split(REPLACEMENT_CHARACTER)[0]  # what must follow in both
        rest = len(true_text) - j
        taken = next(
            (
                k
                for k in range(1, min(run, rest) + 1)
                if (true_text[j + k : j + k + len(after)] == after if after else k == rest)
            ),
            None,
        )
        if taken is None:
            return None
        i, j = i + run, j + taken
        positions[i] = j
    return positions if i == len(written) and j == len(true_text) else None


def _remove_replacements(words: list[RawWord], joined: int) -> Repaired:
    """Remove U+FFFD left in any word (bytes invalid in the true text too); drop words left empty."""
    kept, removed, dropped = [], 0, 0
    for word in words:
        count = word.text.count(REPLACEMENT_CHARACTER)
        if count:
            removed += count
            word = RawWord(
                word.text.replace(REPLACEMENT_CHARACTER, ""), word.start, word.end, word.confidence, word.segment
            )
            if not word.text.strip():
                dropped += 1
                continue
        kept.append(word)
    return Repaired(kept, joined, removed, dropped)
