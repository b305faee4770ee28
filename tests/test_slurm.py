"""``ablate run --cluster slurm`` on a real single-node SLURM this module starts (tests/single_node_slurm.py).

Two demo recordings as two SLURM jobs give byte-identical hypotheses, disagreement lists and
scores to ``--workers 1``, and the run record names the scheduler, the jobs and their node; a
rerun whose decodes are all cached submits no job. A job cancelled mid-run (``scancel``) and
one that hits its walltime have their recordings rescheduled, and nothing finished is redone.
Faults are one line each: a typo in the cluster file, a queue that does not exist, ``sbatch``
missing, munge not running, a job that never starts (its recordings fail with the job's
pending reason, and the run resumes later), a node that does not see the model.

All but the scheduler-address test need the ``asr`` extra (``needs_model``): a run probes its recognizers
before placing anything, and a cluster file's memory and walltime are read with Dask.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from run_products import run_products
from single_node_slurm import SingleNodeSlurm, missing, single_node_slurm

from toolkit.core.errors import InputError
from toolkit.corpus.freeze import freeze
from toolkit.evaluate import evaluate_run
from toolkit.pipeline.engine import run_experiment
from toolkit.pipeline.experiment import load_experiment
from toolkit.pipeline.slurm import load_cluster_file

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "experiments" / "demo" / "experiment.toml"
ARMS = ["baseline", "vad"]
SLURM_MISSING = missing()
# CI sets this (.ci/run): there a missing SLURM fails the SLURM tests instead of skipping them.
SLURM_REQUIRED = os.environ.get("ABLATE_REQUIRE_SLURM") == "1"
needs_slurm = pytest.mark.skipif(
    SLURM_MISSING is not None and not SLURM_REQUIRED, reason=f"no single-node SLURM here: {SLURM_MISSING}"
)
needs_synthesizer = pytest.mark.skipif(
    not (shutil.which("RHVoice-test") or shutil.which("espeak-ng")),
    reason="needs a pt-BR synthesizer (RHVoice or espeak-ng) on PATH for the demo recordings",
)
pytestmark = needs_synthesizer


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SingleNodeSlurm]:
    """munged, slurmctld and slurmd for this module; ``SLURM_CONF`` points this process's clients at them."""
    if SLURM_MISSING is not None:
        (pytest.fail if SLURM_REQUIRED else pytest.skip)(f"no single-node SLURM here: {SLURM_MISSING}")
    with single_node_slurm(tmp_path_factory.mktemp("slurm")) as cluster, pytest.MonkeyPatch.context() as patch:
        patch.setenv("SLURM_CONF", str(cluster.conf))
        yield cluster


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two demo recordings (as ``ablate demo`` builds them), both frozen in the tuning split."""
    from toolkit.demo import build_corpus

    root = tmp_path_factory.mktemp("slurm-corpus")
    built = build_corpus(root / "corpus", recordings=2)
    splits = root / "splits.csv"
    splits.write_text("id,split\n" + "".join(f"{r.recording_id},tuning\n" for r in built.recordings), encoding="utf-8")
    freeze(root / "corpus" / "audio", root / "corpus" / "refs", root / "corpus" / "manifest.json", splits_csv=splits)
    return root


def _experiment(corpus: Path, name: str, extra: str = "") -> Path:
    """The demo experiment on one decoding thread (two one-core jobs on two cores), in its own folder and cache."""
    text = DEMO.read_text(encoding="utf-8").replace("cpu_threads = 2", "cpu_threads = 1")
    text = text.replace('manifest = "corpus/manifest.json"', f'manifest = "{corpus / "corpus" / "manifest.json"}"')
    folder = corpus / name
    folder.mkdir()
    (folder / "experiment.toml").write_text(text + extra, encoding="utf-8")
    return folder


def _cluster_file(folder: Path, **changes: object) -> Path:
    """A cluster file for the single-node SLURM: one core and 3 GB per job, two jobs, fixed."""
    table: dict[str, object] = {
        "queue": "debug",
        "cores": 1,
        "processes": 1,
        "memory": "3GB",
        "walltime": "00:20:00",
        "jobs": 2,
        "scale": "fixed",
        "start_timeout_s": 120,
        "scheduler_host": "127.0.0.1",
    }
    table.update(changes)
    lines = ["[slurm]"] + [f"{key} = {json.dumps(value)}" for key, value in table.items()]
    path = folder / "slurm.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _ablate(folder: Path, *extra: str, arms: list[str] = ARMS) -> list[str]:
    return [sys.executable, "-m", "toolkit", "run", str(folder), "--split", "tuning", "--arms", ",".join(arms), *extra]


def _env(slurm: SingleNodeSlurm) -> dict[str, str]:
    return {
        **slurm.env,
        "PYTHONPATH": str(ROOT),
        "HF_HUB_OFFLINE": "1",
        "PYANNOTE_METRICS_ENABLED": "false",
        "TOKENIZERS_PARALLELISM": "false",
    }


@pytest.fixture(scope="module")
def one_worker(corpus: Path) -> Path:
    """``--workers 1`` on the same experiment: what every SLURM run must equal."""
    summary = run_experiment(load_experiment(_experiment(corpus, "one")), "tuning", ARMS, progress=False)
    evaluate_run(summary.folder)
    return summary.folder.root


# --- the run ---------------------------------------------------------------------------------


@pytest.mark.needs_model
@pytest.mark.slow
@needs_slurm
def test_two_slurm_jobs_equal_one_worker_and_a_cached_rerun_submits_no_job(
    corpus: Path, one_worker: Path, slurm: SingleNodeSlurm
) -> None:
    folder = _experiment(corpus, "slurm-two")
    summary = run_experiment(
        load_experiment(folder), "tuning", ARMS, progress=False, slurm=load_cluster_file(_cluster_file(folder))
    )
    evaluate_run(summary.folder)
    assert run_products(summary.folder.root) == run_products(one_worker)
    record = summary.folder.read_record().to_json()
    assert record["status"] == "complete" and record["failures"] == []
    parallel = record["parallel"]
    assert parallel["mode"] == "slurm" and parallel["scheduler"].startswith("tcp://127.0.0.1:")
    jobs = parallel["slurm"]["jobs"]
    assert len(jobs) == 2 and {job["node"] for job in jobs.values()} == {slurm.node}
    # Each recording is named under the one job whose worker produced its result, and each worker
    # says which job it was. Which worker takes which recording is Dask's choice: on a busy machine
    # one worker may take both (the other idle), or Dask may move a task to the other worker.
    assert sorted(r for job in jobs.values() for r in job["recordings"]) == ["demo01", "demo02"]
    assert {w["slurm_job"] for w in parallel["workers"].values()} <= set(jobs)
    assert {job for job, ran in jobs.items() if ran["recordings"]} <= {
        w["slurm_job"] for w in parallel["workers"].values()
    }
    script = parallel["slurm"]["job_script"]
    assert "#SBATCH -p debug" in script and "--cpus-per-task=1" in script
    # whisper_base loads in a worker only when one of its units needs it: at most once per job.
    assert 1 <= len(record["recognizer_loads"]) <= len(jobs)

    # The same experiment with another comment is a new run folder whose every decode is cached:
    # it finishes here from the cache, submits no job and starts no model.
    submitted = set(slurm.jobs())
    (folder / "experiment.toml").write_text(
        (folder / "experiment.toml").read_text(encoding="utf-8") + "# edited\n", encoding="utf-8"
    )
    again = run_experiment(
        load_experiment(folder), "tuning", ARMS, progress=False, slurm=load_cluster_file(folder / "slurm.toml")
    )
    assert again.folder.root != summary.folder.root
    assert set(slurm.jobs()) == submitted
    record = again.folder.read_record().to_json()
    assert "parallel" not in record and record["recognizer_loads"] == {} and record["stage_loads"] == {}
    assert record["reuse"]["decode"] == {"computed": 0, "reused": record["reuse"]["decode"]["reused"]} != 0
    assert (again.computed, again.reused) == (4, 0)
    evaluate_run(again.folder)
    assert {k: v for k, v in run_products(again.folder.root).items() if not k.startswith("scores")} == {
        k: v for k, v in run_products(one_worker).items() if not k.startswith("scores")
    }


# More work than a one-minute job can finish on a fast machine too: arms that decode enhanced audio, or decode
# windows with the second recognizer, which no other arm's cache holds. On a quiet 2-core Xeon (2026-12-07) the
# five arms alone left so little after the cancel that the next job finished it all inside its walltime.
SLOW_ARMS = (
    'enhance_windows = ["gtcrn", "windows", "onset_repair"]\nenhance_vad = ["gtcrn", "vad"]\n'
    'enhance_second = ["gtcrn", "second_replace"]\nwindows_second = ["windows", "second_replace"]\n'
)
SLOW_ARMS_NAMES = ["enhance_windows", "enhance_vad", "enhance_second", "windows_second"]


@pytest.mark.needs_model
@pytest.mark.slow
@needs_slurm
def test_a_cancelled_job_and_a_job_over_its_walltime_have_their_recording_rescheduled(
    corpus: Path, one_worker: Path, slurm: SingleNodeSlurm
) -> None:
    """One job at a time with SLURM's shortest walltime (1 minute) and minutes of work (``SLOW_ARMS``): the
    first job is cancelled once it finished an arm; the next one starts with more than 1.5 minutes
    of work left, so it is still busy when slurmctld ends it (its time-limit check runs every 30 s);
    replacements finish the run. A recording may die with several jobs, so Dask may retry it more
    than its default 3 times."""
    folder = _experiment(corpus, "slurm-faults", SLOW_ARMS)
    cluster = _cluster_file(folder, jobs=1, walltime="00:01:00")
    arms = [*ARMS, "windows", "second_model", "enhance", *SLOW_ARMS_NAMES]
    run = subprocess.Popen(
        _ablate(folder, "--cluster", "slurm", "--cluster-config", str(cluster), "--no-score", "--quiet", arms=arms),
        env={**_env(slurm), "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "10"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    before = set(slurm.jobs())
    cancelled, finished_before = None, {}
    deadline = time.monotonic() + 600
    while cancelled is None and run.poll() is None and time.monotonic() < deadline:
        done = list((folder / "runs").glob("*/outputs/*/*.json"))
        running = [job for job, state in slurm.jobs().items() if job not in before and state == "RUNNING"]
        if done and running:  # a result is on disk and the job is in the middle of the next one
            finished_before = {p: p.stat().st_mtime_ns for p in done}
            slurm.command("scancel", running[0])
            cancelled = running[0]
        time.sleep(0.2)
    stdout, stderr = run.communicate(timeout=900)
    assert cancelled is not None, f"no job was caught mid-run: {stdout} {stderr}"
    assert run.returncode == 0, stderr
    run_folder = next((folder / "runs").iterdir())
    made = run_products(run_folder)
    expected = {k: v for k, v in run_products(one_worker).items() if k.startswith(("hypotheses", "disagreements"))}
    assert {k: made.get(k) for k in expected} == expected  # the arms one worker ran too: byte-identical
    assert len([k for k in made if k.startswith("hypotheses") and k.endswith(".ctm")]) == 2 * len(arms)
    assert all(path.stat().st_mtime_ns == mtime for path, mtime in finished_before.items())  # nothing redone
    record = json.loads((run_folder / "run.json").read_text(encoding="utf-8"))
    # What the cancelled job finished was read back, not made again.
    assert record["status"] == "complete" and record["computed"] + record["reused"] == 2 * len(arms)
    assert record["reused"] >= 1
    jobs = record["parallel"]["slurm"]["jobs"]
    states = {job: jobs[job]["state"] for job in jobs}
    assert states[cancelled] == "CANCELLED"
    assert "TIMEOUT" in states.values(), states  # the work outlasted a one-minute job
    assert len(jobs) >= 3  # the cancelled job and the one over its walltime were replaced


# --- faults: one line each, nothing written -------------------------------------------------


@pytest.mark.needs_model
@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ({"quue": "debug"}, "unknown key 'quue'; did you mean 'queue'?"),
        ({"walltime": "8 hours"}, "walltime '8 hours' is not a SLURM time"),
        ({"memory": "lots"}, "memory 'lots' is not an amount of memory"),
        ({"scale": "elastic"}, "scale must be one of 'fixed', 'adaptive'"),
        ({"processes": 2}, "processes (2) must not exceed cores (1)"),
    ],
)
def test_a_cluster_file_with_a_typo_or_a_bad_value_is_one_line_naming_the_file_and_key(
    tmp_path: Path, table: dict[str, object], problem: str
) -> None:
    path = _cluster_file(tmp_path)
    text = path.read_text(encoding="utf-8")
    for key, value in table.items():
        line = next((line for line in text.splitlines() if line.startswith(f"{key} =")), None)
        new = f"{key} = {json.dumps(value)}"
        text = text.replace(line, new) if line else text.replace("queue = ", f"{new}\nqueue = ")
        if key == "quue":
            text = text.replace('queue = "debug"\n', "")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load_cluster_file(path)
    assert str(raised.value).startswith(str(path)) and problem in str(raised.value)
    assert "\n" not in str(raised.value)


def _on_slurm(
    folder: Path, cluster: Path, env: dict[str, str], *extra: str, timeout: int = 600
) -> subprocess.CompletedProcess[str]:
    """The baseline arm of ``folder`` run on SLURM as ``cluster`` configures it, in a child process, output kept."""
    return subprocess.run(
        _ablate(folder, "--cluster", "slurm", "--cluster-config", str(cluster), *extra, arms=["baseline"]),
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )


def _fault(corpus: Path, name: str, slurm: SingleNodeSlurm, **changes: object) -> subprocess.CompletedProcess[str]:
    folder = _experiment(corpus, name)
    cluster = _cluster_file(folder, **changes)
    return _on_slurm(folder, cluster, _env(slurm), "--quiet")


@pytest.mark.needs_model
@needs_slurm
def test_a_queue_that_does_not_exist_is_refused_before_anything_is_written(
    corpus: Path, slurm: SingleNodeSlurm
) -> None:
    done = _fault(corpus, "no-queue", slurm, queue="gpu-large")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "queue 'gpu-large' does not exist; this cluster's queues are debug" in done.stderr
    assert not (corpus / "no-queue" / "runs").exists()


@pytest.mark.needs_model
@needs_slurm
def test_sbatch_missing_and_munge_not_running_are_one_line_each(
    corpus: Path, slurm: SingleNodeSlurm, tmp_path: Path
) -> None:
    folder = _experiment(corpus, "no-sbatch")
    cluster = _cluster_file(folder)
    bare = tmp_path / "bin"  # a PATH with python but no SLURM command
    bare.mkdir()
    done = _on_slurm(folder, cluster, {**_env(slurm), "PATH": str(bare)}, timeout=300)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "sbatch, squeue, scancel, sinfo not found on PATH" in done.stderr
    slurm.stop("munged")
    try:
        done = _fault(corpus, "no-munge", slurm)
    finally:
        slurm.start_munge()
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "SLURM cannot authenticate: munge is not running or not reachable here" in done.stderr
    assert not (folder / "runs").exists() and not (corpus / "no-munge" / "runs").exists()


@pytest.mark.needs_model
@pytest.mark.slow
@needs_slurm
def test_a_job_that_never_starts_fails_its_recordings_with_the_reason_and_the_run_resumes_later(
    corpus: Path, slurm: SingleNodeSlurm
) -> None:
    done = _fault(corpus, "pending", slurm, start_timeout_s=8, job_extra_directives=["--begin=now+3600"])
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("ablate: demo")]
    assert len(lines) == 2 and all("no SLURM job has run a worker for 8 s" in line for line in lines)
    assert all("PENDING (BeginTime)" in line for line in lines), lines
    assert "2 of 2 recordings failed" in done.stderr
    assert not any(state in ("PENDING", "RUNNING") for state in slurm.jobs().values())  # cancelled, none left behind
    record = json.loads(next((corpus / "pending" / "runs").glob("*/run.json")).read_text(encoding="utf-8"))
    assert record["status"] == "failed" and [f["recording"] for f in record["failures"]] == ["demo01", "demo02"]
    assert not list((corpus / "pending" / "runs").glob("*/outputs/*/*.json"))
    # Later, with jobs that start: the same command resumes the failed run and completes it.
    folder = corpus / "pending"
    again = _on_slurm(folder, _cluster_file(folder), _env(slurm), "--quiet")
    assert again.returncode == 0, again.stderr
    records = [json.loads(p.read_text(encoding="utf-8")) for p in (folder / "runs").glob("*/run.json")]
    assert [r["status"] for r in records] == ["complete"] and not records[0].get("failures")
    assert len(list((folder / "runs").glob("*/outputs/*/*.json"))) == 2


@pytest.mark.needs_model
@needs_slurm
def test_a_node_that_does_not_see_the_model_fails_each_recording_naming_the_job_and_the_model(
    corpus: Path, slurm: SingleNodeSlurm, tmp_path: Path
) -> None:
    from toolkit.asr.models import resolve_model

    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("no mount namespaces here (unshare -m): cannot give a job its own view of the files")
    model = tmp_path / "whisper-base-ct2"  # a model folder the coordinator sees and the job does not
    shutil.copytree(resolve_model("whisper-base").path, model)
    empty = tmp_path / "empty"
    empty.mkdir()
    blind = f'unshare -m sh -c \'mount --bind {empty} {model} && exec "$0" "$@"\' {sys.executable}'
    folder = _experiment(corpus, "no-model")
    toml = folder / "experiment.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace('model = "whisper-base"', f'model = "{model}"'))
    cluster = _cluster_file(folder, python=blind)
    done = _on_slurm(folder, cluster, _env(slurm), "--quiet")
    assert done.returncode == 1, done.stderr
    failed = [line for line in done.stderr.splitlines() if line.startswith("ablate: demo")]
    assert len(failed) == 2 and all(", SLURM job " in line and str(model) in line for line in failed), failed
    assert "2 of 2 recordings failed" in done.stderr


def _cli(capsys: pytest.CaptureFixture[str], folder: Path, *extra: str) -> tuple[int, list[str]]:
    """``ablate run`` through the command's own entry point: its exit status and its stderr lines."""
    from toolkit.cli import main

    status = main(["run", str(folder), "--split", "tuning", "--arms", ",".join(ARMS), "--quiet", *extra])
    return status, capsys.readouterr().err.splitlines()


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("foo", "no scheme such as tcp://"),
        ("localhost:8786", "no scheme such as tcp://"),
        ("tcp://localhost:99999", "port out of range 0-65535"),
        ("tcp://localhost", "no port number"),
        ("tcp://[::1:8786", "invalid ipv6 url"),
        ("http://localhost:8786", "scheme 'http' is not one of tcp, tls, ucx, ws, wss"),
    ],
)
def test_a_malformed_scheduler_address_is_one_line_naming_the_option_exit_2(
    corpus: Path, capsys: pytest.CaptureFixture[str], address: str, problem: str
) -> None:
    folder = _experiment(corpus, "scheduler-" + "".join(c if c.isalnum() else "-" for c in address))
    status, lines = _cli(capsys, folder, "--scheduler", address)
    assert status == 2
    assert lines == [
        f"ablate: error: --scheduler {address!r} is not a Dask scheduler address ({problem}); give "
        "tcp://HOST:PORT (what `dask scheduler` prints)"
    ]
    assert not (folder / "runs").exists()


