"""Settling never deadlocks: overlapping stretches are one conflict, a settlement bars nobody, and from
any history of decisions a lead who listened to nothing reaches Apply; nothing is ever lost.

Everything runs on the real store (SQLite in a temporary folder), a real frozen manifest and a real
TextGrid reference: demo04's turns around 20-32 s (``ablate demo``'s corpus, written here by hand
so the test needs no speech synthesis).
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.adjudication.apply import apply_decisions
from toolkit.adjudication.conflicts import OVERLAP, Conflict, plan, settle
from toolkit.adjudication.context import DECIDED, Adjudication, open_experiment
from toolkit.adjudication.store import ACTIONS, CORRECT, KEEP, UNRESOLVED, DecisionStore
from toolkit.adjudication.users import ANNOTATOR, LEAD, Login
from toolkit.core.errors import InputError
from toolkit.core.transcripts import Interval, Reference, Utterance
from toolkit.corpus.freeze import freeze
from toolkit.formats import write_reference_textgrid

ROOT = Path(__file__).resolve().parents[1]
DURATION, RATE = 33.0, 16000
TURNS = [  # demo04 between 20 and 32 s, as the demo corpus builds it
    (20.244688, 20.550062, "Sim."),
    (21.519875, 24.60675, "Um real e noventa centavos, é quanto custa o pão."),
    (25.554562, 28.328937, "A criança não tem alergia a nenhum medicamento."),
    (29.109687, 31.802312, "O paciente nega tabagismo e nega etilismo."),
]
WIDE, NARROW = (21.52, 24.61), (21.84, 22.0)


@pytest.fixture(scope="module")
def demo04(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An experiment whose one recording is demo04's stretch of turns (silent audio: nothing decodes it)."""
    exp = tmp_path_factory.mktemp("demo04") / "exp"
    corpus = exp / "corpus"
    (corpus / "audio").mkdir(parents=True)
    (corpus / "refs").mkdir()
    sf.write(corpus / "audio" / "demo04.wav", np.zeros(int(DURATION * RATE), np.float32), RATE, subtype="PCM_16")
    reference = Reference(
        "demo04",
        [Utterance(s, e, text, "speaker-c") for s, e, text in TURNS],
        speech=[Interval(14.840687, 19.318, "nonspeech")],
    )
    write_reference_textgrid(reference, corpus / "refs" / "demo04.TextGrid", DURATION)
    (corpus / "splits.csv").write_text("id,split\ndemo04,holdout\n", encoding="utf-8")
    freeze(corpus / "audio", corpus / "refs", corpus / "manifest.json", splits_csv=corpus / "splits.csv")
    shutil.copyfile(ROOT / "experiments" / "demo" / "experiment.toml", exp / "experiment.toml")
    return exp


def _fresh(demo04: Path, folder: Path) -> Adjudication:
    """The experiment with its own empty store in ``folder`` (one per test or hypothesis example)."""
    return replace(open_experiment(demo04), store=DecisionStore(folder / "adjudication.sqlite"))


def _two_disagreements(adjudication: Adjudication) -> None:
    """The demo afternoon: Ana and Beto disagree on the whole turn and on a word inside it."""
    for (start, end), ana, beto in ((WIDE, KEEP, UNRESOLVED), (NARROW, CORRECT, KEEP)):
        text = "Um real e noventa centavos, é quanto custa o pão?" if ana == CORRECT else ""
        adjudication.decide(recording_id="demo04", start=start, end=end, action=ana, annotator="ana", new_text=text)
        adjudication.decide(recording_id="demo04", start=start, end=end, action=beto, annotator="beto")


def _settle_all(adjudication: Adjudication, lead: Login, choose) -> list[Conflict]:  # noqa: ANN001
    """The lead settles every open conflict in turn (``choose`` gives the action); returns those settled."""
    settled = []
    for _ in range(10):
        conflicts = plan(adjudication).conflicts
        if not conflicts:
            return settled
        settle(adjudication, conflicts[0], lead, choose(conflicts[0]))
        settled.append(conflicts[0])
    raise AssertionError(f"still open after 10 settlements: {plan(adjudication).conflicts}")


