"""Conflicts a lead settles before decisions are applied, and the plan of what applying would do.

Two kinds: listeners who disagree on one stretch (``listeners``), and decisions on different
stretches that touch the same turns with different outcomes (``overlap``: a keep and a
correction of one turn, two different corrections), which would otherwise be applied one over
the other without anyone noticing. Only a lead settles, never a conflict their own decision is
part of; a settlement over the union of an overlap's stretches replaces the decisions inside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.adjudication.context import Adjudication
from toolkit.adjudication.spans import extent
from toolkit.adjudication.store import KEEP, SETTLEMENT, Decision
from toolkit.adjudication.users import Login
from toolkit.core.errors import InputError

LISTENERS, OVERLAP = "listeners", "overlap"


@dataclass(frozen=True)
class Conflict:
    """Decisions a lead must settle before applying: listeners who disagree on one stretch
    (``listeners``), or decisions on stretches touching the same turns with different outcomes
    (``overlap``). A settlement is recorded on ``start``-``end``."""

    kind: str
    recording_id: str
    start: float
    end: float
    decisions: tuple[Decision, ...]

    @property
    def annotators(self) -> set[str]:
        """Everyone whose decision is part of the conflict (none of them may settle it)."""
        return {d.annotator for d in self.decisions}

    def describe(self) -> str:
        sides = ", ".join(f"#{d.id} {d.annotator}: {d.outcome[0]}" for d in self.decisions)
        return f"{self.recording_id} {self.start:g}-{self.end:g} s ({sides})"


@dataclass(frozen=True)
class Plan:
    """What applying would do now: decisions that go in, stale ones left out, and blocking conflicts."""

    applicable: list[Decision]
    stale: list[Decision]
    conflicts: list[Conflict]


def plan(adjudication: Adjudication) -> Plan:
    """Effective decisions split into applicable and stale, and the conflicts that block applying."""
    effective: list[Decision] = []
    stale: list[Decision] = []
    conflicts: list[Conflict] = []
    for state in adjudication.store.span_states():
        if state.conflict:
            current = tuple(d for d in state.listeners if not adjudication.is_stale(d))
            if current:
                conflicts.append(Conflict(LISTENERS, state.recording_id, state.start, state.end, state.listeners))
            continue
        decision = state.effective
        if decision is not None:
            (stale if adjudication.is_stale(decision) else effective).append(decision)
    effective = _without_settled(effective)
    applicable: list[Decision] = []
    for group in _touching(adjudication, effective):
        if len(group) > 1 and not _compatible(group):
            start, end = min(d.start for d in group), max(d.end for d in group)
            conflicts.append(Conflict(OVERLAP, group[0].recording_id, start, end, tuple(group)))
        else:
            applicable.extend(group)
    conflicts.sort(key=lambda c: (c.recording_id, c.start, c.end))
    return Plan(sorted(applicable, key=lambda d: (d.recording_id, d.start, d.id)), stale, conflicts)


def _without_settled(decisions: list[Decision]) -> list[Decision]:
    """Drop decisions that a later settlement over a stretch containing theirs has replaced."""
    settlements = [d for d in decisions if d.role == SETTLEMENT]
    return [
        d
        for d in decisions
        if not any(
            s.id > d.id and s.recording_id == d.recording_id and s.start <= d.start and d.end <= s.end
            for s in settlements
        )
    ]


def _touching(adjudication: Adjudication, decisions: list[Decision]) -> list[list[Decision]]:
    """Decisions grouped where the turns they change overlap (each widened to its whole turns)."""
    groups: list[list[Decision]] = []
    reach: list[tuple[str, float]] = []  # per group: recording and where its turns end
    for decision in sorted(decisions, key=lambda d: (d.recording_id, *_reach(adjudication, d), d.id)):
        lo, hi = _reach(adjudication, decision)
        if groups and reach[-1][0] == decision.recording_id and lo < reach[-1][1]:
            groups[-1].append(decision)
            reach[-1] = (decision.recording_id, max(reach[-1][1], hi))
        else:
            groups.append([decision])
            reach.append((decision.recording_id, hi))
    return groups


def _reach(adjudication: Adjudication, decision: Decision) -> tuple[float, float]:
    return extent(adjudication.reference(decision.recording_id), decision.start, decision.end)


def _compatible(group: list[Decision]) -> bool:
    """Keeps never contradict each other; otherwise every decision must do the same to the same text."""
    outcomes = {d.outcome for d in group}
    return outcomes == {(KEEP, "")} or (len(outcomes) == 1 and len({d.old_text for d in group}) == 1)


def settle(
    adjudication: Adjudication,
    conflict: Conflict,
    lead: Login,
    action: str,
    new_text: str = "",
    note: str = "",
) -> Decision:
    """Record a lead's settlement of ``conflict`` (still open, and not the lead's own)."""
    if not lead.is_lead:
        raise InputError(None, f"{lead.name} is {lead.role}: only a lead settles conflicts")
    if lead.name in conflict.annotators:
        raise InputError(
            None,
            f"{lead.name} decided part of {conflict.describe()}; another lead settles it",
        )
    still = {(c.kind, c.recording_id, c.start, c.end) for c in plan(adjudication).conflicts}
    if (conflict.kind, conflict.recording_id, conflict.start, conflict.end) not in still:
        raise InputError(None, f"{conflict.describe()} is no longer open (settled or changed meanwhile)")
    return adjudication.decide(
        recording_id=conflict.recording_id,
        start=conflict.start,
        end=conflict.end,
        action=action,
        annotator=lead.name,
        new_text=new_text,
        note=note,
        settle=True,
        source="settlement of " + ", ".join(f"#{d.id}" for d in conflict.decisions),
    )
