"""Seam reconciliation for overlapping windows.

Neighbouring windows share an interval [a, b] = [next.start, prev.end]. Only words whose
times fall inside it are ever reconciled; everything else is kept as decoded. Inside it the
two word sequences are aligned on text *and* onset time, the cut is placed where the two
sides agree best, the left window supplies the words before the cut and the right window
those after it. Duplicates are removed only by time-aligned correspondence, never by text,
so a genuine repetition ("não, não, não") survives. Every seam is reported.

Rules, in the order they apply to one seam:

* A window cannot hear outside itself, so a word's times are clamped to its own window
  before deciding where it lies (recognizer jitter at an edge). A word is *free* (may be
  dropped) when its clamped span lies in [a, b]; a word crossing a (left window) or b
  (right window) is *fixed*: it is interior to its window and is always kept, together
  with every word further outside.
* Timed words from [a - context, b + context] are aligned by a small dynamic programme:
  two words pair when their normalized texts are equal (casefold, punctuation stripped)
  and their onsets differ by at most ``max_onset_shift``; pairs within
  ``onset_tolerance`` *agree*, the others are *timing* disagreements (flagged). The
  alignment maximises agreeing pairs, then timing pairs, then closeness of onsets. The
  library aligners compare text only, which would pair the wrong copies of a repetition.
* The cut is the pair nearest the middle of [a, b] inside the longest run of consecutive
  agreeing pairs (runs of timing pairs only when nothing agrees, flagged). The left
  window's words before the pair and the right window's words after it are kept; of the
  pair, the fixed copy is kept, otherwise the copy farther from its own window's edge
  (ties keep the left copy). The cut's time is the kept copy's onset; a kept copy whose onset
  lies outside [a, b] (a word crossing the interval's edge) puts the cut at that edge, and the
  report names the copy (``straddling``): a cut is never recorded outside [a, b]. No valid
  pair at all: when one side has no words in [a, b] the other side's are kept (flagged);
  otherwise the cut falls in the longest pause both sides leave inside [a, b] (the middle
  when there is none), each free word going to the side of its midpoint (flagged
  ``no_agreement``).
* A free word overlapping a fixed word of the other side by more than
  ``fragment_overlap`` of its own duration is the edge-cut copy of a word the other
  window heard whole, and is dropped. Every dropped word carries its reason
  (``DroppedWord``); one-sided words that no kept word of the other window covers are
  flagged ``disagreement`` (a possible omission).
* Untimed words are never given times: those in the shared interval (by their timed
  neighbours' order) are kept in place with their own window's words and flagged.
* **Times from the interior copy** (``interior_times``): Whisper's word times degrade near a
  window's edge (the last words before a window's end are squeezed early, the first word
  after its start is pulled early). So once the text is decided, each kept word that both
  windows heard (a pair of the alignment) takes its start and end from the copy farther from
  its own window's seam-side edge: a left-window copy is measured from the window's end to
  the word's end, a right-window copy from the window's start to the word's start (the
  copies' clamped spans; a tie keeps the kept copy's own times; a kept *fixed* word crosses
  out of the shared interval and is never retimed). The text, confidence and
  window of the kept word stay; every retimed word is listed in the report (``retimed``).
  A retime that would put a word's onset before the kept word preceding it, or after the one
  following it (a word only one window heard can sit between the two copies), is not applied:
  the word keeps its own times, so the merged words stay in time order.
  Within ``edge_zone`` of a window's seam-side edge two copies may pair with onsets up to
  ``edge_zone`` apart (instead of ``max_onset_shift``), since that is where times slip.
* A kept word only one window heard (no pair) that lies within ``edge_zone`` of its
  window's seam-side edge keeps its times and is flagged ``edge_word``.
* A word dropped because the other window kept a *different* word over most of its time (two
  readings of the same audio, reason ``overlapped``) is noted ``different_reading``.
* Review priority: ``disagreement``, ``no_agreement``, ``empty_side`` and ``untimed`` flags
  mark the seam for review (``review``); ``timing``, ``edge_word`` and ``different_reading``
  are notes, reported but not counted as flagged, because their measured precision was low
  (docs/benchmarks.md, seam flag precision; docs/seams.md for ``different_reading``'s recall and
  precision on long-form read speech).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from toolkit.core.errors import ToolkitError
from toolkit.core.transcripts import Word
from toolkit.core.wordstream import overlap_too_much
from toolkit.pipeline.seam_alignment import _align, _covered, _Entry, _pause, _runs
from toolkit.pipeline.seam_records import (
    _AGREE,
    _TIMING,
    LEFT,
    RIGHT,
    DroppedWord,
    Reconciled,
    RetimedWord,
    SeamConfig,
    SeamFlag,
    SeamReport,
    StraddlingWord,
    WindowResult,
)
from toolkit.scorer.normalize.same_word import word_key

_TIMESTAMP_S = 0.02  # Whisper's timestamp step: a word ending this close to its window's end ran into it


def reconcile(windows: Sequence[WindowResult], config: SeamConfig = SeamConfig()) -> Reconciled:
    """Merge ordered overlapping windows into one word list, reconciling each shared interval."""
    _check_windows(windows)
    drops: list[set[int]] = [set() for _ in windows]
    times: list[dict[int, Word]] = [{} for _ in windows]
    reports = []
    for k in range(len(windows) - 1):
        seam = _Seam(k, windows[k], windows[k + 1], config)
        report = seam.decide()
        drops[k] |= seam.dropped_left
        drops[k + 1] |= seam.dropped_right
        times[k].update(seam.retimed_left)
        times[k + 1].update(seam.retimed_right)
        reports.append(report)
    kept = [
        (k, w, times[k].get(p, w))
        for k, window in enumerate(windows)
        for p, w in enumerate(window.words)
        if p not in drops[k]
    ]
    return Reconciled(_settle(_in_order(kept, reports), windows, reports), reports)


def _in_order(kept: list[tuple[int, Word, Word]], reports: list[SeamReport]) -> list[tuple[int, Word]]:
    """The merged words with their windows, undoing each retime that would put a word's onset before
    the kept timed word preceding it or after the own onset of the one following it (a word only one
    window heard can sit between two copies), or over either of them by more than half the shorter;
    an undone retime leaves its seam's ``retimed`` list."""
    words: list[tuple[int, Word]] = []
    previous: Word | None = None
    for n, (k, own, word) in enumerate(kept):
        if word is not own:
            following = next((o for _, o, _ in kept[n + 1 :] if o.timed), None)
            early = previous is not None and (
                word.start < previous.start  # type: ignore[operator]
                or overlap_too_much(previous, word)
            )
            late = following is not None and (
                word.start > following.start  # type: ignore[operator]
                or overlap_too_much(word, following)
            )
            if early or late:
                word = own
                for report in reports:
                    report.retimed = [r for r in report.retimed if r.word is not own]
        if word.timed and (previous is None or word.start >= previous.start):  # type: ignore[operator]
            previous = word
        words.append((k, word))
    return words


