"""Reference and hypothesis formats: round trips, real praatio/Praat files, and refusals naming the file."""

from __future__ import annotations

import codecs
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from praatio import textgrid as praat

from toolkit.core.errors import InputError
from toolkit.core.transcripts import Hypothesis, Interval, Reference, Utterance, Word
from toolkit.formats import (
    read_hypothesis,
    read_names,
    read_reference,
    write_ctm,
    write_hypothesis_json,
    write_names,
    write_reference_textgrid,
    write_stm,
)

REFERENCE = Reference(
    recording_id="entrevista",
    utterances=[
        Utterance(0.5, 2.25, "eu não sei né", "ANA"),
        Utterance(2.0, 3.5, "é é o João que sabe", "BETO"),
        Utterance(4.0, 6.125, "mil e quinhentos reais", "ANA"),
    ],
    words=[Word("eu", 0.5, 0.7), Word("né", 2.0, 2.25), Word("reais", 5.5, 6.125)],
    speech=[Interval(0.0, 0.5, "nonspeech"), Interval(0.5, 3.5, "speech"), Interval(3.5, 4.0, "nonspeech")],
    unresolved=[Interval(6.5, 7.0, "inaudível")],
)

PRAAT_LONG = """File type = "ooTextFile"
Object class = "TextGrid"

xmin = 0
xmax = 3
tiers? <exists>
size = 2
item []:
    item [1]:
        class = "IntervalTier"
        name = "utterances"
        xmin = 0
        xmax = 3
        intervals: size = 3
        intervals [1]:
            xmin = 0
            xmax = 0.4
            text = ""
        intervals [2]:
            xmin = 0.4
            xmax = 2.6
            text = "ele disse ""não"" à Conceição"
        intervals [3]:
            xmin = 2.6
            xmax = 3
            text = ""
    item [2]:
        class = "IntervalTier"
        name = "speech"
        xmin = 0
        xmax = 3
        intervals: size = 2
        intervals [1]:
            xmin = 0
            xmax = 0.4
            text = "nonspeech"
        intervals [2]:
            xmin = 0.4
            xmax = 3
            text = ""
"""


def _grid(tmp_path: Path, text: str, name: str = "rec.TextGrid", encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def test_textgrid_round_trip_keeps_every_tier(tmp_path: Path) -> None:
    path = write_reference_textgrid(REFERENCE, tmp_path / "entrevista.TextGrid", duration=8.0)
    back = read_reference(path, duration=8.0)
    assert back == REFERENCE
    assert praat.openTextgrid(str(path), includeEmptyIntervals=False).tierNames == (
        "utterances/ANA",
        "utterances/BETO",
        "words",
        "speech",
        "unresolved",
    )


def test_textgrid_unnamed_speaker_next_to_named_ones(tmp_path: Path) -> None:
    reference = Reference("r", [Utterance(0.0, 1.0, "oi", "ANA"), Utterance(0.5, 2.0, "olá")])
    path = write_reference_textgrid(reference, tmp_path / "r.TextGrid", duration=2.0)
    assert praat.openTextgrid(str(path), includeEmptyIntervals=False).tierNames[:2] == (
        "utterances/unknown",
        "utterances/ANA",
    )
    assert read_reference(path) == reference


def test_textgrid_single_speaker_uses_plain_utterances_tier(tmp_path: Path) -> None:
    reference = Reference("r", [Utterance(0.25, 1.0, "bom dia"), Utterance(1.5, 2.0, "tchau")])
    path = write_reference_textgrid(reference, tmp_path / "r.TextGrid", duration=2.0)
    grid = praat.openTextgrid(str(path), includeEmptyIntervals=False)
    assert grid.tierNames == ("utterances", "words", "speech", "unresolved")
    assert [tuple(e) for e in grid.getTier("utterances").entries] == [(0.25, 1.0, "bom dia"), (1.5, 2.0, "tchau")]
    assert read_reference(path) == reference


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 2000),
            st.integers(1, 2000),
            st.text("abcçãéíóúâêô ", min_size=1, max_size=12).filter(str.strip),
        ),
        max_size=8,
    )
)
def test_textgrid_round_trip_property(
    tmp_path_factory: pytest.TempPathFactory, spans: list[tuple[int, int, str]]
) -> None:
    cursor, utterances = 0, []
    for gap, length, text in spans:
        utterances.append(Utterance((cursor + gap) / 1000, (cursor + gap + length) / 1000, " ".join(text.split())))
        cursor += gap + length
    reference = Reference("p", utterances)
    path = write_reference_textgrid(reference, tmp_path_factory.mktemp("tg") / "p.TextGrid", cursor / 1000 + 1)
    assert read_reference(path) == reference


