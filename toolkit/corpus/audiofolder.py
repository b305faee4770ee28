"""A Hugging Face audiofolder as recordings to freeze: ``metadata.csv`` with columns ``file_name`` and
``transcription``, one row per audio file.

``file_name`` is relative to the folder (it may name a subfolder; an absolute path or one climbing out with
``..`` is refused); the recording id is the file's stem, and
the transcription is the whole recording's reference. Other columns are not read, and audio files that no row
names are not frozen.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path, PurePath
from typing import Any

from toolkit.core.errors import InputError
from toolkit.core.text import read_text
from toolkit.corpus.imported import ImportedRecording, Line, Turn

METADATA = "metadata.csv"
COLUMNS = ("file_name", "transcription")


def read_audiofolder(folder: str | Path) -> list[ImportedRecording]:
    """The recordings ``folder/metadata.csv`` lists, each row checked (a refusal names the line)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(folder, "not a folder")
    path = folder / METADATA
    reader = csv.DictReader(io.StringIO(read_text(path, allow_empty=False)))
    if not set(COLUMNS) <= set(reader.fieldnames or ()):
        raise InputError(
            path, f"line 1: columns must include file_name and transcription; found {','.join(reader.fieldnames or [])}"
        )
    recordings: dict[str, ImportedRecording] = {}
    for row in _rows(reader, path):
        line = Line(path, reader.line_num)
        if None in row or None in row.values():
            raise line.error(f"expected {len(reader.fieldnames or ())} columns, as the header names")
        name = row["file_name"].strip()
        if not name:
            raise line.error("empty file_name")
        if PurePath(name).is_absolute() or ".." in PurePath(name).parts:
            raise line.error(f"file_name '{name}' is not inside the folder; name the file relative to {folder}")
        audio = folder / name
        if audio.stem in recordings:
            raise line.error(f"recording '{audio.stem}' is also on line {recordings[audio.stem].line.number}")
        text = " ".join(row["transcription"].split())
        recordings[audio.stem] = ImportedRecording(audio.stem, audio, line, [Turn(0.0, None, text, "", line)], False)
    return list(recordings.values())


def _rows(reader: csv.DictReader[str], path: Path) -> Iterator[dict[str | Any, str | Any]]:
    """The reader's rows; a line the csv module cannot read is refused naming it (a bare CR in an unquoted field)."""
    try:
        yield from reader
    except csv.Error as error:
        problem = (
            "a carriage return (CR) inside a field that is not quoted; quote the field or remove the CR"
            if "new-line character" in str(error)
            else f"not CSV ({error})"
        )
        raise Line(path, reader.reader.line_num).error(problem) from None  # DictReader.line_num lags on errors
