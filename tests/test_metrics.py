"""Every scorer metric against hand-computed expectations on small pt-BR examples."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from shared_data import PTBR_DEV

from toolkit.core.transcripts import Hypothesis, Interval, Reference, Utterance, Word
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.score import score_recording
from toolkit.scorer.tables import score_tables


def ref_of(*utterances: tuple[float, float, str], words=(), speech=(), unresolved=(), names=()) -> Reference:
    return Reference(
        "rec",
        [Utterance(s, e, t) for s, e, t in utterances],
        words=list(words),
        speech=list(speech),
        unresolved=list(unresolved),
        names=list(names),
    )


def hyp_of(text: str, start: float | None = None, step: float = 0.5) -> Hypothesis:
    words = text.split()
    if start is None:
        return Hypothesis("rec", [Word(w) for w in words])
    return Hypothesis("rec", [Word(w, start + k * step, start + k * step + 0.4) for k, w in enumerate(words)])


# --- WER / CER -------------------------------------------------------------------------------


def test_wer_counts_and_cer_by_hand():
    score = score_recording(ref_of((0, 5, "eu vou para casa")), hyp_of("eu fui para a casa"))
    c = score.counts
    assert (c.ref_words, c.hits, c.substitutions, c.deletions, c.insertions) == (4, 3, 1, 0, 1)
    assert c.wer == pytest.approx(2 / 4)
    # "eu vou para casa" (16 chars) -> "eu fui para a casa": vou->fui is 3 chars, "a " inserted is 2.
    assert (c.ref_chars, c.char_errors) == (16, 5)
    assert c.cer == pytest.approx(5 / 16)


def test_verbatim_keeps_case_and_punctuation_normalized_does_not():
    score = score_recording(ref_of((0, 5, "Eu vou, pra casa.")), hyp_of("eu vou para casa"))
    assert score.counts.errors == 0  # pra = para, case and punctuation folded
    assert score.verbatim.errors == 4  # Eu/eu, vou,/vou, pra/para, casa./casa
    assert score.verbatim.ref_words == 4


def test_number_equivalence_digits_and_words_score_zero_errors():
    score = score_recording(
        ref_of((0, 5, "em 2020 pagamos R$ 1.500,00")), hyp_of("em dois mil e vinte pagamos mil e quinhentos reais")
    )
    assert score.counts.errors == 0
    assert (score.numbers.ref_count, score.numbers.errors) == (2, 0)


def test_number_audit_is_by_value():
    score = score_recording(ref_of((0, 5, "em 2020 saiu")), hyp_of("em dois mil e vinte e um saiu"))
    assert score.counts.insertions == 2
    assert (score.numbers.ref_count, score.numbers.errors) == (1, 1)
    instance = score.numbers.instances[0]
    assert instance.reference == "2020" and instance.hypothesis == "dois mil e vinte e um"


# --- negations -------------------------------------------------------------------------------


def test_negation_substituted_by_entao_is_a_flip():
    score = score_recording(ref_of((2, 4, "eu não vou")), hyp_of("eu então vou"))
    neg = score.negation
    assert (neg.ref_count, neg.flipped, neg.inserted) == (1, 1, 0)
    inst = neg.instances[0]
    assert (inst.kind, inst.reference, inst.hypothesis, inst.time) == ("substituted", "não", "então", 2.0)


def test_negation_deleted_and_inserted():
    deleted = score_recording(ref_of((0, 2, "Não, nunca vi ninguém")), hyp_of("nunca vi ninguém"))
    assert (deleted.negation.ref_count, deleted.negation.flipped) == (3, 1)
    assert deleted.negation.instances[0].kind == "deleted"
    inserted = score_recording(ref_of((0, 2, "eu já vou")), hyp_of("eu não vou", start=0.0))
    assert (inserted.negation.ref_count, inserted.negation.flipped, inserted.negation.inserted) == (0, 0, 1)
    assert inserted.negation.instances[0].time == 0.5


def test_tag_question_ne_is_not_a_negation():
    score = score_recording(ref_of((0, 2, "tá bom né")), hyp_of("tá bom"))
    assert score.negation.ref_count == 0
    assert score.counts.deletions == 2  # né -> não é


# --- names -----------------------------------------------------------------------------------


def test_names_with_accents():
    ref = ref_of((1, 3, "o João Silva chegou e a Conceição saiu"), names=["João Silva", "Conceição"])
    hyp = hyp_of("o Joao Silva chegou e a Conceição saiu")
    score = score_recording(ref, hyp)
    assert (score.names.ref_count, score.names.errors) == (2, 1)
    assert score.names.instances[0].reference == "João Silva"
    assert score.names.instances[0].hypothesis == "Joao Silva"
    assert score.counts.errors == 1 and score.accent_folded.errors == 0
    folded = score_recording(ref, hyp, ScoreOptions(policy="accent-folded"))
    assert (folded.names.ref_count, folded.names.errors) == (2, 0)


def test_extra_names_from_options_and_insertion_inside_a_name():
    ref = ref_of((0, 3, "falei com Maria Clara ontem"))
    score = score_recording(ref, hyp_of("falei com Maria a Clara ontem"), ScoreOptions(names=("Maria Clara",)))
    assert (score.names.ref_count, score.names.errors) == (1, 1)


# --- short words -----------------------------------------------------------------------------


def test_short_words_substituted_and_deleted():
    score = score_recording(ref_of((0, 3, "eu vi o carro de longe")), hyp_of("eu vi um carro longe"))
    sw = score.short_words
    # eu vi o de are short (<= 3 letters); o -> um substituted, de deleted.
    assert (sw.ref_count, sw.substituted, sw.deleted) == (4, 1, 1)
    wider = score_recording(
        ref_of((0, 3, "eu vi o carro de longe")), hyp_of("eu vi um carro longe"), ScoreOptions(short_word_max_letters=5)
    )
    assert wider.short_words.ref_count == 6


# --- non-speech ------------------------------------------------------------------------------


def test_nonspeech_insertions_per_minute():
    ref = ref_of(
        (0, 10, "bom dia"),
        (40, 60, "até logo"),
        speech=[
            Interval(0, 10, "speech"),
            Interval(10, 40, "nonspeech"),
            Interval(40, 60, "speech"),
            Interval(60, 90, "nonspeech"),
        ],
    )
    hyp = Hypothesis(
        "rec",
        [
            Word("bom", 1, 1.4),
            Word("dia", 1.5, 2),
            Word("obrigado", 15, 15.5),
            Word("tchau", 20, 20.4),
            Word("até", 41, 41.3),
            Word("logo", 41.4, 42),
            Word("?", 70, 70.2),
            Word("eh", 39.9, 40.3),
        ],
    )
    ns = score_recording(ref, hyp).nonspeech
    # 60 s of confirmed non-speech; obrigado and tchau inside the first interval; "?" normalizes to
    # nothing; "eh" has its midpoint at 40.1 s, outside.
    assert ns.minutes == pytest.approx(1.0)
    assert (ns.invented_words, ns.intervals, ns.intervals_with_text) == (2, 2, 1)
    assert ns.per_minute == pytest.approx(2.0)
    assert ns.instances[0]["text"] == "obrigado tchau"


# --- timing ----------------------------------------------------------------------------------


def test_drift_with_known_slope():
    n = 300
    starts = np.arange(n) * 2.0  # a word every 2 s over 10 minutes
    texts = [f"w{k}" for k in range(n)]
    ref = ref_of(
        *[(s, s + 1, t) for s, t in zip(starts, texts)], words=[Word(t, s, s + 0.5) for s, t in zip(starts, texts)]
    )
    hyp = Hypothesis("rec", [Word(t, s + 0.01 * s, s + 0.01 * s + 0.5) for s, t in zip(starts, texts)])
    timing = score_recording(ref, hyp).timing
    data = timing.to_json()
    assert data["coverage"] == 1.0 and data["matched_timed_words"] == n
    assert data["drift_s_per_min"] == pytest.approx(0.6, abs=1e-6)  # 0.01 s per s = 0.6 s per minute
    assert data["onset_abs_median_s"] == pytest.approx(0.01 * np.median(starts), abs=1e-3)
    assert data["onset_abs_p95_s"] == pytest.approx(0.01 * np.quantile(starts, 0.95), abs=1e-3)
    thirds = data["thirds"]
    assert thirds["early"]["onset_median_s"] < thirds["middle"]["onset_median_s"] < thirds["late"]["onset_median_s"]
    assert sum(t["matched"] for t in thirds.values()) == n


def test_timing_partial_word_tier_and_untimed_hypothesis():
    ref = ref_of(
        (0, 4, "um dois três quatro"), words=[Word("Um,", 0.0, 0.5), Word("quatro", 3.0, 3.5), Word("cinco", 3.6, 3.9)]
    )
    hyp = Hypothesis("rec", [Word("um", 0.1, 0.5), Word("dois"), Word("três", 2.0, 2.4), Word("quatro", 3.3, 3.6)])
    score = score_recording(ref, hyp)
    assert score.unplaced_word_times == 1  # "cinco" is not in the utterance text
    t = score.timing.to_json()
    assert (t["ref_timed_words"], t["matched_timed_words"], t["untimed_hyp_words"]) == (2, 2, 1)
    assert t["onset_abs_median_s"] == pytest.approx(0.2)
    assert t["drift_s_per_min"] is None  # two points cannot give a slope worth reporting


def test_timing_not_available_without_times_never_zero():
    ref = ref_of((0, 4, "um dois"), words=[Word("um", 0.0, 0.5)])
    t = score_recording(ref, hyp_of("um dois")).timing.to_json()
    assert t["available"] is False
    assert t["coverage"] is None and t["onset_abs_median_s"] is None and t["matched_timed_words"] is None
    untimed_ref = ref_of((0, math.inf, "um dois"))  # a plain-text reference: no time was marked
    no_ref_times = score_recording(untimed_ref, hyp_of("um dois", start=0.0)).timing.to_json()
    assert no_ref_times["available"] is False and no_ref_times["onset_abs_p95_s"] is None


def test_turn_edges_are_boundary_word_times():
    # The first word's onset is the turn start, the last word's offset the turn end.
    ref = ref_of((2.0, 4.0, "eu não sei"), (6.0, 7.0, "nunca"))
    hyp = Hypothesis(
        "rec", [Word("eu", 2.1, 2.3), Word("não", 2.4, 2.6), Word("sei", 2.7, 3.9), Word("nunca", 5.8, 6.9)]
    )
    t = score_recording(ref, hyp).timing.to_json()
    assert (t["ref_timed_words"], t["matched_timed_words"]) == (2, 2)
    assert t["onset_abs_median_s"] == pytest.approx(0.15)


def test_worst_onsets_name_the_word_both_times_and_the_arm():
    from toolkit.scorer.metrics.timing import worst_onsets

    ref = ref_of((2.0, 4.0, "Eu não sei"), (6.0, 7.0, "nunca"), (9.0, 10.0, "talvez"))
    hyp = Hypothesis(
        "rec",
        [
            Word("eu", 2.1, 2.3),
            Word("não", 2.4, 2.6),
            Word("sei", 2.7, 3.9),
            Word("nunca", 4.6, 5.9),
            Word("talvez", 9.3, 9.9),
        ],
    )
    timing = score_recording(ref, hyp).timing
    assert timing.to_json()["worst_onsets"] == [
        {"reference": "nunca", "ref_onset_s": 6.0, "hyp_onset_s": 4.6, "onset_error_s": -1.4},
        {"reference": "talvez", "ref_onset_s": 9.0, "hyp_onset_s": 9.3, "onset_error_s": 0.3},
        {"reference": "Eu", "ref_onset_s": 2.0, "hyp_onset_s": 2.1, "onset_error_s": 0.1},
    ]
    other = score_recording(ref, Hypothesis("rec", [Word("eu", 2.0, 2.3), Word("nunca", 6.5, 6.9)])).timing
    rows = worst_onsets({"baseline": {"rec": timing}, "windows": {"rec": other}}, count=2)
    assert [(r["arm"], r["recording"], r["reference"], r["onset_error_s"]) for r in rows] == [
        ("baseline", "rec", "nunca", -1.4),
        ("baseline", "rec", "talvez", 0.3),
        ("windows", "rec", "nunca", 0.5),
        ("windows", "rec", "Eu", 0.0),
    ]


# --- VAD -------------------------------------------------------------------------------------


def test_vad_recall_and_clipped_words_by_hand():
    ref = ref_of(
        (0, 10, "não sei agora"),
        (20, 30, "nada mesmo"),
        words=[
            Word("não", 1.0, 1.5),
            Word("sei", 3.0, 4.0),
            Word("agora", 8.5, 8.9),
            Word("nada", 24.0, 26.0),
            Word("mesmo", 27.0, 28.0),
        ],
        speech=[Interval(0, 10, "speech"), Interval(10, 20, "nonspeech"), Interval(20, 30, "speech")],
    )
    score = score_recording(ref, hyp_of("não sei agora nada mesmo", start=1.0), vad_segments=[(2, 12), (25, 40)])
    vad = score.vad
    # Speech 0-10 and 20-30 (20 s); VAD keeps 2-10 and 25-30 of it: 13 s.
    assert vad.speech_s == pytest.approx(20.0) and vad.retained_s == pytest.approx(13.0)
    assert vad.recall == pytest.approx(0.65)
    # "não" (1-1.5) dropped, "nada" (24-26) cut into; "sei", "agora", "mesmo" wholly inside.
    assert (vad.ref_timed_words, vad.clipped_words, vad.dropped_words) == (5, 2, 1)
    assert (vad.ref_timed_negations, vad.clipped_negations) == (2, 2)
    assert [i.kind for i in vad.instances] == ["dropped negation", "clipped negation"]


def test_impossible_vad_segment_is_refused():
    from toolkit.core.errors import InputError

    with pytest.raises(InputError, match="impossible VAD segment 3-2 s"):
        score_recording(ref_of((0, 4, "a b")), hyp_of("a b"), vad_segments=[(3, 2)])


def test_touching_nonspeech_intervals_are_counted_apart():
    ref = ref_of((0, 1, "a"), speech=[Interval(1, 2, "nonspeech"), Interval(2, 3, "nonspeech")])
    ns = score_recording(ref, Hypothesis("rec", [Word("a", 0.1, 0.5), Word("b", 2.5, 2.7)])).nonspeech
    assert (ns.intervals, ns.intervals_with_text, ns.invented_words) == (2, 1, 1)


def test_vad_without_speech_tier_uses_utterances():
    score = score_recording(ref_of((0, 4, "a b")), hyp_of("a b"), vad_segments=[(0, 2)])
    assert score.vad.speech_source == "utterances" and score.vad.recall == pytest.approx(0.5)


# --- unresolved spans, empty hypothesis ------------------------------------------------------


def test_unresolved_spans_are_excluded_and_reported():
    ref = ref_of(
        (0, 2, "bom dia"), (5, 7, "xxx yyy"), (10, 12, "até logo"), unresolved=[Interval(4.5, 7.5, "unresolved")]
    )
    hyp = Hypothesis(
        "rec",
        [
            Word("bom", 0.1, 0.5),
            Word("dia", 0.6, 1),
            Word("algo", 6, 6.5),
            Word("até", 10.1, 10.5),
            Word("logo", 10.6, 11),
        ],
    )
    score = score_recording(ref, hyp)
    assert score.counts.ref_words == 4 and score.counts.errors == 0
    assert (score.excluded.ref_words, score.excluded.hyp_words) == (2, 1)
    assert score.excluded.unresolved_s == pytest.approx(3.0)
    assert score.to_json()["excluded"]["unresolved_s"] == 3.0


@pytest.mark.parametrize("hypothesis", [None, Hypothesis("rec", [])])
def test_empty_or_missing_hypothesis_scores_all_deletions(hypothesis):
    ref = ref_of((0, 3, "não vou em 2020"), words=[Word("não", 0, 0.5)], speech=[Interval(3, 5, "nonspeech")])
    score = score_recording(ref, hypothesis)
    c = score.counts
    # não vou em dois mil e vinte: seven tokens, all deleted.
    assert (c.ref_words, c.deletions, c.hits, c.substitutions, c.insertions) == (7, 7, 0, 0, 0)
    assert c.wer == 1.0 and c.cer == 1.0
    assert score.negation.flipped == 1 and score.numbers.errors == 1
    assert score.nonspeech.invented_words == 0 and score.nonspeech.per_minute == 0.0
    assert score.timing.to_json()["available"] is False


def test_reference_without_words_has_no_wer_but_counts_insertions():
    score = score_recording(Reference("rec", []), hyp_of("olá pessoal"))
    assert score.counts.ref_words == 0 and score.counts.insertions == 2
    assert score.counts.wer is None and score.to_json()["wer"] is None


# --- tables: micro-averaging -----------------------------------------------------------------


def test_corpus_figures_are_micro_averaged_not_macro():
    small = score_recording(ref_of((0, 5, "a b c d e f g h i j")), hyp_of("a b c d e"))  # 5/10 = 50%
    big_text = " ".join(["casa"] * 90)
    big = score_recording(ref_of((0, 50, big_text)), hyp_of(big_text))  # 0/90
    per_recording, aggregate = score_tables(
        [("base", "small", {"noise": "quiet"}, small), ("base", "big", ["noisy"], big)]
    )
    assert per_recording["wer"].tolist() == [0.5, 0.0]
    row = aggregate[(aggregate.arm == "base") & (aggregate.stratum == "all")].iloc[0]
    assert row["wer"] == pytest.approx(5 / 100)  # micro; the macro mean would be 25%
    assert row["ref_words"] == 100 and row["deletions"] == 5 and row["recordings"] == 2
    assert set(aggregate.stratum) == {"all", "noise=quiet", "noisy"}
    assert aggregate.set_index("stratum").loc["noisy", "wer"] == 0.0
    assert row["signature"] == small.signature.text


def test_tables_are_written_as_csv_and_read_back_with_names_as_text(tmp_path):
    from toolkit.scorer.tables import read_tables, write_tables

    vad_score = score_recording(ref_of((0, 2, "a b")), hyp_of("a", start=0.0), vad_segments=[(0, 1)])
    plain = score_recording(ref_of((0, 2, "c d")), hyp_of("c d"))
    per_recording, aggregate = score_tables([("arm", "001", None, vad_score), ("arm", "NA", None, plain)])
    paths = write_tables(per_recording, aggregate, tmp_path / "tables")
    assert [p.name for p in paths] == ["per_recording.csv", "aggregate.csv"]
    per_recording_back, back = read_tables(tmp_path / "tables")
    assert per_recording_back["recording_id"].tolist() == ["001", "NA"]  # names, not numbers or missing values
    assert back.loc[0, "wer"] == pytest.approx(1 / 4)
    assert back.loc[0, "vad_recordings"] == 1 and back.loc[0, "vad_recall"] == pytest.approx(0.5)
    assert not list(tmp_path.joinpath("tables").glob("*.part"))


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (None, "the scores table is missing"),
        ("", "not a scores table (No columns to parse from file)"),
        ("wer,arm\n0.1,a\n", "not a scores table: its columns begin arm, stratum and hold wer"),
    ],
)
def test_a_missing_or_foreign_scores_table_is_named_in_one_line(tmp_path, damage, problem):
    from toolkit.core.errors import InputError
    from toolkit.scorer.tables import read_tables, write_tables

    per_recording, aggregate = score_tables([("arm", "r1", None, score_recording(ref_of((0, 2, "a")), hyp_of("a")))])
    _, aggregate_csv = write_tables(per_recording, aggregate, tmp_path)
    if damage is None:
        aggregate_csv.unlink()
    else:
        aggregate_csv.write_text(damage, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_tables(tmp_path)
    assert str(caught.value).startswith(f"{aggregate_csv}: {problem}")


def test_time_constrained_mode_reports_separately():
    ref = ref_of((0, 2, "a b"), words=[Word("a", 0, 0.5), Word("b", 1, 1.5)])
    hyp = Hypothesis("rec", [Word("a", 0, 0.5), Word("b", 11, 11.5)])
    score = score_recording(ref, hyp, ScoreOptions(time_constrained=True, collar=0.5))
    assert score.counts.errors == 0
    tc = score.to_json()["time_constrained"]
    assert (tc["deletions"], tc["insertions"], tc["collar_s"]) == (1, 1, 0.5)


# --- accent folding shortcut and signature ---------------------------------------------------


def test_folded_tables_equal_direct_accent_folded_normalization():
    import csv

    from toolkit.scorer.metrics.tokens import SourceWords, fold_table, tokenize
    from toolkit.scorer.normalize import NormalizationPolicy, Normalizer
    from toolkit.scorer.score import FOLD_FROM_NORMALIZED

    assert FOLD_FROM_NORMALIZED
    texts = [
        "Ação, coração e pinguim: NÃO! Tá bom, né? Conceição pagou R$ 1.500,00 em 2020 às 10h30.",
        "Ninguém viu o 1º lugar; três vírgula cinco por cento é 3,5% — pra você, cê sabe.",
    ]
    tsv = PTBR_DEV / "commonvoice-pt" / "validated.tsv"
    if tsv.exists():
        with tsv.open(encoding="utf-8", newline="") as handle:
            texts += [row["sentence"] for row in csv.DictReader(handle, delimiter="\t")]
    normalized = Normalizer(NormalizationPolicy.normalized())
    folded = Normalizer(NormalizationPolicy.accent_folded())
    for text in texts:
        words = text.split()
        nan = np.full(len(words), np.nan)
        source = SourceWords(words, nan, nan, nan, nan)
        via_fold = fold_table(tokenize(normalized, source, [(0, len(words))]))
        direct = tokenize(folded, source, [(0, len(words))])
        assert via_fold.texts == direct.texts, text
        assert via_fold.source.tolist() == direct.source.tolist()


def test_signature_names_everything_a_number_depends_on():
    a = score_recording(ref_of((0, 1, "a")), hyp_of("a")).signature
    b = score_recording(ref_of((0, 1, "a")), hyp_of("a"), ScoreOptions(collar=0.25)).signature
    c = score_recording(ref_of((0, 1, "a")), hyp_of("a"), ScoreOptions(bootstrap_seed=3)).signature
    assert len({a.hash, b.hash, c.hash}) == 3
    fields = a.fields
    assert fields["normalizers"]["normalized"]["version"] == "ptbr-norm-4"
    assert set(fields["normalizers"]["normalized"]["lexicons"]) >= {"negations.txt", "equivalences.tsv"}
    assert fields["alignment"]["costs"] == {"substitution": 1, "deletion": 1, "insertion": 1, "match": 0}
    assert {"rapidfuzz", "jiwer", "numpy", "scipy", "num2words"} <= set(fields["libraries"])
    assert fields["bootstrap"] == {"samples": 10000, "seed": 0}
    assert a.text.endswith(f"hash:{a.hash}") and "collar:0.5" in a.text and "boot:10000@0" in a.text


# --- seams -----------------------------------------------------------------------------------


def test_seam_omissions_and_duplications_are_counted_only_near_seams():
    ref = ref_of((0.0, 10.0, "ontem o João não veio e hoje a Maria chegou cedo"))
    words = [
        ("ontem", 0.0),
        ("o", 0.8),
        ("João", 1.2),
        ("não", 2.0),  # "veio" is lost at the 2.5-3.5 seam
        ("e", 4.0),
        ("hoje", 4.6),
        ("a", 6.0),
        ("a", 6.3),
        ("Maria", 6.8),  # "a" doubled at the 5.8-6.6 seam
        ("chegou", 7.5),
        ("chegou", 8.2),
        ("cedo", 9.0),
    ]  # doubled far from any seam
    hyp = Hypothesis("rec", [Word(t, s, s + 0.25) for t, s in words])
    score = score_recording(ref, hyp, seams=[(2.5, 3.5), (5.8, 6.6)], options=ScoreOptions(seam_margin_s=0.2))
    seams = score.to_json()["seams"]
    assert (seams["seams"], seams["omissions"], seams["duplications"]) == (2, 1, 1)
    assert [(i["kind"], i["reference"] or i["hypothesis"]) for i in seams["instances"]] == [
        ("seam omission", "veio"),
        ("seam duplication", "a"),
    ]
    assert score.counts.insertions == 2 and score.counts.deletions == 1  # WER still counts both doubles
    assert "seams" not in score_recording(ref, hyp).to_json()  # only windowed arms get seam figures


def test_seam_omission_with_a_timed_reference_word_uses_its_own_time():
    ref = ref_of((0.0, 6.0, "eu não sei"), words=[Word("não", 2.0, 2.3)])
    hyp = Hypothesis("rec", [Word("eu", 0.1, 0.4), Word("sei", 5.0, 5.4)])
    far = score_recording(ref, hyp, seams=[(4.0, 4.5)], options=ScoreOptions(seam_margin_s=0.5)).seams
    near = score_recording(ref, hyp, seams=[(2.5, 3.0)], options=ScoreOptions(seam_margin_s=0.5)).seams
    assert (far.omissions, near.omissions) == (0, 1)


def test_untimed_seam_omission_is_located_inside_its_own_utterance():
    # "favoritos" ends the first sentence (its utterance ends at 12.5 s); a 5 s pause follows. Its matched
    # neighbours bracket 11.6-18.0 s, but the reference says the word lies before 12.5 s.
    ref = ref_of((10.0, 12.5, "minha lista de favoritos"), (18.0, 20.0, "outra frase aqui"))
    hyp = Hypothesis(
        "rec",
        [
            Word(t, s, s + 0.4)
            for t, s in (
                ("minha", 10.1),
                ("lista", 10.6),
                ("de", 11.2),
                ("outra", 18.0),
                ("frase", 18.6),
                ("aqui", 19.2),
            )
        ],
    )
    options = ScoreOptions(seam_margin_s=1.0)
    after_pause = score_recording(ref, hyp, seams=[(17.5, 19.0)], options=options).seams
    in_sentence = score_recording(ref, hyp, seams=[(12.4, 14.0)], options=options).seams
    assert (after_pause.omissions, in_sentence.omissions) == (0, 1)
    assert in_sentence.to_json()["instances"][0]["located"] == [11.6, 12.5]
    assert [i.reference for i in in_sentence.at(11.0, 11.7)] == ["favoritos"]
    assert in_sentence.at(12.6, 14.0) == []
    # Neighbours that miss the utterance (a hypothesis timed elsewhere) give way to the utterance itself.
    shifted = Hypothesis("rec", [replace(w, start=w.start + 30, end=w.end + 30) for w in hyp.words])
    lost = score_recording(ref, shifted, seams=[(12.4, 14.0)], options=options).seams
    assert lost.omissions == 1 and lost.located == ((10.0, 12.5),)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 3600, allow_nan=False), st.floats(-2, 2, allow_nan=False)), min_size=3, max_size=60)
)
def test_drift_is_the_least_squares_slope_scipy_gives(points) -> None:
    from scipy.stats import linregress

    from toolkit.scorer.metrics.timing import TimingScore

    onsets = np.array([p[0] for p in points])
    errors = np.array([p[1] for p in points])
    assume(len(np.unique(onsets)) >= 3)
    n = len(points)
    timing = TimingScore(ref_timed_words=n, hyp_words=n, ref_onsets=onsets, onset_errors=errors)
    assert timing.drift_s_per_min == pytest.approx(linregress(onsets, errors).slope * 60, rel=1e-6, abs=1e-9)


_group_words = st.lists(
    st.sampled_from(["2", "100", "R$", "1.500,00", "não", "num", "(a)", "vai", "III", "art.", "10h30", "dois", "mil"]),
    max_size=5,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_group_words, max_size=5), st.booleans())
def test_tokens_of_groups_are_each_group_tokenized_alone_one_after_the_other(groups: list, reference: bool) -> None:
    """``tokenize`` turns all groups' tokens into columns at once: the same table as each group tokenized on its
    own, concatenated, its number groups counted on from the groups before it."""
    from toolkit.scorer.metrics.tokens import SourceWords, tokenize
    from toolkit.scorer.normalize import Normalizer

    words = [word for group in groups for word in group]
    ends = np.cumsum([len(group) for group in groups]).tolist()
    spans = list(zip([0, *ends[:-1]], ends))
    nan = np.full(len(words), np.nan)
    source = SourceWords(words, nan, nan, nan, nan)
    normalizer = Normalizer()
    table = tokenize(normalizer, source, spans, reference=reference)
    alone = [tokenize(normalizer, source, [span], reference=reference) for span in spans]
    assert table.texts == [text for part in alone for text in part.texts]
    assert table.source.tolist() == [s for part in alone for s in part.source.tolist()]
    for column in ("is_number", "optional", "undecided"):
        assert getattr(table, column).tolist() == [v for part in alone for v in getattr(part, column).tolist()]
    assert table.number_value == [v for part in alone for v in part.number_value]
    shifted, offset = [], 0
    for part in alone:
        shifted += [-1 if g < 0 else g + offset for g in part.number_group.tolist()]
        offset += int(part.number_group.max(initial=-1)) + 1
    assert table.number_group.tolist() == shifted