def test_demo04_one_lead_settles_the_overlapping_stretches_and_applies(demo04, tmp_path):
    adjudication = _fresh(demo04, tmp_path)
    _two_disagreements(adjudication)
    lia = Login("lia", LEAD)  # the team's only lead
    # As on the demo: 'Não resolvido' for the whole turn, 'Manter' for the word inside it.
    [conflict] = _settle_all(adjudication, lia, lambda c: UNRESOLVED if (c.start, c.end) == WIDE else KEEP)
    # The overlap was shown as one conflict before anything was saved, and one settlement took it.
    assert (conflict.kind, conflict.start, conflict.end) == (OVERLAP, *WIDE)
    assert conflict.listeners == {"ana", "beto"} and len(conflict.decisions) == 4
    todo = plan(adjudication)
    assert todo.conflicts == [] and [d.action for d in todo.applicable] == [UNRESOLVED]
    applied = apply_decisions(adjudication, "lia", tmp_path / "v2")
    new = applied.manifest.entry("demo04").load_reference()
    assert [(i.start, i.end) for i in new.unresolved] == [WIDE]
    assert [u.text for u in new.utterances] == [text for _, _, text in TURNS]  # nothing else changed
    rows = {row.decision.id: row for row in adjudication.store.export()}
    assert len(rows) == 5  # the four listeners' decisions are kept, each read as settled by the lead
    assert {row.settled_by for row in rows.values() if row.decision.role != "settlement"} == {applied.applied[0].id}
    assert adjudication.item_statuses([("demo04", *NARROW)]) == [DECIDED]


def test_a_store_where_the_lead_settled_the_two_apart_is_no_longer_stuck(demo04, tmp_path):
    adjudication = _fresh(demo04, tmp_path)
    _two_disagreements(adjudication)
    for (start, end), action in ((WIDE, UNRESOLVED), (NARROW, KEEP)):  # as the previous version let her
        adjudication.decide(recording_id="demo04", start=start, end=end, action=action, annotator="lia", settle=True)
    [conflict] = plan(adjudication).conflicts  # her two settlements contradict each other on one turn
    assert conflict.kind == OVERLAP and {d.annotator for d in conflict.decisions} == {"lia"}
    assert conflict.may_settle(Login("lia", LEAD))  # a settlement bars nobody: she settles it herself
    settle(adjudication, conflict, Login("lia", LEAD), UNRESOLVED)
    assert plan(adjudication).conflicts == []
    assert apply_decisions(adjudication, "lia", tmp_path / "v2").manifest.entry("demo04").load_reference().unresolved


def test_a_settlement_never_replaces_a_decision_its_lead_did_not_see(demo04, tmp_path):
    adjudication = _fresh(demo04, tmp_path)
    _two_disagreements(adjudication)
    [shown] = plan(adjudication).conflicts
    seen = max(d.id for d in adjudication.store.decisions())
    late = adjudication.decide(recording_id="demo04", start=22.5, end=23.0, action=KEEP, annotator="carla")
    with pytest.raises(InputError, match="no longer open"):  # carla's keep joined the conflict on the page
        settle(adjudication, shown, Login("lia", LEAD), UNRESOLVED)
    with pytest.raises(InputError, match=rf"decision #{late.id} on demo04 22.5-23 s was saved meanwhile"):
        adjudication.decide(
            recording_id="demo04", start=21.52, end=24.61, action=UNRESOLVED, annotator="lia", settle=True, seen=seen
        )
    assert [d.role for d in adjudication.store.decisions()].count("settlement") == 0


def test_a_lead_who_listened_still_cannot_settle_and_is_told_why(demo04, tmp_path):
    adjudication = _fresh(demo04, tmp_path)
    adjudication.decide(recording_id="demo04", start=21.52, end=24.61, action=KEEP, annotator="lia")
    adjudication.decide(recording_id="demo04", start=21.84, end=22.0, action=UNRESOLVED, annotator="beto")
    [conflict] = plan(adjudication).conflicts
    with pytest.raises(InputError, match="lia decided part of .* as a listener; another lead settles it"):
        settle(adjudication, conflict, Login("lia", LEAD), KEEP)
    settle(adjudication, conflict, Login("mara", LEAD), KEEP)
    assert plan(adjudication).conflicts == []


