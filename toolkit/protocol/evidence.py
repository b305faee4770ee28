"""Holdout evidence: every file a test-split run writes is hashed into the audit log when it is made,
and every later use re-hashes it against that record.

A test-split result (an arm's hypothesis JSON, its CTM and its full output, for one recording)
is recorded once, the moment its recording finishes (``{split} results`` entries). Resuming the
run adopts a stored result only if its files still hash to the record (and it was made with the
same code and configuration); a changed file stops the command with one line naming it, and is
never recorded again as new evidence. A result never recorded (a run killed before its
recording finished) is made afresh. The gate and ``ablate audit verify`` check the same hashes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.core.files import sha256_file
from toolkit.protocol.audit import AuditLog
from toolkit.protocol.state import ProtocolError, named
from toolkit.runs.folder import RunFolder

EVIDENCE = "evidence"


class EvidenceChanged(ProtocolError):
    """A recorded holdout file differs from its record, or was made by other code: the command stops."""


def evidence_files(folder: RunFolder, arm: str, recording: str) -> list[Path]:
    """The files of one test-split result: hypothesis JSON and CTM, and the full arm output."""
    return [
        folder.hypothesis_json(arm, recording),
        folder.hypothesis_ctm(arm, recording),
        folder.arm_output(arm, recording),
    ]


def recorded_evidence(log: AuditLog) -> dict[str, str]:
    """Each evidence file's recorded sha256, by its path relative to the experiment folder."""
    recorded: dict[str, str] = {}
    for entry in log.entries():
        for item in entry.named_hashes():
            if item.kind == EVIDENCE:
                recorded.setdefault(item.path, item.sha256)
    return recorded


@dataclass(frozen=True)
class EvidenceGuard:
    """The protocol's say over a test-split run's stored results (toolkit.pipeline.recording.ResultGuard)."""

    experiment_folder: Path
    split: str
    hashes: dict[str, str] = field(default_factory=dict)  # recorded sha256 by path (relative)

    def _relative(self, path: Path) -> str:
        return named(EVIDENCE, path, "", self.experiment_folder)["path"]

    def adopt(self, folder: RunFolder, arm: str, recording: str, unit_key: str) -> bool:
        """Whether a stored result may be reused: only if recorded, unchanged, and made by this code and config."""
        files = evidence_files(folder, arm, recording)
        if not any(self._relative(path) in self.hashes for path in files):
            return False  # never recorded: this run makes it afresh
        for path in files:
            check_recorded(path, self.hashes.get(self._relative(path)))
        made_with = folder.read_arm_output(arm, recording).unit_key
        if made_with != unit_key:
            raise EvidenceChanged(
                folder.arm_output(arm, recording),
                f"this {self.split} result was made by other code or configuration (unit key {made_with}; this "
                f"version would compute {unit_key}): the verdict it supports cannot be reproduced with this version, "
                "and results of two versions are never mixed in one verdict; use the version recorded in run.json, "
                "or fresh test data",
            )
        return True

    def recorded_now(self, folder: RunFolder, recording: str, arms: Sequence[str]) -> list[dict[str, str]]:
        """Hash entries for the result files of ``recording`` not recorded yet (recorded ones are checked)."""
        entries = []
        for arm in arms:
            for path in evidence_files(folder, arm, recording):
                relative = self._relative(path)
                if relative in self.hashes:
                    check_recorded(path, self.hashes[relative])
                elif path.is_file():
                    entry = named(EVIDENCE, path, sha256_file(path), self.experiment_folder)
                    self.hashes[relative] = entry["sha256"]
                    entries.append(entry)
        return entries

    def recorded(self, folder: RunFolder, recording: str, arms: Sequence[str]) -> None:
        """Log the result files of a recording this run just finished (in the coordinating process)."""
        hashes = self.recorded_now(folder, recording, arms)
        if hashes:
            AuditLog(self.experiment_folder).append(
                f"{self.split} results", split=self.split, run=folder.root.name, recording=recording, hashes=hashes
            )


def check_recorded(path: Path, sha256: str | None) -> None:
    """Refuse a recorded evidence file that is missing or differs from its record (one line, naming it)."""
    actual = sha256_file(path) if path.is_file() else None
    if sha256 is not None and actual != sha256:
        now = "missing" if actual is None else f"sha256 {actual}"
        raise EvidenceChanged(
            path,
            f"holdout evidence changed since the audit log recorded it (sha256 {sha256}, now {now}); changed "
            "evidence is never reused or recorded again: restore the file, or the verdict needs fresh test data",
        )
