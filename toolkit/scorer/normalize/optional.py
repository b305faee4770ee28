"""Optionally deletable reference words, written in parentheses as sclite's references write them.

"(inciso)" or "até 5 (cinco) anos": a word or a run of words inside parentheses in a reference may
be left out by the hypothesis at no cost and matches when present. The parentheses are markup:
they are taken off the words before normalization (so even the verbatim policy reads "inciso").
A parenthesis never closed in the same utterance marks nothing (the words are scored as written),
and a closing one with nothing open ("a)", a list label) is left alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolkit.scorer.normalize.token import Token

_AFTER_CLOSE = ".,;:!?…\"'”’»"


def _closes(word: str) -> bool:
    return word.rstrip(_AFTER_CLOSE).endswith(")")


def _unmark(word: str, opens: bool, closes: bool) -> str:
    if opens:
        word = word[1:]
    if closes:
        core = word.rstrip(_AFTER_CLOSE)
        word = core[:-1] + word[len(core) :]
    return word


def parenthesized(words: Sequence[str]) -> tuple[list[str], frozenset[int]]:
    """``words`` with the parentheses of optional spans taken off, and the indices of the words inside them."""
    out = list(words)
    marked: set[int] = set()
    if "(" not in " ".join(words):  # no span can open
        return out, frozenset()
    span: list[int] = []
    for index, word in enumerate(words):
        opens = not span and word.startswith("(")
        if not span and not opens:
            continue
        span.append(index)
        if _closes(word) and (len(span) > 1 or opens):
            marked.update(span)
            first, last = span[0], span[-1]
            out[first] = _unmark(out[first], True, first == last)
            if last != first:
                out[last] = _unmark(out[last], False, True)
            span = []
    return out, frozenset(marked)


class OptionalRules:
    """A user lexicon's optional words (``toolkit.scorer.normalize.user_lexicon``), in one policy's tokens.

    Unplaced words mark the reference's own tokens wherever they occur; placed ones are added to the
    reference, as optional tokens of the source word they belong to: before a list label of their
    kind, or after a word that ends in their mark.
    """

    def __init__(self, rules: Sequence[tuple[tuple[str, ...], str | None]]) -> None:
        self.anywhere = [words for words, place in rules if place is None and words]
        self.before = {place: words for words, place in rules if place is not None and place.startswith("before ")}
        self.marks = {place[4:]: words for words, place in rules if place is not None and place.startswith("for ")}

    def __bool__(self) -> bool:
        return bool(self.anywhere or self.before or self.marks)

    def apply(self, tokens: list[Token], words: Sequence[str], labels: dict[int, str]) -> list[Token]:
        """``tokens`` of the reference ``words`` (list labels: source index -> kind) with the rules applied."""
        texts = [token.text for token in tokens]
        marked: set[int] = set()
        for phrase in self.anywhere:
            width = len(phrase)
            for start in range(len(texts) - width + 1):
                if tuple(texts[start : start + width]) == phrase:
                    marked.update(range(start, start + width))
        before: dict[int, tuple[str, ...]] = {}
        for index, kind in labels.items():
            label_phrase = self.before.get(f"before {kind} item")
            if label_phrase:
                before[index] = label_phrase
        after: dict[int, tuple[str, ...]] = {}
        for index, word in enumerate(words):
            for mark, phrase in self.marks.items():
                if word.rstrip("\"'”’»)").endswith(mark):
                    after[index] = phrase
        out: list[Token] = []
        pending = sorted(after.items())
        k = 0
        for position, token in enumerate(tokens):
            source = token.source_index
            while k < len(pending) and pending[k][0] < source:  # after a word, or where a bare mark stood
                out.extend(Token(text, pending[k][0], optional=True) for text in pending[k][1])
                k += 1
            if source in before:
                out.extend(Token(text, source, optional=True) for text in before.pop(source))
            out.append(token._replace(optional=True) if position in marked else token)
        for index, phrase in pending[k:]:
            out.extend(Token(text, index, optional=True) for text in phrase)
        return out
