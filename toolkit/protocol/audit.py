"""The append-only audit log ``experiments/NAME/protocol/audit.jsonl``.

One JSON object per line; each line holds ``prev_sha256``, the sha256 of the previous line's
bytes, and ``seq``, its position, so an edited, reordered or deleted entry breaks the chain.
A sidecar ``audit.head`` (count and last line's sha256, written atomically after each append)
catches a deleted last entry. Appends hold an exclusive ``flock`` on the log and write the
whole line or nothing: the bytes written are counted, a short write (a full disk) is cut back
to where the log ended, and the line is ``fsync``-ed, so two processes appending at once each
get their own, correctly chained line and a full disk leaves the log as it was. A line torn
by a crash (a process killed mid-write) can only be the last: :func:`repair` drops it, and
logs that it did (``ablate audit repair``); nothing else in a log is ever repaired.

Entries may name hashes of things on disk (``hashes``: kind, path relative to the experiment
folder, sha256); :func:`verify` checks the latest entry naming each one against the disk.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolkit.core.data_files import parse_json
from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_json, canonical_json, sha256_bytes

GENESIS = "0" * 64
# Kinds of named hashes that are recorded once and never change (holdout evidence).
WRITE_ONCE = frozenset({"evidence"})
REPAIR_HINT = "run 'ablate audit repair EXP' to drop it (it logs that it did)"


def write_whole(fd: int, line: bytes, size: int, path: Path, what: str) -> None:
    """Write ``line`` at the end of a file of ``size`` bytes, all of it or nothing; then fsync."""
    written = 0
    try:
        while written < len(line):
            count = os.write(fd, line[written:])
            if count <= 0:
                raise OSError(errno.ENOSPC, "no bytes written")
            written += count
        os.fsync(fd)
    except OSError as error:
        os.ftruncate(fd, size)  # the log ends where it ended before: no torn line
        os.fsync(fd)
        reason = error.strerror or str(error)
        raise InputError(path, f"could not append {what} ({reason}); the file is unchanged") from None


@dataclass(frozen=True)
class Entry:
    """One parsed log line."""

    seq: int
    event: str
    data: dict[str, Any]

    def hashes(self) -> list[dict[str, str]]:
        return list(self.data.get("hashes", []))


class AuditLog:
    """The audit log of one experiment folder."""

    def __init__(self, experiment_folder: Path) -> None:
        self.folder = Path(experiment_folder)
        self.path = self.folder / "protocol" / "audit.jsonl"
        self.head = self.path.with_suffix(".head")

    def append(self, event: str, **fields: Any) -> dict[str, Any]:
        """Append one event, chained to the current last line; returns what was written.

        The line is written whole or not at all; a log whose last line is torn is refused
        (``ablate audit repair`` drops it), so nothing is chained to a torn line.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            lines = self._raw_lines()
            if lines and not lines[-1].endswith(b"\n"):
                raise InputError(self.path, f"entry {len(lines)} is torn (a crash mid-write); {REPAIR_HINT}")
            entry = {
                "seq": len(lines) + 1,
                "time": datetime.now(UTC).isoformat(timespec="seconds"),
                "event": event,
                **fields,
                "prev_sha256": sha256_bytes(lines[-1]) if lines else GENESIS,
            }
            line = (canonical_json(entry) + "\n").encode("utf-8")
            write_whole(fd, line, sum(map(len, lines)), self.path, f"entry {entry['seq']}")
            atomic_write_json(self.head, {"entries": entry["seq"], "last_sha256": sha256_bytes(line)})
            return entry
        finally:
            os.close(fd)  # closing releases the lock

    def _raw_lines(self) -> list[bytes]:
        if not self.path.is_file():
            return []
        return self.path.read_bytes().splitlines(keepends=True)

    def entries(self) -> list[Entry]:
        """Parsed entries, in order (the chain is not checked here: see :func:`verify`)."""
        result = []
        lines = self._raw_lines()
        for k, line in enumerate(lines, 1):
            data = _parsed(line, k, len(lines), self.path)
            result.append(Entry(int(data.get("seq", k)), str(data.get("event", "")), data))
        return result


