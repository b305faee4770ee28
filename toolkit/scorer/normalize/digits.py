"""Numerals written with digits -> pt-BR words, parsed before punctuation is stripped.

Cardinals come from num2words (lang "pt_BR"); the cases it gets wrong or does not cover are
written here: decimals are read from the written digits ("3,50" -> "três vírgula cinquenta",
not a float), currency ("R$ 0,50" -> "cinquenta centavos", not "zero reais e ..."), ordinals
(feminine forms, "quadringentésimo"), times ("10h30") and numbers grouped by spaces ("2 100").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache

from num2words import num2words

from toolkit.scorer.normalize.lexicon import Unit
from toolkit.scorer.normalize.numbers import MULTIPLIERS, decimal_text

# (singular, plural, value prefix) per currency symbol.
CURRENCIES = {
    "R$": ("real", "reais", "R$"),
    "US$": ("dólar", "dólares", "US$"),
    "$": ("dólar", "dólares", "US$"),
    "€": ("euro", "euros", "€"),
}
# Letters before "$" that recognizers write as a word of their own ("R" "$" for "R$").
CURRENCY_PREFIXES = frozenset(symbol[:-1] for symbol in CURRENCIES if symbol.endswith("$") and len(symbol) > 1)
_ORD_UNITS = ("", "primeiro", "segundo", "terceiro", "quarto", "quinto", "sexto", "sétimo", "oitavo", "nono")
_ORD_TENS = (
    "",
    "décimo",
    "vigésimo",
    "trigésimo",
    "quadragésimo",
    "quinquagésimo",
    "sexagésimo",
    "septuagésimo",
    "octogésimo",
    "nonagésimo",
)
_ORD_HUNDREDS = (
    "",
    "centésimo",
    "ducentésimo",
    "tricentésimo",
    "quadringentésimo",
    "quingentésimo",
    "sexcentésimo",
    "septingentésimo",
    "octingentésimo",
    "noningentésimo",
)
_MAX_CARDINAL_DIGITS = 15
_MAX_FRACTION_DIGITS = 3

_HAS_DIGIT = re.compile(r"\d")
_AMOUNT = r"(?P<sign>[-\u2212])?(?P<int>\d{1,3}(?:\.\d{3})+|\d+)(?:(?P<sep>[,.])(?P<frac>\d+))?"
_CURRENCY = r"(?P<cur>R\$|US\$|\$|€)"
_PATTERNS = (
    ("time", re.compile(r"(?P<h>\d{1,2})h(?P<m>\d{2})?(?P<min>min)?", re.IGNORECASE)),
    ("time", re.compile(r"(?P<h>\d{1,2}):(?P<m>\d{2})")),
    ("minutes", re.compile(r"(?P<int>\d{1,3})min", re.IGNORECASE)),
    ("ordinal", re.compile(r"(?P<int>\d{1,4})\.?(?P<ord>[ºªoa])")),
    ("degrees", re.compile(r"(?P<int>\d{1,3})°")),
    ("currency", re.compile(_CURRENCY + r"\s*" + _AMOUNT)),
    ("percent", re.compile(_AMOUNT + r"\s*%")),
    ("amount", re.compile(_AMOUNT)),
)
_THREE_DIGITS = re.compile(r"\d{3}(?:,\d+)?%?")
_SHORT_DIGITS = re.compile(r"\d{1,3}")
# A decimal comma or thousands dot with digits, written as a word of its own: recognizers split
# "4,2%" into the words "4", ",2", "%" (Whisper's word timestamps do).
_CONTINUATION = re.compile(r"[.,]\d+%?")
_RUNS = re.compile(r"\d+|\D+")
_DATE = re.compile(r"(?P<d>\d{1,2})/(?P<mo>\d{1,2})(?:/(?P<y>\d{4}))?")
_PLAIN_AMOUNT = re.compile(_AMOUNT)
_GLUED_UNIT = re.compile(f"(?P<amount>{_AMOUNT})(?P<unit>[^\\d.,].*)")
MONTH_NAMES = (
    "janeiro",
    "fevereiro",
    "março",
    "abril",
    "maio",
    "junho",
    "julho",
    "agosto",
    "setembro",
    "outubro",
    "novembro",
    "dezembro",
)


@dataclass(frozen=True)
class Numeral:
    """A numeral found at some piece: how many pieces it spans, its words and its value."""

    span: int
    literal: str
    words: tuple[str, ...]
    value: str | None


def _trim(piece: str) -> str:
    """Drop edge punctuation that is not part of a numeral (quotes, brackets, final stops)."""
    start, end = 0, len(piece)
    while start < end and _edge_junk(piece[start], leading=True):
        start += 1
    while end > start and _edge_junk(piece[end - 1], leading=False):
        end -= 1
    return piece[start:end]


def _edge_junk(char: str, leading: bool) -> bool:
    if char.isalnum() or char in "%$€°ºª":
        return False
    if leading and char in "-\u2212":
        return False
    category = unicodedata.category(char)
    return category[0] in "PSZC"


@lru_cache(maxsize=4096)
def cardinal(number: int) -> tuple[str, ...]:
    """Cardinal words; num2words' commas ("mil, duzentos e dez") are dropped."""
    return tuple(num2words(number, lang="pt_BR").replace(",", "").split())


