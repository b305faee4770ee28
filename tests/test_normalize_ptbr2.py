"""Policy ptbr-norm-2: Roman numerals in context, abbreviations and the crase, both ways, with the
ambiguous cases left alone; ptbr-norm-1 stays as it was."""

from __future__ import annotations

import csv
import dataclasses
import shutil
from pathlib import Path

import pytest
from shared_data import PTBR_DEV

from toolkit.core.errors import InputError
from toolkit.scorer.normalize import NormalizationPolicy, Normalizer
from toolkit.scorer.normalize.context import roman_value
from toolkit.scorer.normalize.lexicon import LEXICON_DIR

NORM = Normalizer(NormalizationPolicy.normalized("ptbr-norm-2"))  # later versions: test_labels.py
FOLD = Normalizer(NormalizationPolicy.accent_folded("ptbr-norm-2"))
VERB = Normalizer(NormalizationPolicy.verbatim("ptbr-norm-2"))
OLD = Normalizer(NormalizationPolicy.normalized("ptbr-norm-1"))


def words(text: str, normalizer: Normalizer = NORM) -> str:
    return " ".join(normalizer.words(text))


# --- Roman numerals -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "written, spoken",
    [
        ("Dom Pedro II", "dom pedro segundo"),
        ("João XXIII", "joão vinte e três"),
        ("no século XXI", "no século vinte e um"),
        ("Título II", "título segundo"),
        ("inciso XXI", "inciso vinte e um"),
        ("inciso I", "inciso primeiro"),
        ("capítulo X", "capítulo décimo"),  # the last ordinal
        ("capítulo XI", "capítulo onze"),  # the first cardinal
        ("Livro IV", "livro quarto"),
        ("século V", "século quinto"),
        ("século XIX", "século dezenove"),
        ("Luís XIV", "luís catorze"),
        ("Papa Bento XVI", "papa bento dezesseis"),
        ("Pio XII", "pio doze"),
        ("Henrique VIII", "henrique oitavo"),
        ("artigo III", "artigo terceiro"),
        ("ano MMXX do século XX", "ano mmxx do século vinte"),  # "ano" is not a context word
    ],
)
def test_roman_numerals_read_as_brazilian_readers_do(written: str, spoken: str) -> None:
    assert words(written) == spoken
    # Both ways: the reading itself is unchanged, so a hypothesis in words matches a Roman reference.
    assert words(spoken) == spoken


@pytest.mark.parametrize(
    "written, spoken",
    [
        ("Parte II", "parte segunda"),
        ("seção III", "seção terceira"),
        ("Elizabeth II", "elizabeth segunda"),
        ("Dona Maria I", "dona maria primeira"),
        ("parte XXI", "parte vinte e um"),  # cardinals stay masculine, like page numbers
    ],
)
def test_an_ordinal_takes_the_gender_of_its_context_word(written: str, spoken: str) -> None:
    assert words(written) == spoken


def test_lists_keep_their_context_and_punctuation_ends_it() -> None:
    assert words("os séculos XV, XVI e XVII") == "os séculos quinze dezesseis e dezessete"
    assert words("incisos I a III") == "incisos primeiro a terceiro"
    assert words("capítulos IX ou X") == "capítulos nono ou décimo"
    assert words("João XXIII e Bento XVI") == "joão vinte e três e bento dezesseis"
    assert words("Pedro II. V") == "pedro segundo v"  # a sentence end breaks the list
    assert words("o século, XX") == "o século xx"  # the context word must touch its numeral
    assert words("século XX e V") == "século vinte e quinto"  # "e" + Roman continues the list


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a letra X", "a letra x"),
        ("vitamina C", "vitamina c"),
        ("classe D e tamanho M", "classe d e tamanho m"),
        ("o I e o V", "o i e o v"),
        ("seção C do anexo D", "seção c do anexo d"),  # C, D, L, M alone are letters even in context
        ("capítulo iv", "capítulo iv"),  # lower case: "vi", "li", "mil" are words
        ("capítulo IIII", "capítulo iiii"),  # not a canonical numeral
        ("capítulo IC", "capítulo ic"),
        ("um CD do MIX", "um cd do mix"),  # outside a context, Roman-looking words stay
        ("XXI", "xxi"),
        ("e", "e"),
        ("Pedro e Maria", "pedro e maria"),
    ],
)
def test_ambiguous_letters_and_romanish_words_stay_as_written(text: str, expected: str) -> None:
    assert words(text) == expected


def test_roman_value_accepts_only_canonical_numerals_in_capitals() -> None:
    assert [roman_value(t) for t in ("I", "IV", "IX", "XL", "XC", "CD", "CM", "MMMCMXCIX", "XXIII")] == [
        1,
        4,
        9,
        40,
        90,
        400,
        900,
        3999,
        23,
    ]
    assert [roman_value(t) for t in ("", "C", "D", "L", "M", "IIII", "VV", "IL", "iv", "Xi", "MMMM")] == [None] * 11


