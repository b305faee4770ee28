"""Where a windowed arm's window edges fell, read back from its outputs: in a pause, on the grid (and why), or at
the edge of the recording (or of the VAD region the windows cover).

The pipeline records each window's placement on its decode unit (``units[].placement`` of
``outputs/<arm>/<recording>.json``: ``start_at``/``end_at`` and, for a grid edge, ``start_reason``/
``end_reason``; toolkit/pipeline/windows.py). Outputs written before reasons were recorded give a
grid edge the reason ``"not recorded"``; a window of ``placement = "grid"`` records nothing, so its
inner edges count as ``grid`` with the reason ``"grid placement"`` and the first start and last end
of each region as ``recording edge``. Windows of one region share their unit id's part before ``.win``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from toolkit.runs.arm_output_file import ArmOutputFile

GRID, EDGE = "grid", "recording edge"
NOT_RECORDED = "not recorded"
GRID_PLACEMENT = "grid placement"
EDGES = ("start", "end")
COLUMNS = ["arm", "recording_id", "edge", "at", "reason", "count"]


@dataclass(frozen=True)
class WindowEdges:
    """Counts of window edges by arm, recording, edge (start/end), place and reason (the ``COLUMNS`` table)."""

    table: pd.DataFrame

    def totals(self, arm: str) -> dict[str, dict[str, int]]:
        """Per edge (start, end): how many fell at each place, a grid edge as ``grid: <reason>``."""
        rows = self.table[self.table["arm"] == arm]
        totals: dict[str, dict[str, int]] = {edge: {} for edge in EDGES}
        for row in rows.itertuples(index=False):
            place = f"{row.at}: {row.reason}" if row.reason else str(row.at)
            totals[str(row.edge)][place] = totals[str(row.edge)].get(place, 0) + int(row.count)
        return totals

    def summary(self) -> pd.DataFrame:
        """One row per arm and edge: edges in a pause, on the grid by reason, at the recording's edge."""
        if self.table.empty:
            return pd.DataFrame()
        places = self.table.assign(
            place=[f"{at}: {why}" if why else at for at, why in zip(self.table["at"], self.table["reason"])]
        )
        wide = places.pivot_table(index=["arm", "edge"], columns="place", values="count", aggfunc="sum", fill_value=0)
        wide.insert(0, "edges", wide.sum(axis=1))
        ordered = sorted(wide.columns[1:], key=lambda c: (not c.startswith("pause"), c.startswith(EDGE), c))
        wide = wide[["edges", *ordered]].reset_index()
        arm_order = list(dict.fromkeys(self.table["arm"]))
        wide["_arm"] = wide["arm"].map(arm_order.index)
        wide["_edge"] = wide["edge"].map(EDGES.index)
        return wide.sort_values(["_arm", "_edge"]).drop(columns=["_arm", "_edge"]).reset_index(drop=True)


def window_edges(outputs: Mapping[tuple[str, str], ArmOutputFile], windowed: Iterable[str]) -> WindowEdges:
    """Where the window edges of each arm in ``windowed`` fell, per recording, from the arms' outputs."""
    chosen = set(windowed)
    counts: Counter[tuple[str, str, str, str, str]] = Counter()
    for (arm, recording), output in outputs.items():
        if arm not in chosen:
            continue
        for edge, at, reason in _edges(output.units):
            counts[arm, recording, edge, at, reason] += 1
    rows = [dict(zip(COLUMNS, (*key, n))) for key, n in counts.items()]
    return WindowEdges(pd.DataFrame.from_records(rows, columns=COLUMNS))


def _edges(units: Iterable[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(edge, place, reason) of every window edge among one output's decode units."""
    regions: dict[str, dict[str, dict[str, Any]]] = {}
    for unit in units:  # a window decoded by two recognizers (combine) is one window
        prefix, windowed, _ = str(unit.get("unit", "")).rpartition(".win")
        if windowed:
            regions.setdefault(prefix, {}).setdefault(str(unit["unit"]), unit)
    edges = []
    for by_id in regions.values():
        windows = [by_id[unit_id] for unit_id in sorted(by_id)]
        for i, unit in enumerate(windows):
            placement = unit.get("placement")
            for edge in EDGES:
                if placement is None:  # placement = "grid": only the region's own edges are not on the grid
                    outer = (edge == "start" and i == 0) or (edge == "end" and i == len(windows) - 1)
                    edges.append((edge, EDGE, "") if outer else (edge, GRID, GRID_PLACEMENT))
                    continue
                at = placement[f"{edge}_at"]
                reason = placement.get(f"{edge}_reason", NOT_RECORDED) if at == GRID else ""
                edges.append((edge, at, reason))
    return edges
