"""``ablate run --cluster slurm`` on a SLURM of three hosts, each its own network and UTS namespace
(tests/multi_node_slurm.py): slurmctld and the coordinating ``ablate run`` on a ``login`` machine whose
bridge (10.213.0.1) the hosts reach over veth pairs, one slurmd with one CPU per host.

The demo experiment's tuning split spread over the three hosts is byte-identical to ``--workers 1``,
with per-node figures and each node's verified model hash in ``run.json`` and the report; a scheduler
on a loopback address is refused before anything is submitted; a path one host does not see fails
each recording sent there in one line naming the host and the path; a host lost mid-run (its veth cut,
its slurmd and workers killed) has its recording rescheduled on the others, nothing finished redone,
the same bytes; a coordinator killed mid-run leaves jobs that the same command, rerun, cancels before
it resumes and completes the run. One cluster serves the module; the lost host is the last test's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from multi_node_slurm import LOGIN_ADDRESS, MultiNodeSlurm, host_address, missing, multi_node_slurm
from run_products import run_products
from test_slurm import _cluster_file, _experiment

from toolkit.corpus.freeze import freeze
from toolkit.evaluate import evaluate_run
from toolkit.pipeline.engine import run_experiment
from toolkit.pipeline.experiment import load_experiment
from toolkit.runs.folder import RunFolder

ROOT = Path(__file__).resolve().parents[1]
ARMS = ["baseline", "vad"]
RECORDINGS = 4  # more than the three jobs: the jobs are bounded, each worker takes several recordings
CLUSTER_MISSING = missing()
# CI sets this (.ci/run): there a kernel that refuses namespaces fails these tests instead of skipping them.
SLURM_REQUIRED = os.environ.get("ABLATE_REQUIRE_SLURM") == "1"
needs_cluster = pytest.mark.skipif(
    CLUSTER_MISSING is not None and not SLURM_REQUIRED, reason=f"no namespace SLURM cluster here: {CLUSTER_MISSING}"
)
pytestmark = [pytest.mark.needs_model, pytest.mark.slow, needs_cluster]


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MultiNodeSlurm]:
    """The three-host cluster for this module; node2 has its own mount namespace (a path can be hidden there)."""
    if CLUSTER_MISSING is not None:
        (pytest.fail if SLURM_REQUIRED else pytest.skip)(f"no namespace SLURM cluster here: {CLUSTER_MISSING}")
    with multi_node_slurm(tmp_path_factory.mktemp("slurm-multi"), hosts=3, private_mounts=("node2",)) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four demo recordings (as ``ablate demo`` builds them, 45 s each), all in the tuning split."""
    from toolkit.demo import build_corpus

    root = tmp_path_factory.mktemp("multi-corpus")
    built = build_corpus(root / "corpus", recordings=RECORDINGS, recording_seconds=45.0)
    splits = root / "splits.csv"
    splits.write_text("id,split\n" + "".join(f"{r.recording_id},tuning\n" for r in built.recordings), encoding="utf-8")
    freeze(root / "corpus" / "audio", root / "corpus" / "refs", root / "corpus" / "manifest.json", splits_csv=splits)
    return root


@pytest.fixture(scope="module")
def one_worker(corpus: Path) -> Path:
    """``--workers 1`` on the same experiment (in this machine's own namespace): what every cluster run must equal."""
    summary = run_experiment(load_experiment(_experiment(corpus, "one")), "tuning", ARMS, progress=False)
    evaluate_run(summary.folder)
    return summary.folder.root


def _cluster(folder: Path, **changes: object) -> Path:
    """Three one-core jobs, the scheduler on the login machine's bridge, the workers on each host's eth0."""
    table: dict[str, object] = {
        "jobs": 3,
        "scheduler_host": "",
        "scheduler_interface": "br0",
        "interface": "eth0",
        "node_timeout_s": 10,
    }
    return _cluster_file(folder, **{**table, **changes})


