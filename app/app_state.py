"""What every page of the app shares: the experiment, who is logged in (and their role), the queue,
the browser component (session, player, review desk), plain-text rendering and error messages.

Streamlit-only glue over ``toolkit.adjudication``; no decision logic lives here.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import streamlit as st
import web
from i18n import LANGUAGES, browser_strings, language, number, t

from toolkit.adjudication.blindness import BlindPasses, may_see_model_output
from toolkit.adjudication.context import APP_ENV, Adjudication, open_experiment
from toolkit.adjudication.queue import ReviewQueue, build_queue
from toolkit.adjudication.sessions import Sessions, client_address
from toolkit.adjudication.spans import CONTEXT_S
from toolkit.adjudication.users import (
    ANNOTATOR,
    LEAD,
    TRANSCRIBER,
    Login,
    authenticate,
    check_role,
    login_name,
    name_problem,
    name_problems,
    read_users,
)
from toolkit.core.errors import ToolkitError
from toolkit.runs.folder import RunFolder

HERE = Path(__file__).resolve().parent
PROTOCOL = HERE.parent / "protocol"
CONVENTIONS = {"pt": PROTOCOL / "transcription-convention.pt-BR.md", "en": PROTOCOL / "transcription-convention.md"}
_log = logging.getLogger("ablate.app")
# One module: the vendored wavesurfer.js builds (they define the global WaveSurfer), the waveform view, the rest.
_SCRIPTS = (
    "vendor/wavesurfer.min.js",
    "vendor/regions.min.js",
    "vendor/spectrogram.min.js",
    "waveform.js",
    "ablate.js",
)
_component = st.components.v2.component(
    "ablate",
    js="\n".join((HERE / "components" / name).read_text(encoding="utf-8") for name in _SCRIPTS),
    css=(HERE / "components" / "ablate.css").read_text(encoding="utf-8"),
    isolate_styles=False,
)
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|$~:=&^\"'%;,/?@])")
# Where the Markdown renderer would start a link of its own in plain text (GFM autolink literals:
# ``http://``, ``https://``, ``www.``, an e-mail's ``@``), escaping or not: a word joiner goes there.
_AUTOLINK = re.compile(r"(?i)(?<=https)(?=:)|(?<=http)(?=:)|(?<=www)(?=\.)|(?=@)")
WORD_JOINER = "\u2060"


def plain(text: object) -> str:
    """``text`` for a Markdown element, shown exactly as typed: every ASCII punctuation mark escaped,
    so no bold, link, image, LaTeX (``R$ 5 … R$ 10``), emoji code or HTML comes of user or reference text;
    a typed address stays text (an invisible word joiner keeps the renderer from linking it)."""
    return _MARKDOWN.sub(r"\\\1", _AUTOLINK.sub(WORD_JOINER, str(text))).replace("\n", " ")


def relative(adj: Adjudication, path: str | Path) -> str:
    """A path shown to users: relative to the experiment folder (no server paths on the pages)."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(adj.experiment_dir.resolve()))
    except ValueError:
        return path.name


@contextmanager
def shown_errors() -> Iterator[None]:
    """Bad input becomes one line on the page; nothing half-done is stored, no traceback is shown."""
    try:
        yield
    except ToolkitError as error:
        st.error(plain(_without_server_paths(str(error))))
    except Exception as error:  # the annotator sees one line; the server log keeps the traceback
        _log.exception("unexpected error in the app")
        st.error(plain(t("unexpected", error=f"{type(error).__name__}: {_without_server_paths(str(error))}")))


def _without_server_paths(message: str) -> str:
    experiment = os.environ.get(APP_ENV["experiment"])
    if experiment:
        message = message.replace(str(Path(experiment).resolve()) + os.sep, "").replace(str(Path(experiment)), "EXP")
    return message


@st.cache_resource(show_spinner=False)
def _open(experiment: str, manifest: str | None) -> Adjudication:
    return open_experiment(experiment, manifest)


