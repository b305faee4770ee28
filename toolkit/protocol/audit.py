"""The append-only audit log ``experiments/NAME/protocol/audit.jsonl``.

One JSON object per line; each line holds ``prev_sha256``, the sha256 of the previous line's
bytes, and ``seq``, its position, so an edited, reordered or deleted entry breaks the chain.
A sidecar ``audit.head`` (count and last line's sha256, written atomically after each append)
catches a deleted last entry. Appends hold an exclusive ``flock`` on the log, write the whole
line with one ``write`` on an ``O_APPEND`` descriptor and ``fsync`` it, so two processes
appending at once each get their own, correctly chained line.

Entries may name hashes of things on disk (``hashes``: kind, path relative to the experiment
folder, sha256); :func:`verify` checks the latest entry naming each one against the disk.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_json, canonical_json, sha256_bytes

GENESIS = "0" * 64


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
        """Append one event, chained to the current last line; returns what was written."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            lines = self._raw_lines()
            if lines and not lines[-1].endswith(b"\n"):
                raise InputError(self.path, f"entry {len(lines)} is a torn line; run 'ablate audit verify'")
            entry = {
                "seq": len(lines) + 1,
                "time": datetime.now(UTC).isoformat(timespec="seconds"),
                "event": event,
                **fields,
                "prev_sha256": sha256_bytes(lines[-1]) if lines else GENESIS,
            }
            line = (canonical_json(entry) + "\n").encode("utf-8")
            os.write(fd, line)
            os.fsync(fd)
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
        for k, line in enumerate(self._raw_lines(), 1):
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                raise InputError(self.path, f"entry {k} is not JSON; run 'ablate audit verify'") from None
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
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            raise InputError(log.path, f"entry {k} is not a JSON line (edited or torn)") from None
        if not line.endswith(b"\n"):
            raise InputError(log.path, f"entry {k} is torn (no end of line)")
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
    head = {"entries": 0, "last_sha256": GENESIS}
    if log.head.is_file():
        try:
            head = json.loads(log.head.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            raise InputError(log.head, "audit head unreadable") from None
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
        for named in data.get("hashes", []):
            latest[(named["kind"], named["path"])] = (k, str(data.get("event")), named["sha256"])
    for (kind, path), (k, event, recorded) in sorted(latest.items(), key=lambda item: item[1][0]):
        actual = current_hash(kind, log.folder / path)
        if actual != recorded:
            state = "is missing" if actual is None else f"hashes to {actual}"
            raise InputError(
                log.path, f"entry {k} ({event}) records {kind} {path} with sha256 {recorded}; on disk it {state}"
            )
    return len(lines)