def _integer(digits: str) -> tuple[str, ...]:
    """An integer as written: leading zeros or very long strings are read digit by digit."""
    if (len(digits) > 1 and digits[0] == "0") or len(digits) > _MAX_CARDINAL_DIGITS:
        return tuple(word for digit in digits for word in cardinal(int(digit)))
    return cardinal(int(digits))


def _fraction(digits: str) -> tuple[str, ...]:
    """Decimal places as pt-BR speakers read them: "5" cinco, "50" cinquenta, "05" zero cinco."""
    if len(digits) > _MAX_FRACTION_DIGITS:
        return tuple(word for digit in digits for word in cardinal(int(digit)))
    zeros = len(digits) - len(digits.lstrip("0"))
    rest = digits[zeros:]
    return ("zero",) * zeros + (cardinal(int(rest)) if rest else ())


def ordinal(number: int, feminine: bool) -> tuple[str, ...]:
    """Ordinal words for 1..1999 ("21ª" -> vigésima primeira); larger ones read as cardinals."""
    if not 0 < number < 2000:
        return cardinal(number)
    thousands, rest = divmod(number, 1000)
    words = (["milésimo"] if thousands else []) + [
        table[digit]
        for table, digit in ((_ORD_HUNDREDS, rest // 100), (_ORD_TENS, rest // 10 % 10), (_ORD_UNITS, rest % 10))
        if digit
    ]
    if feminine:
        words = [word[:-1] + "a" for word in words]
    return tuple(words)


def _amount_words(match: re.Match[str]) -> tuple[tuple[str, ...], str]:
    """Words and value of an amount: integer part (thousands dots), decimal comma or dot."""
    integer = match["int"].replace(".", "")
    words = _integer(integer)
    value = str(int(integer)) if not integer.startswith("0") or integer == "0" else integer
    if match["frac"] is not None:
        words += ("vírgula",) + _fraction(match["frac"])
        value += "." + match["frac"]
    if match["sign"]:
        words = ("menos",) + words
        value = "-" + value
    return words, value


def _currency_words(match: re.Match[str], multiplier: str | None) -> tuple[tuple[str, ...], str]:
    """Money: "R$ 1.500,00" -> mil e quinhentos reais; centavos only when non-zero."""
    singular, plural, prefix = CURRENCIES[match["cur"]]
    integer = int(match["int"].replace(".", ""))
    frac = match["frac"]
    sign = ("menos",) if match["sign"] else ()
    if multiplier is not None or (frac is not None and len(frac) > 2):
        amount, value = _amount_words(match)
        sign_text = "-" if value.startswith("-") else ""
        value = value.lstrip("-")
        if multiplier is not None:
            amount += (multiplier,) + (("de",) if MULTIPLIERS[multiplier] >= 10**6 else ())
            value = decimal_text(Decimal(value) * MULTIPLIERS[multiplier])
        return amount + (plural,), sign_text + prefix + value
    cents = int(frac.ljust(2, "0")) if frac else 0
    words: tuple[str, ...] = ()
    if integer or not cents:
        round_million = integer >= 10**6 and integer % 10**6 == 0
        words = _integer(str(integer)) + (("de",) if round_million else ()) + (singular if integer == 1 else plural,)
    if cents:
        words += (("e",) if words else ()) + cardinal(cents) + ("centavo" if cents == 1 else "centavos",)
    value = f"{prefix}{integer}" + (f".{cents:02d}" if cents else "")
    return sign + words, ("-" if sign else "") + value


def _match_single(core: str, multiplier: str | None) -> tuple[tuple[str, ...], str, bool] | None:
    """Words, value and whether ``multiplier`` was used, for one trimmed piece."""
    for kind, pattern in _PATTERNS:
        match = pattern.fullmatch(core)
        if match is None:
            continue
        if kind == "time":
            hours, minutes = int(match["h"]), int(match["m"] or 0)
            if hours > 24 or minutes > 59:
                return None
            words = _hour_words(hours) + (("e",) + cardinal(minutes) if minutes else ())
            if match.groupdict().get("min") and minutes:
                words += ("minuto" if minutes == 1 else "minutos",)
            return words, f"{hours}h" + (f"{minutes:02d}" if minutes else ""), False
        if kind == "minutes":
            minutes = int(match["int"])
            return cardinal(minutes) + ("minuto" if minutes == 1 else "minutos",), str(minutes), False
        if kind == "ordinal":
            feminine = match["ord"] in "ªa"
            return ordinal(int(match["int"]), feminine), f"{int(match['int'])}{'ª' if feminine else 'º'}", False
        if kind == "degrees":
            degrees = int(match["int"])
            return cardinal(degrees) + ("grau" if degrees == 1 else "graus",), str(degrees), False
        if kind == "currency":
            words, value = _currency_words(match, multiplier)
            return words, value, multiplier is not None
        words, value = _amount_words(match)
        if kind == "percent":
            return words + ("por", "cento"), value + "%", False
        return words, value, False
    return None


def _hour_words(hours: int) -> tuple[str, ...]:
    """Hours are feminine: "1h" uma hora, "2h" duas horas, "21h" vinte e uma horas."""
    words = list(cardinal(hours))
    if words[-1] in ("um", "dois"):
        words[-1] = "uma" if words[-1] == "um" else "duas"
    return tuple(words) + ("hora" if hours == 1 else "horas",)


def has_digit(piece: str) -> bool:
    """Whether ``piece`` contains a decimal digit."""
    return _HAS_DIGIT.search(piece) is not None


def might_start_numeral(piece: str) -> bool:
    """Cheap test before ``find_numeral``: a digit or a currency symbol."""
    return "$" in piece or "€" in piece or has_digit(piece)


def splits_currency(words: Sequence[str], index: int) -> bool:
    """Whether ``words[index]`` is the letters of a currency whose "$" is the next word ("R" "$")."""
    return words[index] in CURRENCY_PREFIXES and index + 1 < len(words) and words[index + 1].startswith("$")


def find_numeral(
    pieces: list[str],
    index: int,
    merge: bool = True,
    join_pieces: bool = False,
    units: Mapping[str, Unit] | None = None,
    dates: bool = False,
) -> Numeral | None:
    """The numeral starting at ``pieces[index]``, or None when that piece does not start one.

    A currency symbol with no amount after it is read as the currency's plural ("R$" -> reais).

    With ``merge``, a numeral may span pieces: "R$" + "1.500,00", "3,5" + "%", an amount + a
    multiplier word after a currency ("R$ 2,5 milhões"), and space-grouped thousands ("2 100":
    a 1-3 digit piece followed by pieces of exactly three digits). With ``join_pieces`` too, a
    piece that is a decimal comma or thousands dot with digits continues the digits before it
    ("4" + ",2" + "%" is "4,2%"; "1" + ".500" + ",00" is "1.500,00"), and "R" + "$" is "R$".

    With ``units`` (ptbr-norm-3), an amount takes the unit written after it, glued or as the next
    piece ("120 km", "5kg", "75 m²"), and money written with its symbol takes a redundant currency
    word after it ("R$ 2.300 reais"). With ``dates``, "15/03/2020" and "15/03" are dates.
    """
    core = _trim(pieces[index])
    span = 1
    if merge:
        if join_pieces and splits_currency(pieces, index):
            core, span = core + _trim(pieces[index + 1]), 2  # "R" + "$" is "R$"
        prefix = ""
        if core in CURRENCIES and index + span < len(pieces) and has_digit(pieces[index + span]):
            prefix, core, span = core, core + _trim(pieces[index + span]), span + 1
        while (
            join_pieces
            and core[-1:].isdigit()
            and index + span < len(pieces)
            and _CONTINUATION.fullmatch(piece := pieces[index + span].rstrip(".,;:!?"))
        ):
            core, span = core + piece, span + 1
        digits = core[len(prefix) :]
        if _SHORT_DIGITS.fullmatch(digits) and pieces[index + span - 1].endswith(digits):
            while index + span < len(pieces) and _THREE_DIGITS.fullmatch(_trim(pieces[index + span])):
                following = pieces[index + span]
                core += "." + _trim(following)
                span += 1
                if not following.isdigit():
                    break
        if index + span < len(pieces) and _trim(pieces[index + span]) == "%":
            core, span = core + "%", span + 1
    if core in CURRENCIES:
        return Numeral(span=span, literal=core, words=(CURRENCIES[core][1],), value=None)
    if not has_digit(core):
        return None
    multiplier = None
    if merge and index + span < len(pieces):
        following = _trim(pieces[index + span]).lower()
        multiplier = following if following in MULTIPLIERS else None
    date = _date(core) if dates else None
    if date is not None:
        return Numeral(span=span, literal=core, words=date[0], value=date[1])
    unit = None
    if units is not None:
        core, unit, span = _unit(core, pieces, index, span, units, merge)
    found = _match_single(core, multiplier)
    if found is None:
        return _fallback(core + (unit or ""), span)
    words, value, used_multiplier = found
    span += 1 if used_multiplier else 0
    if unit is not None and units is not None:
        words = _with_unit(words, value, units[unit])
    elif units is not None and value[:1] in "RU$€" and index + span < len(pieces):
        singular, plural, _ = CURRENCIES.get(value.rstrip("0123456789.-"), ("", "", ""))
        if _trim(pieces[index + span]).lower() in (singular, plural):  # "R$ 2.300 reais": said once
            span += 1
    literal = "".join(_trim(piece) for piece in pieces[index : index + span])
    return Numeral(span=span, literal=literal, words=words, value=value)


def _date(core: str) -> tuple[tuple[str, ...], str] | None:
    """Words and value of "15/03/2020" or "15/03" (a two-digit month without a year: "1/2" is a half)."""
    found = _DATE.fullmatch(core)
    if found is None:
        return None
    day, month, year = int(found["d"]), int(found["mo"]), found["y"]
    if not (1 <= day <= 31 and 1 <= month <= 12) or (year is None and len(found["mo"]) != 2):
        return None
    words = ("primeiro",) if day == 1 else cardinal(day)
    words += ("de", MONTH_NAMES[month - 1])
    if year is not None:
        words += ("de", *cardinal(int(year)))
    return words, (year or "-") + f"-{month:02d}-{day:02d}"


def _unit(
    core: str, pieces: list[str], index: int, span: int, units: Mapping[str, Unit], merge: bool
) -> tuple[str, str | None, int]:
    """The amount, the unit written after it (glued, or the next piece) and the new span."""
    glued = _GLUED_UNIT.fullmatch(core)
    if glued is not None and glued["unit"] in units:
        return glued["amount"], glued["unit"], span
    if merge and _PLAIN_AMOUNT.fullmatch(core) and index + span < len(pieces):
        following = _trim(pieces[index + span])
        if following in units:
            return core, following, span + 1
    return core, None, span


def _with_unit(words: tuple[str, ...], value: str, unit: Unit) -> tuple[str, ...]:
    """An amount's words with its unit: singular for exactly one, a feminine unit's "uma", "duas"."""
    if unit.feminine and words and words[-1] in ("um", "dois") and "." not in value:
        words = (*words[:-1], "uma" if words[-1] == "um" else "duas")
    return words + (unit.singular if value == "1" else unit.plural)


def _fallback(core: str, span: int) -> Numeral:
    """Digits mixed with other characters ("covid-19", "4G"): digit runs read as integers."""
    words: list[str] = []
    for run in _RUNS.findall(core):
        words.extend(_integer(run) if run.isdecimal() else (run,))
    return Numeral(span=span, literal=core, words=tuple(words), value=None)