def test_reads_a_praat_file_with_quotes_accents_and_crlf(tmp_path: Path) -> None:
    path = _grid(tmp_path, PRAAT_LONG.replace("\n", "\r\n"))
    reference = read_reference(path, duration=3.0)
    assert reference.recording_id == "rec"
    assert reference.utterances == [Utterance(0.4, 2.6, 'ele disse "não" à Conceição')]
    assert reference.nonspeech() == [Interval(0.0, 0.4, "nonspeech")]


def test_reads_utf16_with_bom_as_praat_saves_non_ascii_text(tmp_path: Path) -> None:
    path = _grid(tmp_path, "\ufeff" + PRAAT_LONG, encoding="utf-16-le")
    assert read_reference(path).utterances[0].text == 'ele disse "não" à Conceição'


@pytest.mark.parametrize("fmt", ["long_textgrid", "short_textgrid", "json", "textgrid_json"])
def test_reads_files_saved_by_praatio_in_every_format(tmp_path: Path, fmt: str) -> None:
    grid = praat.Textgrid(0, 5.0)
    grid.addTier(praat.IntervalTier("utterances", [(1.0, 2.5, "tá bom"), (3.0, 4.0, "dois mil")], 0, 5.0))
    grid.addTier(praat.IntervalTier("words", [(1.0, 1.4, "tá")], 0, 5.0))
    grid.addTier(praat.IntervalTier("speech", [(0.0, 1.0, "nonspeech"), (1.0, 4.0, "speech")], 0, 5.0))
    grid.addTier(praat.IntervalTier("notes", [(0.0, 1.0, "anything")], 0, 5.0))
    path = tmp_path / "r.TextGrid"
    grid.save(str(path), format=fmt, includeBlankSpaces=True)
    reference = read_reference(path, duration=5.0)
    assert [(u.start, u.end, u.text) for u in reference.utterances] == [(1.0, 2.5, "tá bom"), (3.0, 4.0, "dois mil")]
    assert reference.words == [Word("tá", 1.0, 1.4)]
    assert reference.speech == [Interval(0.0, 1.0, "nonspeech"), Interval(1.0, 4.0, "speech")]


def _interval(start: float, end: float, text: str) -> str:
    return f"""        intervals [9]:
            xmin = {start}
            xmax = {end}
            text = "{text}"
"""


def _tier_text(name: str, intervals: list[tuple[float, float, str]], xmax: float = 10) -> str:
    body = "".join(_interval(*i) for i in intervals)
    return f"""File type = "ooTextFile"
Object class = "TextGrid"

xmin = 0
xmax = {xmax}
tiers? <exists>
size = 1
item []:
    item [1]:
        class = "IntervalTier"
        name = "{name}"
        xmin = 0
        xmax = {xmax}
        intervals: size = {len(intervals)}
{body}"""


@pytest.mark.parametrize(
    "text, problem",
    [
        (_tier_text("utterances", [(0, 2, "a"), (1.5, 3, "b")]), "overlaps interval 1"),
        (_tier_text("utterances", [(2, 3, "a"), (0, 1, "b")]), "out of order"),
        (_tier_text("utterances", [(3, 2, "a")]), "ends before it starts"),
        (_tier_text("speech", [(0, 2, "fala")]), "no 'utterances' tier"),
        (
            _tier_text("utterances", [(0, 1, "a")]).replace(
                "xmin = 0\n            xmax = 1", "xmin = -1\n            xmax = 1"
            ),
            "negative time",
        ),
        (_tier_text("utterances", [(0, 1, "a"), (1, 2, "b")]).rsplit("intervals [9]", 1)[0], "truncated"),
        ("hello, this is not a TextGrid\n", "malformed TextGrid"),
        (
            'File type = "ooTextFile"\nObject class = "TextGrid"\n\nxmin = 0\nxmax = 1\ntiers? <exists>\nsize = 1\n'
            'item []:\n    item [1]:\n        class = "IntervalTier"\n        name = ',
            "truncated TextGrid: the file ends before tier 1's name",
        ),
    ],
)
def test_bad_textgrids_are_refused_naming_the_file(tmp_path: Path, text: str, problem: str) -> None:
    path = _grid(tmp_path, text)
    with pytest.raises(InputError) as caught:
        read_reference(path)
    assert str(path) in str(caught.value) and problem in str(caught.value)


