"""Who may see model output for which recording: the one rule every page, route and export of the app asks.

A listener's blind transcription of a recording is evidence only while they have seen nothing a
recognizer wrote for it. So an annotator sees no model output for a recording (an arm's words, a
queue row, a score, an agreement figure) until their blind pass of it is closed: they finished it
(every stretch transcribed, then *Concluir*), or a lead excused them from it. A transcriber never
sees model output; a lead always does (a lead runs the team and settles what others decided).

Closing a pass is a row of ``blind_passes`` in the experiment's store file (who, which recording,
finished or excused, by whom, when); triggers refuse any change or deletion, so a pass once
closed stays closed, and a closed pass takes no more blind segments.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from toolkit.adjudication.blind import TranscriptStore
from toolkit.adjudication.passes import EXCUSED, FINISHED, PASSES, SCHEMA, PassClosed
from toolkit.adjudication.rows import connect, read, transaction, write
from toolkit.adjudication.stretches import Stretch
from toolkit.adjudication.users import LEAD, TRANSCRIBER, Login
from toolkit.core.errors import InputError

NOT_STARTED, IN_PROGRESS = "not_started", "in_progress"
STAGES = (NOT_STARTED, IN_PROGRESS, FINISHED, EXCUSED)


@dataclass(frozen=True)
class Stage:
    """Where one person stands on one recording's blind pass (``by``/``at``: who closed it and when)."""

    person: str
    recording_id: str
    stage: str  # one of STAGES
    segments: int
    by: str = ""
    at: str = ""


def may_see_model_output(user: Login, recording_id: str, closed: Iterable[PassClosed]) -> bool:
    """The rule: a lead always, a transcriber never, anyone else once their blind pass of the recording is closed."""
    if user.role == LEAD:
        return True
    if user.role == TRANSCRIBER:
        return False
    return any(c.person == user.name and c.recording_id == recording_id for c in closed)


class BlindPasses:
    """The ``blind_passes`` table of the experiment's store file: closing passes, and reading the rule off it."""

    def __init__(self, store_path: str | Path) -> None:
        self.path = Path(store_path)
        with connect(self.path) as connection:
            connection.executescript(SCHEMA)

    def closed(self) -> list[PassClosed]:
        """Every closed pass, oldest first."""
        with connect(self.path) as connection:
            return read(connection, self.path, PASSES, order="id")

    def visible(self, user: Login, recordings: Iterable[str]) -> set[str]:
        """The recordings among ``recordings`` whose model output ``user`` may see now."""
        closed = self.closed()
        return {r for r in recordings if may_see_model_output(user, r, closed)}

    def is_closed(self, person: str, recording_id: str) -> bool:
        return any(c.person == person and c.recording_id == recording_id for c in self.closed())

    def finish(
        self, recording_id: str, person: Login, transcripts: TranscriptStore, stretches: list[Stretch]
    ) -> PassClosed:
        """Close ``person``'s own pass as finished: refused while a stretch is left untranscribed."""
        left = transcripts.next_untranscribed(recording_id, person.name, stretches)
        if left is not None:
            raise InputError(
                self.path,
                f"the blind pass of '{recording_id}' is not finished: {left.start:g}-{left.end:g} s is not transcribed",
            )
        return self._close(recording_id, person.name, FINISHED, person.name)

    def excuse(self, recording_id: str, person: str, lead: Login) -> PassClosed:
        """A lead excuses ``person`` from the blind pass of a recording (they may then see its model output)."""
        if not lead.is_lead:
            raise InputError(self.path, f"only a lead excuses someone from a blind pass, not '{lead.name}'")
        return self._close(recording_id, person, EXCUSED, lead.name)

    def _close(self, recording_id: str, person: str, kind: str, by: str) -> PassClosed:
        person = " ".join(person.split())
        if not person:
            raise InputError(self.path, "a blind pass needs the person's name")
        with connect(self.path) as connection, transaction(connection):
            for done in read(connection, self.path, PASSES, "recording_id = ? AND person = ?", (recording_id, person)):
                raise InputError(
                    self.path, f"{person}'s blind pass of '{recording_id}' is already closed ({done.kind} by {done.by})"
                )
            return write(
                connection,
                PASSES,
                recording_id=recording_id,
                person=person,
                kind=kind,
                by=by,
                created_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
            )

    def stages(self, transcripts: TranscriptStore, people: Iterable[str], recordings: Iterable[str]) -> list[Stage]:
        """Each person's stage on each recording (a lead's view of the team), people in the order given."""
        closed = {(c.person, c.recording_id): c for c in self.closed()}
        rows = []
        for recording in recordings:
            counts = transcripts.segment_counts(recording)
            for person in people:
                done = closed.get((person, recording))
                segments = counts.get(person, 0)
                if done is not None:
                    rows.append(Stage(person, recording, done.kind, segments, done.by, done.created_at))
                else:
                    rows.append(Stage(person, recording, IN_PROGRESS if segments else NOT_STARTED, segments))
        return rows