def _settle(kept: list[tuple[int, Word]], windows: Sequence[WindowResult], reports: list[SeamReport]) -> list[Word]:
    """The last rule of every seam, so the merged words are a valid stream (toolkit.core.wordstream) whatever
    was decided: of two kept words where the later starts before the earlier or covers more than half
    of the shorter one (two copies, or two readings, of one stretch: a word longer than the shared
    interval heard by both windows, say), one is dropped: a free word before a fixed one, then the
    shorter, then the right window's. Both lie in the shared interval of their windows (a window hears
    nothing outside itself). The drop is reported with its seam, and flagged when the texts differ."""
    final: list[tuple[int, Word]] = []
    for k, word in kept:
        keep = True
        while keep and word.timed and (clash := _clash(final, k, word)) is not None:
            other_k, other = final[clash]
            keep = not _keeps_first(windows, other_k, other, k, word)
            if keep:
                del final[clash]
            _record_settled(
                reports, (other_k, other) if not keep else (k, word), (k, word) if not keep else (other_k, other)
            )
        if keep:
            final.append((k, word))
    return [word for _, word in final]


def _clash(final: list[tuple[int, Word]], k: int, word: Word) -> int | None:
    """Index in ``final`` of a kept word of window ``k`` or ``k - 1`` that ``word`` contradicts, or None
    (words of earlier windows end before window ``k`` starts)."""
    for index in range(len(final) - 1, -1, -1):
        other_k, other = final[index]
        if other_k < k - 1:
            return None
        if other.timed and (word.start < other.start or overlap_too_much(other, word)):  # type: ignore[operator]
            return index
    return None


