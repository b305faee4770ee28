"""Orthographic variants (ptbr-norm-3, ``orthographic_variants``): the rules of the 1990 Orthographic
Agreement, tested on the examples its Bases publish, European/Brazilian pairs, and the spellings a real
written reference (the 2010 text of the Constitution) and a recognizer disagree on."""

from __future__ import annotations

import pytest

from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.scorer.normalize import NormalizationPolicy, Normalizer
from toolkit.scorer.normalize.lexicon import LEXICON_DIR, load_lexicons
from toolkit.scorer.normalize.orthography import variant
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.score import score_recording

NORM = Normalizer(NormalizationPolicy.normalized("ptbr-norm-3"))
TABLE = load_lexicons(LEXICON_DIR, "ptbr-norm-3").orthography


def same(a: str, b: str, normalizer: Normalizer = NORM) -> bool:
    return normalizer.words(a) == normalizer.words(b)


# (the Base of the agreement, spelling before it, spelling after it), from the examples the Bases give.
AGREEMENT = [
    ("XIV trema", "agüentar", "aguentar"),
    ("XIV trema", "argüir", "arguir"),
    ("XIV trema", "bilíngüe", "bilíngue"),
    ("XIV trema", "cinqüenta", "cinquenta"),
    ("XIV trema", "delinqüente", "delinquente"),
    ("XIV trema", "eloqüente", "eloquente"),
    ("XIV trema", "ensangüentado", "ensanguentado"),
    ("XIV trema", "eqüestre", "equestre"),
    ("XIV trema", "freqüente", "frequente"),
    ("XIV trema", "lingüeta", "lingueta"),
    ("XIV trema", "lingüiça", "linguiça"),
    ("XIV trema", "qüinqüênio", "quinquênio"),
    ("XIV trema", "sagüi", "sagui"),
    ("XIV trema", "tranqüilo", "tranquilo"),
    ("IX 3 open diphthongs", "assembléia", "assembleia"),
    ("IX 3 open diphthongs", "boléia", "boleia"),
    ("IX 3 open diphthongs", "européia", "europeia"),
    ("IX 3 open diphthongs", "idéia", "ideia"),
    ("IX 3 open diphthongs", "geléia", "geleia"),
    ("IX 3 open diphthongs", "jibóia", "jiboia"),
    ("IX 3 open diphthongs", "apóia", "apoia"),
    ("IX 3 open diphthongs", "heróico", "heroico"),
    ("IX 3 open diphthongs", "paranóico", "paranoico"),
    ("IX 3 open diphthongs", "jóia", "joia"),
    ("IX 8 hiatus êe ôo", "crêem", "creem"),
    ("IX 8 hiatus êe ôo", "dêem", "deem"),
    ("IX 8 hiatus êe ôo", "lêem", "leem"),
    ("IX 8 hiatus êe ôo", "vêem", "veem"),
    ("IX 8 hiatus êe ôo", "enjôo", "enjoo"),
    ("IX 8 hiatus êe ôo", "vôo", "voo"),
    ("IX 8 hiatus êe ôo", "abençôo", "abençoo"),
    ("IX 9 differential accents", "pára", "para"),
    ("IX 9 differential accents", "péla", "pela"),
    ("IX 9 differential accents", "pêlo", "pelo"),
    ("IX 9 differential accents", "pólo", "polo"),
    ("IX 9 differential accents", "pêra", "pera"),
    ("IX 6 i/u after a diphthong", "feiúra", "feiura"),
    ("IX 6 i/u after a diphthong", "baiúca", "baiuca"),
    ("IX 6 i/u after a diphthong", "bocaiúva", "bocaiuva"),
    ("IX 7 gu/qu", "averigúe", "averigue"),
    ("IX 7 gu/qu", "apazigúe", "apazigue"),
    ("XVI prefix + other vowel", "auto-estrada", "autoestrada"),
    ("XVI prefix + other vowel", "extra-escolar", "extraescolar"),
    ("XVI prefix + other vowel", "infra-estrutura", "infraestrutura"),
    ("XVI prefix + other vowel", "semi-árido", "semiárido"),
    ("XVI prefix + r/s doubles", "anti-semita", "antissemita"),
    ("XVI prefix + r/s doubles", "anti-religioso", "antirreligioso"),
    ("XVI prefix + r/s doubles", "contra-regra", "contrarregra"),
    ("XVI prefix + r/s doubles", "contra-senha", "contrassenha"),
    ("XVI prefix + r/s doubles", "extra-regular", "extrarregular"),
    ("XVI prefix + r/s doubles", "infra-som", "infrassom"),
    ("XVI prefix + r/s doubles", "mini-saia", "minissaia"),
    ("XVI prefix + r/s doubles", "ultra-sonografia", "ultrassonografia"),
    ("XVI prefix + same vowel", "antiibérico", "anti-ibérico"),
    ("XVI prefix + same vowel", "antiinflamatório", "anti-inflamatório"),
    ("XVI prefix + same vowel", "microondas", "micro-ondas"),
    ("XVI prefix + same vowel", "contraalmirante", "contra-almirante"),
    ("XVI prefix + same vowel", "autoobservação", "auto-observação"),
    ("XVI co- joins", "co-autor", "coautor"),
    ("XVI co- joins", "co-herdeiro", "coerdeiro"),
    ("XV lost composition", "pára-quedas", "paraquedas"),
    ("XV lost composition", "manda-chuva", "mandachuva"),
]


