"""The pt-BR normalizer: source words -> scored tokens, each mapped back to its source word.

Reference and hypothesis go through it separately with the same policy; it never sees the other
side. Per source word: Unicode form, numerals (digits -> words, before punctuation is touched),
case, punctuation/hyphens/apostrophes, equivalence table, accent folding, fillers; then the
whole token stream is scanned for number groups so digits and spoken numbers tag alike.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from functools import lru_cache, reduce
from importlib.metadata import version as package_version
from itertools import accumulate
from operator import or_
from pathlib import Path
from typing import Any

from toolkit.core.errors import InputError
from toolkit.scorer.normalize.chars import fold_accents, split_hyphenated, split_punctuation
from toolkit.scorer.normalize.clock import times_and_dates
from toolkit.scorer.normalize.colloquial import colloquial_candidates, colloquial_readings
from toolkit.scorer.normalize.context import (
    WordContext,
    abbreviation_words,
    context_readings,
    needs_context,
    word_context,
)
from toolkit.scorer.normalize.digits import CURRENCY_PREFIXES, find_numeral, might_start_numeral, splits_currency
from toolkit.scorer.normalize.labels import (
    ROMAN_ITEM,
    group_openers,
    item_labels,
    label_form,
    label_readings,
    legal_numbering,
    may_label,
    numbering_words,
    part_names,
)
from toolkit.scorer.normalize.lexicon import LEXICON_DIR, Lexicons, load_lexicons
from toolkit.scorer.normalize.numbers import STARTERS, canonical_word, find_numbers
from toolkit.scorer.normalize.optional import OptionalRules, parenthesized
from toolkit.scorer.normalize.orthography import mesoclisis, variant
from toolkit.scorer.normalize.policy import NormalizationPolicy
from toolkit.scorer.normalize.stream import Stream
from toolkit.scorer.normalize.token import Token, TokenColumns
from toolkit.scorer.normalize.user_lexicon import UserLexicon, load_user_lexicon

# A numeral may span pieces of this many following words ("R$ 1 500 000 milhões" is 5).
_LOOKAHEAD = 8
# What a source word may set going on its own (_Rules.word_state), a bit per pass: the number passes (a key of
# its forms may start a number), and the passes only the whole pipeline runs: a numeral read from its pieces, an
# optional span (a parenthesis), a mesoclisis (a hyphen: the clitic), a colloquial "num", a list label or a
# part's number or letter, a reading in context.
_NUMBERS, _NUMERAL, _PARENTHESIS, _HYPHEN, _COLLOQUIAL, _LABEL, _CONTEXT = (1 << bit for bit in range(7))
_EVERY = (1 << 7) - 1
_LOUD = _EVERY & ~_NUMBERS
_MARKED = (_HYPHEN, _COLLOQUIAL, _LABEL, _CONTEXT)  # the word passes run only where a word is marked for them


class _LookupKeys(dict[str, str]):
    """Token text -> lookup key for number words: lower case, accent-folded (but the verb "é" is not the
    connector "e"), edge punctuation removed; computed on a text's first look-up."""

    def __missing__(self, text: str) -> str:
        parts = split_punctuation(text.lower(), split_hyphens=False)
        key = text if len(parts) != 1 else parts[0] if parts[0] == "é" else fold_accents(parts[0])
        self[text] = key
        return key


