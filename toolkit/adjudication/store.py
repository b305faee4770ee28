"""The decision store: every listener's decision on a reference span, with provenance, in SQLite.

One file per experiment (``experiments/NAME/adjudication.sqlite``), in WAL mode so readers
never block the writer, and one ``BEGIN IMMEDIATE`` transaction per decision so two
annotators saving at the same moment both land. Rows are never updated or deleted: a new
decision on the same span by the same role *supersedes* the previous one (it names it in
``supersedes``), and the history stays readable; triggers refuse any UPDATE or DELETE.

Roles: the first annotator to decide a span is its ``first`` listener; a decision by another
annotator on a span that already has a first decision is a ``second`` listener's; a
``settlement`` (from the conflicts page) settles a span on which first and second disagree.
Each decision records the sha256 of the reference file it was made against (and the
manifest's identity), so a decision made on an older reference version is recognised as such.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolkit.core.errors import InputError

STORE_NAME = "adjudication.sqlite"
SCHEMA_VERSION = 1
KEEP, CORRECT, UNRESOLVED, NONSPEECH = "keep", "correct", "unresolved", "nonspeech"
ACTIONS = (KEEP, CORRECT, UNRESOLVED, NONSPEECH)
FIRST, SECOND, SETTLEMENT = "first", "second", "settlement"
ROLES = (FIRST, SECOND, SETTLEMENT)
# Spans are matched to the millisecond: the same queue item always names the same span.
TIME_DECIMALS = 3
# A span may end this far past the recording (rounding in other tools), as for TextGrids.
DURATION_TOLERANCE = 0.01
_BUSY_TIMEOUT_S = 60.0

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS decisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    recording_id TEXT NOT NULL,
    start REAL NOT NULL,
    "end" REAL NOT NULL,
    action TEXT NOT NULL CHECK (action IN ({", ".join(repr(a) for a in ACTIONS)})),
    old_text TEXT NOT NULL,
    new_text TEXT NOT NULL,
    note TEXT NOT NULL,
    annotator TEXT NOT NULL CHECK (length(trim(annotator)) > 0),
    role TEXT NOT NULL CHECK (role IN ({", ".join(repr(r) for r in ROLES)})),
    reference_sha256 TEXT NOT NULL,
    manifest_sha256 TEXT NOT NULL,
    source TEXT NOT NULL,
    created_at TEXT NOT NULL,
    supersedes INTEGER REFERENCES decisions(id)
);
CREATE INDEX IF NOT EXISTS decisions_span ON decisions (recording_id, start, "end");
CREATE TRIGGER IF NOT EXISTS decisions_never_updated BEFORE UPDATE ON decisions
BEGIN SELECT RAISE(ABORT, 'a decision is never changed: record a new one that supersedes it'); END;
CREATE TRIGGER IF NOT EXISTS decisions_never_deleted BEFORE DELETE ON decisions
BEGIN SELECT RAISE(ABORT, 'a decision is never deleted: record a new one that supersedes it'); END;
CREATE TABLE IF NOT EXISTS applications (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    annotator TEXT NOT NULL,
    out_dir TEXT NOT NULL,
    previous_manifest_sha256 TEXT NOT NULL,
    manifest_sha256 TEXT NOT NULL,
    decision_ids TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class Decision:
    """One stored decision; times are seconds in the original recording."""

    id: int
    recording_id: str
    start: float
    end: float
    action: str
    old_text: str
    new_text: str
    note: str
    annotator: str
    role: str
    reference_sha256: str
    manifest_sha256: str
    source: str
    created_at: str
    supersedes: int | None

    @property
    def span(self) -> tuple[str, float, float]:
        return (self.recording_id, self.start, self.end)

    def agrees_with(self, other: Decision) -> bool:
        """Same action and, for a correction, the same text (whitespace aside)."""
        if self.action != other.action:
            return False
        return self.action != CORRECT or " ".join(self.new_text.split()) == " ".join(other.new_text.split())

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


EXPORT_COLUMNS = tuple(f.name for f in fields(Decision)) + ("status", "superseded_by", "applied_in")


@dataclass(frozen=True)
class SpanState:
    """Where one span stands: its latest first, second and settlement decisions, and the verdict."""

    recording_id: str
    start: float
    end: float
    first: Decision | None
    second: Decision | None
    settlement: Decision | None

    @property
    def conflict(self) -> bool:
        """First and second listener disagree and no later settlement settles it."""
        if self.first is None or self.second is None or self.first.agrees_with(self.second):
            return False
        return not (self.settlement is not None and self.settlement.id > max(self.first.id, self.second.id))

    @property
    def effective(self) -> Decision | None:
        """The decision that applies (None while in conflict or undecided)."""
        latest = [d for d in (self.first, self.second) if d is not None]
        if self.settlement is not None and self.settlement.id > max((d.id for d in latest), default=0):
            return self.settlement
        if self.conflict:
            return None
        return self.first


class DecisionStore:
    """The SQLite file of one experiment; each call opens its own connection (thread- and process-safe)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        with connect(self.path) as connection:
            try:
                mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                connection.executescript(_SCHEMA)
                connection.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                version = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
            except sqlite3.DatabaseError as error:
                raise unreadable(self.path, error) from None
        if str(mode).lower() != "wal":
            raise InputError(
                self.path,
                f"could not switch the decision store to WAL mode (got {mode!r}); it must live on a local disk",
            )
        if version != str(SCHEMA_VERSION):
            raise InputError(
                self.path, f"decision store schema version {version}; this toolkit reads version {SCHEMA_VERSION}"
            )

    @classmethod
    def for_experiment(cls, experiment_dir: str | Path) -> DecisionStore:
        return cls(Path(experiment_dir) / STORE_NAME)

    def record(
        self,
        *,
        recording_id: str,
        start: float,
        end: float,
        action: str,
        old_text: str,
        new_text: str,
        annotator: str,
        reference_sha256: str,
        manifest_sha256: str,
        note: str = "",
        source: str = "",
        settle: bool = False,
        duration: float | None = None,
    ) -> Decision:
        """Store one decision in its own transaction; the role and what it supersedes are decided here.

        ``duration`` (the recording's, seconds), when given, bounds the span.
        """
        annotator = " ".join((annotator or "").split())
        start, end = _check_span(self.path, recording_id, start, end, duration)
        if not annotator:
            raise InputError(self.path, "a decision needs an annotator name; it was not stored")
        if action not in ACTIONS:
            raise InputError(self.path, f"unknown decision '{action}' (known: {', '.join(ACTIONS)})")
        new_text = " ".join(new_text.split()) if action == CORRECT else (old_text if action == KEEP else "")
        if action == CORRECT and not new_text:
            raise InputError(
                self.path, "a correction needs the corrected text; to say nobody speaks there, mark the span non-speech"
            )
        created = datetime.now(UTC).isoformat(timespec="milliseconds")
        with connect(self.path) as connection:
            connection.execute("BEGIN IMMEDIATE")
            try:
                rows = _span_rows(connection, recording_id, start, end)
                role, supersedes = _role(rows, annotator, settle)
                cursor = connection.execute(
                    'INSERT INTO decisions (recording_id, start, "end", action, old_text, new_text, note, '
                    "annotator, role, reference_sha256, manifest_sha256, source, created_at, supersedes) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        recording_id,
                        start,
                        end,
                        action,
                        old_text,
                        new_text,
                        note.strip(),
                        annotator,
                        role,
                        reference_sha256,
                        manifest_sha256,
                        source,
                        created,
                        supersedes,
                    ),
                )
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
        return Decision(
            int(cursor.lastrowid),
            recording_id,
            start,
            end,
            action,
            old_text,
            new_text,
            note.strip(),
            annotator,
            role,
            reference_sha256,
            manifest_sha256,
            source,
            created,
            supersedes,
        )

    def decisions(self) -> list[Decision]:
        """Every decision ever stored, oldest first."""
        with connect(self.path) as connection:
            return [_decision(row) for row in connection.execute("SELECT * FROM decisions ORDER BY id")]

    def span_states(self) -> list[SpanState]:
        """One state per decided span, in recording and time order."""
        return span_states(self.decisions())

    def export_rows(self) -> list[dict[str, Any]]:
        """Every decision with its provenance, whether it is current, what superseded it, and the
        reference versions (new manifests' sha256, ``;``-separated) it was applied into."""
        decisions = self.decisions()
        superseded_by = {d.supersedes: d.id for d in decisions if d.supersedes is not None}
        current = {
            d.id
            for state in span_states(decisions)
            for d in (state.first, state.second, state.settlement)
            if d is not None
        }
        applied: dict[int, list[str]] = {}
        for application in self.applications():
            for decision_id in application["decision_ids"].split(","):
                applied.setdefault(int(decision_id), []).append(application["manifest_sha256"])
        return [
            {
                **d.to_json(),
                "status": "current" if d.id in current else "superseded",
                "superseded_by": superseded_by.get(d.id),
                "applied_in": ";".join(applied.get(d.id, [])),
            }
            for d in decisions
        ]

    def record_application(
        self,
        *,
        annotator: str,
        out_dir: str,
        previous_manifest_sha256: str,
        manifest_sha256: str,
        decision_ids: list[int],
    ) -> None:
        """Remember that these decisions went into the reference version written to ``out_dir``."""
        created = datetime.now(UTC).isoformat(timespec="milliseconds")
        with connect(self.path) as connection:
            connection.execute(
                "INSERT INTO applications (created_at, annotator, out_dir, previous_manifest_sha256, "
                "manifest_sha256, decision_ids) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    created,
                    annotator,
                    out_dir,
                    previous_manifest_sha256,
                    manifest_sha256,
                    ",".join(str(i) for i in decision_ids),
                ),
            )

    def applications(self) -> list[dict[str, Any]]:
        with connect(self.path) as connection:
            connection.row_factory = sqlite3.Row
            return [dict(row) for row in connection.execute("SELECT * FROM applications ORDER BY id")]


