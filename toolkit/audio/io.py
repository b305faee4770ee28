"""Probe and load original recordings (WAV, FLAC, OGG, MP3 via libsndfile) as float32 mono signals.

Bad audio is refused with an :class:`~toolkit.core.errors.InputError` naming the file: missing,
empty, not audio, zero-length, NaN or infinite float samples, truncated (a WAV shorter than its
RIFF header or data chunk, an Ogg stream without its end page, a FLAC/MP3 that decodes short), or
multichannel without a channel choice. Nothing is padded, guessed or silently downmixed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import soundfile as sf

from toolkit.audio.signal import Signal
from toolkit.core.errors import InputError

Channel = int | Literal["mix"] | None
AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".oga", ".mp3")
_BLOCK = 1 << 18
# libsndfile's MP3 frame count is an estimate from the header; decoding may give up to a few
# MPEG frames (1152 samples each) fewer without the file being truncated.
_MP3_SLACK = 4 * 1152
_OGG_MAX_PAGE = 27 + 255 + 255 * 255


@dataclass(frozen=True)
class AudioInfo:
    """What the header (or, with ``decode=True``, a full decode) says about a recording."""

    sample_rate: int
    channels: int
    frames: int
    duration: float
    format: str


def probe_audio(path: str | Path, decode: bool = False) -> AudioInfo:
    """Header facts about ``path``; ``decode=True`` decodes everything to count frames exactly and catch truncation."""
    info = _open_info(path)
    if not decode:
        return _info(info, info.frames)
    frames = sum(len(block) for block in _blocks(path, info))
    return _info(info, frames)


def load_audio(path: str | Path, channel: Channel = None) -> Signal:
    """Decode ``path`` to a float32 mono :class:`Signal` with an identity time map.

    Multichannel audio needs ``channel`` (an index) or ``"mix"`` (the mean of all channels).
    """
    info = _open_info(path)
    if info.channels > 1 and channel is None:
        raise InputError(
            path,
            f"has {info.channels} channels; choose a channel (0-{info.channels - 1}) "
            "or 'mix' for a downmix (manifest column 'channel')",
        )
    if channel not in (None, "mix") and not (isinstance(channel, int) and 0 <= channel < info.channels):
        raise InputError(path, f"has no channel {channel!r} (it has {info.channels}: 0-{info.channels - 1})")
    parts = []
    for block in _blocks(path, info):
        if channel == "mix":
            parts.append(block.mean(axis=1))
        else:
            parts.append(block[:, channel or 0])
    return Signal.original(np.concatenate(parts), info.samplerate)


def _open_info(path: str | Path) -> sf._SoundFileInfo:
    """Header facts, refusing missing, empty, non-audio, zero-length and visibly truncated files."""
    file = Path(path)
    if not file.exists():
        raise InputError(path, "file not found")
    if not file.is_file():
        raise InputError(path, "not a file")
    size = file.stat().st_size
    if size == 0:
        raise InputError(path, "empty file (0 bytes)")
    try:
        with _quiet_native_stderr():
            info = sf.info(str(file))
    except (sf.LibsndfileError, RuntimeError) as error:
        reason = (getattr(error, "error_string", "") or str(error)).rstrip(".")
        what = "truncated or malformed audio" if "malformed" in reason else "not a readable audio file"
        raise InputError(path, f"{what} ({reason})") from None
    if info.frames <= 0 or info.samplerate <= 0:
        raise InputError(path, "zero-length audio (the file holds no samples)")
    if info.format in ("WAV", "WAVEX"):
        _check_riff(file, size)
    elif info.format == "OGG":
        _check_ogg_end(file, size)
    return info


def _blocks(path: str | Path, info: sf._SoundFileInfo) -> Iterator[np.ndarray]:
    """Decode in blocks of shape (frames, channels); refuse a stream that fails or ends early."""
    decoded = 0
    try:
        with _quiet_native_stderr(), sf.SoundFile(str(path)) as handle:
            while True:
                block = handle.read(_BLOCK, dtype="float32", always_2d=True)
                if not len(block):
                    break
                _require_finite(path, block, decoded, info.samplerate)
                decoded += len(block)
                yield block
    except (sf.LibsndfileError, RuntimeError) as error:
        reason = getattr(error, "error_string", "") or str(error)
        raise InputError(
            path, f"truncated or corrupt audio: decoding failed after {decoded} samples ({reason.rstrip('.')})"
        ) from None
    slack = _MP3_SLACK if info.format == "MP3" else 0
    if decoded == 0:
        raise InputError(path, "zero-length audio (no samples could be decoded)")
    if decoded < info.frames - slack:
        raise InputError(
            path, f"truncated audio: the header promises {info.frames} samples, only {decoded} could be decoded"
        )


def _require_finite(path: str | Path, block: np.ndarray, offset: int, rate: int) -> None:
    """Refuse float audio holding NaN or infinite samples, naming the first one (a corrupt file, not silence)."""
    bad = ~np.isfinite(block)
    if bad.any():
        first = offset + int(np.flatnonzero(bad.any(axis=1))[0])
        raise InputError(
            path, f"sample {first} ({first / rate:.3f} s) is not a finite number (NaN or infinity): corrupt float audio"
        )


def _check_riff(file: Path, size: int) -> None:
    """A RIFF header states the file's length and the data chunk its own; a shorter file was cut off.

    A file cut and then given a corrected RIFF size still carries the data chunk's original
    size, so both are compared with the bytes present.
    """
    with open(file, "rb") as handle:
        head = handle.read(12)
        if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
            return
        declared = int.from_bytes(head[4:8], "little") + 8
        if not _streaming(declared - 8) and size < declared:
            raise InputError(file, f"truncated audio: the WAV header declares {declared} bytes, the file has {size}")
        offset = 12
        while offset + 8 <= size:
            handle.seek(offset)
            chunk = handle.read(8)
            chunk_size = int.from_bytes(chunk[4:8], "little")
            if chunk[:4] == b"data":
                present = size - offset - 8
                if not _streaming(chunk_size) and present < chunk_size:
                    raise InputError(
                        file,
                        f"truncated audio: the WAV data chunk declares {chunk_size} bytes, "
                        f"the file holds {present} after its header",
                    )
                return
            offset += 8 + chunk_size + (chunk_size & 1)


def _streaming(declared: int) -> bool:
    """A size a streaming writer leaves unset (0, or the 32-bit maximum and its neighbours)."""
    return declared in (0, 0xFFFFFFFF) or declared >= 0xFFFFFFF0


def _check_ogg_end(file: Path, size: int) -> None:
    """A complete Ogg stream ends with a whole page flagged end-of-stream."""
    with open(file, "rb") as handle:
        handle.seek(max(0, size - 2 * _OGG_MAX_PAGE))
        offset = handle.tell()
        tail = handle.read()
    at = len(tail)
    while (at := tail.rfind(b"OggS", 0, at)) >= 0:
        if at + 27 > len(tail) or tail[at + 4] != 0:
            continue
        count = tail[at + 26]
        table = tail[at + 27 : at + 27 + count]
        if len(table) == count and offset + at + 27 + count + sum(table) == size:
            if tail[at + 5] & 0x04:
                return
            break
    raise InputError(file, "truncated audio: the Ogg stream does not end with a complete end-of-stream page")


def _info(info: sf._SoundFileInfo, frames: int) -> AudioInfo:
    return AudioInfo(
        sample_rate=int(info.samplerate),
        channels=int(info.channels),
        frames=int(frames),
        duration=frames / info.samplerate,
        format=str(info.format),
    )


@contextmanager
def _quiet_native_stderr() -> Iterator[None]:
    """libmpg123 prints decoder warnings straight to file descriptor 2; keep the CLI's one-line errors clean."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    with open(os.devnull, "wb") as null:
        os.dup2(null.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
