"""Per-phrase pt-BR speech synthesis for the demo corpus, with a content-keyed cache.

RHVoice's Brazilian voice Leticia-F123 is used when installed, espeak-ng ``pt-br`` otherwise; the
choice is made at run time and recorded. Cached WAVs are keyed by voice, speaker style and text,
so a rebuild synthesizes nothing it has synthesized before.

The engine runs in a fixed environment (:func:`engine_environment`), never the caller's: espeak-ng
loads PulseAudio even when it writes a file, and the first run in a home without a PulseAudio
runtime directory makes libpulse draw ~180 numbers from the C library's ``rand()`` to name one,
the same generator espeak-ng's breath noise uses (voice variant ``f2``), so that run's audio
differed from every later one. A user's ``~/espeak-ng-data``, ``$ESPEAK_DATA_PATH`` or RHVoice
configuration would also change the voice without changing the cache key.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import soundfile

from toolkit.core.errors import ToolkitError
from toolkit.core.files import atomic_write_bytes, config_hash

ENGINES = ("rhvoice", "espeak-ng")
RHVOICE_VOICE = "Leticia-F123"
_RHVOICE_DATA = (Path("/usr/share/RHVoice/voices"), Path("/usr/local/share/RHVoice/voices"))
_ESPEAK_PITCH = 50  # espeak-ng defaults that the percentages below scale
_ESPEAK_SPEED = 175


@dataclass(frozen=True)
class Voice:
    """The synthesizer actually used: engine, voice name and package version."""

    engine: str
    name: str
    version: str

    @property
    def label(self) -> str:
        return f"{self.engine} {self.name} ({self.version})"


@dataclass(frozen=True)
class SpeakerStyle:
    """A synthetic speaker: the voice at its own pitch and rate (percent of default).

    ``variant`` is the espeak-ng voice variant used under the fallback engine.
    """

    tag: str
    pitch: int
    rate: int
    variant: str


SPEAKERS: tuple[SpeakerStyle, ...] = (
    SpeakerStyle("speaker-a", pitch=100, rate=100, variant="f2"),
    SpeakerStyle("speaker-b", pitch=80, rate=92, variant="m3"),
    SpeakerStyle("speaker-c", pitch=118, rate=108, variant="f4"),
)


@dataclass(frozen=True)
class Synthesized:
    """One phrase's synthesizer output as float32 mono samples."""

    samples: np.ndarray
    sample_rate: int


def _package_version(package: str) -> str:
    if shutil.which("dpkg-query") is None:
        return "unknown"
    result = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True, check=False)
    return result.stdout.strip() if result.returncode == 0 and result.stdout.strip() else "unknown"


def detect_voice(engine: str | None = None) -> Voice:
    """RHVoice Leticia-F123 when its binary and voice data are installed, else espeak-ng pt-br.

    ``engine`` ("rhvoice" or "espeak-ng") demands one of them instead of choosing.
    """
    if engine not in (None, *ENGINES):
        raise ToolkitError(f"unknown speech engine {engine!r}; expected one of {', '.join(ENGINES)}")
    rhvoice = shutil.which("RHVoice-test") and any((d / RHVOICE_VOICE).is_dir() for d in _RHVOICE_DATA)
    if rhvoice and engine in (None, "rhvoice"):
        return Voice("rhvoice", RHVOICE_VOICE, _package_version("rhvoice-brazilian-portuguese"))
    if shutil.which("espeak-ng") and engine in (None, "espeak-ng"):
        return Voice("espeak-ng", "pt-br", _package_version("espeak-ng-data"))
    wanted = (
        "RHVoice with the Leticia-F123 voice"
        if engine == "rhvoice"
        else "espeak-ng"
        if engine == "espeak-ng"
        else "a pt-BR speech synthesizer"
    )
    raise ToolkitError(
        f"{wanted} is not installed: install rhvoice-brazilian-portuguese (Debian non-free) or espeak-ng"
    )


def engine_environment(cache_dir: Path) -> dict[str, str]:
    """The synthesizer's whole environment: PATH, a UTF-8 locale, a home of its own (no user voice data
    or configuration) and a PulseAudio runtime directory that exists, so libpulse never has to invent one."""
    runtime = cache_dir / ".pulse-runtime"
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "LC_ALL": "C.UTF-8",
        "HOME": str(cache_dir / ".home"),
        "PULSE_RUNTIME_PATH": str(runtime),
    }


def _command(voice: Voice, style: SpeakerStyle, out: Path) -> list[str]:
    if voice.engine == "rhvoice":
        return ["RHVoice-test", "-p", voice.name, "-t", str(style.pitch), "-r", str(style.rate), "-o", str(out)]
    return [
        "espeak-ng",
        "-v",
        f"{voice.name}+{style.variant}",
        "-p",
        str(round(_ESPEAK_PITCH * style.pitch / 100)),
        "-s",
        str(round(_ESPEAK_SPEED * style.rate / 100)),
        "--stdin",
        "-w",
        str(out),
    ]


def cache_key(voice: Voice, style: SpeakerStyle, text: str) -> str:
    """Hash of everything that determines the synthesized audio."""
    return config_hash({"voice": asdict(voice), "style": asdict(style), "text": text})


def synthesize(text: str, voice: Voice, style: SpeakerStyle, cache_dir: Path) -> Synthesized:
    """Synthesize ``text`` (read from stdin by the engine), reusing the cached WAV when present."""
    cached = cache_dir / f"{cache_key(voice, style, text)}.wav"
    if not cached.exists():
        cache_dir.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{cached.stem}.", suffix=".wav", dir=cache_dir)
        os.close(fd)
        scratch = Path(name)
        try:
            result = subprocess.run(
                _command(voice, style, scratch),
                input=text.encode("utf-8"),
                capture_output=True,
                check=False,
                env=engine_environment(cache_dir),
            )
            if result.returncode != 0 or scratch.stat().st_size <= 44:
                raise ToolkitError(
                    f"{voice.engine} failed on {text!r}: {result.stderr.decode('utf-8', 'replace').strip()}"
                )
            atomic_write_bytes(cached, scratch.read_bytes())
        finally:
            scratch.unlink(missing_ok=True)
    samples, rate = soundfile.read(cached, dtype="float32", always_2d=True)
    return Synthesized(np.ascontiguousarray(samples.mean(axis=1)), rate)


def synthesize_many(
    items: Sequence[tuple[str, SpeakerStyle]], voice: Voice, cache_dir: Path, workers: int = 2
) -> list[Synthesized]:
    """Synthesize (text, style) pairs in parallel engine processes; results keep the input order."""
    unique = list(dict.fromkeys(items))
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        done = dict(zip(unique, pool.map(lambda item: synthesize(item[0], voice, item[1], cache_dir), unique)))
    return [done[item] for item in items]
