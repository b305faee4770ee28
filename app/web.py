"""HTTP routes beside the Streamlit pages: the session cookie, the audio, the drafts, the waveform marks;
and ``/media`` closed.

Every route but the cookie's own answers only a request carrying a live session cookie
(``toolkit.adjudication.sessions``); the cookie is HttpOnly and SameSite=Strict, so page scripts
cannot read it and other sites cannot send it. The pages hand the browser its session token
once, right after login, and the browser trades it here for the cookie. Audio is cut from the
original recording per request (a stretch with its context, bounded in length), so nothing
under ``/media`` is needed; Streamlit's own ``/media`` is refused without a session all the same.
"""

from __future__ import annotations

import json
import math
import os
from functools import lru_cache
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from toolkit.adjudication.blind import TranscriptStore
from toolkit.adjudication.context import APP_ENV, Adjudication, open_experiment
from toolkit.adjudication.drafts import BlindDrafts, Draft, Drafts
from toolkit.adjudication.marks import MarkStore
from toolkit.adjudication.sessions import SESSION_TTL_S, Sessions
from toolkit.adjudication.spans import audio_clip
from toolkit.adjudication.users import TRANSCRIBER, Login, read_users
from toolkit.core.errors import ToolkitError

SESSION_PATH = "/api/session"
AUDIO_PATH = "/api/audio"
DRAFT_PATH = "/api/draft"
MARKS_PATH = "/api/marks"
BLIND_DRAFT_PATH = "/api/blind-draft"
MAX_CLIP_S = 150.0  # a stretch and its context; longer requests are refused
MAX_DRAFT_BYTES = 100_000


def cookie_name(port: int | str) -> str:
    """One cookie per port: browsers share cookies across ports of a host."""
    return f"ablate_session_{port}"


@lru_cache(maxsize=1)
def experiment() -> Adjudication:
    """The experiment ``ablate app`` named (opened once per server process)."""
    return open_experiment(os.environ[APP_ENV["experiment"]], os.environ.get(APP_ENV["manifest"]) or None)


def current_login(sessions: Sessions, token: str | None) -> Login | None:
    """Who holds ``token`` now: the session's login, with the role the users file gives today
    (a login removed from the file, or disabled by a lead, no longer opens anything)."""
    login = sessions.login(token)
    users_file = os.environ.get(APP_ENV["users"])
    if login is None or not users_file:
        return login
    try:
        account = read_users(users_file).get(login.name)
    except ToolkitError:
        return None
    return Login(login.name, account.role) if account is not None and not account.disabled else None


def _port(scope: Scope) -> int:
    server = scope.get("server") or ("", 0)
    return int(server[1] or 0)


def _login(request: Request) -> Login | None:
    sessions = Sessions(experiment().store.path)
    return current_login(sessions, request.cookies.get(cookie_name(_port(request.scope))))


def _same_origin(request: Request) -> bool:
    """A state-changing request must come from a page of this app (SameSite=Strict covers cookies;
    this also refuses a token pushed in by another site)."""
    origin = request.headers.get("origin")
    return origin is None or origin.split("://", 1)[-1] == request.headers.get("host")


class SessionRequired:
    """Refuses Streamlit's ``/media`` (uploaded or embedded files) to requests without a session."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/media/"):
            if _login(Request(scope)) is None:
                await PlainTextResponse("log in first", status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def session(request: Request) -> Response:
    """POST the token the page was given: answered with the HttpOnly cookie. DELETE: log out."""
    name = cookie_name(_port(request.scope))
    if not _same_origin(request):
        return PlainTextResponse("wrong origin", status_code=403)
    sessions = Sessions(experiment().store.path)
    if request.method == "DELETE":
        sessions.close(request.cookies.get(name))
        response = PlainTextResponse("logged out")
        response.delete_cookie(name, path="/", samesite="strict")
        return response
    token = (await request.body()).decode("utf-8", "replace").strip()
    if current_login(sessions, token) is None:
        return PlainTextResponse("unknown or expired session", status_code=403)
    response = PlainTextResponse("ok")
    response.set_cookie(
        name,
        token,
        max_age=int(SESSION_TTL_S),
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


def _number(request: Request, key: str) -> float:
    try:
        value = float(request.query_params[key])
    except (KeyError, ValueError):
        raise ValueError(f"'{key}' must be a number") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"'{key}' must be a finite number >= 0")
    return value


async def audio(request: Request) -> Response:
    """GET ``?recording=&start=&end=&context=``: the stretch with its context as 16-bit WAV."""
    if _login(request) is None:
        return PlainTextResponse("log in first", status_code=403)
    adjudication = experiment()
    try:
        recording = request.query_params["recording"]
        entry = adjudication.entry(recording)
        start, end, context = (_number(request, k) for k in ("start", "end", "context"))
        if end <= start or end - start + 2 * context > MAX_CLIP_S or start >= entry.duration:
            raise ValueError(f"not a stretch of {recording} to listen to (at most {MAX_CLIP_S:g} s with context)")
        clip = audio_clip(entry, start, min(end, entry.duration), context)
    except (KeyError, ValueError, ToolkitError) as error:
        return PlainTextResponse(str(error).replace(str(adjudication.experiment_dir), "EXP"), status_code=400)
    return Response(
        clip.wav,
        media_type="audio/wav",
        headers={"Cache-Control": "private, max-age=3600", "X-Clip-Start": f"{clip.start:.6f}"},
    )


async def _posted(request: Request, what: str, *, transcriber: bool = True) -> tuple[Login, bytes] | Response:
    """A form's login and body, or the refusal: no session (or a transcriber, where ``transcriber`` is False),
    another origin, or a body over MAX_DRAFT_BYTES."""
    login = _login(request)
    if login is None or (not transcriber and login.role == TRANSCRIBER):
        return PlainTextResponse("log in first", status_code=403)
    if not _same_origin(request):
        return PlainTextResponse("wrong origin", status_code=403)
    body = await request.body()
    if len(body) > MAX_DRAFT_BYTES:
        return PlainTextResponse(f"{what} too large", status_code=413)
    return login, body


def _finite_span(data: dict[str, Any]) -> tuple[float, float]:
    """A form's ``start`` and ``end`` as numbers; infinity or NaN is refused (ValueError)."""
    start, end = float(data["start"]), float(data["end"])
    if not (math.isfinite(start) and math.isfinite(end)):
        raise ValueError("times must be finite")
    return start, end


