"""For leads: where each person stands on each recording's blind pass, and excusing someone from one.

A minimal view of ``toolkit.adjudication.blindness``: not started, in progress (segments saved),
finished (closed by the person), excused (closed by a lead, who and when). Until a person's pass
of a recording is closed, no page shows them that recording's model output.
"""

from __future__ import annotations

import os

import app_state
import pandas as pd
import streamlit as st
from i18n import t

from toolkit.adjudication.blind import TranscriptStore
from toolkit.adjudication.blindness import EXCUSED, FINISHED, BlindPasses
from toolkit.adjudication.context import APP_ENV
from toolkit.adjudication.users import LEAD, read_users

adj = app_state.adjudication()
who = app_state.who()
st.title(t("page_stages"))
if not who.is_lead:  # the page is not registered for other roles; this guards a stale link
    st.stop()
st.caption(t("stages_caption"))
with app_state.shown_errors():
    transcripts = TranscriptStore(adj.store.path, adj.experiment_dir)
    passes = BlindPasses(adj.store.path)
    recordings = [e.id for e in adj.manifest.recordings]
    users_file = os.environ.get(APP_ENV["users"])
    listed = [name for name, account in read_users(users_file).items() if account.role != LEAD] if users_file else []
    others = [name for r in recordings for name in transcripts.annotators(r)]
    people = list(dict.fromkeys([*listed, *others, *(c.person for c in passes.closed())]))
    if not people:
        st.info(t("stages_nobody"))
        st.stop()
    stages = passes.stages(transcripts, people, recordings)
    st.dataframe(
        pd.DataFrame(
            [
                {
                    t("stages_col_person"): s.person,
                    t("stages_col_recording"): s.recording_id,
                    t("stages_col_stage"): t(f"stage_{s.stage}"),
                    t("stages_col_segments"): s.segments,
                    t("stages_col_by"): s.by,
                    t("stages_col_at"): s.at.replace("T", " ")[:19],
                }
                for s in stages
            ]
        ),
        hide_index=True,
        width="stretch",
    )
    open_ones = [(s.person, s.recording_id) for s in stages if s.stage not in (FINISHED, EXCUSED)]
    st.subheader(t("stages_excuse"))
    st.caption(t("stages_excuse_caption"))
    with st.form("excuse"):
        person = st.selectbox(
            t("stages_col_person"), sorted({p for p, _ in open_ones}), index=None, placeholder=t("choose")
        )
        chosen = st.multiselect(t("stages_col_recording"), recordings, placeholder=t("choose"))
        if st.form_submit_button(t("stages_excuse_button")) and person and chosen:
            with app_state.shown_errors():
                done = [passes.excuse(r, person, who).recording_id for r in chosen if not passes.is_closed(person, r)]
                st.session_state["excused"] = t("stages_excused", person=person, recording=", ".join(done) or "—")
                st.rerun()
    if "excused" in st.session_state:
        st.success(app_state.plain(st.session_state.pop("excused")))
