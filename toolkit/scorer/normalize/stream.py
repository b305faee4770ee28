"""The token stream the normalizer's context rules rewrite: texts, source words, and rule-made numbers.

A rule that reads several tokens as one number ("Art. 10." read "artigo dez", "14h30" read "catorze
e trinta", "15 de março de 2020") writes its reading and fixes the group's value; the number tagger
(``toolkit.scorer.normalize.numbers``) then leaves those tokens to it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Stream:
    """Token texts with their source word, and per token the rule-made number group it is in
    (``(group id, value)``, or None)."""

    texts: list[str] = field(default_factory=list)
    sources: list[int] = field(default_factory=list)
    fixed: list[tuple[int, str] | None] = field(default_factory=list)
    _next_group: int = 0
    _keys: list[str] | None = field(default=None, repr=False)

    def keys(self, key: Callable[[str], str]) -> list[str]:
        """``key`` of every token text (the rules' lookup key), computed once: the passes that read a stream
        without rewriting it share them. Asked only of a stream that is complete."""
        if self._keys is None:
            self._keys = list(map(key, self.texts))
        return self._keys

    def copy_from(self, other: Stream, start: int, end: int | None = None) -> None:
        """Append ``other``'s tokens ``start`` to ``end`` (exclusive; default: the one at ``start``) unchanged."""
        stop = start + 1 if end is None else end
        self.texts.extend(other.texts[start:stop])
        self.sources.extend(other.sources[start:stop])
        self.fixed.extend(other.fixed[start:stop])

    def add_group(self, texts: tuple[str, ...], sources: list[int], value: str | None) -> None:
        """Append the tokens of one reading (each with the source of the token it replaces, so sources
        never decrease); with a ``value`` they form one rule-made number."""
        group = (self._next_group, value) if value is not None else None
        self._next_group += value is not None
        for k, text in enumerate(texts):
            self.texts.append(text)
            self.sources.append(sources[min(k, len(sources) - 1)])
            self.fixed.append(group)

    def successor(self, source: Stream) -> Stream:
        """An empty stream to rewrite ``source`` into (group ids go on from it)."""
        return Stream(_next_group=max(source._next_group, 1 + max((f[0] for f in source.fixed if f), default=-1)))

    def spans(self) -> list[tuple[int, int, str]]:
        """The rule-made groups as ``(start, end, value)`` token spans."""
        out: list[tuple[int, int, str]] = []
        for position, item in enumerate(self.fixed):
            if item is None:
                continue
            if out and position == out[-1][1] and self.fixed[position - 1] == item:
                out[-1] = (out[-1][0], position + 1, item[1])
            else:
                out.append((position, position + 1, item[1]))
        return out
