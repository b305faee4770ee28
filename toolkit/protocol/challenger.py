"""Challenger freeze: the chosen arm's full configuration and the gates file, hashed and recorded.

The fingerprint is everything the holdout verdict depends on: the challenger's and the
baseline's resolved configuration (every stage parameter), the identity of every recognizer
they use (model, weight sha256, decoding), the seed and time tolerance, the gates file's
sha256, the manifest's sha256 and the scorer signature. The gates file is copied to
``experiments/NAME/protocol/gates.toml``, and that copy is what the gates read.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_bytes, atomic_write_json, config_hash, sha256_file
from toolkit.pipeline.experiment import Arm, Experiment
from toolkit.protocol.gates import load_gates
from toolkit.protocol.state import TEST_SPLITS, named, refuse, replay, verified_log

BASELINE = "baseline"
# What a change of each fingerprint field means, in the refusal.
FIELDS = {
    "config_sha256": "the challenger's or baseline's configuration (stages, recognizers, weights)",
    "gates_sha256": "the gates file",
    "manifest_sha256": "the manifest",
    "signature_hash": "the scorer options (signature)",
}


def protocol_dir(experiment: Experiment) -> Path:
    return experiment.folder / "protocol"


def gates_copy(experiment: Experiment) -> Path:
    return protocol_dir(experiment) / "gates.toml"


def challenger_file(experiment: Experiment) -> Path:
    return protocol_dir(experiment) / "challenger.json"


@dataclass(frozen=True)
class Fingerprint:
    """The hashes a frozen challenger is held to; ``config`` is the full resolved configuration."""

    arm: str
    baseline: str
    config: dict[str, Any]
    config_sha256: str
    gates_sha256: str
    manifest_sha256: str
    signature: str
    signature_hash: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def changes_from(self, frozen: dict[str, Any]) -> list[str]:
        """Which parts differ from a frozen record (empty when identical)."""
        changed = [what for key, what in FIELDS.items() if frozen.get(key) != getattr(self, key)]
        if frozen.get("arm") != self.arm:
            changed.insert(0, f"the challenger arm ({frozen.get('arm')} -> {self.arm})")
        return changed


def _recognizers_used(experiment: Experiment, arms: list[Arm]) -> list[str]:
    used = {experiment.primary}
    for arm in arms:
        component = arm.stage("second_model")
        if component is not None:
            used.add(component.config.recognizer)
    return sorted(used)


def fingerprint(experiment: Experiment, arm_name: str, gates_sha256: str) -> Fingerprint:
    """The fingerprint of ``arm_name`` against the baseline, as the experiment stands now."""
    from toolkit.corpus.manifest import load_manifest
    from toolkit.pipeline.recognizers import RecognizerPool
    from toolkit.scorer.signature import scorer_signature

    if BASELINE not in experiment.arms:
        raise InputError(
            experiment.path,
            f"the protocol compares a challenger with the arm '{BASELINE}', which this experiment does not declare",
        )
    if arm_name == BASELINE:
        raise InputError(experiment.path, "the baseline cannot be its own challenger; name another arm")
    challenger, baseline = experiment.select_arms([arm_name, BASELINE])
    identities = RecognizerPool(experiment).identities()
    config = {
        "challenger": challenger.to_json(),
        "baseline": baseline.to_json(),
        "recognizers": {name: identities[name] for name in _recognizers_used(experiment, [challenger, baseline])},
        "seed": experiment.seed,
        "time_tolerance_s": experiment.time_tolerance_s,
    }
    signature = scorer_signature(experiment.score_options())
    return Fingerprint(
        arm_name,
        BASELINE,
        config,
        config_hash(config),
        gates_sha256,
        load_manifest(experiment.manifest_path).sha256,
        signature.text,
        signature.hash,
    )


def note_manifest(experiment: Experiment, log: Any, state: Any) -> None:
    """Log the manifest the first time the experiment meets it, and that it was verified now."""
    from toolkit.corpus.manifest import load_manifest

    manifest = load_manifest(experiment.manifest_path)
    entry = named("manifest", experiment.manifest_path, manifest.sha256, experiment.folder)
    if manifest.sha256 not in state.manifests:
        log.append(
            "manifest frozen", manifest_sha256=manifest.sha256, hashes=[entry], recordings=len(manifest.recordings)
        )
        state.manifests.add(manifest.sha256)
    log.append("manifest verified", manifest_sha256=manifest.sha256, hashes=[entry])


def freeze_challenger(experiment: Experiment, arm_name: str, gates_path: str | Path) -> tuple[Fingerprint, bool]:
    """Freeze ``arm_name`` with ``gates_path``; returns the fingerprint and whether anything new was recorded.

    Refused (and logged) once a test split was opened in this protocol record, unless the
    manifest is new and none of its test recordings was ever opened: that starts a new record.
    """
    from toolkit.corpus.manifest import load_manifest

    gates = load_gates(gates_path)  # a typo stops here, nothing written
    log = verified_log(experiment.folder)
    state = replay(log)
    current = fingerprint(experiment, arm_name, gates.sha256)
    frozen = state.challenger
    if frozen is not None and not current.changes_from(frozen):
        return current, False
    if frozen is not None and state.test_opened:
        manifest = load_manifest(experiment.manifest_path)
        test_audio = {e.sha256 for e in manifest.recordings if e.split in TEST_SPLITS}
        if current.manifest_sha256 == frozen["manifest_sha256"] or test_audio & state.opened_audio:
            changed = ", ".join(current.changes_from(frozen))
            raise refuse(
                log,
                "challenger freeze",
                gates_path,
                f"the {' and '.join(sorted(state.opened))} was already opened for challenger "
                f"{frozen['arm']!r}; changing {changed} needs fresh test data (a new manifest whose "
                f"holdout recordings were never opened, which starts a new protocol record)",
            )
        log.append(
            "protocol record started",
            manifest_sha256=current.manifest_sha256,
            reason="new manifest with test recordings never opened before",
        )
    manifest_obj = load_manifest(experiment.manifest_path)
    manifest_obj.require_verified()
    note_manifest(experiment, log, state)
    copy = gates_copy(experiment)
    if Path(gates_path).resolve() != copy.resolve():
        atomic_write_bytes(copy, Path(gates_path).read_bytes())
    record = {**current.to_json(), "gates_source": str(gates_path)}
    atomic_write_json(challenger_file(experiment), record)
    log.append(
        "challenger frozen",
        challenger={k: v for k, v in record.items() if k != "config"},
        replaces=frozen.get("arm") if frozen else None,
        hashes=[
            named("file", copy, gates.sha256, experiment.folder),
            named("file", challenger_file(experiment), sha256_file(challenger_file(experiment)), experiment.folder),
            named("manifest", experiment.manifest_path, current.manifest_sha256, experiment.folder),
        ],
    )
    return current, True
