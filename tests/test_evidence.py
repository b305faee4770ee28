"""Evidence that cannot be laundered: each way a careful adversarial user changed a result after the
holdout opened, and the toolkit's one-line refusal (exit 2). Constructed runs (real files, no decoding)
registered through the same calls the CLI makes; the rerun that resumes a real holdout run is in
test_protocol_end_to_end.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import soundfile
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
from toolkit.corpus.freeze import freeze
from toolkit.pipeline.engine import RunSummary
from toolkit.pipeline.experiment import load_experiment
from toolkit.protocol.audit import AuditLog, verify
from toolkit.protocol.challenger import freeze_challenger
from toolkit.protocol.evidence import EvidenceChanged, EvidenceGuard, recorded_evidence
from toolkit.protocol.gates import zero_failure_bound
from toolkit.protocol.gates_file import TEMPLATE
from toolkit.protocol.lock import protocol_lock
from toolkit.protocol.state import current_hash
from toolkit.protocol.testsplit import open_test_split, record_run

SPLITS = {"t1": "tuning", "h1": "holdout", "h2": "holdout"}


@pytest.fixture()
def experiment(tmp_path: Path):
    return own_corpus_experiment(tmp_path / "exp", SPLITS)


def _holdout(experiment) -> RunSummary:
    return constructed_holdout(experiment, [rid for rid, split in SPLITS.items() if split == "holdout"])


@needs_bundled_model
def test_an_edited_result_is_never_reused_or_recorded_again(experiment, capsys) -> None:
    summary = _holdout(experiment)
    hypothesis = summary.folder.hypothesis_json("vad", "h1")
    hypothesis.write_text(hypothesis.read_text(encoding="utf-8").replace('"eu"', '"nós"'), encoding="utf-8")
    guard = EvidenceGuard(experiment.folder, "holdout", recorded_evidence(AuditLog(experiment.folder)))
    with pytest.raises(EvidenceChanged, match="holdout evidence changed since the audit log recorded it"):
        guard.adopt(summary.folder, "vad", "h1", "constructed-vad-h1")  # what a resumed run asks first
    before = len(AuditLog(experiment.folder).entries())
    with pytest.raises(EvidenceChanged) as raised:
        record_run(experiment, "holdout", summary)  # what a rerun's end would record: refused, logged, nothing new
    assert str(hypothesis) in str(raised.value)
    assert [e.event for e in AuditLog(experiment.folder).entries()[before:]] == ["refusal"]
    assert main(["gate", str(experiment.folder)]) == 2
    assert "evidence runs/holdout-constructed/hypotheses/vad/h1.json" in one_line(capsys)
    assert main(["audit", "verify", str(experiment.folder)]) == 2


@needs_bundled_model
def test_a_result_made_by_other_code_is_not_mixed_into_the_verdict(experiment) -> None:
    summary = _holdout(experiment)
    guard = EvidenceGuard(experiment.folder, "holdout", recorded_evidence(AuditLog(experiment.folder)))
    assert guard.adopt(summary.folder, "vad", "h1", "constructed-vad-h1")  # unchanged: reused
    with pytest.raises(EvidenceChanged, match="made by other code or configuration"):
        guard.adopt(summary.folder, "vad", "h1", "what-this-version-computes")


@needs_bundled_model
def test_two_code_versions_in_one_holdout_run_are_refused_by_the_gate(experiment, capsys) -> None:
    freeze_challenger(experiment, "vad", TEMPLATE)
    open_test_split(experiment, "holdout", None)
    words = {rid: correct(turns()) for rid in ("h1", "h2")}
    folder = make_run(
        experiment.folder / "runs" / "holdout-mixed",
        experiment.manifest_path,
        "holdout",
        {"baseline": words, "vad": words},
        experiment=experiment,
    )
    output = json.loads(folder.arm_output("vad", "h2").read_text(encoding="utf-8"))
    folder.arm_output("vad", "h2").write_text(json.dumps({**output, "code": "another"}), encoding="utf-8")
    record_run(experiment, "holdout", RunSummary(folder, "holdout", ["baseline", "vad"], ["h1", "h2"], 4, 0))
    assert main(["gate", str(experiment.folder)]) == 2
    assert "results of two code versions are never mixed in one verdict" in one_line(capsys)


@needs_bundled_model
def test_the_gate_judges_the_experiments_own_files_from_any_folder_and_from_a_copy(
    experiment, tmp_path: Path, capsys, monkeypatch
) -> None:
    _holdout(experiment)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code = main(["gate", str(experiment.folder)])
    assert code in (0, 1)
    capsys.readouterr()
    copy = tmp_path / "copy"
    shutil.copytree(experiment.folder, copy)
    assert main(["gate", str(copy)]) == code  # the copy judges its own (identical) files
    capsys.readouterr()
    reference = copy / "corpus" / "refs" / "h1.TextGrid"
    reference.write_text(reference.read_text(encoding="utf-8").replace("Maria", "Marta"), encoding="utf-8")
    assert main(["gate", str(copy)]) == 2
    error = one_line(capsys)
    assert str(reference) in error and "sha256" in error  # the copy's edited reference, not the original's
    assert main(["gate", str(experiment.folder)]) == code


@needs_bundled_model
def test_a_deleted_audit_log_does_not_reopen_the_holdout(experiment, capsys) -> None:
    _holdout(experiment)
    for name in ("audit.jsonl", "audit.head"):
        (experiment.folder / "protocol" / name).unlink()
    assert main(["challenger", "freeze", str(experiment.folder), "--arm", "windows", "--gates", str(TEMPLATE)]) == 2
    assert "a frozen challenger is here but the audit log does not record it" in one_line(capsys)
    assert main(["run", str(experiment.folder), "--split", "holdout"]) == 2
    assert "the audit log does not record it" in one_line(capsys)
    assert main(["audit", "verify", str(experiment.folder)]) == 2
    assert "the audit log does not record it" in one_line(capsys)
    (experiment.folder / "protocol" / "challenger.json").unlink()
    assert main(["challenger", "freeze", str(experiment.folder), "--arm", "windows", "--gates", str(TEMPLATE)]) == 2
    assert "a holdout run is here but the audit log does not record it" in one_line(capsys)


@needs_bundled_model
def test_a_re_encoded_holdout_is_the_same_holdout(experiment, tmp_path: Path, capsys) -> None:
    _holdout(experiment)
    corpus = experiment.folder / "corpus"
    flac = experiment.folder / "flac"
    shutil.copytree(corpus / "refs", flac / "refs")
    for wav in (corpus / "audio").glob("*.wav"):
        samples, rate = soundfile.read(wav, dtype="int16")
        (flac / "audio").mkdir(parents=True, exist_ok=True)
        soundfile.write(flac / "audio" / f"{wav.stem}.flac", samples, rate, subtype="PCM_16")
    freeze(flac / "audio", flac / "refs", flac / "manifest.json", splits_csv=corpus / "splits.csv")
    path = experiment.path
    path.write_text(path.read_text(encoding="utf-8").replace("corpus/manifest.json", "flac/manifest.json"))
    assert main(["challenger", "freeze", str(experiment.folder), "--arm", "windows", "--gates", str(TEMPLATE)]) == 2
    error = one_line(capsys)
    assert "was already opened for challenger 'vad'" in error and "by audio content" in error


@needs_bundled_model
def test_a_second_experiment_on_the_same_manifest_cannot_open_the_same_holdout(experiment, tmp_path, capsys) -> None:
    _holdout(experiment)
    other = load_experiment(make_experiment(tmp_path / "other", experiment.manifest_path))
    freeze_challenger(other, "windows", TEMPLATE)
    assert main(["run", str(other.folder), "--split", "holdout"]) == 2
    error = one_line(capsys)
    assert "test-openings.jsonl" in error and f"by experiment {experiment.folder.resolve()}" in error
    assert "a second challenger on opened test data needs fresh test data" in error


@needs_bundled_model
def test_one_protocol_command_at_a_time(experiment, capsys) -> None:
    freeze_challenger(experiment, "vad", TEMPLATE)
    with protocol_lock(experiment.folder, "ablate run --split holdout"):
        assert main(["run", str(experiment.folder), "--split", "holdout"]) == 2
        assert "holds the protocol of this experiment" in one_line(capsys)
    assert not [e for e in AuditLog(experiment.folder).entries() if e.event == "holdout opened"]


@pytest.fixture()
def full_disk(tmp_path: Path):
    """A 256 KiB tmpfs, mounted here (root only) and removed after."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.decode().strip() or 'not root'})")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_leaves_the_audit_log_whole_and_usable(full_disk: Path, capsys) -> None:
    exp = full_disk / "exp"
    (exp / "protocol").mkdir(parents=True)
    (exp / "experiment.toml").write_text("", encoding="utf-8")
    log = AuditLog(exp)
    for k in range(3):
        log.append("tuning run", note=f"entry {k}")
    size = log.path.stat().st_size
    filler = full_disk / "filler"
    try:  # fill the disk to the last block
        with open(filler, "wb") as handle:
            while True:
                handle.write(b"\0" * 4096)
                handle.flush()
    except OSError:
        pass
    with pytest.raises(
        InputError, match=r"could not append entry 4 \(.*No space left on device\)+; the file is unchanged"
    ):
        log.append("challenger frozen", note="x" * 20000)
    assert log.path.stat().st_size == size and verify(log, None) == 3
    filler.unlink()
    log.append("challenger frozen", note="after space was freed")
    assert verify(log, None) == 4


