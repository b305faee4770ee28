"""The protocol: challenger freeze, holdout opened once, refusals, the audit log and its tampering.

Everything here runs without decoding: the holdout guard is checked before any decoding,
and the holdout run the gates read is a constructed run folder (real files) registered
through the same calls the CLI makes.
"""

from __future__ import annotations

import json
import multiprocessing
import shutil
from pathlib import Path

import pytest
from protocol_corpus import correct, make_corpus, make_experiment, make_run, needs_bundled_model, turns

from toolkit.cli import main
from toolkit.core.errors import InputError
from toolkit.pipeline.engine import RunSummary
from toolkit.pipeline.experiment import load_experiment
from toolkit.protocol.audit import AuditLog, verify
from toolkit.protocol.challenger import freeze_challenger, gates_copy
from toolkit.protocol.gates_file import TEMPLATE
from toolkit.protocol.state import ProtocolError, current_hash
from toolkit.protocol.testsplit import open_test_split, record_run
from toolkit.runs.folder import RunFolder

SPLITS = {"t1": "tuning", "h1": "holdout", "h2": "holdout", "c1": "challenge"}


@pytest.fixture()
def experiment(tmp_path: Path):
    manifest = make_corpus(tmp_path / "corpus", SPLITS)
    return load_experiment(make_experiment(tmp_path / "exp", manifest))


def _events(experiment) -> list[str]:
    return [e.event for e in AuditLog(experiment.folder).entries()]


def _verify(experiment) -> int:
    return verify(AuditLog(experiment.folder), current_hash)


def _holdout_run(experiment, split: str = "holdout", challenger: str = "vad") -> RunSummary:
    """A finished test-split run folder, as the engine leaves it, registered like the CLI does."""
    rids = [rid for rid, s in SPLITS.items() if s == split]
    words = {rid: correct(turns()) for rid in rids}
    missing_negation = {rid: w[:1] + w[2:] for rid, w in words.items()}
    folder = experiment.folder / "runs" / f"{split}-constructed"
    make_run(
        folder,
        experiment.manifest_path,
        split,
        {"baseline": words, challenger: missing_negation},
        vad={challenger: [(0.0, 20.0)]},
        experiment=experiment,
    )
    summary = RunSummary(RunFolder(folder), split, ["baseline", challenger], rids, 2, 0)
    record_run(experiment, split, summary)
    return summary


