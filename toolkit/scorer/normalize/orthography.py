"""Orthographic variants: one spelling for a word written before 1990, in European Portuguese or in
Brazil today (ptbr-norm-3, ``orthographic_variants``), applied to both sides before hyphens split.

The regular changes of the 1990 Orthographic Agreement are rules (the Base of the agreement in
brackets); word-by-word changes and European/Brazilian pairs are ``orthography.tsv``:

- [XIV] the trema is gone: "freqüente", "cinqüenta", "lingüiça" -> frequente, cinquenta, linguiça;
- [IX 3] no acute accent on the open diphthongs éi, ói of paroxytones: "idéia", "assembléia",
  "heróico", "jóia" -> ideia, assembleia, heroico, joia (oxytones keep it: "papéis", "herói");
- [IX 8] no circumflex in -êem and -ôo: "vêem", "lêem", "vôo", "enjôo" -> veem, leem, voo, enjoo;
- [XVI] a prefix ending in a vowel joins a word starting with another vowel ("infra-estrutura",
  "auto-escola" -> infraestrutura, autoescola), doubles an r or s ("anti-social", "contra-regra"
  -> antissocial, contrarregra), and takes a hyphen before the same vowel ("microondas",
  "antiinflamatório" -> micro-ondas, anti-inflamatório); "co-" always joins ("co-autor" -> coautor);
- European ó/é before m or n and a vowel are Brazilian ô/ê: "económico", "género", "António",
  "telefónicas" -> econômico, gênero, antônio, telefônicas.

A mesoclisis a recognizer writes apart ("conceder -se a", "realizar-se há") keeps its future ending
"á" (``mesoclisis``), as the text writes it ("conceder-se-á").
"""

from __future__ import annotations

import re

PREFIXES = (
    "agro",
    "ante",
    "anti",
    "arqui",
    "auto",
    "contra",
    "eletro",
    "entre",
    "extra",
    "hidro",
    "infra",
    "intra",
    "macro",
    "maxi",
    "mega",
    "micro",
    "mini",
    "multi",
    "neo",
    "pluri",
    "proto",
    "pseudo",
    "retro",
    "semi",
    "sobre",
    "supra",
    "tele",
    "ultra",
)
_VOWELS = "aeiouáéíóúâêôãõà"
_HYPHENATED = re.compile(rf"({'|'.join(PREFIXES)})-([{_VOWELS}rs].*)")
_GLUED_SAME_VOWEL = re.compile(rf"({'|'.join(PREFIXES)})(?<=([aeio]))(\2.*)")
_OPEN_DIPHTHONG = re.compile(r"([éó])(i)(?!s?$)")
_EEM = re.compile(r"êem$")
_OO = re.compile(r"ôo(s?)$")
_EUROPEAN_NASAL = re.compile(rf"([óé])([mn][{_VOWELS}])")
_ACUTE_TO_CIRCUMFLEX = {"ó": "ô", "é": "ê"}
_PLAIN = {"á": "a", "é": "e", "í": "i", "ó": "o", "ú": "u", "â": "a", "ê": "e", "ô": "o"}
CLITICS = frozenset({"se", "lhe", "lhes", "me", "te", "nos", "vos", "lo", "la", "los", "las"})


def _prefixed(word: str) -> str:
    found = _HYPHENATED.fullmatch(word)
    if found is not None:
        prefix, rest = found.groups()
        if rest[0] in "rs" and prefix[-1] in _VOWELS:
            return prefix + rest[0] + rest  # anti-social -> antissocial
        if _PLAIN.get(rest[0], rest[0]) == prefix[-1]:
            return word  # micro-ondas keeps its hyphen
        return prefix + rest  # infra-estrutura -> infraestrutura
    glued = _GLUED_SAME_VOWEL.fullmatch(word)
    if glued is not None:
        return f"{glued.group(1)}-{glued.group(3)}"  # microondas -> micro-ondas
    if word.startswith("co-") and len(word) > 3:
        rest = word[3:]
        return "co" + (rest[1:] if rest[0] == "h" else rest)  # co-autor, co-herdeiro -> coautor, coerdeiro
    return word


def variant(word: str, table: dict[str, str]) -> str:
    """The Brazilian 1990 spelling of one lower-case word (hyphens kept)."""
    listed = table.get(word)
    if listed is not None:
        return listed
    if "ü" in word:
        word = word.replace("ü", "u")
    if "é" in word or "ó" in word:
        word = _OPEN_DIPHTHONG.sub(lambda m: _PLAIN[m.group(1)] + m.group(2), word)
        word = _EUROPEAN_NASAL.sub(lambda m: _ACUTE_TO_CIRCUMFLEX[m.group(1)] + m.group(2), word)
    if "ê" in word or "ô" in word:
        word = _OO.sub(r"oo\1", _EEM.sub("eem", word))
    return _prefixed(word)


def mesoclisis(texts: list[str], sources: list[int], source_words: list[str], ending: str = "á") -> list[str]:
    """Token texts with the future ending of a mesoclisis written apart read as the text writes it:
    infinitive, clitic attached by a hyphen, then "há" or "a" in a word of its own -> ``ending``
    ("á", as the policy writes it)."""
    out = list(texts)
    for k in range(2, len(texts)):
        if texts[k].lower() not in ("há", "a", "ha") or sources[k] == sources[k - 1]:
            continue
        clitic_word = source_words[sources[k - 1]]
        if texts[k - 1].lower() in CLITICS and "-" in clitic_word and texts[k - 2].lower().endswith("r"):
            out[k] = ending
    return out