async def draft(request: Request) -> Response:
    """PUT the decision form of one stretch as it stands (JSON); kept until the decision is saved."""
    posted = await _posted(request, "draft", transcriber=False)
    if isinstance(posted, Response):
        return posted
    login, body = posted
    try:
        data = json.loads(body)
        start, end = _finite_span(data)
        Drafts(experiment().store.path).save(
            login.name,
            str(data["recording"]),
            start,
            end,
            Draft(str(data.get("action") or ""), str(data.get("text") or ""), str(data.get("note") or "")),
        )
    except (ValueError, KeyError, TypeError, ToolkitError) as error:
        return PlainTextResponse(f"draft not kept: {error}", status_code=400)
    return PlainTextResponse("kept")


async def marks(request: Request) -> Response:
    """POST one waveform mark of the listener (JSON: ``recording``, ``kind``, ``start``, ``end``, ``label``,
    ``replaces``; or ``withdraw``: a mark's id); answered with their current marks of the recording.
    Each store rewrites the listener's transcription TextGrid, where the scorer reads the marks."""
    posted = await _posted(request, "mark")
    if isinstance(posted, Response):
        return posted
    login, body = posted
    adjudication = experiment()
    try:
        data = json.loads(body)
        recording = str(data["recording"])
        entry = adjudication.entry(recording)
        store = MarkStore(adjudication.store.path)
        if data.get("withdraw") is not None:
            mark = store.withdraw(recording_id=recording, annotator=login.name, mark_id=int(data["withdraw"]))
        else:
            mark = store.add(
                recording_id=recording,
                annotator=login.name,
                kind=str(data["kind"]),
                start=float(data["start"]),
                end=float(data["end"]),
                duration=entry.duration,
                label=str(data.get("label") or ""),
                replaces=None if data.get("replaces") is None else int(data["replaces"]),
            )
        TranscriptStore(adjudication.store.path, adjudication.experiment_dir).write_textgrid(
            recording, login.name, entry.duration
        )
    except (ValueError, KeyError, TypeError, ToolkitError) as error:
        message = str(error).replace(str(adjudication.experiment_dir), "EXP")
        return PlainTextResponse(f"mark not stored: {message}", status_code=400)
    current = store.current(recording, login.name)
    return JSONResponse({"mark": mark.to_json(), "marks": [m.to_json() for m in current]})


async def blind_draft(request: Request) -> Response:
    """PUT the blind form of one stretch as it stands (JSON ``{recording, start, end, fields}``)."""
    posted = await _posted(request, "draft")
    if isinstance(posted, Response):
        return posted
    login, body = posted
    try:
        data = json.loads(body)
        start, end = _finite_span(data)
        fields = data["fields"]
        if not isinstance(fields, dict):
            raise ValueError("fields must be an object")
        BlindDrafts(experiment().store.path).save(login.name, str(data["recording"]), start, end, fields)
    except (ValueError, KeyError, TypeError, ToolkitError) as error:
        return PlainTextResponse(f"draft not kept: {error}", status_code=400)
    return PlainTextResponse("kept")


def routes() -> list[Route]:
    return [
        Route(SESSION_PATH, session, methods=["POST", "DELETE"]),
        Route(AUDIO_PATH, audio, methods=["GET"]),
        Route(DRAFT_PATH, draft, methods=["PUT"]),
        Route(MARKS_PATH, marks, methods=["POST"]),
        Route(BLIND_DRAFT_PATH, blind_draft, methods=["PUT"]),
    ]
