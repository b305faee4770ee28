"""An imported challenger through the whole protocol on a tiny real corpus: its hypotheses are what another experiment
folder's greedy arm really decoded (the bundled model, as another system would), exported as that run wrote them (CTM
for tuning, JSON for the holdout), imported, tuned, frozen, run on the holdout once and gated. The imported arm scores
exactly as the run it came from; a file changed after the holdout stops the gate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from protocol_corpus import imported_gates, make_experiment, one_line, spoken_corpus

from toolkit.cli import main
from toolkit.evaluate import evaluate_run
from toolkit.pipeline.engine import run_experiment
from toolkit.pipeline.experiment import load_experiment
from toolkit.protocol.audit import AuditLog
from toolkit.runs.folder import latest_run
from toolkit.runs.record import IMPORTED

pytestmark = [pytest.mark.slow, pytest.mark.needs_model]

SPLIT = "holdout"
COUNTS = ("wer", "substitutions", "deletions", "insertions", "ref_words", "names_errors", "negation_flipped")


def _overall(run: Path | object, arm: str) -> dict[str, float]:
    """The arm's error counts over its split, from the run's scores."""
    aggregate = evaluate_run(run).aggregate  # type: ignore[arg-type]
    row = aggregate[(aggregate["arm"] == arm) & (aggregate["stratum"] == "all")].iloc[0]
    return {column: float(row[column]) for column in COUNTS}


def test_hypotheses_decoded_elsewhere_go_through_tuning_freeze_holdout_and_gate(tmp_path: Path, capsys) -> None:
    manifest = spoken_corpus(tmp_path / "corpus")
    # Elsewhere: another experiment folder decodes both splits with the greedy recognizer, outside any protocol.
    elsewhere = load_experiment(make_experiment(tmp_path / "elsewhere", manifest, 'greedy = ["second_replace"]\n'))
    made = {
        split: run_experiment(elsewhere, split, ["greedy"], progress=False).folder for split in ("tuning", "holdout")
    }
    source = tmp_path / "exported"
    source.mkdir()
    shutil.copy(made["tuning"].hypothesis_ctm("greedy", "tune"), source)
    shutil.copy(made["holdout"].hypothesis_json("greedy", "test"), source)

    experiment = make_experiment(tmp_path / "exp", manifest, "baseline = []\n")
    folder = str(experiment)
    assert main(["arms", "import", folder, "--arm", "legacy", str(source)]) == 0
    assert main(["run", folder, "--split", "tuning", "--quiet"]) == 0
    tuning = latest_run(experiment, "tuning", ["baseline", "legacy"])
    assert _overall(tuning, "legacy") == _overall(made["tuning"], "greedy")
    assert "not measured (imported)" in (tuning.root / "report.md").read_text(encoding="utf-8")

    gates = imported_gates(tmp_path / "gates.toml")
    assert main(["challenger", "freeze", folder, "--arm", "legacy", "--gates", str(gates)]) == 0
    capsys.readouterr()
    assert main(["run", folder, "--split", "holdout", "--quiet"]) == 0
    assert "decode 1 computed/0 reused" in capsys.readouterr().out  # the baseline's; legacy is read, not decoded
    holdout = latest_run(experiment, "holdout", ["baseline", "legacy"])
    assert _overall(holdout, "legacy") == _overall(made["holdout"], "greedy")
    rows = [row for row in holdout.read_record().measurements if row.arm == "legacy"]
    assert [(row.result, row.wall_s, row.cpu_s, row.peak_rss_mb) for row in rows] == [(IMPORTED, None, None, None)]

    code = main(["gate", folder, "--format", "json"])
    verdict = json.loads(capsys.readouterr().out)
    assert (code, verdict["verdict"]) in ((0, "PROMOTE"), (1, "RETAIN BASELINE"))
    gate_rows = {g["name"]: g for g in verdict["gates"]}
    for name in ("seam_omissions", "seam_duplications", "vad_speech_recall", "verdict_flips_under_dither"):
        assert gate_rows[name]["applicable"] is False and gate_rows[name]["passed"] is None
    assert gate_rows["wer_reduction_points"]["applicable"] is True
    assert main(["audit", "verify", folder]) == 0
    events = [e.event for e in AuditLog(experiment).entries()]
    assert events.index("challenger frozen") < events.index("holdout opened") < events.index("holdout finished")

    # The imported holdout file, changed after the holdout: the gate refuses it, naming it; put back, it agrees.
    copy = experiment / "imported" / "legacy" / "test.json"
    original = copy.read_bytes()
    copy.write_bytes(original.replace(b'"text": "', b'"text": "x', 1))
    capsys.readouterr()
    assert main(["gate", folder]) == 2
    assert str(copy) in one_line(capsys)
    copy.write_bytes(original)
    assert main(["gate", folder]) == code
