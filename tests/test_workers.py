"""Worker processes: a service that cannot be built, or a request that fails, is one clear line."""

from __future__ import annotations

import pytest

from toolkit.asr import make_recognizer
from toolkit.core.errors import ToolkitError
from toolkit.pipeline.workers import Workers


def test_a_service_that_cannot_be_built_is_one_line_and_stops_every_worker() -> None:
    workers = Workers()
    with pytest.raises(ToolkitError, match=r"^recognizer bad: InputError: nope: unknown recognizer backend"):
        workers.get("recognizer bad", make_recognizer, ({"backend": "nope"},))
    assert workers.loads() == {}


def test_a_failing_request_is_reported_and_the_worker_measures_its_own_work() -> None:
    with Workers() as workers:
        worker = workers.get("sorter", _sorter, ())
        answer, spent = worker.call([3, 1, 2])
        assert answer == [1, 2, 3] and spent.wall_s >= 0 and spent.peak_rss_mb > 0
        with pytest.raises(ToolkitError, match=r"^sorter: TypeError"):
            worker.call([1, "a"])
    assert workers.loads()["sorter"].worker_peak_rss_mb > 0


def _sorter():
    return sorted


def test_each_answer_counts_the_load_and_its_own_peak_only_and_the_largest_is_the_workers_peak() -> None:
    """A service that holds ~100 MB once built, and allocates what each request asks: an answer's peak covers
    the load and that request's spike (however short), not an earlier request's."""
    with Workers() as workers:
        worker = workers.get("allocator", _allocator, ())
        loaded = worker.load.rss_after_load_mb
        peaks = [worker.call(megabytes)[1].peak_rss_mb for megabytes in (300, 0, 50)]
    assert loaded > 100
    assert peaks[0] > loaded + 250 and loaded <= peaks[1] < peaks[0] - 250 and peaks[1] <= peaks[2] < peaks[0]
    assert workers.loads()["allocator"].worker_peak_rss_mb == pytest.approx(max(peaks), abs=0.1)


def _allocator():
    import numpy as np

    held = np.ones(100 * 2**20 // 8)  # the "model"

    def allocate(megabytes: int) -> float:
        spike = np.ones(megabytes * 2**20 // 8)  # freed on return: a spike no sampler is sure to see
        return float(spike.sum() + held[0])

    return allocate
