"""Freeze a corpus laid out another way (a Kaldi data folder, lhotse manifests, an audiofolder).

A reader turns its layout into :class:`ImportedRecording` records, each part naming the file and line it came
from; this module checks them against the audio, writes one reference per recording into ``refs/`` beside the
manifest (``ID.stm`` for timed segments, ``ID.txt`` for a whole-recording transcript) and freezes them as
``freeze`` freezes an ``audio/`` + ``refs/`` folder pair: the same content gives the same hashes. Nothing is
left written on any error.
"""

from __future__ import annotations

import filecmp
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.audio.io import AudioInfo, Channel, probe_audio
from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_text, make_new_directory
from toolkit.core.transcripts import Reference, Utterance
from toolkit.corpus.freeze import Recordings, freeze_recordings
from toolkit.corpus.manifest import Manifest
from toolkit.formats import REFERENCE_SUFFIXES, write_stm
from toolkit.formats.ids import recording_id_problem
from toolkit.formats.textgrid import DURATION_TOLERANCE
from toolkit.formats.words import TIME_EPS

REFS_FOLDER = "refs"  # beside the manifest, as in the audio/ + refs/ layout


@dataclass(frozen=True)
class Line:
    """A line of a source file: what it declared is refused by naming it."""

    path: Path
    number: int

    def error(self, problem: str) -> InputError:
        """``path: line N: problem``."""
        return InputError(self.path, f"line {self.number}: {problem}")


@dataclass(frozen=True)
class Turn:
    """One transcribed stretch of a recording; ``end`` None runs to the recording's end (Kaldi's ``-1``).
    ``line`` declared its times, ``words_line`` its words when another file holds them (Kaldi's ``text``)."""

    start: float
    end: float | None
    text: str
    speaker: str
    line: Line
    words_line: Line | None = None

    @property
    def text_line(self) -> Line:
        """Where the turn's words were written: an empty transcript is refused there."""
        return self.words_line or self.line


@dataclass
class ImportedRecording:
    """One recording as a source declares it: its audio file, its turns, and whether their times are marked.

    An untimed recording (a transcript for the whole file) has one turn from 0 to its end. An id no manifest
    may hold is refused where it is declared.
    """

    id: str
    audio: Path
    line: Line
    turns: list[Turn] = field(default_factory=list)
    timed: bool = True

    def __post_init__(self) -> None:
        problem = recording_id_problem(self.id)
        if problem is not None:
            raise self.line.error(problem)


def freeze_imported(
    recordings: Iterable[ImportedRecording],
    source: Path,
    out: str | Path,
    splits_csv: str | Path | None = None,
    split: str | None = None,
    channel: Channel = None,
    allow_mixed_sample_rates: bool = False,
    no_speech: Iterable[str] = (),
) -> Manifest:
    """Check ``recordings`` against their audio, write their references into ``refs/`` beside ``out`` and freeze
    them (options as :func:`toolkit.corpus.freeze.freeze`); on any error nothing is left written."""
    out = Path(out)
    new_folder = not out.parent.exists()
    ordered = sorted(recordings, key=lambda r: r.id)
    if not ordered:
        raise InputError(source, "lists no recordings")
    decoded = {recording.id: _checked_audio(recording) for recording in ordered}
    for recording in ordered:
        _check_turns(recording, decoded[recording.id].duration)
        _check_words(recording)
    refs = out.parent / REFS_FOLDER
    created = False
    try:
        created = _publish(ordered, {rid: info.duration for rid, info in decoded.items()}, refs)
        return freeze_recordings(
            Recordings(
                source,
                {r.id: r.audio for r in ordered},
                {r.id: {REFERENCE_SUFFIXES[_suffix(r)]: refs / f"{r.id}{_suffix(r)}"} for r in ordered},
                speakers={r.id: speaker for r in ordered if (speaker := _one_speaker(r))},
                declared={r.id: _declared(r) for r in ordered},
                decoded=decoded,
            ),
            out,
            splits_csv,
            split,
            channel,
            allow_mixed_sample_rates,
            no_speech,
        )
    except BaseException:
        if created:
            shutil.rmtree(refs, ignore_errors=True)
        if new_folder:
            shutil.rmtree(out.parent, ignore_errors=True)
        raise


def _checked_audio(recording: ImportedRecording) -> AudioInfo:
    """The recording's audio decoded in full (the freeze records these very facts)."""
    if not recording.audio.is_file():
        raise recording.line.error(f"recording '{recording.id}': audio file {recording.audio} not found")
    return probe_audio(recording.audio, decode=True)


