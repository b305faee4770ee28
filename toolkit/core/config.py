"""Strict construction of configuration dataclasses from experiment-file tables.

Every stage parameter must be written out in the experiment file (no hidden library
defaults), so a missing key, an unknown key or a value of the wrong type is an error that
names the file, the table and the key before any decoding starts.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar, cast

from toolkit.core.errors import InputError, Mistakes

T = TypeVar("T")


def require_non_negative(record: Any, *names: str) -> None:
    """ValueError naming the first of ``record``'s fields ``names`` that is not a finite number >= 0."""
    for name in names:
        value = getattr(record, name)
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be a finite number >= 0, not {value!r}")


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """A configuration class's resolved type hints (resolving them is most of a load's time)."""
    return typing.get_type_hints(cls)


def build_config(
    cls: type[T], table: Mapping[str, Any], *, path: Path | str, where: str, require_all: bool = True
) -> T:
    """Build dataclass ``cls`` from ``table``, checking names and types; errors say ``path: where.key ...``."""
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    hints = _hints(cast(type, cls))
    mistakes = Mistakes()
    mistakes.check(_require_names, fields, table, path=path, where=where, require_all=require_all)
    values = {
        name: mistakes.check(_coerce, hints[name], value, path=path, where=f"{where}.{name}")
        for name, value in table.items()
        if name in fields
    }
    mistakes.raise_found()  # the class's own checks need every value well typed
    try:
        return cls(**values)
    except (TypeError, ValueError) as error:
        raise InputError(path, f"[{where}] {error}") from None


def _require_names(
    fields: Mapping[str, Any], table: Mapping[str, Any], *, path: Path | str, where: str, require_all: bool
) -> None:
    """Refuse keys ``table`` may not hold, else (with ``require_all``) parameters it leaves out: a misspelled
    key is both, and reported once, as the unknown key it is."""
    unknown = sorted(set(table) - set(fields))
    if unknown:
        raise InputError(path, f"[{where}] has unknown parameter(s) {', '.join(unknown)}; known: {', '.join(fields)}")
    missing = [name for name in fields if name not in table] if require_all else []
    if missing:
        raise InputError(path, f"[{where}] must write out every parameter; missing {', '.join(missing)}")


def _coerce(hint: Any, value: Any, *, path: Path | str, where: str) -> Any:
    """Check ``value`` against a simple type hint (bool/int/float/str, Optional, tuple, list, Literal)."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for option in (a for a in args if a is not type(None)):
            try:
                return _coerce(option, value, path=path, where=where)
            except InputError as error:
                errors.append(error)
        raise errors[0] if errors else InputError(path, f"{where} cannot be empty")
    if origin is typing.Literal:
        if value not in args:
            raise InputError(path, f"{where} must be one of {', '.join(map(repr, args))}, not {value!r}")
        return value
    if origin in (tuple, list):
        if not isinstance(value, (list, tuple)):
            raise InputError(path, f"{where} must be a list, not {type(value).__name__} {value!r}")
        item = args[0] if args else Any
        items = [_coerce(item, v, path=path, where=f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if hint is Any:
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise InputError(path, f"{where} must be true or false, not {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(path, f"{where} must be an integer, not {value!r}")
        if abs(value) > 2**63 - 1:
            raise InputError(path, f"{where} must fit a 64-bit integer, not {str(value)[:24]}…")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(path, f"{where} must be a number, not {value!r}")
        if not math.isfinite(value):
            raise InputError(path, f"{where} must be a finite number, not {value!r}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise InputError(path, f"{where} must be a string, not {value!r}")
        return value
    return value
