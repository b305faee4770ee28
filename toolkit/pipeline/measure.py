"""Wall time, CPU time and peak resident memory of a block of work.

Peak memory is sampled from /proc/self/statm in a background thread (it sees the C++
allocations of CTranslate2 and onnxruntime that tracemalloc cannot), falling back to the
process-lifetime ``ru_maxrss`` where /proc is missing.
"""

from __future__ import annotations

import os
import resource
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass

_STATM = "/proc/self/statm"
_STATUS = "/proc/self/status"
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass
class Measurement:
    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_rss_mb: float = 0.0

    def add(self, other: Measurement) -> None:
        """Accumulate a sequential part: times add up, the peak is the larger one."""
        self.wall_s += other.wall_s
        self.cpu_s += other.cpu_s
        self.peak_rss_mb = max(self.peak_rss_mb, other.peak_rss_mb)

    def to_json(self) -> dict[str, float]:
        return {k: round(v, 4) for k, v in asdict(self).items()}


def _rss_mb() -> float:
    try:
        with open(_STATM) as handle:
            return int(handle.read().split()[1]) * _PAGE / 2**20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def lifetime_peak_rss_mb() -> float:
    """This process's peak resident memory so far: ``VmHWM`` from /proc/self/status.

    Not ``ru_maxrss``: Linux carries the parent's resident size at fork into a spawned child's
    ``ru_maxrss``, so a small worker started by a large process would report the large one's.
    """
    try:
        with open(_STATUS) as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@contextmanager
def measure(interval_s: float = 0.05) -> Iterator[Measurement]:
    """Measure the enclosed block; the yielded record is filled in when the block ends."""
    result = Measurement()
    peak = [_rss_mb()]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(interval_s):
            peak[0] = max(peak[0], _rss_mb())

    sampler = threading.Thread(target=sample, daemon=True)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    sampler.start()
    try:
        yield result
    finally:
        done.set()
        sampler.join()
        result.wall_s = time.perf_counter() - wall0
        result.cpu_s = time.process_time() - cpu0
        result.peak_rss_mb = max(peak[0], _rss_mb())
