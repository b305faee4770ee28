"""A Kaldi data folder as recordings to freeze: ``wav.scp`` and ``text``, with optional ``segments`` and ``utt2spk``.

Without ``segments`` each ``wav.scp`` recording is one utterance and ``text`` holds its whole transcript; with
it, each segment is a timed turn of its recording (an end of ``-1`` runs to the recording's end) and ``text``
is keyed by segment. ``utt2spk`` gives each utterance's speaker. Every line is checked, and a refusal names
the file and line. ``wav.scp`` entries must name audio files (relative paths are relative to the current folder,
as Kaldi's scripts read them): a command (``sox ... |``) or an archive offset is refused, since the manifest
hashes a file. Other files of the folder (``spk2utt``, ``reco2dur``, features) are not read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toolkit.core.errors import InputError
from toolkit.core.text import parse_number, read_text
from toolkit.corpus.imported import ImportedRecording, Line, Turn

_LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # what str.splitlines also splits at, besides "\n"


@dataclass(frozen=True)
class Entry:
    """One ``key value`` line of a Kaldi table file."""

    key: str
    value: str
    line: Line


def read_kaldi_folder(folder: str | Path) -> list[ImportedRecording]:
    """The recordings of Kaldi data folder ``folder``, every file cross-checked line by line."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(folder, "not a folder")
    waves = _table(folder / "wav.scp", "<recording> <audio file>")
    texts = _table(folder / "text", "<utterance> <transcript>", empty_values=True)
    speakers = _table(folder / "utt2spk", "<utterance> <speaker>", one_word=True, optional=True)
    recordings = {key: _recording(entry) for key, entry in waves.items()}
    if (folder / "segments").exists():
        utterances = _segments(folder / "segments", waves)
    else:
        utterances = {key: (key, Turn(0.0, None, "", "", entry.line)) for key, entry in waves.items()}
        for recording in recordings.values():
            recording.timed = False
    _check_known(texts, "transcript", utterances, folder)
    _check_known(speakers, "speaker", utterances, folder)
    for key, (rid, turn) in utterances.items():
        if key not in texts:
            raise turn.line.error(f"utterance '{key}' has no transcript in {folder / 'text'}")
        if speakers and key not in speakers:
            raise turn.line.error(f"utterance '{key}' has no speaker in {folder / 'utt2spk'}")
        speaker = speakers[key].value if speakers else ""
        text = " ".join(texts[key].value.split())
        recordings[rid].turns.append(Turn(turn.start, turn.end, text, speaker, turn.line, texts[key].line))
    return list(recordings.values())


def _recording(entry: Entry) -> ImportedRecording:
    """A ``wav.scp`` entry as a recording without turns; a command or an archive offset is refused."""
    if entry.value.endswith("|"):
        raise entry.line.error(
            f"recording '{entry.key}' is read through a command ('{entry.value}'); the manifest hashes audio "
            "files: write the audio to a file and name that file"
        )
    return ImportedRecording(entry.key, Path(entry.value), entry.line)


def _segments(path: Path, waves: dict[str, Entry]) -> dict[str, tuple[str, Turn]]:
    """``segments`` lines (``<utterance> <recording> <start> <end>``) as turns by utterance, with their recording."""
    utterances: dict[str, tuple[str, Turn]] = {}
    for number, text in _lines(path):
        line = Line(path, number)
        fields = text.split()
        if len(fields) != 4:
            raise line.error(f"expected '<utterance> <recording> <start> <end>', got {len(fields)} fields")
        key, rid = fields[0], fields[1]
        start = parse_number(path, number, fields[2], "start time")
        end = parse_number(path, number, fields[3], "end time")
        if key in utterances:
            raise line.error(f"utterance '{key}' is also on line {utterances[key][1].line.number}")
        if rid not in waves:
            raise line.error(f"segment '{key}' is of recording '{rid}', which {path.parent / 'wav.scp'} does not list")
        if start < 0:
            raise line.error(f"segment '{key}' starts before 0 ({start:g} s)")
        utterances[key] = (rid, Turn(start, None if end == -1 else end, "", "", line))
    return utterances


def _check_known(table: dict[str, Entry], what: str, utterances: dict[str, tuple[str, Turn]], folder: Path) -> None:
    """Refuse a line for an utterance that ``segments`` (or, without it, ``wav.scp``) does not list."""
    listing = folder / ("segments" if (folder / "segments").exists() else "wav.scp")
    for key, entry in table.items():
        if key not in utterances:
            raise entry.line.error(f"{what} for utterance '{key}', which {listing} does not list")


def _table(
    path: Path, form: str, empty_values: bool = False, one_word: bool = False, optional: bool = False
) -> dict[str, Entry]:
    """A ``key value`` file by key; a duplicate key, a missing value (unless ``empty_values``) or, with
    ``one_word``, a value of several words is refused naming the line. An absent ``optional`` file is empty."""
    if optional and not path.exists():
        return {}
    entries: dict[str, Entry] = {}
    for number, text in _lines(path):
        line = Line(path, number)
        fields = text.split()
        if (len(fields) < 2 and not empty_values) or (one_word and len(fields) != 2):
            raise line.error(f"expected '{form}', got {len(fields)} field{'s' if len(fields) != 1 else ''}")
        if fields[0] in entries:
            raise line.error(f"'{fields[0]}' is also on line {entries[fields[0]].line.number}")
        parts = text.split(maxsplit=1)  # the value keeps its inner spaces (a path may hold some)
        entries[fields[0]] = Entry(fields[0], parts[1].strip() if len(parts) == 2 else "", line)
    return entries


def _lines(path: Path) -> list[tuple[int, str]]:
    """Each non-blank line, stripped, with its number (from 1). Lines end at a newline, as Kaldi reads them
    (a CR before it is dropped); any other line break inside a line (a bare CR) is refused, since other
    readers would split the line there."""
    found = []
    for number, line in enumerate(read_text(path, allow_empty=False).split("\n"), 1):
        line = line.removesuffix("\r")
        breaks = [c for c in line if c in _LINE_BREAKS]
        if breaks:
            raise Line(path, number).error(
                f"holds a line break (U+{ord(breaks[0]):04X}) inside the line, not at its end; Kaldi reads lines "
                "split at newlines only: remove it or end the line with a newline"
            )
        if line.strip():
            found.append((number, line.strip()))
    return found
