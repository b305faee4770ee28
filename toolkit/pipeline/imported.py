"""An imported arm: hypotheses made elsewhere, one file per recording, copied into the experiment and hashed.

``EXP/imported/<arm>/import.json`` is the arm's record: where the files came from, who imported them and when,
the manifest they were matched against, and each copied file with its sha256. The record is part of the arm's
configuration, so it is in every result key, run folder name and frozen challenger; a copied file is read only
after it hashes to its record (:func:`verify_files`), so an edit after the import is refused, naming the file.
Times are original-recording seconds, checked against the recording's duration (:func:`imported_words`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.core.errors import InputError
from toolkit.core.files import sha256_file
from toolkit.core.json_records import read_record, record_to_json, write_record
from toolkit.core.text import read_text
from toolkit.core.transcripts import Word
from toolkit.core.wordstream import stream_problems
from toolkit.formats import read_hypothesis
from toolkit.formats.ctm import UNTIMED

RECORD = "import.json"
FOLDER = "imported"  # EXP/imported/<arm>/
SUFFIXES = {".ctm": "ctm", ".json": "json", ".txt": "text"}  # what toolkit.formats.read_hypothesis reads
# A time up to this far past the recording's end is another tool's rounding (a CTM's milliseconds) and is read
# as the end; farther out it is refused. The tolerance TextGrid references are read with.
END_TOLERANCE_S = 0.01


@dataclass(frozen=True)
class ImportedFile:
    """One recording's hypothesis file as copied into the arm's folder, with its sha256 at import."""

    recording: str
    file: str
    sha256: str


@dataclass(frozen=True)
class ImportRecord:
    """``import.json``: the imported arm's files and where, when and by whom they came."""

    arm: str
    source: str  # the folder they were copied from, as given
    imported_by: str
    imported_at: str  # ISO 8601, UTC
    manifest_sha256: str  # the manifest whose recordings the files were matched to
    files: tuple[ImportedFile, ...]

    def to_json(self) -> dict[str, Any]:
        """The record as ``import.json`` holds it (and as the arm's configuration: every key and freeze)."""
        data: dict[str, Any] = record_to_json(self)
        return data

    def file_of(self, recording: str) -> ImportedFile | None:
        """The file imported for ``recording`` (None: none was)."""
        return next((f for f in self.files if f.recording == recording), None)


@dataclass(frozen=True)
class ImportedArm:
    """An imported arm as an experiment holds it: its record and the folder its files lie in (not part of its
    identity: an experiment folder may move)."""

    record: ImportRecord
    folder: Path = field(compare=False)

    def to_json(self) -> dict[str, Any]:
        """The arm's identity: its record, not where the experiment folder lies."""
        return self.record.to_json()

    def path(self, item: ImportedFile) -> Path:
        """Where the copy of ``item`` lies."""
        return self.folder / item.file

    def verify_files(self, recordings: list[str] | None = None) -> None:
        """Every file of ``recordings`` (None: all) exists and hashes to its record; else one InputError naming the
        file and both hashes (or the recording the arm has no file for)."""
        for recording in recordings if recordings is not None else [f.recording for f in self.record.files]:
            item = self.record.file_of(recording)
            if item is None:
                raise InputError(
                    self.folder / RECORD,
                    f"imported arm {self.record.arm!r} has no hypothesis file for recording {recording!r} "
                    f"(import the arm again, under a new name once it was frozen)",
                )
            path = self.path(item)
            if not path.is_file() or path.is_symlink():
                raise InputError(
                    path, f"imported file of arm {self.record.arm!r} is missing (or a link: only its copy counts)"
                )
            found = sha256_file(path)
            if found != item.sha256:
                raise InputError(
                    path,
                    f"imported hypothesis file changed after its import (sha256 {found[:16]}…, recorded "
                    f"{item.sha256[:16]}…): an imported arm cannot be edited; import it again under a new name",
                )

    def words(self, recording: str, duration: float) -> list[Word]:
        """The verified words of ``recording`` in original time (:func:`imported_words`)."""
        self.verify_files([recording])
        item = self.record.file_of(recording)
        assert item is not None  # verify_files refused a recording without one
        return imported_words(self.path(item), recording, duration)


def read_import(folder: Path) -> ImportedArm:
    """The imported arm in ``folder`` (its ``import.json`` checked key by key; file names inside the folder)."""
    path = folder / RECORD
    what = "import record (restore the folder, or take the arm's line out of [arms] and import it again)"
    record = read_record(ImportRecord, path, what)
    for item in record.files:
        name = Path(item.file)
        if name.name != item.file or item.file.startswith(".") or name.suffix.lower() not in SUFFIXES:
            raise InputError(path, f"file {item.file!r} of recording {item.recording!r} is not a hypothesis file name")
    return ImportedArm(record, folder)


def write_import(folder: Path, record: ImportRecord) -> Path:
    """``import.json`` in ``folder``, written atomically."""
    return write_record(folder / RECORD, record)


def imported_words(path: Path, recording: str, duration: float) -> list[Word]:
    """The words of one imported file, read as the toolkit reads hypotheses (toolkit.formats), its times taken as
    seconds of the original recording: a word past the recording's end (beyond ``END_TOLERANCE_S``), or words
    that are no valid stream (toolkit.core.wordstream), is one InputError naming the file and the CTM line (or
    the JSON word)."""
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise InputError(path, f"unknown hypothesis format '{path.suffix}' (expected {', '.join(SUFFIXES)})")
    if kind == "ctm":
        _only_recording(path, recording)
    words = read_hypothesis(path, recording).words
    places = _ctm_lines(path, recording) if kind == "ctm" else [f"word {k}" for k in range(1, len(words) + 1)]
    clamped = []
    for word, place in zip(words, places):
        if word.end is not None and word.end > duration + END_TOLERANCE_S:
            raise InputError(
                path,
                f"{place}: word '{word.text}' ends at {word.end:g} s, past the end of recording {recording!r} "
                f"({duration:g} s); imported times are seconds of the original recording",
            )
        if word.end is not None and word.end > duration:
            word = Word(word.text, min(word.start or 0.0, duration), duration, word.confidence, word.segment_id)
        clamped.append(word)
    problems = stream_problems(clamped, duration, limit=1)
    if problems:
        problem = problems[0]
        raise InputError(path, f"{places[problem.index]}: {problem}")
    return clamped


def _only_recording(path: Path, recording: str) -> None:
    """Refuse a CTM holding another recording's words: one file is one recording's hypothesis."""
    from toolkit.formats.ctm import read_ctm

    others = sorted(set(read_ctm(path)) - {recording})
    if others:
        raise InputError(
            path,
            f"holds words of recording(s) {', '.join(others)[:200]}; an imported file holds the words of the one "
            f"recording its name says ({recording!r})",
        )


def _ctm_lines(path: Path, recording: str) -> list[str]:
    """``line N`` of each of the recording's words in a CTM file, in file order (as toolkit.formats.ctm reads them)."""
    places = []
    for number, line in enumerate(read_text(path).splitlines(), 1):
        if line.startswith(UNTIMED):
            rid, _, text = line[len(UNTIMED) :].partition(" ")
            if rid == recording and text.strip():
                places.append(f"line {number}")
        elif line.strip() and not line.lstrip().startswith(";;"):
            places.append(f"line {number}")
    return places
