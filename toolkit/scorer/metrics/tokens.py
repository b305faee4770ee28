"""Source words and their normalized tokens, as flat arrays the metrics can index quickly.

A source word is a word as written (reference utterance text or recognizer output) with its
time, if any; the normalizer turns source words into tokens ("2020" -> dois mil e vinte), and
every token remembers its source word, so audits can quote and time what was really written.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from toolkit.scorer.normalize import Normalizer
from toolkit.scorer.normalize.chars import fold_accents


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
    ``reference``: the words are a reference's (the optional-word convention applies)."""
    texts: list[str] = []
    source: list[int] = []
    is_number: list[bool] = []
    number_group: list[int] = []
    number_value: list[str | None] = []
    optional: list[bool] = []
    undecided: list[bool] = []
    group_offset = 0
    for begin, end in groups:
        if end <= begin:
            continue
        tokens = normalizer.tokens(words.texts[begin:end], reference=reference)
        texts.extend([t.text for t in tokens])
        optional.extend([t.optional for t in tokens])
        undecided.extend([t.undecided for t in tokens])
        source.extend([begin + t.source_index for t in tokens])
        is_number.extend([t.is_number for t in tokens])
        number_value.extend([t.number_value for t in tokens])
        groups_here = [-1 if t.number_group is None else group_offset + t.number_group for t in tokens]
        number_group.extend(groups_here)
        group_offset = max(group_offset, max(groups_here, default=-1) + 1)
    return TokenTable(
        texts,
        np.asarray(source, dtype=np.int64),
        np.asarray(is_number, dtype=bool),
        np.asarray(number_group, dtype=np.int64),
        number_value,
        words,
        np.asarray(optional, dtype=bool),
        np.asarray(undecided, dtype=bool),
    )


def fold_table(table: TokenTable) -> TokenTable:
    """The same tokens with diacritics removed, as the accent-folded policy writes them.

    Valid only for a table made by a policy that differs from the accent-folded one in nothing
    but ``accent_fold`` (folding commutes with every other rule; tests check this on real text).
    """
    folded = {text: fold_accents(text) for text in set(table.texts)}
    return replace(table, texts=[folded[t] for t in table.texts])
