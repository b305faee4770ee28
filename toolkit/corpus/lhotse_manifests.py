"""lhotse recordings and supervisions manifests (``.jsonl`` or ``.jsonl.gz``) as recordings to freeze.

lhotse opens the files and builds each line's ``Recording`` or ``SupervisionSegment``; this module checks what it
built, line by line, since lhotse takes a wrong field as it comes. Each supervision is a timed turn of its
recording, with its speaker. A supervision without ``text`` is refused (naming its line) as an empty Kaldi
transcript is, unless every supervision of its recording lacks words and the recording is declared to hold no
speech. A recording must be one audio file (a relative path is relative to the current folder, as lhotse reads
it) that lhotse reads unchanged or only resampled: a command, a URL, audio held in the manifest, one file per
channel or a speed or volume change is refused, since the manifest hashes one file as it is. Supervisions of one
recording must be on one channel. lhotse comes with the ``asr`` extra (it needs torch).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from toolkit.core.errors import InputError
from toolkit.corpus.imported import ImportedRecording, Line, Turn

T = TypeVar("T")
_CHANGES_NOTHING_TIMED = {"Resample"}  # lhotse transforms that leave every time as it is


def read_lhotse(recordings: str | Path, supervisions: str | Path) -> list[ImportedRecording]:
    """The recordings of a lhotse ``RecordingSet`` file with the turns of a ``SupervisionSet`` file."""
    try:
        from lhotse import Recording, SupervisionSegment
    except ImportError:
        raise InputError(
            None, "--lhotse reads its manifests with lhotse, which the 'asr' extra installs (pip install -e '.[asr]')"
        ) from None
    found: dict[str, ImportedRecording] = {}
    for line, recording in _items(Path(recordings), Recording.from_dict, "recording"):
        _check_ids(line, "recording", recording.id)
        if recording.id in found:
            raise line.error(f"recording '{recording.id}' is also on line {found[recording.id].line.number}")
        found[recording.id] = ImportedRecording(recording.id, _audio_file(recording, line), line)
    channels: dict[str, tuple[Any, Line]] = {}
    seen: dict[str, Line] = {}
    for line, segment in _items(Path(supervisions), SupervisionSegment.from_dict, "supervision"):
        _check_ids(line, "supervision", segment.id, segment.recording_id)
        if segment.id in seen:
            raise line.error(f"supervision '{segment.id}' is also on line {seen[segment.id].number}")
        seen[segment.id] = line
        if segment.recording_id not in found:
            raise line.error(
                f"supervision '{segment.id}' is of recording '{segment.recording_id}', which {recordings} does not list"
            )
        channel, first = channels.setdefault(segment.recording_id, (segment.channel, line))
        if segment.channel != channel:
            raise line.error(
                f"supervision '{segment.id}' is on channel {segment.channel} of recording '{segment.recording_id}', "
                f"line {first.number} on channel {channel}; a reference is one channel"
            )
        found[segment.recording_id].turns.append(_turn(segment, line))
    return list(found.values())


def _items(path: Path, build: Callable[[dict[str, Any]], T], kind: str) -> Iterator[tuple[Line, T]]:
    """Each line of a lhotse JSONL manifest (gzipped or not), opened and built by lhotse, with its line."""
    from lhotse.serialization import decode_json_line, open_best

    if not path.is_file():
        raise InputError(path, "file not found")
    try:
        with open_best(path) as lines:
            for number, text in enumerate(lines, 1):
                if not text.strip():
                    continue
                line = Line(path, number)
                try:
                    data = decode_json_line(text)
                    item = build(dict(data))
                except (ValueError, TypeError, KeyError, AttributeError) as error:
                    raise line.error(f"not a lhotse {kind}: {error}"[:300]) from None
                yield line, item
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise InputError(path, f"cannot read the manifest ({error})") from None


def _check_ids(line: Line, kind: str, *ids: Any) -> None:
    """Ids are strings (lhotse keeps whatever JSON value it was given)."""
    for value in ids:
        if not isinstance(value, str):
            raise line.error(f"{kind} ids must be strings, not {value!r}")


def _audio_file(recording: Any, line: Line) -> Path:
    """The one audio file a lhotse recording reads, unchanged in time; anything else is refused."""
    sources = recording.sources
    if len(sources) != 1:
        raise line.error(
            f"recording '{recording.id}' has {len(sources)} audio sources; the manifest freezes one file per recording"
        )
    source = sources[0]
    if source.type != "file":
        raise line.error(
            f"recording '{recording.id}' is a '{source.type}' source, not a file; the manifest hashes audio files: "
            "write the audio to a file and name that file"
        )
    changes = [type(t).__name__ for t in recording.transforms or () if type(t).__name__ not in _CHANGES_NOTHING_TIMED]
    if changes:
        raise line.error(f"recording '{recording.id}' is read through {', '.join(changes)}; freeze the original file")
    return Path(source.source)


def _turn(segment: Any, line: Line) -> Turn:
    """A supervision as a turn, its start and duration checked (lhotse builds it from any JSON value)."""
    start, duration = segment.start, segment.duration
    for name, value in (("start", start), ("duration", duration)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise line.error(f"supervision '{segment.id}': {name} must be a number of seconds, not {value!r}")
    if start < 0 or duration <= 0:
        raise line.error(f"supervision '{segment.id}' starts before 0 or lasts no time ({start:g} s, {duration:g} s)")
    for name, value in (("text", segment.text), ("speaker", segment.speaker)):
        if value is not None and not isinstance(value, str):
            raise line.error(f"supervision '{segment.id}': {name} must be a string, not {value!r}")
    text = " ".join((segment.text or "").split())
    return Turn(float(start), float(start) + float(duration), text, segment.speaker or "", line)
