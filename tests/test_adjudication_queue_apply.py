"""The review queue from a real (hand-written, really scored) run folder, conflicts a lead settles, and
applying decisions into a new reference version."""

from __future__ import annotations

import json
import os

import pytest
from adjudication_fixture import built, exp, run_folder  # noqa: F401 - fixtures

from toolkit.adjudication.apply import apply_decisions
from toolkit.adjudication.conflicts import LISTENERS, OVERLAP, plan, settle
from toolkit.adjudication.context import CONFLICT, DECIDED, OPEN, STALE, open_experiment
from toolkit.adjudication.queue import build_queue
from toolkit.adjudication.spans import correctable_speaker
from toolkit.adjudication.users import ANNOTATOR, LEAD, Login
from toolkit.cli import main
from toolkit.core.errors import InputError
from toolkit.core.transcripts import Reference, Utterance
from toolkit.corpus.manifest import load_manifest


def test_queue_ranks_negation_flip_above_plain_substitution(exp):
    adjudication = open_experiment(exp)
    queue = build_queue(run_folder(exp), adjudication.references())
    kinds = [(item.kind, item.detail) for item in queue.items]
    negation = kinds.index(("critical", "negation"))
    substitution = next(
        i
        for i, item in enumerate(queue.items)
        if item.kind == "disagreement" and ("vad", "mercador") in item.hypotheses
    )
    assert negation == 0 < substitution
    regressions = [
        instance
        for arm in ("vad", "windows")
        for instance in json.loads(run_folder(exp).explanation(arm).read_text(encoding="utf-8"))["instances"]
        if instance["kind"] == "regression"
    ]
    assert queue.counts() == {
        "critical": 1,
        "regression": 3,
        "disagreement": 3,
        "seam": 2,
        "nonspeech_text": 1,
        "unresolved": 2,
    }
    assert len(regressions) >= 3  # overlapping ones of one cause are one place to listen
    assert [i.kind for i in queue.items] == sorted(
        (i.kind for i in queue.items),
        key=["critical", "regression", "disagreement", "seam", "nonspeech_text", "unresolved"].index,
    )
    assert {i.recording_id for i in queue.filtered(recordings=["reuniao"])} == {"reuniao"}
    assert all("windows" in i.arms for i in queue.filtered(arms=["windows"]))
    assert [i.kind for i in queue.filtered(kinds=["unresolved"])] == ["unresolved", "unresolved"]
    assert queue.problems == []


def test_missing_hypothesis_files_are_named_not_fatal(exp):
    (run_folder(exp).arm_output("vad", "reuniao")).unlink()
    (run_folder(exp).disagreements("vad", "reuniao")).unlink()
    queue = build_queue(run_folder(exp))
    assert any("outputs/vad/reuniao.json: missing" in p for p in queue.problems)
    assert any("disagreements/vad/reuniao.json: missing" in p for p in queue.problems)
    assert queue.counts()["critical"] == 1


def test_apply_writes_a_new_version_and_old_stays_readable(exp, tmp_path, capsys):
    adjudication = open_experiment(exp)
    old_sha = adjudication.manifest.sha256
    adjudication.decide(
        recording_id="entrevista",
        start=14.5,
        end=14.9,
        action="correct",
        annotator="ana",
        new_text="a casa fica perto do mercadão",
    )
    adjudication.decide(recording_id="entrevista", start=16.0, end=19.0, action="nonspeech", annotator="ana")
    adjudication.decide(
        recording_id="reuniao", start=6.5, end=7.0, action="unresolved", annotator="ana", note="sobreposição"
    )
    adjudication.decide(recording_id="entrevista", start=1.0, end=4.0, action="keep", annotator="ana")
    out = tmp_path / "refs-v2"
    assert main(["reference", "apply", str(exp), "--out", str(out), "--by", "ana"]) == 0
    printed = capsys.readouterr().out
    assert "applied 4 decisions to 2 recordings" in printed
    new = load_manifest(out / "manifest.json")
    assert new.sha256 != old_sha and not new.verify()
    entrevista = new.entry("entrevista").load_reference()
    assert [u.text for u in entrevista.utterances][-1] == "a casa fica perto do mercadão"
    assert (entrevista.utterances[-1].start, entrevista.utterances[-1].end) == (12.0, 15.0)
    assert [(i.start, i.end, i.label) for i in entrevista.nonspeech()] == [(16.0, 19.0, "nonspeech")]
    assert entrevista.names == ["João", "Maria"]
    reuniao = new.entry("reuniao").load_reference()
    assert [(i.start, i.end, i.label) for i in reuniao.unresolved] == [
        (6.5, 7.0, "sobreposição"),
        (10.0, 11.0, "inaudível"),
    ]
    assert [u.text for u in reuniao.utterances] == ["a Maria chegou cedo hoje", "nós vamos votar amanhã"]
    record = json.loads((out / "adjudication.json").read_text())
    assert record["previous_manifest"]["sha256"] == old_sha and len(record["decisions"]) == 4
    assert not load_manifest(exp / "corpus" / "manifest.json").verify()  # the old version is untouched
    assert {row.applied_in for row in adjudication.store.export()} == {(new.sha256,)}

    # Decisions made on the old version are stale against the new one: shown, never applied.
    newer = open_experiment(exp, out / "manifest.json")
    states = newer.store.span_states()
    assert {newer.status(s) for s in states if s.recording_id == "entrevista"} == {STALE}
    assert newer.status(next(s for s in states if s.recording_id == "reuniao")) == STALE
    with pytest.raises(
        InputError, match=r"no decisions to apply on this reference version \(4 were made on another version\)"
    ):
        apply_decisions(newer, "ana", tmp_path / "refs-v3")
    assert not (tmp_path / "refs-v3").exists()


