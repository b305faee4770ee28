"""The frozen manifest: every original recording and reference file with its hash.

``freeze`` (toolkit.corpus.freeze) checks and hashes a corpus once; ``verify`` re-hashes it and names every file whose
hash, size, duration or sample rate differs. Audio and references are read only through
:meth:`RecordingEntry.load_audio` / :meth:`RecordingEntry.load_reference`, which refuse a
file whose hash differs from the manifest. One manifest holds one sample rate unless
``allow_mixed_sample_rates`` is set at freeze time (each recording is then resampled by the
recognizer front end on its own; its time map keeps original seconds either way).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.audio.io import Channel, load_audio, probe_audio
from toolkit.audio.signal import Signal
from toolkit.core.data_files import parse_json
from toolkit.core.errors import InputError
from toolkit.core.files import config_hash, sha256_file
from toolkit.core.names import unknown_name
from toolkit.core.text import read_text
from toolkit.core.transcripts import Reference
from toolkit.formats import read_reference

FORMAT_VERSION = 1
SPLITS = ("tuning", "holdout", "challenge", "drift")
NAMES_ROLE = "names"
CSV_COLUMNS = ("id", "split", "strata", "speaker", "channel")
NO_SPEECH = "no-speech"  # the stratum of a recording declared to hold no speech (its reference has no words)
# Durations are compared to the microsecond: the same bytes always decode to the same length.
_DURATION_TOLERANCE = 1e-6


@dataclass(frozen=True)
class FileRecord:
    """A reference/annotation file: path (relative to the manifest's folder when possible), hash, size."""

    path: str
    sha256: str
    size: int


@dataclass(frozen=True)
class Problem:
    """One file that differs from the manifest; renders as ``path: problem``."""

    path: str
    problem: str

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"


@dataclass
class RecordingEntry:
    """One original recording, its facts at freeze time, its split/strata and its reference files."""

    id: str
    path: str
    sha256: str
    size: int
    duration: float
    sample_rate: int
    channels: int
    channel: Channel
    split: str
    strata: list[str]
    speaker: str
    references: dict[str, FileRecord]
    base_dir: Path = field(default=Path("."), compare=False, repr=False)

    @property
    def audio_path(self) -> Path:
        return self.resolve(self.path)

    def resolve(self, path: str) -> Path:
        """A manifest path as a usable path (relative paths are relative to the manifest's folder)."""
        return Path(path) if Path(path).is_absolute() else self.base_dir / path

    @property
    def reference_role(self) -> str | None:
        """The role of the transcript file (``textgrid``, ``stm`` or ``text``)."""
        return next((role for role in self.references if role != NAMES_ROLE), None)

    def verify(self) -> list[Problem]:
        """Re-hash the audio and every reference file; one problem per differing file."""
        problems = [] if (audio := self._check_audio()) is None else [audio]
        for record in self.references.values():
            problem = _check_file(self.resolve(record.path), record.sha256, record.size)
            if problem is not None:
                problems.append(problem)
        return problems

    def load_audio(self) -> Signal:
        """The verified original audio as a float32 mono signal (channel choice from the manifest)."""
        problem = self._check_audio()
        if problem is not None:
            raise InputError(problem.path, problem.problem)
        return load_audio(self.audio_path, self.channel)

    def load_reference(self) -> Reference:
        """The verified reference (with its names list, if any), bounded by the recording's duration."""
        for record in self.references.values():
            problem = _check_file(self.resolve(record.path), record.sha256, record.size)
            if problem is not None:
                raise InputError(problem.path, problem.problem)
        role = self.reference_role
        if role is None:
            raise InputError(self.audio_path, f"recording '{self.id}' has no reference in the manifest")
        names = self.references.get(NAMES_ROLE)
        return read_reference(
            self.resolve(self.references[role].path),
            self.id,
            self.duration,
            None if names is None else self.resolve(names.path),
        )

    def _check_audio(self) -> Problem | None:
        problem = _check_file(self.audio_path, self.sha256, self.size)
        if problem is None or not self.audio_path.is_file():
            return problem
        details = [problem.problem]
        try:
            info = probe_audio(self.audio_path, decode=True)
        except InputError as error:
            details.append(error.problem)
        else:
            if abs(info.duration - self.duration) > _DURATION_TOLERANCE:
                details.append(f"duration differs: manifest {self.duration:.6f} s, file {info.duration:.6f} s")
            if info.sample_rate != self.sample_rate:
                details.append(f"sample rate differs: manifest {self.sample_rate} Hz, file {info.sample_rate} Hz")
            if info.channels != self.channels:
                details.append(f"channels differ: manifest {self.channels}, file {info.channels}")
        return Problem(problem.path, "; ".join(details))

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "sha256": self.sha256,
            "size": self.size,
            "duration": self.duration,
            "sample_rate": self.sample_rate,
            "channels": self.channels,
            "channel": self.channel,
            "split": self.split,
            "strata": list(self.strata),
            "speaker": self.speaker,
            "references": {
                role: {"path": r.path, "sha256": r.sha256, "size": r.size}
                for role, r in sorted(self.references.items())
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], base_dir: Path) -> RecordingEntry:
        fields = {
            key: data[key]
            for key in (
                "id",
                "path",
                "sha256",
                "size",
                "duration",
                "sample_rate",
                "channels",
                "channel",
                "split",
                "strata",
                "speaker",
            )
        }
        references = {role: FileRecord(**record) for role, record in data["references"].items()}
        return cls(**fields, references=references, base_dir=base_dir)


