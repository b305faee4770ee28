"""Independent listeners compared: blind transcriptions of one stretch (inter-listener WER, conflicts a
lead settles, the agreed transcription) and span decisions (Cohen's kappa with counts)."""

from __future__ import annotations

import pytest
from adjudication_fixture import decide
from statsmodels.stats.inter_rater import cohens_kappa

from toolkit.adjudication.agreement import (
    AGREED_FOLDER,
    compare_recording,
    decision_agreement,
    transcription_agreement,
    write_agreed,
)
from toolkit.adjudication.blind import TranscriptStore
from toolkit.adjudication.store import DecisionStore
from toolkit.core.errors import InputError
from toolkit.formats import read_reference
from toolkit.scorer.options import ScoreOptions

OPTIONS = ScoreOptions()


def _save(store: TranscriptStore, who: str, start: float, end: float, text: str = "", speech: str = "") -> None:
    store.save(recording_id="rec", annotator=who, start=start, end=end, duration=30.0, text=text, speech=speech)


@pytest.fixture
def transcripts(tmp_path) -> TranscriptStore:
    store = TranscriptStore(tmp_path / "adjudication.sqlite", tmp_path)
    _save(store, "ana", 0.0, 4.0, "eu não sei se o João vem")
    _save(store, "ana", 4.0, 8.0, "Ele pagou mil e quinhentos reais.")
    _save(store, "ana", 8.0, 10.0, speech="nonspeech")
    _save(store, "ana", 10.0, 12.0, "só a Ana ouviu")
    _save(store, "beto", 0.0, 4.0, "eu sei se o João vem")  # drops the negation
    _save(store, "beto", 4.0, 8.0, "ele pagou 1500 reais")  # the same words, written differently
    _save(store, "beto", 8.0, 10.0, "obrigado")  # hears speech where ana confirmed none
    return store


def test_listeners_are_compared_per_stretch_with_the_scorer_normalizer(transcripts):
    comparisons = compare_recording(transcripts, "rec", OPTIONS)
    assert [(c.start, c.end, c.first, c.second, c.errors, c.ref_words) for c in comparisons] == [
        (0.0, 4.0, "ana", "beto", 1, 7),
        (4.0, 8.0, "ana", "beto", 0, 6),
        (8.0, 10.0, "ana", "beto", 1, 0),
    ]
    assert [c.conflict for c in comparisons] == [True, False, True]
    summary = transcription_agreement(transcripts, ["rec"], OPTIONS)
    assert (summary.errors, summary.ref_words, summary.wer) == (2, 13, pytest.approx(2 / 13))
    assert len(summary.conflicts) == 2


def test_the_agreed_transcription_waits_for_the_lead_then_takes_each_stretch_once(transcripts):
    with pytest.raises(InputError, match="2 stretch\\(es\\) where listeners disagree wait for a lead"):
        write_agreed(transcripts, "rec", 30.0, OPTIONS)
    transcripts.settle(
        recording_id="rec", start=0.0, end=4.0, duration=30.0, text="eu não sei se o João vem", lead="lia"
    )
    transcripts.settle(recording_id="rec", start=8.0, end=10.0, duration=30.0, text="", lead="lia", speech="nonspeech")
    agreed = write_agreed(transcripts, "rec", 30.0, OPTIONS)
    assert [(u.start, u.end, u.text) for u in agreed.reference.utterances] == [
        (0.0, 4.0, "eu não sei se o João vem"),  # the lead's
        (4.0, 8.0, "Ele pagou mil e quinhentos reais."),  # the first listener's, where both agree
        (10.0, 12.0, "só a Ana ouviu"),  # heard by one listener only
    ]
    assert [(i.start, i.end, i.label) for i in agreed.reference.nonspeech()] == [(8.0, 10.0, "nonspeech")]
    written = read_reference(transcripts.folder / AGREED_FOLDER / "rec.TextGrid")
    assert [u.text for u in written.utterances] == [u.text for u in agreed.reference.utterances]
    # a listener who transcribes the stretch again after the settlement reopens it
    _save(transcripts, "beto", 0.0, 4.0, "eu acho que o João vem")
    assert [c.start for c in compare_recording(transcripts, "rec", OPTIONS) if c.conflict] == [0.0]


