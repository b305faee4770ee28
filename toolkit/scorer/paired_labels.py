"""A Roman numeral of the reference read the same on the hypothesis side (ptbr-norm-4, ``paired_labels``).

The reference's list labels ("XIV -", "L -"), cited incisos ("art. 5º, II") and Roman numerals read in
context ("Parágrafo IV") are read as numbers on the reference side; a recognizer writes the number the
reader said in any of the ways a number is written: "XIV,", "14.", "-30," (the label's dash glued on as a
sign), "catorze", "décimo quarto", "1º". Where the hypothesis words aligned to such a reference word (its
partners, and the insertions of the same hypothesis word or spelled number beside them) name the same
value, they read as the reference's tokens. Any other value stays an error ("XV" for "XIV"), a minus sign
counts as the label's dash only when written glued to the digits ("-30", never "menos trinta"), and
nothing changes away from a reference numeral. Cardinal and ordinal are the same label ("dois" for "II -"),
as the legal numbering convention already reads them after a numbering word.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from toolkit.scorer.align import EQUAL, INSERT, Alignment
from toolkit.scorer.metrics.tokens import TokenTable
from toolkit.scorer.normalize.chars import fold_accents
from toolkit.scorer.normalize.context import roman_value
from toolkit.scorer.normalize.labels import DASHES, LETTER_NUMERALS, ROMAN_ITEM, group_openers, item_labels
from toolkit.scorer.normalize.numbers import label_number

_EDGES = ".,;:!?\"'“”()" + DASHES
_ORDINAL_MARKS = "ºª°"
_ARTICLES = frozenset({"uma", "duas"})


@dataclass(frozen=True)
class _Fold:
    """Hypothesis tokens ``[first, last]`` to be read as the reference tokens ``texts`` (value ``value``)."""

    first: int
    last: int
    texts: list[str]
    value: str | None


def written_numeral(word: str) -> int | None:
    """The value of a word written as a Roman numeral ("XIV", "XIV-", "L,"), else None."""
    core = unicodedata.normalize("NFC", word).strip(_EDGES)
    value = roman_value(core)
    return value if value is not None else LETTER_NUMERALS.get(core)


def _digits(word: str) -> int | None:
    """The value of a word written in digits, with an ordinal mark or not ("1", "1º", "-30,"), else None."""
    core = unicodedata.normalize("NFC", word).strip(_EDGES).rstrip(_ORDINAL_MARKS)
    return int(core) if core.isascii() and core.isdigit() else None


def _said(token: str) -> int | None:
    """The value of one token said as a label is numbered ("um", "segundo"; a lone "um" is no number
    elsewhere, but where the reference has a numeral it is that numeral's reading), else None; "uma" and "duas"
    are not: a list label is read in the masculine, so they are the article and a real difference."""
    if token in _ARTICLES:
        return None
    found = label_number([fold_accents(token)], 0)
    return found[1] if found is not None and found[0] == 1 else None


def _value_of(text: str | None) -> int | None:
    """A token's number value as an integer ("14", "14º", "-30"), else None (decimals, money: no label)."""
    if text is None:
        return None
    plain = text.rstrip(_ORDINAL_MARKS)
    return int(plain) if plain.lstrip("-").isdigit() else None


def label_words(words: Sequence[str], groups: Sequence[tuple[int, int]]) -> frozenset[int]:
    """The indices of the reference words that are Roman list labels or cited incisos, each ``[begin, end)``
    group read on its own as the normalizer reads it (:func:`~toolkit.scorer.normalize.labels.item_labels`)."""
    groups = [(begin, end) for begin, end in groups if end > begin]
    return frozenset(
        begin + index
        for (begin, end), before in zip(groups, group_openers(words, groups))
        for index, (kind, _) in item_labels(words[begin:end], letter_numerals=True, before=before).items()
        if kind == ROMAN_ITEM
    )


def paired_labels(ref: TokenTable, hyp: TokenTable, alignment: Alignment, labels: frozenset[int]) -> TokenTable | None:
    """``hyp`` with every way of writing the value of a reference label (source words ``labels``) read as that
    label's tokens, or None where nothing changes (the caller aligns again only then)."""
    numerals = _reference_labels(ref, labels)
    if not numerals:
        return None
    ref_op, ref_partner, ref_step = alignment.ref_view()
    folds: list[_Fold] = []
    for tokens, value in numerals:
        inserted = _beside_insertions(alignment, ref_step[tokens])
        if not inserted and (ref_op[tokens] == EQUAL).all():
            continue
        span = _hypothesis_span(hyp, ref_partner[tokens], inserted)
        if span is not None and _hypothesis_value(hyp, span) == value:
            texts = [ref.texts[k] for k in tokens.tolist()]
            if [hyp.texts[k] for k in range(span[0], span[1] + 1)] != texts:
                folds.append(_Fold(span[0], span[1], texts, ref.number_value[int(tokens[0])]))
    return _folded(hyp, folds) if folds else None


def _reference_labels(ref: TokenTable, labels: frozenset[int]) -> list[tuple[np.ndarray, int]]:
    """(token indices, value) of every reference label read as a number."""
    out: list[tuple[np.ndarray, int]] = []
    if not labels:
        return out
    for first in np.flatnonzero(ref.first_of_source & ref.is_number).tolist():
        source = int(ref.source[first])
        value = _value_of(ref.number_value[first]) if source in labels else None
        if value is None:
            continue
        end = first
        while end + 1 < len(ref) and ref.source[end + 1] == source:
            end += 1
        out.append((np.arange(first, end + 1), value))
    return out


def _beside_insertions(alignment: Alignment, steps: np.ndarray) -> list[int]:
    """The hypothesis tokens inserted right before and right after the alignment steps ``steps``."""
    inserted: list[int] = []
    ops, hyp_index = alignment.ops, alignment.hyp_index
    step = int(steps.min()) - 1
    while step >= 0 and ops[step] == INSERT:
        inserted.append(int(hyp_index[step]))
        step -= 1
    step = int(steps.max()) + 1
    while step < len(ops) and ops[step] == INSERT:
        inserted.append(int(hyp_index[step]))
        step += 1
    return inserted


def _hypothesis_span(hyp: TokenTable, partners: np.ndarray, inserted: list[int]) -> tuple[int, int] | None:
    """The hypothesis tokens ``[first, last]`` that write the reference numeral: the spelled number or the
    written word its partner tokens belong to, whole, and only when every token of it is a partner or an
    insertion beside the numeral; None when the numeral was deleted."""
    paired = [int(k) for k in partners.tolist() if k >= 0]
    if not paired:
        return None
    anchor = paired[0]
    group = int(hyp.number_group[anchor])
    if group >= 0:
        members = np.flatnonzero(hyp.number_group == group)
    else:
        members = np.flatnonzero(hyp.source == hyp.source[anchor])
    allowed = set(paired) | set(inserted)
    if not set(members.tolist()) <= allowed or not set(paired) <= set(members.tolist()):
        return None
    first, last = int(members.min()), int(members.max())
    return (first, last) if last - first + 1 == len(members) else None


def _hypothesis_value(hyp: TokenTable, span: tuple[int, int]) -> int | None:
    """The value the hypothesis tokens ``span`` write: a spelled or written number's, a Roman numeral's, or one
    word's said as a label; a negative one only with its minus glued on as a dash ("-30,")."""
    first, last = span
    word = hyp.words.texts[int(hyp.source[first])]
    value = _value_of(hyp.number_value[first]) if hyp.is_number[first] else None
    if value is None and hyp.source[first] == hyp.source[last]:  # one written word: "XIV,", "-1,", "1º"
        value = written_numeral(word.upper()) or _digits(word)  # "XIV," and "xiv,": the same numeral
    if value is None and first == last:
        value = _said(hyp.texts[first])
    if value is not None and value < 0:
        glued = unicodedata.normalize("NFC", word).lstrip()[:1] in DASHES
        return -value if glued else None
    return value


def _folded(hyp: TokenTable, folds: list[_Fold]) -> TokenTable:
    """``hyp`` with each fold's tokens replaced by the reference's, sourced to the hypothesis words they
    replace (in order; the last word takes any extra token) and numbered as one new spelled number each."""
    texts, source, is_number, group, value = [], [], [], [], []
    optional, undecided = [], []
    next_group = int(hyp.number_group.max(initial=-1)) + 1
    by_first = {fold.first: fold for fold in folds}
    k = 0
    while k < len(hyp):
        fold = by_first.get(k)
        if fold is None:
            texts.append(hyp.texts[k])
            source.append(int(hyp.source[k]))
            is_number.append(bool(hyp.is_number[k]))
            group.append(int(hyp.number_group[k]))
            value.append(hyp.number_value[k])
            optional.append(bool(hyp.optional[k]))
            undecided.append(bool(hyp.undecided[k]))
            k += 1
            continue
        sources = sorted(set(hyp.source[fold.first : fold.last + 1].tolist()))
        for n, text in enumerate(fold.texts):
            texts.append(text)
            source.append(int(sources[min(n, len(sources) - 1)]))
            is_number.append(True)
            group.append(next_group)
            value.append(fold.value)
            optional.append(False)
            undecided.append(False)
        next_group += 1
        k = fold.last + 1
    return replace(
        hyp,
        texts=texts,
        source=np.asarray(source, dtype=np.int64),
        is_number=np.asarray(is_number, dtype=bool),
        number_group=np.asarray(group, dtype=np.int64),
        number_value=value,
        optional=np.asarray(optional, dtype=bool),
        undecided=np.asarray(undecided, dtype=bool),
    )
