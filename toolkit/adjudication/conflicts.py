"""Conflicts a lead settles before decisions are applied, and the plan of what applying would do.

Every current decision is grouped with the others whose turns it touches (each widened to its
whole turns). A group is a conflict when listeners disagree on one of its stretches, or when its
decisions do different things to the same turns (a keep and a correction of one turn, two
different corrections), which would otherwise be applied one over the other. A group of one
disagreeing stretch is a ``listeners`` conflict; anything larger is an ``overlap``, shown and
settled as one: a settlement over the union of its stretches replaces every decision inside it
(``store.SpanState.replaced_by``), so two overlapping stretches are never settled apart into two
settlements that contradict each other. Only a lead settles, never a conflict on a stretch they
decided as a listener; a settlement bars nobody, so a lead may always settle again over their
own or another lead's settlement, and a lead who listened to nothing can always reach Apply.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.adjudication.context import Adjudication
from toolkit.adjudication.spans import extent
from toolkit.adjudication.store import KEEP, Decision, SpanState
from toolkit.adjudication.users import Login
from toolkit.core.errors import InputError

LISTENERS, OVERLAP = "listeners", "overlap"


@dataclass(frozen=True)
class Conflict:
    """Decisions a lead must settle before applying: listeners who disagree on one stretch
    (``listeners``), or decisions on stretches touching the same turns where listeners disagree or
    outcomes differ (``overlap``). A settlement is recorded on ``start``-``end``, which contains
    every stretch of ``decisions``; ``listeners`` decided one of them as listeners."""

    kind: str
    recording_id: str
    start: float
    end: float
    decisions: tuple[Decision, ...]
    listeners: frozenset[str]

    def may_settle(self, lead: Login) -> bool:
        """A lead who decided none of its stretches as a listener."""
        return lead.is_lead and lead.name not in self.listeners

    def describe(self) -> str:
        sides = ", ".join(f"#{d.id} {d.annotator}: {d.outcome[0]}" for d in self.decisions)
        return f"{self.recording_id} {self.start:g}-{self.end:g} s ({sides})"


@dataclass(frozen=True)
class Plan:
    """What applying would do now: decisions that go in, stale ones left out, and blocking conflicts."""

    applicable: list[Decision]
    stale: list[Decision]
    conflicts: list[Conflict]


@dataclass(frozen=True)
class _Part:
    """One span's share of a group: its disagreeing listeners, or its one effective decision."""

    state: SpanState
    decisions: tuple[Decision, ...]
    disputed: bool


def plan(adjudication: Adjudication) -> Plan:
    """Effective decisions split into applicable and stale, and the conflicts that block applying."""
    parts: list[_Part] = []
    stale: list[Decision] = []
    states = adjudication.store.span_states()
    for state in states:
        if state.conflict:
            if any(not adjudication.is_stale(d) for d in state.listeners):
                parts.append(_Part(state, state.listeners, True))
            continue
        decision = state.effective
        if decision is not None and adjudication.is_stale(decision):
            stale.append(decision)
        elif decision is not None:
            parts.append(_Part(state, (decision,), False))
    applicable: list[Decision] = []
    conflicts: list[Conflict] = []
    for group in _touching(adjudication, parts):
        decisions = [d for part in group for d in part.decisions]
        if any(part.disputed for part in group) or (len(group) > 1 and not _compatible(decisions)):
            kind = LISTENERS if len(group) == 1 else OVERLAP
            start, end = min(d.start for d in decisions), max(d.end for d in decisions)
            on_it = [st for st in states if st.span == (decisions[0].recording_id, start, end)]  # the store checks it
            listeners = frozenset(name for st in on_it + [part.state for part in group] for name in st.annotators)
            conflicts.append(Conflict(kind, decisions[0].recording_id, start, end, tuple(decisions), listeners))
        else:
            applicable.extend(decisions)
    conflicts.sort(key=lambda c: (c.recording_id, c.start, c.end))
    return Plan(sorted(applicable, key=lambda d: (d.recording_id, d.start, d.id)), stale, conflicts)


def _touching(adjudication: Adjudication, parts: list[_Part]) -> list[list[_Part]]:
    """Parts grouped where the turns they change overlap (each widened to its whole turns)."""
    groups: list[list[_Part]] = []
    reach: list[tuple[str, float]] = []  # per group: recording and where its turns end
    for part in sorted(parts, key=lambda p: (p.state.recording_id, *_reach(adjudication, p), p.decisions[0].id)):
        lo, hi = _reach(adjudication, part)
        if groups and reach[-1][0] == part.state.recording_id and lo < reach[-1][1]:
            groups[-1].append(part)
            reach[-1] = (part.state.recording_id, max(reach[-1][1], hi))
        else:
            groups.append([part])
            reach.append((part.state.recording_id, hi))
    return groups


def _reach(adjudication: Adjudication, part: _Part) -> tuple[float, float]:
    state = part.state
    return extent(adjudication.reference(state.recording_id), state.start, state.end)


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
    """Record a lead's settlement of ``conflict`` (still open as shown, and none of its stretches
    decided by the lead as a listener) over its whole stretch."""
    if not lead.is_lead:
        raise InputError(None, f"{lead.name} is {lead.role}: only a lead settles conflicts")
    if not conflict.may_settle(lead):
        raise InputError(
            None,
            f"{lead.name} decided part of {conflict.describe()} as a listener; another lead settles it",
        )
    seen = max((d.id for d in adjudication.store.decisions()), default=0)  # then nothing newer may be replaced
    if _identity(conflict) not in {_identity(c) for c in plan(adjudication).conflicts}:
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
        seen=seen,
        source="settlement of " + ", ".join(f"#{d.id}" for d in conflict.decisions),
    )


def _identity(conflict: Conflict) -> tuple[str, str, float, float, tuple[int, ...]]:
    """What the lead saw: a decision added or settled meanwhile makes it another conflict."""
    return (conflict.kind, conflict.recording_id, conflict.start, conflict.end, tuple(d.id for d in conflict.decisions))
