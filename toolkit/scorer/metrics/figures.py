"""One definition of a metric record's figures: its JSON keys, its table columns, and how records add.

A record lists its figures once, in ``FIGURES``; its JSON and its table columns are both read
from that list, so a recording's JSON, its row, the pooled (corpus) row and the CSV columns cannot
drift apart. Pooling is ``+`` on the records (micro-averaging, as meeteval's ``ErrorRate``): every
field adds (counts sum, instance tuples concatenate) except settings, which must agree; rates are
properties recomputed from the sums, never averaged.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, ClassVar


@dataclass(frozen=True)
class Figure:
    """One figure of a record.

    ``key`` names it in the JSON; ``column`` in the table (True: the key; None: JSON only);
    ``attr`` is the attribute holding it (default: the key), at full precision for computing;
    ``digits`` rounds the reported value (JSON and table alike); ``pooled=False`` keeps it out of pooled rows (a
    per-recording slope or flag that does not add up), ``recording=False`` out of per-recording
    rows (a count of pooled recordings).
    """

    key: str
    column: str | bool | None = True
    attr: str | None = None
    digits: int | None = None
    pooled: bool = True
    recording: bool = True

    def value(self, record: Any) -> Any:
        """The reported value: the attribute, rounded to ``digits`` if given."""
        value = getattr(record, self.attr or self.key)
        return value if self.digits is None or value is None else round(float(value), self.digits)

    @property
    def column_name(self) -> str | None:
        return self.key if self.column is True else self.column or None


def _must_agree(a: Any, b: Any) -> Any:
    if a != b:
        raise ValueError(f"cannot add results made with different settings ({a!r} and {b!r})")
    return a


def _same_or_unset(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else _must_agree(a, b)


# Field metadata: a setting of the measurement both records must share (None = not yet set, as in a
# zero record), kept rather than summed.
SETTING = {"add": _same_or_unset}


class Figures:
    """Mixin for frozen metric records: JSON and columns from ``FIGURES``, and ``+`` field by field."""

    FIGURES: ClassVar[tuple[Figure, ...]] = ()

    def to_json(self) -> dict[str, Any]:
        return {f.key: f.value(self) for f in self.FIGURES} | self.json_extras()

    def json_extras(self) -> dict[str, Any]:
        """JSON-only entries that are no figures (instance lists, per-third breakdowns)."""
        return {}

    def columns(self, prefix: str = "", pooled: bool = False) -> dict[str, Any]:
        """The record's table columns (``pooled``: a corpus row, without per-recording-only figures)."""
        return {
            prefix + f.column_name: f.value(self)
            for f in self.FIGURES
            if f.column_name is not None and (f.pooled if pooled else f.recording)
        }

    def __add__(self, other: Any) -> Any:
        if type(other) is not type(self):
            return NotImplemented
        add: Callable[[Any, Any], Any]
        values = {}
        for f in fields(self):  # type: ignore[arg-type]
            add = f.metadata.get("add", operator.add)
            values[f.name] = add(getattr(self, f.name), getattr(other, f.name))
        return type(self)(**values)