def _check_turns(recording: ImportedRecording, duration: float) -> None:
    """Every timed turn inside the recording, and no speaker's turns overlapping (an STM reference allows neither)."""
    if not recording.timed:
        return
    last: dict[str, Turn] = {}
    for turn in sorted(recording.turns, key=lambda t: t.start):
        end = _end(turn, duration)
        if end > duration + DURATION_TOLERANCE:
            raise turn.line.error(
                f"segment {turn.start:g}-{end:g} s ends after recording '{recording.id}' does ({duration:g} s)"
            )
        if end <= turn.start:
            raise turn.line.error(f"segment {turn.start:g}-{end:g} s ends at or before its start")
        before = last.get(turn.speaker)
        if turn.text and before is not None and turn.start < _end(before, duration) - TIME_EPS:
            raise turn.line.error(
                f"segment {turn.start:g}-{end:g} s overlaps speaker {turn.speaker or 'unknown'}'s segment "
                f"on {before.line.path.name} line {before.line.number}"
            )
        if turn.text:
            last[turn.speaker] = turn


def _check_words(recording: ImportedRecording) -> None:
    """Refuse a turn without words beside turns with words: it would vanish from the reference unseen. A recording
    whose turns all lack words is refused by the freeze unless it is declared to hold no speech."""
    words = _words(recording)
    empty = next((turn for turn in recording.turns if not turn.text), None)
    if words and empty is not None:
        raise empty.text_line.error(
            f"a turn of recording '{recording.id}' has no words (an empty or missing transcript) while others "
            "have some; give it its words or remove it"
        )


def _declared(recording: ImportedRecording) -> tuple[Path, int]:
    """Where a reference without words is refused: its first (empty) transcript, else the recording's line."""
    line = recording.turns[0].text_line if recording.turns else recording.line
    return line.path, line.number


def _end(turn: Turn, duration: float) -> float:
    return duration if turn.end is None else turn.end


def _words(recording: ImportedRecording) -> list[Turn]:
    """The turns that hold words."""
    return [turn for turn in recording.turns if turn.text]


def _suffix(recording: ImportedRecording) -> str:
    """``.stm`` for timed turns with words, else ``.txt`` (a whole-recording transcript, or none: no speech)."""
    return ".stm" if recording.timed and _words(recording) else ".txt"


def _one_speaker(recording: ImportedRecording) -> str:
    """The recording's speaker when every turn names the same one (it becomes the manifest's speaker), else ''."""
    speakers = {turn.speaker for turn in recording.turns}
    return next(iter(speakers)) if len(speakers) == 1 else ""


def _write_reference(recording: ImportedRecording, duration: float, folder: Path) -> None:
    """``ID.stm`` (the turns with their times and speakers) or ``ID.txt`` (the words, one line) in ``folder``."""
    path = folder / f"{recording.id}{_suffix(recording)}"
    if path.suffix == ".stm":
        utterances = [Utterance(t.start, _end(t, duration), t.text, t.speaker) for t in _words(recording)]
        write_stm([Reference(recording.id, utterances)], path)
    else:
        atomic_write_text(path, " ".join(turn.text for turn in recording.turns).strip() + "\n")


def _publish(recordings: list[ImportedRecording], durations: dict[str, float], refs: Path) -> bool:
    """Write every reference into a new folder beside ``refs`` and rename it to ``refs``: True when it was created,
    False when ``refs`` already held exactly these files (a repeated freeze); any other ``refs`` is refused."""
    staging = make_new_directory(refs.parent, f".{refs.name}.")
    try:
        for recording in recordings:
            _write_reference(recording, durations[recording.id], staging)
        if refs.exists():
            _check_same(staging, refs)
            return False
        os.rename(staging, refs)
        return True
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _check_same(written: Path, refs: Path) -> None:
    """Refuse an existing ``refs`` folder unless it holds exactly the files just written, byte for byte."""
    names = sorted(path.name for path in written.iterdir())
    if not refs.is_dir() or sorted(path.name for path in refs.iterdir()) != names:
        raise InputError(
            refs,
            "already exists and holds other files than this corpus's references; "
            "references are never overwritten (remove it or freeze into another folder)",
        )
    _, differ, errors = filecmp.cmpfiles(written, refs, names, shallow=False)
    if differ or errors:
        raise InputError(
            refs / (differ + errors)[0],
            "already exists and differs from this corpus's reference; references are never overwritten "
            "(remove the folder or freeze into another folder)",
        )