@pytest.mark.needs_model
def test_more_local_workers_than_the_machine_holds_is_refused_before_anything_starts(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--workers 100000 --oversubscribe`` printed nothing for 300 s: now one line, asked against available."""
    folder = _experiment(corpus, "many-workers")
    began = time.monotonic()
    status, lines = _cli(capsys, folder, "--workers", "100000", "--oversubscribe")
    assert status == 2 and len(lines) == 1, lines
    cores = len(os.sched_getaffinity(0))
    assert lines[0].startswith("ablate: error: --workers 100000 would hold 100000 copies of the models, about ")
    assert f"GB available and {cores} cores; use --workers " in lines[0]
    assert time.monotonic() - began < 60  # refused before any worker or model started (loose: a loaded machine)
    assert not (folder / "runs").exists()


@pytest.mark.needs_model
def test_contradictory_placements_are_one_line(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _experiment(corpus, "placements")
    status, lines = _cli(
        capsys, folder, "--workers", "2", "--cluster", "slurm", "--cluster-config", str(_cluster_file(folder))
    )
    assert (
        status == 2
        and len(lines) == 1
        and lines[0].endswith("with --cluster slurm the cluster file's jobs: choose one")
    )
    status, lines = _cli(capsys, folder, "--workers", "0")
    assert (status, lines) == (2, ["ablate: error: --workers must be at least 1, not 0"])
    assert not (folder / "runs").exists()


@pytest.mark.needs_model
@pytest.mark.slow
def test_a_rerun_whose_decodes_are_cached_starts_no_model_in_this_process(one_worker: Path) -> None:
    """The one-worker path: a new run folder (the experiment file changed) whose every decode and VAD
    pass is in the cache loads no model (it spent 15.7 s starting workers and loading models)."""
    folder = one_worker.parents[1]
    (folder / "experiment.toml").write_text(
        (folder / "experiment.toml").read_text(encoding="utf-8") + "# a comment: a new run folder\n", encoding="utf-8"
    )
    again = run_experiment(load_experiment(folder), "tuning", ARMS, progress=False)
    assert again.folder.root != one_worker and (again.computed, again.reused) == (4, 0)
    record = again.folder.read_record().to_json()
    assert record["recognizer_loads"] == {} and record["stage_loads"] == {} and again.load_wall_s == 0
    assert record["reuse"]["decode"]["computed"] == 0 and record["reuse"]["vad"]["computed"] == 0
    hypotheses = {k: v for k, v in run_products(one_worker).items() if k.startswith("hypotheses")}
    assert {k: v for k, v in run_products(again.folder.root).items() if k.startswith("hypotheses")} == hypotheses


@pytest.mark.needs_model
def test_a_scheduler_address_jobs_could_not_reach_is_one_line(tmp_path: Path) -> None:
    """Not this machine's address, or loopback while the queue has other nodes: refused naming the file; loopback
    with this machine as the queue's only node (the single-node SLURM) is fine."""
    import socket

    from toolkit.pipeline.slurm import check_scheduler_address

    source = _cluster_file(tmp_path, scheduler_host="127.0.0.1")
    config = load_cluster_file(source).config
    here = socket.gethostname().split(".")[0]
    check_scheduler_address(config, source, [here])
    with pytest.raises(InputError) as raised:
        check_scheduler_address(config, source, [here, "node7"])
    assert str(raised.value) == (
        f"{source}: scheduler_host = '127.0.0.1' is the loopback address 127.0.0.1, which jobs on node7 cannot "
        "reach; set scheduler_host or scheduler_interface to this machine's address on the cluster's network"
    )
    foreign = load_cluster_file(_cluster_file(tmp_path, scheduler_host="192.0.2.7")).config  # TEST-NET-1
    with pytest.raises(InputError, match=r"scheduler_host = '192.0.2.7' is not an address of this machine"):
        check_scheduler_address(foreign, source, [here])
    both = _cluster_file(tmp_path, scheduler_interface="lo")
    with pytest.raises(InputError, match="set scheduler_host or scheduler_interface, not both"):
        load_cluster_file(both)