def adjudication() -> Adjudication:
    """The experiment named by ``ablate app`` (stops the page with a message if it cannot be opened)."""
    experiment = os.environ.get(APP_ENV["experiment"])
    if not experiment:
        st.error(t("no_experiment"))
        st.stop()
    try:
        return _open(experiment, os.environ.get(APP_ENV["manifest"]) or None)
    except ToolkitError as error:
        st.error(plain(t("cannot_open", error=_without_server_paths(str(error)))))
        st.stop()
    raise AssertionError("unreachable")


# ------------------------------------------------------------------------------------------ login


def _cookie() -> str:
    return web.cookie_name(st.get_option("server.port"))


def _fixed_role() -> str:
    role = os.environ.get(APP_ENV["role"]) or ANNOTATOR
    return check_role(role)


def login(adj: Adjudication) -> Login:
    """Who works in this tab: from the session cookie (a reload keeps it), else the login form
    (``--users``), ``--annotator``, or the name asked once. Stops the page until known."""
    sessions = Sessions(adj.store.path)
    if "ablate_login" not in st.session_state:
        token = st.context.cookies.get(_cookie())
        restored = web.current_login(sessions, token)
        if restored is not None:
            st.session_state.update(ablate_login=restored, token=token, cookie_ready=True)
    if "ablate_login" in st.session_state:
        _check_still_valid(sessions)
        if not st.session_state.get("cookie_ready"):
            _hand_over_cookie()
        return st.session_state["ablate_login"]
    users_file = os.environ.get(APP_ENV["users"])
    fixed = login_name(os.environ.get(APP_ENV["annotator"], ""))
    if users_file:
        _login_form(sessions, users_file)
    elif fixed:
        _start(sessions, Login(fixed, _fixed_role()))
    else:
        _name_form(sessions)
    st.stop()
    raise AssertionError("unreachable")


def _check_still_valid(sessions: Sessions) -> None:
    """A login removed from the users file (or whose role changed) takes effect on the next page."""
    if not os.environ.get(APP_ENV["users"]) or "token" not in st.session_state:
        return
    now = web.current_login(sessions, st.session_state["token"])
    if now is None:
        st.session_state.clear()
        st.rerun()
    st.session_state["ablate_login"] = now


def _start(sessions: Sessions, who: Login) -> None:
    st.session_state["ablate_login"] = who
    st.session_state["token"] = sessions.open(who)
    st.rerun()


def _hand_over_cookie() -> None:
    """Give the browser its session token (right after login); it trades it for the HttpOnly cookie the
    audio needs. The page goes on meanwhile: the player waits for the cookie before fetching."""
    result = _component(
        key="session",
        data={
            "mode": "session",
            "token": st.session_state.get("token"),
            "path": web.SESSION_PATH,
            "strings": browser_strings(),
        },
        on_ready_change=lambda: None,
    )
    if result.ready is True:
        st.session_state["cookie_ready"] = True
    elif result.ready is False:
        st.error(t("session_failed"))


def _login_form(sessions: Sessions, users_file: str) -> None:
    try:
        users = read_users(users_file)
    except ToolkitError as error:
        st.error(plain(_without_server_paths(str(error))))
        st.stop()
    _, middle, _ = st.columns([1, 2, 1])
    with middle.form("login"):
        st.subheader(t("login_title"))
        name = st.text_input(t("login_name"))
        password = st.text_input(t("login_password"), type="password")
        if st.form_submit_button(t("login_button"), type="primary"):
            typed = login_name(name)
            peer, forwarded = st.context.ip_address, st.context.headers.get("X-Forwarded-For")
            address = client_address(*(v if isinstance(v, str) else None for v in (peer, forwarded)))
            refusal = sessions.refusal(typed, address)
            if refusal is not None:
                st.error(t("login_wait", seconds=number(refusal.wait_s, 1)))
                return
            who = authenticate(users, typed, password)
            sessions.record_try(typed, address, who is not None)
            if who is None:
                st.error(t("login_wrong"))
            else:
                _start(sessions, who)


