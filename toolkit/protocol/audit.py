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

Lines are read by one function, :func:`read_entry`, as :class:`Entry` records (the fields every entry
has, typed; the event's own keys as they were written) and written from the record (toolkit.core.json_records),
which gives the bytes the plain canonical JSON of the entry gave; the head is an :class:`AuditHead` record.
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolkit.core.data_files import parse_json
from toolkit.core.errors import InputError
from toolkit.core.files import canonical_json, sha256_bytes
from toolkit.core.json_records import (
    ABSENT,
    Absent,
    optional_key,
    other_keys,
    read_record,
    record_from_json,
    record_to_json,
    write_record,
)

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
class NamedHash:
    """A thing on disk an entry names: its kind, its path relative to the experiment folder, its sha256."""

    kind: str
    path: str
    sha256: str


@dataclass(frozen=True)
class Entry:
    """One log line: its place in the chain, when and what happened, the hashes it names, and the event's own keys."""

    seq: int
    time: str
    event: str
    prev_sha256: str
    hashes: tuple[NamedHash, ...] | Absent = optional_key()
    other: dict[str, Any] = other_keys()  # the event's own keys (run, split, challenger, ...), as written

    def named_hashes(self) -> tuple[NamedHash, ...]:
        """The hashes the entry names (none when it has no ``hashes`` key)."""
        return () if self.hashes is ABSENT else self.hashes

    def line(self) -> bytes:
        """The entry's log line: canonical JSON (sorted keys, no spaces) and a newline; its sha256 chains the next."""
        return (canonical_json(record_to_json(self)) + "\n").encode("utf-8")


@dataclass(frozen=True)
class AuditHead:
    """The sidecar ``audit.head``: how many entries the log holds and the sha256 of its last line."""

    entries: int
    last_sha256: str


EMPTY_HEAD = AuditHead(0, GENESIS)


class AuditLog:
    """The audit log of one experiment folder."""

    def __init__(self, experiment_folder: Path) -> None:
        self.folder = Path(experiment_folder)
        self.path = self.folder / "protocol" / "audit.jsonl"
        self.head = self.path.with_suffix(".head")

    def append(self, event: str, **fields: Any) -> Entry:
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
            data = {
                "seq": len(lines) + 1,
                "time": datetime.now(UTC).isoformat(timespec="seconds"),
                "event": event,
                **fields,
                "prev_sha256": sha256_bytes(lines[-1]) if lines else GENESIS,
            }
            entry = record_from_json(Entry, data, self.path, f"entry {data['seq']}")
            line = entry.line()
            write_whole(fd, line, sum(map(len, lines)), self.path, f"entry {entry.seq}")
            write_record(self.head, AuditHead(entry.seq, sha256_bytes(line)))
            return entry
        finally:
            os.close(fd)  # closing releases the lock

    def _raw_lines(self) -> list[bytes]:
        if not self.path.is_file():
            return []
        return self.path.read_bytes().splitlines(keepends=True)

    def entries(self) -> list[Entry]:
        """The entries, in order (the chain is not checked here: see :func:`verify`)."""
        lines = self._raw_lines()
        return [read_entry(line, k, len(lines), self.path) for k, line in enumerate(lines, 1)]

    def read_head(self) -> AuditHead:
        """The head file's record (that of an empty log when there is none)."""
        return read_record(AuditHead, self.head, "audit head") if self.head.is_file() else EMPTY_HEAD


def verify(log: AuditLog, current_hash: Callable[[str, Path], str | None] | None) -> int:
    """Check the chain, the head and every named hash; returns the entry count or raises naming the first bad entry.

    ``current_hash(kind, absolute_path)`` returns what that thing hashes to on disk now (None if
    missing); without it only the chain and head are checked.
    """
    entries, chain = _chained(log)
    _check_head(log, log.read_head(), chain)
    if current_hash is not None:
        _check_hashes(log, entries, current_hash)
    return len(entries)


def _chained(log: AuditLog) -> tuple[list[Entry], list[str]]:
    """The entries, each checked to hold its place and to chain to the one before; and the chain of line hashes."""
    lines = log._raw_lines()
    entries, chain = [], [GENESIS]
    for k, line in enumerate(lines, 1):
        entry = read_entry(line, k, len(lines), log.path)
        if entry.seq != k:
            raise InputError(
                log.path, f"entry {k} ({entry.event}) says seq {entry.seq}: entries were deleted or reordered"
            )
        if entry.prev_sha256 != chain[-1]:
            raise InputError(
                log.path,
                f"entry {k} ({entry.event}) does not chain to entry {k - 1}: "
                f"entry {k - 1} was edited, or entries were deleted or reordered",
            )
        entries.append(entry)
        chain.append(sha256_bytes(line))
    return entries, chain


def _check_head(log: AuditLog, head: AuditHead, chain: list[str]) -> None:
    """Refuse a head that records neither the last entry nor (an append killed before its head) the one before."""
    count = len(chain) - 1
    held = [count, count - 1] if count else [0]
    if any(head.entries == n and head.last_sha256 == chain[n] for n in held):
        return
    if head.entries == count:
        raise InputError(log.path, f"entry {count} was edited: it no longer hashes to what its head records")
    raise InputError(
        log.path,
        f"the log has {count} entries but its head records {head.entries}: entries were deleted or added by hand",
    )


def _check_hashes(log: AuditLog, entries: list[Entry], current_hash: Callable[[str, Path], str | None]) -> None:
    """Refuse evidence recorded twice with two hashes, and a thing whose latest recorded hash is not the disk's."""
    latest: dict[tuple[str, str], tuple[int, str, str]] = {}
    for entry in entries:
        for named in entry.named_hashes():
            first = latest.get((named.kind, named.path))
            if named.kind in WRITE_ONCE and first is not None and first[2] != named.sha256:
                raise InputError(
                    log.path,
                    f"entry {entry.seq} ({entry.event}) records {named.kind} {named.path} again with another "
                    f"sha256 than entry {first[0]} did: recorded evidence never changes",
                )
            latest[(named.kind, named.path)] = (entry.seq, entry.event, named.sha256)
    for (kind, path), (k, event, recorded) in sorted(latest.items(), key=lambda item: item[1][0]):
        actual = current_hash(kind, log.folder / path)
        if actual != recorded:
            state = "is missing" if actual is None else f"hashes to {actual}"
            raise InputError(
                log.path, f"entry {k} ({event}) records {kind} {path} with sha256 {recorded}; on disk it {state}"
            )


def read_entry(line: bytes, k: int, count: int, path: Path) -> Entry:
    """Line ``k`` of a log of ``count`` lines as its record (the one reader of the log's lines); a bad line is one
    InputError naming the entry and the key."""
    return record_from_json(Entry, _parsed(line, k, count, path), path, f"entry {k}")


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
        write_record(log.head, AuditHead(len(kept), sha256_bytes(kept[-1])) if kept else EMPTY_HEAD)
    finally:
        os.close(fd)
    done = f"dropped a torn last line of {len(torn)} bytes (sha256 {sha256_bytes(torn)})"
    log.append("log repaired", detail=done)
    return done
