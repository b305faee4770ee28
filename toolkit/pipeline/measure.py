"""Wall time, CPU time and peak resident memory of a block of work.

Peak memory is the kernel's high-water mark of resident memory (``VmHWM`` in /proc/self/status), set back to
the current resident size when a block starts (``5`` written to /proc/self/clear_refs, Linux 4.0 and later): an
exact peak, which sees the C++ allocations of CTranslate2 and onnxruntime that tracemalloc cannot, measured the
same way as a process's lifetime peak. Where the mark cannot be set back, /proc/self/statm is sampled in a
background thread instead (a peak shorter than the interval is missed); where /proc is missing, the
process-lifetime ``ru_maxrss``.
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
_CLEAR_REFS = "/proc/self/clear_refs"
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


class _Marks:
    """This process's high-water marks: the peak before the mark was last set back, and the blocks measuring now
    (the mark is set back only when none is, so a block in another thread keeps its peak)."""

    lock = threading.Lock()
    before_reset_mb = 0.0
    active = 0


def _rss_mb() -> float:
    try:
        with open(_STATM) as handle:
            return int(handle.read().split()[1]) * _PAGE / 2**20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _high_water_mb() -> float | None:
    """``VmHWM``: the peak resident memory since the process started or its mark was last set back."""
    try:
        with open(_STATUS) as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _reset_high_water() -> bool:
    """Set the high-water mark back to the current resident size, keeping the peak so far; False where the kernel
    does not allow it. Called with ``_Marks.lock`` held."""
    before = _high_water_mb()
    if before is None:
        return False
    try:
        with open(_CLEAR_REFS, "w") as handle:
            handle.write("5")
    except OSError:
        return False
    _Marks.before_reset_mb = max(_Marks.before_reset_mb, before)
    return True


def lifetime_peak_rss_mb() -> float:
    """This process's peak resident memory since it started: ``VmHWM``, and the peak before any block set it back.

    Not ``ru_maxrss``: Linux carries the parent's resident size at fork into a spawned child's
    ``ru_maxrss``, so a small worker started by a large process would report the large one's.
    """
    with _Marks.lock:
        mark = _high_water_mb()
        if mark is None:
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return max(_Marks.before_reset_mb, mark)


@contextmanager
def measure(memory: bool = True, interval_s: float = 0.05) -> Iterator[Measurement]:
    """Measure the enclosed block; the yielded record is filled in when the block ends. With ``memory``, its peak
    resident memory: the high-water mark from the block's start (from an earlier start when another block of
    this process was measuring then, so never below the block's own peak); without, the peak stays 0."""
    result = Measurement()
    with _Marks.lock:
        exact = memory and (_Marks.active > 0 or _reset_high_water())
        _Marks.active += exact
    sampler = None if exact or not memory else _Sampler(interval_s)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    try:
        yield result
    finally:
        result.wall_s = time.perf_counter() - wall0
        result.cpu_s = time.process_time() - cpu0
        if exact:
            with _Marks.lock:
                result.peak_rss_mb = _high_water_mb() or 0.0
                _Marks.active -= 1
        elif sampler is not None:
            result.peak_rss_mb = sampler.stop()


class _Sampler:
    """Resident memory sampled every ``interval_s`` in a background thread, for a kernel that cannot set the
    high-water mark back."""

    def __init__(self, interval_s: float) -> None:
        self.peak = _rss_mb()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, args=(interval_s,), daemon=True)
        self.thread.start()

    def _sample(self, interval_s: float) -> None:
        while not self.done.wait(interval_s):
            self.peak = max(self.peak, _rss_mb())

    def stop(self) -> float:
        """The largest resident size seen, the last one included."""
        self.done.set()
        self.thread.join()
        return max(self.peak, _rss_mb())