def verify(log: AuditLog, current_hash: Callable[[str, Path], str | None] | None) -> int:
    """Check the chain, the head and every named hash; returns the entry count or raises naming the first bad entry.

    ``current_hash(kind, absolute_path)`` returns what that thing hashes to on disk now (None if
    missing); without it only the chain and head are checked.
    """
    lines = log._raw_lines()
    previous = GENESIS
    chain = [GENESIS]
    for k, line in enumerate(lines, 1):
        data = _parsed(line, k, len(lines), log.path)
        if data.get("seq") != k:
            raise InputError(
                log.path,
                f"entry {k} ({data.get('event')}) says seq {data.get('seq')}: entries were deleted or reordered",
            )
        if data.get("prev_sha256") != previous:
            raise InputError(
                log.path,
                f"entry {k} ({data.get('event')}) does not chain to entry {k - 1}: "
                f"entry {k - 1} was edited, or entries were deleted or reordered",
            )
        previous = sha256_bytes(line)
        chain.append(previous)
    head: Any = {"entries": 0, "last_sha256": GENESIS}
    if log.head.is_file():
        try:
            head = json.loads(log.head.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, RecursionError, ValueError):
            raise InputError(log.head, "audit head unreadable") from None
        if not isinstance(head, dict):
            raise InputError(log.head, f"audit head must be an object, not {type(head).__name__} (edited by hand)")
    # The head lags by one entry only when an append was killed between writing its line and its head.
    held = [len(lines), len(lines) - 1] if lines else [0]
    if not any(head.get("entries") == n and head.get("last_sha256") == chain[n] for n in held):
        if head.get("entries") == len(lines):
            raise InputError(log.path, f"entry {len(lines)} was edited: it no longer hashes to what its head records")
        raise InputError(
            log.path,
            f"the log has {len(lines)} entries but its head records "
            f"{head.get('entries')}: entries were deleted or added by hand",
        )
    if current_hash is None:
        return len(lines)
    latest: dict[tuple[str, str], tuple[int, str, str]] = {}
    for k, line in enumerate(lines, 1):
        data = json.loads(line)
        for named in _named_hashes(data, k, log.path):
            first = latest.get((named["kind"], named["path"]))
            if named["kind"] in WRITE_ONCE and first is not None and first[2] != named["sha256"]:
                raise InputError(
                    log.path,
                    f"entry {k} ({data.get('event')}) records {named['kind']} {named['path']} again with another "
                    f"sha256 than entry {first[0]} did: recorded evidence never changes",
                )
            latest[(named["kind"], named["path"])] = (k, str(data.get("event")), named["sha256"])
    for (kind, path), (k, event, recorded) in sorted(latest.items(), key=lambda item: item[1][0]):
        actual = current_hash(kind, log.folder / path)
        if actual != recorded:
            state = "is missing" if actual is None else f"hashes to {actual}"
            raise InputError(
                log.path, f"entry {k} ({event}) records {kind} {path} with sha256 {recorded}; on disk it {state}"
            )
    return len(lines)


def _named_hashes(data: dict[str, Any], k: int, path: Path) -> list[dict[str, str]]:
    """The hashes entry ``k`` names, each a kind, a path and a sha256 (the log was edited otherwise)."""
    named = data.get("hashes", [])
    if not isinstance(named, list) or not all(
        isinstance(h, dict) and all(isinstance(h.get(key), str) for key in ("kind", "path", "sha256")) for h in named
    ):
        raise InputError(path, f"entry {k} names its hashes in the wrong form (the log was edited)")
    return named


def _parsed(line: bytes, k: int, count: int, path: Path) -> dict[str, Any]:
    """Entry ``k`` of ``count`` as a JSON object; a torn last line says how to repair it, any other bad line not."""
    torn = k == count and not line.endswith(b"\n")
    try:
        data = parse_json(line.decode("utf-8"), path)
    except (InputError, UnicodeDecodeError):
        data = None
    if torn:
        raise InputError(path, f"entry {k} is torn (a crash mid-write); {REPAIR_HINT}")
    if not isinstance(data, dict):
        raise InputError(path, f"entry {k} is not a JSON object line (the log was edited)")
    return data


def repair(log: AuditLog) -> str | None:
    """Drop a torn last line (nothing else) and log that it did; returns what was done, or None if nothing was torn.

    The head is rewritten to the remaining last entry first, so the log verifies again.
    """
    fd = os.open(log.path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        lines = log._raw_lines()
        if not lines or lines[-1].endswith(b"\n"):
            return None
        torn = lines[-1]
        kept = lines[:-1]
        os.ftruncate(fd, sum(map(len, kept)))
        os.fsync(fd)
        atomic_write_json(log.head, {"entries": len(kept), "last_sha256": sha256_bytes(kept[-1]) if kept else GENESIS})
    finally:
        os.close(fd)
    done = f"dropped a torn last line of {len(torn)} bytes (sha256 {sha256_bytes(torn)})"
    log.append("log repaired", detail=done)
    return done
