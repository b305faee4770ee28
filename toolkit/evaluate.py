"""Score a finished run: every arm and recording against the frozen references, then compare.

Sits above both the arms and the scorer (metrics never import arms): it reads the run
folder's hypotheses and VAD segments, the manifest's verified references, scores each pair,
writes per-recording and micro-averaged aggregate tables, paired comparisons of every arm
with the baseline, runtime and seam summaries, and the Markdown/HTML report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_text
from toolkit.core.json_records import record_to_json
from toolkit.core.transcripts import Hypothesis, Reference
from toolkit.explain import explain_arms
from toolkit.explain.seam_recall import flag_recall
from toolkit.report.alignment_pages import write_alignment_page
from toolkit.report.document import Section
from toolkit.report.run_report import write_reports
from toolkit.runs.arm_output_file import ArmOutputFile
from toolkit.runs.folder import RunFolder
from toolkit.runs.record import RunRecord
from toolkit.runs.scored import Evaluation
from toolkit.runs.window_edges import window_edges
from toolkit.scorer.metrics.seam_flags import flag_precision
from toolkit.scorer.metrics.turns import lost_turns
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.results import RecordingScore
from toolkit.scorer.score import audit_vocabulary, score_recording
from toolkit.scorer.stats import paired_comparison
from toolkit.scorer.tables import score_tables, write_tables

if TYPE_CHECKING:
    from toolkit.corpus.manifest import RecordingEntry

SEAM_COLUMNS = [
    "arm",
    "recording_id",
    "recognizer",
    "seam",
    "start",
    "end",
    "cut_time",
    "straddling",
    "kept_left",
    "kept_right",
    "dropped",
    "flags",
    "review",
]


def evaluate_run(
    folder: RunFolder, options: ScoreOptions = ScoreOptions(), extra_sections: Sequence[Section] = ()
) -> Evaluation:
    """Score every (arm, recording) of ``folder`` and write tables and reports under it (``extra_sections``
    last in the report: the protocol's, from ``toolkit.protocol.report_sections``)."""
    evaluation = score_run(folder, options)
    write_scores(evaluation)
    write_reports(evaluation, extra_sections)
    return evaluation


def score_run(folder: RunFolder, options: ScoreOptions = ScoreOptions()) -> Evaluation:
    """Score every (arm, recording) of ``folder`` against the frozen references, writing nothing.

    A recording an arm failed on is scored as no words (it stays in every denominator); a run with
    recordings that did not finish at all is refused.
    """
    record, entries = _scorable(folder)
    arms, windowed = record.config.arm_names, record.config.arms_with("windows")
    failures = {(f.arm, f.recording): f.error for f in record.arm_failures}
    rows: list[tuple[str, str, list[str], RecordingScore]] = []
    scores: dict[str, dict[str, RecordingScore]] = {arm: {} for arm in arms}
    references: dict[str, Reference] = {}
    outputs: dict[tuple[str, str], ArmOutputFile] = {}
    seam_rows: list[dict[str, Any]] = []
    reference_arm = record.config.reference_arm
    for entry in entries:
        reference = references[entry.id] = entry.load_reference()
        recording_options = replace(options, names=tuple(reference.names))
        for arm in arms:
            hypothesis, output = _result(folder, arm, entry.id, failures.get((arm, entry.id)))
            if output is not None:
                outputs[arm, entry.id] = output
            made = output.seams if output is not None else ()
            seam_rows.extend(_seam_row(arm, entry.id, seam) for seam in made)
            vad = output.mapped_speech() if output is not None and output.vad_segments else None
            seams = sorted({(s["start"], s["end"]) for s in made}) if arm in windowed else None
            scores[arm][entry.id] = score_recording(reference, hypothesis, recording_options, vad, seams)
        base = scores[reference_arm][entry.id]
        for arm in arms:  # lost turns need the baseline's alignment of the same reference
            score = scores[arm][entry.id]
            score = replace(score, lost_turns=lost_turns(base.audit_tokens, score.audit_tokens, base.word_utterances))
            scores[arm][entry.id] = score
            rows.append(
                (arm, entry.id, [*entry.strata, f"speaker:{entry.speaker}"] if entry.speaker else entry.strata, score)
            )
    per_recording, aggregate = score_tables(rows)
    comparisons = {
        arm: paired_comparison(
            scores[reference_arm], scores[arm], samples=options.bootstrap_samples, seed=options.bootstrap_seed
        )
        for arm in arms
        if arm != reference_arm
    }
    seams = pd.DataFrame.from_records(seam_rows, columns=SEAM_COLUMNS)
    return Evaluation(
        folder,
        record,
        per_recording,
        aggregate,
        comparisons,
        scores,
        pd.DataFrame.from_records([record_to_json(row) for row in record.measurements]).sort_index(axis=1),
        seams,
        _origin_spread(aggregate, list(record.config.arms)),
        rows[0][3].signature.text if rows else "",
        reference_arm,
        options,
        references=references,
        outputs=outputs,
    )


def _scorable(folder: RunFolder) -> tuple[RunRecord, list[RecordingEntry]]:
    """The run's record and its recordings in manifest order, once the manifest is the one the run was made on
    and every recording finished (scoring the others alone would drop the failed ones from every denominator)."""
    from toolkit.corpus.manifest import load_manifest

    record = folder.read_record()
    manifest = load_manifest(record.manifest_path(folder.root))
    if manifest.sha256 != record.manifest.sha256:
        raise InputError(
            manifest.path,
            f"manifest sha256 is {manifest.sha256}, but the run in {folder.root} was made on {record.manifest.sha256}",
        )
    failed = [f.recording for f in record.failures]
    if failed:
        raise InputError(
            folder.record,
            f"{len(failed)} of {len(record.recordings)} recordings failed in this run "
            f"({', '.join(failed)}); rerun the experiment to finish them before scoring",
        )
    return record, [e for e in manifest.recordings if e.id in set(record.recordings)]


def _result(
    folder: RunFolder, arm: str, recording: str, failure: str | None
) -> tuple[Hypothesis, ArmOutputFile | None]:
    """The arm's words on the recording and its stored output; an arm a stage failed on (``failure``, its error)
    is scored as no words, still in every denominator, and has no output."""
    if failure is not None:
        return Hypothesis(recording, [], arm, {"failed": failure}), None
    return folder.read_hypothesis(arm, recording), folder.read_arm_output(arm, recording)


def write_scores(evaluation: Evaluation) -> None:
    """Every score file of a run: per-recording JSON and alignment pages, tables, paired comparisons, each
    arm's ΔWER by cause with its changed words (``explain/<arm>.json``), runtime, seams, seam flag precision
    (``seam_flags.csv``) and recall by the attribution (``seam_recall.csv``, per seam ``seam_losses.csv``),
    where window edges fell and why (``window_edges.csv``), origin spread and the signature."""
    folder, options = evaluation.folder, evaluation.options
    for arm, per_recording in evaluation.scores.items():
        for rid, score in per_recording.items():
            folder.write_recording_score(arm, rid, score.to_json())
            reference = evaluation.references[rid]
            vocabulary = audit_vocabulary(reference.names, replace(options, names=tuple(reference.names)))
            write_alignment_page(folder.root, score, *vocabulary)
    write_tables(evaluation.per_recording, evaluation.aggregate, folder.scores)
    folder.write_paired({arm: c.to_json() for arm, c in evaluation.comparisons.items()})
    explanations = explain_arms(evaluation)
    for arm, explanation in explanations.items():
        folder.write_explanation(arm, explanation.to_json())
    atomic_write_text(folder.scores / "runtime.csv", evaluation.runtime.to_csv(index=False))
    atomic_write_text(folder.scores / "seams.csv", evaluation.seams.to_csv(index=False))
    flags = flag_precision(evaluation.seams, evaluation.scores)
    atomic_write_text(folder.scores / "seam_flags.csv", flags.to_csv(index=False))
    recall = flag_recall(evaluation.seams, explanations, options.seam_margin_s)
    atomic_write_text(folder.scores / "seam_recall.csv", recall.summary.to_csv(index=False))
    atomic_write_text(folder.scores / "seam_losses.csv", recall.per_seam.to_csv(index=False))
    edges = window_edges(evaluation.outputs, evaluation.record.config.arms_with("windows"))
    atomic_write_text(folder.scores / "window_edges.csv", edges.table.to_csv(index=False))
    atomic_write_text(folder.scores / "origin_spread.csv", evaluation.origin_spread.to_csv(index=False))
    atomic_write_text(folder.scores / "signature.txt", evaluation.signature + "\n")


def _seam_row(arm: str, recording: str, seam: dict[str, Any]) -> dict[str, Any]:
    """One seam of a windowed arm: what each side kept and dropped, and review flags."""
    return {
        "arm": arm,
        "recording_id": recording,
        "recognizer": seam.get("recognizer"),
        "seam": seam.get("index"),
        "start": seam.get("start"),
        "end": seam.get("end"),
        "cut_time": seam.get("cut_time"),
        "straddling": _straddling(seam.get("straddling")),
        "kept_left": len(seam.get("kept_left", [])),
        "kept_right": len(seam.get("kept_right", [])),
        "dropped": len(seam.get("dropped", [])),
        "flags": ";".join(sorted({f.get("kind", "") for f in seam.get("flags", [])})),
        "review": bool(seam.get("review")),
    }


def _straddling(copy: dict[str, Any] | None) -> str:
    """The copy kept at a cut that starts outside the seam's interval, "left: inciso 1117.044" (blank: none)."""
    return "" if not copy else f"{copy.get('side')}: {copy.get('text')} {copy.get('start')}"


def _origin_spread(aggregate: pd.DataFrame, arms: list[dict[str, Any]]) -> pd.DataFrame:
    """How far corpus WER moves when an arm's window grid is shifted (its ``@<origin>s`` reruns)."""
    overall = aggregate[aggregate["stratum"] == "all"].set_index("arm")
    groups: dict[str, list[str]] = {}
    for arm in arms:
        groups.setdefault(arm.get("variant_of") or arm["name"], []).append(arm["name"])
    rows = []
    for base, members in groups.items():
        if len(members) < 2:
            continue
        wers = overall.loc[members, "wer"].astype(float)
        errors = overall.loc[members, "errors"].astype(int)
        rows.append(
            {
                "arm": base,
                "origins": len(members),
                "wer_min": wers.min(),
                "wer_max": wers.max(),
                "spread_points": 100 * (wers.max() - wers.min()),
                "errors_by_origin": "; ".join(f"{m}: {e}" for m, e in errors.items()),
            }
        )
    return pd.DataFrame.from_records(
        rows, columns=["arm", "origins", "wer_min", "wer_max", "spread_points", "errors_by_origin"]
    )