def _coordinator(slurm: MultiNodeSlurm, folder: Path, cluster: Path, *extra: str) -> subprocess.Popen[str]:
    """``ablate run`` on the login machine (as one runs it on a cluster's login node), output kept."""
    command = [sys.executable, "-m", "toolkit", "run", str(folder), "--split", "tuning", "--arms", ",".join(ARMS)]
    return subprocess.Popen(
        [*slurm.in_login(), *command, "--cluster", "slurm", "--cluster-config", str(cluster), "--quiet", *extra],
        env={
            **slurm.env,
            "PYTHONPATH": str(ROOT),
            "HF_HUB_OFFLINE": "1",
            "PYANNOTE_METRICS_ENABLED": "false",
            "TOKENIZERS_PARALLELISM": "false",
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


def _finish(run: subprocess.Popen[str], timeout: int = 600) -> tuple[int, str]:
    _, stderr = run.communicate(timeout=timeout)
    return run.returncode, stderr


def _record(folder: Path) -> dict:
    return json.loads(next((folder / "runs").glob("*/run.json")).read_text(encoding="utf-8"))


def test_the_tuning_split_across_three_hosts_equals_one_worker_with_per_node_figures(
    corpus: Path, one_worker: Path, slurm: MultiNodeSlurm
) -> None:
    folder = _experiment(corpus, "three-hosts")
    code, stderr = _finish(_coordinator(slurm, folder, _cluster(folder)))
    assert code == 0, stderr
    run_folder = next((folder / "runs").iterdir())
    evaluation = evaluate_run(RunFolder(run_folder))
    assert run_products(run_folder) == run_products(one_worker)
    record = _record(folder)
    assert record["status"] == "complete" and record["failures"] == []
    parallel = record["parallel"]
    assert parallel["scheduler"].startswith(f"tcp://{LOGIN_ADDRESS}:")  # the bridge, not 127.0.0.1
    jobs = parallel["slurm"]["jobs"]
    # Bounded: three long-lived jobs for four recordings, one on each host.
    assert len(jobs) == 3 and sorted(job["node"] for job in jobs.values()) == ["node1", "node2", "node3"]
    # Which worker takes which recording is Dask's choice (a job that starts late may find none left);
    # here the recordings went to two hosts at least.
    assert len({job["node"] for job in jobs.values() if job["recordings"]}) >= 2, jobs
    nodes = parallel["nodes"]
    assert sorted(r for node in nodes.values() for r in node["recordings"]) == sorted(
        json.loads((corpus / "corpus" / "manifest.json").read_text(encoding="utf-8"))["recordings"][i]["id"]
        for i in range(RECORDINGS)
    )
    weights = record["config"]["recognizers"]["whisper_base"]["weights_sha256"]
    for name, node in nodes.items():
        # Each host that ran a unit hashed the model's weights first: the coordinator's hash.
        assert node["slurm_jobs"] and node["peak_rss_mb"] > 0, (name, node)
        if node["recordings"]:
            assert node["units_computed"] >= 1 and node["cpu_s"] > 0, (name, node)
            assert node["models_sha256"]["whisper_base"] == weights, (name, node)
    assert sum(node["units_computed"] for node in nodes.values()) == sum(
        counts["computed"] for kind, counts in record["reuse"].items() if kind != "arm_results"
    )
    report = (run_folder / "report.md").read_text(encoding="utf-8")
    assert "Per node (the hosts of the cluster's workers):" in report and "node3" in report
    assert evaluation.record.parallel == parallel


def test_a_scheduler_on_a_loopback_address_is_refused_naming_the_other_nodes(
    corpus: Path, slurm: MultiNodeSlurm
) -> None:
    """On the login machine (no default route) Dask alone would pick 127.0.0.1: refused, as is saying so."""
    for name, changes in (
        ("loopback", {"scheduler_host": "127.0.0.1", "scheduler_interface": ""}),
        ("unset", {"scheduler_interface": "", "interface": ""}),
    ):
        folder = _experiment(corpus, f"scheduler-{name}")
        code, stderr = _finish(_coordinator(slurm, folder, _cluster(folder, **changes)), timeout=300)
        assert code == 2 and stderr.count("\n") == 1, stderr
        assert "the loopback address 127.0.0.1, which jobs on node1, node2, node3 cannot reach" in stderr
        assert not (folder / "runs").exists()
    # The workers' interface alone: the scheduler would listen on it too, and the login machine has no eth0.
    folder = _experiment(corpus, "scheduler-eth0")
    code, stderr = _finish(_coordinator(slurm, folder, _cluster(folder, scheduler_interface="")), timeout=300)
    assert code == 2 and "interface = 'eth0' is not a network interface of this machine (with neither" in stderr
    folder = _experiment(corpus, "scheduler-ib0")
    code, stderr = _finish(_coordinator(slurm, folder, _cluster(folder, scheduler_interface="ib0")), timeout=300)
    assert code == 2 and "scheduler_interface = 'ib0' is not a network interface of this machine (it has br0, lo" in (
        stderr
    )


def test_a_path_one_host_does_not_see_fails_its_recordings_naming_the_host_and_the_path(
    corpus: Path, slurm: MultiNodeSlurm, tmp_path: Path
) -> None:
    """node2's own view of the file system hides the corpus audio; jobs on node2 fail each recording in one line
    before any model starts there."""
    audio = corpus / "corpus" / "audio"
    empty = tmp_path / "empty"
    empty.mkdir()
    node2 = slurm.hosts["node2"]
    node2.run("mount", "--bind", str(empty), str(audio))
    try:
        folder = _experiment(corpus, "blind-node")
        cluster = _cluster(folder, jobs=1, job_extra_directives=["--nodelist=node2"])
        code, stderr = _finish(_coordinator(slurm, folder, cluster), timeout=300)
    finally:
        node2.run("umount", str(audio))
    assert code == 1, stderr
    failed = [line for line in stderr.splitlines() if line.startswith("ablate: demo")]
    assert len(failed) == RECORDINGS, stderr
    assert all(f"({audio}/" in line or f"{audio}/" in line for line in failed), failed
    assert all("(audio) does not resolve on host node2; every node must see it" in line for line in failed), failed
    record = _record(folder)
    assert record["recognizer_loads"] == {}  # refused before any model started


def test_a_coordinator_killed_mid_run_leaves_jobs_the_rerun_cancels_then_completes(
    corpus: Path, one_worker: Path, slurm: MultiNodeSlurm
) -> None:
    folder = _experiment(corpus, "coordinator-killed")
    cluster = _cluster(folder)
    run = _coordinator(slurm, folder, cluster)
    done = _first_result(folder, run)
    run.send_signal(signal.SIGKILL)  # the login node's process dies: its jobs go on until SLURM or Dask end them
    run.wait()
    left = {job for job, state in slurm.jobs().items() if state in ("RUNNING", "PENDING")}
    assert left, "the killed coordinator's jobs should still be in the queue"
    finished = {p: p.stat().st_mtime_ns for p in (folder / "runs").glob("*/outputs/*/*.json")}
    assert set(done) <= set(finished)
    code, stderr = _finish(_coordinator(slurm, folder, cluster))
    assert code == 0, stderr
    record = _record(folder)
    assert record["status"] == "complete" and set(record["parallel"]["slurm"]["earlier_jobs_cancelled"]) == left
    assert all(p.stat().st_mtime_ns == mtime for p, mtime in finished.items())  # nothing finished was redone
    run_folder = next((folder / "runs").iterdir())
    evaluate_run(RunFolder(run_folder))
    assert run_products(run_folder) == run_products(one_worker)


def _first_result(folder: Path, run: subprocess.Popen[str]) -> list[Path]:
    """Wait for the run's first arm result on disk; the results there then."""
    deadline = time.monotonic() + 400
    while time.monotonic() < deadline:
        assert run.poll() is None, run.communicate()
        done = list((folder / "runs").glob("*/outputs/*/*.json"))
        if done:
            return done
        time.sleep(0.2)
    raise AssertionError("no result within 400 s")


def test_a_host_lost_mid_run_has_its_recording_rescheduled_and_the_result_equals_one_worker(
    corpus: Path, one_worker: Path, slurm: MultiNodeSlurm
) -> None:
    """Last in this module: node3 does not come back. Once a result is on disk every worker is busy (four
    recordings on three); node3 is cut from the bridge and every process on it killed, as a power cut does."""
    folder = _experiment(corpus, "host-lost")
    run = _coordinator(slurm, folder, _cluster(folder), "--no-score")
    _first_result(folder, run)
    jobs = slurm.command("squeue", "-h", "-o", "%i %N %T")
    assert any(line.split()[1:] == ["node3", "RUNNING"] for line in jobs.splitlines()), jobs
    finished = {p: p.stat().st_mtime_ns for p in (folder / "runs").glob("*/outputs/*/*.json")}
    slurm.lose("node3")
    code, stderr = _finish(run)
    assert code == 0, stderr
    run_folder = next((folder / "runs").iterdir())
    assert all(p.stat().st_mtime_ns == mtime for p, mtime in finished.items())  # nothing finished was redone
    evaluate_run(RunFolder(run_folder))
    assert run_products(run_folder) == run_products(one_worker)
    record = _record(folder)
    assert record["status"] == "complete" and record["failures"] == []
    nodes = record["parallel"]["nodes"]
    # Every recording was finished somewhere; whatever node3 was decoding when it was lost was finished
    # on node1 or node2.
    assert sum(len(node["recordings"]) for node in nodes.values()) == RECORDINGS
    # node3's worker held a recording (running, or queued behind it) when it was lost: Dask sent it to
    # node1 or node2. No other worker left while holding one (the run gives no busy job back).
    rescheduled = record["parallel"]["rescheduled"]
    assert [left["worker"].split(":")[1] for left in rescheduled] == [f"//{host_address(3)}"], rescheduled
    assert set(rescheduled[0]["recordings"]) <= set(nodes["node1"]["recordings"] + nodes["node2"]["recordings"])