# Stretch edges: turn edges, points inside turns, gaps; so stretches overlap often and in every way.
EDGES = (20.0, 20.3, 21.0, 21.52, 21.84, 22.0, 23.0, 24.61, 25.0, 26.5, 28.33, 29.5, 31.0, 32.0)
TEXTS = ("Um real.", "Dois reais e noventa.", "Sim.")


@settings(max_examples=40, deadline=None)
@given(data=st.data(), leads=st.integers(1, 3), annotators=st.integers(1, 4))
def test_apply_is_always_reachable_and_nothing_is_lost(demo04, data, leads, annotators):
    """Random decisions by 1-3 leads and 1-4 annotators on overlapping stretches, with settlements
    between them; then the first lead (who never listens) settles whatever is open, each time a
    settlement the rules allow, and Apply is enabled after finitely many and writes a version."""
    team = [Login(n, LEAD) for n in ("lia", "lara", "lena")[:leads]]
    team += [Login(n, ANNOTATOR) for n in ("ana", "beto", "carla", "davi")[:annotators]]
    listeners = team[1:]  # every lead but lia may also listen
    with tempfile.TemporaryDirectory() as folder:
        adjudication = _fresh(demo04, Path(folder))
        history = []
        for _ in range(data.draw(st.integers(1, 14), "steps")):
            conflicts = plan(adjudication).conflicts
            allowed = [(c, who) for c in conflicts for who in team if c.may_settle(who)]
            if allowed and data.draw(st.booleans(), "settle now"):
                conflict, lead = data.draw(st.sampled_from(allowed), "conflict and lead")
                settle(adjudication, conflict, lead, *_outcome(data, conflict))
            else:
                who = data.draw(st.sampled_from(listeners), "listener") if listeners else None
                if who is None:
                    continue
                start, end = sorted(data.draw(st.lists(st.sampled_from(EDGES), min_size=2, max_size=2, unique=True)))
                action = data.draw(st.sampled_from(ACTIONS), "action")
                text = data.draw(st.sampled_from(TEXTS), "text") if action == CORRECT else ""
                adjudication.decide(
                    recording_id="demo04", start=start, end=end, action=action, annotator=who.name, new_text=text
                )
            history = _append_only(adjudication.store, history)
        lia = team[0]
        for _ in range(len(history) + 1):  # each settlement replaces at least one group of decisions
            todo = plan(adjudication)
            if not todo.conflicts:
                break
            assert all(c.may_settle(lia) for c in todo.conflicts)
            settle(adjudication, todo.conflicts[0], lia, *_outcome(data, todo.conflicts[0]))
            history = _append_only(adjudication.store, history)
        todo = plan(adjudication)
        assert todo.conflicts == [] and todo.applicable  # the page's Apply button is enabled
        applied = apply_decisions(adjudication, lia.name, Path(folder) / "version")
        assert (Path(folder) / "version" / "manifest.json").is_file()
        _accounted_for(adjudication.store, {d.id for d in applied.applied})


def _outcome(data: st.DataObject, conflict: Conflict) -> tuple[str, str]:
    """A side of the conflict or another decision, as the settle form offers them."""
    sides = [d.outcome for d in conflict.decisions] + [(a, "") for a in ACTIONS if a != CORRECT]
    return data.draw(st.sampled_from(sides), "settle as")


def _append_only(store: DecisionStore, before: list) -> list:  # noqa: ANN001
    """Every decision stored so far is still there, unchanged, and in its place."""
    now = store.decisions()
    assert now[: len(before)] == before
    return now


def _accounted_for(store: DecisionStore, applied: set[int]) -> None:
    """Every decision is applied, superseded by its author, settled (or replaced) by a settlement, or
    agrees with the applied decision of its own stretch: none is silently dropped."""
    rows = store.export()
    applied_spans = {row.decision.span: row.decision for row in rows if row.decision.id in applied}
    for row in rows:
        d = row.decision
        same = applied_spans.get(d.span)
        assert (
            d.id in applied
            or row.status == "superseded"
            or row.settled_by is not None
            or (same is not None and same.agrees_with(d))
        ), f"decision #{d.id} ({d.annotator} {d.role} {d.action} {d.start}-{d.end}) is neither applied nor replaced"
