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
