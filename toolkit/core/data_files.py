"""One way to read JSON and TOML files: numbers bounded and finite, nesting bounded, one line per problem.

Every reader of a JSON or TOML file a person can edit (experiments, gates, manifests, hypotheses,
JSON TextGrids, run records, challenger records, users files, the audit log) parses through here,
so a NaN, an infinity, a 5000-digit integer, a 1e400 or a thousand nested brackets is refused
with the file and, for JSON, the line, never a traceback or a silently wrong number.
"""

from __future__ import annotations

import codecs
import json
import math
import tomllib
from collections.abc import Iterator
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
        level = _containers(level)
    return depth


_PLAIN = frozenset({str, int, float, bool, type(None)})  # what JSON and TOML hold besides objects and arrays


def _containers(level: list[Any]) -> list[Any]:
    """The objects and arrays held by ``level``'s objects and arrays, decided from the set of their types when that
    is plain (a hypothesis file's 45,000 word fields: no list of them, 3x less time than asking each value), else
    value by value."""
    kinds = set(map(type, _children(level)))
    if kinds <= _PLAIN:
        return []
    if kinds <= {dict, list}:
        return list(_children(level))
    return [value for value in _children(level) if isinstance(value, (dict, list))]


def _children(level: list[Any]) -> Iterator[Any]:
    """The values of ``level``'s objects and arrays (its other values hold none), in order."""
    if set(map(type, level)) == {dict}:  # a list of objects (a hypothesis's words): no question per object
        return chain.from_iterable(map(dict.values, level))
    return chain.from_iterable(
        item.values() if isinstance(item, dict) else item for item in level if isinstance(item, (dict, list))
    )


def parse_json(text: str, path: str | Path) -> Any:
    """``text`` as JSON, refused with one line naming ``path`` when malformed, too deep or holding a bad number."""
    data = _parsed_at_once(text.encode("utf-8", "surrogatepass"))
    if data is _UNSURE:
        data = _parsed_with_checks(text, path)
    return _shallow(data, path)


def _shallow(data: Any, path: str | Path) -> Any:
    """``data``, refused naming ``path`` when nested deeper than ``MAX_DEPTH``."""
    if _depth(data) > MAX_DEPTH:
        raise InputError(path, f"malformed JSON: nested deeper than {MAX_DEPTH} levels")
    return data


_UNSURE = object()  # what _parsed_at_once returns when only the checked parse can tell
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGITS = b"0" * 19  # a run of 19 digits: an integer orjson might turn into a float, or a number too long
_BLOCK = 1 << 16  # bytes looked at a time for a run of digits


def _parsed_at_once(raw: bytes) -> Any:
    """``raw`` (JSON text as UTF-8) parsed by orjson (compiled, 5x faster than json with its number hooks) when that
    is surely what the checked parse gives: orjson refuses NaN, infinities, numbers beyond a double's range and
    everything json refuses, and with no run of 19 digits every integer fits 64 bits and no number is over 400
    characters; otherwise, or when orjson refuses the text, ``_UNSURE`` (the checked parse then decides)."""
    if _has_long_digits(raw):
        return _UNSURE
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _UNSURE


def _has_long_digits(raw: bytes) -> bool:
    """Whether ``raw`` holds a run of 19 digits, looked for a block at a time (blocks overlapping by 18 bytes):
    a translated copy of a whole large file would be memory touched for nothing."""
    end = len(raw)
    return any(
        _LONG_DIGITS in raw[start : start + _BLOCK + 18].translate(_DIGITS_AS_ZERO) for start in range(0, end, _BLOCK)
    )


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
    """A JSON file through :func:`parse_json` (its text read strictly, toolkit.core.text); a file in UTF-8 without a
    byte-order mark goes to orjson as its bytes (no copy of its text decoded and encoded back: a hypothesis's 1.4 MB
    twice), anything orjson refuses or might read otherwise through ``parse_json``, for its messages."""
    data = _file_at_once(path)
    if data is _UNSURE:
        return parse_json(read_text(path), path)
    return _shallow(data, path)


_BYTE_ORDER_MARKS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def _file_at_once(path: str | Path) -> Any:
    """The file's bytes through :func:`_parsed_at_once`, where they are what ``read_text`` would give encoded back:
    orjson refuses invalid UTF-8 (surrogates too) and NUL characters, so only a byte-order mark (which read_text
    takes away) needs a look; ``_UNSURE`` for a file that cannot be read (read_text then says why)."""
    try:
        raw = Path(path).read_bytes()
    except OSError:
        return _UNSURE
    return _UNSURE if raw.startswith(_BYTE_ORDER_MARKS) else _parsed_at_once(raw)


def read_toml(path: str | Path) -> dict[str, Any]:
    """A TOML file through :func:`parse_toml`."""
    return parse_toml(read_text(path), path)
