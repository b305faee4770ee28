"""The ``ablate`` command: one module per subcommand, each exposing ``register(subparsers)``.

Bad input surfaces as a :class:`~toolkit.core.errors.ToolkitError` and is printed as one line
naming the file and the problem (one line per mistake when a file holds several), with exit 2 and
no traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from toolkit import __version__
from toolkit.cli.collection import end_without_teardown
from toolkit.core.errors import ToolkitError

# Subcommand modules, in the order ``ablate --help`` lists them.
COMMANDS = (
    "manifest",
    "demo",
    "run",
    "plan",
    "arms",
    "score",
    "explain",
    "calibrate",
    "challenger",
    "gate",
    "audit",
    "app",
    "decisions",
    "reference",
)

# Set for every command (and the worker processes it starts) unless the caller set them, as `make` sets them: an
# installed `ablate` runs without the Makefile. pyannote.audio (whisperx's VAD) otherwise reports usage online.
LIBRARY_ENVIRONMENT = {"PYANNOTE_METRICS_ENABLED": "false"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ablate",
        description="pt-BR long-form ASR ablation toolkit: frozen manifests, arms, scorer, gates.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"toolkit.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` names (``sys.argv`` when None: the program itself, whose process may then end
    without the interpreter's teardown when the command asks for it) and return its exit code."""
    for name, value in LIBRARY_ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    args = build_parser().parse_args(argv)
    code = _run(args)
    if argv is None and getattr(args, "skip_teardown", False):
        end_without_teardown(code)
    return code


def _run(args: argparse.Namespace) -> int:
    """The command's exit code, with bad input, a closed pipe, a system refusal and Ctrl-C as one line each."""
    try:
        return int(args.func(args) or 0)
    except ToolkitError as error:
        for line in error.lines():
            print(f"ablate: error: {line}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and closed early: not an error of ours
        sys.stderr.close()
        return 0
    except OSError as error:  # a folder that cannot be created or written, a full disk: the system's refusal
        where = f"{error.filename}: " if error.filename else ""
        print(f"ablate: error: {where}{error.strerror or error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ablate: interrupted; finished work is kept and a rerun resumes", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
