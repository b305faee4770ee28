"""Stretch review: listen at the stretch, read the reference and every arm as the scorer aligned them, decide.

The desk (``components/ablate.js``) is driven by the keyboard: 1-4 choose, Enter saves and goes
to the next stretch open for this listener, j/k move; the form is kept as a draft in the store
while it is typed, so a reload gives it back. What the listener submits is read by
``toolkit.adjudication.form.resolve`` before anything is stored. Other listeners' decisions on
a stretch stay hidden until this listener has decided it.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import alignments
import app_state
import streamlit as st
import waveform
from i18n import detail, n, number, role, t

from toolkit.adjudication.drafts import Drafts
from toolkit.adjudication.form import Submission, resolve
from toolkit.adjudication.queue import QueueItem
from toolkit.adjudication.spans import reference_text
from toolkit.adjudication.store import listener_numbers
from toolkit.core.errors import InputError, ToolkitError
from toolkit.runs.folder import RunFolder

_log = logging.getLogger("ablate.app")


def _step(step) -> dict:  # noqa: ANN001 - AlignedWord
    return {
        "op": step.op,
        "reference": step.reference,
        "hypothesis": step.hypothesis,
        "critical": list(step.critical),
        "hyp_start": step.hyp_start,
        "hyp_end": step.hyp_end,
    }


def _arm_rows(folder: RunFolder, arms: list[str], item: QueueItem) -> list[dict]:
    reference = adj.reference(item.recording_id)
    rows: list[dict[str, Any]] = []
    for arm in arms:
        path = folder.hypothesis_json(arm, item.recording_id)
        if not path.is_file():
            rows.append({"name": arm, "error": t("arm_missing", path=app_state.relative(adj, path))})
            continue
        try:
            aligned = alignments.alignment(adj, folder, arm, item.recording_id)
        except ToolkitError as error:
            rows.append({"name": arm, "error": str(error).replace(str(adj.experiment_dir), "EXP")})
            continue
        stretch = aligned.stretch(reference, float(item.start), float(item.end))  # type: ignore[arg-type]
        notes = []
        if stretch.excluded_turns:
            notes.append(t("arm_excluded_turns", count=stretch.excluded_turns))
        if aligned.excluded_words:
            notes.append(t("arm_excluded", count=aligned.excluded_words))
        rows.append(
            {
                "name": arm,
                "steps": [_step(s) for s in stretch.steps],
                "before": [_step(s) for s in stretch.before],
                "after": [_step(s) for s in stretch.after],
                "note": " ".join(notes),
            }
        )
    return rows


def _history(item: QueueItem, who_name: str) -> dict:
    """The decisions on this stretch: all of them once this listener decided it, else only a count."""
    span = (item.recording_id, round(float(item.start), 3), round(float(item.end), 3))  # type: ignore[arg-type]
    decisions = [d for d in adj.store.decisions() if d.span == span]
    mine = any(d.annotator == who_name and d.role != "settlement" for d in decisions)
    others = {d.annotator for d in decisions if d.annotator != who_name and d.role != "settlement"}
    shown = decisions if mine else [d for d in decisions if d.annotator == who_name]
    places = listener_numbers(decisions)
    names = ("hist_id", "hist_who", "hist_role", "hist_decision", "hist_text", "hist_note", "hist_time", "hist_version")
    columns = [t(k) for k in names]
    rows = [
        [
            str(d.id),
            d.annotator,
            role(d.role, places.get(d.id)),
            t(f"action_{d.outcome[0]}"),
            d.new_text if d.outcome[0] == "correct" else "",
            d.note,
            d.created_at.replace("T", " ")[:19],
            d.reference_sha256[:12] + (" *" if adj.is_stale(d) else ""),
        ]
        for d in shown
    ]
    hidden = "" if mine or not others else n(len(others), "hidden_one", "hidden_many")
    return {"columns": columns, "rows": rows, "hidden_label": hidden}


def _next_open(items: list[QueueItem], index: int, who_name: str) -> int | None:
    """The next stretch after ``index`` (wrapping around) this listener has not decided."""
    views = adj.listener_view([(i.recording_id, i.start, i.end) for i in items], who_name)
    order = list(range(index + 1, len(items))) + list(range(0, index))
    return next((k for k in order if views[k].mine is None), None)


def _save() -> None:
    """The desk's Enter: resolve what was submitted, store the decision, move on to the next open stretch."""
    started = time.perf_counter()
    payload = st.session_state["desk"]["save"] or {}
    who_name = app_state.who().name
    if not app_state.still_allowed():  # disabled by a lead since this page opened: nothing is stored
        st.session_state["flash"] = {"kind": "error", "text": t("team_not_allowed")}
        st.session_state["version"] = st.session_state.get("version", 0) + 1
        return
    try:
        index = keys.index(payload.get("key", ""))
    except ValueError:  # the queue changed under the desk (the run was rescored): nothing is stored
        st.session_state["flash"] = {"kind": "error", "text": t("review_gone")}
        st.session_state["version"] = st.session_state.get("version", 0) + 1
        return
    item = items[index]
    start, end = float(item.start), float(item.end)  # type: ignore[arg-type]
    drafts = Drafts(adj.store.path)
    token = str(payload.get("nonce") or "")[:100]
    before = drafts.saved_as(token) if token else None
    if before is not None:  # saved already (a retry whose answer was lost, or the browser sending its
        # last save again when it reconnects to a restarted server): nothing is stored, the desk stays
        st.session_state["flash"] = {"kind": "ok", "text": t("review_saved_before", id=before)}
        st.session_state["version"] = st.session_state.get("version", 0) + 1
        return
    current = reference_text(adj.reference(item.recording_id), start, end)
    submitted = Submission(
        str(payload.get("action") or ""),
        str(payload.get("text") or ""),
        str(payload.get("note") or ""),
        str(payload.get("confirm") or ""),
    )
    try:
        outcome = resolve(submitted, current)
        if outcome.ask:
            st.session_state["ask"] = outcome.ask
            return
        decision = adj.decide(
            recording_id=item.recording_id,
            start=start,
            end=end,
            action=outcome.action,
            annotator=who_name,
            new_text=outcome.text,
            note=submitted.note,
            source=item.key,
        )
    except (InputError, ValueError) as error:
        st.session_state["flash"] = {"kind": "error", "text": str(error).replace(str(adj.experiment_dir), "EXP")}
        st.session_state["version"] = st.session_state.get("version", 0) + 1
        return
    if token:
        drafts.mark_saved(token, decision.id)
    drafts.discard(who_name, item.recording_id, start, end)
    text = t(
        "review_saved",
        id=decision.id,
        action=t(f"action_{decision.action}"),
        recording=item.recording_id,
        start=number(start),
        end=number(end),
        role=role(decision.role, listener_numbers(adj.store.decisions()).get(decision.id)),
    )
    if submitted.action == "correct" and decision.action == "keep":
        text += t("review_saved_keep")
    _moved_on(index, who_name, text)
    st.session_state["save_started"] = started


