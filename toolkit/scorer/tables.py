"""Tables of many scores: per recording and per arm and stratum, micro-averaged, written as CSV."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.core.errors import InputError
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


# The tables' columns that hold names, read back as text ("001" stays a recording name, "NA" is no missing value).
TEXT_COLUMNS = ("arm", "recording_id", "strata", "stratum", "signature")
# How each table's columns begin (per recording, aggregate), as score_tables writes them.
LEADING_COLUMNS = (("arm", "recording_id", "strata"), ("arm", "stratum"))


def table_paths(out_dir: str | Path) -> tuple[Path, Path]:
    """Where the per-recording and aggregate tables of a scores folder are: one place names the files."""
    out = Path(out_dir)
    return out / "per_recording.csv", out / "aggregate.csv"


def write_tables(per_recording: pd.DataFrame, aggregate: pd.DataFrame, out_dir: str | Path) -> tuple[Path, Path]:
    """Write both tables as CSV, atomically, into ``out_dir``."""
    per_recording_csv, aggregate_csv = table_paths(out_dir)
    return (
        atomic_write_text(per_recording_csv, per_recording.to_csv(index=False)),
        atomic_write_text(aggregate_csv, aggregate.to_csv(index=False)),
    )


def read_tables(out_dir: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both tables as ``write_tables`` wrote them; an InputError names a table that is missing or not CSV."""
    import pandas as pd

    tables = []
    for path, leading in zip(table_paths(out_dir), LEADING_COLUMNS, strict=True):
        try:
            table = pd.read_csv(path, dtype=dict.fromkeys(TEXT_COLUMNS, str), keep_default_na=False, na_values=[""])
        except FileNotFoundError:
            raise InputError(path, "the scores table is missing (ablate run writes it when it scores a run)") from None
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
            raise InputError(path, f"not a scores table ({error})") from None
        if tuple(table.columns[: len(leading)]) != leading or "wer" not in table:
            raise InputError(path, f"not a scores table: its columns begin {', '.join(leading)} and hold wer")
        tables.append(table)
    return tables[0], tables[1]
