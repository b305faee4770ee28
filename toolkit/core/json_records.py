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
from collections.abc import Callable, Mapping
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
    """``data`` (parsed JSON, or JSON-like data with tuples for lists) as ``cls``, each key checked; errors name
    ``path`` and the key's place."""
    return typing.cast(T, _reader(typing.cast(Any, cls))(data, path, where or "the file"))


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


# Where a value lies, built only when an error names it: the top ("the file", or the caller's), or
# (parent, key) for a record's key or a mapping's key, or (parent, index) for a list item.
Where = Any
Reader = Callable[[Any, "Path | str", Where], Any]


def _describe(where: Where) -> str:
    if isinstance(where, str):
        return where
    parent, key = where
    above = _describe(parent)
    if isinstance(key, int):
        return f"{above}[{key}]"
    return key if above == "the file" else f"{above}.{key}"


def _bind(hint: Any, bound: Mapping[Any, Any]) -> Any:
    """``hint`` with a generic record's type variables replaced by the types it was given (``Listed[X]``)."""
    if hint in bound:
        return bound[hint]
    free = getattr(hint, "__parameters__", ())
    return hint[tuple(bound[p] for p in free)] if free else hint


@functools.cache
def _reader(hint: Any) -> Reader:
    """A function that checks data against ``hint``, made once per hint (reading a score file checks
    thousands of values: deciding what each hint means once is most of the speed)."""
    if hint is Any:
        return lambda data, path, where: data
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if dataclasses.is_dataclass(origin):  # a generic record given its types
        generic = typing.cast(type, origin)
        variables = getattr(generic, "__parameters__", ())
        return _record_reader(generic, tuple(zip(variables, args, strict=True)))
    if dataclasses.is_dataclass(hint):
        return _record_reader(typing.cast(type, hint), ())
    if origin in (typing.Union, types.UnionType):
        return _union_reader(args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return _list_reader(_reader(args[0]))
        return _fixed_reader(tuple(_reader(arg) for arg in args))
    if origin is dict:
        return _mapping_reader(_reader(args[1]))
    if hint is float:
        return _read_number
    if hint in (str, int, bool):
        return _scalar_reader(hint)
    raise TypeError(f"no JSON reading for {hint!r}")  # a record written with an unsupported field type


def _union_reader(args: tuple[Any, ...]) -> Reader:
    options = [a for a in args if a not in (type(None), Absent)]
    inner = _reader(options[0] if len(options) == 1 else Any)
    nullable = type(None) in args

    def read(data: Any, path: Path | str, where: Where) -> Any:
        return None if data is None and nullable else inner(data, path, where)

    return read


def _list_reader(item: Reader) -> Reader:
    def read(data: Any, path: Path | str, where: Where) -> Any:
        if not isinstance(data, (list, tuple)):  # a tuple: data a writer built in Python (JSON gives lists)
            raise InputError(path, f"{_describe(where)} must be a list, not {type(data).__name__}")
        return tuple(item(value, path, (where, i)) for i, value in enumerate(data))

    return read


def _fixed_reader(items: tuple[Reader, ...]) -> Reader:
    """A list of exactly ``len(items)`` values, each read by its own reader (a pair, say)."""
    lists = _list_reader(lambda value, path, where: value)

    def read(data: Any, path: Path | str, where: Where) -> Any:
        values = lists(data, path, where)
        if len(values) != len(items):
            raise InputError(path, f"{_describe(where)} must hold {len(items)} values, not {len(values)}")
        return tuple(item(value, path, (where, i)) for i, (item, value) in enumerate(zip(items, values)))

    return read


def _mapping_reader(item: Reader) -> Reader:
    def read(data: Any, path: Path | str, where: Where) -> Any:
        if not isinstance(data, dict):
            raise InputError(path, f"{_describe(where)} must be a JSON object, not {type(data).__name__}")
        return {key: item(value, path, (where, key)) for key, value in data.items()}

    return read


def _read_number(data: Any, path: Path | str, where: Where) -> Any:
    if isinstance(data, bool) or not isinstance(data, (int, float)):
        raise InputError(path, f"{_describe(where)} must be a number, not {data!r}"[:200])
    return data


def _scalar_reader(hint: type) -> Reader:
    def read(data: Any, path: Path | str, where: Where) -> Any:
        if not isinstance(data, hint) or (hint is int and isinstance(data, bool)):
            raise InputError(path, f"{_describe(where)} must be {hint.__name__}, not {data!r}"[:200])
        return data

    return read


def _record_reader(cls: type, bound: tuple[tuple[Any, Any], ...]) -> Reader:
    """A record's reader: its fields' readers (made at its first read, as a record may hold its own
    type), its named keys and the field holding other keys."""
    fields = dataclasses.fields(cls)
    rest = next((f.name for f in fields if f.metadata.get(_OTHER_KEYS)), None)
    named = frozenset(f.name for f in fields if f.name != rest)
    plan: list[tuple[str, Reader, bool]] = []

    def read(data: Any, path: Path | str, where: Where) -> Any:
        if not plan:
            hints, types_of = _hints(cls), dict(bound)
            plan.extend(
                (f.name, _reader(_bind(hints[f.name], types_of)), f.default is not ABSENT)
                for f in fields
                if f.name != rest
            )
        if not isinstance(data, dict):
            raise InputError(path, f"{_describe(where)} must be a JSON object, not {type(data).__name__}")
        if rest is None and not named.issuperset(data):
            raise InputError(path, f"{_describe(where)} has unknown key(s) {', '.join(sorted(set(data) - named))}")
        values: dict[str, Any] = {}
        for name, reader, required in plan:
            if name in data:
                values[name] = reader(data[name], path, (where, name))
            elif required:
                raise InputError(path, f"{_describe((where, name))} is missing")
        if rest is not None:
            values[rest] = {key: data[key] for key in data if key not in named}
        return cls(**values)

    return read
