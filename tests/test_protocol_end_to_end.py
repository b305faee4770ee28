"""The whole protocol through the CLI on a tiny real corpus, decoded by the bundled model.

Tuning, a refused holdout, challenger freeze, the holdout once, the gate verdict; a second
holdout run recomputes nothing and the verdict repeats; the audit log verifies.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from protocol_corpus import make_experiment, spoken_corpus

from toolkit.cli import main
from toolkit.protocol.audit import AuditLog
from toolkit.protocol.gates import PROMOTE, RETAIN
from toolkit.protocol.gates_file import DITHER_GATE, TEMPLATE
from toolkit.runs.folder import latest_run

pytestmark = [pytest.mark.slow, pytest.mark.needs_model]


def _killed_holdout_run(experiment: str) -> None:
    """Start ``ablate run --split holdout`` and kill -9 it once the holdout was opened."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    process = subprocess.Popen(
        [sys.executable, "-m", "toolkit", "run", experiment, "--split", "holdout", "--quiet"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    log = Path(experiment) / "protocol" / "audit.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        if '"event":"holdout opened"' in log.read_text(encoding="utf-8"):
            time.sleep(3)  # into the decoding
            break
        time.sleep(0.2)
    process.send_signal(signal.SIGKILL)
    process.wait(30)


def test_the_protocol_end_to_end(tmp_path: Path, capsys) -> None:
    experiment = str(
        make_experiment(tmp_path / "exp", spoken_corpus(tmp_path / "corpus"), 'baseline = []\nvad = ["vad"]\n')
    )
    assert main(["run", experiment, "--split", "tuning", "--quiet"]) == 0
    assert main(["run", experiment, "--split", "holdout", "--quiet"]) == 2
    assert "without a frozen challenger" in capsys.readouterr().err
    # The gates' error rates before the freeze: the baseline re-decoded once under dither and once with
    # CTranslate2 forced to its generic kernels (another machine's words), A/A and planted gains.
    calibrate = ["calibrate", experiment, "--arm", "vad", "--resamples", "20", "--reruns", "1", "--isa", "GENERIC"]
    assert main([*calibrate, "--format", "json"]) == 0
    calibration = json.loads(capsys.readouterr().out)
    assert (calibration["aa_trials"], calibration["resamples"], calibration["holdout_recordings"]) == (120, 20, 1)
    assert calibration["resampling"] == "with replacement"  # one tuning recording for a one-recording holdout
    assert calibration["aa_pairs"] == [  # each pair both ways round
        "undithered vs dither seed 1",
        "undithered vs forced GENERIC",
        "dither seed 1 vs undithered",
        "dither seed 1 vs forced GENERIC",
        "forced GENERIC vs undithered",
        "forced GENERIC vs dither seed 1",
    ]
    assert len(calibration["dither_reruns"]) == 1 and list(calibration["isa_runs"]) == ["GENERIC"]
    generic = Path(experiment) / "runs" / calibration["isa_runs"]["GENERIC"] / "run.json"
    assert json.loads(generic.read_text())["config"]["recognizer_runtime"]["whisper_base"]["forced_isa"] == "GENERIC"
    assert "CT2_FORCE_CPU_ISA" not in os.environ  # as it was before the calibration
    # The figures a freeze quotes come from the audit log: a calibration.json edited to flatter is not adopted.
    written = Path(experiment) / "runs" / calibration["tuning_run"] / "scores" / "calibration.json"
    forged = json.loads(written.read_text())
    forged.update(false_promotes=0, false_promote_rate=0.0, false_promote_upper95=0.0)
    written.write_text(json.dumps(forged))
    assert main([*calibrate, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == calibration
    assert json.loads(written.read_text()) == calibration  # and the file is the logged one again
    # Another machine's run is not the split's run here, unless that instruction set is forced while reading.
    assert latest_run(Path(experiment), "tuning").read_record().config.arm_names == ["baseline", "vad"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CT2_FORCE_CPU_ISA", "GENERIC")
        assert latest_run(Path(experiment), "tuning").root.name == calibration["isa_runs"]["GENERIC"]
    assert 0 <= calibration["false_promote_rate"] <= calibration["false_promote_upper95"] <= 1
    assert [g["effect_points"] for g in calibration["power"]] == [0.5, 1.0, 2.0]
    assert calibration["power_plan"]["estimated"] is False  # one tuning recording: no spread to plan from
    tuning_report = Path(experiment) / "runs" / calibration["tuning_run"] / "report.md"
    report = tuning_report.read_text(encoding="utf-8")
    assert "Gates calibrated on this split" in report
    # The run section describes the recognizer the arms used; the experiment's others are named as unused.
    assert "- recognizer `whisper_base`:" in report and "- recognizer `whisper_base_batched`" not in report
    assert "used by no arm of this run: " in report and "`whisper_base_batched`" in report
    assert main(["challenger", "freeze", experiment, "--arm", "vad", "--gates", str(TEMPLATE)]) == 0
    frozen_out = capsys.readouterr().out
    assert "power: not estimated" in frozen_out and f"promoted {calibration['false_promotes']} of 120" in frozen_out
    _killed_holdout_run(experiment)
    assert main(["audit", "verify", experiment]) == 0  # kill -9 leaves the log valid
    capsys.readouterr()
    assert main(["run", experiment, "--split", "holdout", "--quiet"]) == 0  # and the run resumable
    assert re.search(r"(\d) arm results computed, (\d) reused", capsys.readouterr().out).groups() in (
        ("2", "0"),
        ("1", "1"),
        ("0", "2"),
    )
    code = main(["gate", experiment, "--format", "json"])
    verdict = json.loads(capsys.readouterr().out)
    assert (code, verdict["verdict"]) == (1, "RETAIN BASELINE")  # the template's dither gate waits for its reruns
    gates = {g["name"]: g for g in verdict["gates"]}
    assert len(gates) == 11 and verdict["holdout"]["recordings"] == 1
    assert verdict["planning"]["calibration"] == calibration and verdict["minimum_detectable_effect_points"] is None
    assert gates[DITHER_GATE]["passed"] is False and "not measured, 3 pre-registered" in gates[DITHER_GATE]["note"]
    others = (
        PROMOTE if all(g["passed"] for g in gates.values() if g["applicable"] and g["name"] != DITHER_GATE) else RETAIN
    )
    assert main(["run", experiment, "--split", "holdout", "--quiet"]) == 0  # resuming with identical hashes
    assert "0 arm results computed, 2 reused" in capsys.readouterr().out
    assert main(["gate", experiment, "--format", "json"]) == code
    assert json.loads(capsys.readouterr().out)["gates"] == verdict["gates"]
    assert main(["audit", "verify", experiment]) == 0
    events = [e.event for e in AuditLog(Path(experiment)).entries()]
    assert events[:8] == [
        "manifest registered",
        "manifest verified",
        "tuning run",
        "refusal",
        "gates calibrated",  # its figures, which the freeze quotes from here
        "manifest verified",
        "challenger frozen",
        "holdout opened",
    ]
    assert events[-6:] == [
        "holdout finished",
        "gate evaluated",
        "holdout resumed",
        "manifest verified",
        "holdout finished",
        "gate evaluated",
    ]
    # After the holdout: does the verdict survive an inaudible change? Logged, the log still verifies.
    capsys.readouterr()
    assert main(["explain", experiment, "--split", "holdout", "--stability", "3", "--format", "json"]) == 0
    stability = json.loads(capsys.readouterr().out)
    assert stability["verdicts"][0] == others and len(stability["verdicts"]) == 4
    assert [a["arm"] for a in stability["arms"]] == ["baseline", "vad"]
    logged = AuditLog(Path(experiment)).entries()[-1]
    assert logged.event == "stability measured" and logged.other["verdicts"] == stability["verdicts"]
    assert main(["audit", "verify", experiment]) == 0
    # ... and the verdict now reads those reruns: the pre-registered gate has its value.
    capsys.readouterr()
    code = main(["gate", experiment, "--format", "json"])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    verdict = json.loads(out)
    flips = sum(v != others for v in stability["verdicts"][1:])
    assert {g["name"]: g["value"] for g in verdict["gates"]}[DITHER_GATE] == flips
    assert verdict["verdict"] == (PROMOTE if others == PROMOTE and flips == 0 else RETAIN) and code == (
        verdict["verdict"] == RETAIN
    )
    # The reruns are evidence too: recorded when made, so a rerun file edited afterwards stops the gate.
    rerun = Path(experiment) / "runs" / stability["reruns"][1] / "hypotheses" / "vad" / "test.json"
    recorded = [e for e in AuditLog(Path(experiment)).entries() if e.event == "holdout results"]
    assert {e.other["run"] for e in recorded} >= set(stability["reruns"])
    original = rerun.read_bytes()
    rerun.write_bytes(original.replace(b'"text": "', b'"text": "x', 1))
    capsys.readouterr()
    assert main(["gate", experiment]) == 2
    assert str(rerun.relative_to(experiment)) in capsys.readouterr().err  # the log entry naming it
    rerun.write_bytes(original)
    assert main(["audit", "verify", experiment]) == 0
    # A holdout hypothesis edited after the run is not laundered by a rerun: the resume refuses it,
    # logs the refusal, records nothing new, and the gate still refuses the edited file.
    finished = [e for e in AuditLog(Path(experiment)).entries() if e.event == "holdout finished"]
    run_root = Path(experiment) / "runs" / finished[-1].other["run"]
    edited = run_root / "hypotheses" / "vad" / "test.json"
    edited.write_text(edited.read_text(encoding="utf-8").replace('"text": "', '"text": "x', 1), encoding="utf-8")
    capsys.readouterr()
    assert main(["run", experiment, "--split", "holdout", "--quiet"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and str(edited) in error and "holdout evidence changed" in error
    assert [e.event for e in AuditLog(Path(experiment)).entries()][-2:] == ["holdout resumed", "refusal"]
    assert main(["gate", experiment]) == 2
    assert main(["audit", "verify", experiment]) == 2
