"""pt-BR normalizer: hand-computed expectations for the hard cases, and real transcripts."""

from __future__ import annotations

import csv
import dataclasses
import shutil
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from num2words import num2words
from shared_data import PTBR_DEV

from toolkit.core.errors import InputError
from toolkit.core.files import sha256_file
from toolkit.scorer.normalize import POLICY_VERSION, NormalizationPolicy, Normalizer, Token, load_negations
from toolkit.scorer.normalize.lexicon import LEXICON_DIR, lexicon_files

DEV = PTBR_DEV

NORM = Normalizer(NormalizationPolicy.normalized())
FOLD = Normalizer(NormalizationPolicy.accent_folded())
VERB = Normalizer(NormalizationPolicy.verbatim())


def groups(tokens: list[Token]) -> list[tuple[str, str]]:
    """(text of the whole group, value) per number group, in order."""
    out: dict[int, tuple[list[str], str]] = {}
    for token in tokens:
        if token.is_number:
            assert token.number_group is not None and token.number_value is not None
            out.setdefault(token.number_group, ([], token.number_value))[0].append(token.text)
    return [(" ".join(words), value) for words, value in out.values()]


def strip_sources(tokens: list[Token]) -> list[tuple[str, bool, str | None, int | None]]:
    return [(t.text, t.is_number, t.number_value, t.number_group) for t in tokens]


# --- numbers --------------------------------------------------------------------------------


def test_currency_with_thousands_dot_and_zero_cents() -> None:
    tokens = NORM.tokens(["R$", "1.500,00"])
    assert [t.text for t in tokens] == ["mil", "e", "quinhentos", "reais"]
    assert {t.number_value for t in tokens} == {"R$1500"}
    assert {t.number_group for t in tokens} == {0}
    assert [t.source_index for t in tokens] == [0, 0, 0, 0]
    assert strip_sources(NORM.tokens(["R$1.500,00."])) == strip_sources(tokens)
    spoken = NORM.tokens("mil e quinhentos reais".split())
    assert strip_sources(spoken) == strip_sources(tokens)


@pytest.mark.parametrize(
    ("text", "words", "value"),
    [
        ("R$ 1.500,50", "mil e quinhentos reais e cinquenta centavos", "R$1500.50"),
        ("R$ 0,50", "cinquenta centavos", "R$0.50"),  # num2words: "zero reais e cinquenta centavos"
        ("R$ 1,00", "um real", "R$1"),
        ("R$ 2.000.000,00", "dois milhões de reais", "R$2000000"),
        ("R$ 2,5 milhões", "dois vírgula cinco milhões de reais", "R$2500000"),
        ("US$ 10", "dez dólares", "US$10"),
    ],
)
def test_currency(text: str, words: str, value: str) -> None:
    tokens = NORM.tokens(text.split())
    assert " ".join(t.text for t in tokens) == words
    assert groups(tokens) == [(words, value)]
    assert groups(NORM.tokens(words.split())) == [(words, value)]


def test_ordinals_masculine_feminine_and_num2words_gaps() -> None:
    tokens = NORM.tokens(["1º", "lugar"])
    assert [t.text for t in tokens] == ["primeiro", "lugar"]
    assert groups(tokens) == [("primeiro", "1º")]
    assert tokens[1] == Token("lugar", 1)
    assert groups(NORM.tokens(["1ª", "vez"])) == [("primeira", "1ª")]
    assert groups(NORM.tokens(["21ª"])) == [("vigésima primeira", "21ª")]
    # num2words writes "quadrigentésimo"; the correct form is "quadringentésimo".
    assert NORM.words("400º") == ["quadringentésimo"]
    # "2o" is an ordinal too; alone, "segundo" is not tagged (also "according to", a second).
    assert NORM.words("2o lugar") == ["segundo", "lugar"]
    assert groups(NORM.tokens(["2o"])) == []
    assert groups(NORM.tokens("vigésimo segundo".split())) == [("vigésimo segundo", "22º")]


