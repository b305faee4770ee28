"""A verdict that cannot be forged: each attack a motivated user with write access to the experiment folder tried
after the holdout opened (docs/protocol.md, "What an adversary can do"), and what stops it. Constructed runs (real
files, no decoding) registered through the same calls the CLI makes; the demo's own attack is at the end.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import shutil
import signal
from pathlib import Path

import pytest
from protocol_corpus import (
    constructed_holdout,
    correct,
    make_corpus,
    make_experiment,
    make_run,
    needs_bundled_model,
    one_line,
    own_corpus_experiment,
    turns,
)

from toolkit.cli import main
from toolkit.core.errors import InputError
from toolkit.core.files import canonical_json
from toolkit.corpus.freeze import freeze
from toolkit.pipeline.engine import RunSummary
from toolkit.pipeline.experiment import load_experiment
from toolkit.protocol.audit import AuditLog, verify
from toolkit.protocol.challenger import freeze_challenger
from toolkit.protocol.dither_evidence import STABILITY_EVENT
from toolkit.protocol.evidence import EvidenceGuard, recorded_evidence
from toolkit.protocol.gates import PROMOTE, RETAIN
from toolkit.protocol.gates_file import TEMPLATE
from toolkit.protocol.ledger import ledger_path
from toolkit.protocol.state import current_hash, run_hashes
from toolkit.runs.folder import RunFolder

SPLITS = {"t1": "tuning", "h1": "holdout", "h2": "holdout"}
HOLDOUT = ["h1", "h2"]
DITHER_ONLY = "dither-only-gates.toml"  # every gate passes on a perfect challenger; the dither gate asks 3 reruns


@pytest.fixture()
def experiment(tmp_path: Path):
    return own_corpus_experiment(tmp_path / "exp", SPLITS)


def _gates(tmp_path: Path) -> Path:
    """The template with the WER gate relaxed, so a challenger identical to the baseline fails only on dither."""
    path = tmp_path / DITHER_ONLY
    text = TEMPLATE.read_text(encoding="utf-8")
    start = text.index("[wer_reduction_points]")
    end = text.index("\n[", start + 1)
    relaxed = "[wer_reduction_points]\napplicable = true\nthreshold = -100\n"
    path.write_text(text[:start] + relaxed + text[end:], encoding="utf-8")
    return path


def _holdout(experiment, gates: Path) -> RunSummary:
    """The constructed holdout with both arms perfect and the challenger's VAD covering the speech."""
    return constructed_holdout(experiment, HOLDOUT, gates, vad={"vad": [(0.0, 20.0)]})


def _append_by_hand(log: AuditLog, event: str, **fields) -> None:
    """What the attacker did: one well-formed, correctly chained line, the head left alone."""
    lines = log.path.read_bytes().splitlines(keepends=True)
    data = {"seq": len(lines) + 1, "time": "2026-12-07T00:00:00+00:00", "event": event, **fields}
    data["prev_sha256"] = hashlib.sha256(lines[-1]).hexdigest()
    with open(log.path, "ab") as handle:
        handle.write((canonical_json(data) + "\n").encode("utf-8"))


def _rerun(experiment, seed: int, recorded: bool = True, words=None) -> RunFolder:
    """A dithered rerun of the holdout as a stability check leaves it: its run.json names its seed, and (unless
    ``recorded`` is False: planted) each result was recorded as evidence when it was made."""
    words = words or {rid: correct(turns()) for rid in HOLDOUT}
    folder = make_run(
        experiment.folder / "runs" / f"holdout-dither-{seed}",
        experiment.manifest_path,
        "holdout",
        {"baseline": {rid: correct(turns()) for rid in HOLDOUT}, "vad": words},
        vad={"vad": [(0.0, 20.0)]},
        experiment=experiment,
    )
    record = json.loads(folder.record.read_text(encoding="utf-8"))
    record["config"]["dither"] = {"kind": "tpdf", "seed": seed, "level_dbfs": -90.0}
    folder.record.write_text(json.dumps(record), encoding="utf-8")
    if recorded:
        guard = EvidenceGuard(experiment.folder, "holdout", recorded_evidence(AuditLog(experiment.folder)))
        for rid in HOLDOUT:
            guard.recorded(folder, rid, ["baseline", "vad"])
    return folder


