"""Recordings in parallel (``--workers N``) and on a Dask cluster (``--scheduler``), on real pt-BR clips.

The same experiment (baseline and +VAD, bundled Whisper base, one decoding thread) run by one
worker in this process, by two local workers, on a LocalCluster this test starts, and on a
real ``dask scheduler`` with two ``dask worker`` processes gives byte-identical hypotheses,
disagreement lists and score tables; a worker killed mid-run has its recording rescheduled and
nothing it finished is redone; a rerun recomputes nothing; a worker that cannot see one audio
file, or the model, fails those recordings by name and the run says so.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from run_products import run_products
from shared_data import PTBR_DEV, lapsbm_tuning_corpus

from toolkit.core.errors import InputError, ToolkitError
from toolkit.evaluate import evaluate_run
from toolkit.pipeline.engine import run_experiment
from toolkit.pipeline.experiment import load_experiment

pytestmark = [
    pytest.mark.slow,
    pytest.mark.needs_model,
    pytest.mark.skipif(not (PTBR_DEV / "lapsbm").is_dir(), reason=f"shared clips absent: {PTBR_DEV}"),
]

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "experiments" / "demo" / "experiment.toml"
CLIPS = ("LapsBM_0240", "LapsBM_0385", "LapsBM_0415")
ARMS = ["baseline", "vad"]
ABLATE = Path(sys.executable).parent / "ablate"
DASK = Path(sys.executable).parent / "dask"
# Results that must not depend on how the recordings were spread (runtime.csv holds timings).


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYANNOTE_METRICS_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONPATH": str(ROOT),
        "DASK_DISTRIBUTED__WORKER__DAEMON": "False",
    }


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three real clips copied (so one can be hidden from a worker), frozen as the tuning split."""
    root = tmp_path_factory.mktemp("parallel")
    lapsbm_tuning_corpus(root / "corpus", CLIPS)
    return root


def _experiment(corpus: Path, name: str) -> Path:
    """The demo experiment decoding on one thread (two workers on two cores), in its own folder and cache."""
    text = DEMO.read_text(encoding="utf-8").replace("cpu_threads = 2", "cpu_threads = 1")
    text = text.replace('manifest = "corpus/manifest.json"', f'manifest = "{corpus / "corpus" / "manifest.json"}"')
    folder = corpus / name
    folder.mkdir()
    (folder / "experiment.toml").write_text(text, encoding="utf-8")
    return folder


def _order(run: Path) -> list[tuple[str, str]]:
    return [(r["arm"], r["recording"]) for r in json.loads((run / "run.json").read_text())["measurements"]]


@pytest.fixture(scope="module")
def one_worker(corpus: Path) -> Path:
    summary = run_experiment(load_experiment(_experiment(corpus, "one")), "tuning", ARMS, progress=False)
    evaluate_run(summary.folder)
    assert _order(summary.folder.root) == [(arm, clip) for clip in CLIPS for arm in ARMS]
    return summary.folder.root


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def dask_cluster(tmp_path: Path) -> Iterator[tuple[str, list[subprocess.Popen], callable]]:
    """A real ``dask scheduler`` on 127.0.0.1 and a way to add ``dask worker`` processes; all stopped after."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    processes = [
        subprocess.Popen(
            [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            env=_env(),
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=open(tmp_path / "scheduler.log", "w"),
        )
    ]

    def add_worker(name: str, prefix: tuple[str, ...] = ()) -> None:
        command = [
            *prefix,
            str(DASK),
            "worker",
            address,
            "--nthreads",
            "1",
            "--host",
            "127.0.0.1",
            "--no-dashboard",
            "--name",
            name,
        ]
        processes.append(
            subprocess.Popen(
                command, env=_env(), cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=open(tmp_path / f"{name}.log", "w")
            )
        )

    yield address, processes, add_worker
    for process in reversed(processes):
        process.terminate()
    for process in processes:
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_for_workers(address: str, count: int):
    from distributed import Client

    client = Client(address, timeout="30s")
    client.wait_for_workers(count, timeout=120)
    return client


def _ablate(folder: Path, *extra: str, arms: list[str] = ARMS) -> list[str]:
    command = [str(ABLATE)] if ABLATE.exists() else [sys.executable, "-m", "toolkit"]
    return [*command, "run", str(folder), "--split", "tuning", "--arms", ",".join(arms), "--quiet", *extra]


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    """``command`` in a child process with the tests' environment, its output captured as text (5 minutes at most)."""
    return subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=300)


