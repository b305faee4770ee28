"""Seam flag recall, measured by the attribution: of the seams where the arm lost words to the seam, how many
did the reconciliation flag for review?

A seam of a windowed arm (its shared interval ``[a, b]`` widened by the seam margin, the margin the
attribution uses) holds an **attributed seam loss** when a regression of that arm against the
baseline whose cause is "seam" lies in it (``toolkit.explain.causes``). Per arm and per flag
(``review``, and each flag kind, notes included): **recall** = flagged seams among those with an
attributed loss; **precision** = seams with an attributed loss among the flagged ones. The scorer's
precision against the reference (omissions, duplications, words off in time) stays in
``toolkit.scorer.metrics.seam_flags``; this one needs no timed reference, only the two systems' words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from toolkit.explain import ExplainedChange, Explanation
from toolkit.explain.causes import SEAM
from toolkit.explain.changes import REGRESSION

REVIEW = "review"
SEAM_COLUMNS = ["arm", "recording_id", "seam", "start", "end", "flags", "review", "seam_regressions", "words"]
SUMMARY_COLUMNS = ["arm", "flag", "seams", "seams_lost", "flagged", "lost_flagged", "recall", "precision"]


@dataclass(frozen=True)
class SeamRecall:
    """Per seam (``per_seam``, SEAM_COLUMNS) and per arm and flag (``summary``, SUMMARY_COLUMNS)."""

    per_seam: pd.DataFrame
    summary: pd.DataFrame

    def missed(self, arm: str | None = None) -> pd.DataFrame:
        """Seams with an attributed loss that were not marked for review (of one arm, or of every arm, arm by arm)."""
        rows = self.per_seam
        chosen = rows[(rows["seam_regressions"] > 0) & ~rows["review"].astype(bool)]
        if arm is not None:
            return chosen[chosen["arm"] == arm]
        order = {name: k for k, name in enumerate(dict.fromkeys(rows["arm"]))}
        return chosen.sort_values("arm", kind="stable", key=lambda arms: arms.map(order))


def flag_recall(seams: pd.DataFrame, explanations: Mapping[str, Explanation], margin_s: float) -> SeamRecall:
    """Flag recall and precision by the attribution, for every arm of the seam table ``seams`` (columns arm,
    recording_id, seam, start, end, flags as ``;``-joined kinds, review) that ``explanations`` explains."""
    rows = []
    for seam in seams.itertuples(index=False):
        explanation = explanations.get(str(seam.arm))
        if explanation is None:  # the baseline itself, when it is windowed: nothing to attribute against
            continue
        lost = _seam_regressions(explanation, str(seam.recording_id), seam.start - margin_s, seam.end + margin_s)
        rows.append(
            {
                "arm": seam.arm,
                "recording_id": seam.recording_id,
                "seam": seam.seam,
                "start": seam.start,
                "end": seam.end,
                "flags": "" if pd.isna(seam.flags) else str(seam.flags),
                "review": bool(seam.review),
                "seam_regressions": len(lost),
                "words": "; ".join(_quote(c) for c in lost),
            }
        )
    per_seam = pd.DataFrame.from_records(rows, columns=SEAM_COLUMNS)
    return SeamRecall(per_seam, _summary(per_seam))


def _seam_regressions(explanation: Explanation, recording: str, low: float, high: float) -> list[ExplainedChange]:
    return [
        c
        for c in explanation.changes
        if c.recording == recording and c.kind == REGRESSION and c.cause == SEAM and c.overlaps(low, high)
    ]


def _quote(change: ExplainedChange) -> str:
    """One lost word as the report shows it: reference → arm (∅ for nothing), or + an inserted word."""
    if change.error == "insertion":
        return f"+{change.arm}"
    return f"{change.reference} → {change.arm or '∅'}"


def _summary(per_seam: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for arm, arm_seams in per_seam.groupby("arm", sort=False):
        kinds = [set(filter(None, str(f).split(";"))) for f in arm_seams["flags"]]
        loss = (arm_seams["seam_regressions"] > 0).tolist()
        for flag in [REVIEW, *sorted(set().union(*kinds))]:
            hit = arm_seams["review"].tolist() if flag == REVIEW else [flag in k for k in kinds]
            with_loss, flagged = sum(loss), sum(hit)
            caught = sum(h and lost for h, lost in zip(hit, loss))
            rows.append(
                {
                    "arm": arm,
                    "flag": flag,
                    "seams": len(arm_seams),
                    "seams_lost": with_loss,
                    "flagged": flagged,
                    "lost_flagged": caught,
                    "recall": caught / with_loss if with_loss else None,
                    "precision": caught / flagged if flagged else None,
                }
            )
    return pd.DataFrame.from_records(rows, columns=SUMMARY_COLUMNS)
