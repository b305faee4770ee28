"""The normalizer's output record: one scored word and where it came from."""

from __future__ import annotations

from typing import NamedTuple


class Token(NamedTuple):
    """One scored word; ``source_index`` points into the source words it came from.

    ``optional``: a reference word the hypothesis may leave out at no cost (sclite's "(word)").
    ``undecided``: a colloquial "num"/"numa" whose context says neither "não" nor "em um".
    A named tuple rather than a dataclass: tens of thousands are built per recording.
    """

    text: str
    source_index: int
    is_number: bool = False
    number_value: str | None = None
    number_group: int | None = None
    optional: bool = False
    undecided: bool = False


class TokenColumns(NamedTuple):
    """Tokens as one list per ``Token`` field, in the same order: what the scorer reads, built without a
    ``Token`` per word."""

    texts: list[str]
    sources: list[int]
    is_number: list[bool]
    number_values: list[str | None]
    number_groups: list[int | None]
    optional: list[bool]
    undecided: list[bool]

    @classmethod
    def plain(cls, texts: list[str], sources: list[int]) -> TokenColumns:
        """Columns of tokens none of which is a number, optional or undecided."""
        count = len(texts)
        return cls(texts, sources, [False] * count, [None] * count, [None] * count, [False] * count, [False] * count)
