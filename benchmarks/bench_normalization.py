"""Where a long-form WER on written references comes from: normalization, reading convention, recognizer.

Real long-form read speech with written references: five chapters (40.7 min) of the Senado's audiobook
of the 1988 Constitution, one narrator, references the official text (shared data ``ptbr-longform``;
read its README). Two chapters (7.5 min) were looked at while the ptbr-norm-3 rules were written; the
other three (33.2 min) are held out and were scored only once the rules were done. Each chapter is
decoded by the demo's baseline recognizer (Whisper base, CTranslate2 int8, beam 5, sequential
long-form), cached by audio sha256 and recognizer identity, so a rerun decodes nothing.

Errors are attributed by removing one cause at a time (the issue's method), on the same decodes:

- recognizer: the floor left when nothing else counts: the newest version, the narrator's reading
  conventions declared (``ptbr-longform-conventions.tsv``: "inciso" before "I -", "alínea" before
  "a)", "dois pontos" for ":"), accents folded and every number, and every Roman numeral left as
  written, compared by its magnitude (an ordinal and a cardinal of the same value are one reading: the
  most any normalizer could fold);
- reading convention: what declaring the narrator's conventions removes (the newest version without and
  with them): words he says that the text does not write;
- normalization: the rest, per normalizer version: errors that are only the written form.

The three add up to each version's error count. Printed: per split and version, WER and the shares;
then the held-out figures the docs quote. Run: ``.venv/bin/python benchmarks/bench_normalization.py``
(``--decode-only`` decodes and caches, nothing else).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout's toolkit, and the tests' data locator

from shared_data import PTBR_LONGFORM  # noqa: E402

from toolkit.core.files import atomic_write_json, config_hash, sha256_file  # noqa: E402
from toolkit.core.transcripts import Hypothesis, Reference, Word  # noqa: E402
from toolkit.formats.plaintext import read_plaintext_reference  # noqa: E402
from toolkit.scorer.options import ScoreOptions  # noqa: E402

DEMO = ROOT / "experiments" / "demo" / "experiment.toml"
CONVENTIONS = Path(__file__).resolve().parent / "ptbr-longform-conventions.tsv"
# Chapters looked at while the rules were written, and the held-out ones the shares are measured on.
DEVELOPMENT = ("Titulo 1 Art 01 ao 04", "Titulo 3 Art 25 ao 28")
HELD_OUT = ("Titulo 2 Art 06 ao 11", "Titulo 7 Art 170 ao 181", "Titulo 8 Art 196 ao 200")
VERSIONS = ("ptbr-norm-2", "ptbr-norm-3", "ptbr-norm-4")
LATEST = VERSIONS[-1]  # the conventions and the recognizer floor are measured under it


def cache_folder() -> Path:
    root = os.environ.get("ABLATE_CACHE")
    return (Path(root) if root else Path.home() / ".cache" / "ptbr-ablate") / "bench-normalization"


def decode(chapters: tuple[str, ...]) -> dict[str, Hypothesis]:
    """Each chapter decoded by the demo's baseline recognizer (Whisper base), cached by audio and recognizer."""
    import ctranslate2

    from toolkit.asr import make_recognizer
    from toolkit.audio.io import load_audio
    from toolkit.pipeline.experiment import load_experiment

    experiment = load_experiment(DEMO)
    recognizer = make_recognizer(experiment.recognizers[experiment.primary].to_json())
    key = config_hash({"recognizer": recognizer.identity(), "seed": experiment.seed})[:16]
    out: dict[str, Hypothesis] = {}
    for chapter in chapters:
        audio = PTBR_LONGFORM / "audio" / f"{chapter}.ogg"
        cached = cache_folder() / f"{sha256_file(audio)[:16]}-{key}.json"
        if cached.is_file():
            data = json.loads(cached.read_text(encoding="utf-8"))
        else:
            begin = time.perf_counter()
            ctranslate2.set_random_seed(experiment.seed)
            transcript = recognizer.transcribe(load_audio(audio))
            data = {
                "recording_id": chapter,
                "arm": "whisper-base",
                "meta": {"decode_s": round(time.perf_counter() - begin, 1)},
                "words": [w.__dict__ for w in transcript.words],
            }
            atomic_write_json(cached, data)
            print(f"decoded {chapter} in {data['meta']['decode_s']} s -> {cached}", flush=True)
        out[chapter] = Hypothesis(chapter, [Word(**w) for w in data["words"]], arm=data["arm"], meta=data["meta"])
    return out