def test_conflict_blocks_apply_until_settled(exp, tmp_path, capsys):
    adjudication = open_experiment(exp)
    adjudication.decide(recording_id="entrevista", start=14.5, end=14.9, action="keep", annotator="ana")
    adjudication.decide(
        recording_id="entrevista",
        start=14.5,
        end=14.9,
        action="correct",
        annotator="beto",
        new_text="a casa fica perto do mercador",
    )
    [state] = adjudication.store.span_states()
    assert adjudication.status(state) == CONFLICT and len(plan(adjudication).conflicts) == 1
    out = tmp_path / "v2"
    assert main(["reference", "apply", str(exp), "--out", str(out)]) == 2
    assert "1 conflict(s) must be settled by a lead before applying" in capsys.readouterr().err
    assert not out.exists()
    [conflict] = plan(adjudication).conflicts
    settle(adjudication, conflict, Login("carla", LEAD), "keep")
    [state] = adjudication.store.span_states()
    assert adjudication.status(state) == DECIDED
    assert main(["reference", "apply", str(exp), "--out", str(out)]) == 0
    assert (
        load_manifest(out / "manifest.json").entry("entrevista").load_reference().utterances[-1].text
        == "a casa fica perto do mercado"
    )


def test_overlapping_decisions_with_different_outcomes_are_a_conflict_a_lead_settles(exp, tmp_path):
    adjudication = open_experiment(exp)
    # a keep of the whole turn (the negation item) and a correction of a word inside it (a disagreement item)
    adjudication.decide(recording_id="entrevista", start=1.0, end=4.0, action="keep", annotator="ana")
    adjudication.decide(
        recording_id="entrevista",
        start=1.43,
        end=1.77,
        action="correct",
        annotator="beto",
        new_text="eu não sei se o João vem mesmo",
    )
    [conflict] = plan(adjudication).conflicts
    assert (conflict.kind, conflict.start, conflict.end) == (OVERLAP, 1.0, 4.0)
    assert conflict.listeners == {"ana", "beto"}
    with pytest.raises(InputError, match="must be settled by a lead"):
        apply_decisions(adjudication, "lia")
    settle(adjudication, conflict, Login("lia", LEAD), "correct", new_text="eu não sei se o João vem mesmo")
    assert plan(adjudication).conflicts == []
    result = apply_decisions(adjudication, "lia")
    reference = result.manifest.entry("entrevista").load_reference()
    assert reference.utterances[0].text == "eu não sei se o João vem mesmo"
    assert [d.annotator for d in result.applied] == ["lia"]


def test_agreeing_decisions_on_one_turn_are_applied_once(exp):
    adjudication = open_experiment(exp)
    for start, end, who in ((12.0, 15.0, "ana"), (14.5, 14.9, "beto")):
        adjudication.decide(
            recording_id="entrevista",
            start=start,
            end=end,
            action="correct",
            annotator=who,
            new_text="a casa fica perto do mercadão",
        )
    assert plan(adjudication).conflicts == []
    result = apply_decisions(adjudication, "lia")
    assert [u.text for u in result.manifest.entry("entrevista").load_reference().utterances][-1] == (
        "a casa fica perto do mercadão"
    )


