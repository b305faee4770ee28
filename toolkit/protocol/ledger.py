"""Who opened which test data: a ledger beside the manifest, keyed by the test recordings' audio content.

An experiment's audit log knows only its own openings; a second experiment folder on the same
manifest (or a re-encoded copy of its holdout in the same corpus folder) would not. So every
opening of a test split is also written to ``test-openings.jsonl`` in the manifest's folder:
when, by which experiment and protocol record, for which challenger, and the content hashes of
the recordings opened (toolkit.corpus.content). Opening test data another protocol record
already opened is refused: a second challenger on opened test data needs fresh test data.
Each line is an :class:`Opening` record, read strictly (toolkit.core.json_records) and written from it.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from toolkit.core.data_files import parse_json
from toolkit.core.errors import InputError
from toolkit.core.json_records import record_from_json, record_to_json
from toolkit.protocol.audit import write_whole
from toolkit.protocol.state import ProtocolError

LEDGER_NAME = "test-openings.jsonl"


@dataclass(frozen=True)
class Opening:
    """One protocol record opening one test split."""

    experiment: str
    record: str  # the protocol record's id: the hash of its challenger freeze entry
    split: str
    challenger: str
    config_sha256: str
    content: tuple[str, ...]
    time: str = ""  # when it was claimed: stamped by claim(), which writes it

    def line(self) -> bytes:
        """The opening's ledger line: JSON with sorted keys and a newline."""
        return (json.dumps(record_to_json(self), sort_keys=True) + "\n").encode("utf-8")


def ledger_path(manifest_path: Path) -> Path:
    return Path(manifest_path).resolve().parent / LEDGER_NAME


def _openings(handle: int, path: Path) -> list[Opening]:
    os.lseek(handle, 0, os.SEEK_SET)
    data = b""
    while chunk := os.read(handle, 1 << 20):
        data += chunk
    return [_opening(line, number, path) for number, line in enumerate(data.splitlines(), 1)]


def _opening(line: bytes, number: int, path: Path) -> Opening:
    """Line ``number`` of the ledger as its record; a damaged line is one InputError naming the ledger and the line."""
    try:
        data = parse_json(line.decode("utf-8"), path)
    except (InputError, UnicodeDecodeError):
        raise InputError(path, f"line {number} is not an opening record (the ledger was edited)") from None
    return record_from_json(Opening, data, path, f"line {number}")


def claim(manifest_path: Path, opening: Opening) -> None:
    """Record ``opening`` beside the manifest, or refuse it: its recordings were opened by another record."""
    path = ledger_path(manifest_path)
    try:
        handle = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as error:
        raise InputError(
            path,
            f"cannot record the opening beside the manifest ({error.strerror}); the "
            "protocol needs this folder writable to know who opened its test data",
        ) from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        mine = set(opening.content)
        for earlier in _openings(handle, path):
            shared = mine & set(earlier.content)
            if shared and earlier.record != opening.record:
                raise ProtocolError(
                    path,
                    f"{len(shared)} of these {opening.split} recordings (by audio content) were opened on "
                    f"{earlier.time} by experiment {earlier.experiment} for challenger {earlier.challenger!r}: a "
                    "second challenger on opened test data needs fresh test data",
                )
            if earlier.record == opening.record and earlier.split == opening.split and set(earlier.content) == mine:
                return
        stamped = replace(opening, time=datetime.now(UTC).isoformat(timespec="seconds"))
        write_whole(handle, stamped.line(), os.fstat(handle).st_size, path, "the opening")
    finally:
        os.close(handle)
