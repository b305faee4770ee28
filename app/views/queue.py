"""Review queue: every span of the chosen run that needs a listener, ranked, with filters and counts."""

from __future__ import annotations

import app_state
import pandas as pd
import streamlit as st

from toolkit.adjudication.context import OPEN, STATUSES
from toolkit.adjudication.queue import KIND_LABELS, KINDS

adj, folder = app_state.run_page("Review queue")
with app_state.shown_errors():
    queue = app_state.queue(adj, folder)
    statuses = adj.item_statuses([(i.recording_id, i.start, i.end) for i in queue.items])
    for problem in queue.problems:
        st.warning(f"Not in the queue: {problem}")
    counts = queue.counts()
    open_counts = {
        kind: sum(1 for i, s in zip(queue.items, statuses) if i.kind == kind and s == OPEN) for kind in KINDS
    }
    for column, kind in zip(st.columns(len(KINDS)), KINDS):
        column.metric(KIND_LABELS[kind], counts[kind])
        column.caption(f"{open_counts[kind]} open")

    arms = sorted({arm for item in queue.items for arm in item.arms})
    left, middle, right, last = st.columns(4)
    recordings = left.multiselect("Recording", sorted({i.recording_id for i in queue.items}))
    chosen_arms = middle.multiselect("Arm", arms)
    kinds = right.multiselect("Kind", KINDS, format_func=lambda k: KIND_LABELS[k])
    wanted = last.multiselect("Status", STATUSES)
    shown = set(map(id, queue.filtered(recordings, chosen_arms, kinds)))
    rows = [
        (rank, item, status)
        for rank, (item, status) in enumerate(zip(queue.items, statuses), 1)
        if id(item) in shown and (not wanted or status in wanted)
    ]
    table = pd.DataFrame.from_records(
        [
            {
                "rank": rank,
                "kind": item.kind,
                "detail": item.detail,
                "recording": item.recording_id,
                "start": item.start,
                "end": item.end,
                "status": status,
                "reference": item.reference,
                "arms say": " · ".join(f"{label}: {text}" for label, text in item.hypotheses),
                "arms": ", ".join(item.arms),
            }
            for rank, item, status in rows
        ],
        columns=["rank", "kind", "detail", "recording", "start", "end", "status", "reference", "arms say", "arms"],
    )
    st.caption(f"{len(rows)} of {len(queue.items)} spans shown. Select a row, then open it in span review.")
    event = st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        on_select="rerun",
        selection_mode="single-row",
        key="queue_table",
        column_config={
            "start": st.column_config.NumberColumn(format="%.2f s"),
            "end": st.column_config.NumberColumn(format="%.2f s"),
        },
    )
    selected = event.selection.rows if event is not None else []
    first_open = next((item for _, item, status in rows if status == OPEN and item.timed), None)
    one, two = st.columns(2)
    if one.button("Review selected span", disabled=not selected, type="primary"):
        st.session_state["item_key"] = rows[selected[0]][1].key
        st.switch_page("views/review.py")
    if two.button("Review next open span", disabled=first_open is None):
        st.session_state["item_key"] = first_open.key  # type: ignore[union-attr]
        st.switch_page("views/review.py")