def _without_negation() -> list:
    """The holdout's words with its first "não" lost: a new negation error, so the other gates retain."""
    words = correct(turns())
    return words[:1] + words[2:]


def _stability_entry(experiment, run: RunFolder, reruns: list[RunFolder], verdicts: list[str], **extra) -> None:
    """The entry a stability check appends (through the log's own append: the head records it)."""
    AuditLog(experiment.folder).append(
        STABILITY_EVENT,
        split="holdout",
        run=run.root.name,
        reruns=[r.root.name for r in reruns],
        dither={"kind": "tpdf", "level_dbfs": -90.0, "seeds": list(range(1, len(reruns) + 1))},
        verdicts=verdicts,
        flipped=[],
        **({"hashes": run_hashes(experiment.folder, [run, *reruns])} | extra),
    )


# --- 1. One appended line flips the verdict: now tampering, whatever the line says --------------------------------


@needs_bundled_model
@pytest.mark.parametrize(
    "event, fields",
    [
        (
            STABILITY_EVENT,
            {
                "split": "holdout",
                "run": "holdout-constructed",
                "dither": {"kind": "tpdf", "level_dbfs": -90.0, "seeds": [1, 2, 3]},
                "verdicts": [PROMOTE] * 4,
                "reruns": ["holdout-x1", "holdout-x2", "holdout-x3"],
                "flipped": [],
            },
        ),
        ("holdout finished", {"split": "holdout", "arms": ["baseline", "vad"], "run": "holdout-other"}),
        ("holdout results", {"split": "holdout", "run": "holdout-constructed", "recording": "h1", "hashes": []}),
        ("gate evaluated", {"split": "holdout", "run": "holdout-constructed", "verdict": PROMOTE, "failed": []}),
        ("challenger frozen", {"challenger": {"arm": "windows"}, "replaces": "vad"}),
        ("holdout opened", {"split": "holdout", "arms": ["baseline", "windows"], "config_sha256": "0" * 64}),
        ("protocol record started", {"manifest_sha256": "0" * 64, "reason": "new manifest"}),
    ],
)
def test_a_line_appended_by_hand_is_tampering_whatever_it_records(
    experiment, tmp_path: Path, capsys, event: str, fields: dict
) -> None:
    _holdout(experiment, _gates(tmp_path))
    assert main(["gate", str(experiment.folder)]) == 1  # the dither gate was never measured: RETAIN BASELINE
    capsys.readouterr()
    log = AuditLog(experiment.folder)
    _append_by_hand(log, event, **fields)
    for command in (["audit", "verify", str(experiment.folder)], ["gate", str(experiment.folder)]):
        assert main(command) == 2
        error = one_line(capsys)
        assert "is complete but the head never recorded it" in error and "tampering" in error
    assert main(["audit", "repair", str(experiment.folder)]) == 2  # repair never adopts it either
    assert "tampering" in one_line(capsys)


def _append_killed_before_its_head(folder: str) -> None:
    """An append killed (SIGKILL) between writing its line and moving the head onto it."""
    from toolkit.core.json_records import ABSENT
    from toolkit.protocol import audit

    real = audit.write_record

    def dying(path, record):
        if isinstance(record, audit.AuditHead) and record.pending_sha256 is ABSENT and record.entries == 4:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(path, record)

    audit.write_record = dying
    AuditLog(Path(folder)).append("tuning run", n=4)


def _crashed_log(folder: Path) -> AuditLog:
    """A log of three entries and a fourth whose append was killed between its line and its head."""
    log = AuditLog(folder)
    for n in range(3):
        log.append("tuning run", n=n)
    child = multiprocessing.get_context("fork").Process(target=_append_killed_before_its_head, args=(str(folder),))
    child.start()
    child.join()
    assert child.exitcode == -signal.SIGKILL
    return log


