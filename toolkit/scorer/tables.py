"""Tables of many scores: per recording and per arm and stratum, micro-averaged, written as CSV."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.core.files import atomic_write_text

if TYPE_CHECKING:  # pandas is imported by the table functions only, so scoring one pair stays quick
    import pandas as pd

from toolkit.scorer.results import CorpusScore, RecordingScore


def _labels(strata: Mapping[str, Any] | Iterable[str] | None) -> list[str]:
    if strata is None:
        return []
    if isinstance(strata, Mapping):
        return [f"{k}={v}" for k, v in sorted(strata.items())]
    return sorted(str(s) for s in strata)


def score_tables(rows: Iterable[tuple[str, str, Any, RecordingScore]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-recording and aggregate tables from ``(arm, recording_id, strata, score)`` rows.

    Aggregates are per arm over all recordings (stratum "all") and per stratum label, always
    micro-averaged; drift is per recording only (a slope does not pool across recordings).
    """
    import pandas as pd

    records, scores, labels = [], [], []
    for arm, recording_id, strata, score in rows:
        tags = _labels(strata)
        records.append({"arm": arm, "recording_id": recording_id, "strata": ";".join(tags), **score.flat()})
        scores.append(score)
        labels.append(tags)
    per_recording = pd.DataFrame.from_records(records)
    aggregate = []
    for arm in dict.fromkeys(r["arm"] for r in records):
        members = [k for k, r in enumerate(records) if r["arm"] == arm]
        strata = sorted({tag for k in members for tag in labels[k]})
        for stratum in ["all", *strata]:
            chosen = [k for k in members if stratum == "all" or stratum in labels[k]]
            aggregate.append({"arm": arm, "stratum": stratum, **CorpusScore.of(scores[k] for k in chosen).flat()})
    return per_recording, pd.DataFrame.from_records(aggregate)


def write_tables(per_recording: pd.DataFrame, aggregate: pd.DataFrame, out_dir: str | Path) -> tuple[Path, Path]:
    """Write both tables as CSV, atomically, into ``out_dir``."""
    out = Path(out_dir)
    return (
        atomic_write_text(out / "per_recording.csv", per_recording.to_csv(index=False)),
        atomic_write_text(out / "aggregate.csv", aggregate.to_csv(index=False)),
    )
