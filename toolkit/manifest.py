"""The frozen manifest: every original recording and reference file with its hash (SPEC section 2).

``freeze`` checks and hashes a corpus once; ``verify`` re-hashes it and names every file whose
hash, size, duration or sample rate differs. Audio and references are read only through
:meth:`RecordingEntry.load_audio` / :meth:`RecordingEntry.load_reference`, which refuse a
file whose hash differs from the manifest. One manifest holds one sample rate unless
``allow_mixed_sample_rates`` is set at freeze time (each recording is then resampled by the
recognizer front end on its own; its time map keeps original seconds either way).
"""

from __future__ import annotations

import csv
import io
import json
import os
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable

from toolkit.audio.io import AUDIO_SUFFIXES, Channel, load_audio, probe_audio
from toolkit.audio.signal import Signal
from toolkit.errors import InputError
from toolkit.formats import NAMES_SUFFIX, REFERENCE_SUFFIXES, read_reference
from toolkit.formats.ids import describe_difference, recording_id_problem
from toolkit.formats.text import read_text
from toolkit.records import Reference
from toolkit.store import atomic_write_json, config_hash, sha256_file

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
        return read_reference(self.resolve(self.references[role].path), self.id, self.duration,
                              None if names is None else self.resolve(names.path))

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
            "id": self.id, "path": self.path, "sha256": self.sha256, "size": self.size,
            "duration": self.duration, "sample_rate": self.sample_rate, "channels": self.channels,
            "channel": self.channel, "split": self.split, "strata": list(self.strata),
            "speaker": self.speaker,
            "references": {role: {"path": r.path, "sha256": r.sha256, "size": r.size}
                           for role, r in sorted(self.references.items())},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], base_dir: Path) -> "RecordingEntry":
        fields = {key: data[key] for key in ("id", "path", "sha256", "size", "duration", "sample_rate",
                                              "channels", "channel", "split", "strata", "speaker")}
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
        raise InputError(self.path, f"no recording '{recording_id}' in the manifest")

    def split(self, name: str) -> list[RecordingEntry]:
        """The recordings of one split, in manifest order."""
        return [entry for entry in self.recordings if entry.split == name]

    def verify(self) -> list["Problem"]:
        """Every file whose hash, size, duration or sample rate differs (empty if none)."""
        return [problem for entry in self.recordings for problem in entry.verify()]

    def require_verified(self) -> None:
        """Raise an :class:`InputError` naming each differing file; return quietly if all match."""
        problems = self.verify()
        if len(problems) == 1:
            raise InputError(problems[0].path, problems[0].problem)
        if problems:
            raise InputError(self.path, f"{len(problems)} files differ from the frozen manifest: "
                                        + "; ".join(str(problem) for problem in problems))


def load(path: str | Path) -> Manifest:
    """Read a manifest, refusing one that is malformed or was edited after freezing."""
    path = Path(path)
    try:
        data = json.loads(read_text(path))
        if data.get("format") != FORMAT_VERSION:
            raise InputError(path, f"unsupported manifest format {data.get('format')!r} "
                                   f"(this toolkit reads format {FORMAT_VERSION})")
        manifest = Manifest(
            recordings=[RecordingEntry.from_json(item, path.parent) for item in data["recordings"]],
            allow_mixed_sample_rates=bool(data["allow_mixed_sample_rates"]),
            path=path,
        )
        recorded = data["manifest_sha256"]
    except json.JSONDecodeError as error:
        raise InputError(path, f"not a manifest: malformed JSON at line {error.lineno} ({error.msg})") from None
    except (KeyError, TypeError, AttributeError) as error:
        raise InputError(path, f"not a manifest: missing or malformed field {error}") from None
    if recorded != manifest.sha256:
        raise InputError(path, f"manifest was edited after freezing: it records sha256 {recorded}, "
                               f"its content hashes to {manifest.sha256}")
    return manifest


load_manifest = load


def verify(manifest: Manifest) -> list[Problem]:
    """Every file of ``manifest`` whose hash, size, duration or sample rate differs (empty if none)."""
    return manifest.verify()


def require_verified(manifest: Manifest) -> None:
    """Raise an :class:`InputError` naming each differing file; return quietly if all match."""
    manifest.require_verified()


@dataclass(frozen=True)
class Assignment:
    """Split, strata, speaker and channel choice for one recording."""

    split: str
    strata: list[str] = field(default_factory=list)
    speaker: str = ""
    channel: Channel = None


