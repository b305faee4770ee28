"""pt-BR number words -> values: finds number groups in a token stream and gives their value.

Runs on the normalized tokens of either side, so "2020" (expanded to words first) and a spoken
"dois mil e vinte" become the same group with the same value "2020". Lookups use accent-folded
keys, so the accent-folded policy tags exactly the same groups.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TypeVar

from toolkit.scorer.normalize.chars import fold_accents

MULTIPLIERS = {
    "mil": 10**3,
    "milhão": 10**6,
    "milhões": 10**6,
    "bilhão": 10**9,
    "bilhões": 10**9,
    "trilhão": 10**12,
    "trilhões": 10**12,
}
_UNITS = {
    "zero": 0,
    "um": 1,
    "uma": 1,
    "dois": 2,
    "duas": 2,
    "três": 3,
    "quatro": 4,
    "cinco": 5,
    "seis": 6,
    "sete": 7,
    "oito": 8,
    "nove": 9,
}
_TEENS = {
    "dez": 10,
    "onze": 11,
    "doze": 12,
    "treze": 13,
    "catorze": 14,
    "quatorze": 14,
    "quinze": 15,
    "dezesseis": 16,
    "dezasseis": 16,
    "dezessete": 17,
    "dezassete": 17,
    "dezoito": 18,
    "dezenove": 19,
    "dezanove": 19,
}
_TENS = {
    "vinte": 20,
    "trinta": 30,
    "quarenta": 40,
    "cinquenta": 50,
    "sessenta": 60,
    "setenta": 70,
    "oitenta": 80,
    "noventa": 90,
}
_HUNDREDS = {
    "cento": 100,
    "duzentos": 200,
    "trezentos": 300,
    "quatrocentos": 400,
    "quinhentos": 500,
    "seiscentos": 600,
    "setecentos": 700,
    "oitocentos": 800,
    "novecentos": 900,
}
_HUNDREDS.update({word[:-2] + "as": value for word, value in list(_HUNDREDS.items()) if value > 100})
# Canonical spelling inside a number group: masculine cardinals (digits carry no gender, so
# "2 pessoas" and "duas pessoas" must agree), "catorze", Brazilian teens, no trema.
# Lone "uma" is not folded: it is far more often the article.
CANONICAL = {
    "duas": "dois",
    "quatorze": "catorze",
    "dezasseis": "dezesseis",
    "dezassete": "dezessete",
    "dezanove": "dezenove",
    "cinqüenta": "cinquenta",
}
CANONICAL.update({word: word[:-2] + "os" for word, value in _HUNDREDS.items() if word.endswith("as")})

_ORD_STEMS = {
    "primeir": 1,
    "segund": 2,
    "terceir": 3,
    "quart": 4,
    "quint": 5,
    "sext": 6,
    "sétim": 7,
    "oitav": 8,
    "non": 9,
    "décim": 10,
    "vigésim": 20,
    "trigésim": 30,
    "quadragésim": 40,
    "quinquagésim": 50,
    "sexagésim": 60,
    "septuagésim": 70,
    "setuagésim": 70,
    "octogésim": 80,
    "nonagésim": 90,
    "centésim": 100,
    "ducentésim": 200,
    "tricentésim": 300,
    "trecentésim": 300,
    "quadringentésim": 400,
    "quingentésim": 500,
    "sexcentésim": 600,
    "seiscentésim": 600,
    "septingentésim": 700,
    "setingentésim": 700,
    "octingentésim": 800,
    "noningentésim": 900,
    "nongentésim": 900,
    "milésim": 1000,
}
# Alone, these are far more often "according to", a second, a room, a quarter or a weekday.
_AMBIGUOUS_ORDINALS = {
    "segundo",
    "segundos",
    "segunda",
    "segundas",
    "quarto",
    "quartos",
    "quarta",
    "quartas",
    "quinta",
    "quintas",
    "sexta",
    "sextas",
}
_CURRENCY_WORDS = {"real": "R$", "reais": "R$", "dólar": "US$", "dólares": "US$", "euro": "€", "euros": "€"}
_CENTS = frozenset({"centavo", "centavos"})
_HOURS = frozenset({"hora", "horas"})
_MINUTES = frozenset({"minuto", "minutos"})


_V = TypeVar("_V")


def _folded(table: Mapping[str, _V]) -> dict[str, _V]:
    return {fold_accents(key): value for key, value in table.items()}


_F_UNITS = _folded(_UNITS)
_F_TEENS = _folded(_TEENS)
_F_TENS = _folded(_TENS)
_F_HUNDREDS = _folded(_HUNDREDS)
_F_MULT = _folded(MULTIPLIERS)
_F_CURRENCY = _folded(_CURRENCY_WORDS)
_F_CANONICAL = {fold_accents(key): value for key, value in CANONICAL.items()}
_F_ORDINALS = {
    fold_accents(stem) + ending: (value, ending.startswith("a"), stem + ending in _AMBIGUOUS_ORDINALS)
    for stem, value in _ORD_STEMS.items()
    for ending in ("o", "a", "os", "as")
}
_BIG = {key for key, value in _F_MULT.items() if value >= 10**6}


@dataclass(frozen=True)
class NumberSpan:
    """Tokens ``start`` (inclusive) to ``end`` (exclusive) form one number worth ``value``."""

    start: int
    end: int
    value: str


def canonical_word(key: str) -> str | None:
    """The canonical spelling of a number word inside a group ("duas" -> "dois"), or None."""
    return _F_CANONICAL.get(key)


def _component(key: str) -> tuple[int, int, bool] | None:
    """(value, limit for what may follow after "e", is multiplier) for a cardinal word."""
    if key in _F_UNITS:
        return _F_UNITS[key], 0, False
    if key in _F_TEENS:
        return _F_TEENS[key], 0, False
    if key in _F_TENS:
        return _F_TENS[key], 10, False
    if key == "cem":
        return 100, 0, False
    if key in _F_HUNDREDS:
        return _F_HUNDREDS[key], 100, False
    if key in _F_MULT:
        return _F_MULT[key], 0, True
    return None


def _cardinal(keys: Sequence[str], start: int, allow_multipliers: bool = True) -> tuple[int, int] | None:
    """Longest well-formed cardinal at ``start``: (end, value) or None.

    "e" joins only what Portuguese joins: a smaller part into the free slot of the last one
    ("vinte e um", "cento e dez", "dois mil e vinte"), so "dois e três" stays two numbers.
    Multipliers decrease ("um milhão e quinhentos mil"); after one, bare hundreds or a bare
    "mil" may follow ("mil quinhentos e dez", "um milhão e mil").
    """
    total, segment, limit, last_multiplier = 0, 0, 0, 10**18
    count, after_multiplier, pos, end = 0, False, start, None
    while pos < len(keys):
        joined = keys[pos] == "e" and count > 0
        part = _component(keys[pos + 1]) if joined and pos + 1 < len(keys) else _component(keys[pos])
        if part is None:
            break
        value, next_limit, is_multiplier = part
        if is_multiplier:
            bare_thousand = value == 1000 and segment == 0 and (after_multiplier or (count == 0 and not joined))
            ok = allow_multipliers and value < last_multiplier and ((segment > 0 and not joined) or bare_thousand)
        elif joined:
            ok = (segment > 0 and value < limit) or (after_multiplier and value < last_multiplier)
        elif count == 0:
            ok = True
        else:
            ok = after_multiplier and value >= 100
        if not ok:
            break
        pos += 2 if joined else 1
        count += 1
        if is_multiplier:
            total += max(segment, 1) * value
            segment, limit, last_multiplier, after_multiplier = 0, 0, value, True
        else:
            segment += value
            limit, after_multiplier = next_limit, False
        end = pos
    return None if end is None else (end, total + segment)


def _fraction(keys: Sequence[str], start: int) -> tuple[int, str] | None:
    """Decimal places after "vírgula": zeros, then a cardinal or a run of single digits."""
    pos, digits = start, ""
    while pos < len(keys) and keys[pos] == "zero":
        pos, digits = pos + 1, digits + "0"
    found = _cardinal(keys, pos, allow_multipliers=False)
    if found is not None:
        end, value = found
        digits += str(value)
        if end == pos + 1 and value < 10:
            while end < len(keys) and keys[end] in _F_UNITS:
                digits += str(_F_UNITS[keys[end]])
                end += 1
        pos = end
    return (pos, digits) if digits else None


def _place(value: int) -> int:
    return 1000 if value >= 1000 else 100 if value >= 100 else 10 if value >= 10 else 1


def _ordinal(keys: Sequence[str], start: int) -> NumberSpan | None:
    """Ordinal words in decreasing places ("vigésimo primeiro") -> "21º"; lone "segundo" is not."""
    pos, total, last_place, feminine = start, 0, 10**4, False
    while pos < len(keys) and keys[pos] in _F_ORDINALS:
        value, is_feminine, _ = _F_ORDINALS[keys[pos]]
        if _place(value) >= last_place:
            break
        total, last_place, feminine, pos = total + value, _place(value), is_feminine, pos + 1
    if pos == start + 1 and _F_ORDINALS[keys[start]][2]:
        return None
    return NumberSpan(start, pos, f"{total}{'ª' if feminine else 'º'}")


def decimal_text(value: Decimal) -> str:
    """A decimal without exponent or needless zeros: 2500000, 2.5."""
    return str(value.quantize(Decimal(1))) if value == value.to_integral_value() else str(value.normalize())


def _number_at(keys: Sequence[str], start: int) -> NumberSpan | None:
    """The number group starting at ``start`` (cardinal, decimal, %, money, time, ordinal)."""
    if keys[start] in _F_ORDINALS:
        return _ordinal(keys, start)
    negative = keys[start] == "menos"
    first = start + 1 if negative else start
    found = _cardinal(keys, first) if first < len(keys) else None
    if found is None:
        return None
    end, integer = found
    value, is_decimal = str(integer), False
    if end < len(keys) and keys[end] in ("virgula", "ponto"):
        fraction = _fraction(keys, end + 1)
        if fraction is not None:
            end, digits = fraction
            value, is_decimal = f"{integer}.{digits}", True
            if end < len(keys) and keys[end] in _F_MULT:
                value = decimal_text(Decimal(value) * _F_MULT[keys[end]])
                end += 1
    unit_end, value = _units(keys, end, value, is_decimal, keys[end - 1])
    lone_one = unit_end == end and end == first + 1 and keys[first] in ("um", "uma")
    if lone_one:
        return None
    return NumberSpan(start, unit_end, ("-" if negative else "") + value)


def _units(keys: Sequence[str], end: int, value: str, is_decimal: bool, last_key: str) -> tuple[int, str]:
    """Extend a number by "por cento", a currency (with centavos) or hours (with minutes)."""
    size = len(keys)
    if end + 1 < size and keys[end] == "por" and keys[end + 1] == "cento":
        return end + 2, value + "%"
    if end < size and keys[end] in _CENTS and not is_decimal and int(value) < 100:
        return end + 1, f"R$0.{int(value):02d}"
    money_end = end
    if end + 1 < size and keys[end] == "de" and last_key in _BIG and keys[end + 1] in _F_CURRENCY:
        money_end = end + 1
    if money_end < size and keys[money_end] in _F_CURRENCY:
        prefix = _F_CURRENCY[keys[money_end]]
        end = money_end + 1
        if end + 1 < size and keys[end] == "e" and not is_decimal:
            cents = _cardinal(keys, end + 1, allow_multipliers=False)
            if cents is not None and cents[1] < 100 and cents[0] < size and keys[cents[0]] in _CENTS:
                return cents[0] + 1, f"{prefix}{value}.{cents[1]:02d}"
        return end, prefix + value
    if end < size and keys[end] in _HOURS and not is_decimal and int(value) <= 24:
        hours, end = int(value), end + 1
        if end + 1 < size and keys[end] == "e":
            minutes = _cardinal(keys, end + 1, allow_multipliers=False)
            if minutes is not None and minutes[1] < 60:
                end = minutes[0] + (1 if minutes[0] < size and keys[minutes[0]] in _MINUTES else 0)
                return end, f"{hours}h{minutes[1]:02d}"
        if hours == 1:
            return end - 1, value
        return end, f"{hours}h"
    return end, value


def cardinal_at(keys: Sequence[str], start: int, multipliers: bool = False) -> tuple[int, int] | None:
    """The cardinal said at ``start``: (end, value), or None; a lone "um"/"uma" counts."""
    return _cardinal(keys, start, allow_multipliers=multipliers) if start < len(keys) else None


def label_number(keys: Sequence[str], start: int) -> tuple[int, int] | None:
    """The whole number said at ``start`` as a label is numbered ("quinto", "segundo", "um", "vinte e
    um", "vigésimo primeiro"): (end, value), or None. Unlike :func:`find_numbers`, a lone "segundo"
    or "um" counts here (after "artigo" it is a number); a decimal, a percentage, money or an hour
    is no label."""
    if start >= len(keys):
        return None
    if keys[start] in _F_ORDINALS:
        pos, total, last_place = start, 0, 10**4
        while pos < len(keys) and keys[pos] in _F_ORDINALS:
            value = _F_ORDINALS[keys[pos]][0]
            if _place(value) >= last_place:
                break
            total, last_place, pos = total + value, _place(value), pos + 1
        return pos, total
    found = _cardinal(keys, start)
    if found is None:
        return None
    end, value = found
    following = keys[end] if end < len(keys) else ""
    percent = following == "por" and end + 1 < len(keys) and keys[end + 1] == "cento"
    if percent or following in ("virgula", "ponto") or following in _F_CURRENCY or following in _CENTS | _HOURS:
        return None
    return (end, value) if value > 0 else None


def find_numbers(keys: Sequence[str]) -> list[NumberSpan]:
    """Every number group in ``keys`` (accent-folded, lower-case token texts), left to right."""
    spans: list[NumberSpan] = []
    pos = 0  # keys before pos are in a number already found
    for start in [k for k, key in enumerate(keys) if key in STARTERS]:
        span = _number_at(keys, start) if start >= pos else None
        if span is not None:
            spans.append(span)
            pos = span.end
    return spans


STARTERS = frozenset(
    {"menos", "cem"} | set(_F_UNITS) | set(_F_TEENS) | set(_F_TENS) | set(_F_HUNDREDS) | set(_F_MULT) | set(_F_ORDINALS)
)
