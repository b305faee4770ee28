"""sclite STM references: ``recording channel speaker start end [<label>] text``, ``;;`` comments.

Segments whose text is ``IGNORE_TIME_SEGMENT_IN_SCORING`` become unresolved intervals (as in
sclite, they are excluded from scoring); ``inter_segment_gap`` lines are gaps. The speaker
``unknown`` stands for an unnamed speaker. Segments must be in time order per recording
and channel; one speaker's segments may not overlap.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable

from toolkit.errors import InputError
from toolkit.formats.text import parse_number, read_text
from toolkit.records import Interval, Reference, Utterance
from toolkit.store import atomic_write_text

IGNORE = "IGNORE_TIME_SEGMENT_IN_SCORING"
GAP_SPEAKER = "inter_segment_gap"
UNKNOWN_SPEAKER = "unknown"
CHANNEL = "1"
_EPS = 1e-9


def read_stm(path: str | Path) -> dict[str, Reference]:
    """Every recording in an STM file, keyed by recording id, validated line by line."""
    references: dict[str, Reference] = {}
    last_start: dict[tuple[str, str], tuple[int, float]] = {}
    last_by_speaker: dict[tuple[str, str], tuple[int, float]] = {}
    for number, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip() or line.lstrip().startswith(";;"):
            continue
        fields = line.split()
        if len(fields) < 5:
            raise InputError(path, f"line {number}: expected 'recording channel speaker start end [<label>] "
                                   f"text', got {len(fields)} fields")
        recording, channel, speaker = fields[:3]
        start, end = parse_number(path, number, fields[3], "start time"), parse_number(path, number, fields[4], "end time")
        rest = fields[5:]
        if rest and rest[0].startswith("<"):
            rest = _drop_label(path, number, rest)
        text = " ".join(rest)
        if start < 0 or end < start:
            raise InputError(path, f"line {number}: segment {start:g}-{end:g} s "
                                   f"{'starts before 0' if start < 0 else 'ends before it starts'}")
        key = (recording, channel)
        if key in last_start and start < last_start[key][1] - _EPS:
            raise InputError(path, f"line {number}: segment at {start:g} s is out of order "
                                   f"(line {last_start[key][0]} starts at {last_start[key][1]:g} s)")
        last_start[key] = (number, start)
        reference = references.setdefault(recording, Reference(recording, []))
        if speaker == GAP_SPEAKER:
            continue
        if text == IGNORE:
            reference.unresolved.append(Interval(start, end, IGNORE))
            continue
        speaker_key = (recording, speaker)
        if speaker_key in last_by_speaker and start < last_by_speaker[speaker_key][1] - _EPS:
            raise InputError(path, f"line {number}: segment {start:g}-{end:g} s overlaps speaker "
                                   f"{speaker}'s segment on line {last_by_speaker[speaker_key][0]}")
        last_by_speaker[speaker_key] = (number, end)
        if text:
            reference.utterances.append(Utterance(start, end, text, "" if speaker == UNKNOWN_SPEAKER else speaker))
    return references


def read_stm_reference(path: str | Path, recording_id: str | None = None) -> Reference:
    """The one recording ``recording_id`` (default: the file stem, or the file's only recording)."""
    references = read_stm(path)
    wanted = recording_id or Path(path).stem
    if wanted in references:
        return references[wanted]
    if recording_id is None and len(references) == 1:
        return next(iter(references.values()))
    found = ", ".join(sorted(references)) or "none"
    raise InputError(path, f"no segments for recording '{wanted}' (recordings in the file: {found})")


def write_stm(references: Iterable[Reference], path: str | Path) -> Path:
    """Write references as one STM file (sorted by recording and start time), atomically."""
    lines = [";; recording channel speaker start end text"]
    for reference in sorted(references, key=lambda r: r.recording_id):
        rows = [(u.start, u.end, u.speaker or UNKNOWN_SPEAKER, u.text) for u in reference.utterances]
        rows += [(i.start, i.end, UNKNOWN_SPEAKER, IGNORE) for i in reference.unresolved]
        for start, end, speaker, text in sorted(rows):
            if math.isinf(end):
                raise InputError(path, f"recording {reference.recording_id}: an untimed utterance "
                                       "cannot be written to STM")
            lines.append(f"{reference.recording_id} {CHANNEL} {speaker.replace(' ', '_')} "
                         f"{start:.3f} {end:.3f} {text}".rstrip())
    return atomic_write_text(path, "\n".join(lines) + "\n")


def _drop_label(path: str | Path, line: int, fields: list[str]) -> list[str]:
    """Remove a ``<o,f0,male>`` label (it may contain no spaces in sclite, but be lenient)."""
    for index, field in enumerate(fields):
        if field.endswith(">"):
            return fields[index + 1:]
    raise InputError(path, f"line {line}: label '<...' is not closed with '>'")
