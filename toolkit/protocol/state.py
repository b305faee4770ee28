"""The protocol state of an experiment, replayed from its audit log, and the hashes its entries name.

A *protocol record* runs from a challenger freeze to its gate verdict on one set of test
data. The state says which challenger is frozen (with which hashes), which test splits were
opened and finished in the current record, and every test recording ever opened (a new
record needs test recordings none of which was opened before).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.core.errors import InputError, ToolkitError
from toolkit.core.files import config_hash, sha256_file
from toolkit.core.json_records import record_to_json
from toolkit.protocol.audit import AuditLog, Entry, verify
from toolkit.runs.folder import RunFolder

TEST_SPLITS = ("holdout", "challenge")


def hypotheses_digest(run_root: Path) -> str | None:
    """One sha256 over every hypothesis file of a run folder (relative path and content hash)."""
    folder = run_root / "hypotheses"
    if not folder.is_dir():
        return None
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))
    return config_hash([[p.relative_to(folder).as_posix(), sha256_file(p)] for p in files])


def current_hash(kind: str, path: Path) -> str | None:
    """What a named thing hashes to on disk now: a file, a manifest (its content hash) or a run's hypotheses."""
    if kind == "hypotheses":
        return hypotheses_digest(path)
    if not path.is_file():
        return None
    if kind == "manifest":
        from toolkit.corpus.manifest import load_manifest

        try:
            return load_manifest(path).sha256
        except ToolkitError:
            return "unreadable or edited after freezing"
    return sha256_file(path)


def named(kind: str, path: Path, sha256: str, experiment_folder: Path) -> dict[str, str]:
    """A hash entry for the audit log, its path relative to the experiment folder."""
    relative = os.path.relpath(Path(path).resolve(), experiment_folder.resolve())
    return {"kind": kind, "path": Path(relative).as_posix(), "sha256": sha256}


def run_hashes(experiment_folder: Path, folders: list[RunFolder]) -> list[dict[str, str]]:
    """What an entry names of each run it records or measured: its run.json and its hypotheses' digest."""
    hashes = []
    for folder in folders:
        hashes.append(named("file", folder.record, sha256_file(folder.record), experiment_folder))
        hashes.append(named("hypotheses", folder.root, hypotheses_digest(folder.root) or "none", experiment_folder))
    return hashes


@dataclass
class ProtocolState:
    """The current protocol record: the frozen challenger (and the id of its freeze), the test splits
    opened and finished, and every test recording ever opened, by file and by audio content."""

    challenger: dict[str, Any] | None = None
    frozen_entry: dict[str, Any] = field(default_factory=dict)  # the freeze's whole entry: power, calibration
    record_id: str | None = None
    opened: dict[str, dict[str, Any]] = field(default_factory=dict)
    finished: dict[str, dict[str, Any]] = field(default_factory=dict)
    opened_audio: set[str] = field(default_factory=set)
    opened_content: set[str] = field(default_factory=set)
    manifests: set[str] = field(default_factory=set)

    @property
    def test_opened(self) -> bool:
        return bool(self.opened)


def verified_log(
    experiment_folder: Path, *, hashes: bool = False, whole: bool = True, regenerated: frozenset[str] = frozenset()
) -> AuditLog:
    """The experiment's audit log after checking its chain (an edited log stops everything).

    With ``hashes`` every hash it names is checked against the disk too; protocol commands
    that compare hashes themselves (freeze, test-split guard) skip that, so their refusal can
    say what changed. With ``whole`` (every protocol command but a tuning run's record) a
    protocol record the log does not hold (a frozen challenger, a test-split run) is refused:
    the log was deleted or replaced.
    """
    log = AuditLog(experiment_folder)
    verify(log, current_hash if hashes else None, regenerated)
    if whole:
        require_whole(log, replay(log))
    return log


def require_whole(log: AuditLog, state: ProtocolState) -> None:
    """Refuse a challenger file or a test-split run that the audit log does not record."""
    challenger = log.folder / "protocol" / "challenger.json"
    deleted = (
        "the audit log does not record it: the log was deleted or replaced, so what the protocol promised "
        "cannot be checked"
    )
    if challenger.is_file() and state.challenger is None and not _ever(log, "challenger frozen"):
        raise ProtocolError(
            challenger,
            f"a frozen challenger is here but {deleted}; restore the log, or use fresh "
            "test data in a new experiment folder",
        )
    runs = log.folder / "runs"
    for split in TEST_SPLITS:
        held = [path for path in runs.glob(f"{split}-*") if (path / "run.json").is_file()] if runs.is_dir() else []
        if held and not _ever(log, f"{split} opened"):
            raise ProtocolError(
                held[0],
                f"a {split} run is here but {deleted}; restore the log, or use fresh "
                "test data in a new experiment folder",
            )


