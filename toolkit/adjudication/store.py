"""The decision store: every listener's decision on a reference span, with provenance, in SQLite.

One file per experiment (``experiments/NAME/adjudication.sqlite``), in WAL mode so readers
never block the writer, and one ``BEGIN IMMEDIATE`` transaction per decision so two
annotators saving at the same moment both land. Rows are never updated or deleted: a new
decision on the same span by the same role *supersedes* the previous one (it names it in
``supersedes``), and the history stays readable; triggers refuse any UPDATE or DELETE.

Roles: the first annotator to decide a span is its ``first`` listener; a decision by any other
annotator on a span that already has a first decision is a ``second`` (further) listener's (the
file's check allows no other value; ``listener_numbers`` tells the third from the second, and the
export writes each listener's role as their place: ``third``, ``fourth``...); a
``settlement`` (a lead, on the conflicts page) settles a span on which listeners disagree, and
is refused from anyone who decided that span as a listener. A decision supersedes only its own
author's earlier decision in the same role on the same span: one listener never replaces
another's. A settlement over a stretch that contains other spans (an overlap settled as one)
*replaces* every decision on them older than itself: they stay in the file, read as settled by it.
A correction whose text is the reference's own text is stored as a keep.
Each decision records the sha256 of the reference file it was made against (and the
manifest's identity), so a decision made on an older reference version is recognised as such.
"""

from __future__ import annotations

import math
import re
import sqlite3
from dataclasses import asdict, dataclass, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolkit.adjudication.rows import Table, append_only, connect, read, transaction, unreadable, write
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
{append_only("decisions", "a decision", "record a new one that supersedes it")}
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

    @property
    def outcome(self) -> tuple[str, str]:
        """What the decision does: its action and, for a correction, the text (whitespace aside).

        A correction that leaves the text as it was is a keep (older stores may hold such rows).
        """
        text = " ".join(self.new_text.split())
        if self.action == CORRECT and text != " ".join(self.old_text.split()):
            return CORRECT, text
        return (KEEP if self.action == CORRECT else self.action), ""

    def agrees_with(self, other: Decision) -> bool:
        """Same outcome: same action and, for a correction, the same text (whitespace aside)."""
        return self.outcome == other.outcome

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ExportedDecision:
    """A decision with its provenance: ``current`` (its author's latest in its role on its span) or
    ``superseded`` (by ``superseded_by``), the settlement that settled its span, and the reference
    versions (new manifests' sha256) it was applied into."""

    decision: Decision
    status: str
    superseded_by: int | None
    settled_by: int | None
    applied_in: tuple[str, ...]
    role: str  # the decision's role, a listener's as their place on the stretch (``third``)

    def to_json(self) -> dict[str, Any]:
        """One flat row (the export's JSON and CSV): the decision's fields (a listener's role as their
        place on the stretch: ``first``, ``second``, ``third``...), then the provenance."""
        return {
            **self.decision.to_json(),
            "role": self.role,
            "status": self.status,
            "superseded_by": self.superseded_by,
            "settled_by": self.settled_by,
            "applied_in": ";".join(self.applied_in),
        }


EXPORT_COLUMNS = tuple(f.name for f in fields(Decision)) + tuple(
    f.name for f in fields(ExportedDecision) if f.name not in ("decision", "role")
)


@dataclass(frozen=True)
class Application:
    """Decisions written into a new reference version (``out_dir``, its manifest's sha256) by ``annotator``."""

    id: int
    created_at: str
    annotator: str
    out_dir: str
    previous_manifest_sha256: str
    manifest_sha256: str
    decision_ids: str  # the applied decisions' ids, comma-separated (as the table keeps them)

    def __post_init__(self) -> None:
        if not re.fullmatch(r"(\d+(,\d+)*)?", self.decision_ids):
            raise ValueError(f"decision_ids holds {self.decision_ids!r}, not ids separated by commas")

    @property
    def applied(self) -> tuple[int, ...]:
        return tuple(int(i) for i in self.decision_ids.split(",") if i)


@dataclass(frozen=True)
class Meta:
    """One setting of the store file (``schema_version``)."""

    key: str
    value: str


DECISIONS = Table("decisions", Decision)
APPLICATIONS = Table("applications", Application)
META = Table("meta", Meta)


