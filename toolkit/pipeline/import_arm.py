"""``ablate arms import``: a folder of per-recording hypothesis files made elsewhere becomes an arm of the experiment.

Each file is matched to a manifest recording by its name (``<recording>.ctm``, ``.json`` or ``.txt``), read and
checked as the arm will be read (toolkit.pipeline.imported), hashed and copied into ``EXP/imported/<arm>/``, so a
later edit of the source folder changes nothing. The arm is declared in the experiment file's ``[arms]`` table as
``NAME = { imported = "imported/NAME" }``. Everything is checked before anything is written.
"""

from __future__ import annotations

import getpass
import shutil
from datetime import UTC, datetime
from pathlib import Path

from toolkit.core.errors import InputError, Mistakes
from toolkit.core.files import atomic_write_text, make_new_directory, sha256_file
from toolkit.core.names import did_you_mean, path_name_problem
from toolkit.pipeline.experiment import Experiment
from toolkit.pipeline.imported import FOLDER, SUFFIXES, ImportedFile, ImportRecord, imported_words, write_import
from toolkit.runs.record import BASELINE


def import_arm(experiment: Experiment, arm: str, source: Path) -> ImportRecord:
    """Check every file of ``source`` against the manifest, copy and hash them into the experiment, and declare the
    arm; returns its record. Refused (nothing written): a name the experiment uses for a pipeline arm or the
    baseline, an unknown or missing recording, two files for one recording, a file that does not read or whose
    times fall outside its recording."""
    from toolkit.corpus.manifest import load_manifest

    problem = path_name_problem(arm, "arm")
    if problem is not None:
        raise InputError(experiment.path, problem)
    if arm == BASELINE:
        raise InputError(
            experiment.path,
            f"the {BASELINE!r} arm is the toolkit's own pipeline (the protocol decodes it again under dither); "
            "import under another name",
        )
    declared = experiment.arms.get(arm)
    if declared is not None and declared.imported is None:
        raise InputError(
            experiment.path, f"arm {arm!r} is a pipeline arm of this experiment; import under another name"
        )
    if not source.is_dir():
        raise InputError(source, "not a folder of hypothesis files")
    manifest = load_manifest(experiment.manifest_path)
    durations = {entry.id: entry.duration for entry in manifest.recordings}
    found = _match(source, list(durations))
    for recording, path in found.items():
        imported_words(path, recording, durations[recording])  # refuses what the arm could not read
    record = ImportRecord(
        arm=arm,
        source=str(source.resolve()),
        imported_by=_who(),
        imported_at=datetime.now(UTC).isoformat(timespec="seconds"),
        manifest_sha256=manifest.sha256,
        files=tuple(
            ImportedFile(recording, found[recording].name, sha256_file(found[recording])) for recording in durations
        ),
    )
    declaration = None if declared is not None else _declared(experiment.path, arm)
    _copy(experiment.folder / FOLDER, arm, found, record)
    if declaration is not None:
        atomic_write_text(experiment.path, declaration)
    return record


def _match(source: Path, recordings: list[str]) -> dict[str, Path]:
    """Each recording's one file in ``source``; every other entry, and every recording without one, is a mistake
    (reported all at once, one line each)."""
    mistakes = Mistakes()
    found: dict[str, Path] = {}
    for path in sorted(source.iterdir()):
        recording, suffix = path.name[: -len(path.suffix)] if path.suffix else path.name, path.suffix.lower()
        if not path.is_file():
            mistakes.add(path, "not a hypothesis file (an imported arm is one file per recording, no subfolders)")
        elif suffix not in SUFFIXES:
            shown = f"'{path.suffix}'" if path.suffix else "(no extension)"
            mistakes.add(path, f"unknown hypothesis format {shown} (expected {', '.join(SUFFIXES)})")
        elif recording not in recordings:
            mistakes.add(path, f"no recording {recording!r} in the manifest{did_you_mean(recording, recordings)}"[:300])
        elif recording in found:
            mistakes.add(path, f"a second file for recording {recording!r} (the first: {found[recording].name})")
        else:
            found[recording] = path
    missing = [r for r in recordings if r not in found]
    if missing:
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        mistakes.add(
            source,
            f"no hypothesis file for manifest recording(s) {shown} (name each <recording>.ctm, .json "
            "or .txt; an empty file is an empty hypothesis)",
        )
    mistakes.raise_found()
    return found


def _who() -> str:
    """The user importing (the login name; "unknown" where the system has none)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def _copy(parent: Path, arm: str, found: dict[str, Path], record: ImportRecord) -> None:
    """The files and their record in a new folder beside ``parent/arm``, then put in its place whole (an earlier
    import of the arm, if any, removed after), so a reader sees either import, never a mix."""
    parent.mkdir(parents=True, exist_ok=True)
    staging = make_new_directory(parent, f".{arm}.")
    for item in record.files:
        shutil.copyfile(found[item.recording], staging / item.file)
        if sha256_file(staging / item.file) != item.sha256:  # changed while being imported
            shutil.rmtree(staging)
            raise InputError(found[item.recording], "changed while it was being imported; import again")
    write_import(staging, record)
    target = parent / arm
    old = parent / f".{arm}.replaced"
    if target.exists():
        shutil.rmtree(old, ignore_errors=True)
        target.rename(old)
    staging.rename(target)
    shutil.rmtree(old, ignore_errors=True)


def _declared(path: Path, arm: str) -> str:
    """The experiment file with ``arm = { imported = "imported/arm" }`` appended to its ``[arms]`` table (its last)."""
    text = path.read_text(encoding="utf-8")
    headers = [line.strip() for line in text.splitlines() if line.lstrip().startswith("[")]
    if not headers or headers[-1] != "[arms]":
        raise InputError(path, "the imported arm is declared in the [arms] table, which must be the file's last table")
    return text.rstrip("\n") + f'\n{arm} = {{ imported = "{FOLDER}/{arm}" }}\n'
