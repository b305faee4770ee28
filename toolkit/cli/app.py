"""``ablate app EXP``: the Streamlit adjudication app on one experiment; ``ablate app add-user``: a login.

Streamlit runs headless (it opens no browser), sends no usage statistics, offers no agent API
and binds to 127.0.0.1 unless ``--host`` says otherwise; any other address needs ``--users``
(logins), or ``--insecure`` to serve without them, which is printed in red. What the app needs
is passed in environment variables (``toolkit.adjudication.context.APP_ENV``), read by
``app/server.py`` (the web server: sessions, audio) and ``app/streamlit_app.py`` (the pages).
"""

from __future__ import annotations

import argparse
import getpass
import importlib.resources
import importlib.util
import os
import sys
from pathlib import Path

ENTRY = "server.py"
ADD_USER = "add-user"
LANGUAGES = ("pt", "en")
LOCAL_HOSTS = ("127.0.0.1", "::1", "localhost")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "app",
        help="start the adjudication app on an experiment (or: app add-user NAME --users FILE --role ROLE)",
        description="Start the Streamlit adjudication app on one experiment (blind transcription, review queue, "
        "stretch review, conflicts and apply, results), or add a login with "
        f"'ablate app {ADD_USER} NAME --users FILE --role lead|annotator|transcriber' (the password is asked for).",
    )
    parser.add_argument("experiment", metavar="EXP", help=f"experiment folder, or '{ADD_USER}'")
    parser.add_argument("name", nargs="?", metavar="NAME", help=f"with '{ADD_USER}': the annotator's name")
    parser.add_argument("--port", type=int, default=8501, help="port to listen on (default 8501)")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1: this machine only; any other address needs --users)",
    )
    parser.add_argument(
        "--insecure",
        action="store_true",
        help="allow a non-local --host without --users: anyone who reaches the port works under any name",
    )
    parser.add_argument(
        "--annotator", metavar="NAME", help="annotator name for every decision in this app (without --users)"
    )
    parser.add_argument(
        "--role",
        choices=("lead", "annotator", "transcriber"),
        default=None,
        help=f"with '{ADD_USER}': the login's role (default annotator); without --users: the role of "
        "whoever uses this app (default annotator)",
    )
    parser.add_argument(
        "--lang",
        choices=LANGUAGES,
        default="pt",
        help="language of the pages (default pt: Brazilian Portuguese; en: English); each user can switch",
    )
    parser.add_argument(
        "--users",
        type=Path,
        metavar="FILE",
        help="logins made by 'ablate app add-user': annotators log in and names come from the login",
    )
    parser.add_argument(
        "--manifest",
        type=Path,
        metavar="MANIFEST",
        help="reference version to adjudicate (default: the experiment's manifest)",
    )
    parser.add_argument(
        "--blind", action="store_true", help="blind transcription only: no page that shows model output is reachable"
    )
    parser.add_argument("--replace", action="store_true", help=f"with '{ADD_USER}': change an existing password")
    parser.add_argument(
        "--password-stdin",
        action="store_true",
        help=f"with '{ADD_USER}': read the password from standard input instead of asking",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.core.errors import InputError

    if args.experiment == ADD_USER:
        return _add_user(args)
    if args.name is not None:
        raise InputError(None, f"unexpected argument '{args.name}' (NAME is only for 'ablate app {ADD_USER}')")
    if args.users is not None and args.annotator is not None:
        raise InputError(None, "--annotator and --users exclude each other: with --users the name comes from the login")
    if args.users is not None and args.role is not None:
        raise InputError(None, "--role and --users exclude each other: with --users each login has its role")
    from toolkit.adjudication.context import APP_ENV, open_experiment
    from toolkit.adjudication.users import login_name, name_problem, name_problems, read_users

    if not 0 < args.port < 65536:
        raise InputError(None, f"--port must be 1-65535, not {args.port}")
    local = args.host in LOCAL_HOSTS or args.host.startswith("127.")
    if not local and args.users is None and not args.insecure:
        raise InputError(
            None,
            f"--host {args.host} serves the app beyond this machine: give --users FILE (logins made with "
            f"'ablate app {ADD_USER}'), or --insecure to serve it without logins",
        )
    if importlib.util.find_spec("streamlit") is None:
        raise InputError(None, "the app needs Streamlit: install the 'app' extra (pip install -e '.[app]')")
    command = streamlit_command(args.host, args.port)  # a broken install fails here, before the experiment
    adjudication = open_experiment(args.experiment, args.manifest)  # bad input fails here, before the server
    if args.users is not None:
        users = read_users(args.users)
        if not users:
            raise InputError(args.users, f"has no logins; add one with 'ablate app {ADD_USER} NAME --users FILE'")
        for problem in name_problems(users):  # written before the naming rules: still served, never locked out
            print(f"ablate app: warning: {args.users}: {problem}", file=sys.stderr, flush=True)
    if args.annotator is not None and (refused := name_problem(login_name(args.annotator))) is not None:
        raise InputError(None, f"--annotator: {refused}")
    if not local and args.users is None:
        _warn_red(
            f"ablate app: INSECURE: serving {adjudication.name} on {args.host} without logins; anyone who "
            "reaches this port can read the audio and decide under any name"
        )
    environment = dict(os.environ)
    environment[APP_ENV["experiment"]] = str(Path(args.experiment).resolve())
    for key in ("manifest", "annotator", "role", "users", "blind", "lang"):
        value = getattr(args, key) or None
        environment.pop(APP_ENV[key], None)
        if value is not None:
            environment[APP_ENV[key]] = str(Path(value).resolve()) if isinstance(value, Path) else str(value)
    print(
        f"ablate app: {adjudication.name} at http://{args.host}:{args.port} "
        f"(decisions in {adjudication.store.path}); Ctrl-C stops it",
        flush=True,
    )
    os.execve(command[0], command, environment)  # Streamlit replaces this process: signals reach it directly
    return 0


def app_folder() -> Path:
    """The Streamlit app's folder, found beside the imported ``toolkit`` package, never beside another checkout.

    A wheel carries it as package data (``toolkit/app/``); a checkout links ``toolkit/app`` to the
    top-level ``app/``, so an editable install serves the app of the checkout whose code runs.
    """
    from toolkit.core.errors import ToolkitError

    folder = importlib.resources.files("toolkit") / "app"
    if not isinstance(folder, Path) or not (folder / ENTRY).is_file():
        raise ToolkitError(f"{folder}: the app's files are missing from this install of toolkit; reinstall it")
    return folder.resolve()


def streamlit_command(host: str, port: int) -> list[str]:
    """The Streamlit command line: headless, no usage statistics, no file watching, bound to ``host``."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app_folder() / ENTRY),
        "--server.headless",
        "true",
        "--server.address",
        host,
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--server.runOnSave",
        "false",
        "--global.developmentMode",
        "false",
        "--client.toolbarMode",
        "minimal",
        "--client.showErrorDetails",
        "false",
        "--theme.base",
        "light",
        "--server.enableAgentApi",
        "false",
        "--server.enableStaticServing",
        "false",
    ]


def _warn_red(message: str) -> None:
    """One line on standard error, in red where the terminal shows colour (NO_COLOR respected)."""
    colour = sys.stderr.isatty() and not os.environ.get("NO_COLOR")
    print(f"\033[1;31m{message}\033[0m" if colour else message, file=sys.stderr, flush=True)


def _add_user(args: argparse.Namespace) -> int:
    from toolkit.adjudication.users import ANNOTATOR, add_user
    from toolkit.core.errors import InputError

    if args.users is None or not args.name:
        raise InputError(None, f"usage: ablate app {ADD_USER} NAME --users FILE [--role lead|annotator|transcriber]")
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = getpass.getpass(f"password for {args.name}: ")
        if getpass.getpass("again: ") != password:
            raise InputError(None, "the two passwords differ; nothing was written")
    by = f"{getpass.getuser()} (ablate app {ADD_USER})"
    login = add_user(args.users, args.name, password, role=args.role or ANNOTATOR, replace=args.replace, by=by)
    print(f"{args.users}: login for '{login.name}' ({login.role}) saved (scrypt hash, no password stored)")
    return 0
