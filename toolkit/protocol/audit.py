"""The append-only audit log ``experiments/NAME/protocol/audit.jsonl``.

One JSON object per line; each line holds ``prev_sha256``, the sha256 of the previous line's bytes,
and ``seq``, its position, so an edited, reordered or deleted entry breaks the chain. A sidecar
``audit.head`` (count and last line's sha256) catches a deleted last entry, and an added one: each
append first records in the head the sha256 of the line it is about to write (``pending_sha256``),
then writes the line, then moves the head onto it. So the one state a crash between the two writes
can leave, a last entry the head names as pending, is told apart from a complete entry appended by
hand, which no head names: the first is completed (and logged) by the next append or ``ablate audit
repair``, the second is tampering. Appends hold an exclusive ``flock`` on the log and write the
whole line or nothing: the bytes written are counted, a short write (a full disk) is cut back to
where the log ended, and the line is ``fsync``-ed, so two processes appending at once each get their
own, correctly chained line and a full disk leaves the log as it was. A line torn by a crash (a
process killed mid-write) can only be the last: :func:`repair` drops it, and logs that it did
(``ablate audit repair``); nothing else in a log is ever repaired. A tool on the adversary's own
machine cannot catch a log rewritten whole with its head: publish the head
(:meth:`AuditLog.published_head`, printed by freeze and gate) and check it later with
:func:`verify_published` (``ablate audit verify --head``).

Entries may name hashes of things on disk (``hashes``: kind, path relative to the experiment folder,
sha256); :func:`verify` checks the latest entry naming each one against the disk.

Lines are read by one function, :func:`read_entry`, as :class:`Entry` records (the fields every
entry has, typed; the event's own keys as they were written) and written from the record
(toolkit.core.json_records), which gives the bytes the plain canonical JSON of the entry gave; the
head is an :class:`AuditHead` record.
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
# Kinds of named things a command writes again each time it runs: what to do when one differs from its entry.
REWRITTEN_BY = {"verdict": "a gate killed before logging its verdict leaves this; 'ablate gate EXP' writes it again"}
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
    """The sidecar ``audit.head``: how many entries the log holds, the sha256 of its last line, and (while an
    append is under way, or after it crashed) the sha256 of the line it is writing."""

    entries: int
    last_sha256: str
    pending_sha256: str | Absent = optional_key()


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
        (``ablate audit repair`` drops it), so nothing is chained to a torn line. A log whose head
        does not hold its last entry is refused as tampered, unless a crashed append left it so:
        then the head is completed and the repair logged first.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            lines = self._raw_lines()
            if lines and not lines[-1].endswith(b"\n"):
                raise InputError(self.path, f"entry {len(lines)} is torn (a crash mid-write); {REPAIR_HINT}")
            if head_state(self, self.read_head(), line_chain(lines)) == CRASHED:
                lines.append(self._write(fd, lines, "log repaired", {"detail": self._complete_head(lines)}).line())
            return self._write(fd, lines, event, fields)
        finally:
            os.close(fd)  # closing releases the lock

    def _write(self, fd: int, lines: list[bytes], event: str, fields: dict[str, Any]) -> Entry:
        """Write one entry after ``lines`` (the lock held): the head names it as pending, the line, then the head
        moves onto it. Returns the entry written."""
        data = {
            "seq": len(lines) + 1,
            "time": datetime.now(UTC).isoformat(timespec="seconds"),
            "event": event,
            **fields,
            "prev_sha256": sha256_bytes(lines[-1]) if lines else GENESIS,
        }
        entry = record_from_json(Entry, data, self.path, f"entry {data['seq']}")
        line = entry.line()
        pending = AuditHead(len(lines), data["prev_sha256"], sha256_bytes(line))
        try:
            write_record(self.head, pending)
        except InputError as error:  # a full disk: nothing was written to the log
            raise InputError(
                self.path, f"could not append entry {data['seq']} (its head: {error.problem}); the file is unchanged"
            ) from None
        write_whole(fd, line, sum(map(len, lines)), self.path, f"entry {data['seq']}")
        write_record(self.head, AuditHead(len(lines) + 1, sha256_bytes(line)))
        return entry

    def _complete_head(self, lines: list[bytes]) -> str:
        """Move the head onto the last entry a crashed append wrote but never recorded; says what was done."""
        last = read_entry(lines[-1], len(lines), len(lines), self.path)
        write_record(self.head, AuditHead(len(lines), sha256_bytes(lines[-1])))
        return (
            f"completed the head for entry {len(lines)} ({last.event}), which a command killed between writing it "
            "and recording it had named as pending"
        )

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

    def published_head(self) -> str:
        """The log's last line as a head to publish (``ENTRIES:SHA256``): send, commit or print it before the holdout
        opens, and ``ablate audit verify --head`` later shows the log still holds that line and all before it."""
        lines = self._raw_lines()
        return f"{len(lines)}:{sha256_bytes(lines[-1]) if lines else GENESIS}"


def verify(
    log: AuditLog,
    current_hash: Callable[[str, Path], str | None] | None,
    regenerated: frozenset[str] = frozenset(),
) -> int:
    """Check the chain, the head and every named hash; returns the entry count or raises naming the first bad entry.

    ``current_hash(kind, absolute_path)`` returns what that thing hashes to on disk now (None if
    missing); without it only the chain and head are checked. Named things of a kind in ``regenerated`` are
    not checked: the caller is about to write them again (the gate its verdict file, which a crash may have
    left newer than its entry).
    """
    entries, chain = _chained(log)
    head_state(log, log.read_head(), chain)
    if current_hash is not None:
        _check_hashes(log, entries, current_hash, regenerated)
    return len(entries)


def _chained(log: AuditLog) -> tuple[list[Entry], list[str]]:
    """The entries, each checked to hold its place and to chain to the one before; and the chain of line hashes."""
    lines = log._raw_lines()
    entries: list[Entry] = []
    chain = [GENESIS]
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


CURRENT, CRASHED = "current", "crashed"


def line_chain(lines: list[bytes]) -> list[str]:
    """GENESIS, then the sha256 of each line: what each entry's ``prev_sha256`` and the head refer to."""
    return [GENESIS, *map(sha256_bytes, lines)]


