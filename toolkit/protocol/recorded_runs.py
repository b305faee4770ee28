"""The run of a test split the audit log recorded as finished, checked before any verdict reads it: the frozen
challenger's and baseline's configurations, the manifest's recordings, an output of each arm for each, and one
pipeline code version throughout (a stability rerun of that split is checked the same way)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from toolkit.core.errors import InputError
from toolkit.pipeline.experiment import Experiment
from toolkit.protocol.challenger import ChallengerRecord, challenger_file
from toolkit.protocol.gates import refuse_failed_arms
from toolkit.protocol.state import TEST_SPLITS, replay, verified_log
from toolkit.runs.folder import RunFolder, latest_run


def split_run(experiment: Experiment, split: str, arms: Sequence[str] = ()) -> RunFolder:
    """The run of ``split`` to read: for a test split the one the audit log recorded as finished (its files
    checked against their recorded hashes), else the latest finished run of that split that ran ``arms``."""
    if split not in TEST_SPLITS:
        return latest_run(experiment.folder, split, arms)
    state = replay(verified_log(experiment.folder, hashes=True))
    if split not in state.finished:
        raise InputError(experiment.path, f"the {split} has not been run to the end: no run of it to read")
    return recorded_run(experiment, split, state.finished[split]["run"])


def recorded_run(experiment: Experiment, split: str, run: str) -> RunFolder:
    """The finished run ``run`` of a test split, checked against the frozen challenger and the manifest."""
    from toolkit.corpus.manifest import load_manifest

    folder = RunFolder(experiment.folder / "runs" / run)
    if not folder.record.is_file():
        raise InputError(folder.record, f"the {split} run {run} recorded in the audit log is missing")
    record = folder.read_record()
    frozen = ChallengerRecord.read(challenger_file(experiment)).fingerprint.config
    ran = {arm["name"]: arm for arm in record.config.arms}
    for role in ("baseline", "challenger"):
        if ran.get(frozen[role]["name"]) != frozen[role]:
            raise InputError(
                folder.record,
                f"the run's arm {frozen[role]['name']!r} is not the frozen {role}'s "
                f"configuration ({challenger_file(experiment)})",
            )
    refuse_failed_arms(
        record, folder.record, challenger=frozen["challenger"]["name"], baseline=frozen["baseline"]["name"]
    )
    expected = [e.id for e in load_manifest(experiment.manifest_path).split(split)]
    if sorted(record.recordings) != sorted(expected):
        raise InputError(
            folder.record,
            f"the run's recordings ({', '.join(record.recordings)}) are not "
            f"the manifest's {split} split ({', '.join(expected)})",
        )
    _require_imported_words(experiment, folder, frozen["challenger"]["name"], split)
    codes: dict[str, Path] = {}
    for arm in record.config.arm_names:
        for rid in expected:
            for path in (folder.hypothesis_json(arm, rid), folder.arm_output(arm, rid)):
                if not path.is_file():
                    raise InputError(path, f"missing: the {split} run has no output of arm {arm!r} for {rid!r}")
            if folder.read_hypothesis(arm, rid).recording_id != rid:
                raise InputError(folder.hypothesis_json(arm, rid), f"this hypothesis is not of recording {rid!r}")
            codes.setdefault(folder.read_arm_output(arm, rid).code, folder.arm_output(arm, rid))
    if len(codes) > 1:
        first, second = list(codes.items())[:2]
        raise InputError(
            second[1],
            f"made by pipeline code {second[0]}, but {first[1]} by {first[0]}: results of "
            "two code versions are never mixed in one verdict",
        )
    return folder


def _require_imported_words(experiment: Experiment, folder: RunFolder, arm: str, split: str) -> None:
    """An imported challenger's words in the run are exactly its frozen files' words, recording by recording: a file
    swapped while the run read it and put back after (so its hash holds again) cannot stand behind the verdict."""
    from toolkit.corpus.manifest import load_manifest

    imported = experiment.arms[arm].imported if arm in experiment.arms else None
    if imported is None:
        return
    for entry in load_manifest(experiment.manifest_path).split(split):
        if folder.read_hypothesis(arm, entry.id).words != imported.words(entry.id, entry.duration):
            item = imported.record.file_of(entry.id)
            raise InputError(
                folder.hypothesis_json(arm, entry.id),
                f"the words of imported arm {arm!r} here are not those of its frozen file "
                f"{imported.path(item) if item else entry.id}: the run did not read what was frozen",
            )