def freeze(audio_dir: str | Path, refs_dir: str | Path, out: str | Path, splits_csv: str | Path | None = None,
           split: str | None = None, channel: Channel = None,
           allow_mixed_sample_rates: bool = False, no_speech: Iterable[str] = ()) -> Manifest:
    """Check, hash and record a corpus; write ``out`` atomically (nothing is written on any error).

    Audio files are matched to references by file stem (``ID.wav`` with ``ID.TextGrid``/``ID.stm``/
    ``ID.txt`` and an optional ``ID.names.txt``). Splits come from ``splits_csv`` (columns
    id,split[,strata,speaker,channel]; strata ``;``-separated) with ``split`` as the default.
    A reference without words is refused unless the recording is declared to hold no speech
    (``no_speech`` ids, or the stratum ``no-speech`` in the CSV); it is then recorded with that stratum.
    """
    audio_dir, refs_dir, out = Path(audio_dir), Path(refs_dir), Path(out)
    for folder in (audio_dir, refs_dir):
        if not folder.is_dir():
            raise InputError(folder, "not a folder")
    audio = _audio_files(audio_dir)
    references = _reference_files(refs_dir, audio, audio_dir)
    assignments = _assignments(audio, splits_csv, split, channel, audio_dir)
    for rid in no_speech:
        if rid not in assignments:
            raise InputError(audio_dir, f"--no-speech names recording '{rid}', which has no audio here")
        if NO_SPEECH not in assignments[rid].strata:
            assignments[rid] = replace(assignments[rid], strata=[*assignments[rid].strata, NO_SPEECH])

    infos = {rid: probe_audio(path) for rid, path in audio.items()}
    _check_sample_rates(audio_dir, audio, infos, allow_mixed_sample_rates)
    base = out.resolve().parent
    entries = []
    for rid, path in audio.items():
        assignment = assignments[rid]
        info = probe_audio(path, decode=True)
        chosen = _channel_for(path, info.channels, assignment.channel)
        roles = references[rid]
        role = next(r for r in roles if r != NAMES_ROLE)
        reference = read_reference(roles[role], rid, info.duration, roles.get(NAMES_ROLE))
        _check_speech_declared(roles[role], rid, reference.text, NO_SPEECH in assignment.strata)
        entries.append(RecordingEntry(
            id=rid, path=_relative(path, base), sha256=sha256_file(path), size=path.stat().st_size,
            duration=info.duration, sample_rate=info.sample_rate, channels=info.channels, channel=chosen,
            split=assignment.split, strata=list(assignment.strata), speaker=assignment.speaker,
            references={r: FileRecord(_relative(p, base), sha256_file(p), p.stat().st_size)
                        for r, p in sorted(roles.items())},
            base_dir=base,
        ))
    manifest = Manifest(entries, allow_mixed_sample_rates, path=out)
    if out.exists():
        try:
            same = json.loads(out.read_text(encoding="utf-8")) == json.loads(json.dumps(manifest.to_json()))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            same = False
        if not same:
            raise InputError(out, "already exists and differs from this corpus; a frozen manifest is never "
                                  "overwritten (remove it or choose another --out)")
        return manifest
    atomic_write_json(out, manifest.to_json())
    return manifest


def _check_speech_declared(path: Path, rid: str, text: str, declared_no_speech: bool) -> None:
    """A reference without words is a mistake (a cut or unsaved file) unless the recording is declared silent."""
    if not text.strip() and not declared_no_speech:
        raise InputError(path, f"the reference has no words; if recording '{rid}' holds no speech, say so "
                               f"with --no-speech {rid} (or the stratum '{NO_SPEECH}' in --splits)")
    if text.strip() and declared_no_speech:
        raise InputError(path, f"recording '{rid}' is declared to hold no speech, but its reference has "
                               f"{len(text.split())} word(s)")


def _audio_files(audio_dir: Path) -> dict[str, Path]:
    files: dict[str, Path] = {}
    for path in sorted(audio_dir.iterdir()):
        if path.is_file() and not path.name.startswith(".") and path.suffix.lower() in AUDIO_SUFFIXES:
            if path.stem in files:
                raise InputError(path, f"recording id '{path.stem}' is also used by {files[path.stem].name}")
            problem = recording_id_problem(path.stem)
            if problem is not None:
                raise InputError(path, problem)
            files[path.stem] = path
    if not files:
        raise InputError(audio_dir, f"no audio files ({' '.join(AUDIO_SUFFIXES)})")
    return files


