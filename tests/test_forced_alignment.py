"""Reference word times derived by forced alignment with the bundled Whisper base, on real speech whose utterance
onsets are known exactly: a minute of the shared clips joined by pauses (tests/shared_clips.py, the onset tests'
recording). The aligned words differ by CPU instruction set, so the tests hold the aligner to invariants and to a
bound well above the benchmark's figures (benchmarks/bench_forced_alignment.py), not to exact times."""

from __future__ import annotations

import math

import numpy as np
import pytest
from shared_clips import RECORDING, build_recording
from shared_data import PTBR_DEV

from toolkit.asr.forced_alignment import Alignment, ForcedAligner, reference_words
from toolkit.asr.models import resolve_model
from toolkit.audio.io import load_audio
from toolkit.core.transcripts import Reference, Utterance, Word
from toolkit.formats import read_reference

FOREIGN = "o rato roeu a roupa do rei de roma e a rainha com raiva resolveu remendar".split()


@pytest.fixture(scope="module")
def minute(tmp_path_factory: pytest.TempPathFactory) -> tuple[np.ndarray, Reference, ForcedAligner]:
    if not (PTBR_DEV / "commonvoice-pt").is_dir():
        pytest.skip(f"shared clips absent: {PTBR_DEV}")
    folder = tmp_path_factory.mktemp("aligned")
    build_recording(folder, 1.0, seed=13)
    reference = read_reference(folder / "refs" / f"{RECORDING}.TextGrid")
    samples = load_audio(folder / "audio" / f"{RECORDING}.wav").samples
    return samples, reference, ForcedAligner(resolve_model("whisper-base"))


def _times(alignment: Alignment) -> np.ndarray:
    return np.array([(w.start, w.end) for w in alignment.words], dtype=float).reshape(-1, 2)


def _onset_errors(alignment: Alignment, reference: Reference) -> list[float]:
    """Each utterance's first word's derived start less its known onset (NaN where not placed)."""
    errors, first = [], 0
    for utterance in reference.utterances:
        errors.append(alignment.words[first].start - utterance.start)
        first += len(utterance.text.split())
    return errors


@pytest.mark.slow
@pytest.mark.needs_model
def test_derived_times_are_ordered_near_the_known_onsets_and_repeat(minute) -> None:
    """Placed words lie in the audio in spoken order; most are placed; first words start near the known onsets;
    a second alignment gives the same times."""
    samples, reference, aligner = minute
    words = reference_words(reference)
    alignment = aligner.align(samples, words)
    times = _times(alignment)
    placed = times[~np.isnan(times[:, 0])]
    assert [w.text for w in alignment.words] == words
    assert np.array_equal(np.isnan(times[:, 0]), np.isnan(times[:, 1]))
    assert alignment.windows >= 2, "a minute needs more than one 30 s window"
    assert (placed[:, 0] < placed[:, 1]).all() and placed.min() >= 0 and placed.max() <= len(samples) / 16000
    assert (np.diff(placed.ravel()) >= 0).all(), "placed words overlap or go back in time"
    assert alignment.placed_fraction >= 0.8
    errors = np.abs([e for e in _onset_errors(alignment, reference) if not math.isnan(e)])
    assert len(errors) >= len(reference.utterances) // 2 and np.median(errors) <= 1.0, errors
    assert np.array_equal(times, _times(aligner.align(samples, words)), equal_nan=True)


@pytest.mark.slow
@pytest.mark.needs_model
def test_words_the_audio_does_not_hold_stay_untimed(minute) -> None:
    """A sentence inserted into the reference after its third utterance and one appended at its end, neither
    spoken: almost none of their words get times, and the utterances after the insertion are still placed."""
    samples, reference, aligner = minute
    spoken = reference_words(reference)
    head = sum(len(u.text.split()) for u in reference.utterances[:3])
    words = spoken[:head] + FOREIGN + spoken[head:] + FOREIGN
    alignment = aligner.align(samples, words)
    inserted = alignment.words[head : head + len(FOREIGN)]
    appended = alignment.words[-len(FOREIGN) :]
    assert sum(w.placed for w in inserted) <= 3, [(w.text, w.start) for w in inserted]
    assert sum(w.placed for w in appended) <= 3, [(w.text, w.start) for w in appended]
    after = alignment.words[head + len(FOREIGN) : -len(FOREIGN)]
    assert sum(w.placed for w in after) >= 0.8 * len(after)


def test_reference_words_come_from_the_word_tier_else_the_turns() -> None:
    """A reference's words in order: its word list when it has one, else its turns split on white space."""
    turns = [Utterance(0.0, math.inf, "Um  dois\ttrês"), Utterance(0.0, math.inf, "quatro")]
    assert reference_words(Reference("r", turns)) == ["Um", "dois", "três", "quatro"]
    assert reference_words(Reference("r", turns, [Word("um", 0.1, 0.2)])) == ["um"]


@pytest.mark.slow
@pytest.mark.needs_model
def test_a_shared_chapter_with_list_labels_aligns_into_a_readable_textgrid(tmp_path) -> None:
    """A real chapter of the audiobook, its written text as plain turns: a label's "-" is merged into the next
    word by faster-whisper and stays untimed, so no two words share a time and the TextGrid reads back."""
    from shared_data import PTBR_LONGFORM

    from toolkit.asr.derived_times import derive_reference_times
    from toolkit.formats.plaintext import read_plaintext_reference
    from toolkit.formats.textgrid import write_textgrid

    chapter = "Titulo 1 Art 01 ao 04"
    if not (PTBR_LONGFORM / "audio" / f"{chapter}.ogg").is_file():
        pytest.skip(f"the shared long-form chapters are not at {PTBR_LONGFORM}")
    reference = read_plaintext_reference(PTBR_LONGFORM / "refs" / f"{chapter}.txt", "t1")
    derived = derive_reference_times(reference, PTBR_LONGFORM / "audio" / f"{chapter}.ogg")
    said = [w for u in reference.utterances for w in u.text.split() if w.strip() != "-"]
    timed = derived.words
    assert all(w.text.strip() != "-" for w in timed) and len(timed) > 0.8 * len(said)
    assert all(a.end <= b.start for a, b in zip(timed, timed[1:]))
    back = read_reference(write_textgrid(derived, tmp_path / "t1.TextGrid", 165.0))
    assert back.derived_times == derived.derived_times and len(back.words) == len(timed)
