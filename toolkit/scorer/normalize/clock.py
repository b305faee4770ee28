"""Clock times and dates as pt-BR says them (ptbr-norm-3, options ``clock_times`` and ``dates``).

Clock times: "14h30", "14:30", "catorze horas e trinta", "quatorze horas e trinta minutos", and,
after "às"/"das"/"pelas", "catorze e trinta" are one reading: the hours, "e", the minutes (``catorze e
trinta``, value 14h30); "meia" for the half hour is "trinta" ("às duas e meia" is 2h30). "14h" stays
"catorze horas" (a bare "catorze" is no time). Noon and midnight ("meio-dia") and the 12-hour reading
("duas da tarde" for 14h) are not folded.

Dates: "15/03/2020" is read "quinze de março de dois mil e vinte" (``toolkit.scorer.normalize.digits``),
and that reading, written or said, is one number of value 2020-03-15; the first day is "primeiro"
("1º de maio", "um de maio" and "primeiro de maio" alike).
"""

from __future__ import annotations

from collections.abc import Callable

from toolkit.scorer.normalize.digits import MONTH_NAMES
from toolkit.scorer.normalize.numbers import STARTERS, cardinal_at
from toolkit.scorer.normalize.stream import Stream

_CONTEXT = frozenset({"as", "das", "pelas"})
_HOURS = frozenset({"hora", "horas"})
_MINUTES = frozenset({"minuto", "minutos"})
_FIRST = frozenset({"primeiro", "1o"})
_TIME_WORDS = _CONTEXT | _HOURS | {"a"}  # a clock time needs one of these


def _minutes(keys: list[str], pos: int) -> tuple[int, int] | None:
    """(end, minutes) of "meia" or a cardinal 1..59 at ``pos``, with a following "minutos"."""
    if pos < len(keys) and keys[pos] == "meia":
        end, value = pos + 1, 30
    else:
        found = cardinal_at(keys, pos)
        if found is None or not 0 < found[1] < 60:
            return None
        end, value = found
    return (end + 1 if end < len(keys) and keys[end] in _MINUTES else end), value


def _time_at(keys: list[str], pos: int) -> tuple[int, int, int, int] | None:
    """(hours end, minutes start, end, hhmm) of a clock time with minutes at ``pos``."""
    hours = cardinal_at(keys, pos)
    if hours is None or hours[1] > 24:
        return None
    after = hours[0]
    said_hours = after < len(keys) and keys[after] in _HOURS
    if said_hours:
        after += 1
    context = pos > 0 and (keys[pos - 1] in _CONTEXT or (keys[pos - 1] == "a" and keys[pos] == "uma"))
    if not (said_hours or context) or after >= len(keys) or keys[after] != "e":
        return None
    minutes = _minutes(keys, after + 1)
    if minutes is None:
        return None
    return hours[0], after + 1, minutes[0], hours[1] * 100 + minutes[1]


def _date_at(keys: list[str], pos: int) -> tuple[int, int, str] | None:
    """(day end, end, value) of "D de MÊS [de ANO]" at ``pos``."""
    if keys[pos] in _FIRST:
        day_end, day = pos + 1, 1
    else:
        found = cardinal_at(keys, pos)
        if found is None or not 1 <= found[1] <= 31:
            return None
        day_end, day = found
    if day_end + 1 >= len(keys) or keys[day_end] != "de" or keys[day_end + 1] not in _MONTH_KEYS:
        return None
    month = _MONTH_KEYS[keys[day_end + 1]]
    end, value = day_end + 2, f"--{month:02d}-{day:02d}"
    if end + 1 < len(keys) and keys[end] == "de":
        year = cardinal_at(keys, end + 1, multipliers=True)
        if year is not None and 1000 <= year[1] <= 2999:
            end, value = year[0], f"{year[1]}-{month:02d}-{day:02d}"
    return day_end, end, value


_MONTH_KEYS = {"marco" if month == "março" else month: number for number, month in enumerate(MONTH_NAMES, start=1)}


def times_and_dates(
    stream: Stream, key: Callable[[str], str], literal: Callable[[str], str], times: bool, dates: bool
) -> Stream:
    """``stream`` with clock times and dates read as one rule-made number each."""
    keys = stream.keys(key)
    present = set(keys)
    times = times and bool(present & _TIME_WORDS)
    dates = dates and bool(present & _MONTH_KEYS.keys())
    if not (times or dates):
        return stream
    out = stream.successor(stream)
    texts, sources = stream.texts, stream.sources
    pos = 0  # tokens before pos are in ``out``; only a starter that is not in a rule-made number can begin one
    for start in [k for k, word in enumerate(keys) if word in STARTERS and stream.fixed[k] is None]:
        if start < pos:
            continue  # read as part of the time or date before it
        out.copy_from(stream, pos, start)
        pos = start
        time = _time_at(keys, pos) if times else None
        if time is not None:
            hour_end, minutes_start, end, value = time
            minutes = [literal("trinta") if keys[k] == "meia" else texts[k] for k in range(minutes_start, end)]
            minutes = [m for k, m in zip(range(minutes_start, end), minutes) if keys[k] not in _MINUTES]
            reading = (*texts[pos:hour_end], literal("e"), *minutes)
            out.add_group(reading, sources[pos:end], f"{value // 100}h{value % 100:02d}")
            pos = end
            continue
        date = _date_at(keys, pos) if dates else None
        if date is not None:
            day_end, end, iso_date = date
            day = (literal("primeiro"),) if iso_date.endswith("-01") else tuple(texts[pos:day_end])
            out.add_group((*day, *texts[day_end:end]), sources[pos:end], iso_date)
            pos = end
    out.copy_from(stream, pos, len(keys))
    return out
