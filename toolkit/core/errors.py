"""One error type for bad input: it names the file and the problem in a single line."""

from __future__ import annotations

from os import PathLike


class ToolkitError(Exception):
    """A problem the user can fix; the CLI prints it as one line and exits non-zero."""


class InputError(ToolkitError):
    """Bad input: ``InputError(path, problem)`` renders as ``path: problem``."""

    def __init__(self, path: str | PathLike[str] | None, problem: str) -> None:
        self.path = None if path is None else str(path)
        self.problem = problem
        super().__init__(problem if self.path is None else f"{self.path}: {problem}")