def _moved_on(index: int, who_name: str, text: str) -> None:
    """After a save: the next stretch open for this listener, with ``text`` as the flash."""
    following = _next_open(items, index, who_name)
    if following is None:
        text += " " + t("review_all_done")
    st.session_state["item_key"] = keys[following if following is not None else index]
    st.session_state["flash"] = {"kind": "ok", "text": text}
    st.session_state["version"] = st.session_state.get("version", 0) + 1


def _move() -> None:
    payload = st.session_state["desk"]["move"] or {}
    index = keys.index(st.session_state["item_key"]) if st.session_state.get("item_key") in keys else 0
    delta = int(payload.get("delta") or 0)
    st.session_state["item_key"] = keys[min(len(keys) - 1, max(0, index + delta))]
    st.session_state.pop("flash", None)


def _picked() -> None:
    st.session_state["item_key"] = keys[st.session_state["item_pick"]]
    st.session_state.pop("flash", None)


adj, folder = app_state.run_page(t("page_review"))
who = app_state.who()
with app_state.shown_errors():
    app_state.hidden_recordings(adj, folder)
    queue = app_state.queue(adj, folder)
    items = [item for item in queue.items if item.timed]
    if not items:
        st.info(t("review_nothing"))
        st.stop()
    keys = [item.key for item in items]
    wanted = st.session_state.get("item_key") or st.query_params.get("item")
    if wanted not in keys:
        opened = _next_open(items, len(items) - 1, who.name)
        wanted = keys[opened if opened is not None else 0]
    st.session_state["item_key"] = wanted
    index = keys.index(wanted)
    st.query_params["item"] = wanted
    views = adj.listener_view([(i.recording_id, i.start, i.end) for i in items], who.name)

    def label(k: int) -> str:
        item = items[k]
        mark = "✓" if views[k].mine is not None else "○"
        return (
            f"{k + 1}. {mark} {t(f'kind_{item.kind}')} · {detail(item.detail)} · {item.recording_id} "
            f"{number(float(item.start))}–{number(float(item.end))} s"  # type: ignore[arg-type]
        )

    st.session_state["item_pick"] = index
    st.selectbox(
        t("review_pick"),
        range(len(items)),
        format_func=label,
        key="item_pick",
        on_change=_picked,
        placeholder=t("choose"),
    )
    item = items[index]
    start, end = float(item.start), float(item.end)  # type: ignore[arg-type]
    record = folder.read_record()
    arm_names = list(record.config.arm_names)
    arms = _arm_rows(folder, arm_names, item)
    lanes = [waveform.transcript_lane(t("wave_lane_reference"), adj.reference(item.recording_id), start, end)]
    wave = waveform.view(adj.store.path, who.name, item.recording_id, lanes + waveform.arm_lanes(arms))
    app_state.player(adj, item.recording_id, start, end, key="player", wave=wave)

    used = record.manifest.sha256
    notice = (
        ""
        if not used or used == adj.manifest.sha256
        else t("review_other_version", used=used[:12], open=adj.manifest.sha256[:12])
    )
    mine = views[index].mine
    draft = Drafts(adj.store.path).load(who.name, item.recording_id, start, end)
    data = {
        "item": {
            "key": item.key,
            "recording": item.recording_id,
            "start": start,
            "end": end,
            "start_label": number(start),
            "end_label": f"{number(end)} s",
            "kind_label": t(f"kind_{item.kind}"),
            "detail": detail(item.detail),
            "reference_text": reference_text(adj.reference(item.recording_id), start, end),
            "mine": mine is not None,
            "status_label": t("mine_open") if mine is None else t("mine_done", action=t(f"action_{mine.outcome[0]}")),
            "listeners_label": t("listeners_none")
            if not views[index].listeners
            else n(views[index].listeners, "listeners_one", "listeners_many"),
        },
        "position": f"{index + 1} / {len(items)}",
        "arms": arms,
        "history": _history(item, who.name),
        "draft": None if draft is None else {"action": draft.action, "text": draft.text, "note": draft.note},
        "ask": st.session_state.pop("ask", ""),
        "version": st.session_state.get("version", 0),
        "notice": notice,
    }
    flash = st.session_state.get("flash")
    started = st.session_state.pop("save_started", None)
    if flash is not None and started is not None:
        server_s = time.perf_counter() - started
        flash = {**flash, "server_ms": round(1000 * server_s, 1)}
        st.session_state["flash"] = flash
        _log.info("decision saved and the next stretch ready in %.3f s (server)", server_s)
    data["flash"] = flash
    app_state.desk(data, _save, _move)
    alignments.warm(adj, folder, arm_names, sorted({i.recording_id for i in items}))
