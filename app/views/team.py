"""For leads: the team. Who may log in (add, disable, enable: never delete), who works on which recording
(assignments), and how far each person got (stretches decided, blind transcription, agreement).

Every change is appended to a log with the lead and the time: logins in the users file
(``toolkit.adjudication.users``), assignments in the experiment's store (``toolkit.adjudication.team``).
"""

from __future__ import annotations

import os

import app_state
import pandas as pd
import streamlit as st
from i18n import number, percent, t

from toolkit.adjudication.blind import TranscriptStore
from toolkit.adjudication.blindness import BlindPasses
from toolkit.adjudication.context import APP_ENV
from toolkit.adjudication.team import Assignments, progress
from toolkit.adjudication.users import ROLES, add_user, changes, read_users, set_disabled
from toolkit.core.errors import InputError


def _span(start: float | None, end: float | None) -> str:
    return t("team_whole") if start is None or end is None else f"{number(start)}–{number(end)} s"


def _blind(shares: dict[str, float], closed: dict[str, str]) -> str:
    """Each recording begun or closed: the share of its audio transcribed, and the pass's stage once closed."""
    shown = [
        f"{recording} {percent(shares.get(recording, 0.0))}"
        + (f" ({t(f'stage_{closed[recording]}')})" if recording in closed else "")
        for recording in sorted(shares.keys() | closed.keys())
    ]
    return " · ".join(shown) or "—"


def _seconds(typed: str) -> float:
    """A time typed the Brazilian way (``12,5``) or the English way (``12.5``)."""
    try:
        return float(typed.strip().replace(",", "."))
    except ValueError:
        raise InputError(None, t("team_bad_time", typed=typed)) from None


adj = app_state.adjudication()
lead = app_state.who()
st.title(t("page_team"))
users_file = os.environ.get(APP_ENV["users"])
with app_state.shown_errors():
    users = read_users(users_file) if users_file else {}
    transcripts = TranscriptStore(adj.store.path, adj.experiment_dir)
    durations = {entry.id: entry.duration for entry in adj.manifest.recordings}
    listed = {d.annotator for d in adj.store.decisions()} | {
        name for recording in durations for name in transcripts.annotators(recording)
    }
    names = sorted(set(users) | listed)
    assignments = Assignments(adj.store.path)
    closed: dict[str, dict[str, str]] = {}
    for done in BlindPasses(adj.store.path).closed():
        closed.setdefault(done.person, {})[done.recording_id] = done.kind

    st.subheader(t("team_people"))
    st.caption(t("team_progress_caption"))
    rows = []
    for found in progress(names, adj.store.span_states(), transcripts, durations):
        account = users.get(found.name)
        held = assignments.current(found.name)
        rows.append(
            {
                t("team_col_name"): found.name,
                t("team_col_role"): "—"
                if account is None
                else t(f"role_{account.role}") + (f" · {t('team_disabled')}" if account.disabled else ""),
                t("team_col_decided"): found.decided,
                t("team_col_agreement"): "—"
                if found.agreement is None
                else t("team_agreement", share=percent(found.agreement), shared=found.shared),
                t("team_col_blind"): _blind(found.blind_share, closed.get(found.name, {})),
                t("team_col_assigned"): " · ".join(f"{a.recording_id} {_span(a.start, a.end)}" for a in held) or "—",
            }
        )
    st.table(pd.DataFrame(rows).set_index(t("team_col_name")))  # a few rows of text: wrapped, never cut

    if not users_file:
        st.info(t("team_no_users"))
    else:
        add, state = st.columns(2)
        with add.form("team_add", clear_on_submit=True):
            st.markdown(f"**{t('team_add')}**")
            name = st.text_input(t("login_name"))
            role = st.selectbox(
                t("team_role"), ROLES, index=1, format_func=lambda r: t(f"role_{r}"), placeholder=t("choose")
            )
            password = st.text_input(t("login_password"), type="password")
            replace = st.checkbox(t("team_replace"))
            if st.form_submit_button(t("team_add_button"), type="primary"):
                with app_state.shown_errors():
                    added = add_user(users_file, name, password, role=role, replace=replace, by=lead.name)
                    st.session_state["team_done"] = t("team_added", name=added.name, role=t(f"role_{added.role}"))
                    st.rerun()
        with state.form("team_state"):
            st.markdown(f"**{t('team_disable')}**")
            who = st.selectbox(t("login_name"), sorted(users), index=None, placeholder=t("choose"))
            off, on = st.columns(2)
            disable = off.form_submit_button(t("team_disable_button"))
            enable = on.form_submit_button(t("team_enable_button"))
            if (disable or enable) and who:
                with app_state.shown_errors():
                    set_disabled(users_file, who, disable, by=lead.name)
                    st.session_state["team_done"] = t(
                        "team_disabled_done" if disable else "team_enabled_done", name=who
                    )
                    st.rerun()

    st.subheader(t("team_assign"))
    st.caption(t("team_assign_caption"))
    with st.form("team_assign_form"):
        one, two, three, four = st.columns([2, 2, 1, 1])
        annotator = one.selectbox(t("team_col_name"), names, placeholder=t("choose"))
        recording = two.selectbox(t("filter_recording"), list(durations), placeholder=t("choose"))
        start = three.text_input(t("blind_start"), placeholder=t("team_whole"))
        end = four.text_input(t("blind_end"), placeholder=t("team_whole"))
        give, take = st.columns(2)
        assign = give.form_submit_button(t("team_assign_button"), type="primary")
        withdraw = take.form_submit_button(t("team_withdraw_button"))
        if (assign or withdraw) and annotator and recording:
            with app_state.shown_errors():
                whole = not (start.strip() or end.strip())
                span = (None, None) if whole else (_seconds(start), _seconds(end))
                assignments.record(lead.name, annotator, recording, span[0], span[1], assigned=assign)
                st.session_state["team_done"] = t(
                    "team_assigned" if assign else "team_withdrawn",
                    name=annotator,
                    recording=recording,
                    span=_span(*span),
                )
                st.rerun()
    if "team_done" in st.session_state:
        st.success(app_state.plain(st.session_state.pop("team_done")))

    st.subheader(t("team_log"))
    log = [
        {
            t("hist_time"): c.at,
            t("team_col_by"): c.by,
            t("team_col_change"): t(f"team_change_{c.what}"),
            t("team_col_name"): c.name,
            t("team_col_role"): t(f"role_{c.role}"),
        }
        for c in (changes(users_file) if users_file else [])
    ] + [
        {
            t("hist_time"): a.created_at,
            t("team_col_by"): a.lead,
            t("team_col_change"): t("team_change_assigned" if a.assigned else "team_change_withdrawn")
            + f" {a.recording_id} {_span(a.start, a.end)}",
            t("team_col_name"): a.annotator,
            t("team_col_role"): "",
        }
        for a in assignments.history()
    ]
    if log:
        st.table(pd.DataFrame(log).sort_values(t("hist_time"), kind="stable").set_index(t("hist_time")))
    else:
        st.caption(t("team_log_empty"))