@pytest.mark.parametrize("base, before, after", AGREEMENT)
def test_the_agreement_s_published_examples(base: str, before: str, after: str) -> None:
    assert variant(before, TABLE) == after, base
    assert variant(after, TABLE) == after, f"{base}: the new spelling must stay"
    assert same(before, after)


@pytest.mark.parametrize(
    "kept",
    ["papéis", "herói", "heróis", "dói", "constrói", "anéis", "têm", "pôr", "pôde", "sobre-humano", "pré-escola",
     "cooperação", "coordenar", "extraordinário", "pólen", "micro-ondas", "anti-inflamatório", "rege-se"],
)  # fmt: skip
def test_what_the_agreement_keeps_stays(kept: str) -> None:
    assert variant(kept, TABLE) == kept


@pytest.mark.parametrize(
    "european, brazilian",
    [
        ("económico", "econômico"),
        ("género", "gênero"),
        ("fenómeno", "fenômeno"),
        ("telefónicas", "telefônicas"),
        ("António", "Antônio"),
        ("académico", "acadêmico"),
        ("ténis", "tênis"),
        ("indemnização", "indenização"),
        ("facto", "fato"),
        ("acção", "ação"),
        ("direcção", "direção"),
        ("óptimo", "ótimo"),
        ("registo", "registro"),
        ("bebé", "bebê"),
    ],
)
def test_european_and_brazilian_spellings_are_one_word(european: str, brazilian: str) -> None:
    assert same(european, brazilian)


def test_the_2010_text_of_the_constitution_against_a_recognizer_writing_today() -> None:
    """The 2010 compilation keeps pre-1990 spellings; Whisper writes the 1990 ones (seen on the audiobook)."""
    written = (
        "O número de Deputados à Assembléia Legislativa corresponderá ao triplo da representação do Estado; "
        "a posse ocorrerá em primeiro de janeiro do ano subseqüente; remuneração do serviço extraordinário "
        "superior, no mínimo, em cinqüenta por cento à do normal; ao financiamento de programas de "
        "infra-estrutura de transportes; realizar-se-á no primeiro domingo de outubro"
    )
    heard = (
        "o número de deputados à assembleia legislativa corresponderá ao triplo da representação do estado "
        "a posse ocorrerá em primeiro de janeiro do ano subsequente remuneração do serviço extraordinário "
        "superior no mínimo em 50 % à do normal ao financiamento de programas de infraestrutura de "
        "transportes realizar -se a no primeiro domingo de outubro"
    )
    reference = Reference("t3", [Utterance(0.0, 30.0, written)])
    hypothesis = Hypothesis("t3", [Word(w) for w in heard.split()])
    now = score_recording(reference, hypothesis)
    before = score_recording(reference, hypothesis, ScoreOptions(normalizer="ptbr-norm-2"))
    assert now.counts.errors == 0
    assert before.counts.errors == 5  # assembléia, subseqüente, infra-estrutura (2 words for 1), -á ("a")


def test_the_mesoclisis_ending_is_one_spelling_and_the_verb_ha_stays() -> None:
    for heard in ("conceder-se-á", "conceder -se a", "conceder-se há", "conceder -se há"):
        assert same("conceder-se-á", heard), heard
    assert NORM.words("se há dúvidas") == ["se", "há", "dúvidas"]  # no hyphen-attached clitic: the verb
    assert NORM.words("não há possibilidade") == ["não", "há", "possibilidade"]


def test_older_versions_keep_the_old_spellings_apart() -> None:
    old = Normalizer(NormalizationPolicy.normalized("ptbr-norm-2"))
    assert not same("assembléia", "assembleia", old) and not same("idéia", "ideia", old)
    assert old.words("freqüente") == ["freqüente"]


def test_the_table_maps_spellings_of_one_word_only() -> None:
    for form, brazilian in TABLE.items():
        assert len(form.split()) == len(brazilian.split()) == 1, form
        assert variant(brazilian, TABLE) == brazilian, f"{brazilian} is not its own Brazilian spelling"
