"""Each recognizer of a run in its own worker process, loaded once and shared by every arm.

A decode's wall time, CPU time and peak resident memory are measured inside that recognizer's
worker, which holds its model and nothing else, so an arm's figures do not depend on which
other arms (and models) ran before it. Loading the model is measured apart from any recording.
Workers start on first use (or by ``start``); an unchanged rerun starts none.
"""

from __future__ import annotations

import multiprocessing
import resource
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Iterable

from toolkit.asr.segments import Transcript
from toolkit.audio.signal import Signal
from toolkit.errors import ToolkitError
from toolkit.experiment import Experiment
from toolkit.measure import Measurement, measure


@dataclass
class Decoded:
    """One decode done by a recognizer's worker: the transcript, its measured cost, the recognizer's notes."""

    transcript: Transcript
    measurement: Measurement
    notes: dict[str, Any]


@dataclass
class RecognizerLoad:
    """Loading one recognizer in its worker: time, memory after loading, and the worker's lifetime peak.

    ``ready_wall_s`` is what the run waited: starting the process, its imports and the load.
    """

    wall_s: float
    cpu_s: float
    rss_after_load_mb: float
    ready_wall_s: float
    worker_peak_rss_mb: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"wall_s": round(self.wall_s, 4), "cpu_s": round(self.cpu_s, 4),
                "ready_wall_s": round(self.ready_wall_s, 4),
                "rss_after_load_mb": round(self.rss_after_load_mb, 1),
                "worker_peak_rss_mb": None if self.worker_peak_rss_mb is None else round(self.worker_peak_rss_mb, 1)}


def _serve(spec: dict[str, Any], seed: int, connection: Connection) -> None:
    """Worker process: load the recognizer, then decode ``(samples, sample_rate)`` requests until ``None``."""
    import ctranslate2

    from toolkit.asr import make_recognizer

    try:
        with measure() as spent:
            recognizer = make_recognizer(spec)
            recognizer.load()
        connection.send(("loaded", spent.to_json()))
        while (request := connection.recv()) is not None:
            ctranslate2.set_random_seed(seed)  # so temperature fallback sampling repeats
            with measure() as spent:
                transcript = recognizer.transcribe(Signal.original(*request))
            connection.send(("decoded", transcript, spent.to_json(), dict(recognizer.notes)))
        connection.send(("closed", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
    except Exception as error:  # sent to the parent, which raises it as one line
        connection.send(("error", f"{type(error).__name__}: {error}"))


class _Worker:
    def __init__(self, name: str, spec: dict[str, Any], seed: int) -> None:
        context = multiprocessing.get_context("spawn")  # no inherited threads or loaded models
        began = time.perf_counter()
        self.name = name
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(spec, seed, child), daemon=True,
                                       name=f"recognizer-{name}")
        self.process.start()
        child.close()
        try:
            loaded = Measurement(**self.receive("loaded")[0])
        except ToolkitError:
            self.process.kill()
            raise
        self.load = RecognizerLoad(loaded.wall_s, loaded.cpu_s, loaded.peak_rss_mb, time.perf_counter() - began)

    def receive(self, expected: str) -> tuple[Any, ...]:
        try:
            kind, *payload = self.connection.recv()
        except EOFError:
            self.process.join(5)
            raise ToolkitError(f"recognizer {self.name}: its worker process ended unexpectedly "
                               f"(exit code {self.process.exitcode})") from None
        if kind == "error":
            raise ToolkitError(f"recognizer {self.name}: {payload[0]}")
        assert kind == expected, f"worker sent {kind}, expected {expected}"
        return tuple(payload)

    def close(self) -> None:
        if self.process.is_alive():
            self.connection.send(None)
            self.load.worker_peak_rss_mb = self.receive("closed")[0]
            self.process.join(10)
        self.connection.close()


class RecognizerPool:
    """Recognizers of one experiment: identities (model hash, decoding) up front, decoding in workers."""

    def __init__(self, experiment: Experiment) -> None:
        from toolkit.asr import make_recognizer

        self._specs = experiment.recognizers
        self.seed = experiment.seed
        # Resolved and verified here (weights hashed), loaded only in the workers.
        self._recognizers: dict[str, Any] = {
            name: make_recognizer(spec.to_json()) for name, spec in self._specs.items()
        }
        self._workers: dict[str, _Worker] = {}

    def start(self, names: Iterable[str]) -> None:
        """Start and load the workers of ``names`` not running yet; a model that cannot load raises here
        (and every worker is stopped)."""
        try:
            for name in names:
                if name not in self._workers:
                    self._workers[name] = _Worker(name, self._specs[name].to_json(), self.seed)
        except BaseException:
            self._kill()
            raise

    def transcribe(self, name: str, signal: Signal) -> Decoded:
        """Decode ``signal`` (times in its own seconds) in recognizer ``name``'s worker."""
        self.start([name])
        worker = self._workers[name]
        worker.connection.send((signal.samples, signal.sample_rate))
        transcript, spent, notes = worker.receive("decoded")
        return Decoded(transcript, Measurement(**spent), notes)

    def loads(self) -> dict[str, RecognizerLoad]:
        """Load figures of the recognizers whose workers this pool started."""
        return {name: worker.load for name, worker in self._workers.items()}

    def close(self) -> None:
        """Stop every worker (recording each one's lifetime peak memory)."""
        for worker in self._workers.values():
            worker.close()

    def __enter__(self) -> "RecognizerPool":
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.close()
        else:  # an error is already on its way: do not wait on a worker
            self._kill()

    def _kill(self) -> None:
        for worker in self._workers.values():
            worker.process.kill()
            worker.process.join()
        self._workers.clear()

    def identity(self, name: str) -> dict[str, Any]:
        return {"name": name, "label": self._specs[name].label, "seed": self.seed,
                **self._recognizers[name].identity()}

    def identities(self) -> dict[str, dict[str, Any]]:
        return {name: self.identity(name) for name in self._recognizers}
