"""One way to read JSON and TOML files: numbers bounded and finite, nesting bounded, one line per problem.

Every reader of a JSON or TOML file a person can edit (experiments, gates, manifests, hypotheses,
JSON TextGrids, run records, challenger records, users files, the audit log) parses through here,
so a NaN, an infinity, a 5000-digit integer, a 1e400 or a thousand nested brackets is refused
with the file and, for JSON, the line, never a traceback or a silently wrong number.
"""

from __future__ import annotations

import json
import math
import tomllib
from itertools import chain
from pathlib import Path
from typing import Any

import orjson

from toolkit.core.errors import InputError
from toolkit.core.text import read_text

MAX_DIGITS = 20  # an integer of more digits is refused (the largest int64 has 19)
MAX_DEPTH = 64  # objects and arrays nested deeper are refused
MAX_INT = 2**63 - 1


class _Bad(ValueError):
    """A value json/tomllib would accept but the toolkit does not; the message says why, ``token`` what was written."""

    def __init__(self, message: str, token: str) -> None:
        super().__init__(message)
        self.token = token


def _int(text: str) -> int:
    digits = text.lstrip("+-")
    if len(digits) > MAX_DIGITS:
        raise _Bad(f"a number of {len(digits)} digits ({text[:12]}…) is too large", text)
    return int(text)


def _bounded_float(text: str) -> float:
    if len(text) > 400:
        raise _Bad(f"a number of {len(text)} characters ({text[:12]}…) is too long", text)
    return float(text)


def _float(text: str) -> float:
    value = _bounded_float(text)
    if not math.isfinite(value):
        raise _Bad(f"{text[:24]} is not a finite number", text)
    return value


def _constant(text: str) -> Any:
    raise _Bad(f"{text} is not a finite number", text)


def _depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """The nesting depth of ``value`` (a scalar is 1), stopping past ``limit``; one level at a time, so a
    hypothesis file's thousands of word objects cost one pass over their fields."""
    level, depth = [value], 0
    while level and depth <= limit:
        depth += 1
        children = (
            item.values() if isinstance(item, dict) else item for item in level if isinstance(item, (dict, list))
        )
        level = _containers(list(chain.from_iterable(children)))
    return depth


_PLAIN = frozenset({str, int, float, bool, type(None)})  # what JSON and TOML hold besides objects and arrays


def _containers(values: list[Any]) -> list[Any]:
    """The objects and arrays among ``values``, decided from the set of their types when that is plain (a
    hypothesis file's 45,000 word fields: 2-3x less time than asking each value), else value by value."""
    kinds = set(map(type, values))
    if kinds <= _PLAIN:
        return []
    if kinds <= {dict, list}:
        return values
    return [value for value in values if isinstance(value, (dict, list))]


def parse_json(text: str, path: str | Path) -> Any:
    """``text`` as JSON, refused with one line naming ``path`` when malformed, too deep or holding a bad number."""
    data = _parsed_at_once(text)
    if data is _UNSURE:
        data = _parsed_with_checks(text, path)
    if _depth(data) > MAX_DEPTH:
        raise InputError(path, f"malformed JSON: nested deeper than {MAX_DEPTH} levels")
    return data


_UNSURE = object()  # what _parsed_at_once returns when only the checked parse can tell
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGITS = b"0" * 19  # a run of 19 digits: an integer orjson might turn into a float, or a number too long


def _parsed_at_once(text: str) -> Any:
    """``text`` parsed by orjson (compiled, 5x faster than json with its number hooks) when that is surely what
    the checked parse gives: orjson refuses NaN, infinities, numbers beyond a double's range and everything
    json refuses, and with no run of 19 digits every integer fits 64 bits and no number is over 400
    characters; otherwise, or when orjson refuses the text, ``_UNSURE`` (the checked parse then decides)."""
    raw = text.encode("utf-8", "surrogatepass")
    if _LONG_DIGITS in raw.translate(_DIGITS_AS_ZERO):
        return _UNSURE
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _UNSURE


def _parsed_with_checks(text: str, path: str | Path) -> Any:
    """``text`` parsed by json with every number checked, refused with one line naming ``path``."""
    try:
        return json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except _Bad as problem:
        line = text.count("\n", 0, max(text.find(problem.token), 0)) + 1
        raise InputError(path, f"malformed JSON at line {line}: {problem}") from None
    except json.JSONDecodeError as error:
        raise InputError(path, f"malformed JSON at line {error.lineno}: {error.msg}") from None
    except RecursionError:
        raise InputError(path, f"malformed JSON: nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as error:  # Python's own int limits, say
        raise InputError(path, f"malformed JSON: {error}") from None


def parse_toml(text: str, path: str | Path) -> dict[str, Any]:
    """``text`` as TOML with every number finite and every integer fitting 64 bits, else one line naming ``path``."""
    try:
        data = tomllib.loads(text, parse_float=_bounded_float)
    except _Bad as problem:
        raise InputError(path, f"not valid TOML: {problem}") from None
    except tomllib.TOMLDecodeError as error:
        raise InputError(path, f"not valid TOML ({error})") from None
    except (ValueError, RecursionError) as error:  # an integer beyond Python's digit limit, say
        raise InputError(path, f"not valid TOML ({error})") from None
    if _depth(data) > MAX_DEPTH:
        raise InputError(path, f"not valid TOML: nested deeper than {MAX_DEPTH} levels")
    for where, value in _numbers(data, ""):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
            raise InputError(path, f"{where} = {str(value)[:24]}… does not fit a 64-bit integer")
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(path, f"{where} = {value} is not a finite number")
    return data


def _numbers(value: Any, where: str) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [n for key, child in value.items() for n in _numbers(child, f"{where}.{key}" if where else key)]
    if isinstance(value, list):
        return [n for k, child in enumerate(value) for n in _numbers(child, f"{where}[{k}]")]
    return [(where, value)]


def read_json(path: str | Path) -> Any:
    """A JSON file through :func:`parse_json` (its text read strictly, toolkit.core.text)."""
    return parse_json(read_text(path), path)


def read_toml(path: str | Path) -> dict[str, Any]:
    """A TOML file through :func:`parse_toml`."""
    return parse_toml(read_text(path), path)