def test_a_crash_between_the_line_and_its_head_verifies_and_its_repair_is_logged(tmp_path: Path, capsys) -> None:
    (tmp_path / "experiment.toml").write_text("", encoding="utf-8")
    log = _crashed_log(tmp_path)
    head = log.read_head()
    assert head.entries == 3 and len(log.entries()) == 4  # the line landed, the head did not move
    assert verify(log, current_hash) == 4  # the state a crash leaves: the head names the line as pending
    assert main(["audit", "repair", str(tmp_path)]) == 0
    assert "completed the head for entry 4 (tuning run)" in capsys.readouterr().out
    assert [e.event for e in log.entries()] == ["tuning run"] * 4 + ["log repaired"]
    assert verify(log, current_hash) == 5


def test_the_next_append_completes_a_crashed_head_and_logs_it(tmp_path: Path) -> None:
    log = _crashed_log(tmp_path)
    log.append("tuning run", n=5)
    assert [e.event for e in log.entries()] == ["tuning run"] * 4 + ["log repaired", "tuning run"]
    assert "which a command killed between writing it and recording it" in log.entries()[4].other["detail"]
    assert verify(log, None) == 6


def _crash_style_head(log: AuditLog) -> None:
    """What the attacker does to get past the head: write it as a crash would have left it (one entry behind, the
    hand-appended line named as pending). The head is a file in the folder, so this much cannot be prevented."""
    lines = log.path.read_bytes().splitlines(keepends=True)
    head = {
        "entries": len(lines) - 1,
        "last_sha256": hashlib.sha256(lines[-2]).hexdigest(),
        "pending_sha256": hashlib.sha256(lines[-1]).hexdigest(),
    }
    log.head.write_text(json.dumps(head), encoding="utf-8")


@needs_bundled_model
def test_a_challenger_frozen_by_hand_after_the_holdout_opened_is_refused(experiment, tmp_path: Path, capsys) -> None:
    """The attack that got through a first review: loose gates copied in, a challenger file and one freeze line
    naming their hashes, the head written as a crash leaves it. The protocol never writes a freeze there."""
    _holdout(experiment, TEMPLATE)
    log = AuditLog(experiment.folder)
    frozen = next(e for e in log.entries() if e.event == "challenger frozen")
    copy = experiment.folder / "protocol" / "gates.toml"
    copy.write_text(_gates(tmp_path).read_text(encoding="utf-8"), encoding="utf-8")
    forged = {**frozen.other["challenger"], "gates_sha256": hashlib.sha256(copy.read_bytes()).hexdigest()}
    named = [{"kind": "file", "path": "protocol/gates.toml", "sha256": forged["gates_sha256"]}]
    _append_by_hand(log, "challenger frozen", challenger=forged, replaces="vad", hashes=named)
    _crash_style_head(log)
    for command in (["audit", "verify", str(experiment.folder)], ["gate", str(experiment.folder)]):
        assert main(command) == 2
        error = one_line(capsys)
        assert "(challenger frozen) freezes a challenger after the holdout was opened in this record" in error
        assert "the log was written by hand" in error


@needs_bundled_model
@pytest.mark.parametrize(
    "steps, problem",
    [
        ([("holdout opened", {"split": "holdout"})], "opens the holdout a second time in one protocol record"),
        ([("challenge finished", {"split": "challenge", "run": "x"})], "finishes a challenge run that was never"),
        (
            [("protocol record started", {}), ("challenger frozen", {}), ("holdout opened", {"split": "holdout"})],
            "opens a holdout whose recordings (by audio content) an earlier protocol record opened",
        ),
    ],
)
def test_an_entry_the_protocol_never_writes_in_that_state_is_refused(
    experiment, tmp_path: Path, capsys, steps: list, problem: str
) -> None:
    """Written through the log's own append (as if the head were forged too): refused by what it records."""
    _holdout(experiment, TEMPLATE)
    log = AuditLog(experiment.folder)
    entries = log.entries()
    frozen = next(e for e in entries if e.event == "challenger frozen").other
    opened = next(e for e in entries if e.event == "holdout opened").other
    for event, fields in steps:
        base = {"challenger frozen": frozen, "holdout opened": opened}.get(event, {})
        log.append(event, **{**{k: v for k, v in base.items() if k != "hashes"}, **fields})
    assert main(["audit", "verify", str(experiment.folder)]) == 2
    error = one_line(capsys)
    assert problem in error and "the log was written by hand" in error


