"""CTM hypotheses: ``recording channel start duration word [confidence]``, ``;;`` comments.

CTM cannot time a word that has no time, so such words are written as ``;; untimed WORD``
comment lines in their place (sclite ignores them; this reader restores them), and
nothing is lost or given an invented time. Times are written to the millisecond. Words are
kept per recording and channel: two channels of one recording are never merged.
"""

from __future__ import annotations

from pathlib import Path

from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_text
from toolkit.core.text import parse_number, read_text
from toolkit.core.transcripts import Hypothesis, Word
from toolkit.formats.ids import recording_id_problem
from toolkit.formats.words import LineOrder, checked_word

CHANNEL = "1"
UNTIMED = ";; untimed "
HEADER = ";; recording channel start duration word [confidence]; arm "  # then the arm name, "-" for none

# Words of one recording in file order, each with its channel (None: an untimed word, which has none).
CtmWords = list[tuple[str | None, Word]]


def read_ctm(path: str | Path) -> dict[str, CtmWords]:
    """Words per recording id, refusing malformed lines, negative or out-of-order times."""
    words: dict[str, CtmWords] = {}
    order = LineOrder(path)
    for number, line in enumerate(read_text(path).splitlines(), 1):
        if line.startswith(UNTIMED):
            recording, _, text = line[len(UNTIMED) :].partition(" ")
            if text.strip():
                words.setdefault(recording, []).append((None, Word(text.strip())))
            continue
        if not line.strip() or line.lstrip().startswith(";;"):
            continue
        fields = line.split()
        if len(fields) not in (5, 6):
            raise InputError(
                path,
                f"line {number}: expected 'recording channel start duration word "
                f"[confidence]', got {len(fields)} fields",
            )
        recording, channel, word = fields[0], fields[1], fields[4]
        start = parse_number(path, number, fields[2], "start")
        duration = parse_number(path, number, fields[3], "duration")
        confidence = parse_number(path, number, fields[5], "confidence") if len(fields) == 6 else None
        if start < 0 or duration < 0:
            raise InputError(
                path,
                f"line {number}: negative {'start' if start < 0 else 'duration'} "
                f"({fields[2] if start < 0 else fields[3]})",
            )
        order.check((recording, channel), number, start, f"word '{word}' at {start:g} s")
        words.setdefault(recording, []).append(
            (channel, checked_word(path, f"line {number}", word, start, start + duration, confidence))
        )
    return words


def ctm_channels(words: CtmWords) -> list[str]:
    """The channels a recording's words are on, sorted."""
    return sorted({channel for channel, _ in words if channel is not None})


def select_ctm(
    path: str | Path, by_recording: dict[str, CtmWords], recording_id: str, channel: str | None = None, arm: str = ""
) -> Hypothesis:
    """The hypothesis for one recording and channel; several channels without a choice are refused."""
    if recording_id not in by_recording:
        if not by_recording:
            return Hypothesis(recording_id, [], arm=arm)
        found = ", ".join(sorted(by_recording))
        raise InputError(path, f"no words for recording '{recording_id}' (recordings in the file: {found})")
    words = by_recording[recording_id]
    channels = ctm_channels(words)
    if channel is None and len(channels) > 1:
        raise InputError(
            path, f"recording '{recording_id}' has words on channels {', '.join(channels)}; name the channel to score"
        )
    if channel is not None and channels and channel not in channels:
        raise InputError(
            path, f"recording '{recording_id}' has no words on channel '{channel}' (channels: {', '.join(channels)})"
        )
    if len(channels) > 1 and any(c is None for c, _ in words):
        raise InputError(
            path,
            f"recording '{recording_id}' has untimed words, which name no channel, "
            f"and words on channels {', '.join(channels)}",
        )
    return Hypothesis(recording_id, [word for c, word in words if channel is None or c in (None, channel)], arm=arm)


def read_ctm_hypothesis(path: str | Path, recording_id: str | None = None, channel: str | None = None) -> Hypothesis:
    """The hypothesis for ``recording_id`` (default: the file stem, or the file's only recording)."""
    by_recording = read_ctm(path)
    arm = _header_arm(path)
    wanted = recording_id or Path(path).stem
    if recording_id is None and wanted not in by_recording and len(by_recording) == 1:
        wanted = next(iter(by_recording))
    return select_ctm(path, by_recording, wanted, channel, arm)


def _header_arm(path: str | Path) -> str:
    """The arm named by a header ``write_ctm`` wrote, or "" when there is none."""
    first = read_text(path).partition("\n")[0]
    arm = first[len(HEADER) :].strip() if first.startswith(HEADER) else ""
    return "" if arm == "-" else arm


def write_ctm(hypothesis: Hypothesis, path: str | Path) -> Path:
    """Write one hypothesis as CTM (untimed words as ``;; untimed`` comments), atomically."""
    problem = recording_id_problem(hypothesis.recording_id)
    if problem is not None:
        raise InputError(path, f"cannot write CTM: {problem}")
    lines = [f"{HEADER}{hypothesis.arm or '-'}"]
    for word in hypothesis.words:
        text = "_".join(word.text.split()) or "_"
        if word.start is None or word.end is None:
            lines.append(f"{UNTIMED}{hypothesis.recording_id} {text}")
            continue
        row = f"{hypothesis.recording_id} {CHANNEL} {word.start:.3f} {max(0.0, word.end - word.start):.3f} {text}"
        if word.confidence is not None:
            row += f" {word.confidence:.4f}"
        lines.append(row)
    return atomic_write_text(path, "\n".join(lines) + "\n")
