"""The gate verdict on the holdout run of the frozen challenger (and, apart, on the challenge split).

Before any number is computed the audit log must verify (its chain, its head and every file it
names: the run's record and hypotheses, each result, each stability rerun), the gates copy and
the scorer signature must be the frozen ones, the test recordings' audio and references must
still hash to the manifest, this record's opening is claimed again in both openings ledgers
(toolkit.protocol.ledger), and the run folder must hold a hypothesis for every test recording of
the manifest for both arms. A stability outcome is judged again from its rerun folders
(toolkit.protocol.dither_evidence), never read from the log. The verdict is written to ``scores/gates.json``
in the run folder (the report's gates section reads it) and logged.
"""

from __future__ import annotations

from toolkit.core.errors import InputError
from toolkit.core.files import sha256_file
from toolkit.pipeline.experiment import Experiment
from toolkit.protocol.audit import AuditLog
from toolkit.protocol.challenger import changed_file, fingerprint, gates_copy, refusal_subject
from toolkit.protocol.dither_evidence import dither_outcome
from toolkit.protocol.gates import GateReport, evaluate_gates
from toolkit.protocol.gates_file import load_gates
from toolkit.protocol.heldout_inputs import require_test_inputs
from toolkit.protocol.ledger import KnownOpenings, claim
from toolkit.protocol.lock import protocol_lock
from toolkit.protocol.planning import planning
from toolkit.protocol.recorded_runs import recorded_run
from toolkit.protocol.state import ProtocolState, named, refuse, replay, verified_log
from toolkit.protocol.testsplit import test_opening
from toolkit.runs.record import BASELINE

VERDICT = "verdict"  # the kind of hash a "gate evaluated" entry names its scores/gates.json by


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
    refused_file, changed = refusal_subject(experiment, current, frozen, changed_file(experiment, current, frozen))
    if changed:
        raise refuse(
            AuditLog(experiment.folder),
            "gate",
            refused_file,
            f"{', '.join(changed)} changed after challenger {frozen['arm']!r} was frozen and the holdout "
            f"opened: needs fresh test data",
        )
    # Every named file checked (e.g. hypotheses or run.json edited after the holdout), but the verdict files this
    # gate writes again: a gate killed between writing one and logging it leaves it newer than its entry.
    log = verified_log(experiment.folder, hashes=True, regenerated=frozenset({VERDICT}))
    require_test_inputs(experiment.manifest_path, state.finished)  # the audio and references the verdict rests on
    openings = " ; ".join(reclaimed(experiment, state, split).text() for split in state.finished)
    evaluated = {}
    for split in ("holdout", "challenge"):
        if split in state.finished:
            folder = recorded_run(experiment, split, state.finished[split]["run"])
            evaluation = evaluate_run(folder, experiment.score_options(), report_sections(folder))
            dither = dither_outcome(experiment, log, evaluation, frozen["arm"], gates)
            split_report = evaluate_gates(evaluation, frozen["arm"], gates, baseline=BASELINE, dither=dither)
            split_report.openings = openings
            split_report.planning = planning(state.frozen_entry)
            evaluated[split] = (evaluation, split_report)
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
            hashes=[named(VERDICT, path, sha256_file(path), experiment.folder)],
        )
    report.audit_head = log.published_head()
    for evaluation, _ in evaluated.values():
        write_reports(evaluation, report_sections(evaluation.folder))  # again, with the gates and this verdict
    return report


def reclaimed(experiment: Experiment, state: ProtocolState, split: str) -> KnownOpenings:
    """This record's opening of ``split`` claimed again in both ledgers, as the audit log recorded it: refused if
    another record opened the same content since; restored in a ledger that lost it; what is known, for the verdict."""
    from toolkit.corpus.content import split_content
    from toolkit.corpus.manifest import load_manifest

    opened = state.opened[split]
    content = list(opened.get("audio_content_sha256", []))
    if split_content(load_manifest(experiment.manifest_path), split) != content:
        raise InputError(
            experiment.manifest_path,
            f"the {split} recordings of this manifest are not the ones the audit log opened (by audio content)",
        )
    arm = state.challenger["arm"] if state.challenger else ""
    opening = test_opening(
        experiment, state.record_id, split, arm, opened["config_sha256"], content, bool(opened.get("demo"))
    )
    return claim(experiment.manifest_path, opening)
