"""sclite STM references: ``recording channel speaker start end [<label>] text``, ``;;`` comments.

Segments whose text is ``IGNORE_TIME_SEGMENT_IN_SCORING`` become unresolved intervals (as in
sclite, they are excluded from scoring); ``inter_segment_gap`` lines are gaps. The speaker
``unknown`` stands for an unnamed speaker. Segments must be in time order per recording
and channel; one speaker's segments may not overlap. Channels of one recording are never merged.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_text
from toolkit.core.text import parse_number, read_text
from toolkit.core.transcripts import Interval, Reference, Utterance
from toolkit.formats.ids import recording_id_problem
from toolkit.formats.words import TIME_EPS, LineOrder

IGNORE = "IGNORE_TIME_SEGMENT_IN_SCORING"
GAP_SPEAKER = "inter_segment_gap"
UNKNOWN_SPEAKER = "unknown"
CHANNEL = "1"
EMPTY_LABEL = "<>"  # sclite's label field, empty


def read_stm(path: str | Path) -> dict[tuple[str, str], Reference]:
    """Every recording and channel in an STM file, keyed by ``(recording id, channel)``, validated line by line."""
    references: dict[tuple[str, str], Reference] = {}
    order = LineOrder(path)
    last_by_speaker: dict[tuple[str, str, str], tuple[int, float]] = {}
    for number, line in enumerate(read_text(path, allow_empty=False).splitlines(), 1):
        if not line.strip() or line.lstrip().startswith(";;"):
            continue
        fields = line.split()
        if len(fields) < 5:
            raise InputError(
                path,
                f"line {number}: expected 'recording channel speaker start end [<label>] "
                f"text', got {len(fields)} fields",
            )
        recording, channel, speaker = fields[:3]
        start, end = (
            parse_number(path, number, fields[3], "start time"),
            parse_number(path, number, fields[4], "end time"),
        )
        rest = fields[5:]
        if rest and rest[0].startswith("<"):
            rest = _drop_label(path, number, rest)
        text = " ".join(rest)
        if start < 0 or end < start:
            raise InputError(
                path,
                f"line {number}: segment {start:g}-{end:g} s "
                f"{'starts before 0' if start < 0 else 'ends before it starts'}",
            )
        key = (recording, channel)
        order.check(key, number, start, f"segment at {start:g} s")
        reference = references.setdefault(key, Reference(recording, []))
        if speaker == GAP_SPEAKER:
            continue
        if text == IGNORE:
            reference.unresolved.append(Interval(start, end, IGNORE))
            continue
        speaker_key = (recording, channel, speaker)
        if speaker_key in last_by_speaker and start < last_by_speaker[speaker_key][1] - TIME_EPS:
            raise InputError(
                path,
                f"line {number}: segment {start:g}-{end:g} s overlaps speaker "
                f"{speaker}'s segment on line {last_by_speaker[speaker_key][0]}",
            )
        last_by_speaker[speaker_key] = (number, end)
        if text:
            reference.utterances.append(Utterance(start, end, text, "" if speaker == UNKNOWN_SPEAKER else speaker))
    return references


def stm_channels(references: dict[tuple[str, str], Reference], recording_id: str) -> list[str]:
    """The channels ``recording_id`` has segments on, sorted."""
    return sorted(channel for recording, channel in references if recording == recording_id)


def select_stm(
    path: str | Path, references: dict[tuple[str, str], Reference], recording_id: str, channel: str | None = None
) -> Reference:
    """One recording's reference on one channel; several channels without a choice are refused."""
    channels = stm_channels(references, recording_id)
    if not channels:
        found = ", ".join(sorted({recording for recording, _ in references})) or "none"
        raise InputError(path, f"no segments for recording '{recording_id}' (recordings in the file: {found})")
    if channel is None and len(channels) > 1:
        raise InputError(
            path,
            f"recording '{recording_id}' has segments on channels {', '.join(channels)}; "
            "a reference is one channel; keep one",
        )
    chosen = channels[0] if channel is None else channel
    if chosen not in channels:
        raise InputError(
            path, f"recording '{recording_id}' has no segments on channel '{channel}' (channels: {', '.join(channels)})"
        )
    return references[(recording_id, chosen)]


def read_stm_reference(path: str | Path, recording_id: str | None = None, channel: str | None = None) -> Reference:
    """The one recording ``recording_id`` (default: the file stem, or the file's only recording)."""
    references = read_stm(path)
    wanted = recording_id or Path(path).stem
    recordings = {recording for recording, _ in references}
    if recording_id is None and wanted not in recordings and len(recordings) == 1:
        wanted = next(iter(recordings))
    return select_stm(path, references, wanted, channel)


def write_stm(references: Iterable[Reference], path: str | Path) -> Path:
    """Write references as one STM file (sorted by recording and start time), atomically."""
    lines = [";; recording channel speaker start end text"]
    for reference in sorted(references, key=lambda r: r.recording_id):
        problem = recording_id_problem(reference.recording_id)
        if problem is not None:
            raise InputError(path, f"cannot write STM: {problem}")
        rows = [(u.start, u.end, u.speaker or UNKNOWN_SPEAKER, u.text) for u in reference.utterances]
        rows += [(i.start, i.end, UNKNOWN_SPEAKER, IGNORE) for i in reference.unresolved]
        for start, end, speaker, text in sorted(rows):
            if math.isinf(end):
                raise InputError(
                    path, f"recording {reference.recording_id}: an untimed utterance cannot be written to STM"
                )
            lines.append(
                f"{reference.recording_id} {CHANNEL} {speaker.replace(' ', '_')} {start:.3f} {end:.3f} "
                f"{_labelled(text)}".rstrip()
            )
    return atomic_write_text(path, "\n".join(lines) + "\n")


def _labelled(text: str) -> str:
    """Text that starts with ``<`` (Kaldi's ``<unk>``) behind an empty label ``<>``, which sclite and read_stm accept,
    since either would take a first ``<...>`` for the label."""
    return f"{EMPTY_LABEL} {text}" if text.startswith("<") else text


def _drop_label(path: str | Path, line: int, fields: list[str]) -> list[str]:
    """Remove a ``<o,f0,male>`` label (it may contain no spaces in sclite, but be lenient)."""
    for index, field in enumerate(fields):
        if field.endswith(">"):
            return fields[index + 1 :]
    raise InputError(path, f"line {line}: label '<...' is not closed with '>'")