def test_textgrid_speech_tier_labels_and_duration_are_checked(tmp_path: Path) -> None:
    two_tiers = _tier_text("utterances", [(0, 1, "a")]).replace("size = 1\nitem", "size = 2\nitem") + _tier_text(
        "speech", [(0, 1, "barulho")]
    ).split("item []:\n", 1)[1].replace("item [1]", "item [2]")
    with pytest.raises(InputError, match="label 'barulho'"):
        read_reference(_grid(tmp_path, two_tiers))
    late = _grid(tmp_path, _tier_text("utterances", [(0, 9, "a")]), "late.TextGrid")
    with pytest.raises(InputError, match=r"late.TextGrid: .*ends after the recording's duration \(5 s\)"):
        read_reference(late, duration=5.0)
    assert read_reference(late, duration=9.0).utterances[0].end == 9


def test_unknown_encoding_is_refused(tmp_path: Path) -> None:
    path = _grid(tmp_path, PRAAT_LONG, encoding="latin-1")
    with pytest.raises(InputError, match="unknown text encoding"):
        read_reference(path)
    bomless = _grid(tmp_path, PRAAT_LONG, "u16.TextGrid", encoding="utf-16-le")
    with pytest.raises(InputError, match="u16.TextGrid: unknown text encoding"):
        read_reference(bomless)


def test_write_refuses_what_a_textgrid_cannot_hold(tmp_path: Path) -> None:
    overlapping = Reference("r", [Utterance(0, 2, "a"), Utterance(1, 3, "b")])
    with pytest.raises(InputError, match="tier 'utterances'"):
        write_reference_textgrid(overlapping, tmp_path / "r.TextGrid", 4.0)
    with pytest.raises(InputError, match="ends after the recording's duration"):
        write_reference_textgrid(Reference("r", [Utterance(0, 5, "a")]), tmp_path / "r.TextGrid", 4.0)
    assert not list(tmp_path.iterdir())


def test_stm_round_trip_with_comments_labels_and_ignored_segments(tmp_path: Path) -> None:
    path = tmp_path / "entrevista.stm"
    path.write_text(
        ";; entrevista de teste\n"
        "entrevista 1 ANA 0.500 2.250 <o,f0,female> eu não sei né\n"
        "entrevista 1 BETO 2.000 3.500 é é o João que sabe\n"
        "entrevista 1 inter_segment_gap 3.500 4.000\n"
        "entrevista 1 ANA 4.000 6.125 mil e quinhentos reais\n"
        "entrevista 1 unknown 6.500 7.000 IGNORE_TIME_SEGMENT_IN_SCORING\n",
        encoding="utf-8",
    )
    reference = read_reference(path)
    assert reference.utterances == REFERENCE.utterances
    assert reference.unresolved == [Interval(6.5, 7.0, "IGNORE_TIME_SEGMENT_IN_SCORING")]
    again = write_stm([reference], tmp_path / "again.stm")
    assert read_reference(again, recording_id="entrevista") == reference


_STM_WORD = st.text(alphabet="<>ab,ã", min_size=1, max_size=5)


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(st.lists(_STM_WORD, min_size=1, max_size=4).map(" ".join), min_size=1, max_size=3))
def test_stm_round_trip_keeps_words_that_look_like_labels(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str]
) -> None:
    """A turn whose first word starts with '<' (a '<unk>' tag) is written behind a label and read back whole."""
    reference = Reference("rec", [Utterance(float(i), i + 0.5, text) for i, text in enumerate(texts)])
    path = write_stm([reference], tmp_path_factory.mktemp("stm") / "rec.stm")
    assert read_reference(path).utterances == reference.utterances


