"""Decode annotation text files strictly: UTF-8 (BOM optional) or UTF-16 with a BOM, else refuse.

Guessing an encoding silently turns accented pt-BR words into mojibake, which the scorer
would then count as errors, so an undecodable file is an input error naming the file.
"""

from __future__ import annotations

import codecs
import math
from pathlib import Path

from toolkit.core.errors import InputError


def read_text(path: str | Path, allow_empty: bool = True) -> str:
    """The text of ``path``; refuses a missing file, an encoding other than UTF-8 / UTF-16 with BOM,
    and, unless ``allow_empty``, a file of 0 bytes (a reference that was never written)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    except OSError as error:
        raise InputError(path, f"cannot read the file ({error.strerror})") from None
    if not data and not allow_empty:
        raise InputError(path, "empty file (0 bytes)")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    else:
        encoding = "utf-8-sig"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        raise InputError(
            path,
            f"unknown text encoding: byte {error.start} is not valid {error.encoding} "
            "(save the file as UTF-8, or UTF-16 with a byte-order mark)",
        ) from None
    if "\x00" in text:
        raise InputError(
            path,
            "unknown text encoding: the text contains NUL characters "
            "(UTF-16 without a byte-order mark?); save the file as UTF-8",
        )
    return text


def parse_number(path: str | Path, line: int, text: str, what: str) -> float:
    """A finite number from a text field, or an InputError naming the file, line and field."""
    try:
        value = float(text)
    except ValueError:
        raise InputError(path, f"line {line}: {what} '{text}' is not a number") from None
    if not math.isfinite(value):
        raise InputError(path, f"line {line}: {what} '{text}' is not a finite number")
    return value
