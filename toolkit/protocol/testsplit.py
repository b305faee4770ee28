"""Test splits (holdout, challenge) run once, for the baseline and the frozen challenger only.

:func:`open_test_split` is called before any decoding: it refuses without a frozen challenger,
for any other arm set, and when anything the verdict depends on changed since the freeze
(after opening: "needs fresh test data"). A test split is identified by its recordings' audio
content, and its opening is claimed in a ledger beside the manifest (toolkit.protocol.ledger),
so no second experiment or protocol record opens it again. A second call with identical hashes
resumes the same run: it reuses only results whose files still hash to what the audit log
recorded (toolkit.protocol.evidence). Tuning runs are free and logged.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from toolkit.core.files import sha256_file
from toolkit.corpus.content import split_content
from toolkit.pipeline.experiment import Experiment
from toolkit.protocol.audit import AuditLog
from toolkit.protocol.challenger import (
    challenger_file,
    changed_import,
    fingerprint,
    gates_copy,
    note_manifest,
    refusal_subject,
)
from toolkit.protocol.evidence import EvidenceChanged, EvidenceGuard, recorded_evidence
from toolkit.protocol.ledger import Opening, claim
from toolkit.protocol.lock import protocol_lock
from toolkit.protocol.state import TEST_SPLITS, named, refuse, replay, run_hashes, verified_log
from toolkit.runs.record import BASELINE

if TYPE_CHECKING:
    from toolkit.pipeline.engine import RunSummary


def open_test_split(
    experiment: Experiment, split: str, arm_names: list[str] | None, *, demo: bool = False
) -> list[str]:
    """Check the protocol before a run of ``split``; returns the arms to run (baseline and challenger).

    ``demo``: the demo's synthetic test data (toolkit.protocol.ledger), said so in the log and every verdict."""
    from toolkit.corpus.manifest import load_manifest

    log = verified_log(experiment.folder, whole=split in TEST_SPLITS)
    manifest = load_manifest(experiment.manifest_path)
    if split not in TEST_SPLITS or not manifest.split(split):  # an empty split is the engine's error to name
        return arm_names or list(experiment.arms)
    state = replay(log)
    command = f"run --split {split}"
    frozen = state.challenger
    if frozen is None:
        raise refuse(
            log,
            command,
            experiment.path,
            f"the {split} split is refused without a frozen challenger: run 'ablate challenger freeze "
            f"{experiment.folder} --arm ARM --gates GATES.toml' first",
        )
    arms = [BASELINE, frozen["arm"]]
    if arm_names and sorted(set(arm_names)) != sorted(arms):
        raise refuse(
            log,
            command,
            experiment.path,
            f"the {split} split runs the baseline and the frozen challenger only ({', '.join(arms)}), "
            f"not {', '.join(arm_names)}",
        )
    copy = gates_copy(experiment)
    gates_sha = sha256_file(copy) if copy.is_file() else "missing"
    current = fingerprint(experiment, frozen["arm"], gates_sha)
    refused_file, changed = refusal_subject(
        experiment, current, frozen, changed_import(experiment, current) or experiment.path
    )
    if changed and split in state.opened:
        raise refuse(
            log,
            command,
            refused_file,
            f"the {split} was already opened; {', '.join(changed)} changed since: needs fresh test data "
            f"(a new manifest with new recordings, which starts a new protocol record)",
        )
    if changed:
        raise refuse(
            log,
            command,
            refused_file,
            f"{', '.join(changed)} changed since challenger {frozen['arm']!r} was frozen: "
            f"freeze the challenger again before opening the {split}",
        )
    audio = sorted(e.sha256 for e in manifest.split(split))
    content = split_content(manifest, split)
    opening = test_opening(experiment, state.record_id, split, frozen["arm"], current.config_sha256, content, demo)
    claim(experiment.manifest_path, opening)
    event = "resumed" if split in state.opened else "opened"
    log.append(
        f"{split} {event}",
        split=split,
        arms=arms,
        config_sha256=current.config_sha256,
        gates_sha256=current.gates_sha256,
        manifest_sha256=current.manifest_sha256,
        signature_hash=current.signature_hash,
        audio_sha256=audio,
        audio_content_sha256=content,
        **({"demo": True} if demo else {}),
        hashes=[
            named("file", challenger_file(experiment), sha256_file(challenger_file(experiment)), experiment.folder),
            named("file", copy, gates_sha, experiment.folder),
        ],
    )
    return arms


def test_opening(
    experiment: Experiment,
    record_id: str | None,
    split: str,
    challenger: str,
    config_sha256: str,
    content: list[str],
    demo: bool,
) -> Opening:
    """The ledger line of this experiment's opening of ``split`` by protocol record ``record_id``."""
    folder = str(experiment.folder.resolve())
    return Opening(folder, record_id or "", split, challenger, config_sha256, tuple(content), demo=demo)


def run_split(
    experiment: Experiment, split: str, arm_names: list[str] | None, *, demo: bool = False, **engine: Any
) -> RunSummary:
    """Run ``split`` under the protocol and record it (``engine``: run_experiment's keyword arguments).

    A test split holds the protocol lock from its opening to its record and reuses only results the
    audit log recorded; a changed one stops the run, and the refusal is logged. A run with failed
    recordings is not recorded (a rerun completes it).
    """
    from toolkit.pipeline.engine import run_experiment

    test = split in TEST_SPLITS
    with protocol_lock(experiment.folder, f"ablate run --split {split}") if test else nullcontext():
        arms = open_test_split(experiment, split, arm_names, demo=demo)
        try:
            summary = run_experiment(experiment, split, arms, guard=evidence_guard(experiment, split), **engine)
        except EvidenceChanged as error:
            AuditLog(experiment.folder).append("refusal", command=f"run --split {split}", reason=str(error))
            raise
        if not summary.failures:
            record_run(experiment, split, summary)
    return summary


def evidence_guard(experiment: Experiment, split: str) -> EvidenceGuard | None:
    """For a test split, the protocol's guard over the run's stored results (toolkit.protocol.evidence)."""
    if split not in TEST_SPLITS:
        return None
    return EvidenceGuard(experiment.folder, split, recorded_evidence(verified_log(experiment.folder)))


def record_run(experiment: Experiment, split: str, summary: RunSummary) -> None:
    """Log a finished run. A test split's result files are checked against what was recorded while it ran
    and any not yet recorded are hashed now, so a later edit is caught and never re-recorded (the refusal
    is logged instead)."""
    test = split in TEST_SPLITS
    log = verified_log(experiment.folder, whole=test)
    hashes = []
    if test:
        guard = EvidenceGuard(experiment.folder, split, recorded_evidence(log))
        failed = {(f.arm, f.recording) for f in summary.arm_failures}
        try:
            for rid in summary.recordings:
                hashes += guard.recorded_now(summary.folder, rid, [a for a in summary.arms if (a, rid) not in failed])
        except EvidenceChanged as error:
            log.append("refusal", command=f"record the {split} run {summary.folder.root.name}", reason=str(error))
            raise
    note_manifest(experiment, log, replay(log))
    fields = {
        "split": split,
        "arms": summary.arms,
        "run": summary.folder.root.name,
        "computed": summary.computed,
        "reused": summary.reused,
    }
    if test:  # what the gate reads as this run: its record and its hypotheses, named so an edit is caught
        hashes += run_hashes(experiment.folder, [summary.folder])
        log.append(f"{split} finished", **fields, hashes=hashes)
    else:
        log.append(f"{split} run", **fields)
