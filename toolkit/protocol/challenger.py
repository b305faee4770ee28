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

from toolkit.core.config import build_config
from toolkit.core.data_files import read_json
from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_bytes, atomic_write_json, config_hash, sha256_file
from toolkit.pipeline.experiment import Arm, Experiment
from toolkit.protocol.calibration import tuning_calibration
from toolkit.protocol.gates_file import DITHER_GATE, WER_GATE, load_gates
from toolkit.protocol.lock import protocol_lock
from toolkit.protocol.power_check import holdout_power
from toolkit.protocol.state import TEST_SPLITS, named, refuse, replay, verified_log
from toolkit.runs.record import BASELINE

# What a change of each fingerprint field means, in the refusal.
FIELDS = {
    "config_sha256": "the challenger's or baseline's configuration (stages, recognizers, weights, imported files)",
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


@dataclass(frozen=True)
class ChallengerRecord:
    """``challenger.json``: the frozen fingerprint and the gates file it was frozen with; one reader, one writer."""

    fingerprint: Fingerprint
    gates_source: str

    def to_json(self) -> dict[str, Any]:
        return {**self.fingerprint.to_json(), "gates_source": self.gates_source}

    def write(self, path: Path) -> Path:
        return atomic_write_json(path, self.to_json())

    @classmethod
    def read(cls, path: Path) -> ChallengerRecord:
        """The checked record at ``path``; a missing, malformed or incomplete file is one InputError naming it."""
        if not path.is_file():
            raise InputError(path, "no frozen challenger here (run 'ablate challenger freeze' first)")
        data = read_json(path)
        if not isinstance(data, dict) or not isinstance(data.get("gates_source"), str):
            raise InputError(path, "not a challenger record: expected an object with a string 'gates_source'")
        fields = {key: value for key, value in data.items() if key != "gates_source"}
        fingerprint = build_config(Fingerprint, fields, path=path, where="challenger")
        for role in ("baseline", "challenger"):
            arm = fingerprint.config.get(role)
            if not isinstance(arm, dict) or not isinstance(arm.get("name"), str):
                raise InputError(path, f"not a challenger record: config.{role} must be an arm with a name")
        return cls(fingerprint, data["gates_source"])


def changed_file(experiment: Experiment, current: Fingerprint, frozen: dict[str, Any]) -> Path:
    """The file a refusal after a change should name: an imported file, the gates copy, the manifest, or the
    experiment file."""
    if current.config_sha256 != frozen.get("config_sha256"):
        return changed_import(experiment, current) or experiment.path
    if current.gates_sha256 != frozen.get("gates_sha256"):
        return gates_copy(experiment)
    if current.manifest_sha256 != frozen.get("manifest_sha256"):
        return experiment.manifest_path
    return experiment.path  # the scorer options


def changed_import(experiment: Experiment, current: Fingerprint) -> Path | None:
    """The first file of the imported challenger that was added, removed or replaced since the freeze (its
    ``import.json`` when only the record's other fields changed); None when the import is as frozen."""
    from toolkit.pipeline.imported import RECORD

    arm = experiment.arms.get(current.arm)
    if arm is None or arm.imported is None or not challenger_file(experiment).is_file():
        return None
    was = ChallengerRecord.read(challenger_file(experiment)).fingerprint.config["challenger"].get("imported")
    now = current.config["challenger"]["imported"]
    if was == now:
        return None
    before = {f["file"]: f["sha256"] for f in was["files"]} if isinstance(was, dict) else {}
    after = {f["file"]: f["sha256"] for f in now["files"]}
    changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    return arm.imported.folder / (changed[0] if changed else RECORD)


def refusal_subject(
    experiment: Experiment, current: Fingerprint, frozen: dict[str, Any], default: Path
) -> tuple[Path, list[str]]:
    """What a refusal after a change names, and the changes it lists: where a file of an external command
    recognizer differs from the frozen challenger's (challenger.json, when it is the one the audit log froze),
    that file, named in place of "the configuration" with both hashes; else ``default``."""
    from toolkit.pipeline.recognizers import program_file_path

    changed = current.changes_from(frozen)
    if FIELDS["config_sha256"] not in changed:
        return default, changed
    try:
        record = ChallengerRecord.read(challenger_file(experiment)).fingerprint
    except InputError:
        return default, changed
    if record.config_sha256 != frozen.get("config_sha256"):
        return default, changed
    files = changed_program_files(current.config, record.config)
    if not files:
        return default, changed
    named = ", ".join(
        f"recognizer {name}'s {role} {file} (sha256 {then[:12]}… when frozen, {now[:12]}… now)"
        for name, role, file, then, now in files
    )
    _, role, file, _, _ = files[0]
    return program_file_path(experiment, role, file), [named if c == FIELDS["config_sha256"] else c for c in changed]


def changed_program_files(config: dict[str, Any], frozen: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """The files of an external command recognizer (toolkit.asr.program_files) whose sha256 differs between a
    frozen configuration and ``config``: recognizer, role, name as written, sha256 when frozen, sha256 now."""
    before = frozen.get("recognizers", {})
    found = []
    for name, identity in config.get("recognizers", {}).items():
        then = {(f["role"], f["name"]): f["sha256"] for f in before.get(name, {}).get("files", [])}
        for file in identity.get("files", []):
            old = then.get((file["role"], file["name"]))
            if old is not None and old != file["sha256"]:
                found.append((name, file["role"], file["name"], old, file["sha256"]))
    return found


def _recognizers_used(experiment: Experiment, arms: list[Arm]) -> list[str]:
    """The recognizers ``arms`` decode with: the primary and those their stages name."""
    used = {experiment.primary}
    for arm in arms:
        for component in arm.components:
            used.update(component.stage.recognizers(component.config))
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
    for arm in (challenger, baseline):  # every imported file hashes to its record before anything rests on it
        if arm.imported is not None:
            arm.imported.verify_files()
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
    """Log the manifest the first time the experiment uses it ("registered": it was frozen earlier, by
    ``ablate manifest freeze``), and that it was verified now."""
    from toolkit.corpus.manifest import load_manifest

    manifest = load_manifest(experiment.manifest_path)
    entry = named("manifest", experiment.manifest_path, manifest.sha256, experiment.folder)
    if manifest.sha256 not in state.manifests:
        log.append(
            "manifest registered", manifest_sha256=manifest.sha256, hashes=[entry], recordings=len(manifest.recordings)
        )
        state.manifests.add(manifest.sha256)
    log.append("manifest verified", manifest_sha256=manifest.sha256, hashes=[entry])


def freeze_challenger(
    experiment: Experiment, arm_name: str, gates_path: str | Path, *, allow_underpowered: bool = False
) -> tuple[Fingerprint, bool]:
    """Freeze ``arm_name`` with ``gates_path``; returns the fingerprint and whether anything new was recorded.

    Refused (and logged) once a test split was opened in this protocol record, unless the
    manifest is new and none of its test recordings (by audio content) was ever opened: that
    starts a new record. Gates the holdout's reference formats can never measure are refused
    before anything is opened, and so is a holdout the tuning run shows too small to detect the
    gates' own WER threshold (toolkit.protocol.power_check) unless ``allow_underpowered``. The
    power plan and the matching calibration (toolkit.protocol.calibration) go into the freeze's
    audit entry, where the verdict reads them. Holds the protocol lock.
    """
    gates = load_gates(gates_path)  # a typo stops here, nothing written
    with protocol_lock(experiment.folder, "ablate challenger freeze"):
        return _freeze(experiment, arm_name, gates_path, gates, allow_underpowered)


def _freeze(
    experiment: Experiment, arm_name: str, gates_path: str | Path, gates: Any, allow_underpowered: bool
) -> tuple[Fingerprint, bool]:
    from toolkit.corpus.content import audio_content_sha256
    from toolkit.corpus.manifest import load_manifest

    log = verified_log(experiment.folder)
    state = replay(log)
    current = fingerprint(experiment, arm_name, gates.sha256)
    frozen = state.challenger
    if frozen is not None and not current.changes_from(frozen):
        return current, False
    manifest = load_manifest(experiment.manifest_path)
    challenger = experiment.arms[arm_name]
    unmeasurable = (
        unmeasurable_gates(gates, manifest)
        or derived_too_coarse(gates, manifest)
        or (imported_unmeasurable(gates) if challenger.imported is not None else [])
    )
    if unmeasurable:
        raise refuse(log, "challenger freeze", gates_path, unmeasurable[0])
    power = holdout_power(experiment, arm_name, gates)
    if power.underpowered and not allow_underpowered:
        raise refuse(
            log,
            "challenger freeze",
            gates_path,
            (
                f"the holdout's power cannot be planned: {power.text()}"
                if power.no_spread
                else f"the holdout is too small to detect its own {WER_GATE} threshold: {power.text()}; enlarge the "
                "holdout"
            )
            + ", or pass --allow-underpowered (the verdict will say so)",
        )
    if frozen is not None and state.test_opened:
        tests = [e for e in manifest.recordings if e.split in TEST_SPLITS]
        reopened = {e.sha256 for e in tests} & state.opened_audio or (
            {audio_content_sha256(e) for e in tests} & state.opened_content
        )
        if current.manifest_sha256 == frozen["manifest_sha256"] or reopened:
            changed = ", ".join(current.changes_from(frozen))
            raise refuse(
                log,
                "challenger freeze",
                gates_path,
                f"the {' and '.join(sorted(state.opened))} was already opened for challenger "
                f"{frozen['arm']!r}; changing {changed} needs fresh test data (a new manifest whose "
                f"test recordings, by audio content, were never opened, which starts a new protocol record)",
            )
        log.append(
            "protocol record started",
            manifest_sha256=current.manifest_sha256,
            reason="new manifest with test recordings never opened before",
        )
    manifest.require_verified()
    note_manifest(experiment, log, state)
    copy = gates_copy(experiment)
    if Path(gates_path).resolve() != copy.resolve():
        atomic_write_bytes(copy, Path(gates_path).read_bytes())
    record = ChallengerRecord(current, str(gates_path))
    record.write(challenger_file(experiment))
    log.append(
        "challenger frozen",
        challenger={k: v for k, v in record.to_json().items() if k != "config"},
        replaces=frozen.get("arm") if frozen else None,
        tuning_note=tuning_note(experiment, arm_name),
        power=power.to_json(),
        underpowered_allowed=power.underpowered,
        calibration=tuning_calibration(experiment, arm_name, gates),
        hashes=[
            named("file", copy, gates.sha256, experiment.folder),
            named("file", challenger_file(experiment), sha256_file(challenger_file(experiment)), experiment.folder),
            named("manifest", experiment.manifest_path, current.manifest_sha256, experiment.folder),
            *imported_hashes(experiment, challenger),
        ],
    )
    return current, True


def imported_hashes(experiment: Experiment, arm: Arm) -> list[dict[str, str]]:
    """An imported arm's files as the freeze entry names them, so the log itself holds their hashes: a file
    replaced after the freeze fails every check of the log (``audit verify``, the gate), naming it."""
    if arm.imported is None:
        return []
    return [named("file", arm.imported.path(f), f.sha256, experiment.folder) for f in arm.imported.record.files]


# Gates an imported challenger can never measure: the toolkit never saw its windows or its VAD, and cannot decode
# its audio again under dither.
_IMPORTED_BLIND = {
    "seam_omissions": "its window seams",
    "seam_duplications": "its window seams",
    "vad_speech_recall": "what audio its recognizer was given",
    DITHER_GATE: "a re-decoding under dither",
}


def imported_unmeasurable(gates: Any) -> list[str]:
    """Applicable gates an imported challenger can never be measured on: one refusal line each (a value the
    toolkit made up, no seams or all audio decoded, would pass them)."""
    return [
        f"gate {name} can never be measured on an imported challenger: it needs {needs}, which hypotheses made "
        "elsewhere do not carry; declare it 'applicable = false' with a reason in the gates file"
        for name, needs in _IMPORTED_BLIND.items()
        if (gate := gates.gates.get(name)) is not None and gate.applicable
    ]


# What a gate needs from the references, and the reference formats that can never hold it.
_NEEDS = {
    "onset_p95_s": ("timed reference words", ("stm", "text")),
    "drift_s_per_min": ("timed reference words", ("stm", "text")),
    "vad_speech_recall": ("an annotated speech tier", ("stm", "text")),
}


def unmeasurable_gates(gates: Any, manifest: Any) -> list[str]:
    """Applicable gates the test splits' reference formats can never measure (read from the manifest's
    file names, not the references' contents): one refusal line each."""
    problems = []
    for split in TEST_SPLITS:
        formats = {entry.reference_role for entry in manifest.split(split)}
        for name, (needs, lacking) in _NEEDS.items():
            gate = gates.gates.get(name)
            blind = sorted(formats & set(lacking))
            if gate is not None and gate.applicable and blind:
                problems.append(
                    f"gate {name} can never be measured on the {split}: it needs {needs}, which its "
                    f"{' and '.join(blind)} references do not have; declare it 'applicable = false' with a "
                    "reason in the gates file, or use TextGrid references"
                )
    return problems


def derived_too_coarse(gates: Any, manifest: Any) -> list[str]:
    """Applicable time gates whose threshold is finer than the measured accuracy of a test recording's word times
    derived by forced alignment (a TextGrid's ``derived_times`` tier): one refusal line each. The drift gate is
    judged over the whole recording, the most drift its threshold can allow there; at gate time, over the
    reference's span."""
    from toolkit.protocol.gate_measures import too_coarse

    derived = [
        (entry, found)
        for entry in manifest.recordings
        if entry.split in TEST_SPLITS
        and entry.reference_role == "textgrid"
        and (found := entry.load_reference().derived_times) is not None
    ]
    problems = []
    for name, per_minute in (("onset_p95_s", False), ("drift_s_per_min", True)):
        gate = gates.gates.get(name)
        if gate is None or not gate.applicable or gate.threshold is None:
            continue
        for entry, times in derived:
            if per_minute:
                allowed = abs(gate.threshold) * entry.duration / 60
                judged = f"{allowed:.2f} s ({gate.threshold:g} s/min over {entry.id})"
            else:
                allowed, judged = gate.threshold, f"{gate.threshold:g} s"
            if allowed < times.error_bound_s:
                problems.append(f"gate {name} on the {entry.split}'s {entry.id}: {too_coarse(times, judged)}")
                break
    return problems


def tuning_note(experiment: Experiment, arm_name: str) -> str | None:
    """A line when another arm had the lowest WER on the split's tuning run (None when ``arm_name`` did);
    that run is the one ``ablate explain`` reads (runs.folder.latest_run: never a stability rerun)."""
    from toolkit.runs.folder import latest_run

    try:
        run = latest_run(experiment.folder, "tuning", [arm_name])
        _, aggregate = run.read_score_tables()
    except InputError:
        return None
    overall = aggregate[aggregate["stratum"] == "all"].dropna(subset=["wer"])
    wers = {str(arm): float(wer) for arm, wer in zip(overall["arm"], overall["wer"], strict=True)}
    if arm_name not in wers:
        return None
    best = min(wers, key=lambda arm: (wers[arm], arm))
    if wers[arm_name] <= wers[best]:
        return None
    return (
        f"note: {best!r} had the lowest tuning WER ({100 * wers[best]:.1f}%), not {arm_name!r} "
        f"({100 * wers[arm_name]:.1f}%), in {run.root.name}"
    )
