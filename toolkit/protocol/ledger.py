"""Who opened which test data: two ledgers keyed by the test recordings' audio content.

An experiment's audit log knows only its own openings; a second experiment folder on the same
manifest, a re-encoded copy of its holdout, or the same audio frozen again into another manifest
elsewhere would not. So every opening of a test split is written to two ledgers: one beside the
manifest (``test-openings.jsonl`` in its folder) and one of the machine's (``$ABLATE_OPENINGS``, else
``test-openings.jsonl`` in the user's cache, toolkit.core.files.machine_cache), which every experiment
of this user sees whatever folder or manifest file it uses. Each line says when, by which experiment
and protocol record, for which challenger, and the content hashes of the recordings opened
(toolkit.corpus.content). Opening test data another protocol record already opened, in either ledger,
is refused: a second challenger on opened test data needs fresh test data. A ledger that lost an opening
the other still holds gets it back at the next claim, and the caller is told, so deleting one ledger
reopens nothing. The demo's synthetic test data (rebuilt for every version of the demo) may be opened
by any demo record, never by a real one; every verdict says which kind it is.
Each line is an :class:`Opening` record, read strictly (toolkit.core.json_records) and written from it.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from toolkit.core.data_files import parse_json
from toolkit.core.errors import InputError
from toolkit.core.files import machine_cache
from toolkit.core.json_records import record_from_json, record_to_json
from toolkit.protocol.audit import write_whole
from toolkit.protocol.state import ProtocolError

LEDGER_NAME = "test-openings.jsonl"
MACHINE_LEDGER_ENV = "ABLATE_OPENINGS"


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
    demo: bool = False  # the demo's synthetic test data, which any demo record may open again

    def line(self) -> bytes:
        """The opening's ledger line: JSON with sorted keys and a newline."""
        return (json.dumps(record_to_json(self), sort_keys=True) + "\n").encode("utf-8")

    def same_claim(self, other: Opening) -> bool:
        """Whether ``other`` records this very opening (its time apart)."""
        return replace(other, time="") == replace(self, time="")

    def describe(self) -> str:
        kind = " (the demo's synthetic test data)" if self.demo else ""
        return (
            f"opened on {self.time} by experiment {self.experiment} for challenger {self.challenger!r}{kind}, "
            f"protocol record {self.record}"
        )


@dataclass(frozen=True)
class KnownOpenings:
    """What the ledgers know of one test split's content after a claim: every opening sharing a recording with
    it (this one included), and the ledgers that had lost this opening and were given it back."""

    openings: tuple[Opening, ...]
    ledgers: tuple[Path, ...]
    restored: tuple[Path, ...]
    named_by_env: str = ""  # $ABLATE_OPENINGS, when it named the machine's ledger

    def text(self) -> str:
        """One line for the verdict and the report: how many openings of this content are known, and where."""
        where = " and ".join(str(path) for path in self.ledgers)
        if self.named_by_env:
            where += f" (the machine's named by ${MACHINE_LEDGER_ENV}, not the user's cache)"
        records = len({o.record for o in self.openings})
        line = f"openings of this test content known on this machine: {records} protocol record(s) in {where}"
        if self.openings and all(o.demo for o in self.openings):
            line += " (the demo's synthetic test data, which every demo opens again: not a real holdout)"
        if self.restored:
            line += f"; restored from the audit log into {', '.join(map(str, self.restored))}, which had lost it"
        return line


def ledger_path(manifest_path: Path) -> Path:
    """The ledger beside a manifest."""
    return Path(manifest_path).resolve().parent / LEDGER_NAME


def machine_ledger_path() -> Path:
    """The machine's ledger: ``$ABLATE_OPENINGS``, else one in the user's cache shared by every experiment."""
    named = os.environ.get(MACHINE_LEDGER_ENV)
    return Path(named) if named else default_machine_ledger()


def default_machine_ledger() -> Path:
    return machine_cache("protocol") / LEDGER_NAME


def _also_read() -> list[Path]:
    """The user's own machine ledger when ``$ABLATE_OPENINGS`` names another: read (its openings refuse too),
    never written, so pointing the variable at an empty file reopens nothing the user's ledger holds."""
    default = default_machine_ledger()
    return [default] if default != machine_ledger_path() and default.is_file() else []


def claim(manifest_path: Path, opening: Opening) -> KnownOpenings:
    """Record ``opening`` in both ledgers, or refuse it: its recordings were opened by another record in either.

    A ledger that lacks an opening of this content the other holds (this one, or another record's) is given it
    back, so deleting or emptying one ledger reopens nothing."""
    paths = sorted({machine_ledger_path(), ledger_path(manifest_path)}, key=str)
    with ExitStack() as stack:
        handles = {path: stack.enter_context(_locked(path)) for path in paths}  # one fixed order: no deadlock
        held = {path: _openings(handle, path) for path, handle in handles.items()}
        read_only = {path: _read(path) for path in _also_read()}
        known = _union({**held, **read_only})
        mine = set(opening.content)
        for earlier in known:
            if mine & set(earlier.content) and _conflicts(earlier, opening):
                where = next(path for path, had in {**held, **read_only}.items() if _holds(had, earlier))
                raise ProtocolError(
                    where,
                    f"{len(mine & set(earlier.content))} of these {opening.split} recordings (by audio content) were "
                    f"{earlier.describe()}: a second challenger on opened test data needs fresh test data",
                )
        this = next((o for o in known if o.same_claim(opening)), None)
        sharing = [o for o in known if mine & set(o.content)]
        if this is None:
            sharing.append(replace(opening, time=datetime.now(UTC).isoformat(timespec="seconds")))
        restored = []
        for path, handle in handles.items():
            for missing in [o for o in sharing if not _holds(held[path], o)]:
                write_whole(handle, missing.line(), os.fstat(handle).st_size, path, "the opening")
                restored += [path] if missing is this else []
        return KnownOpenings(tuple(sharing), tuple(paths), tuple(restored), os.environ.get(MACHINE_LEDGER_ENV, ""))


def _conflicts(earlier: Opening, opening: Opening) -> bool:
    """Two openings of shared content conflict unless they are one record's, or both the demo's synthetic data."""
    return earlier.record != opening.record and not (earlier.demo and opening.demo)


def _holds(openings: list[Opening], opening: Opening) -> bool:
    return any(o.same_claim(opening) for o in openings)


def _union(held: dict[Path, list[Opening]]) -> list[Opening]:
    """Every distinct opening of the ledgers, the earliest stamp of each."""
    known: list[Opening] = []
    for openings in held.values():
        for opening in openings:
            if not _holds(known, opening):
                known.append(opening)
    return known


@contextmanager
def _locked(path: Path) -> Iterator[int]:
    """The ledger open for appending, under an exclusive lock; a place that cannot be written is one line."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as error:
        raise InputError(
            path,
            f"cannot record the opening in this ledger ({error.strerror}); the protocol needs it writable to know "
            "who opened its test data",
        ) from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield handle
    finally:
        os.close(handle)


def _read(path: Path) -> list[Opening]:
    """A ledger's openings, read under a shared lock."""
    handle = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_SH)
        return _openings(handle, path)
    finally:
        os.close(handle)


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
