"""Span review: listen at the span, read the reference and every arm side by side, decide."""

from __future__ import annotations

import html
from pathlib import Path

import app_state
import pandas as pd
import streamlit as st

from toolkit.adjudication.context import Adjudication
from toolkit.adjudication.queue import KIND_LABELS
from toolkit.adjudication.spans import extent, overlapping_turns, reference_text, span_alignment, words_in
from toolkit.adjudication.store import ACTIONS, CORRECT, KEEP, NONSPEECH, UNRESOLVED
from toolkit.core.errors import InputError
from toolkit.core.transcripts import Reference, Word
from toolkit.runs.folder import RunFolder

ACTION_LABELS = {
    KEEP: "Keep the reference",
    CORRECT: "Correct it",
    UNRESOLVED: "Mark unresolved",
    NONSPEECH: "Mark non-speech",
}
STYLE = {
    "equal": "",
    "substitute": "background:#ffe0a3;border-bottom:2px solid #e65100",
    "insert": "background:#c8f0c8;border-bottom:2px solid #1b5e20",
    "delete": "color:#b71c1c;text-decoration:line-through",
    "skip": "color:#888;font-style:italic",
}
CRITICAL = "font-weight:bold;outline:1px dashed #6a1b9a"
LEGEND = (
    "<span style='{substitute}'>substitution</span> · <span style='{insert}'>insertion</span> · "
    "<span style='{delete}'>deletion (a reference word the arm misses)</span> · "
    "<span style='{critical}'>negation, name or number</span> · words as the scorer compares them "
    "(normalized: numbers and abbreviations spelt out)"
).format(**STYLE, critical=CRITICAL)


@st.cache_data(show_spinner=False, max_entries=256)
def _hypothesis(root: str, arm: str, recording: str, mtime: float) -> list[Word]:
    return RunFolder(Path(root)).read_hypothesis(arm, recording).words


def _arm_words(folder: RunFolder, arm: str, recording: str) -> list[Word]:
    path = folder.hypothesis_json(arm, recording)
    if not path.is_file():
        raise InputError(path, "hypothesis missing")
    return _hypothesis(str(folder.root), arm, recording, path.stat().st_mtime)


def _coloured(adj: Adjudication, reference: Reference, text: str, words: list[Word]) -> str:
    """The arm's words coloured by the scorer's alignment (normalized tokens; critical words underlined)."""
    parts = []
    for step in span_alignment(text, words, adj.score_options, reference.names):
        shown = step.reference if step.op in ("delete", "skip") else step.hypothesis
        title = f"reference: {step.reference}" if step.op == "substitute" else step.op
        if step.critical:
            title += f" ({', '.join(step.critical)})"
        style = ";".join(part for part in (STYLE[step.op], CRITICAL if step.critical else "") if part)
        parts.append(f"<span style='{style}' title='{html.escape(title)}'>{html.escape(shown or '')}</span>")
    return " ".join(parts) or "<i>(nothing)</i>"


adj, folder = app_state.run_page("Span review")
who = st.session_state.get("annotator", "")
with app_state.shown_errors():
    queue = app_state.queue(adj, folder)
    items = [item for item in queue.items if item.timed]
    if not items:
        st.info("Nothing in this run's queue has a time to listen to.")
        st.stop()
    keys = [item.key for item in items]
    wanted = st.session_state.get("item_key")
    index = keys.index(wanted) if wanted in keys else 0
    statuses = adj.item_statuses([(i.recording_id, i.start, i.end) for i in items])
    choice = st.selectbox(
        "Span",
        range(len(items)),
        index=index,
        format_func=lambda k: (
            f"{k + 1}. [{statuses[k]}] {items[k].kind} · {items[k].detail} · "
            f"{items[k].recording_id} {items[k].start:.2f}–{items[k].end:.2f} s"
        ),
    )
    item = items[choice]
    st.session_state["item_key"] = item.key
    start, end = float(item.start), float(item.end)  # type: ignore[arg-type]
    st.markdown(
        f"**{KIND_LABELS[item.kind]}** ({item.detail}) in `{item.recording_id}`, "
        f"{start:.2f}–{end:.2f} s · status **{statuses[choice]}**"
    )
    app_state.player(adj, item.recording_id, start, end)

    reference = adj.reference(item.recording_id)
    ref_text = reference_text(reference, start, end)
    lo, hi = extent(reference, start, end)
    turns = overlapping_turns(reference, start, end)
    record = folder.read_record()
    arms = record.config.arm_names
    rows = [
        "<tr><th style='text-align:left;padding-right:1em'>reference</th><td>"
        f"{html.escape(ref_text) or '<i>(no turn: nobody speaks here in the reference)</i>'}</td></tr>"
    ]
    for arm in arms:
        try:
            inside = words_in(_arm_words(folder, arm, item.recording_id), lo, hi)
        except InputError as error:
            rows.append(
                f"<tr><th style='text-align:left'>{html.escape(arm)}</th><td><i>{html.escape(str(error))}</i></td></tr>"
            )
            continue
        note = f" <small>({inside.untimed} untimed words not placed)</small>" if inside.untimed else ""
        rows.append(
            f"<tr><th style='text-align:left;padding-right:1em'>{html.escape(arm)}</th>"
            f"<td>{_coloured(adj, reference, ref_text, inside.words)}{note}</td></tr>"
        )
    st.markdown(
        f"Reference turn(s) {lo:.2f}–{hi:.2f} s"
        + (f" ({len(turns)} turns)" if len(turns) > 1 else "")
        + " and each arm's words there:"
    )
    st.markdown(
        f"<table style='width:100%'>{''.join(rows)}</table><p><small>{LEGEND}</small></p>", unsafe_allow_html=True
    )

    history = [d for d in adj.store.decisions() if d.span == (item.recording_id, round(start, 3), round(end, 3))]
    if history:
        st.markdown("**Decisions on this span** (newest last; superseded ones stay in the record)")
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "#": d.id,
                        "annotator": d.annotator,
                        "role": d.role,
                        "decision": d.action,
                        "new text": d.new_text,
                        "note": d.note,
                        "time (UTC)": d.created_at,
                        "reference version": d.reference_sha256[:12]
                        + ("" if not adj.is_stale(d) else " (older version)"),
                    }
                    for d in history
                ]
            ),
            hide_index=True,
            width="stretch",
        )

    with st.form("decide"):
        action = st.radio("Decision", ACTIONS, format_func=ACTION_LABELS.get, horizontal=True)
        text = st.text_area(
            "Corrected text (only for 'Correct it'; replaces the turn(s) above, "
            "written under the transcription convention)",
            value=ref_text,
        )
        note = st.text_input("Note (optional; for 'Mark unresolved' it becomes the label, e.g. inaudível)")
        if st.form_submit_button("Save decision", type="primary"):
            with app_state.shown_errors():
                decision = adj.decide(
                    recording_id=item.recording_id,
                    start=start,
                    end=end,
                    action=action,
                    annotator=who,
                    new_text=text,
                    note=note,
                    source=item.key,
                )
                st.success(f"Saved decision #{decision.id} ({decision.action}) as {decision.role} listener.")
    following = [k for k in range(choice + 1, len(items)) if statuses[k] == "open"]
    if st.button("Next open span", disabled=not following):
        st.session_state["item_key"] = items[following[0]].key
        st.rerun()
