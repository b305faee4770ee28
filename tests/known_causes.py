"""A constructed run whose every change has a known cause: a VAD cut, a seam, a word invented in
confirmed non-speech, a fallback segment, a form-only difference, recognition, and two fixes (one by
the arm's VAD). Shared by the explanation and report tests."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from protocol_corpus import correct, make_corpus, make_experiment, make_run, turns

from toolkit.core.transcripts import Interval, Reference, Word
from toolkit.corpus.freeze import freeze
from toolkit.formats import write_reference_textgrid
from toolkit.pipeline.experiment import Experiment, load_experiment
from toolkit.runs.folder import RunFolder

EXPECTED = {
    "vad cut": {"regressions": 1, "fixes": 1, "net": 0},
    "seam": {"regressions": 1, "fixes": 0, "net": 1},
    "non-speech": {"regressions": 1, "fixes": 0, "net": 1},
    "fallback": {"regressions": 1, "fixes": 0, "net": 1},
    "formatting": {"regressions": 1, "fixes": 0, "net": 1},
    "recognition": {"regressions": 1, "fixes": 1, "net": 0},
}


def _with(words: list[Word], **edits: str | None) -> list[Word]:
    """Words with some replaced (a new text) or deleted (None)."""
    out = []
    for word in words:
        new = edits.get(word.text, word.text)
        if new is not None:
            out.append(replace(word, text=new))
    return out


def known_causes_run(
    root: Path, split: str = "tuning", *, number_at_seam: bool = False
) -> tuple[Experiment, RunFolder]:
    """An experiment (arms baseline and vad) and its run of recording r1 on ``split``, causes as EXPECTED;
    ``number_at_seam``: the arm also writes "seis" for "cinco" by the seam (one more seam regression,
    a new number error)."""
    manifest = make_corpus(root / "corpus", {"r1": split})
    utterances = turns()
    textgrid = root / "corpus" / "refs" / "r1.TextGrid"
    speech = [Interval(u.start, u.end, "speech") for u in utterances]
    write_reference_textgrid(
        Reference("r1", utterances, speech=[*speech, Interval(4.0, 5.0, "nonspeech")]), textgrid, 13.0
    )
    manifest.unlink()
    freeze(root / "corpus" / "audio", root / "corpus" / "refs", manifest, splits_csv=root / "corpus" / "splits.csv")
    experiment = load_experiment(make_experiment(root / "exp", manifest, 'baseline = []\nvad = ["vad"]\n'))
    words = correct(utterances)
    arm = _with(words, sair=None, comprou=None, livros="livro", sabia="sábia", documento="momento")
    arm = _with(arm, cinco="seis") if number_at_seam else arm
    arm.insert(6, Word("hum", 4.3, 4.5))  # invented in the confirmed non-speech between the first two turns
    baseline = _with(words, onde="ande")  # which the arm gets right: a fix
    baseline.append(Word("sim", 12.3, 12.5))  # invented where the arm's VAD kept the audio out: a fix by VAD
    folder = make_run(
        experiment.folder / "runs" / f"{split}-constructed",
        manifest,
        split,
        {"baseline": {"r1": baseline}, "vad": {"r1": arm}},
        experiment=experiment,
    )
    output = json.loads(folder.arm_output("vad", "r1").read_text(encoding="utf-8"))
    output |= {
        "vad_segments": [[0.9, 2.25], [2.7, 12.1]],  # cuts "sair" (2.29-2.67)
        "seams": [{"index": 0, "start": 5.8, "end": 5.9}],  # within a second of "comprou" (5.75-6.08)
        "segments": [{"start": 7.0, "end": 7.8, "temperature": 0.4, "outcome": "fallback"}],  # over "livros"
    }
    folder.arm_output("vad", "r1").write_text(json.dumps(output), encoding="utf-8")
    return experiment, folder
