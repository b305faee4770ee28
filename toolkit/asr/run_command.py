"""Run one external command in its own process group, with a time limit, and measure what it spent.

The command's CPU time and peak resident memory come from the kernel's account of the finished process
(``wait4``: its own and its waited-for children's), so an external recognizer's cost is its own, not the
worker's that started it. Past the time limit, or once it ends, the whole process group is killed: nothing a
command started outlives its unit.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from toolkit.core.errors import ToolkitError

TAIL_LINES = 6
TAIL_CHARS = 600
_POLL_S = 0.01


class CommandFailed(ToolkitError):
    """An external recognizer command failed on one unit: how, in one line, with the end of what it said."""


@dataclass(frozen=True)
class Finished:
    """A command that ended by itself: its exit status, CPU seconds, peak resident memory (MB), stderr's tail."""

    returncode: int
    cpu_s: float
    peak_rss_mb: float
    stderr_tail: str


def tail(path: Path) -> str:
    """The last few non-blank lines of a file, joined on one line (at most TAIL_CHARS), or ``(nothing)``."""
    try:
        text = path.read_bytes()[-16 * TAIL_CHARS :].decode("utf-8", "replace")
    except OSError:
        return "(nothing)"
    lines = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    joined = " | ".join(lines[-TAIL_LINES:])
    return (joined[-TAIL_CHARS:] if len(joined) > TAIL_CHARS else joined) or "(nothing)"


def run_command(argv: list[str], cwd: Path, timeout_s: float) -> Finished:
    """Run ``argv`` in ``cwd`` (stdin empty, stdout and stderr to files there) for at most ``timeout_s``; raises
    :class:`CommandFailed` when it cannot start or is killed for running too long."""
    stderr = cwd / "stderr.txt"
    with open(cwd / "stdout.txt", "wb") as out, open(stderr, "wb") as err:
        try:
            process = subprocess.Popen(
                argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
            )
        except OSError as error:
            raise CommandFailed(f"could not start {argv[0]}: {error.strerror or error}") from None
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                _kill_group(process.pid)
                _, status, usage = os.wait4(process.pid, 0)
                process.returncode = os.waitstatus_to_exitcode(status)
                raise CommandFailed(
                    f"still running after timeout_s = {timeout_s:g} s: its process group was killed; "
                    f"stderr: {tail(stderr)}"
                )
            time.sleep(_POLL_S)
    except BaseException:
        if process.returncode is None:  # interrupted while waiting: nothing is left running
            _kill_group(process.pid)
            process.wait()
        raise
    process.returncode = os.waitstatus_to_exitcode(status)
    _kill_group(process.pid)  # whatever it left running in its group
    return Finished(process.returncode, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, tail(stderr))


def _kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` (gone already: nothing to do)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def exit_problem(finished: Finished) -> str | None:
    """How a command that ended failed (a nonzero status, a signal), with its stderr's tail; None for status 0."""
    if finished.returncode == 0:
        return None
    if finished.returncode < 0:
        number = -finished.returncode
        how = f"was killed by {signal.Signals(number).name if number in signal.valid_signals() else number}"
    else:
        how = f"exited with status {finished.returncode}"
    return f"{how}; stderr: {finished.stderr_tail}"