@pytest.mark.parametrize(
    "line, problem",
    [
        ("rec 1 A 2.0 1.0 texto", "line 2: segment 2-1 s ends before it starts"),
        ("rec 1 A zero 1.0 texto", "line 2: start time 'zero' is not a number"),
        ("rec 1 A", "line 2: expected"),
        ("rec 1 B 0.5 1.0 fora de ordem", "line 2: segment at 0.5 s is out of order"),
        ("rec 1 A 2.5 4.0 sobreposto", "line 2: segment 2.5-4 s overlaps speaker A's segment on line 1"),
    ],
)
def test_bad_stm_lines_are_refused_with_file_and_line(tmp_path: Path, line: str, problem: str) -> None:
    path = tmp_path / "rec.stm"
    path.write_text(f"rec 1 A 1.0 3.0 primeiro\n{line}\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_reference(path)
    assert str(caught.value) == f"{path}: {problem}" or str(caught.value).startswith(f"{path}: {problem}")


def test_stm_with_several_recordings_needs_the_id(tmp_path: Path) -> None:
    path = tmp_path / "all.stm"
    path.write_text("a 1 X 0 1 um\nb 1 Y 0 1 dois\n", encoding="utf-8")
    assert read_reference(path, recording_id="b").text == "dois"
    with pytest.raises(InputError, match="no segments for recording 'all'"):
        read_reference(path)


def test_ctm_round_trip_keeps_confidence_and_untimed_words(tmp_path: Path) -> None:
    hypothesis = Hypothesis(
        "rec",
        [Word("não", 0.5, 0.8, 0.91), Word("sei", 0.8, 1.1), Word("João"), Word("mil", 2.0, 2.3, 0.5)],
        arm="baseline",
    )
    path = write_ctm(hypothesis, tmp_path / "rec.ctm")
    assert "rec 1 0.500 0.300 não 0.9100" in path.read_text(encoding="utf-8")
    back = read_hypothesis(path)
    assert back.recording_id == "rec"
    assert [w.text for w in back.words] == ["não", "sei", "João", "mil"]
    for before, after in zip(hypothesis.words, back.words):
        assert after.confidence == before.confidence
        assert (after.start is None) == (before.start is None)
        if before.timed:
            assert after.start == pytest.approx(before.start, abs=1e-3)
            assert after.end == pytest.approx(before.end, abs=1e-3)


@pytest.mark.parametrize(
    "line, problem",
    [
        ("rec 1 -0.5 0.2 menos", "line 2: negative start (-0.5)"),
        ("rec 1 3.0 -0.2 menos", "line 2: negative duration (-0.2)"),
        ("rec 1 0.1 0.2 antes", "line 2: word 'antes' at 0.1 s is out of order (line 1 starts at 1 s)"),
        ("rec 1 3.0 0.2 x 0.5 sobra", "line 2: expected"),
        ("rec 1 3.0 0.2 x alta", "line 2: confidence 'alta' is not a number"),
    ],
)
def test_bad_ctm_lines_are_refused_with_file_and_line(tmp_path: Path, line: str, problem: str) -> None:
    path = tmp_path / "rec.ctm"
    path.write_text(f"rec 1 1.0 0.5 primeiro\n{line}\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_hypothesis(path)
    assert str(caught.value).startswith(f"{path}: {problem}")


def test_empty_ctm_is_an_empty_hypothesis(tmp_path: Path) -> None:
    path = tmp_path / "rec.ctm"
    path.write_text(";; nothing recognised\n", encoding="utf-8")
    assert read_hypothesis(path) == Hypothesis("rec", [])


def test_hypothesis_json_round_trip_and_checks(tmp_path: Path) -> None:
    hypothesis = Hypothesis(
        "rec", [Word("olá", 0.1, 0.4, 0.9, "w0"), Word("mundo")], arm="vad", meta={"unmapped_times": 1}
    )
    path = write_hypothesis_json(hypothesis, tmp_path / "rec.json")
    assert read_hypothesis(path) == hypothesis
    with pytest.raises(InputError, match="is for recording 'rec', expected 'outra'"):
        read_hypothesis(path, recording_id="outra")
    broken = tmp_path / "broken.json"
    broken.write_text('{"recording_id": "x", "words": [', encoding="utf-8")
    with pytest.raises(InputError, match="broken.json: malformed JSON"):
        read_hypothesis(broken)
    backwards = tmp_path / "backwards.json"
    backwards.write_text('{"recording_id": "x", "words": [{"text": "a", "start": 2, "end": 1}]}', encoding="utf-8")
    with pytest.raises(InputError, match="impossible times"):
        read_hypothesis(backwards)


_WORD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 10**19),
    st.floats(-1.0, 1e6),
    st.sampled_from([0, 0.0, 1, 2.0, 1e308, math.inf, -math.inf, math.nan]),
    st.sampled_from(["", " ", "a", "não"]),
    st.lists(st.integers(), max_size=1),
)


