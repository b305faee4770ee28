"""A run's arm outputs and disagreement lists as typed records: written exactly as the plain JSON writer wrote
them, read back by one RunFolder method each, byte for byte (the demo's files too); a damaged file is one line
naming it and the key, and the readers that may go on without it (reuse, the review queue) do."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

import pytest
from adjudication_fixture import built, exp, run_folder  # noqa: F401 - fixtures
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.adjudication.queue import build_queue
from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_json
from toolkit.core.json_records import write_record
from toolkit.core.transcripts import Word
from toolkit.pipeline.disagreement import disagreement_spans, write_disagreements
from toolkit.pipeline.recording import stored_output
from toolkit.pipeline.runner import ArmOutput
from toolkit.runs.arm_output_file import Cost, Reuse, WorkUnit
from toolkit.runs.folder import RunFolder

# Files `ablate demo` wrote (outputs/ and disagreements/ of a tuning run); the outputs' lists cut to 3 items.
DEMO_RUN = Path(__file__).resolve().parent / "golden" / "demo-run"
NO_TIME = {"wall_s": 0.0, "cpu_s": 0.0}

times = st.one_of(st.none(), st.floats(0, 36_000, allow_nan=False))
words = st.builds(Word, st.text(min_size=1, max_size=8), times, times, times, st.one_of(st.none(), st.text(max_size=6)))
spans = st.tuples(st.floats(0, 36_000, allow_nan=False), st.floats(0, 36_000, allow_nan=False))
outputs = st.builds(
    ArmOutput,
    words=st.lists(words, max_size=6),
    vad_segments=st.one_of(st.none(), st.lists(st.tuples(times, times), max_size=4)),
    seams=st.lists(st.fixed_dictionaries({"start": st.floats(0, 99), "end": st.floats(0, 99)}), max_size=3),
    decoded=st.dictionaries(st.sampled_from(["whisper_base", "second"]), st.lists(spans, max_size=3), max_size=2),
    unmapped_times=st.integers(0, 5),
    partly_decoded=st.booleans(),
    notes=st.lists(st.text(max_size=10), max_size=2),
)


def _demo_folder(tmp_path: Path) -> RunFolder:
    """A run folder holding the demo's files."""
    return RunFolder(Path(shutil.copytree(DEMO_RUN, tmp_path / "run")))


def test_the_demo_outputs_read_back_byte_for_byte_with_typed_fields(tmp_path: Path) -> None:
    folder = _demo_folder(tmp_path)
    arms = sorted(path.parent.name for path in folder.root.glob("outputs/*/*.json"))
    assert arms == ["combined_models", "enhance", "vad", "windows"]
    for arm in arms:
        output = folder.read_arm_output(arm, "demo01")
        write_record(tmp_path / "again.json", output)
        assert (tmp_path / "again.json").read_bytes() == folder.arm_output(arm, "demo01").read_bytes()
        assert (output.arm, output.recording) == (arm, "demo01")
        assert isinstance(output.compute, Cost) and all(isinstance(w, Word) for w in output.words)
        assert all(isinstance(r, Reuse) for r in output.reuse.values())
        assert all(isinstance(u, WorkUnit) for u in output.work.values())
    assert folder.read_arm_output("windows", "demo01").seams
    assert folder.read_arm_output("combined_models", "demo01").disagreements
    assert folder.read_arm_output("enhance", "demo01").enhancement is not None
    speech = folder.read_arm_output("vad", "demo01").mapped_speech()
    assert speech and all(start < end for start, end in speech)
    assert folder.read_arm_output("windows", "demo01").mapped_speech() is None  # no VAD in that arm


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(output=outputs, duration=st.floats(0, 36_000, allow_nan=False))
def test_the_record_writes_what_the_plain_writer_wrote_and_reads_it_back(
    tmp_path: Path, output: ArmOutput, duration: float
) -> None:
    folder = RunFolder(tmp_path / "run")
    stored = output.stored("key", "code", "arm", "rec", duration, NO_TIME)
    written = folder.write_arm_output("arm", "rec", stored)
    atomic_write_json(tmp_path / "plain.json", stored)  # how the output was written before it had a record
    assert folder.arm_output("arm", "rec").read_bytes() == (tmp_path / "plain.json").read_bytes()
    assert folder.read_arm_output("arm", "rec") == written
    assert list(written.words) == output.words
    speech = written.mapped_speech()
    expected = None if output.vad_segments is None else [r for r in output.vad_segments if None not in r]
    assert speech == expected


