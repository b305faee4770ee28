"""The report's figures: each arm's ΔWER split by cause, per-recording paired differences, onset drift.

Differences are drawn as differences (points of WER against the baseline, zero marked), never as
an interval hung on an arm's absolute bar. Each figure carries the table of the numbers it draws.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit.explain import Explanation
from toolkit.explain.causes import CAUSES, FALLBACK, FORMATTING, NONSPEECH, RECOGNITION, SEAM, VAD_CUT
from toolkit.report.document import Figure
from toolkit.report.tables import delta_with_interval, number

if TYPE_CHECKING:
    from toolkit.runs.scored import Evaluation
    from toolkit.scorer.stats import PairedComparison

# The causes read from a run's records keep one colour each; the stages' causes (enhancement first) take
# the palette in pipeline order.
RECORD_COLOURS = {
    VAD_CUT: "#d62728",
    SEAM: "#ff7f0e",
    NONSPEECH: "#9467bd",
    FALLBACK: "#8c564b",
    FORMATTING: "#7f7f7f",
    RECOGNITION: "#1f77b4",
}
STAGE_PALETTE = ("#17becf", "#bcbd22", "#e377c2", "#2ca02c", "#aec7e8")
CAUSE_COLOURS = {
    **RECORD_COLOURS,
    **{
        cause: STAGE_PALETTE[k % len(STAGE_PALETTE)]
        for k, cause in enumerate(c for c in CAUSES if c not in RECORD_COLOURS)
    },
}
MAX_FOREST_ROWS = 60  # recordings per panel; beyond it, those with the largest differences


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    return pyplot


def _points(errors: int, words: int) -> float:
    return 100 * errors / words if words else 0.0


def delta_by_cause(explanations: Sequence[Explanation], comparisons: dict[str, PairedComparison]) -> Figure:
    """One row per arm: regressions by cause to the right, fixes to the left (points of WER), and the
    net ΔWER (their difference) with the paired 95% interval over recordings."""
    pyplot = _pyplot()
    figure, axes = pyplot.subplots(figsize=(11, 0.55 * len(explanations) + 1.3))
    rows, labels, used = [], [], set()
    for y, explanation in enumerate(explanations):
        words, comparison = explanation.ref_words, comparisons[explanation.arm]
        right = left = 0.0
        cells = {}
        for cause, counts in explanation.by_cause().items():
            up, down = _points(counts["regressions"], words), _points(counts["fixes"], words)
            if up:
                axes.barh(y, up, left=right, color=CAUSE_COLOURS[cause], height=0.6)
                right += up
            if down:
                axes.barh(y, -down, left=-left, color=CAUSE_COLOURS[cause], height=0.6)
                left += down
            if counts["regressions"] or counts["fixes"]:
                used.add(cause)
                cells[cause] = f"{_points(counts['net'], words):+.2f} ({counts['regressions']}/{counts['fixes']})"
        delta, low, high = (100 * v for v in (comparison.delta, comparison.ci_low, comparison.ci_high))
        axes.errorbar(
            delta, y, xerr=[[delta - low], [high - delta]], fmt="D", color="black", ecolor="black", capsize=4, zorder=3
        )
        interval = delta_with_interval(comparison.delta, comparison.ci_low, comparison.ci_high)
        labels.append(f"{explanation.arm}\nΔWER {interval}")
        rows.append({"arm": explanation.arm, "ΔWER [95% CI]": interval, **{c: cells.get(c, "") for c in CAUSES}})
    axes.axvline(0, color="#444", linewidth=1)
    axes.set_yticks(range(len(explanations)), labels, fontsize=9)
    axes.invert_yaxis()
    axes.set_xlabel(f"points of WER against {explanations[0].against}: ← fixes   regressions →", fontsize=9)
    handles = [pyplot.Rectangle((0, 0), 1, 1, color=CAUSE_COLOURS[c]) for c in CAUSES if c in used]
    handles.append(axes.errorbar([], [], xerr=[], fmt="D", color="black", capsize=4))
    axes.legend(
        handles,
        [c for c in CAUSES if c in used] + ["net ΔWER, 95% interval"],
        fontsize=8,
        ncol=len(handles),
        loc="lower left",
        bbox_to_anchor=(0, 1.0),
        frameon=False,
    )
    axes.grid(axis="x", color="#ddd")
    numbers = pd.DataFrame.from_records(rows)
    numbers = numbers[[c for c in numbers.columns if c in ("arm", "ΔWER [95% CI]") or c in used]]
    title = f"ΔWER against {explanations[0].against} by cause (points; cells: net (regressions/fixes))"
    return Figure.of(title, figure, numbers)


def forest(
    explanations: Sequence[Explanation], comparisons: dict[str, PairedComparison], samples: int, seed: int
) -> Figure:
    """One panel per arm, one row per recording: its ΔWER with a paired bootstrap interval over its turns,
    and the pooled ΔWER (interval over recordings) last."""
    pyplot = _pyplot()
    recordings = _forest_rows(explanations)
    columns = min(4, len(explanations))
    panels = math.ceil(len(explanations) / columns)
    height = 0.22 * (len(recordings) + 1) + 0.9
    figure, grid = pyplot.subplots(
        panels, columns, figsize=(3.3 * columns, height * panels), sharex=True, sharey=True, squeeze=False
    )
    rows = []
    for k, explanation in enumerate(explanations):
        axes = grid[k // columns][k % columns]
        by_id = {r.recording: r for r in explanation.recordings}
        for y, rid in enumerate(recordings):
            recording = by_id[rid]
            delta = 100 * (recording.delta_wer or 0.0)
            interval = recording.interval(samples, seed)
            if interval is None:
                axes.plot(delta, y, "o", mfc="white", color="#1f77b4", markersize=4)
            else:
                low, high = 100 * interval[0], 100 * interval[1]
                axes.errorbar(delta, y, xerr=[[delta - low], [high - delta]], fmt="o", color="#1f77b4", markersize=4)
            rows.append(
                {
                    "arm": explanation.arm,
                    "recording": rid,
                    "reference words": recording.ref_words,
                    "ΔWER": f"{delta:+.2f}",
                    "95% CI (turns)": "one turn: none"
                    if interval is None
                    else f"[{100 * interval[0]:+.2f}, {100 * interval[1]:+.2f}]",
                }
            )
        c = comparisons[explanation.arm]
        pooled = 100 * c.delta
        axes.errorbar(
            pooled,
            len(recordings),
            xerr=[[pooled - 100 * c.ci_low], [100 * c.ci_high - pooled]],
            fmt="D",
            color="black",
            markersize=5,
        )
        axes.axvline(0, color="#444", linewidth=0.8)
        axes.set_title(explanation.arm, fontsize=9)
        axes.grid(axis="x", color="#eee")
        axes.tick_params(labelsize=8)
    for k in range(len(explanations), panels * columns):
        grid[k // columns][k % columns].axis("off")
    first = grid[0][0]
    first.set_yticks(range(len(recordings) + 1), [*recordings, "all (pooled)"])
    first.invert_yaxis()
    figure.supxlabel(f"ΔWER against {explanations[0].against} (points)", fontsize=9)
    figure.tight_layout()
    shown = "" if len(recordings) == len(explanations[0].recordings) else f", the {len(recordings)} largest"
    return Figure.of(f"ΔWER per recording{shown}", figure, pd.DataFrame.from_records(rows))


def _forest_rows(explanations: Sequence[Explanation]) -> list[str]:
    """The recordings to draw: all, or the ``MAX_FOREST_ROWS`` with the largest difference in any arm."""
    ids = [r.recording for r in explanations[0].recordings]
    if len(ids) <= MAX_FOREST_ROWS:
        return ids
    largest = {rid: 0.0 for rid in ids}
    for explanation in explanations:
        for r in explanation.recordings:
            largest[r.recording] = max(largest[r.recording], abs(r.delta_wer or 0.0))
    kept = set(sorted(ids, key=lambda rid: -largest[rid])[:MAX_FOREST_ROWS])
    return [rid for rid in ids if rid in kept]


def drift(evaluation: Evaluation) -> Figure | None:
    """Word onset error against reference time per arm; None when no reference word is timed."""
    pyplot = _pyplot()
    figure, axes = pyplot.subplots(figsize=(9, 3))
    rows = []
    for arm, by_recording in evaluation.scores.items():
        onsets = [t for s in by_recording.values() for t in s.timing.ref_onsets.tolist()]
        errors = [e for s in by_recording.values() for e in s.timing.onset_errors.tolist()]
        if onsets:
            axes.scatter(onsets, errors, s=8, label=arm, alpha=0.7)
            rows.append(
                {
                    "arm": arm,
                    "timed words": len(onsets),
                    "median |error|": number(float(pd.Series(errors).abs().median()), 3, " s"),
                    "drift (worst recording)": _worst_drift(by_recording),
                }
            )
    if not rows:
        pyplot.close(figure)
        return None
    axes.axhline(0, color="grey", linewidth=0.8)
    axes.set_xlabel("reference time (s, original recording)")
    axes.set_ylabel("onset error (s)")
    axes.legend(fontsize=7, ncol=4)
    return Figure.of("Word onset error over time (drift)", figure, pd.DataFrame.from_records(rows))


def _worst_drift(by_recording: dict[str, Any]) -> str:
    drifts = [s.timing.drift_s_per_min for s in by_recording.values() if s.timing.drift_s_per_min is not None]
    return "n/a" if not drifts else f"{max(drifts, key=abs):+.4f} s/min"
