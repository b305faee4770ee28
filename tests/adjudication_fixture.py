"""A small experiment with a scored run folder, written as real files (no decoding), for the app's tests.

Two 20 s recordings with TextGrid references (turns, a confirmed non-speech stretch, an
unresolved stretch, a names list), a frozen manifest, the demo experiment file, and a run
folder with three arms whose hypotheses are written by hand: ``vad`` flips a negation and
substitutes a plain word, ``windows`` invents a word in non-speech and has a flagged seam.
The run is scored with the real scorer (``evaluate_run``), so every file the queue reads exists.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from toolkit.adjudication.blindness import BlindPasses
from toolkit.adjudication.store import Decision, DecisionStore
from toolkit.adjudication.users import LEAD, Login
from toolkit.core.files import atomic_write_json
from toolkit.core.transcripts import Hypothesis, Interval, Reference, Utterance, Word
from toolkit.corpus.freeze import freeze
from toolkit.evaluate import evaluate_run
from toolkit.formats import write_hypothesis_json, write_names, write_reference_textgrid
from toolkit.pipeline.disagreement import disagreement_spans, write_disagreements
from toolkit.pipeline.runner import ArmOutput
from toolkit.runs.folder import RunFolder

ROOT = Path(__file__).resolve().parents[1]
DURATION = 20.0
RATE = 16000
TURNS = {
    "entrevista": [
        (1.0, 4.0, "eu não sei se o João vem"),
        (6.0, 9.0, "ele pagou mil e quinhentos reais"),
        (12.0, 15.0, "a casa fica perto do mercado"),
    ],
    "reuniao": [(1.0, 4.0, "a Maria chegou cedo hoje"), (6.0, 9.0, "nós vamos votar amanhã")],
}
# What each arm says per turn (None: the reference text); "entrevista" carries the test cases.
ARM_TEXT = {
    "baseline": {},
    "vad": {("entrevista", 0): "eu sei se o João vem", ("entrevista", 2): "a casa fica perto do mercador"},
    "windows": {},
}
INVENTED = ("entrevista", 17.0, 17.5, "obrigado")  # windows: a word in confirmed non-speech 16-19 s
SEAM = {
    "index": 0,
    "left_window": "w0",
    "right_window": "w1",
    "start": 5.0,
    "end": 6.5,
    "cut_time": 5.7,
    "empty_side": None,
    "kept_left": [],
    "kept_right": [],
    "dropped": [],
    "flags": [{"kind": "disagreement", "detail": "sides disagree", "left": [], "right": []}],
    "review": True,
}


def _timed(start: float, end: float, text: str) -> list[Word]:
    words = text.split()
    step = (end - start) / len(words)
    return [Word(w, round(start + i * step, 3), round(start + (i + 0.8) * step, 3), 0.9) for i, w in enumerate(words)]


def build_experiment(root: Path, score: bool = True, arm_text: dict | None = None) -> Path:
    """Write the experiment under ``root`` and return its folder (``root/exp``); ``arm_text`` replaces
    ``ARM_TEXT`` (what each arm says per turn)."""
    said = ARM_TEXT if arm_text is None else arm_text
    exp = root / "exp"
    corpus = exp / "corpus"
    (corpus / "audio").mkdir(parents=True)
    (corpus / "refs").mkdir()
    rng = np.random.default_rng(0)
    for rid, turns in TURNS.items():
        samples = 0.01 * rng.standard_normal(int(DURATION * RATE))
        t = np.arange(len(samples)) / RATE
        for start, end, _ in turns:
            inside = (t >= start) & (t < end)
            samples[inside] += 0.2 * np.sin(2 * np.pi * 220 * t[inside])
        sf.write(corpus / "audio" / f"{rid}.wav", samples.astype(np.float32), RATE, subtype="PCM_16")
        reference = Reference(
            rid,
            [Utterance(s, e, text) for s, e, text in turns],
            speech=[Interval(16.0, 19.0, "nonspeech")],
            unresolved=[Interval(10.0, 11.0, "inaudível")],
        )
        write_reference_textgrid(reference, corpus / "refs" / f"{rid}.TextGrid", DURATION)
    write_names(["João", "Maria"], corpus / "refs" / "entrevista.names.txt")
    (corpus / "splits.csv").write_text("id,split\nentrevista,tuning\nreuniao,tuning\n", encoding="utf-8")
    manifest = freeze(corpus / "audio", corpus / "refs", corpus / "manifest.json", splits_csv=corpus / "splits.csv")
    shutil.copyfile(ROOT / "experiments" / "demo" / "experiment.toml", exp / "experiment.toml")
    folder = RunFolder(exp / "runs" / "tuning-fixture")
    arms = [
        {"name": "baseline", "components": [], "variant_of": None},
        {"name": "vad", "components": [{"name": "vad", "stage": "vad", "config": {}}], "variant_of": None},
        {"name": "windows", "components": [{"name": "windows", "stage": "windows", "config": {}}], "variant_of": None},
    ]
    atomic_write_json(
        folder.record,
        {
            "config": {"arms": arms, "experiment": "demo", "recognizers": {}, "primary": "whisper_base"},
            "manifest": {"path": str(corpus / "manifest.json"), "sha256": manifest.sha256},
            "recordings": list(TURNS),
            "split": "tuning",
            "started": "2026-11-30T00:00:00+00:00",
            "measurements": [],
            "status": "complete",
        },
    )
    for rid, turns in TURNS.items():
        words_by_arm = {}
        for arm in said:
            words = [w for k, (s, e, text) in enumerate(turns) for w in _timed(s, e, said[arm].get((rid, k), text))]
            if arm == "windows" and rid == INVENTED[0]:
                words.append(Word(INVENTED[3], INVENTED[1], INVENTED[2], 0.4))
            words_by_arm[arm] = words
            write_hypothesis_json(Hypothesis(rid, words, arm=arm), folder.hypothesis_json(arm, rid))
            output = ArmOutput(words=words, seams=[SEAM] if arm == "windows" else [])
            no_time = {"wall_s": 0.0, "cpu_s": 0.0}
            folder.write_arm_output(
                arm, rid, output.stored(f"fixture-{arm}-{rid}", "fixture", arm, rid, DURATION, no_time)
            )
        for arm in ("vad", "windows"):
            spans = disagreement_spans(words_by_arm["baseline"], words_by_arm[arm])
            write_disagreements(
                spans, folder.disagreements(arm, rid), recording_id=rid, label_a="baseline", label_b=arm
            )
    if score:
        evaluate_run(folder)
    return exp


def excuse(exp: Path, names: list[str], recordings: tuple[str, ...] = ("entrevista", "reuniao")) -> None:
    """A lead excuses ``names`` from the blind pass of ``recordings``: a test of review pages needs them seeing
    model output, which blindness per recording withholds until then."""
    passes = BlindPasses(exp / "adjudication.sqlite")
    for recording in recordings:
        for name in names:
            if not passes.is_closed(name, recording):
                passes.excuse(recording, name, Login("setup", LEAD))


def copy_experiment(built: Path, target: Path) -> Path:
    """A private copy of a built experiment (its run record pointed at the copied manifest)."""
    shutil.copytree(built, target)
    record_path = run_folder(target).record
    record = json.loads(record_path.read_text(encoding="utf-8"))
    record["manifest"]["path"] = str(target / "corpus" / "manifest.json")
    record_path.write_text(json.dumps(record), encoding="utf-8")
    return target


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The experiment, built once per test session (import this fixture with ``exp``)."""
    return build_experiment(tmp_path_factory.mktemp("adjudication"))


@pytest.fixture
def exp(built: Path, tmp_path: Path) -> Path:
    """A private copy of the built experiment, so decisions in one test never reach another."""
    return copy_experiment(built, tmp_path / "exp")


def run_folder(exp: Path) -> RunFolder:
    return RunFolder(exp / "runs" / "tuning-fixture")


def decide(
    store: DecisionStore,
    annotator: str,
    action: str = "keep",
    text: str = "",
    start: float = 1.0,
    end: float = 2.0,
    **extra: Any,
) -> Decision:
    """One decision on span 1-2 s of "rec" (a test's listener, with its own action and text)."""
    return store.record(
        recording_id="rec",
        start=start,
        end=end,
        action=action,
        old_text="eu não sei",
        new_text=text,
        annotator=annotator,
        reference_sha256="r" * 64,
        manifest_sha256="m" * 64,
        **extra,
    )


if __name__ == "__main__":  # build one by hand: python tests/adjudication_fixture.py /tmp/somewhere
    import sys

    print(build_experiment(Path(sys.argv[1])))
    print(json.dumps(sorted(p.name for p in (Path(sys.argv[1]) / "exp").iterdir())))
