"""What every page of the app shares: the experiment, who is annotating, the queue, audio clips, errors.

Streamlit-only glue over ``toolkit.adjudication``; no decision logic lives here.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

from toolkit.adjudication.context import APP_ENV, Adjudication, open_experiment
from toolkit.adjudication.queue import ReviewQueue, build_queue
from toolkit.adjudication.spans import CONTEXT_S, Clip, audio_clip
from toolkit.adjudication.users import authenticate, read_users
from toolkit.core.errors import ToolkitError
from toolkit.runs.folder import RunFolder

CONVENTION = Path(__file__).resolve().parents[1] / "protocol" / "transcription-convention.md"
_log = logging.getLogger("ablate.app")


@contextmanager
def shown_errors() -> Iterator[None]:
    """Bad input becomes a message on the page; nothing half-done is stored, no traceback is shown."""
    try:
        yield
    except ToolkitError as error:
        st.error(f"{error}")
    except Exception as error:  # the annotator sees one line; the server log keeps the traceback
        _log.exception("unexpected error in the app")
        st.error(
            f"Unexpected error ({type(error).__name__}: {error}). Nothing was stored; the server log has the details."
        )


@st.cache_resource(show_spinner=False)
def _open(experiment: str, manifest: str | None) -> Adjudication:
    return open_experiment(experiment, manifest)


def adjudication() -> Adjudication:
    """The experiment named by ``ablate app`` (stops the page with a message if it cannot be opened)."""
    experiment = os.environ.get(APP_ENV["experiment"])
    if not experiment:
        st.error("No experiment given: start the app with `ablate app EXP`.")
        st.stop()
    try:
        return _open(experiment, os.environ.get(APP_ENV["manifest"]) or None)
    except ToolkitError as error:
        st.error(f"Cannot open the experiment: {error}")
        st.stop()
    raise AssertionError("unreachable")


def annotator() -> str:
    """Who is working in this browser tab: from the login (``--users``), ``--annotator``, or asked once."""
    if st.session_state.get("annotator"):
        return st.session_state["annotator"]
    users_file = os.environ.get(APP_ENV["users"])
    fixed = os.environ.get(APP_ENV["annotator"], "").strip()
    if users_file:
        try:
            users = read_users(users_file)
        except ToolkitError as error:
            st.error(f"{error}")
            st.stop()
        with st.form("login"):
            st.subheader("Log in")
            name = st.text_input("Annotator")
            password = st.text_input("Password", type="password")
            if st.form_submit_button("Log in"):
                who = authenticate(users, name, password)
                if who is None:
                    st.error("Unknown annotator or wrong password.")
                else:
                    st.session_state["annotator"] = who
                    st.session_state["verified"] = True
                    st.rerun()
        st.stop()
    if fixed:
        st.session_state["annotator"] = fixed
        return fixed
    with st.form("who"):
        st.subheader("Who is annotating?")
        st.caption(
            "Your name goes with every decision you make in this tab. Names are not verified "
            "(start the app with --users FILE for logins)."
        )
        name = st.text_input("Your name")
        if st.form_submit_button("Start"):
            if not name.strip():
                st.error("Please type your name: a decision without an annotator cannot be stored.")
            else:
                st.session_state["annotator"] = " ".join(name.split())
                st.rerun()
    st.stop()
    raise AssertionError("unreachable")


def sidebar(adj: Adjudication, who: str) -> None:
    st.sidebar.markdown(f"**Experiment** `{adj.name}`  \n**Annotator** {who}")
    if not st.session_state.get("verified"):
        st.sidebar.caption("Names are not verified in this app (no --users logins).")
    st.sidebar.caption(f"Reference version: manifest `{adj.manifest.sha256[:12]}`")


def run_page(title: str) -> tuple[Adjudication, RunFolder]:
    """A page about one run: its title, and the run folder picked in the sidebar (newest first).

    Stops the page with a message when the experiment has no run folder yet.
    """
    adj = adjudication()
    st.title(title)
    folders = adj.run_folders()
    if not folders:
        st.info(f"No run folders under {adj.experiment_dir / 'runs'} yet: run `ablate run` first.")
        st.stop()
    names = [f.root.name for f in folders]
    chosen = st.sidebar.selectbox("Run folder", names, key="run")
    return adj, folders[names.index(chosen)]


def _stamp(folder: RunFolder) -> tuple[float, ...]:
    """Changes when the run is rerun or rescored (files are renamed into place, so folders' mtimes move)."""
    paths = [folder.record, folder.scores, folder.root / "disagreements", folder.root / "outputs"]
    return tuple(p.stat().st_mtime if p.exists() else 0.0 for p in paths)


@st.cache_data(show_spinner="Building the review queue…", max_entries=8)
def _queue(_adj: Adjudication, root: str, manifest_sha256: str, stamp: tuple[float, ...]) -> ReviewQueue:
    return build_queue(RunFolder(Path(root)), _adj.references())


def queue(adj: Adjudication, folder: RunFolder) -> ReviewQueue:
    return _queue(adj, str(folder.root), adj.manifest.sha256, _stamp(folder))


@st.cache_data(show_spinner=False, max_entries=64)
def _clip(_adj: Adjudication, recording_id: str, sha256: str, start: float, end: float) -> Clip:
    return audio_clip(_adj.entry(recording_id), start, end, CONTEXT_S)


def player(adj: Adjudication, recording_id: str, start: float, end: float) -> None:
    """The span with context on both sides, and the span alone."""
    clip = _clip(adj, recording_id, adj.entry(recording_id).sha256, start, end)
    st.audio(clip.wav, format="audio/wav")
    st.caption(
        f"Clip {clip.start:.2f}–{clip.end:.2f} s of the original recording: the span {start:.2f}–{end:.2f} s "
        f"starts {start - clip.start:.2f} s into it ({CONTEXT_S:g} s of context on each side)."
    )
    with st.expander("The span alone"):
        alone = audio_clip(adj.entry(recording_id), start, end, 0.0)
        st.audio(alone.wav, format="audio/wav")