def test_a_line_torn_by_a_crash_is_named_and_only_repair_drops_it(experiment, capsys) -> None:
    log = AuditLog(experiment.folder)
    log.append("tuning run", run="a")
    with open(log.path, "ab") as handle:
        handle.write(b'{"seq": 2, "event": "challenger fro')  # a process killed mid-write
    assert main(["audit", "verify", str(experiment.folder)]) == 2
    assert "entry 2 is torn (a crash mid-write); run 'ablate audit repair EXP'" in one_line(capsys)
    with pytest.raises(InputError, match="torn"):
        log.append("tuning run", run="b")
    assert main(["audit", "repair", str(experiment.folder)]) == 0
    assert "dropped a torn last line of 35 bytes" in capsys.readouterr().out
    assert [e.event for e in log.entries()] == ["tuning run", "log repaired"]
    assert main(["audit", "verify", str(experiment.folder)]) == 0
    assert main(["audit", "repair", str(experiment.folder)]) == 0
    assert "nothing to repair" in capsys.readouterr().out


def test_a_malformed_log_or_head_is_one_line(experiment, capsys) -> None:
    log = AuditLog(experiment.folder)
    log.append("tuning run", run="a")
    log.head.write_text("[1, 2]", encoding="utf-8")
    assert main(["audit", "verify", str(experiment.folder)]) == 2
    assert "audit.head: the file must be a JSON object, not list" in one_line(capsys)
    log.path.write_bytes(b"[1,2]\n")
    assert main(["audit", "verify", str(experiment.folder)]) == 2
    assert "entry 1 is not a JSON object line" in one_line(capsys)
    log.path.write_bytes(b'{"seq": 1, "event": "\xff"}\n')
    assert main(["audit", "verify", str(experiment.folder)]) == 2
    assert "entry 1 is not a JSON object line" in one_line(capsys)