def test_two_local_workers_and_a_cluster_started_here_equal_one_worker(corpus: Path, one_worker: Path) -> None:
    import dask
    from distributed import LocalCluster

    two = run_experiment(load_experiment(_experiment(corpus, "two")), "tuning", ARMS, progress=False, workers=2)
    evaluate_run(two.folder)
    saved = dict(os.environ)  # the cluster's nannies, in this process, set OMP_NUM_THREADS=1 & co. here
    with dask.config.set({"distributed.worker.daemon": False}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
    try:
        os.environ.clear()
        os.environ.update(saved)
        local = run_experiment(
            load_experiment(_experiment(corpus, "local")),
            "tuning",
            ARMS,
            progress=False,
            scheduler=cluster.scheduler_address,
        )
    finally:
        cluster.close()
        os.environ.clear()
        os.environ.update(saved)
    evaluate_run(local.folder)
    expected = run_products(one_worker)
    assert len(expected) > 6 * 2 and any(name.endswith(".ctm") for name in expected)
    for summary, mode in ((two, "local"), (local, "scheduler")):
        assert run_products(summary.folder.root) == expected
        assert _order(summary.folder.root) == _order(one_worker)
        record = summary.folder.read_record().to_json()
        assert record["status"] == "complete" and record["failures"] == []
        assert record["parallel"]["mode"] == mode
        ran = sorted(r for worker in record["parallel"]["workers"].values() for r in worker["recordings"])
        assert ran == sorted(CLIPS)
        assert (summary.computed, summary.reused) == (len(CLIPS) * len(ARMS), 0)
        # Every worker loaded the model once, whatever number of recordings it decoded.
        assert len(record["recognizer_loads"]) == len(record["parallel"]["workers"])
        # One host here: every recording, decode and model hash is its.
        (host, node), *others = record["parallel"]["nodes"].items()
        assert not others and host == socket.gethostname() and sorted(node["recordings"]) == sorted(CLIPS)
        assert node["units_computed"] == record["reuse"]["decode"]["computed"] + record["reuse"]["vad"]["computed"]
        weights = record["config"]["recognizers"]["whisper_base"]["weights_sha256"]
        assert node["models_sha256"]["whisper_base"] == weights and node["cpu_s"] > 0


def test_a_real_scheduler_with_two_workers_one_killed_mid_run_then_a_rerun_recomputes_nothing(
    corpus: Path, one_worker: Path, dask_cluster
) -> None:
    address, _, add_worker = dask_cluster
    add_worker("w1")
    add_worker("w2")
    client = _wait_for_workers(address, 2)
    folder = _experiment(corpus, "killed")
    run = subprocess.Popen(
        _ablate(folder, "--scheduler", address, "--no-score"),
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    outputs = folder / "runs"
    killed, finished_before = None, {}
    deadline = time.monotonic() + 300
    while killed is None and run.poll() is None and time.monotonic() < deadline:
        done = list(outputs.glob("*/outputs/*/*.json"))
        busy = [worker for worker, tasks in client.processing().items() if tasks]
        if done and busy:  # a result is on disk and a worker is in the middle of a recording
            pids = client.run(os.getpid)
            finished_before = {p: p.stat().st_mtime_ns for p in done}
            os.kill(pids[busy[0]], signal.SIGKILL)
            killed = busy[0]
        time.sleep(0.05)
    stdout, stderr = run.communicate(timeout=300)
    client.close()
    assert killed is not None, "no worker was caught mid-run"
    assert run.returncode == 0, stderr
    run_folder = next(outputs.iterdir())
    assert run_products(run_folder).keys() >= {k for k in run_products(one_worker) if k.startswith("hypotheses")}
    expected = {k: v for k, v in run_products(one_worker).items() if k.startswith(("hypotheses", "disagreements"))}
    assert {
        k: v for k, v in run_products(run_folder).items() if k.startswith(("hypotheses", "disagreements"))
    } == expected
    assert all(path.stat().st_mtime_ns == mtime for path, mtime in finished_before.items())  # nothing redone
    record = json.loads((run_folder / "run.json").read_text())
    assert record["status"] == "complete" and record["parallel"]["mode"] == "scheduler"
    assert record["computed"] + record["reused"] == len(CLIPS) * len(ARMS)
    assert _order(run_folder) == _order(one_worker)

    rerun = _run(_ablate(folder, "--scheduler", address, "--no-score"))
    assert rerun.returncode == 0, rerun.stderr
    assert f"0 arm results computed, {len(CLIPS) * len(ARMS)} reused" in rerun.stdout
    again = json.loads((run_folder / "run.json").read_text())
    assert again["recognizer_loads"] == {} and "parallel" not in again  # nothing sent, nothing loaded


def _add_worker_seeing(add_worker, name: str, folder: Path, view: Path) -> None:
    """Start a ``dask worker`` that sees ``view``'s files at ``folder``'s path (its own mounts, ``unshare``).

    Skips the test where this system gives a process no mount namespace of its own.
    """
    for prefix in (("unshare", "-m"), ("unshare", "-rm")):
        if shutil.which("unshare") and subprocess.run([*prefix, "true"], capture_output=True).returncode == 0:
            add_worker(name, (*prefix, "sh", "-c", f'mount --bind "{view}" "{folder}" && exec "$0" "$@"'))
            return
    pytest.skip("no mount namespaces here (unshare): cannot give one worker its own view of the files")


def test_a_worker_without_one_audio_file_fails_that_recording_by_name_and_the_run_says_so(
    corpus: Path, dask_cluster, tmp_path: Path
) -> None:
    address, _, add_worker = dask_cluster
    audio = corpus / "corpus" / "audio"
    hidden = CLIPS[1]
    view = tmp_path / "view"  # what the worker sees at the audio folder's path: every file but one
    view.mkdir()
    for clip in CLIPS:
        if clip != hidden:
            os.link(audio / f"{clip}.wav", view / f"{clip}.wav")
    _add_worker_seeing(add_worker, "blind", audio, view)
    _wait_for_workers(address, 1).close()
    folder = _experiment(corpus, "blind")
    result = _run(_ablate(folder, "--scheduler", address, arms=["baseline"]))
    assert result.returncode == 1
    line = next(line for line in result.stderr.splitlines() if line.startswith(f"ablate: {hidden} failed:"))
    assert "worker tcp://127.0.0.1:" in line
    assert f"{audio / hidden}.wav (audio) does not resolve on host {socket.gethostname()}" in line
    assert "1 of 3 recordings failed" in result.stderr
    run = next((folder / "runs").iterdir())
    record = json.loads((run / "run.json").read_text())
    assert record["status"] == "failed" and [f["recording"] for f in record["failures"]] == [hidden]
    assert record["recordings"] == list(CLIPS)  # still in the denominator
    assert sorted(p.stem for p in (run / "outputs" / "baseline").glob("*.json")) == [c for c in CLIPS if c != hidden]
    with pytest.raises(InputError, match=f"1 of 3 recordings failed in this run \\({hidden}\\)"):
        from toolkit.runs.folder import RunFolder

        evaluate_run(RunFolder(run))


def test_a_worker_without_the_model_fails_its_recordings_by_name_and_the_run_says_so(
    corpus: Path, dask_cluster, tmp_path: Path
) -> None:
    from toolkit.asr.models import resolve_model

    address, _, add_worker = dask_cluster
    model = tmp_path / "whisper-base-ct2"  # a model folder the coordinator sees and the worker does not
    shutil.copytree(resolve_model("whisper-base").path, model)
    empty = tmp_path / "empty"
    empty.mkdir()
    _add_worker_seeing(add_worker, "no-model", model, empty)
    _wait_for_workers(address, 1).close()
    folder = _experiment(corpus, "no-model")
    toml = folder / "experiment.toml"
    toml.write_text(
        toml.read_text(encoding="utf-8").replace('model = "whisper-base"', f'model = "{model}"'), encoding="utf-8"
    )
    result = _run(_ablate(folder, "--scheduler", address, arms=["baseline"]))
    assert result.returncode == 1
    failed = [line for line in result.stderr.splitlines() if line.startswith("ablate: ") and " failed: " in line]
    assert [line.split()[1] for line in failed] == list(CLIPS)
    assert all("worker tcp://127.0.0.1:" in line and str(model) in line and "model.bin" in line for line in failed)
    assert "3 of 3 recordings failed" in result.stderr
    record = json.loads((next((folder / "runs").iterdir()) / "run.json").read_text())
    assert record["status"] == "failed" and [f["recording"] for f in record["failures"]] == list(CLIPS)


def test_more_decoding_threads_than_cores_is_refused_before_anything_is_written(corpus: Path) -> None:
    folder = _experiment(corpus, "too-many")
    cores = len(os.sched_getaffinity(0))
    with pytest.raises(
        ToolkitError,
        match=f"--workers {cores + 1} with recognizers decoding on cpu_threads = 1 "
        f"would run {cores + 1} decoding threads on the {cores} cores",
    ):
        run_experiment(load_experiment(folder), "tuning", ARMS, progress=False, workers=cores + 1)
    with pytest.raises(ToolkitError, match="with --scheduler the cluster's own workers decide"):
        run_experiment(
            load_experiment(folder), "tuning", ARMS, progress=False, workers=2, scheduler="tcp://127.0.0.1:1"
        )
    assert not (folder / "runs").exists()