def test_only_a_lead_settles_and_never_a_conflict_of_their_own(exp):
    adjudication = open_experiment(exp)
    adjudication.decide(recording_id="entrevista", start=14.5, end=14.9, action="keep", annotator="lia")
    adjudication.decide(recording_id="entrevista", start=14.5, end=14.9, action="nonspeech", annotator="beto")
    [conflict] = plan(adjudication).conflicts
    assert conflict.kind == LISTENERS
    with pytest.raises(InputError, match="only a lead settles conflicts"):
        settle(adjudication, conflict, Login("carla", ANNOTATOR), "keep")
    with pytest.raises(InputError, match="lia decided part of .*as a listener; another lead settles it"):
        settle(adjudication, conflict, Login("lia", LEAD), "keep")
    with pytest.raises(InputError, match="cannot settle it"):  # the store refuses it too, whoever calls
        adjudication.decide(
            recording_id="entrevista", start=14.5, end=14.9, action="keep", annotator="beto", settle=True
        )
    settle(adjudication, conflict, Login("mara", LEAD), "keep")
    with pytest.raises(InputError, match="no longer open"):
        settle(adjudication, conflict, Login("nina", LEAD), "nonspeech")


def test_apply_names_the_version_itself_under_references_following_the_umask(exp):
    adjudication = open_experiment(exp)
    adjudication.decide(
        recording_id="entrevista", start=14.5, end=14.9, action="correct", annotator="ana", new_text="a casa é longe"
    )
    adjudication.decide(recording_id="reuniao", start=1.0, end=4.0, action="keep", annotator="ana")
    previous = os.umask(0o022)
    try:
        first = apply_decisions(adjudication, "lia")
        second = apply_decisions(adjudication, "lia")
    finally:
        os.umask(previous)
    assert first.out_dir.parent == second.out_dir.parent == exp / "references"
    assert first.out_dir.name.startswith("v001-") and second.out_dir.name.startswith("v002-")
    assert first.out_dir.stat().st_mode & 0o777 == 0o755
    assert (first.out_dir / "manifest.json").stat().st_mode & 0o777 == 0o644
    assert first.changed == ["entrevista"]  # reuniao had only a keep: copied as it was
    old = adjudication.manifest.entry("reuniao")
    new = first.manifest.entry("reuniao")
    assert new.references[new.reference_role].sha256 == old.references[old.reference_role].sha256
    assert not list((exp / "references").glob(".new-version.*"))


def test_apply_refuses_a_folder_that_is_not_empty(exp, tmp_path):
    adjudication = open_experiment(exp)
    adjudication.decide(recording_id="entrevista", start=14.5, end=14.9, action="keep", annotator="ana")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(InputError, match="never overwritten"):
        apply_decisions(adjudication, "ana", tmp_path / "full")


def test_open_item_status(exp):
    adjudication = open_experiment(exp)
    assert adjudication.status(None) == OPEN


def test_a_correction_replaces_one_speakers_turns_only():
    reference = Reference("r", [Utterance(0.0, 2.0, "oi tudo bem", "ANA"), Utterance(1.0, 3.0, "tudo", "BETO")])
    assert correctable_speaker(reference, 0.0, 0.5) == "ANA"
    with pytest.raises(InputError, match="covers turns of several speakers \\(ANA, BETO\\)"):
        correctable_speaker(reference, 0.5, 2.5)


def test_a_decision_changing_a_plain_text_reference_is_refused_when_applied_and_changes_nothing(exp, tmp_path):
    """Its turns are untimed: a TextGrid would invent their times, so apply says to correct the file instead."""
    from toolkit.corpus.freeze import freeze

    corpus = exp / "corpus"
    (corpus / "refs" / "reuniao.TextGrid").unlink()
    (corpus / "refs" / "reuniao.txt").write_text("a Maria chegou cedo hoje\nnós vamos votar amanhã\n", encoding="utf-8")
    (corpus / "manifest.json").unlink()
    freeze(corpus / "audio", corpus / "refs", corpus / "manifest.json", splits_csv=corpus / "splits.csv")
    adjudication = open_experiment(exp)
    assert [u.text for u in adjudication.reference("reuniao").utterances] == [
        "a Maria chegou cedo hoje",
        "nós vamos votar amanhã",
    ]
    adjudication.decide(recording_id="reuniao", start=6.5, end=7.0, action="unresolved", annotator="ana")
    with pytest.raises(InputError, match=r"untimed turns in a TextGrid tier \(time them first\)"):
        apply_decisions(adjudication, "ana", tmp_path / "refs-v2")
    assert not (tmp_path / "refs-v2").exists()