def _damage(folder: RunFolder, arm: str, recording: str, **changes: object) -> Path:
    path = folder.arm_output(arm, recording)
    data = json.loads(path.read_text(encoding="utf-8"))
    for key, value in changes.items():
        if value is None:
            del data[key]
        else:
            data[key] = value
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"reuse": None}, "reuse is missing"),
        ({"vad_segments": [[1.0, 2.0, 3.0]]}, "vad_segments[0] must hold 2 values, not 3"),
        ({"words": [{"text": "oi"}]}, "words[0].start is missing"),
        ({"compute": {"wall_s": "1", "cpu_s": 1, "peak_rss_mb": 1}}, "compute.wall_s must be a number"),
        ({"stray": 1}, "unknown key(s) stray"),
    ],
)
def test_a_damaged_output_is_one_line_naming_the_file_and_the_key(
    tmp_path: Path, changes: dict[str, object], message: str
) -> None:
    folder = _demo_folder(tmp_path)
    path = _damage(folder, "vad", "demo01", **changes)
    with pytest.raises(InputError) as error:
        folder.read_arm_output("vad", "demo01")
    assert str(error.value).startswith(f"{path}: ") and message in str(error.value)
    # A result that cannot be read is made again, never reused half-read.
    assert stored_output(folder, "vad", "demo01", folder.read_arm_output("windows", "demo01").unit_key) is None


def test_a_stored_result_is_reused_only_under_its_own_unit_key(tmp_path: Path) -> None:
    folder = _demo_folder(tmp_path)
    output = folder.read_arm_output("vad", "demo01")
    assert stored_output(folder, "vad", "demo01", output.unit_key) == output
    assert stored_output(folder, "vad", "demo01", "another key") is None
    assert stored_output(folder, "vad", "demo02", output.unit_key) is None  # never made


def test_the_writer_refuses_what_the_reader_would_and_writes_nothing(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run")
    stored = ArmOutput(words=[Word("oi", 0.0, 0.5)]).stored("key", "code", "arm", "rec", 1.0, NO_TIME)
    with pytest.raises(InputError, match="unit_key must be str"):
        folder.write_arm_output("arm", "rec", {**stored, "unit_key": 3})
    assert not folder.arm_output("arm", "rec").exists()
    assert folder.write_arm_output("arm", "rec", stored).words == (Word("oi", 0.0, 0.5),)
    assert json.loads(folder.arm_output("arm", "rec").read_text(encoding="utf-8"))["words"] == [
        asdict(Word("oi", 0.0, 0.5))
    ]


def test_the_demo_disagreement_lists_read_back_byte_for_byte(tmp_path: Path) -> None:
    folder = _demo_folder(tmp_path)
    for arm in ("enhance", "windows"):
        listing = folder.read_disagreement_list(arm, "demo01")
        write_record(tmp_path / "again.json", listing)
        assert (tmp_path / "again.json").read_bytes() == folder.disagreements(arm, "demo01").read_bytes()
        assert (listing.recording_id, listing.label_a, listing.label_b) == ("demo01", "baseline", arm)
        assert listing.spans and all(isinstance(w, Word) for s in listing.spans for w in s.words_a + s.words_b)
        assert all(s.text_b == " ".join(w.text for w in s.words_b) for s in listing.spans)
    assert {s.kind for s in folder.read_disagreement_list("enhance", "demo01").spans} == {"only_b", "substitution"}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(side_a=st.lists(words, max_size=8), side_b=st.lists(words, max_size=8))
def test_a_disagreement_list_is_written_as_the_plain_writer_wrote_it_and_reads_back(
    tmp_path: Path, side_a: list[Word], side_b: list[Word]
) -> None:
    folder = RunFolder(tmp_path / "run")
    spans = disagreement_spans(side_a, side_b)
    write_disagreements(
        spans, folder.disagreements("arm", "rec"), recording_id="rec", label_a="baseline", label_b="arm"
    )
    plain = {"recording_id": "rec", "label_a": "baseline", "label_b": "arm", "spans": [s.to_json() for s in spans]}
    atomic_write_json(tmp_path / "plain.json", plain)  # how the list was written before it had a record
    assert folder.disagreements("arm", "rec").read_bytes() == (tmp_path / "plain.json").read_bytes()
    listing = folder.read_disagreement_list("arm", "rec")
    assert [(s.start, s.end, s.kind, s.words_a, s.words_b) for s in listing.spans] == [
        (s.start, s.end, s.kind, s.words_a, s.words_b) for s in spans
    ]


def test_the_queue_names_a_damaged_output_or_list_and_goes_on(exp: Path) -> None:
    folder = run_folder(exp)
    before = build_queue(folder)
    output = _damage(folder, "windows", "reuniao", seams="not a list")
    listing = folder.disagreements("vad", "reuniao")
    listing.write_text(json.dumps({**json.loads(listing.read_text(encoding="utf-8")), "label_a": None}))
    queue = build_queue(folder)
    assert any(p.startswith(f"{output}: ") and "seams must be a list" in p for p in queue.problems)
    assert any(p.startswith(f"{listing}: ") and "label_a must be str" in p for p in queue.problems)
    assert queue.counts()["critical"] == before.counts()["critical"]
