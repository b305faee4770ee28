"""Money, percent, units, ordinals, dates and clock times as pt-BR writes and says them (ptbr-norm-3):
news sentences written with digits and symbols against the words a reader or a recognizer uses."""

from __future__ import annotations

import pytest

from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.scorer.normalize import NormalizationPolicy, Normalizer
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.score import score_recording

NORM = Normalizer(NormalizationPolicy.normalized("ptbr-norm-3"))
V2 = Normalizer(NormalizationPolicy.normalized("ptbr-norm-2"))


def same(written: str, said: str, normalizer: Normalizer = NORM) -> bool:
    return normalizer.words(written) == normalizer.words(said)


def values(text: str) -> list[str]:
    seen: dict[int, str] = {}
    for token in NORM.tokens(text.split()):
        if token.number_group is not None:
            seen.setdefault(token.number_group, token.number_value)
    return list(seen.values())


@pytest.mark.parametrize(
    "written, said",
    [
        ("R$ 2.300,00", "dois mil e trezentos reais"),
        ("R$ 2.300", "dois mil e trezentos reais"),
        ("R$ 2.300 reais", "dois mil e trezentos reais"),  # a recognizer writing the symbol and the word
        ("R$ 5,43", "cinco reais e quarenta e três centavos"),
        ("R$ 2,5 bilhões", "dois vírgula cinco bilhões de reais"),
        ("US$ 150 mil", "cento e cinquenta mil dólares"),
        ("15%", "quinze por cento"),
        ("1,2%", "um vírgula dois por cento"),
        ("3º lugar", "terceiro lugar"),
        ("a 21ª edição", "a vigésima primeira edição"),
    ],
)
def test_money_percent_and_ordinals(written: str, said: str) -> None:
    assert same(written, said)
    assert values(written) == values(said) != []


@pytest.mark.parametrize(
    "written, said",
    [
        ("120 km", "cento e vinte quilômetros"),
        ("120km", "cento e vinte quilômetros"),
        ("1 km", "um quilômetro"),
        ("30 t de soja", "trinta toneladas de soja"),
        ("1 t", "uma tonelada"),
        ("5 kg", "cinco quilos"),
        ("5 kg", "cinco quilogramas"),  # the unit said two ways
        ("500 g", "quinhentos gramas"),
        ("75 m²", "setenta e cinco metros quadrados"),
        ("80 km/h", "oitenta quilômetros por hora"),
        ("1,5 km", "um vírgula cinco quilômetros"),
        ("38 °C", "trinta e oito graus"),
        ("200 ml", "duzentos mililitros"),
        ("10 ha", "dez hectares"),
    ],
)
def test_units_after_a_numeral(written: str, said: str) -> None:
    assert same(written, said)


@pytest.mark.parametrize("text", ["o m da palavra", "a letra t", "tamanho G", "rede 4G", "ha ha ha"])
def test_unit_symbols_are_letters_anywhere_else(text: str) -> None:
    assert NORM.words(text) == V2.words(text)


@pytest.mark.parametrize(
    "written, said",
    [
        ("às 14h30", "às catorze e trinta"),
        ("às 14h30", "às quatorze horas e trinta minutos"),
        ("às 14h30", "às quatorze horas e trinta"),
        ("às 14:30", "às catorze e trinta"),
        ("às 14h30min", "às catorze e trinta"),
        ("às 2h30", "às duas e meia"),
        ("às 10h30", "às dez e meia"),
        ("à 1h30", "à uma e meia"),
        ("às 18h", "às dezoito horas"),
        ("21h05", "vinte e uma horas e cinco"),
    ],
)
def test_clock_times_read_every_way_they_are_said(written: str, said: str) -> None:
    assert same(written, said)
    assert values(written) == values(said) and values(written)[0].count("h") == 1


def test_a_bare_cardinal_pair_is_no_time_without_its_context() -> None:
    assert values("dez e meia xícara") == ["10"]  # "meia" alone stays a word
    assert values("tinha catorze e trinta anos") == ["14", "30"]


@pytest.mark.parametrize(
    "written, said, value",
    [
        ("15/03/2020", "quinze de março de dois mil e vinte", "2020-03-15"),
        ("15 de março de 2020", "quinze de março de dois mil e vinte", "2020-03-15"),
        ("01/05/2021", "primeiro de maio de dois mil e vinte e um", "2021-05-01"),
        ("1º de maio", "primeiro de maio", "--05-01"),
        ("1º de maio", "um de maio", "--05-01"),
        ("no dia 15/03", "no dia quinze de março", "--03-15"),
    ],
)
def test_dates_are_one_number(written: str, said: str, value: str) -> None:
    assert same(written, said)
    assert values(written) == values(said) == [value]


def test_a_fraction_is_no_date() -> None:
    assert "fevereiro" not in NORM.words("1/2 xícara de açúcar")


def test_news_read_aloud_against_the_written_story() -> None:
    written = (
        "O dólar fechou em alta de 1,2% nesta terça-feira, cotado a R$ 5,43. A reunião começa às 14h30 no "
        "Palácio do Planalto. Em 15/03/2020, o país registrou 200 casos. A rodovia tem 120 km e o caminhão "
        "levava 30 t de soja, a 80 km/h. O apartamento de 75 m² custa US$ 150 mil."
    )
    said = (
        "o dólar fechou em alta de um vírgula dois por cento nesta terça feira cotado a cinco reais e quarenta "
        "e três centavos a reunião começa às catorze e trinta no palácio do planalto em quinze de março de dois "
        "mil e vinte o país registrou duzentos casos a rodovia tem cento e vinte quilômetros e o caminhão levava "
        "trinta toneladas de soja a oitenta quilômetros por hora o apartamento de setenta e cinco metros "
        "quadrados custa cento e cinquenta mil dólares"
    )
    reference = Reference("news", [Utterance(0.0, 40.0, written)])
    hypothesis = Hypothesis("news", [Word(w) for w in said.split()])
    now = score_recording(reference, hypothesis)
    before = score_recording(reference, hypothesis, ScoreOptions(normalizer="ptbr-norm-2"))
    assert (now.counts.errors, now.numbers.errors) == (0, 0)
    assert before.counts.errors > 10 and before.numbers.errors >= 4


def test_older_versions_read_as_before() -> None:
    assert V2.words("120 km") == ["cento", "e", "vinte", "km"]
    assert V2.words("às 14h30") == ["as", "catorze", "horas", "e", "trinta"]
    assert V2.words("15/03/2020")[:3] == ["quinze", "zero", "três"]