def _keeps_first(windows: Sequence[WindowResult], first_k: int, first: Word, second_k: int, second: Word) -> bool:
    """Of two contradicting words, whether the first (earlier in the merge) is the one kept."""

    def fixed(k: int, word: Word, other_k: int) -> bool:  # reaches outside the shared interval of the two windows
        if k == other_k:
            return False
        return word.start < windows[other_k].start if k < other_k else word.end > windows[other_k].end  # type: ignore[operator]

    rank = [
        (fixed(k, w, o), w.end - w.start)  # type: ignore[operator]
        for k, w, o in ((first_k, first, second_k), (second_k, second, first_k))
    ]
    return rank[0] >= rank[1]


def _record_settled(reports: list[SeamReport], kept: tuple[int, Word], dropped: tuple[int, Word]) -> None:
    """Report a word the last rule dropped, in the seam of its window and the kept word's."""
    (kept_k, kept_word), (drop_k, word) = kept, dropped
    report = reports[min(kept_k, drop_k, len(reports) - 1)]
    side = LEFT if drop_k == report.index else RIGHT
    same = word_key(word.text) == word_key(kept_word.text)
    report.dropped.append(DroppedWord(side, word, "duplicate" if same else "overlapped"))
    report.kept_left = [w for w in report.kept_left if w is not word]
    report.kept_right = [w for w in report.kept_right if w is not word]
    if report.straddling is not None and report.straddling.word is word:
        report.straddling = None  # no longer kept: the drop says what happened to it
    if not same:
        report.flags.append(
            SeamFlag(
                "disagreement",
                f"'{word.text}' dropped: its times contradict the kept '{kept_word.text}' of the other window",
                **{side: (word,)},
            )
        )


def _check_windows(windows: Sequence[WindowResult]) -> None:
    for window in windows:
        if not window.end > window.start:
            raise ToolkitError(f"window {window.window_id}: end {window.end} is not after start {window.start}")
    for prev, nxt in zip(windows, windows[1:]):
        if not prev.start <= nxt.start <= prev.end <= nxt.end:
            raise ToolkitError(
                f"windows {prev.window_id} [{prev.start}, {prev.end}] and {nxt.window_id} "
                f"[{nxt.start}, {nxt.end}] are not ordered, overlapping neighbours"
            )
    for first, third in zip(windows, windows[2:]):
        if third.start < first.end:
            raise ToolkitError(
                f"windows {first.window_id} and {third.window_id} overlap: at most two windows may cover any instant"
            )


