"""The frozen manifest: freeze, load, verify, split CSVs, and refusals that name the file and both hashes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from toolkit.core.errors import InputError
from toolkit.core.files import sha256_file
from toolkit.core.transcripts import Interval, Reference, Utterance
from toolkit.corpus.freeze import freeze
from toolkit.corpus.manifest import Manifest, load, require_verified, verify
from toolkit.formats import write_names, write_reference_textgrid

RATE = 16000


def make_corpus(root: Path, ids: tuple[str, ...] = ("a", "b", "c"), rate: int = RATE) -> tuple[Path, Path]:
    audio, refs = root / "audio", root / "refs"
    audio.mkdir(parents=True, exist_ok=True)
    refs.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(len(ids))
    for rid in ids:
        sf.write(audio / f"{rid}.wav", rng.uniform(-0.2, 0.2, 2 * rate), rate)
        reference = Reference(rid, [Utterance(0.5, 1.5, f"não sei {rid}")], speech=[Interval(0, 0.5, "nonspeech")])
        write_reference_textgrid(reference, refs / f"{rid}.TextGrid", 2.0)
    return audio, refs


def test_freeze_records_facts_splits_and_relative_paths(tmp_path: Path) -> None:
    audio, refs = make_corpus(tmp_path)
    write_names(["João", "Conceição"], refs / "a.names.txt")
    splits = tmp_path / "splits.csv"
    splits.write_text("id,split,strata,speaker\na,tuning,early; quiet,S1\nb,holdout,,S2\n", encoding="utf-8")
    manifest = freeze(audio, refs, tmp_path / "manifest.json", splits_csv=splits, split="challenge")
    a, b, c = manifest.recordings
    assert (a.id, a.split, a.strata, a.speaker) == ("a", "tuning", ["early", "quiet"], "S1")
    assert (b.split, b.strata, c.split, c.speaker) == ("holdout", [], "challenge", "")
    assert a.path == "audio/a.wav" and a.sha256 == sha256_file(audio / "a.wav")
    assert (a.duration, a.sample_rate, a.channels, a.channel) == (2.0, RATE, 1, None)
    assert set(a.references) == {"textgrid", "names"} and set(b.references) == {"textgrid"}
    assert a.references["textgrid"].sha256 == sha256_file(refs / "a.TextGrid")

    loaded = load(tmp_path / "manifest.json")
    assert loaded == manifest and loaded.sha256 == manifest.sha256
    assert json.loads((tmp_path / "manifest.json").read_text())["manifest_sha256"] == manifest.sha256
    assert verify(loaded) == []
    require_verified(loaded)
    reference = loaded.entry("a").load_reference()
    assert reference.text == "não sei a" and reference.names == ["João", "Conceição"]
    assert loaded.entry("a").load_audio().duration == 2.0
    assert [e.id for e in loaded.split("holdout")] == ["b"]


def test_manifest_moves_with_its_corpus(tmp_path: Path) -> None:
    make_corpus(tmp_path / "one", ("x",))
    freeze(tmp_path / "one" / "audio", tmp_path / "one" / "refs", tmp_path / "one" / "manifest.json", split="tuning")
    shutil.move(tmp_path / "one", tmp_path / "two")
    moved = load(tmp_path / "two" / "manifest.json")
    assert verify(moved) == [] and moved.entry("x").load_audio().duration == 2.0


def test_verify_names_each_changed_file_and_both_hashes(tmp_path: Path) -> None:
    audio, refs = make_corpus(tmp_path)
    out = tmp_path / "manifest.json"
    manifest = freeze(audio, refs, out, split="tuning")
    old_audio, old_ref = manifest.entry("a").sha256, manifest.entry("b").references["textgrid"].sha256
    sf.write(audio / "a.wav", np.zeros(RATE, dtype=np.float32), 22050)
    with open(refs / "b.TextGrid", "a", encoding="utf-8") as handle:
        handle.write("\n")
    (refs / "c.TextGrid").unlink()

    problems = verify(load(out))
    assert [Path(p.path).name for p in problems] == ["a.wav", "b.TextGrid", "c.TextGrid"]
    first, second, third = (p.problem for p in problems)
    assert f"sha256 differs: manifest {old_audio}, file {sha256_file(audio / 'a.wav')}" in first
    assert (
        "duration differs: manifest 2.000000 s" in first
        and "sample rate differs: manifest 16000 Hz, file 22050 Hz" in first
    )
    assert "size differs" in first
    assert f"sha256 differs: manifest {old_ref}, file {sha256_file(refs / 'b.TextGrid')}" in second
    assert third.startswith("missing")
    with pytest.raises(InputError, match="3 files differ from the frozen manifest: .*a.wav: sha256 differs"):
        require_verified(load(out))
    with pytest.raises(InputError, match=r"a.wav: sha256 differs"):
        load(out).entry("a").load_audio()
    with pytest.raises(InputError, match=r"b.TextGrid: sha256 differs"):
        load(out).entry("b").load_reference()


def test_an_edited_manifest_is_refused(tmp_path: Path) -> None:
    audio, refs = make_corpus(tmp_path, ("a",))
    out = tmp_path / "manifest.json"
    freeze(audio, refs, out, split="tuning")
    data = json.loads(out.read_text())
    data["recordings"][0]["split"] = "holdout"
    out.write_text(json.dumps(data))
    with pytest.raises(InputError, match="manifest.json: manifest was edited after freezing"):
        load(out)


def test_refreeze_is_idempotent_but_never_overwrites_a_different_manifest(tmp_path: Path) -> None:
    audio, refs = make_corpus(tmp_path, ("a", "b"))
    out = tmp_path / "manifest.json"
    first = freeze(audio, refs, out, split="tuning")
    before = out.read_bytes()
    assert freeze(audio, refs, out, split="tuning") == first and out.read_bytes() == before
    with pytest.raises(InputError, match="already exists and differs"):
        freeze(audio, refs, out, split="holdout")
    assert out.read_bytes() == before


def test_stereo_needs_a_channel_from_the_csv(tmp_path: Path) -> None:
    audio, refs = make_corpus(tmp_path, ("a",))
    sf.write(audio / "a.wav", np.random.default_rng(1).uniform(-0.2, 0.2, (2 * RATE, 2)), RATE)
    out = tmp_path / "manifest.json"
    with pytest.raises(InputError, match=r"a.wav: has 2 channels; name a channel \(0-1\) or 'mix'"):
        freeze(audio, refs, out, split="tuning")
    splits = tmp_path / "splits.csv"
    splits.write_text("id,split,strata,speaker,channel\na,tuning,,,1\n", encoding="utf-8")
    entry = freeze(audio, refs, out, splits_csv=splits).entry("a")
    assert (entry.channels, entry.channel) == (2, 1)
    stereo = sf.read(audio / "a.wav", dtype="float32")[0]
    assert np.allclose(load(out).entry("a").load_audio().samples, stereo[:, 1])


@pytest.mark.parametrize(
    "csv_text, problem",
    [
        ("id,split\na,tuning\nzz,holdout\n", "recording 'zz' has no audio"),
        ("id,split\na,training\n", "line 2: no split 'training'; did you mean 'tuning'?"),
        ("id,split\na,tuning\na,holdout\n", "line 3: recording 'a' is assigned twice"),
        ("id,fold\na,tuning\n", "columns must be id,split"),
        ("id,split,channel\na,tuning,left\n", "line 2: channel must be a channel number"),
    ],
)
def test_bad_split_csvs(tmp_path: Path, csv_text: str, problem: str) -> None:
    audio, refs = make_corpus(tmp_path, ("a",))
    splits = tmp_path / "splits.csv"
    splits.write_text(csv_text, encoding="utf-8")
    with pytest.raises(InputError, match=problem):
        freeze(audio, refs, tmp_path / "manifest.json", splits_csv=splits)
    assert not (tmp_path / "manifest.json").exists()


def test_every_recording_needs_a_split(tmp_path: Path) -> None:
    audio, refs = make_corpus(tmp_path, ("a", "b"))
    splits = tmp_path / "splits.csv"
    splits.write_text("id,split\na,tuning\n", encoding="utf-8")
    with pytest.raises(InputError, match="b.wav: recording 'b' is not in .*splits.csv; give --splits CSV or --split"):
        freeze(audio, refs, tmp_path / "m.json", splits_csv=splits)


def test_references_and_audio_must_pair_up(tmp_path: Path) -> None:
    audio, refs = make_corpus(tmp_path, ("a", "b"))
    (refs / "b.TextGrid").rename(refs / "orphan.TextGrid")
    with pytest.raises(InputError, match="orphan.TextGrid: reference for recording 'orphan', but .* has no audio"):
        freeze(audio, refs, tmp_path / "m.json", split="tuning")
    (refs / "orphan.TextGrid").unlink()
    with pytest.raises(InputError, match="b.wav: recording 'b' has no reference"):
        freeze(audio, refs, tmp_path / "m.json", split="tuning")
    (refs / "b.stm").write_text("b 1 A 0 1 oi\n", encoding="utf-8")
    (refs / "b.txt").write_text("oi\n", encoding="utf-8")
    with pytest.raises(InputError, match="already has a reference"):
        freeze(audio, refs, tmp_path / "m.json", split="tuning")
    assert not (tmp_path / "m.json").exists()


def test_mixed_sample_rates_are_refused_unless_allowed(tmp_path: Path) -> None:
    audio, refs = make_corpus(tmp_path, ("a", "b"))
    sf.write(audio / "b.wav", np.zeros(2 * 8000, dtype=np.float32), 8000)
    with pytest.raises(InputError, match=r"mixed sample rates \(8000 Hz: b.wav; 16000 Hz: a.wav\)"):
        freeze(audio, refs, tmp_path / "m.json", split="tuning")
    manifest = freeze(audio, refs, tmp_path / "m.json", split="tuning", allow_mixed_sample_rates=True)
    assert isinstance(manifest, Manifest) and manifest.allow_mixed_sample_rates
    assert {e.sample_rate for e in manifest.recordings} == {8000, 16000}


def test_references_are_validated_against_the_audio_at_freeze(tmp_path: Path) -> None:
    audio, refs = make_corpus(tmp_path, ("a",))
    write_reference_textgrid(Reference("a", [Utterance(0.5, 3.5, "longa demais")]), refs / "a.TextGrid", 4.0)
    with pytest.raises(InputError, match=r"a.TextGrid: .*ends after the recording's duration \(2 s\)"):
        freeze(audio, refs, tmp_path / "m.json", split="tuning")


def test_an_unknown_recording_id_is_refused_with_the_closest_ids(tmp_path: Path) -> None:
    audio, refs = make_corpus(tmp_path, ("clip_a", "clip_b", "interview"))
    manifest = freeze(audio, refs, tmp_path / "manifest.json", split="tuning")
    with pytest.raises(InputError) as raised:
        manifest.entry("intervew")
    assert raised.value.problem == (
        "no recording 'intervew'; did you mean 'interview'?  (recordings: clip_a, clip_b, interview)"
    )
    with pytest.raises(InputError, match="did you mean 'clip_a' or 'clip_b'\\?"):  # equally close: both
        manifest.entry("clip_c")