@needs_bundled_model
def test_a_gate_killed_before_logging_its_verdict_file_is_not_stuck(experiment, capsys) -> None:
    """The verdict file written, the entry naming it not (killed between): the next gate writes both again."""
    _holdout(experiment, TEMPLATE)
    assert main(["gate", str(experiment.folder)]) == 1
    first = capsys.readouterr().out
    [gates] = (experiment.folder / "runs").glob("holdout-*/scores/gates.json")
    gates.write_text(gates.read_text(encoding="utf-8").replace('"caveat"', '"caveat" ', 1), encoding="utf-8")
    assert main(["audit", "verify", str(experiment.folder)]) == 2
    assert "'ablate gate EXP' writes it again" in one_line(capsys)
    assert main(["gate", str(experiment.folder)]) == 1
    assert capsys.readouterr().out.split("audit head")[0] == first.split("audit head")[0]
    assert main(["audit", "verify", str(experiment.folder)]) == 0


# --- 2. A stability outcome is judged again from its reruns' files -------------------------------------------------


@needs_bundled_model
def test_a_measured_stability_outcome_is_recomputed_from_its_reruns_and_promotes(
    experiment, tmp_path: Path, capsys
) -> None:
    summary = _holdout(experiment, _gates(tmp_path))
    reruns = [_rerun(experiment, seed) for seed in (1, 2, 3)]
    _stability_entry(experiment, summary.folder, reruns, [PROMOTE] * 4)
    assert main(["gate", str(experiment.folder)]) == 0
    out = capsys.readouterr().out
    assert "0 of 3 reruns" in out and out.strip().endswith("verdict (holdout): PROMOTE")
    assert "audit head: " in out and "openings of this test content known on this machine: 1 protocol record" in out


@needs_bundled_model
def test_a_stability_entry_whose_verdicts_are_not_its_reruns_is_refused(experiment, tmp_path: Path, capsys) -> None:
    summary = _holdout(experiment, _gates(tmp_path))
    flipped = {rid: _without_negation() for rid in HOLDOUT}  # rerun 2 loses a negation: its verdict is RETAIN
    reruns = [_rerun(experiment, 1), _rerun(experiment, 2, words=flipped), _rerun(experiment, 3)]
    _stability_entry(experiment, summary.folder, reruns, [PROMOTE] * 4)  # claims no flip
    assert main(["gate", str(experiment.folder)]) == 2
    error = one_line(capsys)
    assert f"records the verdict {PROMOTE} for run holdout-dither-2, but that run's files give {RETAIN}" in error


@needs_bundled_model
def test_each_seeds_first_logged_outcome_stands(experiment, tmp_path: Path, capsys) -> None:
    """A flip logged once is not laundered by a later check: seed 2's first entry judged RETAIN."""
    summary = _holdout(experiment, _gates(tmp_path))
    flipped = {rid: _without_negation() for rid in HOLDOUT}
    first = [_rerun(experiment, 1), _rerun(experiment, 2, words=flipped)]
    _stability_entry(experiment, summary.folder, first, [PROMOTE, PROMOTE, RETAIN])
    third = _rerun(experiment, 3)
    _stability_entry(experiment, summary.folder, [*first, third], [PROMOTE, PROMOTE, RETAIN, PROMOTE])
    assert main(["gate", str(experiment.folder)]) == 1
    assert "1 of 3 reruns" in capsys.readouterr().out


@needs_bundled_model
@pytest.mark.parametrize("attack", ["no hashes", "missing reruns", "planted reruns", "edited rerun", "other seed"])
def test_a_stability_entry_naming_missing_planted_or_edited_reruns_is_refused(
    experiment, tmp_path: Path, capsys, attack: str
) -> None:
    """Even written through the log's own append (so the head holds it), the entry is not taken on its word."""
    summary = _holdout(experiment, _gates(tmp_path))
    reruns = [_rerun(experiment, seed, recorded=attack != "planted reruns") for seed in (1, 2, 3)]
    if attack == "other seed":
        record = json.loads(reruns[2].record.read_text(encoding="utf-8"))
        record["config"]["dither"]["seed"] = 7
        reruns[2].record.write_text(json.dumps(record), encoding="utf-8")
    extra = {"hashes": []} if attack == "no hashes" else {}
    _stability_entry(experiment, summary.folder, reruns, [PROMOTE] * 4, **extra)
    if attack == "missing reruns":
        shutil.rmtree(reruns[1].root)
    if attack == "edited rerun":
        hypothesis = reruns[0].hypothesis_json("vad", "h1")
        hypothesis.write_text(hypothesis.read_text(encoding="utf-8").replace('"eu"', '"nós"'), encoding="utf-8")
    if attack == "no hashes":  # not evidence: not counted, so the pre-registered reruns were never measured
        assert main(["gate", str(experiment.folder)]) == 1
        assert "not measured, 3 pre-registered" in capsys.readouterr().out
        return
    assert main(["gate", str(experiment.folder)]) == 2
    error = one_line(capsys)
    expected = {
        "missing reruns": "runs/holdout-dither-2/",
        "planted reruns": "never recorded in the audit log when it was made",
        "edited rerun": "holdout-dither-1/hypotheses/vad/h1.json",
        "other seed": "is named as the rerun with dither seed 3",
    }[attack]
    assert expected in error