class _Seam:
    """The decision for one pair of neighbouring windows."""

    def __init__(self, index: int, left: WindowResult, right: WindowResult, config: SeamConfig) -> None:
        self.left, self.right, self.config = left, right, config
        self.a, self.b = right.start, left.end
        self.lz = self._zone(
            left, fixed_if=lambda s, e: s < self.a, near=lambda s, e: e > self.a - config.context or s >= self.a
        )
        self.rz = self._zone(
            right, fixed_if=lambda s, e: e > self.b, near=lambda s, e: s < self.b + config.context or e <= self.b
        )
        self.left_untimed = self._untimed_in_seam(left, self.lz, seam_at_end=True)
        self.right_untimed = self._untimed_in_seam(right, self.rz, seam_at_end=False)
        self.last_fixed_left = max((n for n, e in enumerate(self.lz) if e.fixed), default=-1)
        self.first_fixed_right = min((n for n, e in enumerate(self.rz) if e.fixed), default=len(self.rz))
        self.report = SeamReport(index, left.window_id, right.window_id, self.a, self.b, (self.a + self.b) / 2)
        self.kept: dict[str, set[int]] = {LEFT: {e.pos for e in self.lz}, RIGHT: {e.pos for e in self.rz}}
        self.dropped_left: set[int] = set()
        self.dropped_right: set[int] = set()
        self.retimed_left: dict[int, Word] = {}
        self.retimed_right: dict[int, Word] = {}

    @staticmethod
    def _zone(
        window: WindowResult, fixed_if: Callable[[float, float], bool], near: Callable[[float, float], bool]
    ) -> list[_Entry]:
        """Timed words whose window-clamped span is near the seam, marked fixed when they cross its edge."""
        entries = []
        for pos, word in enumerate(window.words):
            if word.start is None or word.end is None:
                continue
            start = min(max(word.start, window.start), window.end)
            end = min(max(word.end, window.start), window.end)
            if near(start, end):
                entries.append(_Entry(pos, word, start, end, fixed_if(start, end), word_key(word.text)))
        return entries

    @staticmethod
    def _untimed_in_seam(window: WindowResult, zone: list[_Entry], seam_at_end: bool) -> list[int]:
        """Untimed words whose nearest timed neighbour on the seam's side is free, or absent."""
        free = {e.pos for e in zone if not e.fixed}
        positions = []
        order = range(len(window.words) - 1, -1, -1) if seam_at_end else range(len(window.words))
        neighbour_free = True
        for pos in order:
            word = window.words[pos]
            if word.timed:
                neighbour_free = pos in free
            elif neighbour_free:
                positions.append(pos)
        return sorted(positions)

    def decide(self) -> SeamReport:
        pairs = _align(self.lz, self.rz, self.config, self._edge_reach)
        cut = self._choose_cut(pairs)
        if cut is None:
            self._cut_without_pairs()
        else:
            self._cut_at_pair(pairs, cut)
        self._drop_fragments()
        self._flag_timing(pairs)
        if self.config.interior_times:
            self._retime_from_interior(pairs)
        self._flag_edge_words(pairs)
        self._finish()
        return self.report

    def _edge_reach(self, left: _Entry, right: _Entry) -> float:
        """Largest onset shift at which two copies may pair: wider when either lies in its edge zone."""
        zone = self.config.edge_zone
        if left.inset(LEFT, self.left) < zone or right.inset(RIGHT, self.right) < zone:
            return max(self.config.max_onset_shift, zone)
        return self.config.max_onset_shift

    def _retime_from_interior(self, pairs: list[tuple[int, int, str]]) -> None:
        """A kept word both windows heard takes the times of the copy farther from its window's edge."""
        for i, j, _ in pairs:
            left, right = self.lz[i], self.rz[j]
            kept_left, kept_right = left.pos in self.kept[LEFT], right.pos in self.kept[RIGHT]
            if kept_left == kept_right:
                continue
            kept, side, other, other_window = (
                (left, LEFT, right, self.right) if kept_left else (right, RIGHT, left, self.left)
            )
            own_window = self.left if side == LEFT else self.right
            if kept.fixed or other.inset(RIGHT if side == LEFT else LEFT, other_window) <= kept.inset(side, own_window):
                continue  # a fixed word reaches outside the shared interval: never touched
            retimed = Word(kept.word.text, other.word.start, other.word.end, kept.word.confidence, kept.word.segment_id)
            (self.retimed_left if side == LEFT else self.retimed_right)[kept.pos] = retimed
            self.report.retimed.append(RetimedWord(side, kept.word, *other.word.span))

    def _flag_edge_words(self, pairs: list[tuple[int, int, str]]) -> None:
        """Flag kept free words only one window heard that lie within the edge zone of their window."""
        paired = {LEFT: {self.lz[i].pos for i, _, _ in pairs}, RIGHT: {self.rz[j].pos for _, j, _ in pairs}}
        found: dict[str, list[Word]] = {LEFT: [], RIGHT: []}
        for side, entries, window, others in (
            (LEFT, self.lz, self.left, self.rz),
            (RIGHT, self.rz, self.right, self.lz),
        ):
            if all(o.fixed for o in others):
                continue  # the other window heard nothing here: flagged empty_side instead
            for entry in entries:
                if (
                    not entry.fixed
                    and entry.pos in self.kept[side]
                    and entry.pos not in paired[side]
                    and entry.inset(side, window) < self.config.edge_zone
                ):
                    found[side].append(entry.word)
        if found[LEFT] or found[RIGHT]:
            count = len(found[LEFT]) + len(found[RIGHT])
            self.report.flags.append(
                SeamFlag(
                    "edge_word",
                    f"{count} word(s) heard by one window only, within {self.config.edge_zone} s of "
                    f"its edge: times kept as decoded",
                    tuple(found[LEFT]),
                    tuple(found[RIGHT]),
                )
            )

    def _valid(self, i: int, j: int) -> bool:
        """A cut at pair (i, j) must keep every fixed word: fixed left words before it, fixed right after."""
        both_fixed = self.lz[i].fixed and self.rz[j].fixed
        return i >= self.last_fixed_left and j <= self.first_fixed_right and not both_fixed

    def _choose_cut(self, pairs: list[tuple[int, int, str]]) -> tuple[int, int] | None:
        """Pair nearest the middle inside the longest run of agreeing pairs (else of any pairs)."""
        middle = (self.a + self.b) / 2

        def distance(pair: tuple[int, int, str]) -> float:
            return abs((self.lz[pair[0]].word.span[0] + self.rz[pair[1]].word.span[0]) / 2 - middle)

        for kinds in ({_AGREE}, {_AGREE, _TIMING}):
            best: tuple[int, float] | None = None
            cut: tuple[int, int] | None = None
            for run in _runs([p for p in pairs if p[2] in kinds]):
                valid = [p for p in run if self._valid(p[0], p[1])]
                if not valid:
                    continue
                pick = min(valid, key=distance)
                rank = (len(run), -distance(pick))
                if best is None or rank > best:
                    best, cut = rank, (pick[0], pick[1])
            if cut is not None:
                if kinds != {_AGREE}:
                    self.report.flags.append(
                        SeamFlag("no_agreement", "no word pair agrees in time; cut on a timing-disagreement pair")
                    )
                return cut
        return None

    def _cut_at_pair(self, pairs: list[tuple[int, int, str]], cut: tuple[int, int]) -> None:
        ci, cj = cut
        left, right = self.lz[ci], self.rz[cj]
        if left.fixed or (not right.fixed and self.b - left.end >= right.start - self.a):
            keep_side = LEFT
        else:
            keep_side = RIGHT
        kept = left if keep_side == LEFT else right
        onset = kept.word.span[0]
        self.report.cut_time = min(max(onset, self.a), self.b)
        if self.report.cut_time != onset:  # nothing outside [a, b] is reconciled: the cut is at the edge crossed
            self.report.straddling = StraddlingWord(keep_side, kept.word)
        drop_left = {i for i, e in enumerate(self.lz) if not e.fixed and (i > ci or (i == ci and keep_side == RIGHT))}
        drop_right = {j for j, e in enumerate(self.rz) if not e.fixed and (j < cj or (j == cj and keep_side == LEFT))}
        self._apply(drop_left, drop_right, {i for i, _, _ in pairs}, {j for _, j, _ in pairs})

    def _apply(
        self, drop_left: set[int], drop_right: set[int], matched_left: set[int], matched_right: set[int]
    ) -> None:
        """Drop the given zone entries, each with its reason; flag words that nothing else covers."""
        kept_left = [e for i, e in enumerate(self.lz) if i not in drop_left]
        kept_right = [e for j, e in enumerate(self.rz) if j not in drop_right]
        for i in sorted(drop_left):
            reason = "duplicate" if i in matched_left else self._cover(self.lz[i], kept_right, "after_cut")
            self._drop(LEFT, self.lz[i], reason)
        for j in sorted(drop_right):
            reason = "duplicate" if j in matched_right else self._cover(self.rz[j], kept_left, "before_cut")
            self._drop(RIGHT, self.rz[j], reason)
        lost = [d for d in self.report.dropped if d.reason in ("after_cut", "before_cut")]
        self._flag_dropped("disagreement", lost, "heard by one window only were dropped at the cut")
        readings = [d for d in self.report.dropped if self._read_differently(d, kept_left, kept_right)]
        self._flag_dropped(
            "different_reading", readings, "dropped under a different word the other window heard at that time"
        )

    def _flag_dropped(self, kind: str, dropped: list[DroppedWord], what: str) -> None:
        """One ``kind`` flag for ``dropped`` words (none when there are none), each window's words apart."""
        if dropped:
            left = tuple(d.word for d in dropped if d.side == LEFT)
            right = tuple(d.word for d in dropped if d.side == RIGHT)
            self.report.flags.append(SeamFlag(kind, f"{len(dropped)} word(s) {what}", left, right))

    def _read_differently(self, dropped: DroppedWord, kept_left: list[_Entry], kept_right: list[_Entry]) -> bool:
        """Whether a word dropped as ``overlapped`` lies under kept words of the other window none of which is it
        (a word running into its own window's edge is a cut copy, not another reading)."""
        if dropped.reason != "overlapped":
            return False
        if not dropped.word.timed:
            return False
        start, end = dropped.word.span
        cut = end >= self.b - _TIMESTAMP_S if dropped.side == LEFT else start <= self.a + _TIMESTAMP_S
        if cut:
            return False
        other = kept_right if dropped.side == LEFT else kept_left
        covering = [o for o in other if _covered(dropped.word, o.word) > self.config.fragment_overlap]
        return all(word_key(o.word.text) != word_key(dropped.word.text) for o in covering)

    def _cover(self, entry: _Entry, other_kept: list[_Entry], default: str) -> str:
        """Why an unmatched word goes: the other side kept a word over most of its time, or only the cut."""
        covering = [o for o in other_kept if _covered(entry.word, o.word) > self.config.fragment_overlap]
        if any(o.fixed for o in covering):
            return "edge_fragment"
        return "overlapped" if covering else default

    def _is_fragment(self, entry: _Entry, others: list[_Entry]) -> bool:
        """Whether a fixed word of the other side covers most of this word (the other window heard it whole)."""
        return any(o.fixed and _covered(entry.word, o.word) > self.config.fragment_overlap for o in others)

    def _cut_without_pairs(self) -> None:
        left_free = [e for e in self.lz if not e.fixed]
        right_free = [e for e in self.rz if not e.fixed]
        if not left_free or not right_free:
            if left_free or right_free:
                self.report.cut_time = self.b if left_free else self.a
            return
        cut = _pause(self.lz + self.rz, self.a, self.b)
        self.report.cut_time = cut
        self._apply(
            {i for i, e in enumerate(self.lz) if not e.fixed and e.mid >= cut},
            {j for j, e in enumerate(self.rz) if not e.fixed and e.mid < cut},
            set(),
            set(),
        )
        self.report.flags.append(
            SeamFlag(
                "no_agreement",
                f"no word pair matches across the seam; cut at {cut:.3f} s (longest common pause)",
                tuple(e.word for e in left_free),
                tuple(e.word for e in right_free),
            )
        )

    def _drop_fragments(self) -> None:
        for side, entries, others in ((LEFT, self.lz, self.rz), (RIGHT, self.rz, self.lz)):
            for entry in entries:
                if not entry.fixed and entry.pos in self.kept[side] and self._is_fragment(entry, others):
                    self._drop(side, entry, "edge_fragment")

    def _flag_timing(self, pairs: list[tuple[int, int, str]]) -> None:
        for i, j, kind in pairs:
            if kind != _TIMING:
                continue
            left, right = self.lz[i].word, self.rz[j].word
            kept = [side for side, entry in ((LEFT, self.lz[i]), (RIGHT, self.rz[j])) if entry.pos in self.kept[side]]
            self.report.flags.append(
                SeamFlag(
                    "timing",
                    f"same word, onsets differ by {abs(left.span[0] - right.span[0]):.3f} s "
                    f"(> {self.config.onset_tolerance} s); kept {' and '.join(kept) or 'neither'}",
                    (left,),
                    (right,),
                )
            )

    def _finish(self) -> None:
        report = self.report
        report.kept_left = _kept_in_seam(self.left, self.lz, self.kept[LEFT], self.left_untimed)
        report.kept_right = _kept_in_seam(self.right, self.rz, self.kept[RIGHT], self.right_untimed)
        heard_left = any(not e.fixed for e in self.lz) or self.left_untimed
        heard_right = any(not e.fixed for e in self.rz) or self.right_untimed
        for side, heard, other_kept in ((LEFT, heard_left, report.kept_right), (RIGHT, heard_right, report.kept_left)):
            if not heard and other_kept:
                report.empty_side = side
                other = RIGHT if side == LEFT else LEFT
                report.flags.append(
                    SeamFlag(
                        "empty_side",
                        f"the {side} window has no words in the shared interval where the {other} "
                        f"window heard {len(other_kept)}; kept the {other} window's words",
                        **{other: tuple(other_kept)},
                    )
                )
        for side, window, positions in ((LEFT, self.left, self.left_untimed), (RIGHT, self.right, self.right_untimed)):
            if positions:
                words = tuple(window.words[p] for p in positions)
                report.flags.append(
                    SeamFlag(
                        "untimed",
                        f"{len(words)} untimed word(s) of the {side} window kept in order, not reconciled",
                        **{side: words},
                    )
                )

    def _drop(self, side: str, entry: _Entry, reason: str) -> None:
        if self.report.straddling is not None and self.report.straddling.word is entry.word:
            self.report.straddling = None  # no longer kept: the drop says what happened to it
        self.kept[side].discard(entry.pos)
        (self.dropped_left if side == LEFT else self.dropped_right).add(entry.pos)
        self.report.dropped.append(DroppedWord(side, entry.word, reason))


def _kept_in_seam(window: WindowResult, zone: list[_Entry], kept: set[int], untimed: list[int]) -> list[Word]:
    """Kept words of one window inside the shared interval, untimed ones included, in the window's order."""
    positions = {e.pos for e in zone if not e.fixed and e.pos in kept} | set(untimed)
    return [window.words[p] for p in sorted(positions)]