@dataclass(frozen=True)
class SpanState:
    """Where one span stands: each listener's latest decision (the first listener first), the latest
    settlement, and the verdict."""

    recording_id: str
    start: float
    end: float
    listeners: tuple[Decision, ...]
    settlement: Decision | None
    replaced_by: Decision | None = None  # a later settlement over a stretch containing this span

    @property
    def span(self) -> tuple[str, float, float]:
        return (self.recording_id, self.start, self.end)

    @property
    def first(self) -> Decision | None:
        return self.listeners[0] if self.listeners else None

    @property
    def second(self) -> Decision | None:
        return self.listeners[1] if len(self.listeners) > 1 else None

    @property
    def annotators(self) -> set[str]:
        """Everyone who decided this span as a listener (none of them may settle it)."""
        return {d.annotator for d in self.listeners}

    @property
    def settled(self) -> bool:
        """A settlement newer than every listener's latest decision."""
        return self.settlement is not None and self.settlement.id > max((d.id for d in self.listeners), default=0)

    @property
    def disagreement(self) -> bool:
        """Some listeners' latest decisions differ (settled or not)."""
        return any(not self.listeners[0].agrees_with(d) for d in self.listeners[1:])

    @property
    def conflict(self) -> bool:
        """Listeners disagree and no later settlement settles it (on this span or one containing it)."""
        return self.disagreement and not self.settled and self.replaced_by is None

    @property
    def effective(self) -> Decision | None:
        """The decision that applies on this span (None while in conflict or undecided, and when a
        settlement over a containing stretch replaced it: that one applies there)."""
        if self.replaced_by is not None:
            return None
        if self.settled:
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
                (mode,) = connection.execute("PRAGMA journal_mode=WAL").fetchone()
                connection.executescript(_SCHEMA)
                connection.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                (version,) = read(connection, self.path, META, "key = 'schema_version'")
            except sqlite3.DatabaseError as error:
                raise unreadable(self.path, error) from None
        if str(mode).lower() != "wal":
            raise InputError(
                self.path,
                f"could not switch the decision store to WAL mode (got {mode!r}); it must live on a local disk",
            )
        if version.value != str(SCHEMA_VERSION):
            raise InputError(
                self.path, f"decision store schema version {version.value}; this toolkit reads version {SCHEMA_VERSION}"
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
        seen: int | None = None,
    ) -> Decision:
        """Store one decision in its own transaction; the role and what it supersedes are decided here.

        ``duration`` (the recording's, seconds), when given, bounds the span. ``seen`` (a settlement's:
        the newest decision id its lead saw) refuses it if a newer decision lies inside the span,
        which the settlement would replace unseen.
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
        if action == CORRECT and new_text == " ".join(old_text.split()):
            action, new_text = KEEP, old_text  # a correction that changes nothing says the reference is right
        with connect(self.path) as connection, transaction(connection):
            rows = _span_rows(connection, self.path, recording_id, start, end)
            if settle and rows and annotator in span_states(rows)[0].annotators:
                raise InputError(
                    self.path,
                    f"{annotator} decided {recording_id} {start:g}-{end:g} s as a listener and cannot settle it; "
                    "another lead settles it",
                )
            if seen is not None:
                where = 'recording_id = ? AND start >= ? AND "end" <= ? AND id > ?'
                unseen = read(connection, self.path, DECISIONS, where, (recording_id, start, end, seen), "id")
                if unseen:
                    raise InputError(
                        self.path,
                        f"decision #{unseen[0].id} on {recording_id} {unseen[0].start:g}-{unseen[0].end:g} s was "
                        "saved meanwhile; look at the conflict again before settling it",
                    )
            role, supersedes = _role(rows, annotator, settle)
            return write(
                connection,
                DECISIONS,
                recording_id=recording_id,
                start=start,
                end=end,
                action=action,
                old_text=old_text,
                new_text=new_text,
                note=note.strip(),
                annotator=annotator,
                role=role,
                reference_sha256=reference_sha256,
                manifest_sha256=manifest_sha256,
                source=source,
                created_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
                supersedes=supersedes,
            )

    def decisions(self) -> list[Decision]:
        """Every decision ever stored, oldest first."""
        with connect(self.path) as connection:
            return read(connection, self.path, DECISIONS, order="id")

    def span_states(self) -> list[SpanState]:
        """One state per decided span, in recording and time order."""
        return span_states(self.decisions())

    def export(self) -> list[ExportedDecision]:
        """Every decision, oldest first, with its provenance."""
        decisions = self.decisions()
        superseded_by: dict[int, int] = {}
        latest: dict[tuple[tuple[str, float, float], str, str], Decision] = {}
        for d in decisions:  # oldest first
            chain = (d.span, d.role, d.annotator if d.role != SETTLEMENT else "")
            if chain in latest:
                superseded_by[latest[chain].id] = d.id
            latest[chain] = d
        settled_by: dict[int, int] = {}
        for state in span_states(decisions):  # a span's settlement, or one over a stretch containing it
            by = state.replaced_by or (state.settlement if state.settled else None)
            if by is not None:
                for replaced in (*state.listeners, state.settlement):
                    if replaced is not None and replaced is not by:
                        settled_by[replaced.id] = by.id
        numbers = listener_numbers(decisions)
        applied: dict[int, list[str]] = {}
        for application in self.applications():
            for decision_id in application.applied:
                applied.setdefault(decision_id, []).append(application.manifest_sha256)
        return [
            ExportedDecision(
                d,
                "superseded" if d.id in superseded_by else "current",
                superseded_by.get(d.id),
                settled_by.get(d.id),
                tuple(applied.get(d.id, [])),
                ordinal(numbers[d.id]) if d.id in numbers else d.role,
            )
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
        with connect(self.path) as connection:
            write(
                connection,
                APPLICATIONS,
                created_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
                annotator=annotator,
                out_dir=out_dir,
                previous_manifest_sha256=previous_manifest_sha256,
                manifest_sha256=manifest_sha256,
                decision_ids=",".join(str(i) for i in decision_ids),
            )

    def applications(self) -> list[Application]:
        """Every application of decisions into a reference version, oldest first."""
        with connect(self.path) as connection:
            return read(connection, self.path, APPLICATIONS, order="id")


def listener_numbers(decisions: list[Decision]) -> dict[int, int]:
    """Decision id -> its author's place among the listeners of its span (1 for the first listener,
    3 for the third, each listener's every decision there alike); settlements have none."""
    places: dict[tuple[str, float, float], dict[str, int]] = {}
    numbers: dict[int, int] = {}
    for decision in sorted(decisions, key=lambda d: d.id):
        if decision.role != SETTLEMENT:
            arrived = places.setdefault(decision.span, {})
            numbers[decision.id] = arrived.setdefault(decision.annotator, len(arrived) + 1)
    return numbers


