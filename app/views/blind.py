"""Blind transcription: listen and type what was said. No model output is read or shown on this page."""

from __future__ import annotations

import app_state
import pandas as pd
import streamlit as st

from toolkit.adjudication.blind import TranscriptStore
from toolkit.core.transcripts import NONSPEECH, SPEECH

SPEECH_CHOICES = {"": "not annotated", SPEECH: "speech (confirmed)", NONSPEECH: "non-speech (confirmed: nobody speaks)"}

adj = app_state.adjudication()
who = st.session_state.get("annotator", "")
st.title("Blind transcription")
st.caption(
    f"Type what was said under the transcription convention ({app_state.CONVENTION.name}, below). "
    "This page never reads a recognizer's output."
)
with st.expander("Transcription convention (protocol/transcription-convention.md)"):
    st.markdown(app_state.CONVENTION.read_text(encoding="utf-8"))
with app_state.shown_errors():
    transcripts = TranscriptStore(adj.store.path, adj.experiment_dir)
    ids = [entry.id for entry in adj.manifest.recordings]
    pick, size, go = st.columns([2, 1, 1], vertical_alignment="bottom")
    recording = pick.selectbox("Recording", ids, key="blind_recording")
    duration = adj.entry(recording).duration
    length = size.number_input("Stretch length (s)", 2.0, 60.0, 10.0, 1.0)
    suggested = transcripts.next_untranscribed(recording, who, duration, float(length))
    if go.button("Next untranscribed stretch") or st.session_state.get("blind_for") != (recording, who):
        st.session_state["blind_start"], st.session_state["blind_end"] = suggested
        st.session_state["blind_for"] = (recording, who)
    left, right = st.columns(2)
    start = left.number_input("Start (s)", 0.0, duration, key="blind_start", step=0.1, format="%.3f")
    end = right.number_input("End (s)", 0.0, duration, key="blind_end", step=0.1, format="%.3f")
    if end > start:
        app_state.player(adj, recording, float(start), float(end))
    else:
        st.warning("The end must come after the start.")

    with st.form("transcribe", clear_on_submit=True):
        text = st.text_area("What was said (one turn; empty if nobody speaks)")
        speaker = st.text_input("Speaker (optional; as in the manifest's speaker column, e.g. ANA)")
        speech = st.radio("This stretch is", list(SPEECH_CHOICES), format_func=SPEECH_CHOICES.get, horizontal=True)
        st.markdown("Unresolved audio inside the stretch (optional)")
        u1, u2, u3 = st.columns([1, 1, 2])
        u_start = u1.number_input("from (s)", 0.0, duration, float(start), 0.1, format="%.3f")
        u_end = u2.number_input("to (s)", 0.0, duration, float(start), 0.1, format="%.3f")
        u_note = u3.text_input("note (e.g. inaudível, sobreposição, nome?)")
        st.markdown("Word times at the turn's boundaries (optional; 0 = not given)")
        w1, w2 = st.columns(2)
        first_end = w1.number_input("first word ends at (s)", 0.0, duration, 0.0, 0.05, format="%.3f")
        last_start = w2.number_input("last word starts at (s)", 0.0, duration, 0.0, 0.05, format="%.3f")
        if st.form_submit_button("Save this stretch", type="primary"):
            with app_state.shown_errors():
                segment = transcripts.save(
                    recording_id=recording,
                    annotator=who,
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
                st.session_state["blind_saved"] = (
                    f"Saved {segment.start:.2f}–{segment.end:.2f} s; "
                    f"{transcripts.textgrid_path(recording, who)} rewritten."
                )
                st.session_state.pop("blind_for", None)  # move on to the next untranscribed stretch
                st.rerun()
    if "blind_saved" in st.session_state:
        st.success(st.session_state.pop("blind_saved"))

    mine = transcripts.segments(recording, who)
    st.subheader(f"Your transcription of {recording}")
    if mine:
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "start": s.start,
                        "end": s.end,
                        "text": s.text,
                        "speaker": s.speaker,
                        "speech": SPEECH_CHOICES[s.speech] if not s.text else "speech",
                        "unresolved": f"{s.unresolved_start:g}–{s.unresolved_end:g} s {s.unresolved_note}"
                        if s.unresolved_start is not None
                        else "",
                        "saved (UTC)": s.created_at,
                    }
                    for s in mine
                ]
            ),
            hide_index=True,
            width="stretch",
        )
        st.caption(
            f"TextGrid (tiers utterances, words, speech, unresolved): {transcripts.textgrid_path(recording, who)}"
        )
    else:
        st.caption("Nothing saved yet.")
