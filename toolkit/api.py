"""The scorer as a library, in the style of jiwer and sacrebleu: ``wer``, ``score`` and ``Scorer``.

A reference or hypothesis may be a plain string (one recording, read as a ``.txt`` file is: a
reference's turns are its lines, or the sentences of a single line), a list of them (one
recording per item, paired in order and micro-averaged), the toolkit's
:class:`~toolkit.core.transcripts.Reference` / :class:`~toolkit.core.transcripts.Hypothesis` records, or a file
given as a :class:`pathlib.Path` (a reference ``.TextGrid``/``.stm``/``.txt``, a hypothesis
``.ctm``/``.json``/``.txt``; a plain ``str`` is always text, never a file name). Only scoring
is imported here: pandas and scipy load when a table or a drift slope is asked for, and a run's
scorer and its explanation (:func:`explain_run`) when a run is asked about.
"""

from __future__ import annotations

import os
import typing
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, cast

from toolkit.core.transcripts import Hypothesis, Reference, Word
from toolkit.scorer.options import ScoreOptions, checked_options
from toolkit.scorer.results import CorpusScore, RecordingScore
from toolkit.scorer.score import score_recording
from toolkit.scorer.signature import Signature, scorer_signature

if typing.TYPE_CHECKING:
    from toolkit.explain import Explanation

Side = str | os.PathLike | Reference | Hypothesis
Texts = Side | Sequence[Side]


def _type_name(value: Any) -> str:
    return type(value).__name__


def make_options(**options: Any) -> ScoreOptions:
    """ScoreOptions from keyword options, each checked for its type; the error names the option."""
    return checked_options(options)


def _is_single(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike, Reference, Hypothesis))


def _check_side(value: Any, argument: str) -> None:
    if not _is_single(value):
        raise TypeError(
            f"{argument} must be a str, a pathlib.Path, a Reference or Hypothesis record, "
            f"or a list of them; got {_type_name(value)}"
        )


def _pair(reference: Side, hypothesis: Side, where: str = "") -> tuple[Reference, Hypothesis]:
    """Both sides as records; two files are paired by the recording id they hold (as ``ablate score``)."""
    from toolkit.formats import read_hypothesis, read_reference
    from toolkit.formats.plaintext import untimed_turns

    _check_side(reference, f"reference{where}")
    _check_side(hypothesis, f"hypothesis{where}")
    if isinstance(reference, Hypothesis):
        raise TypeError(f"reference{where} must not be a Hypothesis record")
    if isinstance(hypothesis, Reference):
        raise TypeError(f"hypothesis{where} must not be a Reference record")
    recording_id = channel = None
    if isinstance(reference, os.PathLike) and isinstance(hypothesis, os.PathLike):
        from toolkit.formats.pairing import pair_ids

        recording_id, channel = pair_ids(Path(reference), Path(hypothesis))
    if isinstance(reference, os.PathLike):
        reference = read_reference(Path(reference), recording_id, channel=channel)
    elif isinstance(reference, str):
        reference = Reference(recording_id or "", untimed_turns(reference))
    if isinstance(hypothesis, os.PathLike):
        hypothesis = read_hypothesis(Path(hypothesis), recording_id or reference.recording_id or None, channel)
    elif isinstance(hypothesis, str):
        hypothesis = Hypothesis(reference.recording_id, [Word(w) for w in hypothesis.split()])
    return reference, hypothesis


def _pairs(reference: Texts, hypothesis: Texts) -> list[tuple[Reference, Hypothesis]]:
    """One pair, or the items of two equally long lists paired in order."""
    if _is_single(reference) and _is_single(hypothesis):
        return [_pair(reference, hypothesis)]  # type: ignore[arg-type]
    sides = ((reference, "reference"), (hypothesis, "hypothesis"))
    for value, argument in sides:
        if not isinstance(value, (list, tuple)):
            _check_side(value, argument)
    for value, argument in sides:
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"{argument} must be a list too when the other side is a list")
    references, hypotheses = cast(Sequence[Side], reference), cast(Sequence[Side], hypothesis)  # lists: checked above
    if len(references) != len(hypotheses):
        raise ValueError(
            f"reference has {len(references)} item(s) but hypothesis has {len(hypotheses)}; they are paired in order"
        )
    return [_pair(r, h, f"[{k}]") for k, (r, h) in enumerate(zip(references, hypotheses))]