def test_roman_readings_are_number_groups_on_both_sides() -> None:
    for text in ("século XXI", "século vinte e um", "século 21"):
        tokens = NORM.tokens(text.split())
        assert [t.text for t in tokens] == ["século", "vinte", "e", "um"]
        assert [(t.is_number, t.number_value) for t in tokens[1:]] == [(True, "21")] * 3
    assert NORM.tokens("Dom Pedro II".split()) == NORM.tokens("dom pedro segundo".split())
    assert words("Dom Pedro 2º") == "dom pedro segundo"
    assert [t.source_index for t in NORM.tokens("no século XXI .".split())] == [0, 1, 2, 2, 2]


def test_other_presets_and_the_first_version_leave_roman_numerals_alone() -> None:
    assert words("século XXI", FOLD) == "seculo vinte e um"
    assert words("Dom Pedro II", VERB) == "Dom Pedro II"
    assert words("Dom Pedro II", OLD) == "dom pedro ii"


# --- abbreviations --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "written, spoken",
    [
        ("art. 5º", "artigo quinto"),
        ("arts. 5º e 6º", "artigos quinto e sexto"),
        ("Art. 10", "artigo dez"),
        ("§ 2º", "parágrafo segundo"),
        ("§3º", "parágrafo terceiro"),
        ("§§ 1º e 2º", "parágrafos primeiro e segundo"),
        ("§ único", "parágrafo único"),
        ("nº 5", "número cinco"),
        ("n.º 6", "número seis"),
        ("Nº 7", "número sete"),
        ("n° 8", "número oito"),
        ("inc. IV", "inciso quarto"),
        ("inc. 3", "inciso três"),
        ("Título II, inciso XXI, do art. 5º", "título segundo inciso vinte e um do artigo quinto"),
        ("cap. II", "capítulo segundo"),
        ("séc. XXI", "século vinte e um"),
        ("o Sr. Silva e a Sra. Souza", "o senhor silva e a senhora souza"),
        ("Dr. João e Dra. Ana", "doutor joão e doutora ana"),
        ("Prof. Paulo e Profa. Rita", "professor paulo e professora rita"),
        ("a sr.ª Lima", "a senhora lima"),
        ("pág. 3", "página três"),
        ("p. 12", "página doze"),
        ("pp. 3", "páginas três"),
        ("D. Pedro I e D. Maria I", "dom pedro primeiro e dona maria primeira"),
        ("livros, cadernos etc.", "livros cadernos etcétera"),
        ("(art. 5º),", "artigo quinto"),
        ("Av. Paulista", "avenida paulista"),
    ],
)
def test_abbreviations_read_both_ways(written: str, spoken: str) -> None:
    assert words(written) == spoken
    assert words(spoken) == spoken


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a Apple Inc. anunciou", "a apple inc anunciou"),  # "inc." only before a numeral
        ("João P. Silva", "joão p silva"),  # "p." only before a numeral: an initial
        ("ficou no. Depois", "ficou no depois"),  # "no." is the contraction at a sentence end
        ("D. Quixote", "d quixote"),  # "D." only before a regnal name
        ("o ex. presidente", "o ex presidente"),
        ("pop art", "pop art"),
    ],
)
def test_ambiguous_abbreviations_stay_as_written(text: str, expected: str) -> None:
    assert words(text) == expected


def test_abbreviation_tokens_point_to_their_source_words() -> None:
    tokens = NORM.tokens("do art. 5º §3º".split())
    assert [(t.text, t.source_index) for t in tokens] == [
        ("do", 0),
        ("artigo", 1),
        ("quinto", 2),
        ("parágrafo", 3),
        ("terceiro", 3),
    ]


def test_the_first_version_reproduces_its_old_abbreviation_output() -> None:
    assert words("nº 5, art. 5º e § 2º", OLD) == "no cinco art quinto e segundo"
    assert words("nº 5", VERB) == "nº 5"


# --- homophones -----------------------------------------------------------------------------


def test_crase_is_folded_from_the_second_version_and_ha_stays_a_verb() -> None:
    assert words("vou à praia às vezes àquela hora") == "vou a praia as vezes aquela hora"
    assert words("vou a praia as vezes aquela hora") == "vou a praia as vezes aquela hora"
    assert words("há dois anos") == "há dois anos" != words("a dois anos")
    assert words("à", OLD) == "à" != words("a", OLD)  # ptbr-norm-1 kept them apart
    assert words("à", VERB) == "à"


# --- tables ---------------------------------------------------------------------------------


def test_every_table_starts_with_its_version() -> None:
    for path in sorted(LEXICON_DIR.iterdir()):
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# ptbr-") and first.rstrip()[-1].isdigit(), path.name


