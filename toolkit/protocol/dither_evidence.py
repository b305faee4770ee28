"""What the verdict takes from a stability check: the rerun folders its audit entry names, re-verified and judged
again, never the verdicts the entry copied.

A ``stability measured`` entry of a test split names, for the undithered run and each rerun, the sha256 of its
``run.json`` and the digest of its hypotheses (``ablate audit verify`` checks them against the disk). For each
seed the gate takes the FIRST entry that measured it (a later check never replaces a logged outcome), checks that
the rerun folder is a finished run of the frozen arms made with that seed at the pre-registered level, that every
result in it was recorded as evidence in the audit log when it was made, and judges it with the frozen gates
again. An entry that names no hashes, a rerun that is missing or planted, or a verdict that differs from the
logged one is refused: one line, exit 2.
"""

from __future__ import annotations

from toolkit.audio.dither import DEFAULT_LEVEL_DBFS
from toolkit.core.errors import InputError
from toolkit.pipeline.experiment import Experiment
from toolkit.protocol.audit import AuditLog, Entry
from toolkit.protocol.evidence import evidence_files, recorded_evidence
from toolkit.protocol.gate_measures import DitherOutcome
from toolkit.protocol.gates import evaluate_gates
from toolkit.protocol.gates_file import GatesFile
from toolkit.protocol.recorded_runs import recorded_run
from toolkit.protocol.state import named
from toolkit.runs.record import BASELINE
from toolkit.runs.scored import Evaluation

STABILITY_EVENT = "stability measured"


def dither_outcome(
    experiment: Experiment, log: AuditLog, evaluation: Evaluation, challenger: str, gates: GatesFile
) -> DitherOutcome | None:
    """The other gates' verdict on the undithered run ``evaluation`` and on each rerun at the default level, seeds
    1, 2, ... as far as they were measured, each re-judged from its files (None: never measured)."""
    run = evaluation.folder.root.name
    split = evaluation.record.split
    first: dict[int, tuple[Entry, str, str]] = {}  # seed (0: undithered) -> (entry, run folder, logged verdict)
    for entry in log.entries():
        data = entry.other
        if entry.event != STABILITY_EVENT or data.get("split") != split or data.get("run") != run:
            continue
        dither = data.get("dither") or {}
        if dither.get("level_dbfs") != DEFAULT_LEVEL_DBFS:
            continue  # another level: not what the gate pre-registered
        seeds, reruns, verdicts = list(dither.get("seeds") or ()), data.get("reruns"), data.get("verdicts")
        if not isinstance(reruns, list) or not isinstance(verdicts, list) or len(reruns) != len(seeds):
            raise InputError(log.path, f"entry {entry.seq} ({STABILITY_EVENT}) does not name one rerun per seed")
        if len(verdicts) != len(seeds) + 1:
            raise InputError(log.path, f"entry {entry.seq} ({STABILITY_EVENT}) does not record one verdict per run")
        if not entry.named_hashes():
            continue  # names none of its files (written before stability entries named them): not evidence
        _require_named(log, entry, [run, *reruns])
        for seed, name, verdict in zip([0, *seeds], [run, *reruns], verdicts, strict=True):
            first.setdefault(seed, (entry, name, verdict))
    if 0 not in first:
        return None
    measured = 0
    while measured + 1 in first:
        measured += 1
    recorded = recorded_evidence(log)
    verdicts = []
    for seed in range(measured + 1):
        entry, name, logged = first[seed]
        judged = evaluation if seed == 0 else _rerun(experiment, log, split, name, seed, challenger, recorded)
        verdict = evaluate_gates(judged, challenger, gates, baseline=BASELINE).others_verdict
        if verdict != logged:
            raise InputError(
                log.path,
                f"entry {entry.seq} ({STABILITY_EVENT}) records the verdict {logged} for run {name}, but that run's "
                f"files give {verdict} under the frozen gates: the entry was not written from these files",
            )
        verdicts.append(verdict)
    return DitherOutcome(tuple(verdicts))


def _require_named(log: AuditLog, entry: Entry, runs: list[str]) -> None:
    """A stability entry is evidence only if it names the run.json and hypotheses of every run it measured."""
    paths = {(item.kind, item.path) for item in entry.named_hashes()}
    for name in runs:
        for kind, path in (("file", f"runs/{name}/run.json"), ("hypotheses", f"runs/{name}")):
            if (kind, path) not in paths:
                raise InputError(
                    log.path,
                    f"entry {entry.seq} ({STABILITY_EVENT}) names no hash of {path}: an outcome whose files are not "
                    "named is not evidence (a stability check records them; this entry was not written by one)",
                )


def _rerun(
    experiment: Experiment,
    log: AuditLog,
    split: str,
    name: str,
    seed: int,
    challenger: str,
    recorded: dict[str, str],
) -> Evaluation:
    """Rerun ``name`` scored, after checking it is a finished rerun of the frozen arms with ``seed`` whose every
    result the audit log recorded as evidence when it was made."""
    from toolkit.evaluate import score_run

    folder = recorded_run(experiment, split, name)
    record = folder.read_record()
    dither = record.config.dither or {}
    if dither.get("seed") != seed or dither.get("level_dbfs") != DEFAULT_LEVEL_DBFS:
        raise InputError(
            folder.record,
            f"run {name} is named as the rerun with dither seed {seed} at {DEFAULT_LEVEL_DBFS:g} dBFS, "
            f"but it was made with {dither or 'no dither'}",
        )
    for arm in (BASELINE, challenger):
        for rid in record.recordings:
            for path in evidence_files(folder, arm, rid):
                if path.is_file() and named("evidence", path, "", experiment.folder)["path"] not in recorded:
                    raise InputError(
                        path,
                        f"this {split} rerun result was never recorded in the audit log when it was made (a "
                        "stability check records each one): a planted file is not evidence",
                    )
    return score_run(folder, experiment.score_options())
