"""Blind transcription: listen to a stretch cut at pauses and type what was said. No model output is read here.

The stretches come from the experiment's VAD regions (``toolkit.adjudication.stretches``): only
where speech is, never what a recognizer wrote. Start and end are filled from the stretch.
"""

from __future__ import annotations

import app_state
import pandas as pd
import streamlit as st
import waveform
from i18n import language, number, t

from toolkit.adjudication.blind import TranscriptStore
from toolkit.adjudication.stretches import PAUSE, Stretches, recording_stretches
from toolkit.core.transcripts import NONSPEECH, SPEECH

SPEECH_CHOICES = {"": "speech_unset", SPEECH: "speech_speech", NONSPEECH: "speech_nonspeech"}


@st.cache_resource(show_spinner=False, max_entries=64)
def _stretches(recording: str, sha256: str, _adj: object) -> Stretches:
    adj = app_state.adjudication()
    return recording_stretches(adj.experiment, adj.entry(recording))  # type: ignore[arg-type]


def _go_to(index: int) -> None:
    st.session_state["blind_index"] = index


adj = app_state.adjudication()
who = app_state.who()
st.title(t("page_blind"))
st.caption(t("blind_caption"))
with st.expander(t("blind_convention")):
    st.markdown(app_state.CONVENTIONS[language()].read_text(encoding="utf-8"))
with app_state.shown_errors():
    transcripts = TranscriptStore(adj.store.path, adj.experiment_dir)
    ids = [entry.id for entry in adj.manifest.recordings]
    recording = st.selectbox(t("blind_recording"), ids, key="blind_recording", placeholder=t("choose"))
    entry = adj.entry(recording)
    with st.spinner(t("blind_finding_pauses")):
        stretches = _stretches(recording, entry.sha256, adj)
    st.caption(t(f"blind_source_{stretches.source}"))
    items = stretches.items
    mine = transcripts.segments(recording, who.name)
    done = [any(s.start < x.end and s.end > x.start for s in mine) for x in items]
    if st.session_state.get("blind_for") != (recording, who.name):
        following = transcripts.next_untranscribed(recording, who.name, items)
        st.session_state["blind_index"] = items.index(following) if following is not None else 0
        st.session_state["blind_for"] = (recording, who.name)
    index = min(st.session_state.get("blind_index", 0), len(items) - 1)

    def label(k: int) -> str:
        x = items[k]
        kind = t("blind_kind_pause") if x.kind == PAUSE else t("blind_kind_speech")
        return t(
            "blind_stretch_label",
            n=k + 1,
            start=number(x.start),
            end=number(x.end),
            kind=kind,
            done=t("blind_done_mark") if done[k] else "",
        )

    pick, go = st.columns([3, 1], vertical_alignment="bottom")
    st.session_state["blind_pick"] = index
    pick.selectbox(
        t("blind_stretch"),
        range(len(items)),
        format_func=label,
        key="blind_pick",
        placeholder=t("choose"),
        on_change=lambda: _go_to(st.session_state["blind_pick"]),
    )
    following = transcripts.next_untranscribed(recording, who.name, items)
    if go.button(t("blind_next"), disabled=following is None):
        _go_to(items.index(following))  # type: ignore[arg-type]
        st.rerun()
    if following is None:
        st.success(t("blind_all_done"))
    stretch = items[index]
    if st.session_state.get("blind_stretch") != (recording, index):
        st.session_state["blind_start"], st.session_state["blind_end"] = stretch.start, stretch.end
        st.session_state["blind_stretch"] = (recording, index)
    left, right = st.columns(2)
    duration = entry.duration
    start = left.number_input(t("blind_start"), 0.0, duration, key="blind_start", step=0.1, format="%.3f")
    end = right.number_input(t("blind_end"), 0.0, duration, key="blind_end", step=0.1, format="%.3f")
    if end > start:
        yours = waveform.transcript_lane(
            t("wave_lane_yours"), transcripts.reference(recording, who.name), float(start), float(end)
        )
        wave = waveform.view(adj.store.path, who.name, recording, [yours])
        app_state.player(adj, recording, float(start), float(end), key="blind_player", wave=wave)
    else:
        st.warning(t("blind_end_before"))
    st.caption(t("blind_keys"))

    with st.form("transcribe", clear_on_submit=True):
        text = st.text_area(t("blind_text"))
        speaker = st.text_input(t("blind_speaker"))
        speech = st.radio(
            t("blind_speech"), list(SPEECH_CHOICES), format_func=lambda k: t(SPEECH_CHOICES[k]), horizontal=True
        )
        st.markdown(t("blind_unresolved"))
        u1, u2, u3 = st.columns([1, 1, 2])
        u_start = u1.number_input(t("blind_u_from"), 0.0, duration, float(start), 0.1, format="%.3f")
        u_end = u2.number_input(t("blind_u_to"), 0.0, duration, float(start), 0.1, format="%.3f")
        u_note = u3.text_input(t("blind_u_note"))
        st.markdown(t("blind_words"))
        w1, w2 = st.columns(2)
        first_end = w1.number_input(t("blind_first_end"), 0.0, duration, 0.0, 0.05, format="%.3f")
        last_start = w2.number_input(t("blind_last_start"), 0.0, duration, 0.0, 0.05, format="%.3f")
        if st.form_submit_button(t("blind_save"), type="primary"):
            with app_state.shown_errors():
                segment = transcripts.save(
                    recording_id=recording,
                    annotator=who.name,
                    start=float(start),
                    end=float(end),
                    duration=duration,
                    text=text,
                    speaker=speaker,
                    speech=speech,
                    unresolved=(u_start, u_end, u_note) if u_end > u_start else None,
                    first_word_end=first_end or None,
                    last_word_start=last_start or None,
                )
                st.session_state["blind_saved"] = t(
                    "blind_saved",
                    start=number(segment.start),
                    end=number(segment.end),
                    path=app_state.relative(adj, transcripts.textgrid_path(recording, who.name)),
                )
                following = transcripts.next_untranscribed(recording, who.name, items)
                if following is not None:
                    _go_to(items.index(following))
                st.rerun()
    if "blind_saved" in st.session_state:
        st.success(app_state.plain(st.session_state.pop("blind_saved")))

    st.subheader(app_state.plain(t("blind_mine", recording=recording)))
    if mine:
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        t("blind_start"): number(s.start),
                        t("blind_end"): number(s.end),
                        t("blind_col_text"): s.text,
                        t("blind_col_speaker"): s.speaker,
                        t("blind_col_speech"): t(SPEECH_CHOICES[s.speech if not s.text else SPEECH]),
                        t("blind_col_unresolved"): f"{number(s.unresolved_start)}–{number(s.unresolved_end or 0.0)} s "
                        f"{s.unresolved_note}"
                        if s.unresolved_start is not None
                        else "",
                        t("blind_col_saved"): s.created_at.replace("T", " ")[:19],
                    }
                    for s in mine
                ]
            ),
            hide_index=True,
            width="stretch",
            placeholder="—",
        )
        st.caption(
            app_state.plain(
                t("blind_textgrid", path=app_state.relative(adj, transcripts.textgrid_path(recording, who.name)))
            )
        )
    else:
        st.caption(t("blind_nothing"))