def test_audit_verify_refuses_a_folder_that_is_not_an_experiment(tmp_path: Path, capsys) -> None:
    assert main(["audit", "verify", str(tmp_path / "nonexistent" / "exp")]) == 2
    assert "not an experiment folder (no experiment.toml here)" in one_line(capsys)


@needs_bundled_model
def test_gates_the_holdout_references_can_never_measure_are_refused_at_freeze(tmp_path: Path, capsys) -> None:
    manifest = make_corpus(tmp_path / "corpus", SPLITS)
    refs = tmp_path / "corpus" / "refs"
    for textgrid in refs.glob("h*.TextGrid"):  # the holdout as plain text: no times at all
        from toolkit.formats import read_reference

        (refs / f"{textgrid.stem}.txt").write_text(read_reference(textgrid).text + "\n", encoding="utf-8")
        textgrid.unlink()
    manifest.unlink()
    freeze(tmp_path / "corpus" / "audio", refs, manifest, splits_csv=tmp_path / "corpus" / "splits.csv")
    experiment = make_experiment(tmp_path / "exp", manifest)
    assert main(["challenger", "freeze", str(experiment), "--arm", "vad", "--gates", str(TEMPLATE)]) == 2
    error = one_line(capsys)
    assert "gate onset_p95_s can never be measured on the holdout: it needs timed reference words" in error
    assert not (experiment / "protocol" / "challenger.json").exists()
    declared = tmp_path / "gates.toml"
    text = TEMPLATE.read_text(encoding="utf-8")
    for gate in ("onset_p95_s", "drift_s_per_min", "vad_speech_recall"):
        start = text.index(f"[{gate}]")
        end = text.index("\n[", start + 1) if "\n[" in text[start + 1 :] else len(text)
        text = text[:start] + f'[{gate}]\napplicable = false\nreason = "plain-text references"\n' + text[end:]
    declared.write_text(text, encoding="utf-8")
    assert main(["challenger", "freeze", str(experiment), "--arm", "vad", "--gates", str(declared)]) == 0


