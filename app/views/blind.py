"""Blind transcription: listen to a stretch cut at pauses and type what was said. No model output is read here.

The stretches come from the experiment's VAD regions (``toolkit.adjudication.stretches``): only
where speech is, never what a recognizer wrote. Start and end are filled from the stretch. The
recording and stretch are kept in the address and the form as a draft in the store, so a reload
or a server restart comes back to the same stretch with the same text. Once every stretch is
transcribed the listener closes their pass (``toolkit.adjudication.blindness``): from then on the
recording's model output is theirs to see, and the pass takes no more segments.
"""

from __future__ import annotations

import app_state
import pandas as pd
import streamlit as st
import waveform
from i18n import language, number, t

from toolkit.adjudication.blind import TranscriptStore
from toolkit.adjudication.blindness import BlindPasses
from toolkit.adjudication.drafts import BlindDrafts
from toolkit.adjudication.stretches import PAUSE, Stretch, Stretches, recording_stretches
from toolkit.core.transcripts import NONSPEECH, SPEECH

SPEECH_CHOICES = {"": "speech_unset", SPEECH: "speech_speech", NONSPEECH: "speech_nonspeech"}


@st.cache_resource(show_spinner=False, max_entries=64)
def _stretches(recording: str, sha256: str, _adj: object) -> Stretches:
    adj = app_state.adjudication()
    return recording_stretches(adj.experiment, adj.entry(recording))  # type: ignore[arg-type]


def _go_to(index: int) -> None:
    st.session_state["blind_index"] = index


def _opening_recording(ids: list[str]) -> str:
    """Where the page opens: the recording in the address, else the one of the latest draft, else the first."""
    wanted = st.query_params.get("recording")
    if wanted in ids:
        return str(wanted)
    latest = drafts.latest(who.name)
    return latest.recording_id if latest is not None and latest.recording_id in ids else ids[0]


def _opening_stretch(recording: str, items: list[Stretch], addressed: bool) -> int:
    """The stretch the page opens on: the address's, else the latest draft's, else the next untranscribed."""
    starts = [round(x.start, 3) for x in items]
    try:
        at = round(float(st.query_params.get("at", "")), 3) if addressed else None
    except ValueError:
        at = None
    latest = drafts.latest(who.name, recording)
    for wanted in (at, None if latest is None else round(latest.start, 3)):
        if wanted in starts:
            return starts.index(wanted)
    following = transcripts.next_untranscribed(recording, who.name, items)
    return items.index(following) if following is not None else 0


def _number(values: dict[str, str], key: str, default: float, top: float) -> float:
    """A number field's drafted value, if it is one within ``0..top``."""
    try:
        value = float(values.get(key, ""))
    except ValueError:
        return default
    return value if 0.0 <= value <= top else default


adj = app_state.adjudication()
who = app_state.who()
st.title(t("page_blind"))
st.caption(t("blind_caption"))
with st.expander(t("blind_convention")):
    st.markdown(app_state.CONVENTIONS[language()].read_text(encoding="utf-8"))
with app_state.shown_errors():
    transcripts = TranscriptStore(adj.store.path, adj.experiment_dir)
    drafts = BlindDrafts(adj.store.path)
    passes = BlindPasses(adj.store.path)
    ids = [entry.id for entry in adj.manifest.recordings]
    if "blind_recording" not in st.session_state:
        st.session_state["blind_recording"] = _opening_recording(ids)
    addressed = st.query_params.get("recording")
    recording = st.selectbox(t("blind_recording"), ids, key="blind_recording", placeholder=t("choose"))
    st.query_params["recording"] = recording
    entry = adj.entry(recording)
    with st.spinner(t("blind_finding_pauses")):
        stretches = _stretches(recording, entry.sha256, adj)
    st.caption(t(f"blind_source_{stretches.source}"))
    items = stretches.items
    mine = transcripts.segments(recording, who.name)
    done = [any(s.start < x.end and s.end > x.start for s in mine) for x in items]
    if st.session_state.get("blind_for") != (recording, who.name):
        st.session_state["blind_index"] = _opening_stretch(recording, items, addressed == recording)
        st.session_state["blind_for"] = (recording, who.name)
    index = min(st.session_state.get("blind_index", 0), len(items) - 1)
    st.query_params["at"] = f"{items[index].start:g}"

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
    closed = next((c for c in passes.closed() if c.person == who.name and c.recording_id == recording), None)
    if closed is not None:
        st.info(app_state.plain(t(f"blind_pass_{closed.kind}", recording=recording, by=closed.by)))
    elif following is None:
        st.success(t("blind_all_done"))
        st.caption(t("blind_finish_caption"))
        if st.button(t("blind_finish", recording=recording), type="primary"):
            with app_state.shown_errors():
                passes.finish(recording, who, transcripts, items)
                st.rerun()
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

    labels = {
        "text": ("text", t("blind_text")),
        "speaker": ("text", t("blind_speaker")),
        "speech": ("radio", t("blind_speech")),
        "u_from": ("text", t("blind_u_from")),
        "u_to": ("text", t("blind_u_to")),
        "u_note": ("text", t("blind_u_note")),
        "first_end": ("text", t("blind_first_end")),
        "last_start": ("text", t("blind_last_start")),
    }
    draft = drafts.load(who.name, recording, stretch.start, stretch.end) if closed is None else None
    values = draft.values if draft is not None else {}
    if draft is not None:
        st.caption(t("blind_draft_restored"))
    choices = list(SPEECH_CHOICES)
    picked = values.get("speech", "")
    if closed is None:
        app_state.blind_keeper(recording, stretch.start, stretch.end, labels)
        with st.form("transcribe", clear_on_submit=True):
            text = st.text_area(labels["text"][1], value=values.get("text", ""))
            speaker = st.text_input(labels["speaker"][1], value=values.get("speaker", ""))
            speech = st.radio(
                labels["speech"][1],
                choices,
                index=int(picked) if picked.isdigit() and int(picked) < len(choices) else 0,
                format_func=lambda k: t(SPEECH_CHOICES[k]),
                horizontal=True,
            )
            st.markdown(t("blind_unresolved"))
            u1, u2, u3 = st.columns([1, 1, 2])
            u_start = u1.number_input(
                labels["u_from"][1],
                0.0,
                duration,
                _number(values, "u_from", float(start), duration),
                0.1,
                format="%.3f",
            )
            u_end = u2.number_input(
                labels["u_to"][1], 0.0, duration, _number(values, "u_to", float(start), duration), 0.1, format="%.3f"
            )
            u_note = u3.text_input(labels["u_note"][1], value=values.get("u_note", ""))
            st.markdown(t("blind_words"))
            w1, w2 = st.columns(2)
            first_end = w1.number_input(
                labels["first_end"][1], 0.0, duration, _number(values, "first_end", 0.0, duration), 0.05, format="%.3f"
            )
            last_start = w2.number_input(
                labels["last_start"][1],
                0.0,
                duration,
                _number(values, "last_start", 0.0, duration),
                0.05,
                format="%.3f",
            )
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
                    drafts.discard(who.name, recording, stretch.start, stretch.end)
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
