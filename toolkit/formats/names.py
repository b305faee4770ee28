"""Names lists: one proper name per line (UTF-8), blank lines and ``#`` comments ignored.

The scorer uses them to check that names survive recognition.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from toolkit.core.files import atomic_write_text
from toolkit.core.text import read_text


def read_names(path: str | Path) -> list[str]:
    """The names in ``path``, in file order, without duplicates."""
    names: list[str] = []
    for line in read_text(path).splitlines():
        name = " ".join(line.split())
        if name and not name.startswith("#") and name not in names:
            names.append(name)
    return names


def write_names(names: Iterable[str], path: str | Path) -> Path:
    """Write one name per line, atomically."""
    return atomic_write_text(path, "".join(f"{name}\n" for name in names))