def ordinal(number: int) -> str:
    """``first``, ``second`` ... ``tenth``, then ``11th``, ``21st``: a listener's place as a role."""
    words = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
    if 1 <= number <= len(words):
        return words[number - 1]
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def span_states(decisions: list[Decision]) -> list[SpanState]:
    """Group decisions by span: each listener's latest decision (the first listener first, then in
    the order listeners arrived) and the latest settlement."""
    listeners: dict[tuple[str, float, float], dict[str, Decision]] = {}
    settlements: dict[tuple[str, float, float], Decision] = {}
    for decision in sorted(decisions, key=lambda d: d.id):
        if decision.role == SETTLEMENT:
            settlements[decision.span] = decision
        else:  # a dict keeps insertion order: the annotator who decided first stays first
            listeners.setdefault(decision.span, {})[decision.annotator] = decision
    states = [
        SpanState(
            *span,
            tuple(sorted(listeners.get(span, {}).values(), key=lambda d: d.role != FIRST)),
            settlements.get(span),
        )
        for span in sorted(set(listeners) | set(settlements))
    ]
    settling = [s.settlement for s in states if s.settled and s.settlement is not None]
    return [replace(state, replaced_by=_replacer(state, settling)) for state in states]


def _replacer(state: SpanState, settling: list[Decision]) -> Decision | None:
    """The newest settlement in force over a stretch that contains ``state``'s span (and is not
    it), if it is newer than every decision on the span: it replaces them all."""
    latest = max(d.id for d in (*state.listeners, state.settlement) if d is not None)
    return max(
        (
            s
            for s in settling
            if s.id > latest
            and s.recording_id == state.recording_id
            and s.start <= state.start
            and state.end <= s.end
            and (s.start, s.end) != (state.start, state.end)
        ),
        key=lambda s: s.id,
        default=None,
    )


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


def _span_rows(
    connection: sqlite3.Connection, path: Path, recording_id: str, start: float, end: float
) -> list[Decision]:
    return read(
        connection, path, DECISIONS, 'recording_id = ? AND start = ? AND "end" = ?', (recording_id, start, end), "id"
    )


def _role(rows: list[Decision], annotator: str, settle: bool) -> tuple[str, int | None]:
    """The new decision's role on a span with these earlier decisions, and the decision it supersedes
    (its author's own latest in that role; a settlement supersedes the previous settlement)."""
    if settle:
        settlements = [d for d in rows if d.role == SETTLEMENT]
        return SETTLEMENT, settlements[-1].id if settlements else None
    firsts = [d for d in rows if d.role == FIRST]
    role = FIRST if not firsts or firsts[0].annotator == annotator else SECOND
    own = [d for d in rows if d.role == role and d.annotator == annotator]
    return role, own[-1].id if own else None
