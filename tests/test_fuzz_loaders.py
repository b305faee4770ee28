"""Fuzzing the loaders a person edits by hand: the experiment file, the gates file, the users file, the audit
log, the run record and the manifest. Each mutated file either loads or is refused with one line naming it
(a ToolkitError; one line per mistake where a file holds several), never a traceback and never a hang.

Mutations are seeded and cheap: byte flips, cuts and repeats, and the tokens that broke loaders before (NaN,
infinities, 1e400, a 5000-digit integer, deep nesting, a path-like name, an invalid UTF-8 byte). CI runs
FUZZ_EXAMPLES (default 1,000) per loader; `FUZZ_EXAMPLES=10000 pytest tests/test_fuzz_loaders.py` is the
longer run the release notes quote.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from toolkit.adjudication.users import add_user, read_users
from toolkit.core.errors import ToolkitError
from toolkit.corpus.manifest import load_manifest
from toolkit.pipeline.experiment import load_experiment
from toolkit.protocol.audit import AuditLog, verify
from toolkit.protocol.gates_file import TEMPLATE, load_gates
from toolkit.runs.record import ArmFailure, ManifestUse, RunConfig, RunRecord, RuntimeRow

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "1000"))
DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml"
TOKENS = [
    b"nan",
    b"inf",
    b"-inf",
    b"NaN",
    b"Infinity",
    b"1e400",
    b"-1e400",
    b"9" * 5000,
    b"1" * 25,
    b"-0",
    b"0x7f",
    b"true",
    b'"x"',
    b"[]",
    b"{}",
    b"[" * 3000,
    b"{" * 3000,
    b'"../../../../escaped"',
    b"\xff",
    b"\xef\xbb\xbf",
    b"\x00",
    b"\n[arms]\n",
    b'\n"../x" = []\n',
    b"=",
    b'"',
    b"\\u0000",
]


class _Hang(Exception):
    pass


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    def expired(*_: object) -> None:
        raise _Hang()

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _mutate(data: bytes, rng: random.Random) -> bytes:
    for _ in range(rng.randint(1, 3)):
        if not data:
            return rng.choice(TOKENS)
        i, j = sorted(rng.randrange(len(data) + 1) for _ in range(2))
        kind = rng.randrange(6)
        if kind == 0:  # replace a number-looking run with a bad token
            digits = [k for k in range(len(data)) if data[k : k + 1].isdigit()]
            if digits:
                k = rng.choice(digits)
                end = k
                while end < len(data) and data[end : end + 1] in b"0123456789.-e":
                    end += 1
                data = data[:k] + rng.choice(TOKENS) + data[end:]
        elif kind == 1:
            data = data[:i] + rng.choice(TOKENS) + data[i:]
        elif kind == 2:
            data = data[:i] + data[j:]
        elif kind == 3:
            data = data[:j] + data[i:j] + data[j:]
        elif kind == 4 and data:
            k = rng.randrange(len(data))
            data = data[:k] + bytes([data[k] ^ (1 << rng.randrange(8))]) + data[k + 1 :]
        else:
            data = data[: rng.randrange(len(data) + 1)]
    return data


def _fuzz(original: bytes, target: Path, load: Callable[[], object], seed: int) -> None:
    """Mutate ``original`` into ``target`` EXAMPLES times; each load returns or raises a ToolkitError of one
    line per mistake, each naming the file."""
    rng = random.Random(seed)
    outcomes = {"loaded": 0, "refused": 0}
    for example in range(EXAMPLES):
        mutated = _mutate(original, rng)
        target.write_bytes(mutated)
        try:
            with _deadline(10.0):
                load()
            outcomes["loaded"] += 1
        except ToolkitError as error:
            lines = error.lines()
            assert str(error) == "\n".join(lines), (example, mutated[:300], str(error))
            assert all("\n" not in line and str(target) in line for line in lines), (example, mutated[:300], lines)
            outcomes["refused"] += 1
        except _Hang:
            pytest.fail(f"example {example} hung for 10 s: {mutated[:300]!r}")
        except Exception as error:  # anything else is the defect this test exists for
            pytest.fail(f"example {example}: {type(error).__name__}: {error} on {mutated[:300]!r}")
    assert outcomes["refused"] > EXAMPLES // 10, outcomes  # the mutations do break files


def test_the_experiment_loader(tmp_path: Path) -> None:
    target = tmp_path / "experiment.toml"
    _fuzz(DEMO.read_bytes(), target, lambda: load_experiment(target), seed=1)


def test_the_gates_loader(tmp_path: Path) -> None:
    target = tmp_path / "gates.toml"
    _fuzz(TEMPLATE.read_bytes(), target, lambda: load_gates(target), seed=2)


def test_the_users_file(tmp_path: Path) -> None:
    target = tmp_path / "users.json"
    for name in ("ana", "bia"):
        add_user(target, name, f"{name}-password-123")
    _fuzz(target.read_bytes(), target, lambda: read_users(target), seed=3)


def test_the_audit_log(tmp_path: Path) -> None:
    (tmp_path / "experiment.toml").write_text("", encoding="utf-8")
    log = AuditLog(tmp_path)
    log.append("tuning run", run="tuning-0123456789", computed=3, reused=0)
    log.append(
        "challenger frozen",
        challenger={"arm": "vad", "config_sha256": "ab" * 32},
        hashes=[{"kind": "file", "path": "protocol/gates.toml", "sha256": "cd" * 32}],
    )
    log.append("holdout opened", split="holdout", audio_sha256=["ef" * 32])
    original, head = log.path.read_bytes(), log.head.read_bytes()

    def load() -> None:
        verify(log, None)
        log.entries()

    rng = random.Random(4)
    for example in range(EXAMPLES):  # the head is mutated too, now and then
        log.head.write_bytes(_mutate(head, rng) if example % 5 == 0 else head)
        _fuzz_once(original, log.path, load, rng, example)


def _fuzz_once(original: bytes, target: Path, load: Callable[[], object], rng: random.Random, example: int) -> None:
    mutated = _mutate(original, rng)
    target.write_bytes(mutated)
    try:
        with _deadline(10.0):
            load()
    except ToolkitError as error:
        assert "\n" not in str(error), (example, mutated[:300], str(error))
    except _Hang:
        pytest.fail(f"example {example} hung for 10 s: {mutated[:300]!r}")
    except Exception as error:
        pytest.fail(f"example {example}: {type(error).__name__}: {error} on {mutated[:300]!r}")


def test_the_run_record(tmp_path: Path) -> None:
    config = RunConfig(
        "demo",
        "whisper_base",
        {"whisper_base": {"model": "whisper-base"}},
        ({"name": "baseline", "components": [], "variant_of": None},),
    )
    record = RunRecord(
        "complete",
        "2026-12-01T00:00:00+00:00",
        "tuning",
        config,
        ManifestUse("corpus/manifest.json", "ab" * 32),
        ("demo01",),
        arm_failures=(ArmFailure("baseline", "demo01", "vad", "arm baseline, stage vad: ..."),),
        measurements=(RuntimeRow("baseline", "demo01", duration_s=60.0, wall_s=1.5, cpu_s=1.2),),
    )
    target = tmp_path / "run.json"
    _fuzz(json.dumps(record.to_json(), indent=2).encode(), target, lambda: RunRecord.read(target), seed=5)


def test_the_manifest(tmp_path: Path) -> None:
    from protocol_corpus import make_corpus

    manifest = make_corpus(tmp_path / "corpus", {"r1": "tuning", "r2": "holdout"})
    original = manifest.read_bytes()
    shutil.copy(manifest, tmp_path / "frozen.json")
    _fuzz(original, manifest, lambda: load_manifest(manifest), seed=6)