def test_percent_decimal_comma_and_space_grouped_thousands() -> None:
    tokens = NORM.tokens("3,5% e 2 100 pessoas".split())
    assert [t.text for t in tokens] == [
        "três",
        "vírgula",
        "cinco",
        "por",
        "cento",
        "e",
        "dois",
        "mil",
        "e",
        "cem",
        "pessoas",
    ]
    assert [t.source_index for t in tokens] == [0, 0, 0, 0, 0, 1, 2, 2, 2, 2, 4]
    assert groups(tokens) == [("três vírgula cinco por cento", "3.5%"), ("dois mil e cem", "2100")]
    assert not tokens[5].is_number and tokens[5].number_group is None
    assert groups(NORM.tokens("3,5 % e 2100 pessoas".split())) == groups(tokens)
    spoken = NORM.tokens("três vírgula cinco por cento e dois mil e cem pessoas".split())
    assert [t.text for t in spoken] == [t.text for t in tokens]
    assert groups(spoken) == groups(tokens)


def test_year_digits_and_words_are_the_same_both_ways() -> None:
    digits = NORM.tokens(["2020"])
    words = NORM.tokens("dois mil e vinte".split())
    assert strip_sources(digits) == strip_sources(words)
    assert [t.text for t in digits] == ["dois", "mil", "e", "vinte"]
    assert {t.number_value for t in words} == {"2020"}
    assert {t.number_group for t in words} == {0}
    assert [t.source_index for t in words] == [0, 1, 2, 3]
    assert [t.source_index for t in digits] == [0, 0, 0, 0]


@pytest.mark.parametrize(
    ("digits", "words", "value"),
    [
        ("1500", "mil e quinhentos", "1500"),
        ("1.500", "mil e quinhentos", "1500"),
        ("1510", "mil quinhentos e dez", "1510"),  # num2words: "mil, quinhentos e dez"
        ("2100", "dois mil e cem", "2100"),
        ("1999", "mil novecentos e noventa e nove", "1999"),
        ("1.500.000", "um milhão e quinhentos mil", "1500000"),
        ("3,50", "três vírgula cinquenta", "3.50"),
        ("3,05", "três vírgula zero cinco", "3.05"),
        ("3.5", "três vírgula cinco", "3.5"),
        ("-5", "menos cinco", "-5"),
        ("-3,5", "menos três vírgula cinco", "-3.5"),
        ("10h30", "dez horas e trinta", "10h30"),
        ("10:30", "dez horas e trinta", "10h30"),
        ("10h", "dez horas", "10h"),
        ("21h05", "vinte e uma horas e cinco", "21h05"),
        ("14", "catorze", "14"),
    ],
)
def test_numbers_equal_their_spoken_form(digits: str, words: str, value: str) -> None:
    second = Normalizer(NormalizationPolicy.normalized("ptbr-norm-2"))
    assert " ".join(t.text for t in second.tokens([digits])) == words
    for normalizer in (NORM, second):  # ptbr-norm-3 reads clock times without "horas" (test_units_dates_times)
        from_digits = normalizer.tokens([digits])
        from_words = normalizer.tokens(words.split())
        assert [t.text for t in from_digits] == [t.text for t in from_words]
        assert groups(from_digits) == groups(from_words) and [v for _, v in groups(from_words)] == [value]


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=10**12).filter(lambda number: number != 1))
def test_any_integer_in_digits_equals_its_num2words_reading(number: int) -> None:
    spoken = num2words(number, lang="pt_BR").replace(",", "")
    from_digits = NORM.tokens([str(number)])
    assert strip_sources(from_digits) == strip_sources(NORM.tokens(spoken.split()))
    assert groups(from_digits) == [(spoken, str(number))]


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=10**7), st.integers(min_value=0, max_value=99))
def test_any_money_amount_is_one_group_with_its_value(reais: int, cents: int) -> None:
    written = "R$ " + f"{reais:,}".replace(",", ".") + f",{cents:02d}"
    tokens = NORM.tokens(written.split())
    expected = f"R${reais}" + (f".{cents:02d}" if cents else "")
    assert groups(tokens) == [(" ".join(t.text for t in tokens), expected)]


def test_million_multiplier_after_a_decimal() -> None:
    tokens = NORM.tokens("2,5 milhões de pessoas".split())
    assert groups(tokens) == [("dois vírgula cinco milhões", "2500000")]