@contextmanager
def connect(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection to the store file in autocommit mode (callers open their own transactions)."""
    if path.exists() and not path.is_file():
        raise InputError(path, "is not a file; the decision store must be an SQLite file")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        connection = sqlite3.connect(path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error as error:
        raise InputError(path, f"cannot open the decision store: {error}") from None
    try:
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute("PRAGMA foreign_keys=ON")
        yield connection
    except sqlite3.DatabaseError as error:
        raise unreadable(path, error) from None
    finally:
        connection.close()


def unreadable(path: Path, error: sqlite3.DatabaseError) -> InputError:
    return InputError(
        path,
        f"not a readable decision store ({error}); it was left untouched: "
        "restore it from a backup or move it aside to start a new one",
    )


def span_states(decisions: list[Decision]) -> list[SpanState]:
    """Group decisions by span; the latest decision of each role counts."""
    latest: dict[tuple[str, float, float], dict[str, Decision]] = {}
    for decision in sorted(decisions, key=lambda d: d.id):
        latest.setdefault(decision.span, {})[decision.role] = decision
    return [
        SpanState(rid, start, end, roles.get(FIRST), roles.get(SECOND), roles.get(SETTLEMENT))
        for (rid, start, end), roles in sorted(latest.items())
    ]


def _check_span(path: Path, recording_id: str, start: float, end: float, duration: float | None) -> tuple[float, float]:
    if not recording_id:
        raise InputError(path, "a decision needs a recording id")
    if not (math.isfinite(start) and math.isfinite(end)) or start < 0 or end <= start:
        raise InputError(path, f"span {start}-{end} s of '{recording_id}' is not a span (0 <= start < end)")
    if duration is not None and end > duration + DURATION_TOLERANCE:
        raise InputError(
            path,
            f"span {start:g}-{end:g} s lies outside recording '{recording_id}' "
            f"({duration:g} s long); it was not stored",
        )
    return round(float(start), TIME_DECIMALS), round(float(end), TIME_DECIMALS)


def _span_rows(connection: sqlite3.Connection, recording_id: str, start: float, end: float) -> list[Decision]:
    cursor = connection.execute(
        'SELECT * FROM decisions WHERE recording_id = ? AND start = ? AND "end" = ? ORDER BY id',
        (recording_id, start, end),
    )
    return [_decision(row) for row in cursor]


def _role(rows: list[Decision], annotator: str, settle: bool) -> tuple[str, int | None]:
    """The new decision's role on a span with these earlier decisions, and the decision it supersedes."""
    if settle:
        return SETTLEMENT, rows[-1].id if rows else None
    firsts = [d for d in rows if d.role == FIRST]
    if not firsts or firsts[-1].annotator == annotator:
        return FIRST, firsts[-1].id if firsts else None
    seconds = [d for d in rows if d.role == SECOND]
    return SECOND, seconds[-1].id if seconds else None


def _decision(row: tuple[Any, ...]) -> Decision:
    return Decision(*row)
