"""Every gate passing and failing on constructed runs (real files, no decoding), and the gates file's strictness."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from protocol_corpus import correct, make_corpus, make_run, turns

from toolkit.core.errors import InputError
from toolkit.core.transcripts import Word
from toolkit.evaluate import evaluate_run
from toolkit.protocol.gate_measures import MEASURES, DitherOutcome
from toolkit.protocol.gates import PROMOTE, RETAIN, evaluate_gates
from toolkit.protocol.gates_file import DITHER_GATE, SPECS, TEMPLATE, load_gates
from toolkit.scorer.options import ScoreOptions

RECORDINGS = ("r1", "r2", "r3")


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_corpus(tmp_path_factory.mktemp("corpus"), {rid: "holdout" for rid in RECORDINGS})


def _gates(tmp_path: Path, edits: dict[str, str] | None = None) -> Path:
    """The template with some gate tables replaced."""
    text = TEMPLATE.read_text(encoding="utf-8")
    for gate, body in (edits or {}).items():
        start = text.index(f"[{gate}]")
        end = text.find("\n[", start + 1)
        end = len(text) if end < 0 else end
        text = text[:start] + f"[{gate}]\n{body}\n" + text[end:]
    path = tmp_path / "gates.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _with_text(words: list[Word], k: int, text: str | None) -> list[Word]:
    """Words with word ``k`` replaced by ``text`` (None deletes it)."""
    if text is None:
        return words[:k] + words[k + 1 :]
    return words[:k] + [Word(text, words[k].start, words[k].end)] + words[k + 1 :]


def _baseline_with_plain_errors() -> list[Word]:
    """The correct words with two non-critical substitutions ("casa", "documento"), which a challenger may fix."""
    words = correct(turns())
    index = {w.text: k for k, w in enumerate(words)}
    return _with_text(_with_text(words, index["casa"], "cama"), index["documento"], "momento")


# A gate declared not applicable, with its reason, as these tests' gates file does for drift.
NO_DRIFT = {"drift_s_per_min": 'applicable = false\nreason = "references are timed per turn, not per word"'}
# The template's three dithered reruns, measured, none changing the other gates' verdict.
STABLE = DitherOutcome(("same",) * 4)


def _evaluate(
    tmp_path: Path,
    manifest: Path,
    base: dict[str, list[Word]],
    chal: dict[str, list[Word]],
    edits: dict[str, str] | None = None,
    dither: DitherOutcome | None = STABLE,
    **run_options,
):
    run = make_run(tmp_path / "run", manifest, "holdout", {"baseline": base, "challenger": chal}, **run_options)
    evaluation = evaluate_run(run)
    gates = load_gates(_gates(tmp_path, {**NO_DRIFT, **(edits or {})}))
    report = evaluate_gates(evaluation, "challenger", gates, dither=dither)
    return evaluation, report, {g.name: g for g in report.gates}


def test_a_challenger_that_fixes_errors_and_breaks_nothing_is_promoted(tmp_path: Path, manifest: Path) -> None:
    base = {rid: _baseline_with_plain_errors() for rid in RECORDINGS}
    chal = {rid: correct(turns()) for rid in RECORDINGS}
    _, report, gates = _evaluate(tmp_path, manifest, base, chal)
    assert report.verdict == PROMOTE, report.text()
    assert all(g.passed for g in report.gates if g.applicable)
    assert gates["drift_s_per_min"].applicable is False and gates["drift_s_per_min"].passed is None
    assert gates["wer_reduction_points"].value > 0.5
    assert gates["new_negation_errors"].opportunities == 3 * 2  # "não" and "ninguém" per recording
    assert "0 failures in 6: exact one-sided 95% upper bound on the failure rate 39.3%" in report.caveat
    assert "rare-failure" in report.caveat
    assert report.holdout["recordings"] == 3 and report.holdout["reference_words"] == 3 * 21
    data = report.to_json()
    assert set(data) >= {"verdict", "gates", "caveat", "holdout", "signature"}
    assert set(data["gates"][0]) >= {"name", "passed", "value", "threshold", "applicable", "instances"}


def test_a_new_negation_flip_fails_with_its_instance(tmp_path: Path, manifest: Path) -> None:
    base = {rid: correct(turns()) for rid in RECORDINGS}
    chal = dict(base)
    chal["r2"] = _with_text(base["r2"], 1, None)  # "não" deleted by the challenger only
    _, report, gates = _evaluate(tmp_path, manifest, base, chal)
    gate = gates["new_negation_errors"]
    assert report.verdict == RETAIN and gate.passed is False and gate.value == 1
    [instance] = gate.instances
    assert instance["recording"] == "r2" and instance["reference"] == "não"
    assert instance["baseline"] == "não" and instance["challenger"] == ""
    assert instance["time"] == 1.0  # no word tier: an untimed reference word carries its turn's start


def test_an_error_both_make_is_not_new(tmp_path: Path, manifest: Path) -> None:
    both = {rid: _with_text(correct(turns()), 1, "nós") for rid in RECORDINGS}
    _, _, gates = _evaluate(tmp_path, manifest, both, both)
    assert gates["new_negation_errors"].passed and gates["new_negation_errors"].value == 0
    # the same count of flips at different positions is still new: matched by position, not by count
    moved = {rid: _with_text(correct(turns()), 15, "alguém") for rid in RECORDINGS}  # "ninguém" flipped instead
    _, _, gates = _evaluate(tmp_path, manifest, both, moved)
    assert gates["new_negation_errors"].value == 3
    assert {i["reference"] for i in gates["new_negation_errors"].instances} == {"ninguém"}


def test_new_negation_insertion_name_and_number_errors(tmp_path: Path, manifest: Path) -> None:
    base = {rid: correct(turns()) for rid in RECORDINGS}
    words = correct(turns())
    index = {w.text: k for k, w in enumerate(words)}
    broken = _with_text(_with_text(words, index["Maria"], "Mário"), index["cinco"], "seis")
    broken = broken[:4] + [Word("não", broken[4].start, broken[4].end)] + broken[4:]  # "... sair não hoje"
    chal = {**base, "r1": broken}
    _, report, gates = _evaluate(tmp_path, manifest, base, chal)
    assert gates["new_name_errors"].value == 1 and gates["new_name_errors"].instances[0]["challenger"] == "Mário"
    assert gates["new_number_errors"].value == 1
    assert gates["new_number_errors"].instances[0]["reference"] == "vinte e cinco"
    negation = gates["new_negation_errors"]
    assert negation.value == 1 and negation.instances[0]["kind"] == "negation inserted"
    assert report.verdict == RETAIN


def test_a_number_written_in_another_form_says_so(tmp_path: Path, manifest: Path) -> None:
    """Issue 19: a "new number error" that is only the same number in another form (the challenger's
    ordinal for the baseline's cardinal) says so, so a reviewer does not read it as recognition."""
    base = {rid: correct(turns()) for rid in RECORDINGS}
    words = correct(turns())
    k = next(i for i, w in enumerate(words) if w.text == "vinte")
    reworded = words[:k] + [
        Word("vigésimo", words[k].start, words[k].end),
        Word("quinto", words[k + 2].start, words[k + 2].end),
    ]
    chal = {**base, "r1": reworded + words[k + 3 :]}
    run = make_run(tmp_path / "run", manifest, "holdout", {"baseline": base, "challenger": chal})
    evaluation = evaluate_run(run, ScoreOptions())
    report = evaluate_gates(evaluation, "challenger", load_gates(_gates(tmp_path, NO_DRIFT)))
    [instance] = {g.name: g for g in report.gates}["new_number_errors"].instances
    assert instance["challenger"] == "vigésimo quinto" and "only in form (25 / 25º)" in instance["detail"]
    assert "only in form" in report.text()
    wrong = {**base, "r1": _with_text(words, k + 2, "seis")}  # another value: no such note
    run = make_run(tmp_path / "run", manifest, "holdout", {"baseline": base, "challenger": wrong})
    report = evaluate_gates(evaluate_run(run), "challenger", load_gates(_gates(tmp_path, NO_DRIFT)))
    [instance] = {g.name: g for g in report.gates}["new_number_errors"].instances
    assert "detail" not in instance


def test_a_lost_turn_fails_and_is_in_every_arms_scores(tmp_path: Path, manifest: Path) -> None:
    utterances = turns()
    base = {rid: correct(utterances) for rid in RECORDINGS}
    lost = [w for w in correct(utterances) if not (utterances[1].start <= w.start <= utterances[1].end)]
    chal = {**base, "r3": lost}
    evaluation, report, gates = _evaluate(tmp_path, manifest, base, chal)
    gate = gates["lost_speech_turns"]
    assert gate.passed is False and gate.value == 1 and gate.opportunities == 9
    assert gate.instances[0]["reference"] == utterances[1].text and gate.instances[0]["challenger"] == ""
    assert gate.instances[0]["baseline"] == utterances[1].text
    scored = json.loads((evaluation.folder.scores / "challenger" / "r3.json").read_text(encoding="utf-8"))
    assert scored["lost_turns"]["count"] == 1 and scored["lost_turns"]["denominator"] == 3
    assert scored["lost_turns"]["instances"][0]["reference"] == utterances[1].text
    baseline_scored = json.loads((evaluation.folder.scores / "baseline" / "r3.json").read_text(encoding="utf-8"))
    assert baseline_scored["lost_turns"]["count"] == 0
    overall = evaluation.aggregate.set_index(["arm", "stratum"]).loc[("challenger", "all")]
    assert overall["lost_turns"] == 1 and overall["lost_turns_denominator"] == 9


def test_a_turn_the_baseline_missed_is_not_lost(tmp_path: Path, manifest: Path) -> None:
    utterances = turns()
    half_missing = [w for w in correct(utterances) if not (utterances[1].start <= w.start <= utterances[1].end)]
    both = {rid: half_missing for rid in RECORDINGS}
    _, _, gates = _evaluate(tmp_path, manifest, both, both)
    assert gates["lost_speech_turns"].value == 0 and gates["lost_speech_turns"].opportunities == 6


def test_a_seam_duplication_fails(tmp_path: Path, manifest: Path) -> None:
    base = {rid: correct(turns()) for rid in RECORDINGS}
    words = correct(turns())
    duplicated = words[:3] + [Word(words[2].text, words[2].start + 0.01, words[2].end)] + words[3:]
    chal = {**base, "r1": duplicated}
    seam = (words[2].start - 0.5, words[2].end + 0.5)
    _, _, gates = _evaluate(
        tmp_path, manifest, base, chal, stages={"challenger": ["windows"]}, seams={"challenger": [seam]}
    )
    assert gates["seam_duplications"].passed is False and gates["seam_duplications"].value == 1
    assert gates["seam_duplications"].instances[0]["challenger"] == words[2].text
    assert gates["seam_omissions"].passed and gates["seam_omissions"].opportunities == 3
    omitted = {**base, "r1": _with_text(words, 3, None)}
    _, _, gates = _evaluate(
        tmp_path, manifest, base, omitted, stages={"challenger": ["windows"]}, seams={"challenger": [seam]}
    )
    assert gates["seam_omissions"].passed is False and gates["seam_omissions"].value == 1


def test_vad_recall_onset_and_wer_gates_fail_when_past_their_thresholds(tmp_path: Path, manifest: Path) -> None:
    utterances = turns()
    base = {rid: correct(utterances) for rid in RECORDINGS}
    late = {rid: [Word(w.text, w.start + 1.5, w.end + 1.5) for w in correct(utterances)] for rid in RECORDINGS}
    clipped = [(u.start + 0.5, u.end) for u in utterances]
    _, report, gates = _evaluate(
        tmp_path, manifest, base, late, stages={"challenger": ["vad"]}, vad={"challenger": clipped}
    )
    assert gates["vad_speech_recall"].passed is False
    assert gates["vad_speech_recall"].value == pytest.approx(2.5 / 3.0, abs=1e-6)
    assert gates["onset_p95_s"].passed is False and gates["onset_p95_s"].value == pytest.approx(1.5, abs=0.01)
    assert gates["wer_reduction_points"].passed is False and gates["wer_reduction_points"].value == 0
    assert report.verdict == RETAIN


def test_an_applicable_gate_that_cannot_be_measured_fails(tmp_path: Path, manifest: Path) -> None:
    base = {rid: correct(turns()) for rid in RECORDINGS}
    untimed = {rid: [Word(w.text) for w in words] for rid, words in base.items()}  # plain-text hypotheses
    _, _, gates = _evaluate(
        tmp_path, manifest, base, untimed, edits={"drift_s_per_min": "applicable = true\nthreshold = 0.1"}
    )
    for name in ("drift_s_per_min", "onset_p95_s"):
        assert gates[name].passed is False and "not measurable" in gates[name].note


@pytest.mark.parametrize(
    "edit, key",
    [
        ({"new_name_errors": "applicable = true\ntreshold = 0"}, "new_name_errors.treshold"),
        ({"new_name_errors": "applicable = true"}, "new_name_errors.threshold"),
        ({"vad_speech_recall": 'applicable = true\nthreshold = "high"'}, "vad_speech_recall.threshold"),
        ({"lost_speech_turns": "applicable = true\nthreshold = 0.5"}, "lost_speech_turns.threshold"),
        ({"seam_omissions": "applicable = false"}, "seam_omissions.reason"),
        ({"seam_omissions": 'applicable = "no"\nreason = "x"'}, "seam_omissions.applicable"),
    ],
)
def test_a_bad_gates_file_is_one_line_naming_the_file_and_key(tmp_path: Path, edit: dict[str, str], key: str) -> None:
    path = _gates(tmp_path, edit)
    with pytest.raises(InputError) as caught:
        load_gates(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and f"'{key}'" in message and "\n" not in message


def test_unknown_and_missing_gates_are_named(tmp_path: Path) -> None:
    text = TEMPLATE.read_text(encoding="utf-8")
    (tmp_path / "extra.toml").write_text(text + "\n[wer_gain]\napplicable = true\nthreshold = 1\n", encoding="utf-8")
    with pytest.raises(InputError, match="unknown key 'wer_gain'"):
        load_gates(tmp_path / "extra.toml")
    start = text.index("[onset_p95_s]")
    (tmp_path / "missing.toml").write_text(text[:start] + text[text.index("[drift_s_per_min]") :], encoding="utf-8")
    with pytest.raises(InputError, match="missing key 'onset_p95_s'"):
        load_gates(tmp_path / "missing.toml")


def test_the_template_writes_out_every_gate() -> None:
    gates = load_gates(TEMPLATE)
    assert all(g.applicable and g.threshold is not None for g in gates.gates.values())


def test_every_gate_has_one_measure_in_the_gates_order() -> None:
    assert list(MEASURES) == [spec.name for spec in SPECS]


def test_a_duplication_the_baseline_made_too_is_not_counted_against_the_seam(tmp_path: Path, manifest: Path) -> None:
    """Like the critical-word gates, the seam gates count only what the challenger introduced."""
    words = correct(turns())
    duplicated = words[:3] + [Word(words[2].text, words[2].start + 0.01, words[2].end)] + words[3:]
    base = {rid: correct(turns()) for rid in RECORDINGS}
    seam = (words[2].start - 0.5, words[2].end + 0.5)
    options = {"stages": {"challenger": ["windows"]}, "seams": {"challenger": [seam]}}
    both = {**base, "r1": duplicated}  # the baseline inserted the same word there too: not the seam's doing
    _, _, gates = _evaluate(tmp_path, manifest, both, both, **options)
    assert gates["seam_duplications"].value == 0 and gates["seam_duplications"].passed
    other = {**base, "r1": words[:3] + [Word("sim", words[2].start + 0.01, words[2].end)] + words[3:]}
    _, _, gates = _evaluate(tmp_path, manifest, other, both, **options)  # the baseline inserted another word
    assert gates["seam_duplications"].value == 1


def test_a_verdict_waits_for_its_dithered_reruns_and_one_flip_retains_the_baseline(
    tmp_path: Path, manifest: Path
) -> None:
    """The template pre-registers 3 reruns: until a stability check measured them the gate fails; a rerun
    whose other gates say otherwise fails it; a rerun past the pre-registered ones does not count."""
    base = {rid: _baseline_with_plain_errors() for rid in RECORDINGS}
    chal = {rid: correct(turns()) for rid in RECORDINGS}
    outcomes = {
        None: (RETAIN, None, "not measured, 3 pre-registered"),
        DitherOutcome((PROMOTE, PROMOTE, PROMOTE)): (RETAIN, None, "2 rerun(s) measured, 3 pre-registered"),
        DitherOutcome((PROMOTE,) * 4): (PROMOTE, 0, "0 of 3 reruns differ"),
        DitherOutcome((PROMOTE, PROMOTE, RETAIN, PROMOTE)): (RETAIN, 1, "1 of 3 reruns differ"),
        DitherOutcome((PROMOTE,) * 4 + (RETAIN,)): (PROMOTE, 0, "0 of 3 reruns differ"),
    }
    for k, (dither, (verdict, value, note)) in enumerate(outcomes.items()):
        _, report, gates = _evaluate(tmp_path / str(k), manifest, base, chal, dither=dither)
        gate = gates[DITHER_GATE]
        assert (report.verdict, gate.value, report.others_verdict) == (verdict, value, PROMOTE), report.text()
        assert note in gate.note and gate.passed is (verdict == PROMOTE)
        assert dither is not None or "--split holdout --stability 3" in gate.note  # it says what to run


def test_a_format_1_gates_file_still_reads_without_the_dither_gate(tmp_path: Path) -> None:
    text = TEMPLATE.read_text(encoding="utf-8")
    old = text[: text.index(f"[{DITHER_GATE}]")].replace("format = 2", "format = 1")
    (tmp_path / "old.toml").write_text(old, encoding="utf-8")
    gate = load_gates(tmp_path / "old.toml").gates[DITHER_GATE]
    assert not gate.applicable and "not pre-registered: a format-1 gates file" in gate.reason
    (tmp_path / "mixed.toml").write_text(text.replace("format = 2", "format = 1"), encoding="utf-8")
    with pytest.raises(InputError, match=f"key '{DITHER_GATE}' is a gate of format = 2, not 1"):
        load_gates(tmp_path / "mixed.toml")
    (tmp_path / "future.toml").write_text(text.replace("format = 2", "format = 3"), encoding="utf-8")
    with pytest.raises(InputError, match="key 'format' must be 1 or 2, not 3"):
        load_gates(tmp_path / "future.toml")


@pytest.mark.parametrize(
    "body, problem",
    [
        ("applicable = true\nthreshold = 0", f"missing key '{DITHER_GATE}.reruns'"),
        ("applicable = true\nthreshold = 0\nreruns = 0", "must be a whole number from 1 to 100, not 0"),
        ("applicable = true\nthreshold = 0\nreruns = 101", "must be a whole number from 1 to 100, not 101"),
        ("applicable = true\nthreshold = 0\nreruns = 2.5", "must be a whole number from 1 to 100, not 2.5"),
        ("applicable = true\nthreshold = 0\nreruns = true", "must be a whole number from 1 to 100, not True"),
        ("applicable = true\nthreshold = 4\nreruns = 3", "allows more flips than there are reruns (3)"),
        ("applicable = true\nthreshold = 0\nreruns = 3\nseeds = 3", f"unknown key '{DITHER_GATE}.seeds'"),
    ],
)
def test_the_dither_gates_reruns_are_checked(tmp_path: Path, body: str, problem: str) -> None:
    path = _gates(tmp_path, {DITHER_GATE: body})
    with pytest.raises(InputError) as caught:
        load_gates(path)
    assert str(caught.value).startswith(str(path)) and problem in str(caught.value)
