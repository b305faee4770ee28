"""Second listener: conflicts between first and second listeners, their settlement, and applying decisions."""

from __future__ import annotations

import app_state
import pandas as pd
import streamlit as st

from toolkit.adjudication.apply import apply_decisions, plan
from toolkit.adjudication.store import ACTIONS, CORRECT

adj = app_state.adjudication()
who = st.session_state.get("annotator", "")
st.title("Second listener & apply")
with app_state.shown_errors():
    todo = plan(adj)
    st.markdown(
        f"**{len(todo.applicable)}** decisions ready to apply on this reference version, "
        f"**{len(todo.conflicts)}** conflict(s) to settle, **{len(todo.stale)}** decisions made on "
        "another reference version (shown below, never applied to this one)."
    )
    if not todo.conflicts:
        st.success("No conflicts between first and second listeners.")
    for state in todo.conflicts:
        first, second = state.first, state.second
        with st.container(border=True):
            st.markdown(
                f"**{state.recording_id} {state.start:.2f}–{state.end:.2f} s** — reference: "
                f"“{first.old_text or '(no turn)'}”"
            )
            app_state.player(adj, state.recording_id, state.start, state.end)
            st.dataframe(
                pd.DataFrame(
                    [
                        {
                            "listener": d.role,
                            "annotator": d.annotator,
                            "decision": d.action,
                            "new text": d.new_text,
                            "note": d.note,
                            "time (UTC)": d.created_at,
                        }
                        for d in (first, second)
                    ]
                ),
                hide_index=True,
                width="stretch",
            )
            key = f"{state.recording_id}:{state.start}:{state.end}"
            with st.form(f"settle:{key}"):
                options = {
                    f"As {first.annotator} (first): {first.action}": first,
                    f"As {second.annotator} (second): {second.action}": second,
                }
                choice = st.radio("Settle", list(options) + ["Other decision"], key=f"choice:{key}")
                action = st.selectbox("Other decision", ACTIONS, key=f"action:{key}")
                text = st.text_input(
                    "Text (for a correction)", value=second.new_text or first.old_text, key=f"text:{key}"
                )
                if st.form_submit_button("Settle this span"):
                    with app_state.shown_errors():
                        picked = options.get(choice)
                        final = picked.action if picked else action
                        settled = adj.decide(
                            recording_id=state.recording_id,
                            start=state.start,
                            end=state.end,
                            action=final,
                            annotator=who,
                            new_text=(picked.new_text if picked else text) if final == CORRECT else "",
                            note=picked.note if picked else "",
                            settle=True,
                            source=f"settlement of #{first.id} and #{second.id}",
                        )
                        st.success(f"Settled with decision #{settled.id}.")
                        st.rerun()
    if todo.stale:
        st.subheader("Decisions made on another reference version")
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "#": d.id,
                        "recording": d.recording_id,
                        "start": d.start,
                        "end": d.end,
                        "decision": d.action,
                        "annotator": d.annotator,
                        "made on reference": d.reference_sha256[:12],
                    }
                    for d in todo.stale
                ]
            ),
            hide_index=True,
            width="stretch",
        )

    st.subheader("Write a new reference version")
    st.caption(
        "New TextGrids, a new manifest with their hashes and a record of the decisions that went in; "
        "the current version stays as it is. Same as `ablate reference apply EXP --out REF_DIR`."
    )
    default = adj.experiment_dir / "references" / f"v-{adj.manifest.sha256[:8]}-next"
    out = st.text_input("New reference folder (must not exist yet)", value=str(default))
    if st.button("Apply decisions", disabled=bool(todo.conflicts) or not todo.applicable, type="primary"):
        with app_state.shown_errors():
            result = apply_decisions(adj, out, who)
            st.success(
                f"Wrote {result.out_dir}: {len(result.applied)} decisions applied to "
                f"{', '.join(result.changed)}; new manifest sha256 {result.manifest.sha256}. Point the "
                "experiment's `manifest =` at it to score against this version."
            )
    if todo.conflicts:
        st.warning("Settle every conflict above before applying.")