# --- 3. A holdout is one holdout wherever its content lives ---------------------------------------------------------


def _refrozen_elsewhere(experiment, tmp_path: Path) -> object:
    """The attacker's copy: the same audio, references and splits in a new folder, frozen into a new manifest."""
    corpus, copy = experiment.folder / "corpus", tmp_path / "elsewhere" / "corpus"
    for part in ("audio", "refs"):
        shutil.copytree(corpus / part, copy / part)
    shutil.copyfile(corpus / "splits.csv", copy / "splits.csv")
    freeze(copy / "audio", copy / "refs", copy / "manifest.json", splits_csv=copy / "splits.csv")
    assert (
        json.loads((copy / "manifest.json").read_text())["recordings"]
        == json.loads((corpus / "manifest.json").read_text())["recordings"]
    )
    return load_experiment(make_experiment(tmp_path / "elsewhere", "corpus/manifest.json"))


@needs_bundled_model
def test_the_same_audio_frozen_again_elsewhere_does_not_reopen_the_holdout(experiment, tmp_path: Path, capsys) -> None:
    _holdout(experiment, TEMPLATE)
    other = _refrozen_elsewhere(experiment, tmp_path)
    freeze_challenger(other, "windows", TEMPLATE)
    assert main(["run", str(other.folder), "--split", "holdout"]) == 2
    error = one_line(capsys)
    assert f"by experiment {experiment.folder.resolve()} for challenger 'vad'" in error
    assert "a second challenger on opened test data needs fresh test data" in error
    assert not (other.folder / "runs").exists()


@needs_bundled_model
@pytest.mark.parametrize("deleted", ["beside the manifest", "the machine's"])
def test_a_deleted_ledger_reopens_nothing_and_the_gate_restores_it(
    experiment, tmp_path: Path, capsys, machine_openings: Path, deleted: str
) -> None:
    _holdout(experiment, TEMPLATE)
    ledger = ledger_path(experiment.manifest_path) if deleted == "beside the manifest" else machine_openings
    ledger.unlink()
    other = load_experiment(make_experiment(tmp_path / "other", experiment.manifest_path))
    freeze_challenger(other, "windows", TEMPLATE)
    assert main(["run", str(other.folder), "--split", "holdout"]) == 2
    assert "a second challenger on opened test data needs fresh test data" in one_line(capsys)
    assert ledger.is_file()  # the refusal gave the deleted ledger back what the other held
    ledger.write_bytes(b"")  # emptied, this time
    assert main(["gate", str(experiment.folder)]) in (0, 1)
    out = capsys.readouterr().out
    assert f"restored from the audit log into {ledger}, which had lost it" in out
    assert json.loads(ledger.read_text(encoding="utf-8"))["challenger"] == "vad"