def _reference_files(refs_dir: Path, audio: dict[str, Path], audio_dir: Path) -> dict[str, dict[str, Path]]:
    """Reference files by recording id and role; every reference needs audio and vice versa."""
    found: dict[str, dict[str, Path]] = defaultdict(dict)
    for path in sorted(refs_dir.iterdir()):
        if not path.is_file() or path.name.startswith("."):
            continue
        if path.name.lower().endswith(NAMES_SUFFIX):
            rid, role = path.name[: -len(NAMES_SUFFIX)], NAMES_ROLE
        elif path.suffix.lower() in REFERENCE_SUFFIXES:
            rid, role = path.stem, REFERENCE_SUFFIXES[path.suffix.lower()]
        else:
            continue
        others = [p.name for r, p in found[rid].items() if r != NAMES_ROLE]
        if role != NAMES_ROLE and others:
            raise InputError(path, f"recording '{rid}' already has a reference ({others[0]}); keep one")
        if rid not in audio:
            look_alike = next((a for a in audio if unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", rid)), None)
            hint = "" if look_alike is None else describe_difference(rid, look_alike)
            raise InputError(path, f"reference for recording '{rid}', but {audio_dir} has no audio named "
                                   f"'{rid}.*'{hint}")
        found[rid][role] = path
    for rid, path in audio.items():
        if not any(role != NAMES_ROLE for role in found.get(rid, {})):
            raise InputError(path, f"recording '{rid}' has no reference in {refs_dir} "
                                   f"(expected {rid}.TextGrid, {rid}.stm or {rid}.txt)")
    return dict(found)


def _assignments(audio: dict[str, Path], splits_csv: str | Path | None, default: str | None,
                 channel: Channel, audio_dir: Path) -> dict[str, Assignment]:
    if default is not None and default not in SPLITS:
        raise InputError(None, f"unknown split '{default}' (known: {', '.join(SPLITS)})")
    rows = {} if splits_csv is None else _read_splits_csv(Path(splits_csv), channel)
    for rid in rows:
        if rid not in audio:
            raise InputError(splits_csv, f"recording '{rid}' has no audio in {audio_dir}")
    result = {}
    for rid in audio:
        if rid in rows:
            result[rid] = rows[rid]
        elif default is not None:
            result[rid] = Assignment(default, channel=channel)
        else:
            where = f"is not in {splits_csv}" if splits_csv else "has no split"
            raise InputError(audio[rid], f"recording '{rid}' {where}; give --splits CSV or --split NAME")
    return result


def _read_splits_csv(path: Path, channel: Channel) -> dict[str, Assignment]:
    reader = csv.DictReader(io.StringIO(read_text(path)))
    columns = [name.strip() for name in reader.fieldnames or []]
    if "id" not in columns or "split" not in columns or set(columns) - set(CSV_COLUMNS):
        raise InputError(path, f"columns must be id,split and optionally strata,speaker,channel; "
                               f"found {','.join(columns) or 'none'}")
    rows: dict[str, Assignment] = {}
    for number, raw in enumerate(reader, 2):
        row = {key.strip(): (value or "").strip() for key, value in raw.items() if key is not None}
        rid, split = row["id"], row["split"]
        if not rid:
            raise InputError(path, f"line {number}: empty id")
        if rid in rows:
            raise InputError(path, f"line {number}: recording '{rid}' is assigned twice")
        if split not in SPLITS:
            raise InputError(path, f"line {number}: unknown split '{split}' (known: {', '.join(SPLITS)})")
        strata = [tag.strip() for tag in row.get("strata", "").split(";") if tag.strip()]
        chosen = parse_channel(row.get("channel"), path, number)
        rows[rid] = Assignment(split, strata, row.get("speaker", ""), channel if chosen is None else chosen)
    return rows


def parse_channel(text: str | None, source: str | Path | None = None, line: int | None = None) -> Channel:
    """A channel choice as written in a CSV or option: empty (none), a channel number, or ``mix``."""
    if not text:
        return None
    if text == "mix":
        return "mix"
    if text.isdigit():
        return int(text)
    prefix = f"line {line}: " if line else ""
    raise InputError(source, f"{prefix}channel must be a channel number (0, 1, ...) or 'mix', not '{text}'")


def _channel_for(path: Path, channels: int, chosen: Channel) -> Channel:
    """The stored channel choice: none for mono; required (and in range) for multichannel audio."""
    if channels == 1:
        return None
    if chosen is None:
        raise InputError(path, f"has {channels} channels; name a channel (0-{channels - 1}) or 'mix' "
                               "(splits CSV column 'channel', or --channel)")
    if chosen != "mix" and not 0 <= int(chosen) < channels:
        raise InputError(path, f"has no channel {chosen} (it has {channels}: 0-{channels - 1})")
    return chosen


def _check_sample_rates(audio_dir: Path, audio: dict[str, Path], infos: dict[str, Any], allowed: bool) -> None:
    rates: dict[int, list[str]] = defaultdict(list)
    for rid, info in infos.items():
        rates[info.sample_rate].append(audio[rid].name)
    if len(rates) > 1 and not allowed:
        listing = "; ".join(f"{rate} Hz: {', '.join(names[:3])}{' ...' if len(names) > 3 else ''}"
                            for rate, names in sorted(rates.items()))
        raise InputError(audio_dir, f"mixed sample rates ({listing}); convert the originals to one rate "
                                    "or freeze with --allow-mixed-sample-rates")


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
