"""Every demo arm completes with valid word streams under two CPU instruction sets.

CTranslate2 picks its int8 kernels by instruction set (``CT2_FORCE_CPU_ISA``), so the same audio,
model and seed give other words on another CPU: a new user's AVX-512 machine made the combine arm
write words out of order, where the developers' AVX2 machine did not. Here demo01 goes through
every arm of the demo experiment twice, in separate processes, under this machine's default
instruction set and a second one; both runs must complete with valid streams, the run records
must name the instruction set each used, and the second run must decode afresh (the decode cache
key includes the instruction set). The words may differ: the test prints by how much. Measured on
an AMD EPYC (Zen 4) machine, whose default is AVX2, against forced AVX512, on demo01 (236 words):
0-3 word edits and 26-68 retimed words per arm (2026-12-01).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rapidfuzz.distance import Levenshtein

from toolkit.asr.cpu import FORCE_VARIABLE, ctranslate2_cpu
from toolkit.asr.models import resolve_model
from toolkit.core.wordstream import stream_problems
from toolkit.corpus.freeze import freeze
from toolkit.demo import build_corpus
from toolkit.formats import read_hypothesis

pytestmark = [
    pytest.mark.slow,
    pytest.mark.needs_model,
    pytest.mark.skipif(
        not (shutil.which("RHVoice-test") or shutil.which("espeak-ng")),
        reason="needs a pt-BR synthesizer (RHVoice or espeak-ng) on PATH",
    ),
]
DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml"


def _second_isa(default: str) -> str:
    """Another instruction set this CPU runs: AVX512 where it has it and it is not the default, else AVX2 or GENERIC."""
    flags = Path("/proc/cpuinfo").read_text(encoding="utf-8") if Path("/proc/cpuinfo").exists() else ""
    if default != "AVX512" and " avx512f" in flags:
        return "AVX512"
    return "AVX2" if default not in ("AVX2", "GENERIC") and " avx2" in flags else "GENERIC"


def _run(experiment: Path, isa: str | None) -> Path:
    env = {k: v for k, v in os.environ.items() if k != FORCE_VARIABLE}
    if isa is not None:
        env[FORCE_VARIABLE] = isa
    done = subprocess.run(
        [sys.executable, "-m", "toolkit", "run", str(experiment), "--split", "tuning", "--quiet", "--no-score"],
        env=env,
        capture_output=True,
        text=True,
        timeout=3000,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    folder = Path(done.stdout.split("run: ", 1)[1].split("\n", 1)[0].strip())
    return folder


def test_every_demo_arm_completes_with_valid_streams_under_two_instruction_sets(tmp_path: Path) -> None:
    corpus = build_corpus(tmp_path / "corpus", recordings=1)  # demo01, as `ablate demo` builds it
    recording = corpus.recordings[0]
    splits = tmp_path / "splits.csv"
    splits.write_text(f"id,split\n{recording.recording_id},tuning\n", encoding="utf-8")
    freeze(
        tmp_path / "corpus" / "audio",
        tmp_path / "corpus" / "refs",
        tmp_path / "corpus" / "manifest.json",
        splits_csv=splits,
    )
    shutil.copy(DEMO, tmp_path / "experiment.toml")

    default = ctranslate2_cpu(resolve_model("whisper-base").path, "int8")["isa"]
    assert default is not None
    second = _second_isa(default)
    folders = {default: _run(tmp_path, None), second: _run(tmp_path, second)}
    assert len(set(folders.values())) == 2  # the instruction set is part of the run, so each has its own folder

    words: dict[str, dict[str, list]] = {}
    for isa, folder in folders.items():
        record = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        assert record["status"] == "complete" and record["arm_failures"] == [] and record["failures"] == []
        assert {r["isa"] for r in record["config"]["recognizer_runtime"].values()} == {isa}
        arms = [arm["name"] for arm in record["config"]["arms"]]
        words[isa] = {}
        for arm in arms:
            hypothesis = read_hypothesis(folder / "hypotheses" / arm / f"{recording.recording_id}.json")
            assert [str(p) for p in stream_problems(hypothesis.words, recording.duration)] == [], (isa, arm)
            words[isa][arm] = hypothesis.words
    second_record = json.loads((folders[second] / "run.json").read_text(encoding="utf-8"))
    assert second_record["reuse"]["decode"]["computed"] > 0  # no decode handed over from the first instruction set

    report = []
    for arm, first_words in words[default].items():
        other = words[second][arm]
        changed = Levenshtein.distance([w.text for w in first_words], [w.text for w in other])
        moved = sum(a.text == b.text and (a.start, a.end) != (b.start, b.end) for a, b in zip(first_words, other))
        report.append(f"{arm}: {changed} word edits of {len(first_words)}, {moved} same-position words retimed")
    print(f"\n{default} against {second} on {recording.recording_id}:\n  " + "\n  ".join(report))
