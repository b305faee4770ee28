"""Any program as a recognizer: a command run once per decoded unit on a 16 kHz mono WAV, its words read back.

The command is an argument list with placeholders: ``{audio}`` (the unit's WAV), ``{output}`` (the file it
writes its words to) or ``{output_dir}`` (the folder, for tools that write ``<folder>/<audio stem>.<ext>``: the
output file is ``unit.json`` or ``unit.ctm`` beside ``unit.wav``), and ``{model}`` (the declared model's path).
It runs in that unit's own empty folder. Its words are read as the toolkit reads hypotheses (toolkit.formats:
``{"words": [...]}`` JSON, CTM, or Whisper's own JSON), in the unit's seconds; the pipeline maps them to original
time like any recognizer's. A command that cannot start, exits nonzero, outlives ``timeout_s``, writes nothing or
writes words that are not a valid stream inside the unit raises :class:`CommandFailed` with its stderr's tail:
that unit's arm fails on that recording, and nothing is cached.
"""

from __future__ import annotations

import math
import re
import tempfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from toolkit.asr.program_files import PLACEHOLDERS, ProgramFile, changed, program_files
from toolkit.asr.run_command import CommandFailed, exit_problem, run_command
from toolkit.asr.segments import Transcript
from toolkit.audio.signal import Signal, resample
from toolkit.core.errors import InputError
from toolkit.core.files import config_hash
from toolkit.core.transcripts import Word
from toolkit.core.wordstream import StreamError, check_stream, drop_contradicting_times

DECODER = "external command"
SAMPLE_RATE = 16000
OutputFormat = Literal["json", "ctm", "whisper-json"]
_SUFFIX = {"json": "json", "ctm": "ctm", "whisper-json": "json"}
# A word may end this far past its unit's end (tools round times up) and is cut to it; farther fails the unit.
END_TOLERANCE_S = 0.05