@st.composite
def _word_items(draw: st.DrawFn) -> list:
    """Right words (timed in order, or untimed; ints and floats), then maybe one field, key or item made wrong."""
    items, at = [], 0.0
    for _ in range(draw(st.integers(0, 6))):
        item = {"text": draw(st.sampled_from(["a", "não", "olá"]))}
        if draw(st.booleans()):
            at += draw(st.sampled_from([0, 0.5, 1]))
            item |= {"start": at if draw(st.booleans()) else int(at), "end": at + draw(st.sampled_from([0, 0.25]))}
        item |= draw(st.dictionaries(st.sampled_from(["confidence", "segment_id"]), st.sampled_from([None, 0.5, "s"])))
        items.append({k: v for k, v in item.items() if not (k == "confidence" and v == "s")})
    if items and draw(st.booleans()):
        k = draw(st.integers(0, len(items) - 1))
        change = draw(st.sampled_from(["value", "times", "drop", "item"]))
        if change == "times":  # reversed, negative, out of order, or one of the two missing
            items[k] |= {key: draw(st.sampled_from([None, -0.5, 0, 0.25, 3.0])) for key in ("start", "end")}
        elif change == "value":
            items[k][draw(st.sampled_from(["text", "start", "end", "confidence", "segment_id", "other"]))] = draw(
                _WORD_VALUES
            )
        elif change == "drop":
            items[k].pop(draw(st.sampled_from(sorted(items[k]))))
        else:
            items[k] = draw(st.sampled_from([None, "a", 1, [], {}]))
    return items


@settings(max_examples=500, deadline=None)
@given(items=_word_items())
def test_json_words_read_at_once_are_the_words_checked_one_by_one(items: list) -> None:
    """The fast reading of a hypothesis file's words accepts only what the word-by-word checks accept, and
    gives the same words; anything else goes to those checks, which name the first wrong word."""
    from toolkit.formats import _checked_words, _words_at_once

    at_once = _words_at_once(items)
    try:
        checked = _checked_words(Path("h.json"), items)
    except InputError:
        assert at_once is None
        return
    assert at_once == checked
    assert [type(w.start) for w in at_once] == [type(w.start) for w in checked]


def test_plain_text_reference_and_hypothesis(tmp_path: Path) -> None:
    path = tmp_path / "rec.txt"
    path.write_text("Eu não sei,\n  o João sabe.\n", encoding="utf-8")
    reference = read_reference(path)
    assert reference.utterances == [Utterance(0.0, math.inf, "Eu não sei,"), Utterance(0.0, math.inf, "o João sabe.")]
    assert read_reference(path, duration=4.0).utterances[0].end == math.inf  # never a marked time
    assert [w.text for w in read_hypothesis(path).words] == ["Eu", "não", "sei,", "o", "João", "sabe."]
    assert all(not w.timed for w in read_hypothesis(path).words)


def test_names_list_and_reference_with_names(tmp_path: Path) -> None:
    names = tmp_path / "rec.names.txt"
    names.write_bytes(codecs.BOM_UTF8 + "# nomes próprios\nJoão\n\n  Conceição  da Silva \nJoão\n".encode())
    assert read_names(names) == ["João", "Conceição da Silva"]
    assert read_names(write_names(["Ana", "Zé"], tmp_path / "x.names.txt")) == ["Ana", "Zé"]
    grid = _grid(tmp_path, PRAAT_LONG)
    assert read_reference(grid, names_path=names).names == ["João", "Conceição da Silva"]


def test_unknown_extensions_and_missing_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"unknown reference format '\.eaf'"):
        read_reference(tmp_path / "rec.eaf")
    with pytest.raises(InputError, match=r"unknown hypothesis format '\.srt'"):
        read_hypothesis(tmp_path / "rec.srt")
    with pytest.raises(InputError, match="nada.TextGrid: file not found"):
        read_reference(tmp_path / "nada.TextGrid")


def test_untimed_turns_are_never_written_into_a_textgrid_with_invented_times(tmp_path: Path) -> None:
    from toolkit.formats.plaintext import untimed_turns

    reference = Reference("rec", untimed_turns("Eu não sei.\nO João sabe."))
    with pytest.raises(InputError, match="untimed turns"):
        write_reference_textgrid(reference, tmp_path / "rec.TextGrid", 5.0)
    assert not (tmp_path / "rec.TextGrid").exists()
