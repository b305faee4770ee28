"""Character-level rules: punctuation, hyphens, apostrophes and accent folding.

Kept apart from the word rules so the exact treatment of every character class is in one place.
"""

from __future__ import annotations

import unicodedata

APOSTROPHES = frozenset("'\u2019\u2018\u02bc\u0060\u00b4\u2032")
HYPHENS = frozenset("-\u2010\u2011\u2012\u2013\u2014\u2015\u2212")


def _is_wordchar(char: str) -> bool:
    return char.isalnum() or unicodedata.category(char).startswith("M")


def split_punctuation(text: str, split_hyphens: bool) -> list[str]:
    """Split ``text`` into words, dropping punctuation, symbols and control characters.

    An apostrophe between two letters is removed and joins them ("d'água" -> "dágua"); a hyphen
    between two word characters splits ("guarda-chuva" -> "guarda", "chuva") unless
    ``split_hyphens`` is false, when it is kept. Every other non-word character separates words.
    Pieces without any letter or digit (a lone combining mark) are dropped.
    """
    if text.isalnum():
        return [text]
    out: list[str] = []
    last = len(text) - 1
    for pos, char in enumerate(text):
        if _is_wordchar(char):
            out.append(char)
            continue
        inner = 0 < pos < last and _is_wordchar(text[pos - 1]) and _is_wordchar(text[pos + 1])
        if char in APOSTROPHES and inner and text[pos - 1].isalpha() and text[pos + 1].isalpha():
            continue
        if char in HYPHENS and inner and not split_hyphens:
            out.append("-")
            continue
        out.append(" ")
    return [piece for piece in "".join(out).split() if any(c.isalnum() for c in piece)]


def split_hyphenated(text: str) -> list[str]:
    """Split on hyphens between word characters only (used when punctuation is otherwise kept)."""
    if not any(char in HYPHENS for char in text):
        return [text]
    out: list[str] = []
    last = len(text) - 1
    for pos, char in enumerate(text):
        inner = 0 < pos < last and _is_wordchar(text[pos - 1]) and _is_wordchar(text[pos + 1])
        out.append(" " if char in HYPHENS and inner else char)
    return "".join(out).split()


def fold_accents(text: str) -> str:
    """Remove diacritics ("ação" -> "acao", "pinguim" stays): NFD, drop combining marks, NFC."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFD", text)
    stripped = "".join(char for char in decomposed if not unicodedata.combining(char))
    return unicodedata.normalize("NFC", stripped)
