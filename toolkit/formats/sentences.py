"""Where a plain text's turns break: at its line breaks, or, in a text of one line, between its sentences.

A sentence ends at a word ending in ``.``, ``!``, ``?`` or ``…`` (closing quotes and brackets after it
allowed) when the next word starts with an upper-case letter, a digit or an opening quote; a final ``.``
ends none after an abbreviation of the normalizer's lexicon (``Art.``, ``arts.``, ``Sr.``, ``inc.``), a
single letter (an initial, ``n.``), a number (``Art. 10. É``, ``5.)``), a word ending in an ordinal mark
(``nº.``) or a currency symbol (``R$. 10``). Turns only group the text's
words: joined, they are always its words in order.
"""

from __future__ import annotations

import unicodedata
from functools import cache

ENDS = (".", "!", "?", "…")
CLOSING = "\"'”’»)]"
OPENING = "\"'“‘«([¿¡"
QUOTES = "\"'“‘«"


def text_turns(text: str) -> list[str]:
    """The turns of a plain text, each its words joined by one space: its non-empty lines, or the sentences of
    its only one."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    lines = [line for line in lines if line]
    return sentences(lines[0]) if len(lines) == 1 else lines


def sentences(line: str) -> list[str]:
    """The sentences of one line of text (see the module's rule), each its words joined by one space."""
    words = line.split()
    cuts = [k + 1 for k in range(len(words) - 1) if _ends_sentence(words[k], words[k + 1])]
    return [" ".join(words[a:b]) for a, b in zip([0, *cuts], [*cuts, len(words)]) if b > a]


def _ends_sentence(word: str, following: str) -> bool:
    """Whether a sentence ends after ``word`` when ``following`` comes next."""
    body = word.rstrip(CLOSING)
    if not body.endswith(ENDS) or not (following[0].isupper() or following[0].isdigit() or following[0] in QUOTES):
        return False
    return not (body.endswith(".") and not body.endswith("..") and _keeps_its_dot(body))


def _keeps_its_dot(body: str) -> bool:
    """Whether a word ending in one ``.`` is an abbreviation, an initial or a number, whose dot ends no sentence."""
    form = unicodedata.normalize("NFC", body.lstrip(OPENING).lower())
    stem = form[:-1]
    marked = stem[-1:] in "ºª°" or "$" in stem  # "nº.", "R$. 10": a number follows
    return form in _abbreviations() or (len(stem) == 1 and stem.isalpha()) or _is_number(stem) or marked


def _is_number(stem: str) -> bool:
    """Digits, with the separators and ordinal marks a written number may hold (``1.000``, ``2,5``, ``1º``)."""
    return any(c.isdigit() for c in stem) and all(c.isdigit() or c in ".,ºª°" for c in stem)


@cache
def _abbreviations() -> frozenset[str]:
    """The written abbreviations ending in a dot, from the normalizer's lexicon (one list for both)."""
    from toolkit.scorer.normalize.lexicon import load_lexicons  # the normalizer loads only where text is split

    return frozenset(form for form in load_lexicons().abbreviations if form.endswith("."))
