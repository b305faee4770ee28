"""Review queue: every stretch of the chosen run that needs a listener, ranked, with filters and counts.

The table keeps to short columns so it fits a laptop's screen; the reference and what each arm says
are shown, wrapped, for the selected row (the first one until a row is selected). A lead sees where
each stretch stands (open, decided, conflict, other version); an annotator sees only their own status
and how many listeners decided, never what the others decided. What a lead assigned to this listener
(the team page) comes first, marked; the rest follows in rank order.
"""

from __future__ import annotations

import app_state
import pandas as pd
import streamlit as st
from i18n import detail, n, number, said, t

from toolkit.adjudication.context import OPEN, STATUSES
from toolkit.adjudication.queue import KINDS
from toolkit.adjudication.store import Decision
from toolkit.adjudication.team import Assignments, assigned_first


def _yours(mine: Decision | None) -> str:
    """The queue's "yours" column: this listener's own latest decision on the item, or open."""
    return t("status_open") if mine is None else t(f"action_{mine.outcome[0]}")


adj, folder = app_state.run_page(t("page_queue"))
who = app_state.who()
with app_state.shown_errors():
    app_state.hidden_recordings(adj, folder)
    queue = app_state.queue(adj, folder)
    spans = [(i.recording_id, i.start, i.end) for i in queue.items]
    views = adj.listener_view(spans, who.name)
    statuses = adj.item_statuses(spans) if who.is_lead else None
    for problem in queue.problems:
        st.warning(app_state.plain(t("queue_problem", problem=app_state.relative(adj, problem))))
    counts = queue.counts()
    for column, kind in zip(st.columns(len(KINDS)), KINDS):
        column.metric(t(f"kind_{kind}"), counts[kind])
        mine_open = sum(1 for i, v in zip(queue.items, views) if i.kind == kind and v.mine is None)
        column.caption(n(mine_open, "queue_open_one", "queue_open_many"))

    arms = sorted({arm for item in queue.items for arm in item.arms})
    left, middle, right, last = st.columns(4)
    choose = t("choose")
    recordings = left.multiselect(
        t("filter_recording"), sorted({i.recording_id for i in queue.items}), placeholder=choose
    )
    chosen_arms = middle.multiselect(t("filter_arm"), arms, placeholder=choose)
    kinds = right.multiselect(t("filter_kind"), KINDS, format_func=lambda k: t(f"kind_{k}"), placeholder=choose)
    status_choices = list(STATUSES) if who.is_lead else ["open", "decided"]
    wanted = last.multiselect(
        t("filter_status"), status_choices, format_func=lambda s: t(f"status_{s}"), placeholder=choose
    )
    shown = set(map(id, queue.filtered(recordings, chosen_arms, kinds)))

    def status_of(k: int) -> str:
        if statuses is not None:
            return statuses[k]
        return OPEN if views[k].mine is None else "decided"

    mine = Assignments(adj.store.path).current(who.name)
    order = assigned_first(spans, mine)
    assigned = {k for k in order if any(a.covers(*spans[k]) for a in mine)}
    rows = [
        (k + 1, queue.items[k], k)
        for k in order
        if id(queue.items[k]) in shown and (not wanted or status_of(k) in wanted)
    ]
    table = pd.DataFrame.from_records(
        [
            {
                t("col_rank"): rank,
                t("col_kind"): t(f"kind_{item.kind}"),
                t("col_detail"): detail(item.detail),
                t("col_recording"): item.recording_id,
                t("col_start"): "" if item.start is None else number(item.start),
                t("col_end"): "" if item.end is None else number(item.end),
                t("col_status"): t(f"status_{status_of(k)}") if statuses is not None else None,
                t("col_yours"): _yours(views[k].mine) + (f" · {t('queue_assigned')}" if k in assigned else ""),
                t("col_listeners"): views[k].listeners,
                t("col_reference"): item.reference,
                t("col_arms_say"): " · ".join(f"{label}: {said(text)}" for label, text in item.hypotheses),
                t("col_arms"): ", ".join(item.arms),
            }
            for rank, item, k in rows
        ],
        columns=[
            t("col_rank"),
            t("col_kind"),
            t("col_detail"),
            t("col_recording"),
            t("col_start"),
            t("col_end"),
            t("col_status"),
            t("col_yours"),
            t("col_listeners"),
            t("col_reference"),
            t("col_arms_say"),
            t("col_arms"),
        ],
    )
    if statuses is None:
        table = table.drop(columns=[t("col_status")])
    st.caption(t("queue_shown", shown=len(rows), total=len(queue.items)))
    words = (t("col_reference"), t("col_arms_say"), t("col_arms"))  # long texts: under the table, wrapped
    event = st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        on_select="rerun",
        selection_mode="single-row",
        key="queue_table",
        column_order=[c for c in table.columns if c not in words],
        placeholder="—",
    )
    selected = event.selection.rows if event is not None else []
    if rows:
        shown_row = table.iloc[selected[0] if selected else 0]
        st.markdown(
            "  \n".join(
                f"**{t('queue_row', rank=shown_row[t('col_rank')])}**"
                if k == 0
                else f"**{column}:** {app_state.plain(shown_row[column] or '—')}"
                for k, column in enumerate(("", *words))
            )
        )
    first_open = next((item for _, item, k in rows if views[k].mine is None and item.timed), None)
    one, two = st.columns(2)
    if one.button(t("review_selected"), disabled=not selected, type="primary"):
        st.session_state["item_key"] = rows[selected[0]][1].key
        st.switch_page("views/review.py", query_params={"run": folder.root.name, "item": rows[selected[0]][1].key})
    if two.button(t("review_next_open"), disabled=first_open is None):
        st.session_state["item_key"] = first_open.key  # type: ignore[union-attr]
        st.switch_page("views/review.py", query_params={"run": folder.root.name, "item": first_open.key})  # type: ignore[union-attr]