def test_kappa_on_span_decisions_matches_statsmodels_and_counts_the_pairs(tmp_path):
    store = DecisionStore(tmp_path / "s.sqlite")
    pairs = [("keep", "keep")] * 6 + [("correct", "correct")] * 3 + [("keep", "correct"), ("unresolved", "keep")]
    for k, (first, second) in enumerate(pairs):
        for who, action in (("ana", first), ("beto", second)):
            decide(store, who, action, "eu sei" if action == "correct" else "", start=float(k), end=k + 0.5)
    decide(store, "ana", start=50.0, end=51.0)  # one span with a single listener: not a pair
    agreement = decision_agreement(store.span_states())
    assert (agreement.pairs, agreement.agreed) == (11, 9)
    expected = cohens_kappa([[6, 1, 0, 0], [0, 3, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]])
    assert agreement.kappa == pytest.approx(expected.kappa)
    assert agreement.kappa_low <= agreement.kappa <= agreement.kappa_high <= 1.0
    assert agreement.table["keep"]["correct"] == 1 and agreement.table["unresolved"]["keep"] == 1
    assert (agreement.both_corrected, agreement.same_correction) == (3, 3)


def test_kappa_is_undefined_when_every_decision_is_in_one_category(tmp_path):
    store = DecisionStore(tmp_path / "s.sqlite")
    for k in range(3):
        for who in ("ana", "beto"):
            store.record(
                recording_id="rec",
                start=float(k),
                end=k + 0.5,
                action="keep",
                old_text="x",
                new_text="",
                annotator=who,
                reference_sha256="r",
                manifest_sha256="m",
            )
    agreement = decision_agreement(store.span_states())
    assert (agreement.pairs, agreement.agreed, agreement.kappa, agreement.observed) == (3, 3, None, 1.0)


def _nominal_alpha(units: list[list[str]]) -> float:
    """Krippendorff's nominal alpha by its definition (coincidences within units), as an oracle."""
    pairable = [u for u in units if len(u) >= 2]
    coincidences: dict[tuple[str, str], float] = {}
    for values in pairable:
        for i, a in enumerate(values):
            for j, b in enumerate(values):
                if i != j:
                    coincidences[a, b] = coincidences.get((a, b), 0.0) + 1 / (len(values) - 1)
    n = sum(coincidences.values())
    totals: dict[str, float] = {}
    for (a, _), count in coincidences.items():
        totals[a] = totals.get(a, 0.0) + count
    observed = sum(count for (a, b), count in coincidences.items() if a != b) / n
    expected = sum(totals[a] * totals[b] for a in totals for b in totals if a != b) / (n * (n - 1))
    return 1 - observed / expected


def test_alpha_and_named_pairs_count_a_third_listener_whom_kappa_does_not_see(tmp_path):
    store = DecisionStore(tmp_path / "s.sqlite")
    spans = [
        ("keep", "keep", "keep"),
        ("keep", "keep", "correct"),
        ("correct", "correct", "unresolved"),
        ("keep", "correct", None),
        ("unresolved", "unresolved", "unresolved"),
        ("keep", "keep", None),
    ]
    for k, actions in enumerate(spans):
        for who, action in zip(("ana", "beto", "carla"), actions):
            if action is not None:
                decide(store, who, action, "eu sei" if action == "correct" else "", start=float(k), end=k + 0.5)
    agreement = decision_agreement(store.span_states())
    # kappa: the first two listeners of each span only, as before
    assert (agreement.pairs, agreement.agreed, agreement.more_listeners) == (6, 5, 4)
    assert agreement.kappa == pytest.approx(cohens_kappa([[3, 1, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0] * 4]).kappa)
    # alpha: every listener's decision
    units = [[a for a in actions if a is not None] for actions in spans]
    assert agreement.alpha == pytest.approx(_nominal_alpha(units))
    assert agreement.alpha < _nominal_alpha([u[:2] for u in units])  # carla's two disagreements lower it
    assert agreement.alpha_low <= agreement.alpha <= agreement.alpha_high <= 1.0
    pairs = {(p.first, p.second): (p.spans, p.agreed) for p in agreement.listener_pairs}
    assert pairs == {("ana", "beto"): (6, 5), ("ana", "carla"): (4, 2), ("beto", "carla"): (4, 2)}


def test_alpha_is_undefined_when_every_listener_decides_alike(tmp_path):
    store = DecisionStore(tmp_path / "s.sqlite")
    for k in range(3):
        for who in ("ana", "beto", "carla"):
            decide(store, who, "keep", start=float(k), end=k + 0.5)
    agreement = decision_agreement(store.span_states())
    assert (agreement.alpha, agreement.alpha_low, agreement.more_listeners) == (None, None, 3)
    assert [(p.first, p.second, p.observed) for p in agreement.listener_pairs] == [
        ("ana", "beto", 1.0),
        ("ana", "carla", 1.0),
        ("beto", "carla", 1.0),
    ]