def test_group_boundaries_follow_portuguese_grammar() -> None:
    assert groups(NORM.tokens("dois e três".split())) == [("dois", "2"), ("três", "3")]
    assert groups(NORM.tokens("2020 2021".split())) == [
        ("dois mil e vinte", "2020"),
        ("dois mil e vinte e um", "2021"),
    ]
    # Lone "um"/"uma" is the article, not a number; inside a group it counts.
    assert groups(NORM.tokens("um homem e uma mulher".split())) == []
    assert groups(NORM.tokens("vinte e uma".split())) == [("vinte e uma", "21")]
    # The verb "é" never joins numbers, even though "e" does.
    assert groups(NORM.tokens("vinte é três".split())) == [("vinte", "20"), ("três", "3")]


def test_number_words_take_one_canonical_spelling() -> None:
    assert NORM.words("duas pessoas") == NORM.words("2 pessoas") == ["dois", "pessoas"]
    assert NORM.words("quatorze") == NORM.words("14") == ["catorze"]
    assert NORM.words("duzentas casas") == ["duzentos", "casas"]
    assert NORM.words("uma casa") == ["uma", "casa"]


def test_digits_mixed_with_letters() -> None:
    tokens = NORM.tokens(["covid-19"])
    assert [t.text for t in tokens] == ["covid", "dezenove"]
    assert groups(tokens) == [("dezenove", "19")]
    assert NORM.words("007") == ["zero", "zero", "sete"]


def test_numbers_left_as_written_when_expansion_is_off() -> None:
    normalizer = Normalizer(dataclasses.replace(NormalizationPolicy.normalized(), numbers_to_words=False))
    tokens = normalizer.tokens(["3,5%", "e", "2020."])
    assert [t.text for t in tokens] == ["3,5%", "e", "2020"]
    assert groups(tokens) == [("3,5%", "3.5%"), ("2020", "2020")]


# --- words ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("colloquial", "canonical"),
    [
        ("pra", "para"),
        ("pro", "para o"),
        ("tá", "está"),
        ("tô", "estou"),
        ("cê", "você"),
        ("né", "não é"),
        ("vc", "você"),
        ("tava", "estava"),
        ("Tá,", "está"),
    ],
)
def test_equivalences(colloquial: str, canonical: str) -> None:
    assert NORM.words(colloquial) == canonical.split()
    assert NORM.words(canonical) == canonical.split()
    off = Normalizer(dataclasses.replace(NormalizationPolicy.normalized(), apply_equivalences=False))
    assert off.words(colloquial) == [colloquial.lower().strip(",")]


def test_multiword_equivalence_keeps_its_source_word() -> None:
    tokens = NORM.tokens(["ele", "vem,", "né?"])
    assert [(t.text, t.source_index) for t in tokens] == [("ele", 0), ("vem", 1), ("não", 2), ("é", 2)]


def test_negations() -> None:
    negations = load_negations()
    assert {"não", "nunca", "nem", "jamais", "nenhum", "nenhuma", "ninguém", "nada", "tampouco"} <= negations
    folded = load_negations(NormalizationPolicy.accent_folded())
    assert {"nao", "ninguem"} <= folded and "não" not in folded
    assert NORM.negations == negations


def test_fillers_are_listed_and_kept_by_default() -> None:
    assert {"hum", "éh", "ahn", "uhum", "hã"} <= NORM.fillers
    assert "é" not in NORM.fillers  # the verb
    assert NORM.words("hum é isso") == ["hum", "é", "isso"]
    dropping = Normalizer(dataclasses.replace(NormalizationPolicy.normalized(), keep_fillers=False))
    assert dropping.words("hum é isso éh") == ["é", "isso"]


def test_accents_kept_by_default_and_folded_in_the_folded_preset() -> None:
    assert NORM.words("Ação Não") == ["ação", "não"]
    assert NORM.words("acao nao") != NORM.words("ação não")
    assert FOLD.words("Ação NÃO três") == ["acao", "nao", "tres"] == FOLD.words("acao nao tres")
    assert groups(FOLD.tokens(["3"])) == [("tres", "3")]