def _ever(log: AuditLog, event: str) -> bool:
    return any(entry.event == event for entry in log.entries())


def replay(log: AuditLog) -> ProtocolState:
    """The current protocol record's state from the log's entries, each checked to be one the protocol writes in
    the state it finds (``_check_step``): a line that the toolkit never writes there was written by hand."""
    state = ProtocolState()
    for entry in log.entries():
        data = entry.other
        _check_step(log, state, entry)
        if entry.event == "protocol record started":
            state.challenger, state.frozen_entry, state.opened, state.finished = None, {}, {}, {}
        elif entry.event in ("manifest registered", "manifest frozen"):  # the older logs' name
            state.manifests.add(data["manifest_sha256"])
        elif entry.event == "challenger frozen":
            state.challenger, state.record_id = data["challenger"], config_hash(record_to_json(entry))[:16]
            state.frozen_entry = data
        elif entry.event.endswith(" opened") and data.get("split") in TEST_SPLITS:
            state.opened[data["split"]] = data
            state.opened_audio.update(data.get("audio_sha256", []))
            state.opened_content.update(data.get("audio_content_sha256", []))
        elif entry.event.endswith(" finished") and data.get("split") in TEST_SPLITS:
            state.finished[data["split"]] = data
    return state


# What the opening of a test split records of the frozen challenger it opened for.
OPENED_UNDER = ("config_sha256", "gates_sha256", "manifest_sha256", "signature_hash")


def _check_step(log: AuditLog, state: ProtocolState, entry: Entry) -> None:
    """Refuse an entry the protocol never writes in ``state``: a challenger frozen after a test split was opened in
    the same record, a test split opened twice or for other hashes than the frozen ones, or on content an earlier
    record opened, a run finished that was never opened, a new record while nothing was opened."""
    data, event, split = entry.other, entry.event, entry.other.get("split")
    problem = None
    if event == "challenger frozen" and state.opened:
        problem = f"freezes a challenger after the {' and '.join(sorted(state.opened))} was opened in this record"
    elif event == "protocol record started" and not state.opened:
        problem = "starts a new protocol record though no test split of the current one was opened"
    elif split in TEST_SPLITS and event in (f"{split} opened", f"{split} resumed"):
        frozen = state.challenger
        if frozen is None:
            problem = f"opens the {split} with no frozen challenger"
        elif event.endswith(" opened") and split in state.opened:
            problem = f"opens the {split} a second time in one protocol record (the toolkit logs it as resumed)"
        elif any(data.get(key) != frozen.get(key) for key in OPENED_UNDER):
            problem = f"opens the {split} under other hashes than the frozen challenger {frozen.get('arm')!r}'s"
        elif event.endswith(" opened") and set(data.get("audio_content_sha256", [])) & state.opened_content:
            problem = f"opens a {split} whose recordings (by audio content) an earlier protocol record opened"
    elif split in TEST_SPLITS and event == f"{split} finished" and split not in state.opened:
        problem = f"finishes a {split} run that was never opened"
    if problem is not None:
        raise InputError(
            log.path,
            f"entry {entry.seq} ({event}) {problem}, which the protocol never writes: the log was written by hand",
        )


class ProtocolError(InputError):
    """A protocol rule refused the command (exit 2); the refusal is in the audit log."""


def frozen_arms(log: AuditLog) -> set[str]:
    """Every arm any freeze in the log named as the challenger, in any protocol record."""
    return {
        str(entry.other["challenger"].get("arm"))
        for entry in log.entries()
        if entry.event == "challenger frozen" and isinstance(entry.other.get("challenger"), dict)
    }


def refuse(log: AuditLog, command: str, path: Path | str | None, problem: str) -> ProtocolError:
    """Log a refusal and return the error to raise."""
    log.append("refusal", command=command, reason=problem)
    return ProtocolError(path, problem)