def _name_form(sessions: Sessions) -> None:
    _, middle, _ = st.columns([1, 2, 1])
    with middle.form("who"):
        st.subheader(t("who_title"))
        st.caption(t("who_caption"))
        name = st.text_input(t("who_name"))
        if st.form_submit_button(t("who_start"), type="primary"):
            refused = name_problem(login_name(name))
            if not name.strip():
                st.error(t("who_empty"))
            elif refused is not None:
                st.error(plain(refused))
            else:
                _start(sessions, Login(login_name(name), _fixed_role()))


def session_keeper() -> None:
    """Mounted on every page: keeps the connection notice local (no 'are you online?' on a local app)."""
    _component(key="keeper", data={"mode": "session", "path": web.SESSION_PATH, "strings": browser_strings()})


def logout(adj: Adjudication) -> None:
    Sessions(adj.store.path).close(st.session_state.get("token"))
    st.session_state["logging_out"] = True


def _finish_logout() -> None:
    result = _component(
        key="logout",
        data={"mode": "session", "logout": True, "path": web.SESSION_PATH, "strings": browser_strings()},
        on_done_change=lambda: None,
    )
    if result.done:
        lang = st.session_state.get("lang")
        st.session_state.clear()
        if lang:
            st.session_state["lang"] = lang
        st.rerun()
    st.stop()


# ------------------------------------------------------------------------------------------ shell


def sidebar(adj: Adjudication, who: Login) -> None:
    if st.session_state.get("logging_out"):
        _finish_logout()
    st.sidebar.markdown(
        f"**{t('sidebar_experiment')}** {plain(adj.name)}  \n**{t('sidebar_you')}** {plain(who.name)} "
        f"({t('role_' + who.role)})"
    )
    users_file = os.environ.get(APP_ENV["users"])
    if not users_file:
        st.sidebar.caption(t("sidebar_unverified"))
    elif who.is_lead:  # names from before the naming rules still log in; the lead is told which
        with shown_errors():
            for problem in name_problems(read_users(users_file)):
                st.sidebar.warning(plain(t("sidebar_bad_name", problem=problem)))
    st.sidebar.caption(t("sidebar_reference", sha=adj.manifest.sha256[:12]))
    codes = list(LANGUAGES)
    st.session_state.setdefault("lang", language())
    st.sidebar.selectbox(
        t("sidebar_language"), codes, format_func=LANGUAGES.__getitem__, key="lang", placeholder=t("choose")
    )
    if st.sidebar.button(t("logout"), key="logout_button"):
        logout(adj)
        st.rerun()


def pages(who: Login) -> list[Any]:
    """The pages this login may open: a transcriber (or ``--blind``) only blind transcription, a lead
    also conflicts and apply."""
    blind = st.Page("views/blind.py", title=t("page_blind"), url_path="blind")
    if who.role == TRANSCRIBER or os.environ.get(APP_ENV["blind"]):
        return [blind]
    chosen = [
        st.Page("views/queue.py", title=t("page_queue"), default=True, url_path="queue"),
        st.Page("views/review.py", title=t("page_review"), url_path="review"),
        blind,
        st.Page("views/results.py", title=t("page_results"), url_path="results"),
    ]
    if who.role == LEAD:
        chosen.insert(3, st.Page("views/conflicts.py", title=t("page_conflicts"), url_path="conflicts"))
        chosen.append(st.Page("views/team.py", title=t("page_team"), url_path="team"))
        chosen.append(st.Page("views/stages.py", title=t("page_stages"), url_path="stages"))
    return chosen


def who() -> Login:
    return st.session_state["ablate_login"]


def still_allowed() -> bool:
    """Whether this tab's login may still save now (with ``--users``: not disabled nor removed since it
    logged in); for callbacks, which run before the page rechecks the login."""
    if not os.environ.get(APP_ENV["users"]):
        return True
    return web.current_login(Sessions(adjudication().store.path), st.session_state.get("token")) is not None