@pytest.mark.parametrize("normalizer", [NORM, FOLD, VERB], ids=["normalized", "folded", "verbatim"])
def test_nfc_and_nfd_input_give_the_same_tokens(normalizer: Normalizer) -> None:
    text = "Não há ação, diz João: três pães às 10h30."
    nfc = normalizer.tokens(unicodedata.normalize("NFC", text).split())
    nfd = normalizer.tokens(unicodedata.normalize("NFD", text).split())
    assert nfc == nfd
    assert all(unicodedata.is_normalized("NFC", t.text) for t in nfc)


def test_stray_punctuation_vanishes_without_empty_tokens() -> None:
    sentence = '"""O que é um alquimista?"", ele perguntou a? finalmente."'
    tokens = NORM.tokens(sentence.split())
    assert [t.text for t in tokens] == ["o", "que", "é", "um", "alquimista", "ele", "perguntou", "a", "finalmente"]
    assert NORM.tokens(["?", '"', "...", "—", "«»", "\u200b", ""]) == []
    assert NORM.tokens([]) == []


def test_source_index_maps_every_token_back() -> None:
    source = ["Olá,", "?", "pra", "guarda-chuva", "R$", "2", "100", "fim."]
    tokens = NORM.tokens(source)
    assert [(t.text, t.source_index) for t in tokens] == [
        ("olá", 0),
        ("para", 2),
        ("guarda", 3),
        ("chuva", 3),
        ("dois", 4),
        ("mil", 4),
        ("e", 4),
        ("cem", 4),
        ("reais", 4),
        ("fim", 7),
    ]


def test_hyphens_and_apostrophes() -> None:
    assert NORM.words("disse-lhe copo d'água guarda-chuva") == ["disse", "lhe", "copo", "dágua", "guarda", "chuva"]
    assert NORM.words("d’água") == ["dágua"]
    assert NORM.words("'casa'") == ["casa"]
    keep = Normalizer(dataclasses.replace(NormalizationPolicy.normalized(), split_hyphens=False))
    assert keep.words("guarda-chuva - sim") == ["guarda-chuva", "sim"]


def test_verbatim_keeps_words_as_written() -> None:
    tokens = VERB.tokens(["Não,", "pra", "2020", "?"])
    assert [t.text for t in tokens] == ["Não,", "pra", "2020", "?"]
    assert groups(tokens) == [("2020", "2020")]
    assert VERB.tokens(["a  b"]) == [Token("a", 0), Token("b", 0)]


# --- policy and signature -------------------------------------------------------------------


def test_policy_is_frozen_and_versioned() -> None:
    policy = NormalizationPolicy.normalized()
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.accent_fold = True  # type: ignore[misc]
    assert policy.version == POLICY_VERSION == "ptbr-norm-4"
    assert policy.roman_numerals and policy.abbreviations and policy.homophones
    assert policy.optional_words and policy.list_labels and policy.orthographic_variants and policy.units
    assert policy.dates and policy.clock_times and policy.colloquial_negation and policy.negation_restarts
    assert policy.unicode_form == "NFKC" and policy.lowercase and policy.strip_punctuation
    assert not policy.accent_fold and policy.apply_equivalences and policy.numbers_to_words and policy.keep_fillers
    verbatim = NormalizationPolicy.verbatim()
    assert verbatim.unicode_form == "NFC" and not verbatim.lowercase and not verbatim.apply_equivalences
    assert verbatim.optional_words and not (verbatim.list_labels or verbatim.units or verbatim.colloquial_negation)
    assert NormalizationPolicy.accent_folded() == dataclasses.replace(policy, accent_fold=True)
    with pytest.raises(ValueError):
        NormalizationPolicy(unicode_form="NFD")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown normalizer version"):
        NormalizationPolicy(version="ptbr-norm-9")


