"""Freeze a corpus: check every audio and reference file, assign splits and strata, hash and record them.

The manifest it writes (``toolkit.corpus.manifest``) is the frozen contract every run verifies.
Nothing is written on any error.
"""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toolkit.audio.io import AUDIO_SUFFIXES, AudioInfo, Channel, probe_audio
from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_json, sha256_file
from toolkit.core.names import unknown_name
from toolkit.core.text import read_text
from toolkit.corpus.manifest import (
    CSV_COLUMNS,
    NAMES_ROLE,
    NO_SPEECH,
    SPLITS,
    FileRecord,
    Manifest,
    RecordingEntry,
    _relative,
)
from toolkit.formats import NAMES_SUFFIX, REFERENCE_SUFFIXES, read_reference
from toolkit.formats.ids import describe_difference, recording_id_problem


@dataclass(frozen=True)
class Assignment:
    """Split, strata, speaker and channel choice for one recording."""

    split: str
    strata: list[str] = field(default_factory=list)
    speaker: str = ""
    channel: Channel = None


@dataclass(frozen=True)
class Recordings:
    """A corpus as the freeze records it, however it was laid out: audio and reference files by recording id.

    ``source`` (the folder or file listing them) is named in errors about the whole set; ``speakers`` holds a
    speaker the source names for a recording (a splits CSV's wins); ``declared`` where a recording was declared
    (file and line), named when its reference is refused; ``decoded`` facts already found by a full decode.
    """

    source: Path
    audio: dict[str, Path]
    references: dict[str, dict[str, Path]]
    speakers: dict[str, str] = field(default_factory=dict)
    declared: dict[str, tuple[Path, int]] = field(default_factory=dict)
    decoded: dict[str, AudioInfo] = field(default_factory=dict)


def freeze(
    audio_dir: str | Path,
    refs_dir: str | Path,
    out: str | Path,
    splits_csv: str | Path | None = None,
    split: str | None = None,
    channel: Channel = None,
    allow_mixed_sample_rates: bool = False,
    no_speech: Iterable[str] = (),
) -> Manifest:
    """Check, hash and record a corpus; write ``out`` atomically (nothing is written on any error).

    Audio files are matched to references by file stem (``ID.wav`` with ``ID.TextGrid``/``ID.stm``/
    ``ID.txt`` and an optional ``ID.names.txt``). Splits come from ``splits_csv`` (columns
    id,split[,strata,speaker,channel]; strata ``;``-separated) with ``split`` as the default.
    A reference without words is refused unless the recording is declared to hold no speech
    (``no_speech`` ids, or the stratum ``no-speech`` in the CSV); it is then recorded with that stratum.
    """
    audio_dir, refs_dir = Path(audio_dir), Path(refs_dir)
    for folder in (audio_dir, refs_dir):
        if not folder.is_dir():
            raise InputError(folder, "not a folder")
    audio = _audio_files(audio_dir)
    references = _reference_files(refs_dir, audio, audio_dir)
    return freeze_recordings(
        Recordings(audio_dir, audio, references),
        out,
        splits_csv,
        split,
        channel,
        allow_mixed_sample_rates,
        no_speech,
    )


def freeze_recordings(
    recordings: Recordings,
    out: str | Path,
    splits_csv: str | Path | None = None,
    split: str | None = None,
    channel: Channel = None,
    allow_mixed_sample_rates: bool = False,
    no_speech: Iterable[str] = (),
) -> Manifest:
    """Check, hash and record ``recordings`` (options as :func:`freeze`); write ``out`` atomically, or nothing."""
    out = Path(out)
    source, audio, references = recordings.source, recordings.audio, recordings.references
    assignments = _assignments(audio, splits_csv, split, channel, source)
    for rid in no_speech:
        if rid not in assignments:
            raise InputError(source, f"--no-speech names recording '{rid}', which has no audio here")
        if NO_SPEECH not in assignments[rid].strata:
            assignments[rid] = replace(assignments[rid], strata=[*assignments[rid].strata, NO_SPEECH])

    infos = {rid: recordings.decoded.get(rid) or probe_audio(path) for rid, path in audio.items()}
    _check_sample_rates(source, audio, infos, allow_mixed_sample_rates)
    base = out.resolve().parent
    entries = []
    for rid, path in audio.items():
        assignment = assignments[rid]
        info = recordings.decoded.get(rid) or probe_audio(path, decode=True)
        chosen = _channel_for(path, info.channels, assignment.channel)
        roles = references[rid]
        role = next(r for r in roles if r != NAMES_ROLE)
        reference = read_reference(roles[role], rid, info.duration, roles.get(NAMES_ROLE))
        where, line = recordings.declared.get(rid, (roles[role], 0))
        _check_speech_declared(where, line, rid, reference.text, NO_SPEECH in assignment.strata)
        entries.append(
            RecordingEntry(
                id=rid,
                path=_relative(path, base),
                sha256=sha256_file(path),
                size=path.stat().st_size,
                duration=info.duration,
                sample_rate=info.sample_rate,
                channels=info.channels,
                channel=chosen,
                split=assignment.split,
                strata=list(assignment.strata),
                speaker=assignment.speaker or recordings.speakers.get(rid, ""),
                references={
                    r: FileRecord(_relative(p, base), sha256_file(p), p.stat().st_size)
                    for r, p in sorted(roles.items())
                },
                base_dir=base,
            )
        )
    manifest = Manifest(entries, allow_mixed_sample_rates, path=out)
    if out.exists():
        try:
            same = json.loads(out.read_text(encoding="utf-8")) == json.loads(json.dumps(manifest.to_json()))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            same = False
        if not same:
            raise InputError(
                out,
                "already exists and differs from this corpus; a frozen manifest is never "
                "overwritten (remove it or choose another --out)",
            )
        return manifest
    atomic_write_json(out, manifest.to_json())
    return manifest