@dataclass
class Manifest:
    """All recordings of a frozen corpus; ``sha256`` identifies it in every run record."""

    recordings: list[RecordingEntry]
    allow_mixed_sample_rates: bool = False
    path: Path | None = field(default=None, compare=False, repr=False)

    def body(self) -> dict[str, Any]:
        return {
            "format": FORMAT_VERSION,
            "allow_mixed_sample_rates": self.allow_mixed_sample_rates,
            "recordings": [entry.to_json() for entry in self.recordings],
        }

    @property
    def sha256(self) -> str:
        return config_hash(self.body())

    def to_json(self) -> dict[str, Any]:
        return {**self.body(), "manifest_sha256": self.sha256}

    def entry(self, recording_id: str) -> RecordingEntry:
        for entry in self.recordings:
            if entry.id == recording_id:
                return entry
        raise InputError(self.path, unknown_name("recording", recording_id, [e.id for e in self.recordings]))

    def split(self, name: str) -> list[RecordingEntry]:
        """The recordings of one split, in manifest order."""
        return [entry for entry in self.recordings if entry.split == name]

    def verify(self) -> list[Problem]:
        """Every file whose hash, size, duration or sample rate differs (empty if none)."""
        return [problem for entry in self.recordings for problem in entry.verify()]

    def require_verified(self) -> None:
        """Raise an :class:`InputError` naming each differing file; return quietly if all match."""
        problems = self.verify()
        if len(problems) == 1:
            raise InputError(problems[0].path, problems[0].problem)
        if problems:
            raise InputError(
                self.path,
                f"{len(problems)} files differ from the frozen manifest: "
                + "; ".join(str(problem) for problem in problems),
            )


def _parsed(path: Path) -> Any:
    text = read_text(path)  # a missing or undecodable file says so itself
    try:
        return parse_json(text, path)
    except InputError as error:
        raise InputError(path, f"not a manifest: {error.problem}") from None


def load(path: str | Path) -> Manifest:
    """Read a manifest, refusing one that is malformed or was edited after freezing."""
    path = Path(path)
    try:
        data = _parsed(path)
        if data.get("format") != FORMAT_VERSION:
            raise InputError(
                path, f"unsupported manifest format {data.get('format')!r} (this toolkit reads format {FORMAT_VERSION})"
            )
        manifest = Manifest(
            recordings=[RecordingEntry.from_json(item, path.parent) for item in data["recordings"]],
            allow_mixed_sample_rates=bool(data["allow_mixed_sample_rates"]),
            path=path,
        )
        recorded = data["manifest_sha256"]
    except (KeyError, TypeError, AttributeError) as error:
        raise InputError(path, f"not a manifest: missing or malformed field {error}") from None
    if recorded != manifest.sha256:
        raise InputError(
            path,
            f"manifest was edited after freezing: it records sha256 {recorded}, "
            f"its content hashes to {manifest.sha256}",
        )
    return manifest


load_manifest = load


def verify(manifest: Manifest) -> list[Problem]:
    """Every file of ``manifest`` whose hash, size, duration or sample rate differs (empty if none)."""
    return manifest.verify()


def require_verified(manifest: Manifest) -> None:
    """Raise an :class:`InputError` naming each differing file; return quietly if all match."""
    manifest.require_verified()


def _check_file(path: Path, sha256: str, size: int) -> Problem | None:
    """Compare a file with its frozen hash and size, naming both values when they differ."""
    if not path.is_file():
        return Problem(str(path), f"missing (frozen with sha256 {sha256})")
    details = []
    actual = sha256_file(path)
    if actual != sha256:
        details.append(f"sha256 differs: manifest {sha256}, file {actual}")
    actual_size = path.stat().st_size
    if actual_size != size:
        details.append(f"size differs: manifest {size} bytes, file {actual_size} bytes")
    return Problem(str(path), "; ".join(details)) if details else None


def _relative(path: Path, base: Path) -> str:
    """``path`` relative to ``base`` when it can be expressed so, else absolute (POSIX separators)."""
    try:
        return Path(os.path.relpath(path.resolve(), base)).as_posix()
    except ValueError:
        return path.resolve().as_posix()
