"""For leads: decision conflicts and their settlement, blind-transcription conflicts and the agreed
transcription, and applying decisions into a new reference version (under the experiment's
``references/``, with a generated name). A lead never settles a conflict on a stretch they decided
as a listener; overlapping stretches are shown and settled as one.
"""

from __future__ import annotations

from collections.abc import Callable

import app_state
import pandas as pd
import streamlit as st
from i18n import n, number, percent, role, t

from toolkit.adjudication.agreement import AGREED_FOLDER, compare_recording, write_agreed
from toolkit.adjudication.apply import apply_decisions
from toolkit.adjudication.blind import TranscriptStore
from toolkit.adjudication.conflicts import LISTENERS, plan, settle
from toolkit.adjudication.spans import reference_text
from toolkit.adjudication.store import ACTIONS, CORRECT, listener_numbers
from toolkit.core.errors import InputError
from toolkit.core.transcripts import NONSPEECH, SPEECH

adj = app_state.adjudication()
who = app_state.who()
st.title(t("page_conflicts"))
if not who.is_lead:  # the page is not registered for other roles; this guards a stale link
    st.stop()


def _labels(options: dict[str, str]) -> Callable[[str], str]:
    """A radio's labels: each option's text, shown as plain text."""
    return lambda option: app_state.plain(options[option])


def _decision_rows(decisions, places: dict[int, int]) -> pd.DataFrame:  # noqa: ANN001
    """One row per decision; ``places``: each listener's place on their stretch (``listener_numbers``)."""
    return pd.DataFrame(
        [
            {
                t("hist_id"): d.id,
                t("hist_who"): d.annotator,
                t("hist_role"): role(d.role, places.get(d.id)),
                t("hist_decision"): t(f"action_{d.outcome[0]}"),
                t("hist_text"): d.new_text if d.outcome[0] == CORRECT else "",
                t("hist_note"): d.note,
                t("hist_time"): d.created_at.replace("T", " ")[:19],
            }
            for d in decisions
        ]
    )