class _Rules:
    """Word rules of one policy and lexicon set, with a cache of results per written form."""

    def __init__(self, policy: NormalizationPolicy, lexicons: Lexicons, user: UserLexicon | None) -> None:
        self.policy = policy
        self.lexicons = lexicons
        self.user = user
        self.equivalences = _equivalences(policy, lexicons, user)
        self.contexts: dict[str, WordContext] = {}
        self.plain_labels: dict[str, str] = {}  # written word -> its plain form, for label_readings
        self._forms: dict[str, tuple[str, ...]] = {}
        self._plain: dict[str, tuple[str, ...] | None] = {}
        self.word_pieces: dict[str, tuple[str, ...]] = {}
        self.plain_words: dict[str, tuple[str, ...] | None] = {}
        self.word_states: dict[str, int] = {}
        self.keys = _LookupKeys()
        self.key = self.keys.__getitem__  # a text's lookup key (a dict look-up: C code when known)
        self.fillers = frozenset(self._fold(entry) for entry in lexicons.fillers)
        self.numbering = numbering_words(lexicons.labels, self.key)
        rules = user.optional if user is not None else ()
        if rules and not policy.optional_words:
            raise InputError(
                user.path,  # type: ignore[union-attr]
                f"line {rules[0].line}: optional words need a policy with optional_words "
                f"(normalizer version ptbr-norm-3 or later; this one is {policy.version})",
            )
        self.optional = OptionalRules(
            [(tuple(form for word in rule.words for form in self.forms(word)), rule.place) for rule in rules]
        )

    def _fold(self, text: str) -> str:
        return fold_accents(text) if self.policy.accent_fold else text

    def forms(self, piece: str) -> tuple[str, ...]:
        """The tokens one whitespace-free piece becomes (no numeral handling here)."""
        cached = self._forms.get(piece)
        if cached is not None:
            return cached
        policy = self.policy
        text = piece.lower() if policy.lowercase else piece
        if policy.orthographic_variants:  # before hyphens split: "infra-estrutura" is one word
            spelled = [variant(word, self.lexicons.orthography) for word in split_punctuation(text, False)]
            words = [out for word in spelled for out in (split_hyphenated(word) if policy.split_hyphens else [word])]
        elif policy.strip_punctuation:
            words = split_punctuation(text, policy.split_hyphens)
        elif policy.split_hyphens:
            words = split_hyphenated(text)
        else:
            words = [text]
        if policy.apply_equivalences:
            table = self.equivalences
            words = [out for word in words for out in table.get(word.lower(), (word,))]
        if policy.accent_fold:
            words = [fold_accents(word) for word in words]
        if not policy.keep_fillers:
            words = [word for word in words if word.lower() not in self.fillers]
        result = tuple(words)
        self._forms[piece] = result
        return result

    def pieces(self, word: str) -> tuple[str, ...]:
        """A source word in the policy's Unicode form without invisible format characters
        (zero-width space, BOM), split on whitespace (cached)."""
        cached = self.word_pieces.get(word)
        if cached is None:
            if self.policy.abbreviations:
                cached = tuple(
                    out for piece in unicodedata.normalize("NFC", word).split() for out in self._abbreviated(piece)
                )
            else:
                cached = self._unicode_pieces(word)
            self.word_pieces[word] = cached
        return cached

    def _unicode_pieces(self, text: str) -> tuple[str, ...]:
        text = unicodedata.normalize(self.policy.unicode_form, text)
        if not text.isascii():
            text = "".join(char for char in text if unicodedata.category(char) != "Cf")
        return tuple(text.split())

    def _abbreviated(self, piece: str) -> tuple[str, ...]:
        """A piece, or the words of the abbreviation it is; checked before NFKC turns "nº" into "no"."""
        words = abbreviation_words(piece, self.lexicons)
        if words is not None:
            return words
        marks = len(piece) - len(piece.lstrip("§"))
        if marks in (1, 2) and len(piece) > marks:  # "§1º", "§§2º"
            return (*self._abbreviated(piece[:marks]), *self._unicode_pieces(piece[marks:]))
        return self._unicode_pieces(piece)

    def plain_word(self, word: str) -> tuple[str, ...] | None:
        """The forms of a whole source word, or None when it may hold a numeral (cached)."""
        try:
            return self.plain_words[word]
        except KeyError:
            forms: list[str] = []
            for piece in self.pieces(word):
                piece_forms = self.plain(piece)
                if piece_forms is None:
                    self.plain_words[word] = None
                    return None
                forms.extend(piece_forms)
            result = tuple(forms)
            self.plain_words[word] = result
            return result

    def word_state(self, word: str) -> int:
        """The passes a source word may set going on its own, as bits (cached); a currency's letters ("R") are
        read only before a "$" word, itself a numeral."""
        policy = self.policy
        forms = self.plain_word(word)
        state = (
            (_NUMERAL if forms is None else _NUMBERS if any(self.key(form) in STARTERS for form in forms) else 0)
            | (_PARENTHESIS if "(" in word else 0)
            | (_HYPHEN if "-" in word else 0)
            | (_COLLOQUIAL if policy.colloquial_negation and colloquial_candidates((word,)) else 0)
            | (_LABEL if policy.list_labels and self._names_a_part(word) else 0)
            | (_CONTEXT if (policy.roman_numerals or policy.abbreviations) and self._needs_context(word) else 0)
        )
        self.word_states[word] = state
        return state

    def states(self, words: Sequence[str]) -> list[int]:
        """:meth:`word_state` of each word (cached: a dict look-up for a known word)."""
        known = self.word_states
        return [known[word] if word in known else self.word_state(word) for word in words]

    def _names_a_part(self, word: str) -> bool:
        """Whether ``word`` may be a list label, or name the part the next word numbers or letters."""
        form = self.plain_labels.get(word)
        if form is None:
            form = self.plain_labels[word] = label_form(word)
        abbreviations = self.lexicons.abbreviations if self.policy.abbreviations else {}
        return may_label(word) or bool(part_names((form,), self.lexicons.labels, abbreviations))

    def _needs_context(self, word: str) -> bool:
        """Whether ``word`` may be read by its neighbours (a Roman numeral, an abbreviation read before one)."""
        context = self.contexts.get(word)
        if context is None:
            context = self.contexts[word] = word_context(word, self.lexicons)
        return needs_context((context,), bool(self.policy.roman_numerals), bool(self.policy.abbreviations))

    def plain(self, piece: str) -> tuple[str, ...] | None:
        """``forms(piece)``, or None when the piece may start a numeral (cached)."""
        try:
            return self._plain[piece]
        except KeyError:
            result = None if might_start_numeral(piece) else self.forms(piece)
            self._plain[piece] = result
            return result

    def literal(self, text: str) -> str:
        """A word the normalizer writes itself (a numeral kept as written, a canonical number
        word): only the policy's case and accent rules apply."""
        return self._fold(text.lower() if self.policy.lowercase else text)


