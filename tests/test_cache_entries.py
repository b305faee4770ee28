"""A cached Silero pass is one record with one reader and one writer; an entry of the wrong shape is
computed again (as an unreadable one is), never a traceback in a run or in the app's stretches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolkit.pipeline.cache import ResultCache, read_vad_entry, write_vad_entry
from toolkit.pipeline.measure import Measurement


def test_a_vad_entry_is_written_as_before_and_read_back(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    regions = [(0.5, 2.25), (3.0, 7.5)]
    spent = Measurement(wall_s=0.12345, cpu_s=0.2, peak_rss_mb=300.0)
    entry = write_vad_entry(cache, "ab" * 32, regions, spent)
    # The file holds exactly what the runner wrote before the record existed: cache keys and entries stay valid.
    assert cache.get("ab" * 32) == {"regions": [[0.5, 2.25], [3.0, 7.5]], "measurement": spent.to_json()}
    assert read_vad_entry(cache, "ab" * 32) == entry and list(entry.regions) == regions
    assert read_vad_entry(cache, "cd" * 32) is None


@pytest.mark.parametrize(
    "data",
    [
        {"regions": "0 1"},
        {"regions": [[1.0, 0.5]], "measurement": {}},
        {"regions": [[0.0, 1.0, 2.0]], "measurement": {}},
        {"regions": [[0.0, 1.0]]},
        {"regions": [[0.0, "1"]], "measurement": {}},
        {"regions": [], "measurement": {"wall_s": "fast"}},
        [[0.0, 1.0]],
    ],
)
def test_an_entry_of_the_wrong_shape_is_computed_again(tmp_path: Path, data: object) -> None:
    cache = ResultCache(tmp_path)
    cache.put("ef" * 32, data)  # type: ignore[arg-type]
    assert json.loads((tmp_path / "ef" / f"{'ef' * 32}.json").read_text()) == data
    assert read_vad_entry(cache, "ef" * 32) is None