@needs_bundled_model
def test_pointing_the_machine_ledger_elsewhere_reopens_nothing_the_users_holds(
    experiment, tmp_path: Path, capsys, monkeypatch
) -> None:
    """$ABLATE_OPENINGS naming an empty file: the user's own ledger (in their cache) is still read, never written."""
    from toolkit.asr.models import cache_dir, resolve_model
    from toolkit.protocol.ledger import MACHINE_LEDGER_ENV, default_machine_ledger

    resolve_model("whisper-base")  # built in the real cache, which the user's cache below links to
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "models").symlink_to(cache_dir())
    monkeypatch.setenv("ABLATE_CACHE", str(cache))
    monkeypatch.delenv(MACHINE_LEDGER_ENV)
    _holdout(experiment, TEMPLATE)
    assert default_machine_ledger().is_file() and default_machine_ledger().is_relative_to(cache)
    other = _refrozen_elsewhere(experiment, tmp_path)
    freeze_challenger(other, "windows", TEMPLATE)
    empty = tmp_path / "empty-openings.jsonl"
    monkeypatch.setenv(MACHINE_LEDGER_ENV, str(empty))
    assert main(["run", str(other.folder), "--split", "holdout"]) == 2
    error = one_line(capsys)
    assert str(default_machine_ledger()) in error and f"by experiment {experiment.folder.resolve()}" in error
    assert not empty.read_bytes()  # read, refused, nothing written


# --- 4. Every file the verdict rests on is re-verified ---------------------------------------------------------------


