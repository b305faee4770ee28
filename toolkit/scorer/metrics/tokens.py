"""Source words and their normalized tokens, as flat arrays the metrics can index quickly.

A source word is a word as written (reference utterance text or recognizer output) with its
time, if any; the normalizer turns source words into tokens ("2020" -> dois mil e vinte), and
every token remembers its source word, so audits can quote and time what was really written.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from typing import TypeVar

import numpy as np

from toolkit.scorer.normalize import Normalizer
from toolkit.scorer.normalize.chars import fold_accents

T = TypeVar("T")


@dataclass(frozen=True)
class SourceWords:
    """Words as written: ``start``/``end`` NaN when untimed; ``span_*`` is the word's time or else its utterance's."""

    texts: list[str]
    start: np.ndarray
    end: np.ndarray
    span_start: np.ndarray
    span_end: np.ndarray

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def timed(self) -> np.ndarray:
        return ~np.isnan(self.start)

    def select(self, keep: np.ndarray) -> SourceWords:
        """The words where boolean ``keep`` is true."""
        idx = np.flatnonzero(keep)
        return SourceWords(
            [self.texts[i] for i in idx.tolist()],
            self.start[idx],
            self.end[idx],
            self.span_start[idx],
            self.span_end[idx],
        )

    def quote(self, indices: Iterable[int]) -> str:
        """The written text of the given source words, each once, in order."""
        return " ".join(self.texts[i] for i in sorted(set(int(i) for i in indices)))


@dataclass(frozen=True)
class TokenTable:
    """Normalized tokens of one side; ``number_group`` is -1 for non-numbers and unique per spelled number;
    ``optional`` marks reference tokens the hypothesis may leave out at no cost (all false for a hypothesis)."""

    texts: list[str]
    source: np.ndarray
    is_number: np.ndarray
    number_group: np.ndarray
    number_value: list[str | None]
    words: SourceWords
    optional: np.ndarray
    undecided: np.ndarray  # an undecidable colloquial "num"/"numa" (toolkit.scorer.normalize.colloquial)

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def first_of_source(self) -> np.ndarray:
        """True for the first token each source word produced."""
        first = np.ones(len(self.source), dtype=bool)
        first[1:] = self.source[1:] != self.source[:-1]
        return first

    @property
    def start(self) -> np.ndarray:
        return self.words.start[self.source]

    @property
    def span_start(self) -> np.ndarray:
        return self.words.span_start[self.source]

    @property
    def span_end(self) -> np.ndarray:
        return self.words.span_end[self.source]


def tokenize(
    normalizer: Normalizer, words: SourceWords, groups: Sequence[tuple[int, int]], reference: bool = False
) -> TokenTable:
    """Normalize each ``[begin, end)`` group of source words on its own (numbers never span groups);
    ``reference``: the words are a reference's (the optional-word convention applies). Each group's tokens
    come as columns, joined at once (a long reference has hundreds of utterances)."""
    begins = [begin for begin, end in groups if end > begin]
    parts = [
        (begin, part)
        for begin, part in zip(begins, normalizer.group_columns(words.texts, groups, reference))
        if part.texts
    ]
    columns = [part for _, part in parts]
    counts = [len(part.texts) for part in columns]
    source = np.asarray(_joined(part.sources for part in columns), dtype=np.int64) + np.repeat(
        [begin for begin, _ in parts], counts
    ).astype(np.int64)
    return TokenTable(
        _joined(part.texts for part in columns),
        source,
        np.asarray(_joined(part.is_number for part in columns), dtype=bool),
        _numbered_groups(_joined(part.number_groups for part in columns), np.repeat(np.arange(len(parts)), counts)),
        _joined(part.number_values for part in columns),
        words,
        np.asarray(_joined(part.optional for part in columns), dtype=bool),
        np.asarray(_joined(part.undecided for part in columns), dtype=bool),
    )


def _joined(lists: Iterable[list[T]]) -> list[T]:
    """One list of the items of ``lists``, in order (a column of every part's tokens)."""
    return list(chain.from_iterable(lists))


def _numbered_groups(groups: list[int | None], part_of: np.ndarray) -> np.ndarray:
    """Each token's number group over all parts (-1 for none): a part's groups count on from the groups of the
    parts before it."""
    numbered = np.full(len(groups), -1, dtype=np.int64)
    offset, part, part_offset = 0, -1, 0
    for k, group in [(k, group) for k, group in enumerate(groups) if group is not None]:
        if part_of[k] != part:
            part, part_offset = part_of[k], offset
        numbered[k] = part_offset + group
        offset = max(offset, part_offset + group + 1)
    return numbered


def fold_table(table: TokenTable) -> TokenTable:
    """The same tokens with diacritics removed, as the accent-folded policy writes them.

    Valid only for a table made by a policy that differs from the accent-folded one in nothing
    but ``accent_fold`` (folding commutes with every other rule; tests check this on real text).
    """
    folded = {text: fold_accents(text) for text in set(table.texts)}
    return replace(table, texts=[folded[t] for t in table.texts])