def _equivalences(
    policy: NormalizationPolicy, lexicons: Lexicons, user: UserLexicon | None
) -> dict[str, tuple[str, ...]]:
    """The shipped equivalences, the homophones if the policy folds them, units said two ways if it reads
    units, and a user lexicon's."""
    table = dict(lexicons.equivalences)
    if policy.homophones:
        table.update(lexicons.homophones)
    if policy.units:
        table.update(lexicons.spoken_units)
    if user is not None:
        table.update(user.equivalences)
    return table


def _marked(states: list[int]) -> dict[int, list[int]]:
    """Each bit of ``_MARKED`` -> the indices of the words whose state has it: the only words its pass may start at,
    found with one look at every word's state (a long text is mostly plain words)."""
    loud = [k for k, state in enumerate(states) if state & _LOUD]
    return {bit: [k for k in loud if states[k] & bit] for bit in _MARKED}


@lru_cache(maxsize=32)
def _rules(policy: NormalizationPolicy, directory: Path, user: Path | None, user_sha256: str | None) -> _Rules:
    return _Rules(
        policy, load_lexicons(directory, policy.version), load_user_lexicon(user) if user is not None else None
    )


class Normalizer:
    """Applies one frozen ``NormalizationPolicy``; see protocol/normalization-policy.md."""

    def __init__(
        self,
        policy: NormalizationPolicy | None = None,
        lexicon_dir: Path | str = LEXICON_DIR,
        user_lexicon: Path | str | None = None,
    ) -> None:
        self.policy = policy if policy is not None else NormalizationPolicy.normalized()
        self.lexicon_dir = Path(lexicon_dir)
        self.user_lexicon = Path(user_lexicon) if user_lexicon is not None else None
        user_sha256 = load_user_lexicon(self.user_lexicon).sha256 if self.user_lexicon is not None else None
        self._rules = _rules(self.policy, self.lexicon_dir, self.user_lexicon, user_sha256)

    def tokens(self, source_words: Sequence[str], reference: bool = False) -> list[Token]:
        """Normalize ``source_words``; a word may give several tokens, or none (a lone "?").

        Tokens of a numeral written over several words ("R$ 1.500,00", "2 100") all point to
        its first word, so ``source_index`` never decreases. With ``reference`` (the words are a
        reference's) and the policy's ``optional_words``, words in parentheses are optional.
        """
        return list(map(Token._make, zip(*self.columns(source_words, reference))))

    def columns(self, source_words: Sequence[str], reference: bool = False, before: str | None = None) -> TokenColumns:
        """:meth:`tokens` as one list per ``Token`` field, without building a ``Token`` per word (the scorer
        reads columns); ``before``: the item the text before these words last opened (``labels.group_openers``)."""
        return self._passed(source_words, reference, self._rules.states(source_words), before)

    def _passed(
        self, source_words: Sequence[str], reference: bool, states: list[int], before: str | None = None
    ) -> TokenColumns:
        """:meth:`columns` through the pipeline, each word pass reading only the words whose ``states`` have its
        bit (:meth:`_Rules.word_state`: the others can set nothing going) and skipped where none has it. A
        reference's words are the pass's once their parentheses are off (with ``_EVERY`` for every word: each
        pass reads every word, the pipeline in full)."""
        optional: frozenset[int] = frozenset()
        conventions = self._rules.optional if reference else None
        if reference and self.policy.optional_words and any(state & _PARENTHESIS for state in states):
            source_words, optional = parenthesized(source_words)
            states = [old | new for old, new in zip(states, self._rules.states(source_words))] if optional else states
        marked = _marked(states)
        list_labels = self.policy.list_labels and marked[_LABEL]
        if list_labels or conventions:  # the label bit is set only under a policy that reads list labels
            candidates = marked[_LABEL] if self.policy.list_labels else None
            labels = item_labels(source_words, candidates, bool(self.policy.paired_labels), before)
        else:
            labels = {}
        columns = self._columns(source_words, labels if list_labels else {}, marked)
        if optional:
            columns = columns._replace(optional=[source in optional for source in columns.sources])
        if conventions:
            tokens = list(map(Token._make, zip(*columns)))
            tokens = conventions.apply(tokens, source_words, {index: kind for index, (kind, _) in labels.items()})
            columns = TokenColumns(*(list(column) for column in zip(*tokens))) if tokens else columns
        return columns

    def group_columns(
        self, source_words: Sequence[str], groups: Sequence[tuple[int, int]], reference: bool = False
    ) -> list[TokenColumns]:
        """:meth:`columns` of each non-empty ``[begin, end)`` group of ``source_words`` on its own (source indices
        count from the group's first word). A word pass runs only on a group with a word that may set it going
        (:meth:`_Rules.word_state`), and a group with none is made straight from its words' cached forms, through
        the number passes only when a form may start a number: the passes skipped would find nothing in it (a long
        reference has hundreds of short utterances)."""
        groups = [(begin, end) for begin, end in groups if end > begin]
        rules = self._rules
        openers = self._openers(source_words, groups)
        if len(groups) < 2 or (reference and rules.optional):  # one group gains nothing; optional words read all
            return [
                self.columns(source_words[begin:end], reference, before)
                for (begin, end), before in zip(groups, openers)
            ]
        states = rules.states(source_words)
        plain = rules.plain_words
        out: list[TokenColumns] = []
        for begin, end in groups:
            state = reduce(or_, states[begin:end])
            words = source_words[begin:end]
            if state & _LOUD:
                out.append(self._passed(words, reference, states[begin:end], openers[len(out)]))
                continue
            texts = [form for word in words for form in plain[word]]  # type: ignore[union-attr]
            sources = [k for k, word in enumerate(words) for _ in plain[word]]  # type: ignore[union-attr]
            if state:
                out.append(self._numbered(texts, sources, {}, {}, words if self.policy.paired_labels else None))
            else:
                out.append(TokenColumns.plain(texts, sources))
        return out

    def _openers(self, source_words: Sequence[str], groups: list[tuple[int, int]]) -> list[str | None]:
        """Each group's ``before`` (:func:`~toolkit.scorer.normalize.labels.group_openers`) where the policy reads
        a lettered list across lines (``paired_labels``), else None for every group."""
        if self.policy.list_labels and self.policy.paired_labels:
            return group_openers(source_words, groups)
        return [None] * len(groups)

    @property
    def writes_pieces(self) -> bool:
        """Whether every source word's tokens are its Unicode pieces (:meth:`_Rules.pieces`), whatever its
        neighbours: no rule of the policy changes, splits, drops or reads a word (verbatim, which only tags
        numbers), and no reading convention of a user lexicon adds one."""
        policy = self.policy
        rewrites = (
            policy.lowercase,
            policy.strip_punctuation,
            policy.split_hyphens,
            policy.accent_fold,
            policy.apply_equivalences,
            policy.numbers_to_words,
            not policy.keep_fillers,
            policy.roman_numerals,
            policy.abbreviations,
            policy.numeral_pieces,
            policy.list_labels,
            policy.orthographic_variants,
            policy.colloquial_negation,
            self._rules.optional,
        )
        return not any(rewrites)

    def written(
        self, source_words: Sequence[str], groups: Sequence[tuple[int, int]], reference: bool = False
    ) -> tuple[list[str], list[bool]] | None:
        """The token texts and optional marks of all ``groups`` (:meth:`group_columns`, joined) straight from the
        words' Unicode pieces, where the policy :attr:`writes_pieces` (without the number tags, which only
        :meth:`group_columns` makes), else None. A reference's parentheses of optional words come off first."""
        if not self.writes_pieces:
            return None
        words = [word for begin, end in groups for word in source_words[begin:end]]
        marked: set[int] = set()
        if reference and self.policy.optional_words and any("(" in word for word in words):
            offset = 0
            for begin, end in groups:
                unmarked, inside = parenthesized(source_words[begin:end])
                words[offset : offset + len(unmarked)] = unmarked
                marked.update(offset + k for k in inside)
                offset += len(unmarked)
        rules = self._rules
        known = rules.word_pieces
        pieces = [known[word] if word in known else rules.pieces(word) for word in words]
        texts = [piece for word in pieces for piece in word]
        if not marked:
            return texts, [False] * len(texts)
        return texts, [k in marked for k, word in enumerate(pieces) for _ in word]

    def _readings(
        self,
        source_words: Sequence[str],
        labels: dict[int, tuple[str, tuple[str, ...]]],
        marked: dict[int, list[int]],
    ) -> tuple[dict[int, tuple[str, ...]], frozenset[int]]:
        """Source-word index -> the words it is read as, where the neighbours decide (Roman numerals,
        abbreviations, list labels, the colloquial "num"); and the undecidable "num"s. ``marked``: the words
        of each pass (:func:`_marked`)."""
        rules, policy, lexicons = self._rules, self.policy, self._rules.lexicons
        readings = (
            context_readings(
                source_words, lexicons, bool(policy.roman_numerals), bool(policy.abbreviations), rules.contexts
            )
            if (policy.roman_numerals or policy.abbreviations) and marked[_CONTEXT]
            else {}
        )
        if policy.list_labels and marked[_LABEL]:
            abbreviations = lexicons.abbreviations if policy.abbreviations else {}
            readings.update(
                label_readings(source_words, labels, lexicons.labels, abbreviations, rules.plain_labels, marked[_LABEL])
            )
        undecided: frozenset[int] = frozenset()
        if policy.colloquial_negation and marked[_COLLOQUIAL]:
            negations, undecided = colloquial_readings(source_words, lexicons.colloquial, marked[_COLLOQUIAL])
            readings.update(negations)
        return readings, undecided

    def _columns(
        self,
        source_words: Sequence[str],
        labels: dict[int, tuple[str, tuple[str, ...]]],
        marked: dict[int, list[int]],
    ) -> TokenColumns:
        """The token columns of ``source_words`` (list ``labels`` found, ``marked``: the words of each pass):
        readings in context, each word's forms, the mesoclisis, then the number passes."""
        rules = self._rules
        policy = self.policy
        presets: dict[int, str] = {}
        readings, undecided = self._readings(source_words, labels, marked)
        texts, sources = self._word_forms(source_words, readings, presets)
        if policy.orthographic_variants and marked[_HYPHEN]:
            texts = mesoclisis(texts, sources, list(source_words), rules.literal("á"))
        columns = self._numbered(texts, sources, presets, labels, source_words if policy.paired_labels else None)
        if undecided:
            columns = columns._replace(undecided=[source in undecided for source in columns.sources])
        return columns

    def _numbered(
        self,
        texts: list[str],
        sources: list[int],
        presets: dict[int, str],
        labels: dict[int, tuple[str, tuple[str, ...]]],
        words: Sequence[str] | None = None,
    ) -> TokenColumns:
        """The token columns of the words' forms: clock times, dates and the legal numbering read as rule-made
        numbers (``presets``: numerals kept as written, by position; ``words``: the source words, where a dash
        ends a list of numbers), then the number groups tagged."""
        rules, policy = self._rules, self.policy
        stream = Stream(texts, sources, [None] * len(texts))
        for position, value in presets.items():  # numerals kept as written, with their value
            stream.fixed[position] = (position, value)
        if policy.numbers_to_words and (policy.clock_times or policy.dates):
            stream = times_and_dates(stream, rules.key, rules.literal, bool(policy.clock_times), bool(policy.dates))
        if policy.list_labels and policy.numbers_to_words:
            items = frozenset(index for index, (kind, _) in labels.items() if kind == ROMAN_ITEM)
            stream = legal_numbering(stream, rules.key, rules.numbering, items, words)
        return self._tag(stream)

    def _word_forms(
        self, source_words: Sequence[str], readings: dict[int, tuple[str, ...]], presets: dict[int, str]
    ) -> tuple[list[str], list[int]]:
        """Each source word's forms, flat, with the source index of each: a word read in context by its
        reading, a word holding a numeral by :meth:`_numeral_word` (which may take pieces of the next words),
        and the runs of plain words between them copied at once from their cached forms."""
        rules = self._rules
        plain = rules.plain_words
        forms_of = [plain[word] if word in plain else rules.plain_word(word) for word in source_words]
        if self.policy.numeral_pieces:  # "R" "$" "2" ".000": read as a numeral from the "R"
            for k in [k for k, word in enumerate(source_words) if word in CURRENCY_PREFIXES]:
                if splits_currency(source_words, k):
                    forms_of[k] = None
        numerals = [k for k, forms in enumerate(forms_of) if forms is None]
        plain_forms = [() if forms is None else forms for forms in forms_of]
        offsets = [0, *accumulate(map(len, plain_forms))]
        plain_texts = [form for forms in plain_forms for form in forms]
        plain_sources = [k for k, forms in enumerate(plain_forms) for _ in forms]
        texts: list[str] = []
        sources: list[int] = []
        done = 0  # source words before this one are in texts
        for special in sorted({*readings, *numerals}):
            if special < done:
                continue  # a numeral before it took this word
            texts.extend(plain_texts[offsets[done] : offsets[special]])
            sources.extend(plain_sources[offsets[done] : offsets[special]])
            index, skip = special, 0
            while index == special or (skip and index < len(source_words)):
                forms: tuple[str, ...] | None = None
                if skip == 0 and index in readings:
                    forms = tuple(form for reading in readings[index] for form in rules.forms(reading))
                elif skip == 0:
                    forms = forms_of[index]
                if forms is None:
                    forms, skip = self._numeral_word(source_words, index, skip, presets, len(texts))
                texts.extend(forms)
                sources.extend([index] * len(forms))
                index += 1
            done = index
        texts.extend(plain_texts[offsets[done] :])
        sources.extend(plain_sources[offsets[done] :])
        return texts, sources

    def _numeral_word(
        self, source_words: Sequence[str], index: int, skip: int, presets: dict[int, str], offset: int
    ) -> tuple[tuple[str, ...], int]:
        """Forms of a word holding a numeral, which may take pieces of the next words.

        ``skip`` pieces at the start were already used by a numeral of an earlier word; returns
        the forms and how many pieces of the following words this word's numerals used.
        """
        policy, rules = self.policy, self._rules
        own = list(rules.pieces(source_words[index]))
        used = min(skip, len(own))
        own, skip = own[used:], skip - used
        window = list(own)
        for following in source_words[index + 1 : index + 1 + _LOOKAHEAD]:
            window.extend(rules.pieces(following))
        out: list[str] = []
        pos = 0
        while pos < len(own):
            piece = window[pos]
            forms = rules.plain(piece)
            if forms is not None and policy.numeral_pieces and splits_currency(window, pos):
                forms = None
            step = 1
            if forms is None:
                numeral = find_numeral(
                    window,
                    pos,
                    merge=policy.numbers_to_words,
                    join_pieces=bool(policy.numeral_pieces),
                    units=rules.lexicons.units if policy.units else None,
                    dates=bool(policy.dates),
                )
                if numeral is not None and policy.numbers_to_words:
                    forms = tuple(form for word in numeral.words for form in rules.forms(word))
                    step = numeral.span
                elif numeral is not None and numeral.value is not None:
                    presets[offset + len(out)] = numeral.value
                    forms = (rules.literal(numeral.literal if policy.strip_punctuation else piece),)
                else:
                    forms = rules.forms(piece)
            out.extend(forms)
            pos += step
        return tuple(out), skip + max(0, pos - len(own))

    def _tag(self, stream: Stream) -> TokenColumns:
        """Find number groups and build the token columns (group ids count from 0 in text order); the groups
        a rule made win over those found in the words."""
        rules = self._rules
        texts, sources = stream.texts, stream.sources  # the stream ends here: its texts are canonicalized in place
        keys = stream.keys(rules.key)
        spans = [(span.start, span.end, span.value) for span in find_numbers(keys)]
        made = stream.spans()
        if made:
            spans = [span for span in spans if not any(stream.fixed[p] for p in range(span[0], span[1]))]
            spans += made
        count = len(texts)
        is_number = [False] * count
        values: list[str | None] = [None] * count
        groups: list[int | None] = [None] * count
        canonicalize = self.policy.numbers_to_words and self.policy.strip_punctuation
        for group, (start, end, value) in enumerate(sorted(spans)):
            for position in range(start, end):
                if canonicalize:
                    canonical = canonical_word(keys[position])
                    if canonical is not None:
                        texts[position] = rules.literal(canonical)
                is_number[position], values[position], groups[position] = True, value, group
        return TokenColumns(texts, sources, is_number, values, groups, [False] * count, [False] * count)

    def words(self, text: str) -> list[str]:
        """Convenience: split ``text`` on whitespace and return the token texts."""
        return [token.text for token in self.tokens(text.split())]

    @property
    def negations(self) -> frozenset[str]:
        """The negation lexicon as this policy writes it (e.g. accent-folded "nao")."""
        rules = self._rules
        entries = (*rules.lexicons.negations, *(rules.user.negations if rules.user is not None else ()))
        return frozenset(form for entry in entries for form in rules.forms(entry))

    @property
    def names(self) -> tuple[str, ...]:
        """Names a user lexicon adds, as written there (the scorer normalizes them like any name)."""
        return self._rules.user.names if self._rules.user is not None else ()

    @property
    def fillers(self) -> frozenset[str]:
        """The filler lexicon as this policy writes it."""
        return self._rules.fillers

    def signature(self) -> dict[str, Any]:
        """Everything that decides the output: policy version and options, lexicon hashes, num2words,
        and a user lexicon's file name and sha256 when one is used, with the entries it allowed to make
        a negation or a number equal to another word."""
        signature: dict[str, Any] = {
            "version": self.policy.version,
            "options": self.policy.options(),
            "lexicons": dict(self._rules.lexicons.hashes),
            "num2words": package_version("num2words"),
        }
        user = self._rules.user
        if user is not None:
            user_lexicon: dict[str, Any] = {"file": user.path.name, "sha256": user.sha256}
            if user.critical:
                user_lexicon["allow_critical"] = list(user.critical)
            signature["user_lexicon"] = user_lexicon
        return signature


def load_negations(
    policy: NormalizationPolicy | None = None,
    lexicon_dir: Path | str = LEXICON_DIR,
    user_lexicon: Path | str | None = None,
) -> frozenset[str]:
    """Negation words from negations.txt (and a user lexicon), normalized by ``policy``."""
    return Normalizer(policy, lexicon_dir, user_lexicon).negations