def run_page(title: str) -> tuple[Adjudication, RunFolder]:
    """A page about one run: its title, and the run folder picked in the sidebar (newest first; the
    choice is kept in the address, so a reload stays on it)."""
    adj = adjudication()
    st.title(title)
    folders = adj.run_folders()
    if not folders:
        st.info(t("no_runs"))
        st.stop()
    names = [f.root.name for f in folders]
    wanted = st.query_params.get("run")
    if "run" not in st.session_state:
        st.session_state["run"] = wanted if wanted in names else names[0]
    chosen = st.sidebar.selectbox(t("run_folder"), names, key="run", placeholder=t("choose"))
    st.query_params["run"] = chosen
    return adj, folders[names.index(chosen)]


def _stamp(folder: RunFolder) -> tuple[float, ...]:
    """Changes when the run is rerun or rescored (files are renamed into place, so folders' mtimes move)."""
    paths = [folder.record, folder.scores, folder.root / "disagreements", folder.root / "outputs"]
    return tuple(p.stat().st_mtime if p.exists() else 0.0 for p in paths)


@st.cache_data(show_spinner=False, max_entries=8)
def _queue(_adj: Adjudication, root: str, manifest_sha256: str, stamp: tuple[float, ...]) -> ReviewQueue:
    return build_queue(RunFolder(Path(root)), _adj.references())


def queue(adj: Adjudication, folder: RunFolder) -> ReviewQueue:
    """The run's queue as this login may see it: no row of a recording still blind to them."""
    whole = _queue(adj, str(folder.root), adj.manifest.sha256, _stamp(folder))
    seen = may_see(adj)
    return ReviewQueue([item for item in whole.items if seen(item.recording_id)], whole.problems)


def may_see(adj: Adjudication) -> Callable[[str], bool]:
    """Whether this login may see a recording's model output (``blindness.may_see_model_output``, read once)."""
    closed = BlindPasses(adj.store.path).closed()
    user = who()
    return lambda recording: may_see_model_output(user, recording, closed)


def hidden_recordings(adj: Adjudication, folder: RunFolder) -> list[str]:
    """The run's recordings whose model output this login may not see yet; a page that leaves them out says so."""
    seen = may_see(adj)
    hidden = [r for r in folder.read_record().recordings if not seen(r)]
    if hidden:
        st.info(plain(t("blind_hidden", recordings=", ".join(sorted(hidden)))))
    return hidden


def player(
    adj: Adjudication,
    recording_id: str,
    start: float,
    end: float,
    key: str,
    main: bool = True,
    wave: dict[str, Any] | None = None,
) -> None:
    """The audio player at ``[start, end]`` with context. The page's ``main`` player stays in view while
    the page scrolls and answers the keyboard; others (a list of conflicts) have buttons only. ``wave``
    (``waveform.view``) adds the waveform view under it."""
    _component(
        key=key,
        data={
            "mode": "player",
            "main": main,
            "wave": wave,
            "lang": language(),
            "strings": browser_strings(),
            "audio": {
                "path": web.AUDIO_PATH,
                "recording": recording_id,
                "start": round(start, 3),
                "end": round(end, 3),
                "context": CONTEXT_S,
            },
        },
    )


def blind_keeper(recording_id: str, start: float, end: float, fields: dict[str, tuple[str, str]]) -> None:
    """Sends the blind form's fields (name: (kind, label)) to the store a moment after each change, as drafts."""
    _component(
        key="blind_keeper",
        data={
            "mode": "blind_keeper",
            "path": web.BLIND_DRAFT_PATH,
            "stretch": {"recording": recording_id, "start": start, "end": end},
            "fields": [{"name": k, "kind": kind, "label": label} for k, (kind, label) in fields.items()],
        },
    )


def desk(data: dict[str, Any], on_save: Any, on_move: Any) -> Any:
    """The stretch-review desk (alignment, decision form, history), driven by the keyboard."""
    return _component(
        key="desk",
        data={"mode": "review", "strings": browser_strings(), "draft_path": web.DRAFT_PATH, **data},
        on_save_change=on_save,
        on_move_change=on_move,
    )
