"""A corpus in another form (a Kaldi data folder, lhotse manifests, a Hugging Face audiofolder) freezes to the
manifest, references and scores the audio/ + refs/ layout gives, built here from shared Common Voice clips."""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import soxr
from shared_data import PTBR_DEV

from toolkit.api import score
from toolkit.audio.io import load_audio
from toolkit.cli import main
from toolkit.core.transcripts import Reference, Utterance
from toolkit.corpus.freeze import freeze
from toolkit.corpus.manifest import Manifest, load
from toolkit.formats import write_stm

COMMON_VOICE = PTBR_DEV / "commonvoice-pt"
needs_clips = pytest.mark.skipif(
    not (COMMON_VOICE / "validated.tsv").is_file(), reason=f"the shared Common Voice clips are not at {COMMON_VOICE}"
)
RATE = 16000


@dataclass(frozen=True)
class Clip:
    """A shared Common Voice clip: its file, its prompt and its speaker."""

    path: Path
    text: str
    speaker: str

    @property
    def id(self) -> str:
        return self.path.stem


@dataclass(frozen=True)
class Segment:
    """A clip's place in a joined recording, at times with two decimals (as a Kaldi segments file has them)."""

    utterance: str
    start: float
    end: float
    clip: Clip


def _clips(count: int) -> list[Clip]:
    """The first ``count`` clips of the shared Common Voice sample."""
    with open(COMMON_VOICE / "validated.tsv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[:count]
    return [Clip(COMMON_VOICE / "clips" / row["path"], row["sentence"], row["client_id"][:8]) for row in rows]


def _run(*args: str | Path) -> int:
    return main(["manifest", "freeze", *map(str, args)])


def _scores(manifest: Manifest) -> tuple[object, float]:
    """Every recording's reference scored against a fixed hypothesis (its first word dropped, 'sim' added)."""
    references = [entry.load_reference() for entry in manifest.recordings]
    hypotheses = [" ".join([*reference.text.split()[1:], "sim"]) for reference in references]
    result = score(references, hypotheses)
    return result.counts, result.wer


def _same_as(manifest: Manifest, expected: Manifest) -> None:
    """The same recordings and references (hashes, text, turns) and the same scores."""
    assert [(e.id, e.sha256, e.duration, e.speaker) for e in manifest.recordings] == [
        (e.id, e.sha256, e.duration, e.speaker) for e in expected.recordings
    ]
    assert [{r: f.sha256 for r, f in e.references.items()} for e in manifest.recordings] == [
        {r: f.sha256 for r, f in e.references.items()} for e in expected.recordings
    ]
    assert [e.load_reference().utterances for e in manifest.recordings] == [
        e.load_reference().utterances for e in expected.recordings
    ]
    assert _scores(manifest) == _scores(expected) and _scores(manifest)[1] > 0


@needs_clips
def test_kaldi_and_audiofolder_freeze_whole_clips_as_the_audio_folder_does(tmp_path: Path) -> None:
    clips = _clips(4)
    audio, refs = tmp_path / "audio", tmp_path / "refs"
    audio.mkdir()
    refs.mkdir()
    for clip in clips:
        shutil.copy(clip.path, audio / clip.path.name)
        (refs / f"{clip.id}.txt").write_text(clip.text + "\n", encoding="utf-8")
    splits = tmp_path / "splits.csv"
    splits.write_text("id,split,speaker\n" + "".join(f"{c.id},tuning,{c.speaker}\n" for c in clips), encoding="utf-8")
    expected = freeze(audio, refs, tmp_path / "manifest.json", splits_csv=splits)

    kaldi = tmp_path / "kaldi"
    kaldi.mkdir()
    (kaldi / "wav.scp").write_text("".join(f"{c.id} {audio / c.path.name}\n" for c in clips), encoding="utf-8")
    (kaldi / "text").write_text("".join(f"{c.id} {c.text}\n" for c in clips), encoding="utf-8")
    (kaldi / "utt2spk").write_text("".join(f"{c.id} {c.speaker}\n" for c in clips), encoding="utf-8")
    with open(audio / "metadata.csv", "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["file_name", "transcription", "client_id"])
        writer.writerows([c.path.name, c.text, c.speaker] for c in clips)

    # Beside the audio route's manifest, refs/ already holds these very references: the manifest is the same one.
    assert _run("--kaldi", kaldi, "--split", "tuning", "--out", tmp_path / "kaldi.json") == 0
    assert load(tmp_path / "kaldi.json").sha256 == expected.sha256
    assert _run("--audiofolder", audio, "--splits", splits, "--out", tmp_path / "audiofolder.json") == 0
    assert load(tmp_path / "audiofolder.json").sha256 == expected.sha256
    # In a folder of their own, the references are written there, with the same hashes and scores.
    assert _run("--kaldi", kaldi, "--split", "tuning", "--out", tmp_path / "k" / "manifest.json") == 0
    _same_as(load(tmp_path / "k" / "manifest.json"), expected)
    assert sorted(p.name for p in (tmp_path / "k" / "refs").iterdir()) == sorted(p.name for p in refs.iterdir())
    assert _run("--audiofolder", audio, "--split", "tuning", "--out", tmp_path / "a" / "manifest.json") == 0
    assert [e.speaker for e in load(tmp_path / "a" / "manifest.json").recordings] == [""] * 4  # not read
    assert _run("--kaldi", kaldi, "--split", "tuning", "--out", tmp_path / "k" / "manifest.json") == 0  # again: same


def _joined(tmp_path: Path, groups: dict[str, list[Clip]]) -> list[tuple[str, list[Segment]]]:
    """One 16 kHz recording per group in ``audio/``: its clips, each after 0.5 s of silence, at 10 ms steps."""
    (tmp_path / "audio").mkdir()
    recordings = []
    for rid, clips in groups.items():
        pieces, segments, cursor = [], [], 0
        for number, clip in enumerate(clips, 1):
            signal = load_audio(clip.path)
            samples = soxr.resample(signal.samples, signal.sample_rate, RATE)
            pause = RATE // 2 + (-(cursor + RATE // 2)) % (RATE // 100)
            pieces += [np.zeros(pause, dtype=np.float32), samples]
            start = (cursor + pause) / RATE
            cursor += pause + len(samples)
            segments.append(Segment(f"{rid}-{number}", round(start, 2), np.floor(cursor / RATE * 100) / 100, clip))
        sf.write(tmp_path / "audio" / f"{rid}.wav", np.concatenate([*pieces, np.zeros(RATE // 4)]), RATE)
        recordings.append((rid, segments))
    return recordings


@needs_clips
@pytest.mark.needs_model  # lhotse writes the manifests (the asr extra installs it)
def test_kaldi_segments_and_lhotse_supervisions_freeze_as_stm_references_do(tmp_path: Path) -> None:
    from lhotse import Recording, RecordingSet, SupervisionSegment, SupervisionSet

    clips = _clips(3)
    recordings = _joined(tmp_path, {"conversa": clips[:2], "leitura": clips[2:]})
    audio, refs = tmp_path / "audio", tmp_path / "refs"
    for rid, segments in recordings:
        utterances = [Utterance(s.start, s.end, s.clip.text, s.clip.speaker) for s in segments]
        write_stm([Reference(rid, utterances)], refs / f"{rid}.stm")
    solo = clips[2].speaker  # one speaker: the manifest's speaker; several: only the turns name them
    (tmp_path / "splits.csv").write_text(f"id,split,speaker\nconversa,tuning,\nleitura,tuning,{solo}\n")
    expected = freeze(audio, refs, tmp_path / "manifest.json", splits_csv=tmp_path / "splits.csv")
    assert [e.speaker for e in expected.recordings] == ["", solo]

    kaldi = tmp_path / "kaldi"
    kaldi.mkdir()
    turns = [segment for _, segments in recordings for segment in segments]
    (kaldi / "wav.scp").write_text("".join(f"{rid} {audio / rid}.wav\n" for rid, _ in recordings))
    (kaldi / "segments").write_text(
        "".join(f"{s.utterance} {s.utterance.rsplit('-', 1)[0]} {s.start:.2f} {s.end:.2f}\n" for s in turns)
    )
    (kaldi / "text").write_text("".join(f"{s.utterance} {s.clip.text}\n" for s in turns), encoding="utf-8")
    (kaldi / "utt2spk").write_text("".join(f"{s.utterance} {s.clip.speaker}\n" for s in turns))
    RecordingSet.from_recordings(
        Recording.from_file(audio / f"{rid}.wav", recording_id=rid) for rid, _ in recordings
    ).to_file(tmp_path / "recordings.jsonl.gz")
    SupervisionSet.from_segments(
        SupervisionSegment(
            s.utterance,
            s.utterance.rsplit("-", 1)[0],
            s.start,
            s.end - s.start,
            text=s.clip.text,
            speaker=s.clip.speaker,
        )
        for s in turns
    ).to_file(tmp_path / "supervisions.jsonl.gz")
    lhotse = ("--lhotse", tmp_path / "recordings.jsonl.gz", tmp_path / "supervisions.jsonl.gz")

    assert _run("--kaldi", kaldi, "--split", "tuning", "--out", tmp_path / "kaldi.json") == 0
    assert load(tmp_path / "kaldi.json").sha256 == expected.sha256
    assert _run(*lhotse, "--split", "tuning", "--out", tmp_path / "lhotse.json") == 0
    assert load(tmp_path / "lhotse.json").sha256 == expected.sha256
    for form, folder in (("--kaldi", "k"), ("--lhotse", "l")):
        args = (form, kaldi) if form == "--kaldi" else lhotse
        assert _run(*args, "--split", "tuning", "--out", tmp_path / folder / "manifest.json") == 0
        manifest = load(tmp_path / folder / "manifest.json")
        _same_as(manifest, expected)
        first = manifest.entry("conversa").load_reference().utterances[0]
        assert (first.start, first.speaker) == (turns[0].start, clips[0].speaker)


# ----- bad input: one line naming the file and line, and nothing written ----------------------------------------


def _kaldi(folder: Path) -> Path:
    """A Kaldi data folder of two 2 s recordings, 'a' with two segments and 'b' with one."""
    folder.mkdir()
    for rid in ("a", "b"):
        sf.write(folder / f"{rid}.wav", np.random.default_rng(7).uniform(-0.2, 0.2, 2 * RATE), RATE)
    (folder / "wav.scp").write_text(f"a {folder / 'a.wav'}\nb {folder / 'b.wav'}\n")
    (folder / "segments").write_text("a-1 a 0.10 0.90\na-2 a 1.00 1.95\nb-1 b 0 -1\n")
    (folder / "text").write_text("a-1 não sei\na-2 talvez\nb-1 <unk> sim\n", encoding="utf-8")
    (folder / "utt2spk").write_text("a-1 S1\na-2 S2\nb-1 S1\n")
    return folder


def _edit(name: str, old: str, new: str, *more: str) -> Callable[[Path], None]:
    """A change of one text in file ``name`` of a folder (and of the next name, old, new in ``more``)."""

    def edit(folder: Path) -> None:
        for file, before, after in [(name, old, new), *zip(more[::3], more[1::3], more[2::3])]:
            text = (folder / file).read_text(encoding="utf-8")
            assert before in text
            (folder / file).write_text(text.replace(before, after, 1), encoding="utf-8")

    return edit


def _freezes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str | Path) -> str:
    """The command's one error line; the output folder it would have made does not exist."""
    capsys.readouterr()
    assert _run(*args, "--split", "tuning", "--out", tmp_path / "out" / "manifest.json") == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ablate: error: ")
    assert not (tmp_path / "out").exists()
    return lines[0]


def test_a_small_kaldi_folder_freezes(tmp_path: Path) -> None:
    kaldi = _kaldi(tmp_path / "kaldi")
    assert _run("--kaldi", kaldi, "--split", "tuning", "--out", tmp_path / "out" / "manifest.json") == 0
    manifest = load(tmp_path / "out" / "manifest.json")
    a, b = manifest.recordings
    assert [(u.start, u.end, u.speaker) for u in a.load_reference().utterances] == [(0.1, 0.9, "S1"), (1.0, 1.95, "S2")]
    assert (a.speaker, b.speaker, b.load_reference().utterances[0].end) == ("", "S1", 2.0)  # -1: to the end
    assert b.load_reference().text == "<unk> sim"  # a word, not an STM label
    assert set(a.references) == {"stm"} and a.references["stm"].path == "refs/a.stm"


@pytest.mark.parametrize(
    "edit, problem",
    [
        (_edit("wav.scp", "b.wav", "gone.wav"), r"wav.scp: line 2: recording 'b': audio file .*gone.wav not found"),
        (_edit("segments", "1.00 1.95", "1.00 2.50"), r"segments: line 2: segment 1-2.5 s ends after recording 'a'"),
        (
            _edit("text", "b-1", "ghost hello\nb-1"),
            r"text: line 3: transcript for utterance 'ghost', which .* not list",
        ),
        (_edit("wav.scp", "b ", "a "), r"wav.scp: line 2: 'a' is also on line 1"),
        (_edit("segments", "a-2 a 1.00 1.95", "a-2 a 1.00"), r"segments: line 2: expected '<utterance> <record"),
        (_edit("segments", "0.10", "0,10"), r"segments: line 1: .*start time"),
        (_edit("segments", "b-1 b", "b-1 c"), r"segments: line 3: segment 'b-1' is of recording 'c', which .*wav.scp"),
        (
            _edit("segments", "1.00 1.95", "0.50 1.95", "utt2spk", "a-2 S2", "a-2 S1"),
            r"segments: line 2: .*overlaps speaker S1's segment on segm",
        ),
        (_edit("text", "a-2 talvez\n", ""), r"segments: line 2: utterance 'a-2' has no transcript in"),
        (_edit("utt2spk", "b-1 S1", "b-1 S1 S2"), r"utt2spk: line 3: expected '<utterance> <speaker>', got 3 fields"),
        (_edit("wav.scp", "b.wav", "b.wav -t wav - |"), r"wav.scp: line 2: recording 'b' is read through a command"),
        (_edit("text", "<unk> sim", ""), r"text: line 3: the reference has no words; .* --no-speech b"),
        (_edit("text", "talvez", ""), r"text: line 2: a turn of recording 'a' has no words .* while others have some"),
        (_edit("text", "não sei", "todas as\rmangueiras"), r"text: line 1: holds a line break \(U\+000D\) inside"),
        (_edit("segments", "a-2 a", "a-2 a\u2028"), r"segments: line 2: holds a line break \(U\+2028\)"),
        (_edit("wav.scp", "b ", "b/c "), r"wav.scp: line 2: .*'b/c'"),
    ],
)
def test_bad_kaldi_folders_name_the_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Callable[[Path], None], problem: str
) -> None:
    kaldi = _kaldi(tmp_path / "kaldi")
    edit(kaldi)
    line = _freezes_nothing(tmp_path, capsys, "--kaldi", kaldi)
    assert re.search(problem, line), line


def test_kaldi_without_segments_names_the_text_line_of_an_empty_transcript(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kaldi = _kaldi(tmp_path / "kaldi")
    (kaldi / "segments").unlink()
    (kaldi / "utt2spk").unlink()
    (kaldi / "text").write_text("b sim\na\n", encoding="utf-8")  # the order of wav.scp, reversed
    line = _freezes_nothing(tmp_path, capsys, "--kaldi", kaldi)
    assert re.search(r"kaldi/text: line 2: the reference has no words; .* --no-speech a", line), line
    (kaldi / "text").write_text("b sim\r\na\r\n", encoding="utf-8")  # Windows line ends are line ends
    line = _freezes_nothing(tmp_path, capsys, "--kaldi", kaldi)
    assert re.search(r"kaldi/text: line 2: the reference has no words", line), line


def _audiofolder(folder: Path) -> Path:
    """An audiofolder of two 2 s recordings in a subfolder, with an extra column."""
    (folder / "clips").mkdir(parents=True)
    for rid in ("a", "b"):
        sf.write(folder / "clips" / f"{rid}.wav", np.random.default_rng(3).uniform(-0.2, 0.2, 2 * RATE), RATE)
    (folder / "metadata.csv").write_text(
        'file_name,transcription,age\nclips/a.wav,"não, sei",20\nclips/b.wav,talvez,30\n', encoding="utf-8"
    )
    return folder


def _absolute_file_name(folder: Path) -> None:
    """Row 2 names its (existing) audio file by its absolute path."""
    _edit("metadata.csv", "clips/b.wav", str(folder.resolve() / "clips" / "b.wav"))(folder)


def test_a_small_audiofolder_freezes(tmp_path: Path) -> None:
    folder = _audiofolder(tmp_path / "af")
    assert _run("--audiofolder", folder, "--split", "tuning", "--out", tmp_path / "out" / "manifest.json") == 0
    a, b = load(tmp_path / "out" / "manifest.json").recordings
    assert (a.id, a.path, a.load_reference().text, b.load_reference().text) == (
        "a",
        "../af/clips/a.wav",
        "não, sei",
        "talvez",
    )
    assert (tmp_path / "out" / "refs" / "a.txt").read_text(encoding="utf-8") == "não, sei\n"


@pytest.mark.parametrize(
    "edit, problem",
    [
        (
            _edit("metadata.csv", "clips/b.wav", "clips/c.wav"),
            r"metadata.csv: line 3: recording 'c': audio file .* not found",
        ),
        (_edit("metadata.csv", "clips/b.wav", "a.wav"), r"metadata.csv: line 3: recording 'a' is also on line 2"),
        (_edit("metadata.csv", "transcription", "text"), r"metadata.csv: line 1: columns must include file_name and"),
        (_edit("metadata.csv", "talvez,30", "talvez,30,x"), r"metadata.csv: line 3: expected 3 columns"),
        (_edit("metadata.csv", "clips/b.wav", ""), r"metadata.csv: line 3: empty file_name"),
        (_edit("metadata.csv", "talvez", ""), r"metadata.csv: line 3: the reference has no words"),
        (
            _edit("metadata.csv", "talvez", "todas as\rmangueiras"),
            r"metadata.csv: line 3: a carriage return \(CR\) inside a field that is not quoted",
        ),
        (_edit("metadata.csv", "clips/b.wav", "../af/clips/b.wav"), r"line 3: file_name '../af/clips/b.wav' is not in"),
        (_absolute_file_name, r"metadata.csv: line 3: file_name '/.*/af/clips/b.wav' is not inside the folder"),
    ],
)
def test_bad_audiofolders_name_the_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Callable[[Path], None], problem: str
) -> None:
    folder = _audiofolder(tmp_path / "af")
    edit(folder)
    line = _freezes_nothing(tmp_path, capsys, "--audiofolder", folder)
    assert re.search(problem, line), line


def _lhotse(folder: Path) -> tuple[str, Path, Path]:
    """lhotse manifests (uncompressed, to edit) of the small Kaldi folder's recordings and segments."""
    from lhotse import Recording, RecordingSet, SupervisionSegment, SupervisionSet

    _kaldi(folder)
    RecordingSet.from_recordings(
        Recording.from_file(folder / f"{rid}.wav", recording_id=rid) for rid in ("a", "b")
    ).to_file(folder / "recordings.jsonl")
    SupervisionSet.from_segments(
        [
            SupervisionSegment("a-1", "a", 0.1, 0.8, text="não sei", speaker="S1"),
            SupervisionSegment("a-2", "a", 1.0, 0.95, text="talvez", speaker="S2"),
            SupervisionSegment("b-1", "b", 0.0, 2.0, text="sim", speaker="S1"),
        ]
    ).to_file(folder / "supervisions.jsonl")
    return "--lhotse", folder / "recordings.jsonl", folder / "supervisions.jsonl"


@pytest.mark.needs_model  # lhotse (the asr extra) reads and writes the manifests
@pytest.mark.parametrize(
    "edit, problem",
    [
        (_edit("supervisions.jsonl", '"a-2"', '"a-1"'), r"supervisions.jsonl: line 2: supervision 'a-1' is also on li"),
        (
            _edit("supervisions.jsonl", '"recording_id": "b"', '"recording_id": "z"'),
            r"jsonl: line 3: .* recording 'z', which",
        ),
        (
            _edit("supervisions.jsonl", '"duration": 2.0', '"duration": 2.5'),
            r"supervisions.jsonl: line 3: segment 0-2.5 s ends af",
        ),
        (
            _edit("supervisions.jsonl", '"start": 1.0', '"start": "1.0"'),
            r"jsonl: line 2: .*start must be a number of seconds",
        ),
        (_edit("supervisions.jsonl", '"a-2",', '"a-2"'), r"supervisions.jsonl: line 2: not a lhotse supervision"),
        (
            _edit("supervisions.jsonl", '"text": "talvez", ', ""),
            r"supervisions.jsonl: line 2: a turn of recording 'a' has no words \(an empty or missing transcript\)",
        ),
        (
            _edit("supervisions.jsonl", '"text": "sim", ', ""),
            r"supervisions.jsonl: line 3: the reference has no words; .* --no-speech b",
        ),
        (
            _edit("recordings.jsonl", '"type": "file"', '"type": "command"'),
            r"recordings.jsonl: line 1: .*'command' source",
        ),
        (
            _edit("recordings.jsonl", "b.wav", "gone.wav"),
            r"recordings.jsonl: line 2: recording 'b': audio file .* not found",
        ),
        (
            _edit("recordings.jsonl", '"id": "b"', '"id": "a"'),
            r"recordings.jsonl: line 2: recording 'a' is also on line 1",
        ),
        (
            _edit("supervisions.jsonl", '0.95, "channel": 0', '0.95, "channel": 1'),
            r"supervisions.jsonl: line 2: supervision 'a-2' is on channel 1 of recording 'a', line 1 on channel 0",
        ),
    ],
)
def test_bad_lhotse_manifests_name_the_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Callable[[Path], None], problem: str
) -> None:
    form = _lhotse(tmp_path / "lh")
    edit(tmp_path / "lh")
    line = _freezes_nothing(tmp_path, capsys, *form)
    assert re.search(problem, line), line


def test_references_already_beside_the_manifest_are_never_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kaldi = _kaldi(tmp_path / "kaldi")
    out = tmp_path / "out"
    (out / "refs").mkdir(parents=True)
    (out / "refs" / "other.txt").write_text("outra coisa\n", encoding="utf-8")
    assert _run("--kaldi", kaldi, "--split", "tuning", "--out", out / "manifest.json") == 2
    assert "refs: already exists and holds other files than this corpus's references" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["refs"] and [p.name for p in (out / "refs").iterdir()] == ["other.txt"]
    shutil.rmtree(out / "refs")
    assert _run("--kaldi", kaldi, "--split", "tuning", "--out", out / "manifest.json") == 0
    (out / "refs" / "a.stm").write_text((out / "refs" / "a.stm").read_text().replace("talvez", "talvez não"))
    assert _run("--kaldi", kaldi, "--split", "tuning", "--out", out / "again.json") == 2
    assert "refs/a.stm: already exists and differs" in capsys.readouterr().err
    assert not (out / "again.json").exists()
    # A manifest that would differ is refused after the references were written: they go again.
    assert _run("--kaldi", kaldi, "--split", "holdout", "--out", tmp_path / "new" / "manifest.json") == 0
    assert _run("--kaldi", kaldi, "--split", "tuning", "--out", tmp_path / "new" / "manifest.json") == 2
    shutil.rmtree(tmp_path / "new" / "refs")
    assert _run("--kaldi", kaldi, "--split", "tuning", "--out", tmp_path / "new" / "manifest.json") == 2
    assert [p.name for p in (tmp_path / "new").iterdir()] == ["manifest.json"]


@pytest.mark.parametrize(
    "args, problem",
    [
        (
            ("audio", "--kaldi", "k"),
            "give one corpus: AUDIO_DIR with --refs, --kaldi, --lhotse or --audiofolder, not --kaldi and AUDIO_DIR",
        ),
        (("--kaldi", "k", "--audiofolder", "a"), "not --kaldi and --audiofolder"),
        (("audio",), "give AUDIO_DIR with --refs REF_DIR, or one of --kaldi, --lhotse, --audiofolder"),
    ],
)
def test_one_corpus_form_at_a_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], problem: str
) -> None:
    assert _run(*args, "--split", "tuning", "--out", tmp_path / "m.json") == 2
    err = capsys.readouterr().err
    assert err.startswith("ablate: error: give ") and err.count("\n") == 1 and problem in err


def test_the_light_install_names_what_lhotse_manifests_need(tmp_path: Path) -> None:
    """Without the asr extra, --lhotse says what to install (the other forms need nothing more)."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "tests" / "light_install"), str(root)])}
    command = [
        sys.executable,
        "-m",
        "toolkit",
        "manifest",
        "freeze",
        "--lhotse",
        "r.jsonl",
        "s.jsonl",
        "--out",
        "m.json",
    ]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.splitlines() == [
        "ablate: error: --lhotse reads its manifests with lhotse, "
        "which the 'asr' extra installs (pip install -e '.[asr]')"
    ]
    kaldi = _kaldi(tmp_path / "kaldi")
    command = [
        sys.executable,
        "-m",
        "toolkit",
        "manifest",
        "freeze",
        "--kaldi",
        str(kaldi),
        "--split",
        "tuning",
        "--out",
        "m.json",
    ]
    assert subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, timeout=120).returncode == 0