def test_the_zero_failure_bound_is_exact_and_says_when_nothing_is_bounded() -> None:
    assert zero_failure_bound(0, 0) == "0 opportunities: this gate tested nothing"
    assert zero_failure_bound(0, 1) == "0 failures in 1: too few to bound the failure rate (95% upper bound 95.0%)"
    assert zero_failure_bound(0, 29) == "0 failures in 29: exact one-sided 95% upper bound on the failure rate 9.8%"
    assert zero_failure_bound(1, 29) is None
    for n in range(1, 200):  # never above 100%, always above the true bound's large-n approximation 3/n - ...
        assert 0 < 1 - 0.05 ** (1 / n) <= 0.95


@needs_bundled_model
def test_a_changed_challenger_is_refused_naming_the_experiment_file(experiment, capsys) -> None:
    _holdout(experiment)
    path = experiment.path
    text = path.read_text(encoding="utf-8")
    changed = re.sub(
        r"(\[vad_profiles\.demo\]\n(?:[^\[\n]*\n)*?)threshold = 0\.5\n", r"\1threshold = 0.45\n", text, count=1
    )
    assert changed != text  # the challenger's VAD threshold (its Silero profile), whatever comments the file holds
    path.write_text(changed, encoding="utf-8")
    assert main(["gate", str(experiment.folder)]) == 2
    error = one_line(capsys)
    assert error.startswith(f"ablate: error: {path}: ") and "needs fresh test data" in error


@needs_bundled_model
def test_refreezing_an_identical_challenger_after_the_holdout_points_at_the_gate(experiment, capsys) -> None:
    _holdout(experiment)
    assert main(["challenger", "freeze", str(experiment.folder), "--arm", "vad", "--gates", str(TEMPLATE)]) == 0
    out = capsys.readouterr().out
    assert "already frozen, identical" in out and f"next: ablate gate {experiment.folder}" in out
    assert "--split holdout" not in out


@needs_bundled_model
def test_holdout_hashes_are_checked_on_every_use(experiment) -> None:
    summary = _holdout(experiment)
    assert verify(AuditLog(experiment.folder), current_hash) > 0
    output = summary.folder.arm_output("baseline", "h2")
    os.utime(output)  # touching is not changing
    assert verify(AuditLog(experiment.folder), current_hash) > 0
    output.write_text(output.read_text(encoding="utf-8").replace('"words": []', '"words": [1]'), encoding="utf-8")
    with pytest.raises(InputError, match="records evidence runs/holdout-constructed/outputs/baseline/h2.json"):
        verify(AuditLog(experiment.folder), current_hash)
