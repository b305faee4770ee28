"""Frozen dataclasses read from and written to JSON files exactly: one layout, checked on both sides.

A record's fields are its JSON object's keys. Reading checks every key's type and refuses a missing
or unknown key in one line naming the file and the key; values are kept as JSON gave them (an
integer stays an integer), so writing a record read from a file gives the same JSON back. Two field
markers cover what plain fields cannot: ``optional_key()`` (a key a file may lack: the field then
holds ``ABSENT``, which is not None, a key holding null) and ``other_keys()`` (a ``dict`` field
holding the keys a record does not name, kept as they are).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from toolkit.core.data_files import read_json
from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_json

T = TypeVar("T")
_OTHER_KEYS = "json_other_keys"


class Absent(enum.Enum):
    """The value of an ``optional_key()`` field whose key the file does not hold."""

    KEY = "absent"


ABSENT = Absent.KEY


def optional_key() -> Any:
    """A field whose key a file may lack (type it ``X | Absent``; ``X | None | Absent`` when null is a value too)."""
    return dataclasses.field(default=ABSENT)


def other_keys() -> Any:
    """A ``dict[str, Any]`` field holding every key the record does not name (figures only a table shows)."""
    return dataclasses.field(default_factory=dict, metadata={_OTHER_KEYS: True})


def read_record(cls: type[T], path: Path, what: str) -> T:
    """The ``cls`` record in the JSON file ``path``; a missing, damaged or ill-formed file is one InputError."""
    if not path.is_file():
        raise InputError(path, f"no {what} here")
    try:
        data = read_json(path)
    except InputError as error:
        raise InputError(path, f"not a readable {what}: {error.problem}") from None
    return record_from_json(cls, data, path)


def write_record(path: Path, record: Any) -> Path:
    """``record`` as its JSON file, written atomically (the one writer of every record file)."""
    return atomic_write_json(path, record_to_json(record))


def record_from_json(cls: type[T], data: Any, path: Path | str, where: str = "") -> T:
    """``data`` (parsed JSON) as ``cls``, each key checked; errors name ``path`` and the key's place."""
    return _value(cls, data, path, where or "the file")


def record_to_json(value: Any) -> Any:
    """A record (or a value inside one) as JSON data: the inverse of :func:`record_from_json`."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data: dict[str, Any] = {}
        for field in dataclasses.fields(value):
            item = getattr(value, field.name)
            if field.metadata.get(_OTHER_KEYS):
                data.update(item)
            elif item is not ABSENT:
                data[field.name] = record_to_json(item)
        return data
    if isinstance(value, (tuple, list)):
        return [record_to_json(item) for item in value]
    if isinstance(value, Mapping):
        return {key: record_to_json(item) for key, item in value.items()}
    return value


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _record(cls: type, data: Any, path: Path | str, where: str, bound: Mapping[Any, Any]) -> Any:
    if not isinstance(data, dict):
        raise InputError(path, f"{where} must be a JSON object, not {type(data).__name__}")
    fields = dataclasses.fields(cls)
    rest = next((f.name for f in fields if f.metadata.get(_OTHER_KEYS)), None)
    named = {f.name for f in fields if f.name != rest}
    unknown = sorted(set(data) - named)
    if unknown and rest is None:
        raise InputError(path, f"{where} has unknown key(s) {', '.join(unknown)}")
    values: dict[str, Any] = {}
    for field in fields:
        if field.name == rest:
            values[field.name] = {key: data[key] for key in data if key not in named}
        elif field.name in data:
            hint = _bind(_hints(cls)[field.name], bound)
            values[field.name] = _value(hint, data[field.name], path, _at(where, field.name))
        elif field.default is not ABSENT:
            raise InputError(path, f"{_at(where, field.name)} is missing")
    return cls(**values)


def _bind(hint: Any, bound: Mapping[Any, Any]) -> Any:
    """``hint`` with a generic record's type variables replaced by the types it was given (``Listed[X]``)."""
    if hint in bound:
        return bound[hint]
    free = getattr(hint, "__parameters__", ())
    return hint[tuple(bound[p] for p in free)] if free else hint


def _at(where: str, key: str) -> str:
    return key if where == "the file" else f"{where}.{key}"


def _value(hint: Any, data: Any, path: Path | str, where: str) -> Any:
    """``data`` checked against ``hint``; JSON numbers, strings and booleans are kept as they are."""
    if hint is Any:
        return data
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if dataclasses.is_dataclass(origin):  # a generic record given its types
        generic = typing.cast(type, origin)
        variables = getattr(generic, "__parameters__", ())
        return _record(generic, data, path, where, dict(zip(variables, args, strict=True)))
    if dataclasses.is_dataclass(hint):
        return _record(typing.cast(type, hint), data, path, where, {})
    if origin in (typing.Union, types.UnionType):
        if data is None and type(None) in args:
            return None
        options = [a for a in args if a not in (type(None), Absent)]
        return _value(options[0] if len(options) == 1 else Any, data, path, where)
    if origin is tuple:
        if not isinstance(data, list):
            raise InputError(path, f"{where} must be a list, not {type(data).__name__}")
        return tuple(_value(args[0], item, path, f"{where}[{i}]") for i, item in enumerate(data))
    if origin is dict:
        if not isinstance(data, dict):
            raise InputError(path, f"{where} must be a JSON object, not {type(data).__name__}")
        return {key: _value(args[1], item, path, f"{where}.{key}") for key, item in data.items()}
    if hint is float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise InputError(path, f"{where} must be a number, not {data!r}"[:200])
        return data
    if hint in (str, int, bool):
        if not isinstance(data, hint) or (hint is int and isinstance(data, bool)):
            raise InputError(path, f"{where} must be {hint.__name__}, not {data!r}"[:200])
        return data
    raise TypeError(f"{where}: no JSON reading for {hint!r}")  # a record written with an unsupported field type
