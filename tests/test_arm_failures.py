"""One failing arm never stops the others: named in one line, recorded, scored as a failure, refused by the gates.

A stage bug is stood in for by a combine that writes its words out of order (what the old
text-only combine did on an AVX-512 machine); everything else is the real engine, decoding with
the bundled model, the real scorer, report, protocol and gates.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from protocol_corpus import make_corpus, make_experiment

import toolkit.pipeline.combine
from toolkit.cli import main
from toolkit.core.transcripts import Word
from toolkit.pipeline.experiment import load_experiment
from toolkit.protocol.challenger import freeze_challenger
from toolkit.protocol.gates_file import TEMPLATE

pytestmark = [pytest.mark.slow, pytest.mark.needs_model]
ARMS = 'baseline = []\nvad = ["vad"]\ncombined_models = ["second_combine"]\n'


def _out_of_order(first, second, labels, pair_collar_s):
    """A combine with a bug: its second word starts before its first."""
    return [Word("depois", 1.0, 1.4, 0.9), Word("antes", 0.5, 0.8, 0.9)], []


@pytest.fixture()
def experiment(tmp_path: Path) -> Path:
    manifest = make_corpus(tmp_path / "corpus", {"r1": "tuning", "r2": "tuning", "h1": "holdout"})
    return make_experiment(tmp_path / "exp", manifest, ARMS)


def _record(experiment: Path, split: str) -> dict:
    (folder,) = [p for p in (experiment / "runs").iterdir() if p.name.startswith(split)]
    return json.loads((folder / "run.json").read_text(encoding="utf-8")) | {"folder": folder}


def test_a_failing_arm_is_named_recorded_and_scored_while_the_others_finish(
    experiment: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setattr(toolkit.pipeline.combine, "combine_streams", _out_of_order)
    assert main(["run", str(experiment), "--split", "tuning", "--quiet"]) == 1
    err = capsys.readouterr().err
    for rid in ("r1", "r2"):
        assert (
            f"arm combined_models, stage second_model combine, recording {rid}: combined words: word 2 'antes' "
            f"at 0.5 s is out of order"
        ) in err
    record = _record(experiment, "tuning")
    assert record["status"] == "complete"
    assert [(f["arm"], f["recording"], f["stage"]) for f in record["arm_failures"]] == [
        ("combined_models", "r1", "second_model combine"),
        ("combined_models", "r2", "second_model combine"),
    ]
    folder = record["folder"]
    for arm in ("baseline", "vad"):  # the other arms finished every recording
        assert all((folder / "hypotheses" / arm / f"{rid}.json").is_file() for rid in ("r1", "r2"))
    assert not (folder / "hypotheses" / "combined_models").exists()
    scores = json.loads((folder / "scores" / "combined_models" / "r1.json").read_text(encoding="utf-8"))
    assert scores["deletions"] == scores["ref_words"] > 0 and scores["wer"] == 1.0  # in every denominator, as no words
    report = (folder / "report.md").read_text(encoding="utf-8")
    assert "**Failed:** arm combined_models, stage second_model combine, recording r1" in report

    monkeypatch.undo()  # the bug fixed: a rerun makes the failed results and reuses the rest
    assert main(["run", str(experiment), "--split", "tuning", "--quiet"]) == 0
    record = _record(experiment, "tuning")
    assert record["arm_failures"] == [] and record["computed"] == 2 and record["reused"] == 4


def test_the_gates_refuse_a_failed_challenger_in_one_line(experiment: Path, monkeypatch, capsys) -> None:
    freeze_challenger(load_experiment(experiment), "combined_models", TEMPLATE)
    monkeypatch.setattr(toolkit.pipeline.combine, "combine_streams", _out_of_order)
    assert main(["run", str(experiment), "--split", "holdout", "--quiet"]) == 1
    capsys.readouterr()
    assert main(["gate", str(experiment)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert (
        "no verdict: the challenger failed on 1 of 1 recordings (arm combined_models, stage second_model "
        "combine, recording h1:" in err
    )