class Scorer:
    """Scores with one fixed set of options, and owns the signature that reproduces its numbers.

    ``Scorer()`` scores with the defaults; ``Scorer(ScoreOptions(...))`` or
    ``Scorer(policy="verbatim", collar=0.25)`` with others.
    """

    def __init__(self, options: ScoreOptions | None = None, **kwargs: Any) -> None:
        if options is not None and not isinstance(options, ScoreOptions):
            raise TypeError(f"options must be a ScoreOptions (or give keyword options), got {_type_name(options)}")
        if options is not None and kwargs:
            raise TypeError("give either options or keyword options, not both")
        self._options = options if options is not None else make_options(**kwargs)

    @property
    def options(self) -> ScoreOptions:
        return self._options

    def __repr__(self) -> str:
        return f"Scorer({self._options!r})"

    def signature(self) -> Signature:
        """The (read-only) signature every score of this scorer carries."""
        return scorer_signature(self._options)

    def score(self, reference: Side, hypothesis: Side) -> RecordingScore:
        """Every figure for one recording (the hypothesis may be an empty string: all deletions)."""
        if not (_is_single(reference) and _is_single(hypothesis)):
            bad = "reference" if not _is_single(reference) else "hypothesis"
            raise TypeError(
                f"{bad} must be one recording here (use .corpus() for several); "
                f"got {_type_name(reference if bad == 'reference' else hypothesis)}"
            )
        ref, hyp = _pair(reference, hypothesis)
        return self._score(ref, hyp)

    def corpus(self, pairs: Iterable[tuple[Side, Side]]) -> CorpusScore:
        """Micro-averaged figures over ``(reference, hypothesis)`` pairs: their counts summed."""
        if isinstance(pairs, (str, bytes, os.PathLike)) or not isinstance(pairs, Iterable):
            raise TypeError(f"pairs must be an iterable of (reference, hypothesis) pairs, got {_type_name(pairs)}")
        scores = []
        for k, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"pairs[{k}] must be a (reference, hypothesis) pair, got {_type_name(pair)}")
            scores.append(self._score(*_pair(pair[0], pair[1], f"[{k}]")))
        return CorpusScore.of(scores)

    def _score(self, reference: Reference, hypothesis: Hypothesis) -> RecordingScore:
        return score_recording(reference, hypothesis, self._options)


def score(reference: Texts, hypothesis: Texts, **options: Any) -> RecordingScore | CorpusScore:
    """Score one pair (a :class:`RecordingScore`) or two equally long lists (a :class:`CorpusScore`).

    ``options`` are :class:`~toolkit.scorer.options.ScoreOptions` fields (``policy``, ``names``, ``collar``, ...).
    """
    scorer = Scorer(**options)
    pairs = _pairs(reference, hypothesis)
    if _is_single(reference):
        return scorer._score(*pairs[0])
    return CorpusScore.of(scorer._score(r, h) for r, h in pairs)


def wer(reference: Texts, hypothesis: Texts) -> float:
    """Word error rate (S + D + I) / N under the default pt-BR normalization; lists are micro-averaged."""
    result = score(reference, hypothesis)
    if result.counts.wer is None:
        raise ValueError("reference has no words to score against (WER is undefined)")
    return result.counts.wer


def explain_run(run: str | os.PathLike, arm: str, against: str | None = None, **options: Any) -> Explanation:
    """Why ``arm`` changed WER against ``against`` (the run's baseline by default) in the run folder ``run``:
    every changed word with its cause, adding up to ΔWER exactly (what ``ablate explain`` prints).

    ``options`` are scoring options as for :func:`score`; a run is scored here, nothing is written.
    """
    from toolkit.evaluate import score_run
    from toolkit.explain import explain
    from toolkit.runs.folder import RunFolder

    return explain(score_run(RunFolder(Path(run)), make_options(**options)), arm, against)