def test_holdout_is_refused_without_a_frozen_challenger(experiment, capsys) -> None:
    assert main(["run", str(experiment.folder), "--split", "holdout"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "without a frozen challenger" in error and "ablate challenger freeze" in error
    assert _events(experiment) == ["refusal"]
    assert not (experiment.folder / "runs").exists()


@needs_bundled_model
def test_freeze_records_every_hash_and_the_holdout_runs_baseline_and_challenger_only(experiment, capsys) -> None:
    assert main(["challenger", "freeze", str(experiment.folder), "--arm", "vad", "--gates", str(TEMPLATE)]) == 0
    record = json.loads((experiment.folder / "protocol" / "challenger.json").read_text(encoding="utf-8"))
    assert record["arm"] == "vad" and record["gates_sha256"] == current_hash("file", TEMPLATE)
    assert record["manifest_sha256"] == current_hash("manifest", experiment.manifest_path)
    vad_stage = record["config"]["challenger"]["components"][0]
    assert vad_stage["stage"] == "vad" and vad_stage["config"]["threshold"] == 0.5
    assert record["config"]["recognizers"]["whisper_base"]["weights_sha256"]
    assert record["signature"].startswith("ablate-score:")
    assert _events(experiment) == ["manifest registered", "manifest verified", "challenger frozen"]
    # freezing the same again records nothing new
    assert main(["challenger", "freeze", str(experiment.folder), "--arm", "vad", "--gates", str(TEMPLATE)]) == 0
    assert "already frozen" in capsys.readouterr().out and len(_events(experiment)) == 3
    with pytest.raises(ProtocolError, match="baseline and the frozen challenger only"):
        open_test_split(experiment, "holdout", ["baseline", "windows"])
    assert open_test_split(experiment, "holdout", None) == ["baseline", "vad"]
    assert _events(experiment)[-2:] == ["refusal", "holdout opened"]
    assert open_test_split(experiment, "tuning", ["windows"]) == ["windows"]  # tuning stays free


@needs_bundled_model
def test_changes_before_opening_need_a_new_freeze(experiment) -> None:
    freeze_challenger(experiment, "vad", TEMPLATE)
    copy = gates_copy(experiment)
    copy.write_text(copy.read_text(encoding="utf-8").replace("threshold = 0.99", "threshold = 0.9"), encoding="utf-8")
    with pytest.raises(ProtocolError, match="the gates file changed since challenger 'vad' was frozen"):
        open_test_split(experiment, "holdout", None)
    _, recorded = freeze_challenger(experiment, "windows", TEMPLATE)  # not opened yet: allowed
    assert recorded and open_test_split(experiment, "holdout", None) == ["baseline", "windows"]


@needs_bundled_model
def test_after_opening_any_change_needs_fresh_test_data(experiment, tmp_path: Path) -> None:
    freeze_challenger(experiment, "vad", TEMPLATE)
    open_test_split(experiment, "holdout", None)
    with pytest.raises(ProtocolError, match="needs fresh test data"):
        freeze_challenger(experiment, "windows", TEMPLATE)
    edited = tmp_path / "gates.toml"
    edited.write_text(
        TEMPLATE.read_text(encoding="utf-8").replace("threshold = 0.5", "threshold = 0.1"), encoding="utf-8"
    )
    with pytest.raises(ProtocolError, match="needs fresh test data"):
        freeze_challenger(experiment, "vad", edited)
    gates_copy(experiment).write_text(edited.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(ProtocolError, match="gates file changed since: needs fresh test data"):
        open_test_split(experiment, "holdout", None)
    shutil.copy(TEMPLATE, gates_copy(experiment))  # put the frozen gates back: resuming is allowed again
    assert open_test_split(experiment, "holdout", None) == ["baseline", "vad"]
    events = _events(experiment)
    assert events.count("refusal") == 3 and events[-1] == "holdout resumed"
    # the same test recordings under a changed manifest (another split file) are still refused
    manifest = make_corpus(experiment.manifest_path.parent, {**SPLITS, "t1": "drift"})
    with pytest.raises(ProtocolError, match="needs fresh test data"):
        freeze_challenger(experiment, "windows", TEMPLATE)
    # a new manifest whose test recordings were never opened starts a new protocol record
    make_corpus(experiment.manifest_path.parent, SPLITS, seed=1)
    _, recorded = freeze_challenger(experiment, "windows", TEMPLATE)
    assert recorded and "protocol record started" in _events(experiment)
    assert open_test_split(experiment, "holdout", None) == ["baseline", "windows"]
    assert _verify(experiment) == len(_events(experiment)) and manifest.is_file()


@needs_bundled_model
def test_gate_verdict_on_the_holdout_with_challenge_reported_apart(experiment, capsys) -> None:
    freeze_challenger(experiment, "vad", TEMPLATE)
    assert main(["gate", str(experiment.folder)]) == 2
    assert "the holdout has not been run" in capsys.readouterr().err
    open_test_split(experiment, "holdout", None)
    summary = _holdout_run(experiment)
    open_test_split(experiment, "challenge", None)
    _holdout_run(experiment, "challenge")
    assert main(["gate", str(experiment.folder), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"] == "RETAIN BASELINE" and data["split"] == "holdout"
    assert data["holdout"]["recordings"] == 2 and data["challenge"]["holdout"]["recordings"] == 1
    failed = {g["name"]: g for g in data["gates"] if g["passed"] is False}
    assert failed["new_negation_errors"]["value"] == 2 and len(failed["new_negation_errors"]["instances"]) == 2
    assert "rare-failure" in data["caveat"] and data["signature"].startswith("ablate-score:")
    assert main(["gate", str(experiment.folder)]) == 1
    text = capsys.readouterr().out
    assert text.strip().splitlines()[-1] == "verdict (holdout): RETAIN BASELINE"
    assert "challenge split (reported apart" in text and "FAIL  new_negation_errors: 2" in text
    report = (summary.folder.root / "report.md").read_text(encoding="utf-8")
    headings = [line for line in report.splitlines() if line.startswith("## ")]
    assert headings[:2] == ["## Verdict", "## Each arm against `baseline`"] and "## Gates" in headings
    verdict = report.split("## Verdict")[1].split("\n## ")[0]
    assert "**RETAIN BASELINE**" in verdict and "failed `new_negation_errors`: 2, must be <= 0" in verdict
    assert "Instances behind each failed gate" in report
    assert "## Protocol trail" in report and "challenger frozen" in report and "holdout opened" in report
    assert _events(experiment)[-2:] == ["gate evaluated", "gate evaluated"]
    assert main(["audit", "verify", str(experiment.folder)]) == 0


@needs_bundled_model
def test_edited_hypotheses_after_the_holdout_are_caught(experiment, capsys) -> None:
    freeze_challenger(experiment, "vad", TEMPLATE)
    open_test_split(experiment, "holdout", None)
    summary = _holdout_run(experiment)
    hypothesis = summary.folder.hypothesis_json("vad", "h1")
    hypothesis.write_text(hypothesis.read_text(encoding="utf-8").replace('"eu"', '"nós"'), encoding="utf-8")
    assert main(["audit", "verify", str(experiment.folder)]) == 2
    error = capsys.readouterr().err
    assert "(holdout finished) records evidence runs/holdout-constructed/hypotheses/vad/h1.json" in error
    assert main(["gate", str(experiment.folder)]) == 2


@pytest.fixture()
def logged(tmp_path: Path) -> AuditLog:
    log = AuditLog(tmp_path)
    for k in range(5):
        log.append("tuning run", n=k)
    return log


def _lines(log: AuditLog) -> list[str]:
    return log.path.read_text(encoding="utf-8").splitlines(keepends=True)


@pytest.mark.parametrize(
    "tamper, named",
    [
        (lambda lines: [lines[0], lines[1].replace('"n":1', '"n":7'), *lines[2:]], "entry 3"),
        (lambda lines: [lines[0], *lines[2:]], "entry 2"),
        (lambda lines: [lines[0], lines[2], lines[1], *lines[3:]], "entry 2"),
        (lambda lines: lines[:-1], "head records 5"),
        (lambda lines: [*lines[:-1], lines[-1].replace('"n":4', '"n":9')], "entry 5 was edited"),
    ],
)
def test_an_edited_deleted_or_reordered_entry_is_named(logged: AuditLog, tamper, named: str) -> None:
    assert verify(logged, current_hash) == 5
    logged.path.write_text("".join(tamper(_lines(logged))), encoding="utf-8")
    with pytest.raises(InputError, match=named):
        verify(logged, current_hash)


@needs_bundled_model
def test_a_tampered_log_stops_the_protocol(experiment, capsys) -> None:
    freeze_challenger(experiment, "vad", TEMPLATE)
    log = AuditLog(experiment.folder)
    log.path.write_text(log.path.read_text(encoding="utf-8").replace('"vad"', '"windows"'), encoding="utf-8")
    assert main(["run", str(experiment.folder), "--split", "holdout"]) == 2
    assert "audit.jsonl: entry" in capsys.readouterr().err


def _append_many(folder: str, tag: str, count: int) -> None:
    log = AuditLog(Path(folder))
    for k in range(count):
        log.append("tuning run", writer=tag, n=k, padding="x" * 2000)


def test_two_processes_appending_at_once_keep_one_valid_chain(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_append_many, args=(str(tmp_path), tag, 60)) for tag in ("a", "b")]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(60)
        assert writer.exitcode == 0
    log = AuditLog(tmp_path)
    assert verify(log, current_hash) == 120
    entries = log.entries()
    assert [e.seq for e in entries] == list(range(1, 121))
    for tag in ("a", "b"):
        assert [e.other["n"] for e in entries if e.other["writer"] == tag] == list(range(60))


@needs_bundled_model
def test_a_run_folder_that_is_not_the_frozen_challenger_or_the_manifest_is_refused(experiment, capsys) -> None:
    freeze_challenger(experiment, "vad", TEMPLATE)
    open_test_split(experiment, "holdout", None)
    summary = _holdout_run(experiment)
    record = json.loads(summary.folder.record.read_text(encoding="utf-8"))
    record["config"]["arms"][1]["components"][0]["config"]["threshold"] = 0.3
    summary.folder.record.write_text(json.dumps(record), encoding="utf-8")
    assert main(["gate", str(experiment.folder)]) == 2  # edited after the log recorded it: its hash says so
    assert "records file runs/holdout-constructed/run.json with sha256" in capsys.readouterr().err
    # A run recorded as it was made, but by another configuration than the frozen challenger's.
    record_run(experiment, "holdout", summary)
    assert main(["gate", str(experiment.folder)]) == 2
    assert "is not the frozen challenger's configuration" in capsys.readouterr().err
    words = correct(turns())
    folder = make_run(
        summary.folder.root.with_name("holdout-partial"),  # rewriting the recorded run would re-record evidence
        experiment.manifest_path,
        "holdout",
        {"baseline": {"h1": words}, "vad": {"h1": words}},
        experiment=experiment,
    )  # h2 missing
    record_run(experiment, "holdout", RunSummary(folder, "holdout", ["baseline", "vad"], ["h1"], 0, 0))
    assert main(["gate", str(experiment.folder)]) == 2
    error = capsys.readouterr().err.strip()
    assert "run.json: the run's recordings (h1) are not the manifest's holdout split (h1, h2)" in error
    assert "\n" not in error


def test_a_gates_file_with_a_typo_stops_the_freeze_and_writes_nothing(experiment, tmp_path: Path, capsys) -> None:
    typo = tmp_path / "gates.toml"
    typo.write_text(
        TEMPLATE.read_text(encoding="utf-8").replace("[seam_omissions]", "[seam_omission]"), encoding="utf-8"
    )
    assert main(["challenger", "freeze", str(experiment.folder), "--arm", "vad", "--gates", str(typo)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"ablate: error: {typo}: unknown key 'seam_omission'") and "\n" not in error
    assert not (experiment.folder / "protocol").exists()


def test_demo_keeps_its_protocol_record_only_for_the_experiment_file_and_scorer_it_began_with(
    tmp_path: Path, capsys
) -> None:
    from toolkit.cli.demo import VERSION_EVENT, _protocol_for_this_version

    folder = make_experiment(tmp_path / "exp", make_corpus(tmp_path / "corpus", {"a": "tuning"}))
    experiment = load_experiment(folder)
    _protocol_for_this_version(experiment)  # first demo: nothing to keep aside, the version is logged
    log = AuditLog(folder)
    log.append("holdout opened", split="holdout")
    _protocol_for_this_version(experiment)  # same experiment file: the record stays
    assert [e.event for e in log.entries()] == [VERSION_EVENT, "holdout opened"]
    assert not list(tmp_path.glob("exp/protocol-before-*"))
    with (folder / "experiment.toml").open("a", encoding="utf-8") as handle:
        handle.write("extra = []\n")  # one more arm: a new version of the demo
    _protocol_for_this_version(load_experiment(folder))
    [kept] = tmp_path.glob("exp/protocol-before-*")
    assert [e.event for e in AuditLog(kept.parent).entries()] == [VERSION_EVENT]
    assert "holdout opened" in (kept / "audit.jsonl").read_text(encoding="utf-8")
    assert "kept in" in capsys.readouterr().out

    # The same experiment file scored by another scorer, or judged by another gates template (a new version of
    # the project): its record is kept aside too. The version is what the log recorded, so a changed rule shows.
    def logged_version(old: str, new: str) -> None:
        """A record whose log began with another version (rewritten through the log's own append)."""
        stamp = AuditLog(folder).entries()[-1].other["stamp"]
        for name in ("audit.jsonl", "audit.head"):
            (folder / "protocol" / name).unlink()
        AuditLog(folder).append(VERSION_EVENT, stamp=stamp.replace(old, new))
        AuditLog(folder).append("holdout opened", split="holdout")

    for old, new in ((" scorer ", " scorer 0ld"), (" gates ", " gates 0ld")):
        logged_version(old, new)
        before = len(list(tmp_path.glob("exp/protocol-before-*")))
        _protocol_for_this_version(load_experiment(folder))
        assert len(list(tmp_path.glob("exp/protocol-before-*"))) == before + 1
        assert [e.event for e in AuditLog(folder).entries()] == [VERSION_EVENT]
