"""A corpus's lexicon cannot quietly disable an audit (issue 20 item 10, issue 25 part 6): an entry that makes a
negation or a number equal to another word is refused unless the line says allow-critical, and then the
signature lists it. Reading conventions (optional words) are declared once in the same file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from score_pair import plain_text_pair

from toolkit.cli import main
from toolkit.core.errors import InputError
from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.scorer.normalize.user_lexicon import load_user_lexicon
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.score import score_recording

# An interview transcript (NURC-SP style) and a recognizer that heard several "não" as "sim" or "são".
SAID = (
    "não eu não acho que ele vá não | ninguém disse nada disso | nunca vi ele lá não | "
    "não sei se não foi ontem | ele não quer nem saber"
)
HEARD = (
    "sim eu não acho que ele vá sim | ninguém disse nada disso | nunca vi ele lá são | "
    "não sei se sim foi ontem | ele não quer nem saber"
)


def _lexicon(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "corpus.tsv"
    path.write_text("# corpus-lexicon-1\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return path


def _score(reference: str, hypothesis: str, lexicon: Path | None = None):
    utterances = [Utterance(4.0 * k, 4.0 * k + 3.5, text.strip()) for k, text in enumerate(reference.split("|"))]
    words = [Word(w) for w in hypothesis.replace("|", " ").split()]
    return score_recording(
        Reference("entrevista", utterances), Hypothesis("entrevista", words), ScoreOptions(lexicon=lexicon)
    )


@pytest.mark.parametrize(
    "line, what",
    [
        ("equivalence\tsim\tnão", "'equivalence sim -> não'"),  # "sim" would count as "não": flips vanish
        ("equivalence\tnão\tsim", "'equivalence não -> sim'"),
        ("equivalence\tnãum\tnão", "'equivalence nãum -> não'"),  # makes a word a negation
        ("equivalence\tdois\tdez", "'equivalence dois -> dez'"),
        ("equivalence\tmeia\tseis", "'equivalence meia -> seis'"),  # "meia" for six: a number from a word
        ("optional\tnão", "'optional não'"),
        ("optional\tdois", "'optional dois'"),
        ("optional\tnão\tfor :", "'optional não'"),  # an added "não" would absorb an inserted negation
    ],
)
def test_an_entry_that_hides_negation_or_number_errors_is_refused(tmp_path: Path, line: str, what: str) -> None:
    with pytest.raises(InputError, match=f"corpus.tsv: line 2: {what} makes a negation or a number equal"):
        load_user_lexicon(_lexicon(tmp_path, line))


@pytest.mark.parametrize(
    "line",
    [
        "equivalence\tcinqüenta\tcinquenta",  # the same number, spelled before 1990
        "equivalence\tbora\tvamos embora",
        "optional\tdois pontos\tfor :",  # a narrator reading ":" adds no number to the reference
        "optional\tinciso\tbefore roman item",
        "negation\tnadinha",  # more audited words, never fewer
    ],
)
def test_entries_that_keep_negations_and_numbers_are_accepted(tmp_path: Path, line: str) -> None:
    assert load_user_lexicon(_lexicon(tmp_path, line)).critical == ()


def test_allow_critical_lets_an_entry_through_and_the_signature_shows_it(tmp_path: Path) -> None:
    plain = _score(SAID, HEARD)
    assert plain.negation.flipped == 4
    allowed = _lexicon(tmp_path, "equivalence\tsim\tnão\tallow-critical")
    assert load_user_lexicon(allowed).critical == ("line 2: equivalence sim -> não",)
    hidden = _score(SAID, HEARD, allowed)
    assert hidden.negation.flipped == 1  # what the probe of issue 20 saw: flips silently removed...
    assert "|allow-critical:1|" in hidden.signature.text  # ...now never silently
    assert hidden.signature.fields["normalizers"]["normalized"]["user_lexicon"]["allow_critical"] == (
        "line 2: equivalence sim -> não",
    )
    assert hidden.signature.hash != _score(SAID, HEARD, _lexicon(tmp_path / "..", "name\tJoão")).signature.hash


def test_reading_conventions_are_declared_once(tmp_path: Path) -> None:
    law = "princípios: I - independência nacional; II - prevalência dos direitos humanos; a) diferenciada"
    read = (
        "princípios dois pontos inciso primeiro independência nacional inciso segundo prevalência dos direitos "
        "humanos alínea a diferenciada"
    )
    lexicon = _lexicon(
        tmp_path,
        "optional\tinciso\tbefore roman item",
        "optional\talínea\tbefore letter item",
        "optional\tdois pontos\tfor :",
    )
    assert _score(law, read).counts.errors == 5
    declared = _score(law, read, lexicon)
    assert declared.counts.errors == 0 and declared.optional_words.matched == 5
    silent = _score(
        law,
        "princípios primeiro independência nacional segundo prevalência dos direitos humanos a diferenciada",
        lexicon,
    )
    assert silent.counts.errors == 0 and silent.optional_words.left_out == 5


def test_optional_words_anywhere_mark_the_reference_s_own_words(tmp_path: Path) -> None:
    lexicon = _lexicon(tmp_path, "optional\téh")
    result = _score("eu éh acho que sim", "eu acho que sim", lexicon)
    assert result.counts.errors == 0 and result.optional_words.left_out == 1


@pytest.mark.parametrize(
    "line, message",
    [
        ("optional\tinciso\tdepois do item", "the place of optional words is 'before roman item'"),
        ("optional\tinciso\tfor x", "the place of optional words is"),
        ("optional", "expected 'optional<TAB>words"),
    ],
)
def test_malformed_optional_lines_are_refused(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(InputError, match=f"line 2: {message}"):
        load_user_lexicon(_lexicon(tmp_path, line))


def test_optional_words_need_the_third_version_and_the_cli_says_so(tmp_path: Path, capsys) -> None:
    lexicon = _lexicon(tmp_path, "optional\tinciso\tbefore roman item")
    args = plain_text_pair(tmp_path, "art1", "I - a soberania;", "inciso primeiro a soberania")
    assert main([*args, "--lexicon", str(lexicon)]) == 0
    assert json.loads(capsys.readouterr().out)["wer"] == 0
    assert main([*args, "--lexicon", str(lexicon), "--normalizer", "ptbr-norm-2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "corpus.tsv: line 2: optional words need" in err and "ptbr-norm-2" in err
    bad = _lexicon(tmp_path, "equivalence\tnão\tsim")
    assert main([*args, "--lexicon", str(bad)]) == 2
    assert "line 2: 'equivalence não -> sim' makes a negation" in capsys.readouterr().err