with app_state.shown_errors():
    todo = plan(adj)
    places = listener_numbers(adj.store.decisions())
    st.markdown(
        " · ".join(
            [
                n(len(todo.applicable), "ready_one", "ready_many"),
                n(len(todo.conflicts), "conflicts_one", "conflicts_many"),
                n(len(todo.stale), "stale_one", "stale_many"),
            ]
        )
    )

    st.header(t("conf_decisions"))
    if not todo.conflicts:
        st.success(t("conf_none"))
    for k, conflict in enumerate(todo.conflicts):
        with st.container(border=True):
            kind = t("conf_kind_listeners") if conflict.kind == LISTENERS else t("conf_kind_overlap")
            where = f"{conflict.recording_id} {number(conflict.start)}–{number(conflict.end)} s"
            st.markdown(f"**{app_state.plain(where)}** · {kind}")
            current = reference_text(adj.reference(conflict.recording_id), conflict.start, conflict.end)
            st.markdown(app_state.plain(t("conf_reference", text=current or t("conf_no_turn"))))
            app_state.player(adj, conflict.recording_id, conflict.start, conflict.end, key=f"conflict_{k}", main=False)
            if conflict.kind != LISTENERS:
                stretches = len({(d.start, d.end) for d in conflict.decisions})
                whole = {"start": number(conflict.start), "end": number(conflict.end)}
                st.caption(t("conf_overlap_one", count=stretches, **whole))
            st.dataframe(_decision_rows(conflict.decisions, places), hide_index=True, width="stretch", placeholder="—")
            own = not conflict.may_settle(who)
            if own:
                st.warning(t("conf_own"))
            with st.form(f"settle_{k}"):
                options = {
                    f"d{d.id}": t(
                        "conf_settle_as",
                        who=d.annotator,
                        action=t(f"action_{d.outcome[0]}"),
                        text=f"“{d.outcome[1]}”" if d.outcome[1] else "",
                    )
                    for d in conflict.decisions
                }
                options["other"] = t("conf_other")
                choice = st.radio(t("conf_choice"), list(options), index=None, format_func=_labels(options))
                action = st.selectbox(
                    t("conf_other"), ACTIONS, format_func=lambda a: t(f"action_{a}"), placeholder=t("choose")
                )
                text = st.text_input(t("conf_text"), value=current)
                if st.form_submit_button(t("conf_settle"), disabled=own):
                    with app_state.shown_errors():
                        if choice is None:
                            raise InputError(None, t("conf_pick"))
                        picked = next((d for d in conflict.decisions if f"d{d.id}" == choice), None)
                        final = picked.outcome[0] if picked else action
                        settled = settle(
                            adj,
                            conflict,
                            who,
                            final,
                            new_text=(picked.outcome[1] if picked else text) if final == CORRECT else "",
                            note=picked.note if picked else "",
                        )
                        st.session_state["settled"] = t("conf_settled", id=settled.id)
                        st.rerun()
    if "settled" in st.session_state:
        st.success(st.session_state.pop("settled"))
    if todo.stale:
        st.subheader(t("conf_stale"))
        st.dataframe(_decision_rows(todo.stale, places), hide_index=True, width="stretch", placeholder="—")

    st.header(t("conf_transcriptions"))
    transcripts = TranscriptStore(adj.store.path, adj.experiment_dir)
    comparisons = [c for e in adj.manifest.recordings for c in compare_recording(transcripts, e.id, adj.score_options)]
    open_ones = [c for c in comparisons if c.conflict]
    if not open_ones:
        st.success(t("conf_tr_none"))
    for k, comparison in enumerate(open_ones):
        with st.container(border=True):
            st.markdown(
                app_state.plain(
                    t(
                        "conf_tr_head",
                        recording=comparison.recording_id,
                        start=number(comparison.start),
                        end=number(comparison.end),
                        wer=percent(comparison.wer),
                        errors=comparison.errors,
                        words=comparison.ref_words,
                    )
                )
            )
            app_state.player(
                adj, comparison.recording_id, comparison.start, comparison.end, key=f"transcription_{k}", main=False
            )
            st.dataframe(
                pd.DataFrame(
                    [
                        {
                            t("hist_who"): comparison.first,
                            t("blind_col_text"): comparison.first_text,
                            t("blind_col_speech"): comparison.first_speech,
                        },
                        {
                            t("hist_who"): comparison.second,
                            t("blind_col_text"): comparison.second_text,
                            t("blind_col_speech"): comparison.second_speech,
                        },
                    ]
                ),
                hide_index=True,
                width="stretch",
                placeholder="—",
            )
            own = who.name in (comparison.first, comparison.second)
            if own:
                st.warning(t("conf_own"))
            with st.form(f"tr_settle_{k}"):
                options = {
                    "first": t("conf_tr_use", who=comparison.first),
                    "second": t("conf_tr_use", who=comparison.second),
                    "other": t("conf_tr_write"),
                }
                choice = st.radio(t("conf_choice"), list(options), index=None, format_func=_labels(options))
                text = st.text_input(t("conf_text"), value="")  # neutral: neither listener's words first
                if st.form_submit_button(t("conf_tr_save"), disabled=own):
                    with app_state.shown_errors():
                        if choice is None:
                            raise InputError(None, t("conf_pick"))
                        chosen = {"first": comparison.first_text, "second": comparison.second_text}.get(choice, text)
                        label = {"first": comparison.first_speech, "second": comparison.second_speech}.get(choice, "")
                        saved = transcripts.settle(
                            recording_id=comparison.recording_id,
                            start=comparison.start,
                            end=comparison.end,
                            duration=adj.entry(comparison.recording_id).duration,
                            text=chosen,
                            lead=who.name,
                            speech=SPEECH if chosen.strip() else (label if label == NONSPEECH else ""),
                            source=f"{comparison.first} / {comparison.second}",
                        )
                        st.session_state["tr_settled"] = t("conf_tr_saved", id=saved.id)
                        st.rerun()
    if "tr_settled" in st.session_state:
        st.success(st.session_state.pop("tr_settled"))

    st.subheader(t("conf_agreed"))
    st.caption(t("conf_agreed_caption"))
    for entry in adj.manifest.recordings:
        if not transcripts.annotators(entry.id):
            continue
        blocked = sum(1 for c in open_ones if c.recording_id == entry.id)
        if blocked:
            st.caption(app_state.plain(f"{entry.id}: " + t("conf_agreed_blocked", count=blocked)))
        if st.button(t("conf_agreed_button", recording=entry.id), disabled=bool(blocked), key=f"agreed_{entry.id}"):
            with app_state.shown_errors():
                agreed = write_agreed(transcripts, entry.id, entry.duration, adj.score_options)
                path = transcripts.folder / AGREED_FOLDER / f"{entry.id}.TextGrid"
                done = t("conf_agreed_done", path=app_state.relative(adj, path), turns=len(agreed.reference.utterances))
                st.success(app_state.plain(done))

    st.header(t("conf_apply"))
    st.caption(t("conf_apply_caption"))
    if st.button(t("conf_apply_button"), disabled=bool(todo.conflicts) or not todo.applicable, type="primary"):
        with app_state.shown_errors():
            result = apply_decisions(adj, who.name)
            st.success(
                app_state.plain(
                    t(
                        "conf_applied",
                        path=app_state.relative(adj, result.out_dir),
                        applied=n(len(result.applied), "applied_one", "applied_many"),
                        changed=", ".join(result.changed) or t("conf_nothing_changed"),
                        sha=result.manifest.sha256[:12],
                    )
                )
            )
    if todo.conflicts:
        st.warning(t("conf_apply_blocked"))
