"""Typed, range-checked enhancer parameters, so a bad experiment file fails before any audio is processed.

Each enhancer's parameters are a frozen dataclass whose fields declare their type (bool,
int or float) and bounds in field metadata; construction checks them all.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from toolkit.core.devices import DEVICES, NoCuda, resolve
from toolkit.core.errors import InputError

P = TypeVar("P", bound="EnhancerParams")


def choice(default: str, choices: tuple[str, ...]) -> Any:
    """A dataclass field holding one of ``choices``."""
    return dataclasses.field(default=default, metadata={"choices": choices})


def bounded(
    default: Any, *, minimum: float | None = None, maximum: float | None = None, above: float | None = None
) -> Any:
    """A dataclass field with inclusive ``minimum``/``maximum`` or exclusive ``above`` bounds."""
    return dataclasses.field(default=default, metadata={"minimum": minimum, "maximum": maximum, "above": above})


@dataclasses.dataclass(frozen=True)
class EnhancerParams:
    """Parameters shared by every enhancer: the delay search range (seconds either side), and where
    the enhancer runs (``device`` "auto", "cpu" or "cuda", ``device_index``; toolkit.core.devices)."""

    enhancer: ClassVar[str] = "enhancer"
    max_lag_s: float = bounded(0.5, minimum=0.0, maximum=10.0)
    device: str = choice("cpu", DEVICES)
    device_index: int = bounded(0, minimum=0)

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(type(self))  # field types: bool, int, float or str (a choice)
        for field in dataclasses.fields(self):
            value = _checked(self.enhancer, field.name, getattr(self, field.name), hints[field.name], field.metadata)
            object.__setattr__(self, field.name, value)
        self.check()

    def check(self) -> None:
        """Checks that involve several parameters; subclasses add theirs."""

    def fail(self, problem: str) -> InputError:
        return InputError(None, f"{self.enhancer} parameters: {problem}")

    def resolved_device(self, library: str) -> str:
        """``cpu`` or ``cuda:N`` as ``library`` sees this machine; a "cuda" it cannot use is refused in one line."""
        try:
            return resolve(self.device, self.device_index, library)
        except NoCuda as error:
            raise self.fail(str(error)) from None

    def options(self) -> dict[str, Any]:
        """The enhancer's own parameters: without the delay search and the device (the toolkit's)."""
        return {k: v for k, v in self.to_json().items() if k not in ("max_lag_s", "device", "device_index")}

    @classmethod
    def from_mapping(cls: type[P], values: Mapping[str, Any], source: str | None = None) -> P:
        """Build from an experiment file's table; unknown names and bad values name ``source``."""
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise InputError(
                source, f"unknown {cls.enhancer} parameter(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        try:
            return cls(**values)
        except InputError as error:
            raise InputError(source, error.problem) from None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _checked(enhancer: str, name: str, value: Any, kind: Any, limits: Mapping[str, Any]) -> Any:
    """``value`` converted to ``kind`` (bool, int or float) if it is one and within ``limits``."""

    def fail(expected: str) -> InputError:
        return InputError(None, f"{enhancer} parameter {name} must be {expected}, got {value!r}")

    if kind is bool:
        if not isinstance(value, bool):
            raise fail("true or false")
        return value
    if kind is str:
        choices = limits.get("choices") or ()
        if not isinstance(value, str) or (choices and value not in choices):
            raise fail(f"one of {', '.join(map(repr, choices))}" if choices else "a string")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fail("an integer" if kind is int else "a number")
    if kind is int and not isinstance(value, int):
        raise fail("an integer")
    if not math.isfinite(value):
        raise fail("a finite number")
    minimum, maximum, above = limits.get("minimum"), limits.get("maximum"), limits.get("above")
    if (
        (minimum is not None and value < minimum)
        or (maximum is not None and value > maximum)
        or (above is not None and value <= above)
    ):
        raise fail(_range_text(minimum, maximum, above))
    return kind(value)


def _range_text(minimum: float | None, maximum: float | None, above: float | None) -> str:
    low = f"> {above}" if above is not None else (f">= {minimum}" if minimum is not None else "")
    high = f"<= {maximum}" if maximum is not None else ""
    return " and ".join(part for part in (low, high) if part)
