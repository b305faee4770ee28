"""Whether a windowed arm's seam flags point at real problems, measured against the reference.

A seam (shared interval ``[a, b]`` widened by the scorer's seam margin) has a **real problem**
when the scorer locates a seam omission, duplication or split word in it (the span it located the
instance in meets the seam, the scorer's own rule), or a reference word whose onset
lies in it is matched with an onset error larger than ``TIMING_TOLERANCE_S``. The scorer's
seam instances stay the ground truth; this module only counts, per arm and flag
kind, how many flagged seams had a real problem (precision) and how many seams with an
omission, duplication or split word went unflagged. Without timed reference words only those
can count as problems.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from toolkit.scorer.metrics.seam_errors import SeamScore
from toolkit.scorer.metrics.timing import TimingScore

TIMING_TOLERANCE_S = 0.5
COLUMNS = ["arm", "flag", "seams", "flagged", "flagged_with_problem", "precision", "seams_with_loss", "loss_flagged"]


class _Scored(Protocol):
    @property
    def seams(self) -> SeamScore | None: ...

    @property
    def timing(self) -> TimingScore: ...


@dataclass(frozen=True)
class SeamProblems:
    """Which seams of one recording had an omission, duplication or split word (``loss``) or a word off in time."""

    loss: list[bool]
    off_time: list[bool]

    @property
    def any(self) -> list[bool]:
        return [a or b for a, b in zip(self.loss, self.off_time)]


def seam_problems(
    intervals: list[tuple[float, float]], score: _Scored, tolerance: float = TIMING_TOLERANCE_S
) -> SeamProblems:
    """Real problems per seam interval, from the scorer's seam instances and onset errors."""
    margin = score.seams.margin_s if score.seams is not None else 0.0
    onsets, errors = score.timing.ref_onsets, score.timing.onset_errors
    late = onsets[np.abs(errors) > tolerance] if score.timing.available else np.zeros(0)
    loss, off = [], []
    for a, b in intervals:
        lo, hi = a - margin, b + margin
        loss.append(score.seams is not None and bool(score.seams.at(lo, hi)))
        off.append(bool(np.any((late >= lo) & (late <= hi))))
    return SeamProblems(loss, off)


def flag_precision(
    seams: pd.DataFrame, scores: Mapping[str, Mapping[str, _Scored]], tolerance: float = TIMING_TOLERANCE_S
) -> pd.DataFrame:
    """Per arm: a row for seams marked for review (``flag = "review"``) and one per flag kind (notes included).

    ``seams`` is the run's seam table (columns arm, recording_id, start, end, flags as
    ``;``-joined kinds, review); each row counts the seams, those flagged, those flagged with a
    real problem (precision = their share) and how many seams with an omission, duplication or split
    word were flagged.
    """
    rows: list[dict[str, Any]] = []
    for arm, arm_seams in seams.groupby("arm", sort=False):
        marks: list[tuple[set[str], bool, bool, bool]] = []
        for recording, rec_seams in arm_seams.groupby("recording_id", sort=False):
            score = scores.get(str(arm), {}).get(str(recording))
            if score is None:
                continue
            problems = seam_problems(list(zip(rec_seams["start"], rec_seams["end"])), score, tolerance)
            for flags, review, loss, problem in zip(
                rec_seams["flags"], rec_seams["review"], problems.loss, problems.any
            ):
                kinds = {k for k in str(flags).split(";") if k and k != "nan"}
                marks.append((kinds, bool(review), loss, problem))
        for flag in ["review", *sorted({k for kinds, _, _, _ in marks for k in kinds})]:
            hit = [review if flag == "review" else flag in kinds for kinds, review, _, _ in marks]
            flagged = sum(hit)
            good = sum(h and problem for h, (_, _, _, problem) in zip(hit, marks))
            rows.append(
                {
                    "arm": arm,
                    "flag": flag,
                    "seams": len(marks),
                    "flagged": flagged,
                    "flagged_with_problem": good,
                    "precision": good / flagged if flagged else None,
                    "seams_with_loss": sum(loss for _, _, loss, _ in marks),
                    "loss_flagged": sum(h and loss for h, (_, _, loss, _) in zip(hit, marks)),
                }
            )
    return pd.DataFrame.from_records(rows, columns=COLUMNS)