def recognizer_floor(reference: Reference, hypothesis: Hypothesis) -> int:
    """Errors left when every difference of form is forgiven: the newest version accent-folded with the
    narrator's conventions declared, each integer number (ordinal or cardinal, a glued minus off) and every
    Roman numeral left as written rewritten as its cardinal reading."""
    import numpy as np

    from toolkit.scorer.metrics.tokens import SourceWords, TokenTable, tokenize
    from toolkit.scorer.metrics.wer import error_counts
    from toolkit.scorer.normalize import NormalizationPolicy, Normalizer
    from toolkit.scorer.normalize.chars import fold_accents
    from toolkit.scorer.normalize.context import roman_value
    from toolkit.scorer.normalize.digits import cardinal
    from toolkit.scorer.normalize.numbers import label_number
    from toolkit.scorer.optional_align import align_reference

    normalizer = Normalizer(NormalizationPolicy.accent_folded(LATEST), user_lexicon=CONVENTIONS)

    def words(texts: list[str]) -> SourceWords:
        nan = np.full(len(texts), np.nan)
        return SourceWords(texts, nan, nan, nan, nan)

    def magnitudes(table: TokenTable) -> tuple[list[str], np.ndarray]:
        texts: list[str] = []
        optional: list[bool] = []
        group = None
        for k, text in enumerate(table.texts):
            value = (table.number_value[k] or "").rstrip("ºª").lstrip("-")  # "-30," is a label's dash glued on
            if table.number_group[k] >= 0 and value.isdigit():
                if table.number_group[k] != group:
                    reading = [fold_accents(w) for w in cardinal(int(value))]
                    texts.extend(reading)
                    optional.extend([bool(table.optional[k])] * len(reading))
                group = table.number_group[k]
                continue
            group = None
            written = table.words.texts[int(table.source[k])].strip(".,;:-–")  # a numeral is written in capitals
            roman = roman_value(written) if text.isalpha() and text.upper() == written else None
            said = label_number([text], 0)  # a lone "segundo", "quarto": no number group, but a number's word
            magnitude = roman if roman is not None else said[1] if said is not None and said[0] == 1 else None
            reading = [fold_accents(w) for w in cardinal(magnitude)] if magnitude is not None else [text]
            texts.extend(reading)
            optional.extend([bool(table.optional[k])] * len(reading))
        return texts, np.asarray(optional, dtype=bool)

    source = [w for u in reference.utterances for w in u.text.split()]
    ref_texts, ref_optional = magnitudes(tokenize(normalizer, words(source), [(0, len(source))], reference=True))
    hyp = [w.text for w in hypothesis.words]
    hyp_texts, _ = magnitudes(tokenize(normalizer, words(hyp), [(0, len(hyp))]))
    return error_counts(ref_texts, hyp_texts, align_reference(ref_texts, hyp_texts, ref_optional)).errors


@dataclass
class Attribution:
    """One version's errors on a set of chapters, by cause."""

    ref_words: int = 0
    errors: int = 0
    normalization: int = 0
    convention: int = 0
    recognizer: int = 0

    def add(self, ref_words: int, errors: int, convention: int, recognizer: int) -> None:
        self.ref_words += ref_words
        self.errors += errors
        self.convention += convention
        self.recognizer += recognizer
        self.normalization += errors - convention - recognizer

    def row(self, label: str) -> str:
        def share(n: int) -> str:
            return f"{n:5d} {100 * n / self.errors:5.1f}%" if self.errors else f"{n:5d}    - "

        wer = 100 * self.errors / self.ref_words if self.ref_words else float("nan")
        return (
            f"{label:38s} {self.ref_words:6d} {self.errors:6d} {wer:6.1f}%  {share(self.normalization)}  "
            f"{share(self.convention)}  {share(self.recognizer)}"
        )


def attribute(chapters: tuple[str, ...], hypotheses: dict[str, Hypothesis]) -> dict[str, Attribution]:
    """Per configuration (each version, and the newest with the conventions declared), errors by cause."""
    from toolkit.scorer.score import score_recording

    found = {name: Attribution() for name in (*VERSIONS, f"{LATEST} + conventions")}
    for chapter in chapters:
        reference = read_plaintext_reference(PTBR_LONGFORM / "refs" / f"{chapter}.txt", chapter)
        hypothesis = hypotheses[chapter]
        floor = recognizer_floor(reference, hypothesis)
        counts = {
            version: score_recording(reference, hypothesis, ScoreOptions(normalizer=version)).counts
            for version in VERSIONS
        }
        declared = score_recording(reference, hypothesis, ScoreOptions(lexicon=CONVENTIONS)).counts
        convention = counts[LATEST].errors - declared.errors
        for version in VERSIONS:
            found[version].add(counts[version].ref_words, counts[version].errors, convention, floor)
        found[f"{LATEST} + conventions"].add(declared.ref_words, declared.errors, 0, floor)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decode-only", action="store_true", help="decode and cache the chapters, nothing else")
    args = parser.parse_args()
    if not (PTBR_LONGFORM / "refs").is_dir():
        print(f"skipped: the long-form data is not at {PTBR_LONGFORM} (set ABLATE_SHARED_DATA)")
        return 0
    hypotheses = decode(DEVELOPMENT + HELD_OUT)
    if args.decode_only:
        return 0
    decoded_s = sum(h.meta.get("decode_s", 0.0) for h in hypotheses.values())
    print(f"decodes: Whisper base, {len(hypotheses)} chapters, {decoded_s:.0f} s of decoding when first made (cached)")
    header = f"{'normalizer':38s} {'N':>6s} {'errors':>6s} {'WER':>7s}  {'normalization':>12s}  "
    header += f"{'reading conv.':>12s}  {'recognizer':>12s}"
    for label, chapters in (("development (looked at)", DEVELOPMENT), ("held out", HELD_OUT)):
        print(f"\n{label}: {', '.join(chapters)}")
        print(header)
        for name, attribution in attribute(chapters, hypotheses).items():
            print(attribution.row(name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
