"""The store file's rows as frozen dataclasses: one reader and one writer for every table.

Each table is declared once as a :class:`Table`: its name and the record its rows are read as,
whose fields are the table's columns (named, never taken by position). SQLite keeps any value
in any column, so a file changed by another tool may hold text where a time belongs: every row
read is checked against its record's field types, and a damaged one is one line naming the
file, the table and the row, with the file left as it was.
"""

from __future__ import annotations

import dataclasses
import functools
import sqlite3
import types
import typing
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from toolkit.core.errors import InputError

R = TypeVar("R")
_BUSY_TIMEOUT_S = 60.0
LEFT_AS_IT_WAS = "it was left untouched: restore it from a backup or move it aside to start a new one"
# The SQLite storage classes a field's type admits (a REAL column gives back an int it was given).
_STORED_AS: dict[Any, tuple[type, ...]] = {str: (str,), int: (int,), float: (float, int), bool: (int,)}
_KIND = {str: "text", int: "an integer", float: "a number", bool: "0 or 1"}


@dataclass(frozen=True)
class _Column:
    """One column: its name, the Python type its field holds, and whether it may be NULL."""

    name: str
    kind: Any  # str, int, float or bool
    nullable: bool

    def value(self, stored: Any) -> Any:
        """The stored value as the field holds it; ValueError when the row does not hold such a value."""
        if stored is None and self.nullable:
            return None
        if type(stored) not in _STORED_AS[self.kind] or (self.kind is bool and stored not in (0, 1)):
            raise ValueError(f"{self.name} holds {stored!r}, not {_KIND[self.kind]}")
        return self.kind(stored)


@dataclass(frozen=True)
class Table(Generic[R]):
    """A table of the store file and the frozen dataclass its rows are: fields are columns, ``id`` SQLite's."""

    name: str
    record: type[R]

    @functools.cached_property
    def columns(self) -> tuple[_Column, ...]:
        hints = typing.get_type_hints(self.record)
        return tuple(_column(field.name, hints[field.name]) for field in dataclasses.fields(self.record))  # type: ignore[arg-type]


def _column(name: str, hint: Any) -> _Column:
    """The column of a field typed ``str``, ``int``, ``float`` or ``bool``, or one of them ``| None``."""
    nullable = typing.get_origin(hint) in (typing.Union, types.UnionType)
    kinds = [a for a in typing.get_args(hint) if a is not type(None)] if nullable else [hint]
    if len(kinds) != 1 or kinds[0] not in _STORED_AS:
        raise TypeError(f"field {name}: {hint} is no SQLite column type (str, int, float, bool, or one of them | None)")
    return _Column(name, kinds[0], nullable)


def read(
    connection: sqlite3.Connection,
    path: Path,
    table: Table[R],
    where: str = "",
    parameters: Sequence[Any] = (),
    order: str = "rowid",
) -> list[R]:
    """The rows of ``table`` that match ``where`` (SQL, ``?`` for ``parameters``), in ``order``, as records."""
    columns = _names(column.name for column in table.columns)
    condition = f" WHERE {where}" if where else ""
    cursor = connection.execute(f"SELECT rowid, {columns} FROM {table.name}{condition} ORDER BY {order}", parameters)
    return [_record(path, table, row) for row in cursor]


def _record(path: Path, table: Table[R], row: tuple[Any, ...]) -> R:
    """One row as its record; a value of the wrong kind (or one the record refuses) names the file and the row."""
    try:
        return table.record(
            **{column.name: column.value(stored) for column, stored in zip(table.columns, row[1:], strict=True)}
        )
    except ValueError as error:
        raise InputError(path, f"row {row[0]} of table {table.name} is damaged ({error}); {LEFT_AS_IT_WAS}") from None


def write(connection: sqlite3.Connection, table: Table[R], *, replace: bool = False, **values: Any) -> R:
    """Insert one row (``replace``: over the row with the same key) and return it as its record.

    ``values`` name every column; ``id``, when the record has one, SQLite numbers unless given.
    """
    fields = [column.name for column in table.columns]
    numbered = "id" in fields and "id" not in values
    if sorted(values) != sorted(name for name in fields if not (numbered and name == "id")):
        raise TypeError(f"a row of {table.name} has the columns {', '.join(fields)}, not {', '.join(values)}")
    verb = "INSERT OR REPLACE" if replace else "INSERT"
    cursor = connection.execute(
        f"{verb} INTO {table.name} ({_names(values)}) VALUES ({', '.join('?' * len(values))})", list(values.values())
    )
    return table.record(**({"id": cursor.lastrowid} if numbered else {}), **values)


def _names(columns: Iterable[str]) -> str:
    """Column names for SQL, quoted (``end`` is a keyword)."""
    return ", ".join(f'"{name}"' for name in columns)


def append_only(table: str, row: str, instead: str) -> str:
    """SQL for the triggers that refuse to change or delete any row of ``table``: its history only grows."""
    return "".join(
        f"CREATE TRIGGER IF NOT EXISTS {table}_never_{done} BEFORE {statement} ON {table}\n"
        f"BEGIN SELECT RAISE(ABORT, '{row} is never {verb}: {instead}'); END;\n"
        for done, statement, verb in (("updated", "UPDATE", "changed"), ("deleted", "DELETE", "deleted"))
    )


@contextmanager
def transaction(connection: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` .. ``COMMIT``: the writer lock for the whole block, nothing of it kept on an error."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


@contextmanager
def connect(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection to the store file in autocommit mode (callers open their own transactions)."""
    if path.exists() and not path.is_file():
        raise InputError(path, "is not a file; the decision store must be an SQLite file")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        connection = sqlite3.connect(path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error as error:
        raise InputError(path, f"cannot open the decision store: {error}") from None
    try:
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute("PRAGMA foreign_keys=ON")
        yield connection
    except sqlite3.DatabaseError as error:
        raise unreadable(path, error) from None
    finally:
        connection.close()


def unreadable(path: Path, error: sqlite3.DatabaseError) -> InputError:
    return InputError(path, f"not a readable decision store ({error}); {LEFT_AS_IT_WAS}")