def _check_speech_declared(path: Path, line: int, rid: str, text: str, declared_no_speech: bool) -> None:
    """A reference without words is a mistake (a cut or unsaved file) unless the recording is declared silent;
    the error names ``path`` (and ``line``, when not 0: where an imported recording was declared)."""
    at = f"line {line}: " if line else ""
    if not text.strip() and not declared_no_speech:
        raise InputError(
            path,
            f"{at}the reference has no words; if recording '{rid}' holds no speech, say so "
            f"with --no-speech {rid} (or the stratum '{NO_SPEECH}' in --splits)",
        )
    if text.strip() and declared_no_speech:
        raise InputError(
            path,
            f"{at}recording '{rid}' is declared to hold no speech, but its reference has {len(text.split())} word(s)",
        )


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
            look_alike = next(
                (a for a in audio if unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", rid)), None
            )
            hint = "" if look_alike is None else describe_difference(rid, look_alike)
            raise InputError(
                path, f"reference for recording '{rid}', but {audio_dir} has no audio named '{rid}.*'{hint}"
            )
        found[rid][role] = path
    for rid, path in audio.items():
        if not any(role != NAMES_ROLE for role in found.get(rid, {})):
            raise InputError(
                path,
                f"recording '{rid}' has no reference in {refs_dir} (expected {rid}.TextGrid, {rid}.stm or {rid}.txt)",
            )
    return dict(found)


def _assignments(
    audio: dict[str, Path], splits_csv: str | Path | None, default: str | None, channel: Channel, source: Path
) -> dict[str, Assignment]:
    if default is not None and default not in SPLITS:
        raise InputError(None, unknown_name("split", default, SPLITS))
    rows = {} if splits_csv is None else _read_splits_csv(Path(splits_csv), channel)
    for rid in rows:
        if rid not in audio:
            raise InputError(splits_csv, f"recording '{rid}' has no audio in {source}")
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
        raise InputError(
            path, f"columns must be id,split and optionally strata,speaker,channel; found {','.join(columns) or 'none'}"
        )
    rows: dict[str, Assignment] = {}
    for number, raw in enumerate(reader, 2):
        row = {key.strip(): (value or "").strip() for key, value in raw.items() if key is not None}
        rid, split = row["id"], row["split"]
        if not rid:
            raise InputError(path, f"line {number}: empty id")
        if rid in rows:
            raise InputError(path, f"line {number}: recording '{rid}' is assigned twice")
        if split not in SPLITS:
            raise InputError(path, f"line {number}: {unknown_name('split', split, SPLITS)}")
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
        raise InputError(
            path,
            f"has {channels} channels; name a channel (0-{channels - 1}) or 'mix' "
            "(splits CSV column 'channel', or --channel)",
        )
    if chosen != "mix" and not 0 <= int(chosen) < channels:
        raise InputError(path, f"has no channel {chosen} (it has {channels}: 0-{channels - 1})")
    return chosen


def _check_sample_rates(source: Path, audio: dict[str, Path], infos: dict[str, Any], allowed: bool) -> None:
    rates: dict[int, list[str]] = defaultdict(list)
    for rid, info in infos.items():
        rates[info.sample_rate].append(audio[rid].name)
    if len(rates) > 1 and not allowed:
        listing = "; ".join(
            f"{rate} Hz: {', '.join(names[:3])}{' ...' if len(names) > 3 else ''}"
            for rate, names in sorted(rates.items())
        )
        raise InputError(
            source,
            f"mixed sample rates ({listing}); convert the originals to one rate "
            "or freeze with --allow-mixed-sample-rates",
        )
