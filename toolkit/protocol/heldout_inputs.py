"""The test splits' audio and references hashed again against the frozen manifest before a verdict rests on
them: a changed byte in a holdout WAV after the holdout opened stops the gate and ``ablate audit verify``.

Hashing is the whole cost: sha256 runs at several hundred MB/s, so an hour of 16 kHz 16-bit audio (115 MB) takes
a fraction of a second (benchmarks/bench_heldout_inputs.py)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from toolkit.core.errors import InputError


def require_test_inputs(manifest_path: Path, splits: Iterable[str]) -> int:
    """Re-hash every audio and reference file of ``splits``; returns how many recordings were checked, or raises
    one InputError naming the file that differs (or how many differ)."""
    from toolkit.corpus.manifest import load_manifest

    manifest = load_manifest(manifest_path)
    entries = [entry for split in splits for entry in manifest.split(split)]
    problems = [problem for entry in entries for problem in entry.verify()]
    if len(problems) == 1:
        raise InputError(problems[0].path, f"{problems[0].problem}: a test file the verdict rests on changed")
    if problems:
        raise InputError(
            manifest_path,
            f"{len(problems)} test files the verdict rests on differ from the frozen manifest: "
            + "; ".join(str(problem) for problem in problems),
        )
    return len(entries)