@dataclass(frozen=True)
class CommandConfig:
    """A command recognizer's table: the argument list, the version its author declares (recorded: bump it when the
    program changes in a way its files do not show), the seconds one unit may take, and what it writes."""

    command: tuple[str, ...]
    version: str
    timeout_s: float
    output_format: OutputFormat

    def __post_init__(self) -> None:
        if not self.command or not all(self.command):
            raise ValueError("command must be a non-empty list of non-empty arguments")
        if any(p in self.command[0] for p in PLACEHOLDERS):
            raise ValueError(f"the command's first argument is its executable, not a placeholder: {self.command[0]!r}")
        named = {m for argument in self.command[1:] for m in re.findall(r"\{[A-Za-z_]\w*\}", argument)}
        unknown = sorted(named - set(PLACEHOLDERS))
        if unknown:
            raise ValueError(
                f"unknown placeholder(s) {', '.join(unknown)} in command; known: {', '.join(PLACEHOLDERS)}"
            )
        if "{audio}" not in named:
            raise ValueError("command must name {audio} (the unit's 16 kHz mono WAV)")
        if not named & {"{output}", "{output_dir}"}:
            raise ValueError("command must name {output} (the file it writes its words to) or {output_dir}")
        if not self.version.strip():
            raise ValueError("version must say which version of the program this is (a non-empty string)")
        if not math.isfinite(self.timeout_s) or self.timeout_s <= 0:
            raise ValueError(f"timeout_s must be a positive number of seconds, not {self.timeout_s!r}")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class CommandRecognizer:
    """An external command decoding one unit at a time; its files are hashed when it is built (an executable or
    model that is not there is refused then) and checked again before every unit."""

    backend = "command"

    def __init__(self, folder: Path, model: str, config: CommandConfig) -> None:
        if any("{model}" in argument for argument in config.command) and not model:
            raise InputError(folder, "the command names {model} but the recognizer declares no model")
        self.config = config
        self.model = model
        self.files: list[ProgramFile] = program_files(folder, config.command, model)
        self.notes: dict[str, Any] = {
            "decoder": DECODER,
            "word_times": "the external command's",
            "temperature_fallback": "unknown (an external command reports no segments)",
            "files": {f"{f.role} {f.name}": f.path for f in self.files},  # where each pinned file is here
        }

    def load(self) -> None:
        """Nothing to load: the command starts afresh for every unit."""

    def transcribe(self, signal: Signal) -> Transcript:
        """Words in ``signal``'s own seconds from one run of the command; its CPU time and peak memory are in the
        notes (``external_cpu_s``, ``external_peak_rss_mb``: the worker that started it spent almost nothing)."""
        audio = resample(signal, SAMPLE_RATE)
        self.notes.update(external_cpu_s=0.0, external_peak_rss_mb=0.0)
        if len(audio.samples) == 0:
            return Transcript([], [])
        for pinned, now in changed(self.files):
            raise CommandFailed(f"{pinned.role} {pinned.path} changed since the run started (sha256 {now})")
        import soundfile

        with tempfile.TemporaryDirectory(prefix="ablate-unit-") as work:
            folder = Path(work)
            wav, output = folder / "unit.wav", folder / f"unit.{_SUFFIX[self.config.output_format]}"
            soundfile.write(wav, np.clip(audio.samples, -1.0, 1.0), SAMPLE_RATE, subtype="PCM_16")
            finished = run_command(self.argv(wav, output), folder, self.config.timeout_s)
            self.notes.update(external_cpu_s=finished.cpu_s, external_peak_rss_mb=finished.peak_rss_mb)
            problem = exit_problem(finished)
            if problem is not None:
                raise CommandFailed(problem)
            try:
                words = self._read(output, audio.duration)
            except CommandFailed as error:
                raise CommandFailed(f"{error}; stderr: {finished.stderr_tail}") from None
        return Transcript(words, [])

    def argv(self, wav: Path, output: Path) -> list[str]:
        """The command with its placeholders filled in and each pinned file by its path here."""
        paths = {f.name: f.path for f in self.files if f.role in ("executable", "argument")}
        model = next((f.path for f in self.files if f.role == "model"), "")
        values = {"{audio}": str(wav), "{output}": str(output), "{output_dir}": str(output.parent), "{model}": model}
        filled = []
        for argument in self.config.command:
            if argument in paths:
                filled.append(paths[argument])
                continue
            for placeholder, value in values.items():
                argument = argument.replace(placeholder, value)
            filled.append(argument)
        return filled

    def _read(self, output: Path, duration: float) -> list[Word]:
        """The words the command wrote, checked: a valid stream inside the unit (ends up to END_TOLERANCE_S past it
        cut to it), words whose times contradict the ones before them untimed and counted."""
        if not output.is_file():
            raise CommandFailed(f"wrote nothing to {output.name}")
        if output.stat().st_size == 0:
            raise CommandFailed(f"wrote an empty {output.name}")
        try:
            words = read_words(output, self.config.output_format)
        except InputError as error:
            raise CommandFailed(f"wrote unreadable words ({self.config.output_format}): {error.problem}") from None
        inside = []
        for k, word in enumerate(words, 1):
            if word.end is not None and word.end > duration + END_TOLERANCE_S:
                raise CommandFailed(
                    f"word {k} {word.text!r} ends at {word.end:g} s, past the unit's end ({duration:g} s)"
                )
            if word.start is not None and word.end is not None:
                word = replace(word, start=min(word.start, duration), end=min(word.end, duration))
            inside.append(word)
        ordered, dropped = drop_contradicting_times(inside)
        try:
            check_stream(ordered, duration, "its words")
        except StreamError as error:
            raise CommandFailed(f"wrote an invalid word stream: {error}") from None
        self.notes["contradicting_times_dropped"] = dropped
        return ordered

    def runtime(self) -> dict[str, Any]:
        """What runs it here: the program itself (its files' content is the identity, and where they are on this
        machine is in the notes, so a worker that finds the same files elsewhere decodes alike)."""
        return {"device": "external command"}

    def identity(self) -> dict[str, Any]:
        """The command as written, its declared version and settings, and the sha256 of every file it runs or reads
        (``program_sha256`` over all of them; ``weights_sha256``: the declared model's, None without one)."""
        files = [f.identity() for f in self.files]
        model = next((f.sha256 for f in self.files if f.role == "model"), None)
        return {
            "backend": self.backend,
            "decoder": DECODER,
            "model": self.model,
            "weights_sha256": model,
            "program_sha256": config_hash(files),
            "files": files,
            "decoding": self.config.to_json(),
        }


def read_words(path: Path, output_format: OutputFormat) -> list[Word]:
    """The words of a command's output file by its declared format (toolkit.formats' readers)."""
    if output_format == "ctm":
        from toolkit.formats.ctm import read_ctm_hypothesis

        return read_ctm_hypothesis(path).words
    if output_format == "whisper-json":
        from toolkit.formats.whisper_json import read_whisper_json

        return read_whisper_json(path)
    from toolkit.formats import read_words_json

    return read_words_json(path)