@pytest.mark.parametrize(
    "name, line, message",
    [
        ("abbreviations.tsv", "art.\tartigo\talways\n", "abbreviations.tsv: line 1: the third field"),
        ("abbreviations.tsv", "art. artigo\n", "abbreviations.tsv: line 1: expected"),
        ("roman.tsv", "século\tnoun\tn\n", "roman.tsv: line 1: expected one word"),
        ("homophones.tsv", "à\n", "homophones.tsv: line 1: expected"),
    ],
)
def test_a_malformed_table_line_is_refused_with_its_number(tmp_path: Path, name: str, line: str, message: str) -> None:
    shutil.copytree(LEXICON_DIR, tmp_path, dirs_exist_ok=True)
    (tmp_path / name).write_text(line, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        Normalizer(lexicon_dir=tmp_path)
    Normalizer(NormalizationPolicy.normalized("ptbr-norm-1"), lexicon_dir=tmp_path)  # v1 does not read it


# --- real prompts ---------------------------------------------------------------------------


def test_common_voice_prompts_change_only_where_a_crase_is_written() -> None:
    tsv = PTBR_DEV / "commonvoice-pt" / "validated.tsv"
    if not tsv.is_file():
        pytest.skip(f"Common Voice prompts not found at {tsv} (absent in a bare clone)")
    with open(tsv, encoding="utf-8", newline="") as handle:
        sentences = [row["sentence"] for row in csv.DictReader(handle, delimiter="\t")]
    assert len(sentences) >= 100
    changed = []
    for sentence in sentences:
        new, old = NORM.words(sentence), OLD.words(sentence)
        assert new and FOLD.words(sentence) and VERB.words(sentence)
        if new != old:
            changed.append(sentence)
            assert len(new) == len(old)
            assert {(a, b) for a, b in zip(old, new) if a != b} <= {("à", "a"), ("às", "as")}, sentence
    assert changed and all("à" in sentence for sentence in changed)


def test_roman_numerals_without_abbreviations_need_the_written_out_context_word() -> None:
    policy = dataclasses.replace(NormalizationPolicy.normalized(), abbreviations=False)
    only_roman = Normalizer(policy)
    assert words("artigo V e art. V", only_roman) == "artigo quinto e art v"


def test_the_signature_takes_its_policies_from_normalize_not_from_the_scorer() -> None:
    import ast
    import inspect

    import toolkit.scorer.signature

    tree = ast.parse(inspect.getsource(toolkit.scorer.signature))
    typing_only = {
        id(node)
        for block in tree.body
        if isinstance(block, ast.If) and getattr(block.test, "id", "") == "TYPE_CHECKING"
        for node in ast.walk(block)
    }
    runtime = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and node.module in ("toolkit.scorer.score", "toolkit.scorer.results")
        and id(node) not in typing_only
    ]
    assert not runtime, "toolkit.scorer.signature imports the scorer's score modules at run time (an import circle)"


# A numeral the recognizer split into word pieces (Whisper writes "4,2%" as "4" ",2" "%").


def test_numeral_pieces_are_read_whole_from_ptbr_norm_2_on() -> None:
    split = ["foi", "de", "4", ",2", "%", "nem"]
    norm2 = NormalizationPolicy.normalized("ptbr-norm-2")
    tokens = Normalizer(norm2).tokens(split)
    assert [t.text for t in tokens] == ["foi", "de", "quatro", "vírgula", "dois", "por", "cento", "nem"]
    assert {t.source_index for t in tokens if t.is_number} == {2}  # the pieces point to the first word
    assert Normalizer(norm2).words("R$ 1 .500 ,00") == Normalizer(norm2).words("R$ 1.500,00")
    assert Normalizer(norm2).words("3 ,5 %.") == Normalizer(norm2).words("3,5%")
    assert Normalizer(norm2).words("de 4 ,2%, nem") == Normalizer(norm2).words("de 4,2%, nem")
    # Whisper also writes "R$ 2.000" as "R" "$" "2" ".000"; a lone "$" would read as dollars
    assert Normalizer(norm2).words("de R $ 2 .000 para") == ["de", "dois", "mil", "reais", "para"]
    assert Normalizer(norm2).words("R $2.000") == Normalizer(norm2).words("R$ 2.000")
    assert Normalizer(norm2).words("custa US $ 5") == ["custa", "cinco", "dólares"]
    assert Normalizer(norm2).words("o R é uma letra") == ["o", "r", "é", "uma", "letra"]
    # a comma of its own is punctuation, not a decimal comma: two numbers stay two
    assert Normalizer(norm2).words("em 2020 , 30 pessoas") == ["em", "dois", "mil", "e", "vinte", "trinta", "pessoas"]
    # ptbr-norm-1 keeps reading them apart, so its old scores reproduce
    old = Normalizer(NormalizationPolicy.normalized("ptbr-norm-1")).words("foi de 4 ,2 %")
    assert old == ["foi", "de", "quatro", "dois", "por", "cento"]
    assert (
        "numeral_pieces" in norm2.options()
        and "numeral_pieces" not in NormalizationPolicy.normalized("ptbr-norm-1").options()
    )
