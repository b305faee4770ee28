"""Seam flag recall by the attribution, and where window edges fell and why, on a constructed windowed run."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from protocol_corpus import correct, make_corpus, make_experiment, make_run, turns

from toolkit.evaluate import evaluate_run, score_run
from toolkit.explain import explain_arms
from toolkit.explain.seam_recall import SeamRecall, flag_recall
from toolkit.pipeline.experiment import load_experiment
from toolkit.pipeline.windows import NO_PAUSE, SHORT_PAUSE
from toolkit.runs.folder import RunFolder
from toolkit.runs.window_edges import GRID_PLACEMENT, NOT_RECORDED, window_edges
from toolkit.scorer.options import ScoreOptions

# Turn 2 ("a Maria comprou ...") spans 5-8 s, "comprou" 5.75-6.08 s; turn 3 ("ninguém sabia onde estava o
# documento") spans 9-12 s, "estava" 10.5-10.95 s. The seam margin is 1 s.
SEAMS = [
    {"index": 0, "start": 5.8, "end": 5.9, "review": True, "flags": [{"kind": "disagreement"}]},  # "comprou" lost
    {"index": 1, "start": 10.6, "end": 10.7, "review": False, "flags": [{"kind": "timing"}]},  # "estava" lost
    {"index": 2, "start": 2.0, "end": 2.1, "review": True, "flags": [{"kind": "empty_side"}]},  # nothing lost
    {"index": 3, "start": 12.5, "end": 12.6, "review": False, "flags": []},  # nothing lost
]


def _window(unit: str, start_at: str, end_at: str, **reasons: str) -> dict:
    placement = {"start_at": start_at, "end_at": end_at, **reasons}
    return {"unit": unit, "recognizer": "whisper_base", "placement": placement}


UNITS = [  # three windows in pauses and on the grid, one of them decoded by a second recognizer too
    _window("full.win000", "recording edge", "pause"),
    _window("full.win001", "pause", "grid", end_reason=NO_PAUSE),
    {**_window("full.win001", "pause", "grid", end_reason=NO_PAUSE), "recognizer": "second"},
    _window("full.win002", "grid", "grid", start_reason=SHORT_PAUSE),  # an end from before reasons were recorded
    _window("full.win003", "pause", "recording edge"),
]


def windowed_run(root: Path) -> RunFolder:
    """Arms baseline (every word right) and windows (loses "comprou" and "estava" at two of its four seams)."""
    manifest = make_corpus(root / "corpus", {"r1": "tuning"})
    experiment = load_experiment(make_experiment(root / "exp", manifest, 'baseline = []\nwindows = ["windows"]\n'))
    words = correct(turns())
    arm = [w for w in words if w.text not in ("comprou", "estava")]
    folder = make_run(
        experiment.folder / "runs" / "tuning-constructed",
        manifest,
        "tuning",
        {"baseline": {"r1": words}, "windows": {"r1": arm}},
        experiment=experiment,
    )
    output = json.loads(folder.arm_output("windows", "r1").read_text(encoding="utf-8"))
    output |= {"seams": SEAMS, "units": UNITS}
    folder.arm_output("windows", "r1").write_text(json.dumps(output), encoding="utf-8")
    return folder


def test_recall_counts_the_seams_whose_margin_holds_a_seam_loss_and_how_many_were_flagged(tmp_path: Path) -> None:
    evaluation = score_run(windowed_run(tmp_path), ScoreOptions(normalizer="ptbr-norm-3"))
    explanations = explain_arms(evaluation)
    changes = explanations["windows"].changes
    assert [(c.reference, c.cause) for c in changes] == [("comprou", "seam"), ("estava", "seam")]
    recall = flag_recall(evaluation.seams, explanations, evaluation.options.seam_margin_s)
    assert recall.per_seam["seam_regressions"].tolist() == [1, 1, 0, 0]
    assert recall.per_seam["words"].tolist() == ["comprou → ∅", "estava → ∅", "", ""]
    rows = {row["flag"]: row for row in recall.summary.to_dict(orient="records")}
    assert list(rows) == ["review", "disagreement", "empty_side", "timing"]
    review = rows["review"]
    assert (review["seams"], review["seams_lost"], review["flagged"], review["lost_flagged"]) == (4, 2, 2, 1)
    assert (review["recall"], review["precision"]) == (0.5, 0.5)
    assert (rows["disagreement"]["recall"], rows["disagreement"]["precision"]) == (0.5, 1.0)
    assert (rows["empty_side"]["recall"], rows["empty_side"]["precision"]) == (0.0, 0.0)
    assert (rows["timing"]["recall"], rows["timing"]["precision"]) == (0.5, 1.0)  # a note, not a review mark
    missed = recall.missed("windows")
    assert missed[["seam", "start", "words"]].values.tolist() == [[1, 10.6, "estava → ∅"]]
    assert recall.missed("baseline").empty


def test_a_loss_outside_every_seam_margin_is_no_seam_loss(tmp_path: Path) -> None:
    folder = windowed_run(tmp_path)
    output = json.loads(folder.arm_output("windows", "r1").read_text(encoding="utf-8"))
    output["seams"] = [SEAMS[2], SEAMS[3]]  # the two seams far from both lost words
    folder.arm_output("windows", "r1").write_text(json.dumps(output), encoding="utf-8")
    evaluation = score_run(folder, ScoreOptions(normalizer="ptbr-norm-3"))
    explanations = explain_arms(evaluation)
    assert {c.cause for c in explanations["windows"].changes} == {"recognition"}
    recall = flag_recall(evaluation.seams, explanations, evaluation.options.seam_margin_s)
    review = recall.summary.iloc[0]
    assert (review["seams_lost"], review["recall"], review["precision"]) == (0, None, 0.0)


def test_window_edges_are_counted_by_place_and_reason_once_per_window(tmp_path: Path) -> None:
    evaluation = score_run(windowed_run(tmp_path), ScoreOptions(normalizer="ptbr-norm-3"))
    edges = window_edges(evaluation.outputs, ["windows"])
    assert edges.totals("windows") == {
        "start": {"recording edge": 1, "pause": 2, f"grid: {SHORT_PAUSE}": 1},
        "end": {"pause": 1, f"grid: {NO_PAUSE}": 1, f"grid: {NOT_RECORDED}": 1, "recording edge": 1},
    }
    summary = edges.summary()
    assert summary[["arm", "edge", "edges"]].values.tolist() == [["windows", "start", 4], ["windows", "end", 4]]
    assert list(summary.columns)[3] == "pause" and list(summary.columns)[-1] == "recording edge"
    assert window_edges(evaluation.outputs, ["baseline"]).table.empty  # the baseline has no window


def test_grid_placed_windows_count_their_inner_edges_as_grid_by_placement(tmp_path: Path) -> None:
    units = [{"unit": f"vad000.win00{i}"} for i in range(3)] + [{"unit": "vad001.win000"}, {"unit": "full"}]
    output = replace(windowed_run(tmp_path).read_arm_output("windows", "r1"), units=tuple(units))
    edges = window_edges({("grid", "r1"): output}, ["grid"])
    assert edges.totals("grid") == {
        "start": {"recording edge": 2, f"grid: {GRID_PLACEMENT}": 2},
        "end": {f"grid: {GRID_PLACEMENT}": 2, "recording edge": 2},
    }


def test_the_score_files_and_the_report_carry_recall_and_window_edges(tmp_path: Path) -> None:
    folder = windowed_run(tmp_path)
    evaluate_run(folder, ScoreOptions(normalizer="ptbr-norm-3"))
    with open(folder.scores / "seam_recall.csv", encoding="utf-8") as f:
        review = next(csv.DictReader(f))
    assert (review["flag"], review["seams_lost"], review["lost_flagged"]) == ("review", "2", "1")
    assert review["recall"] == "0.5"
    with open(folder.scores / "seam_losses.csv", encoding="utf-8") as f:
        assert [row["words"] for row in csv.DictReader(f)] == ["comprou → ∅", "estava → ∅", "", ""]
    with open(folder.scores / "window_edges.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert {(r["edge"], r["at"], r["reason"], r["count"]) for r in rows} >= {
        ("end", "grid", NO_PAUSE, "1"),
        ("start", "grid", SHORT_PAUSE, "1"),
        ("start", "pause", "", "2"),
    }
    report = (folder.root / "report.md").read_text(encoding="utf-8")
    seams = report[report.index("## Seams") :]
    seams = seams[: seams.index("\n## ", 4)]
    assert "recall" in seams and "precision (attribution)" in seams and "precision (reference)" in seams
    assert "not marked for review" in seams and "estava → ∅" in seams
    assert f"grid: {NO_PAUSE}" in seams and f"grid: {SHORT_PAUSE}" in seams
    html = (folder.root / "report.html").read_text(encoding="utf-8")
    assert "precision (attribution)" in html and f"grid: {SHORT_PAUSE}" in html


@pytest.mark.parametrize("review", [True, False])
def test_every_lost_seam_flagged_means_full_recall_and_none_flagged_means_zero(tmp_path: Path, review: bool) -> None:
    folder = windowed_run(tmp_path)
    output = json.loads(folder.arm_output("windows", "r1").read_text(encoding="utf-8"))
    output["seams"] = [{**seam, "review": review} for seam in SEAMS]
    folder.arm_output("windows", "r1").write_text(json.dumps(output), encoding="utf-8")
    evaluation = score_run(folder, ScoreOptions(normalizer="ptbr-norm-3"))
    summary = flag_recall(evaluation.seams, explain_arms(evaluation), 1.0).summary
    assert summary.iloc[0]["recall"] == (1.0 if review else 0.0)


def test_missed_seams_of_every_arm_come_arm_by_arm_in_run_order() -> None:
    rows = [
        {"arm": arm, "recording_id": rid, "seam": 0, "review": False, "seam_regressions": 1}
        for rid in ("r1", "r2")
        for arm in ("windows", "windows_b")
    ]
    per_seam = pd.DataFrame.from_records(rows)
    missed = SeamRecall(per_seam, pd.DataFrame()).missed()
    assert missed[["arm", "recording_id"]].values.tolist() == [
        ["windows", "r1"],
        ["windows", "r2"],
        ["windows_b", "r1"],
        ["windows_b", "r2"],
    ]