def head_state(log: AuditLog, head: AuditHead, chain: list[str]) -> str:
    """CURRENT when the head records the last entry (an append that never wrote its pending line included);
    CRASHED when it records the one before and names the last as the line it was writing (an append killed
    between the two writes); anything else is refused, naming what was done to the log."""
    count = len(chain) - 1
    if head.entries == count and head.last_sha256 == chain[count]:
        return CURRENT
    if count and head.entries == count - 1 and head.last_sha256 == chain[count - 1]:
        if head.pending_sha256 == chain[count]:
            return CRASHED
        raise InputError(
            log.path,
            f"entry {count} is complete but the head never recorded it (an append names its line in the head before "
            "writing it; a crash leaves it named there): it was appended by hand, which is tampering",
        )
    if head.entries == count:
        raise InputError(log.path, f"entry {count} was edited: it no longer hashes to what its head records")
    raise InputError(
        log.path,
        f"the log has {count} entries but its head records {head.entries}: entries were deleted or added by hand",
    )


def verify_published(log: AuditLog, published: str) -> int:
    """The entry a published head (``ENTRIES:SHA256``, or the sha256 alone) names, after checking that the log
    still holds that very line at that place; else one InputError: the log was rewritten since it was published."""
    count_text, _, sha = published.strip().rpartition(":")
    if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha) or (count_text and not count_text.isdigit()):
        raise InputError(log.path, f"--head {published!r} is not a published head (ENTRIES:SHA256, as ablate prints)")
    _, chain = _chained(log)
    places = [k for k, value in enumerate(chain) if value == sha and k]
    if not places or (count_text and int(count_text) not in places):
        raise InputError(
            log.path,
            f"the published head {published} is not in this log ({len(chain) - 1} entries): the log was rewritten "
            "since that head was published, or it is another experiment's",
        )
    return places[0]


def _check_hashes(
    log: AuditLog, entries: list[Entry], current_hash: Callable[[str, Path], str | None], regenerated: frozenset[str]
) -> None:
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
        if kind in regenerated:
            continue
        actual = current_hash(kind, log.folder / path)
        if actual != recorded:
            state = "is missing" if actual is None else f"hashes to {actual}"
            hint = f" ({REWRITTEN_BY[kind]})" if kind in REWRITTEN_BY else ""
            raise InputError(
                log.path, f"entry {k} ({event}) records {kind} {path} with sha256 {recorded}; on disk it {state}{hint}"
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
    """Drop a torn last line and complete a head a crashed append left behind (nothing else), and log what was
    done; returns it, or None when the log needed neither. A head that holds neither state stays an error."""
    fd = os.open(log.path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        lines = log._raw_lines()
        torn = lines[-1] if lines and not lines[-1].endswith(b"\n") else b""
        kept = lines[:-1] if torn else lines
        chain = line_chain(kept)
        crashed = head_state(log, log.read_head(), chain) == CRASHED
        if not (torn or crashed):
            return None
        done = []
        if torn:
            os.ftruncate(fd, sum(map(len, kept)))
            os.fsync(fd)
            done.append(f"dropped a torn last line of {len(torn)} bytes (sha256 {sha256_bytes(torn)})")
        if crashed:
            done.append(log._complete_head(kept))
        write_record(log.head, AuditHead(len(kept), chain[-1]))
    finally:
        os.close(fd)
    log.append("log repaired", detail="; ".join(done))
    return "; ".join(done)
