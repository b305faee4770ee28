"""The gate verdict on the holdout run of the frozen challenger (and, apart, on the challenge split).

Before any number is computed the audit log must verify, the gates copy and the scorer
signature must be the frozen ones, and the run folder must hold a hypothesis for every test
recording of the manifest for both arms. The verdict is written to ``scores/gates.json``
in the run folder (the report's gates section reads it) and logged.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from toolkit.core.errors import InputError
from toolkit.core.files import sha256_file
from toolkit.pipeline.experiment import Experiment
from toolkit.protocol.audit import AuditLog
from toolkit.protocol.challenger import ChallengerRecord, challenger_file, changed_file, fingerprint, gates_copy
from toolkit.protocol.gate_measures import DitherOutcome
from toolkit.protocol.gates import GateReport, evaluate_gates, refuse_failed_arms
from toolkit.protocol.gates_file import load_gates
from toolkit.protocol.lock import protocol_lock
from toolkit.protocol.state import TEST_SPLITS, named, refuse, replay, verified_log
from toolkit.runs.folder import RunFolder, latest_run
from toolkit.runs.record import BASELINE


def split_run(experiment: Experiment, split: str, arms: Sequence[str] = ()) -> RunFolder:
    """The run of ``split`` to read: for a test split the one the audit log recorded as finished (its files
    checked against their recorded hashes), else the latest finished run of that split that ran ``arms``."""
    if split not in TEST_SPLITS:
        return latest_run(experiment.folder, split, arms)
    state = replay(verified_log(experiment.folder, hashes=True))
    if split not in state.finished:
        raise InputError(experiment.path, f"the {split} has not been run to the end: no run of it to read")
    return _run_folder(experiment, split, state.finished[split]["run"])


def _run_folder(experiment: Experiment, split: str, run: str) -> RunFolder:
    """The finished run of a test split, checked against the frozen challenger and the manifest."""
    from toolkit.corpus.manifest import load_manifest

    folder = RunFolder(experiment.folder / "runs" / run)
    if not folder.record.is_file():
        raise InputError(folder.record, f"the {split} run recorded in the audit log is missing")
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


def gate_verdict(experiment: Experiment) -> GateReport:
    """Evaluate every gate on the holdout run; the challenge split, if run, is reported apart.

    Holds the protocol lock; every holdout file it reads is checked against the hashes the audit
    log recorded when the file was made.
    """
    with protocol_lock(experiment.folder, "ablate gate"):
        return _verdict(experiment)


def _verdict(experiment: Experiment) -> GateReport:
    from toolkit.evaluate import evaluate_run
    from toolkit.protocol.report_sections import report_sections
    from toolkit.report.run_report import write_reports

    state = replay(verified_log(experiment.folder))
    frozen = state.challenger
    if frozen is None:
        raise InputError(
            experiment.path,
            f"no frozen challenger: run 'ablate challenger freeze {experiment.folder} "
            f"--arm ARM --gates GATES.toml', then the holdout",
        )
    if "holdout" not in state.finished:
        raise InputError(
            experiment.path,
            f"the holdout has not been run to the end for challenger "
            f"{frozen['arm']!r}: run 'ablate run {experiment.folder} --split holdout'",
        )
    copy = gates_copy(experiment)
    gates = load_gates(copy)
    current = fingerprint(experiment, frozen["arm"], sha256_file(copy))
    changed = current.changes_from(frozen)
    if changed:
        raise refuse(
            AuditLog(experiment.folder),
            "gate",
            changed_file(experiment, current, frozen),
            f"{', '.join(changed)} changed after challenger {frozen['arm']!r} was frozen and the holdout "
            f"opened: needs fresh test data",
        )
    log = verified_log(experiment.folder, hashes=True)  # e.g. hypotheses edited after the holdout finished
    evaluated = {}
    for split in ("holdout", "challenge"):
        if split in state.finished:
            folder = _run_folder(experiment, split, state.finished[split]["run"])
            evaluation = evaluate_run(folder, experiment.score_options(), report_sections(folder))
            dither = dither_outcome(log, split, folder.root.name)
            evaluated[split] = (
                evaluation,
                evaluate_gates(evaluation, frozen["arm"], gates, baseline=BASELINE, dither=dither),
            )
    report = evaluated["holdout"][1]
    report.challenge = evaluated["challenge"][1] if "challenge" in evaluated else None
    for split, (evaluation, split_report) in evaluated.items():
        path = evaluation.folder.write_gates(split_report.to_json())
        log.append(
            "gate evaluated",
            split=split,
            run=evaluation.folder.root.name,
            verdict=split_report.verdict,
            challenger=frozen["arm"],
            failed=[g.name for g in split_report.gates if g.passed is False],
            hashes=[named("file", path, sha256_file(path), experiment.folder)],
        )
        write_reports(evaluation, report_sections(evaluation.folder))  # again, with the gates and this verdict
    return report


def dither_outcome(log: AuditLog, split: str, run: str) -> DitherOutcome | None:
    """What the audit log recorded of ``run``'s verdict under dither at the default level: for the undithered
    run and for each seed 1, 2, ..., the verdict the FIRST stability check that measured it logged (None:
    never measured). A later check never replaces a logged verdict: rerun files edited after a flip was
    logged, then measured again, cannot launder it."""
    from toolkit.audio.dither import DEFAULT_LEVEL_DBFS

    first: dict[int, str] = {}  # seed (0: undithered) -> verdict
    for entry in log.entries():
        data = entry.other
        if entry.event != "stability measured" or data.get("split") != split or data.get("run") != run:
            continue
        dither, verdicts = data.get("dither") or {}, list(data.get("verdicts") or ())
        seeds = [0, *(dither.get("seeds") or ())]
        if dither.get("level_dbfs") != DEFAULT_LEVEL_DBFS or len(verdicts) != len(seeds):
            continue  # another level: not what the gate pre-registered
        for seed, verdict in zip(seeds, verdicts):
            first.setdefault(seed, verdict)
    if 0 not in first:
        return None
    measured = 0
    while measured + 1 in first:
        measured += 1
    return DitherOutcome(tuple(first[seed] for seed in range(measured + 1)))
