"""One error type for bad input: it names the file and the problem in a single line."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from os import PathLike
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class ToolkitError(Exception):
    """A problem the user can fix; the CLI prints it as one line and exits non-zero."""

    def lines(self) -> list[str]:
        """What the CLI prints, one line each."""
        return [str(self)]


class InputError(ToolkitError):
    """Bad input: ``InputError(path, problem)`` renders as ``path: problem``."""

    def __init__(self, path: str | PathLike[str] | None, problem: str) -> None:
        self.path = None if path is None else str(path)
        self.problem = problem
        super().__init__(problem if self.path is None else f"{self.path}: {problem}")


class InputErrors(InputError):
    """Several independent mistakes in one input, found in one pass: one ``path: problem`` line each."""

    def __init__(self, errors: Sequence[InputError]) -> None:
        self.errors = tuple(errors)
        super().__init__(self.errors[0].path, "; ".join(error.problem for error in self.errors))
        self.args = ("\n".join(str(error) for error in self.errors),)

    def lines(self) -> list[str]:
        return [str(error) for error in self.errors]


class Mistakes:
    """The mistakes found while checking one input, so a user fixing it sees every one at once.

    Each independent check runs through :meth:`check`; a check that depends on another's result is
    skipped when that one failed (it could only report a consequence, not a mistake of its own).
    """

    def __init__(self) -> None:
        self.found: list[InputError] = []

    def check(self, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T | None:
        """``function(*args, **kwargs)``, or None when it refused its input (the refusal is kept)."""
        try:
            return function(*args, **kwargs)
        except InputErrors as errors:
            self.found.extend(errors.errors)
        except InputError as error:
            self.found.append(error)
        return None

    def add(self, path: str | PathLike[str] | None, problem: str) -> None:
        """A mistake found directly (not by a check that raises)."""
        self.found.append(InputError(path, problem))

    def raise_found(self) -> None:
        """Raise what was found: a single mistake exactly as it was raised, several as one InputErrors."""
        if len(self.found) == 1:
            raise self.found[0]
        if self.found:
            raise InputErrors(self.found)
