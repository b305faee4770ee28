"""Test splits (holdout, challenge) run once, for the baseline and the frozen challenger only.

:func:`open_test_split` is called before any decoding: it refuses without a frozen challenger,
for any other arm set, and when anything the verdict depends on changed since the freeze
(after opening: "needs fresh test data"). A second call with identical hashes resumes the
same run (the engine recomputes nothing that finished). Tuning runs are free and logged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit.core.files import sha256_file
from toolkit.pipeline.experiment import Experiment
from toolkit.protocol.challenger import BASELINE, challenger_file, fingerprint, gates_copy, note_manifest
from toolkit.protocol.state import TEST_SPLITS, hypotheses_digest, named, refuse, replay, verified_log

if TYPE_CHECKING:
    from toolkit.pipeline.engine import RunSummary


def open_test_split(experiment: Experiment, split: str, arm_names: list[str] | None) -> list[str]:
    """Check the protocol before a run of ``split``; returns the arms to run (baseline and challenger)."""
    from toolkit.corpus.manifest import load_manifest

    log = verified_log(experiment.folder)
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
    changed = current.changes_from(frozen)
    if changed and split in state.opened:
        raise refuse(
            log,
            command,
            experiment.path,
            f"the {split} was already opened; {', '.join(changed)} changed since: needs fresh test data "
            f"(a new manifest with new recordings, which starts a new protocol record)",
        )
    if changed:
        raise refuse(
            log,
            command,
            experiment.path,
            f"{', '.join(changed)} changed since challenger {frozen['arm']!r} was frozen: "
            f"freeze the challenger again before opening the {split}",
        )
    audio = sorted(e.sha256 for e in manifest.split(split))
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
        hashes=[
            named("file", challenger_file(experiment), sha256_file(challenger_file(experiment)), experiment.folder),
            named("file", copy, gates_sha, experiment.folder),
        ],
    )
    return arms


def record_run(experiment: Experiment, split: str, summary: RunSummary) -> None:
    """Log a finished run: a test split's hypotheses are hashed, so later edits are caught."""
    log = verified_log(experiment.folder)
    state = replay(log)
    note_manifest(experiment, log, state)
    fields = {
        "split": split,
        "arms": summary.arms,
        "run": summary.folder.root.name,
        "computed": summary.computed,
        "reused": summary.reused,
    }
    if split in TEST_SPLITS:
        digest = hypotheses_digest(summary.folder.root)
        log.append(
            f"{split} finished", **fields, hashes=[named("hypotheses", summary.folder.root, digest, experiment.folder)]
        )
    else:
        log.append(f"{split} run", **fields)