@needs_bundled_model
def test_a_flipped_byte_in_a_holdout_wav_stops_the_gate_and_audit_verify(experiment, tmp_path: Path, capsys) -> None:
    _holdout(experiment, TEMPLATE)
    wav = experiment.folder / "corpus" / "audio" / "h2.wav"
    data = bytearray(wav.read_bytes())
    data[len(data) // 2] ^= 0x01
    wav.write_bytes(bytes(data))
    for command in (["gate", str(experiment.folder)], ["audit", "verify", str(experiment.folder)]):
        assert main(command) == 2
        error = one_line(capsys)
        assert error.startswith(f"ablate: error: {wav}: sha256 differs") and "the verdict rests on" in error


@needs_bundled_model
def test_an_edited_run_record_stops_the_gate_and_audit_verify(experiment, tmp_path: Path, capsys) -> None:
    summary = _holdout(experiment, TEMPLATE)
    record = json.loads(summary.folder.record.read_text(encoding="utf-8"))
    record["recordings"] = ["h1", "h2"]  # the same content, written again: any byte counts
    record["finished"] = "2026-11-30T00:02:00+00:00"
    summary.folder.record.write_text(json.dumps(record), encoding="utf-8")
    for command in (["gate", str(experiment.folder)], ["audit", "verify", str(experiment.folder)]):
        assert main(command) == 2
        assert "records file runs/holdout-constructed/run.json with sha256" in one_line(capsys)


# --- 5. A published head catches a log rewritten whole -------------------------------------------------------------


@needs_bundled_model
def test_a_published_head_catches_a_log_rewritten_whole(experiment, capsys) -> None:
    assert main(["challenger", "freeze", str(experiment.folder), "--arm", "vad", "--gates", str(TEMPLATE)]) == 0
    out = capsys.readouterr().out
    published = out.split("audit head: ")[1].split()[0]
    log = AuditLog(experiment.folder)
    assert published == log.published_head() and published.startswith(f"{len(log.entries())}:")
    log.append("tuning run", run="later")  # the log grows after publishing: still holds the published head
    assert main(["audit", "verify", str(experiment.folder), "--head", published]) == 0
    out = capsys.readouterr().out
    assert f"the published head {published} is entry" in out and "since it: 1 entries (tuning run)" in out
    # The whole chain rewritten with its head (what no local tool can tell): the freeze entry says another arm.
    lines = [json.loads(line) for line in log.path.read_text(encoding="utf-8").splitlines()]
    log.path.unlink()
    log.head.unlink()
    for data in lines:
        fields = {k: v for k, v in data.items() if k not in ("seq", "time", "event", "prev_sha256")}
        AuditLog(experiment.folder).append(data["event"], **fields, note="rewritten")
    assert main(["audit", "verify", str(experiment.folder)]) == 0
    capsys.readouterr()
    assert main(["audit", "verify", str(experiment.folder), "--head", published]) == 2
    assert "the log was rewritten since that head was published" in one_line(capsys)
    assert main(["audit", "verify", str(experiment.folder), "--head", "12:xyz"]) == 2
    assert "is not a published head" in one_line(capsys)


# --- 6. Gates no value can pass, and the demo's protocol record ------------------------------------------------------


@needs_bundled_model
@pytest.mark.parametrize("gate, threshold", [("onset_p95_s", -0.1), ("drift_s_per_min", -1), ("new_name_errors", -1)])
def test_a_threshold_no_value_can_pass_is_refused_at_freeze(
    experiment, tmp_path: Path, capsys, gate: str, threshold: float
) -> None:
    text = TEMPLATE.read_text(encoding="utf-8")
    start = text.index(f"[{gate}]")
    end = text.index("\n[", start + 1)
    gates = tmp_path / "impossible.toml"
    impossible = f"[{gate}]\napplicable = true\nthreshold = {threshold}\n"
    gates.write_text(text[:start] + impossible + text[end:], encoding="utf-8")
    assert main(["challenger", "freeze", str(experiment.folder), "--arm", "vad", "--gates", str(gates)]) == 2
    assert f"key '{gate}.threshold' must be" in one_line(capsys)
    assert not (experiment.folder / "protocol").exists()


def test_the_demo_never_sets_an_opened_record_aside_for_a_side_file(tmp_path: Path, capsys) -> None:
    from toolkit.cli.demo import VERSION_EVENT, _protocol_for_this_version

    folder = make_experiment(tmp_path / "exp", make_corpus(tmp_path / "corpus", {"a": "tuning"}))
    experiment = load_experiment(folder)
    _protocol_for_this_version(experiment)  # the first demo: the version its record is for, in the log
    log = AuditLog(folder)
    log.append("holdout opened", split="holdout")
    (folder / "protocol" / "demo_experiment.sha256").write_text("0ld\n", encoding="utf-8")  # the old side file
    _protocol_for_this_version(experiment)
    assert not list(tmp_path.glob("exp/protocol-before-*"))
    assert [e.event for e in log.entries()] == [VERSION_EVENT, "holdout opened"]
    # A new version of the demo (one more arm) starts a new record; the old one is kept aside, log and all.
    with (folder / "experiment.toml").open("a", encoding="utf-8") as handle:
        handle.write("extra = []\n")
    _protocol_for_this_version(load_experiment(folder))
    [kept] = tmp_path.glob("exp/protocol-before-*")
    assert [e.event for e in AuditLog(folder).entries()] == [VERSION_EVENT]
    assert "kept in" in capsys.readouterr().out and (kept / "audit.jsonl").is_file()
    # A log edited by hand stops the demo instead of being set aside.
    AuditLog(folder).path.write_text('{"event": "holdout opened"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="audit.jsonl"):
        _protocol_for_this_version(load_experiment(folder))


@needs_bundled_model
def test_a_gate_killed_at_any_moment_leaves_a_log_the_next_gate_resumes_from(experiment, tmp_path: Path) -> None:
    """kill -9 during ``ablate gate`` at several moments: the log verifies (after ``audit repair`` when a line was
    torn, the one state only repair may mend), and the next gate gives the verdict the first would have."""
    import subprocess
    import sys
    import time

    _holdout(experiment, TEMPLATE)
    folder = str(experiment.folder)
    gate = [sys.executable, "-m", "toolkit", "gate", folder]
    env = dict(os.environ)  # this test's machine ledger included
    begin = time.perf_counter()
    whole = subprocess.run(gate, env=env, capture_output=True, text=True)
    took = time.perf_counter() - begin
    assert whole.returncode == 1, whole.stderr
    for fraction in (0.3, 0.5, 0.7, 0.85, 0.95):  # spread over what one gate takes here
        delay = fraction * took
        child = subprocess.Popen(gate, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        child.kill()
        child.wait()
        repaired = subprocess.run([sys.executable, "-m", "toolkit", "audit", "repair", folder], env=env)
        assert repaired.returncode == 0
        assert subprocess.run([sys.executable, "-m", "toolkit", "audit", "verify", folder], env=env).returncode == 0
    final = subprocess.run(gate, env=env, capture_output=True, text=True)
    assert final.returncode == 1 and "verdict (holdout): RETAIN BASELINE" in final.stdout, final.stderr
    assert final.stdout.split("audit head")[0] == whole.stdout.split("audit head")[0]  # the same verdict, word for word
    assert subprocess.run([sys.executable, "-m", "toolkit", "audit", "verify", folder], env=env).returncode == 0