def test_the_first_version_stays_selectable_with_its_old_options() -> None:
    old = NormalizationPolicy.normalized("ptbr-norm-1")
    assert not (old.roman_numerals or old.abbreviations or old.homophones)
    assert NormalizationPolicy(version="ptbr-norm-1") == old
    # Its signature has exactly the options and files it had before ptbr-norm-2 existed.
    assert list(old.options()) == [
        "unicode_form",
        "lowercase",
        "strip_punctuation",
        "split_hyphens",
        "accent_fold",
        "apply_equivalences",
        "numbers_to_words",
        "keep_fillers",
    ]
    assert set(Normalizer(old).signature()["lexicons"]) == {"equivalences.tsv", "negations.txt", "fillers.txt"}
    with pytest.raises(ValueError, match="roman_numerals needs normalizer version ptbr-norm-2"):
        NormalizationPolicy(version="ptbr-norm-1", roman_numerals=True)


def test_signature_names_version_options_and_lexicon_hashes() -> None:
    signature = NORM.signature()
    assert signature["version"] == "ptbr-norm-4"
    assert signature["options"] == NormalizationPolicy.normalized().options()
    assert signature["lexicons"] == {name: sha256_file(LEXICON_DIR / name) for name in lexicon_files("ptbr-norm-4")}
    assert lexicon_files("ptbr-norm-2") == (
        "equivalences.tsv",
        "negations.txt",
        "fillers.txt",
        "abbreviations.tsv",
        "homophones.tsv",
        "roman.tsv",
    )
    assert "user_lexicon" not in signature
    assert FOLD.signature()["options"]["accent_fold"] is True


def test_a_changed_lexicon_changes_hash_and_output(tmp_path: Path) -> None:
    shutil.copytree(LEXICON_DIR, tmp_path, dirs_exist_ok=True)
    with open(tmp_path / "equivalences.tsv", "a", encoding="utf-8") as handle:
        handle.write("bora\tvamos embora\n")
    changed = Normalizer(lexicon_dir=tmp_path)
    assert changed.words("bora") == ["vamos", "embora"]
    assert NORM.words("bora") == ["bora"]
    assert changed.signature()["lexicons"]["equivalences.tsv"] != NORM.signature()["lexicons"]["equivalences.tsv"]


def test_bad_lexicon_is_an_input_error(tmp_path: Path) -> None:
    shutil.copytree(LEXICON_DIR, tmp_path, dirs_exist_ok=True)
    (tmp_path / "equivalences.tsv").write_text("pra para\n", encoding="utf-8")
    with pytest.raises(InputError, match="equivalences.tsv: line 1"):
        Normalizer(lexicon_dir=tmp_path)


# --- real transcripts -----------------------------------------------------------------------


def _dev_transcripts() -> list[str]:
    if not DEV.is_dir():
        pytest.skip(f"pt-BR development data not found at {DEV} (absent in a bare clone)")
    texts = [path.read_text(encoding="utf-8") for path in sorted(DEV.glob("*/*.txt"))]
    with open(DEV / "commonvoice-pt" / "validated.tsv", encoding="utf-8", newline="") as handle:
        texts += [row["sentence"] for row in csv.DictReader(handle, delimiter="\t")]
    assert len(texts) > 100
    return texts


@pytest.mark.parametrize("preset", ["normalized", "verbatim", "accent_folded"])
def test_every_dev_transcript_normalizes_cleanly(preset: str) -> None:
    normalizer = Normalizer(getattr(NormalizationPolicy, preset)())
    for text in _dev_transcripts():
        source = text.split()
        tokens = normalizer.tokens(source)
        assert tokens, text
        for token in tokens:
            assert token.text and not any(char.isspace() for char in token.text), (text, token)
            assert 0 <= token.source_index < len(source)
        assert [t.source_index for t in tokens] == sorted(t.source_index for t in tokens)


def test_dev_transcripts_number_and_stray_marks() -> None:
    texts = _dev_transcripts()
    lapsbm = next(text for text in texts if "duzentos e sessenta e seis" in text)
    assert ("duzentos e sessenta e seis", "266") in groups(NORM.tokens(lapsbm.split()))
    stray = next(text for text in texts if "perguntou a?" in text)
    assert "?" not in " ".join(NORM.words(stray))


def test_a_superscript_digit_after_digits_is_no_integer_run() -> None:
    # "¹" is a digit to str.isdigit but no decimal digit: int() refused it inside a numeral ("0¹").
    assert NORM.words("0¹ covid-19") == ["zero", "um", "covid", "dezenove"]
