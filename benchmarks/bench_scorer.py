"""Scorer benchmark: a 60-minute-sized pt-BR pair (~9,000 reference words, ~12% WER) with every metric.

Times ``score_recording`` (three normalization policies, alignment, CER, audits, non-speech,
timing, VAD; then again with the time-constrained diagnosis) against bare
``jiwer.process_words`` + ``jiwer.cer`` on the same raw texts, and prints the ratio.
Run: ``.venv/bin/python benchmarks/bench_scorer.py [--repeats N]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

import jiwer

from toolkit.core.transcripts import Hypothesis, Interval, Reference, Utterance, Word
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.score import score_recording

COMMON = (
    "de a o que e do da em um para é com não uma os no se na por mais as dos como mas foi ao ele "
    "das tem à seu sua ou ser quando muito há nos já está eu também só pelo pela até isso ela entre "
    "era depois sem mesmo aos ter seus quem nas me esse eles estão você tinha foram essa num nem "
    "suas meu às minha têm numa pelos elas havia seja qual será nós tenho lhe deles essas esses "
    "pelas este fosse dele tu te vocês vos lhes meus minhas teu tua teus tuas nosso nossa nossos "
    "nossas dela delas esta estes estas aquele aquela aqueles aquelas isto aquilo estou está "
    "estamos estão estive esteve estivemos estiveram estava estávamos estavam tá né pra tô cê "
    "então gente coisa assim aqui agora hoje ontem sempre nunca nada ninguém ainda bem bom dia "
    "reunião projeto contrato prazo pagamento cliente empresa processo relatório audiência "
    "paciente exame resultado semana mês ano vez tempo trabalho problema pergunta resposta"
).split()
NAMES = ["João", "Conceição", "Maria Clara", "Sebastião", "Luíza", "Gonçalves"]
NUMBERS = ["2020", "15", "R$ 1.500,00", "3,5%", "10h30", "1º", "trinta", "cem"]


def _scaled(seconds: float | None, scale: float) -> float | None:
    """A word time stretched to the pair's length (every word built here is timed)."""
    return None if seconds is None else seconds * scale


def build_pair(seed: int = 0, words: int = 9000, minutes: float = 60.0) -> tuple[Reference, Hypothesis, list]:
    """A deterministic reference/hypothesis/VAD triple with a realistic error mix and timed words."""
    rng = random.Random(seed)
    utterances, ref_words, speech, hyp_words, vad = [], [], [], [], []
    total = minutes * 60.0
    t = 1.0
    count = 0
    while count < words:
        n = rng.randint(8, 22)
        text = []
        for _ in range(n):
            roll = rng.random()
            pool = NAMES if roll < 0.01 else NUMBERS if roll < 0.02 else COMMON
            text.append(rng.choice(pool))
        start = t
        times = []
        for w in text:
            dur = 0.12 + 0.05 * len(w)
            times.append((t, t + dur))
            t += dur + rng.uniform(0.02, 0.08)
        end = t
        utterances.append(Utterance(round(start, 3), round(end, 3), " ".join(text)))
        ref_words += [Word(w, round(s, 3), round(e, 3)) for w, (s, e) in zip(text, times)]
        speech.append(Interval(round(start, 3), round(end, 3), "speech"))
        vad.append((max(0.0, start - 0.1 + rng.uniform(-0.05, 0.2)), end + 0.1))
        for w, (s, e) in zip(text, times):
            drift = 0.002 * s / 60.0
            roll = rng.random()
            if roll < 0.035:
                continue
            word = rng.choice(COMMON) if roll < 0.10 else ("então" if w == "não" and roll < 0.12 else w)
            hyp_words.append(Word(word, round(s + drift + rng.gauss(0, 0.03), 3), round(e + drift, 3)))
            if rng.random() < 0.02:
                hyp_words.append(Word(rng.choice(COMMON), round(e + drift, 3), round(e + drift + 0.1, 3)))
        pause = rng.uniform(0.5, 3.0)
        speech.append(Interval(round(end, 3), round(end + pause, 3), "nonspeech"))
        if rng.random() < 0.05:
            hyp_words.append(Word("obrigado", round(end + pause / 2, 3), round(end + pause / 2 + 0.2, 3)))
        t = end + pause
        count += n
    scale = total / t
    utterances = [Utterance(u.start * scale, u.end * scale, u.text) for u in utterances]
    ref_words = [Word(w.text, _scaled(w.start, scale), _scaled(w.end, scale)) for w in ref_words]
    speech = [Interval(i.start * scale, i.end * scale, i.label) for i in speech]
    hyp_words = [Word(w.text, _scaled(w.start, scale), _scaled(w.end, scale)) for w in hyp_words]
    vad = [(s * scale, e * scale) for s, e in vad]
    reference = Reference("bench", utterances, words=ref_words, speech=speech, names=NAMES[:3])
    return reference, Hypothesis("bench", hyp_words, arm="bench"), vad


def measure(tasks: dict[str, Callable[[], object]], repeats: int) -> dict[str, tuple[float, float]]:
    """(first call, median of ``repeats`` further calls) per task; repeats are interleaved across
    tasks so that load from other processes affects every task alike."""
    first: dict[str, float] = {}
    runs: dict[str, list[float]] = {name: [] for name in tasks}
    for round_ in range(repeats + 1):
        for name, fn in tasks.items():
            begin = time.perf_counter()
            fn()
            elapsed = time.perf_counter() - begin
            if round_ == 0:
                first[name] = elapsed
            else:
                runs[name].append(elapsed)
    return {name: (first[name], statistics.median(runs[name])) for name in tasks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    reference, hypothesis, vad = build_pair()
    ref_text, hyp_text = reference.text, hypothesis.text

    def bare() -> None:
        jiwer.process_words(ref_text, hyp_text)
        jiwer.cer(ref_text, hyp_text)

    plain = ScoreOptions()
    diagnosis = ScoreOptions(time_constrained=True)
    results = measure(
        {
            "bare jiwer.process_words + jiwer.cer": bare,
            "score_recording, every metric + VAD": lambda: score_recording(reference, hypothesis, plain, vad),
            "  + time-constrained alignment": lambda: score_recording(reference, hypothesis, diagnosis, vad),
        },
        args.repeats,
    )
    rows = list(results.items())
    score = score_recording(reference, hypothesis, plain, vad)
    base = rows[0][1][1]
    print(
        f"pair: {score.counts.ref_words} reference tokens ({len(ref_text.split())} words), "
        f"{len(hypothesis.words)} hypothesis words, {reference.utterances[-1].end / 60:.1f} min, "
        f"WER {100 * (score.counts.wer or 0.0):.1f}%, negations {score.negation.ref_count}, names "
        f"{score.names.ref_count}, numbers {score.numbers.ref_count}"
    )
    print(f"{'what':40s} {'first (s)':>10s} {'median (s)':>11s} {'x bare':>7s}")
    for name, (first, median) in rows:
        print(f"{name:40s} {first:10.3f} {median:11.3f} {median / base:7.2f}")


if __name__ == "__main__":
    main()
