"""Work measured on its own: one spawned process per model-holding service.

A service (a recognizer, an enhancer, a VAD) is built once in its own process, which loads its
model (measured apart from any recording), then answers requests. Each answer comes back with
the wall time and CPU time of that process while it worked, and its peak resident memory over the
load and that request, so a figure never includes another service's model, whatever ran before it,
and always includes its own.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from toolkit.core.errors import ToolkitError
from toolkit.pipeline.measure import Measurement, lifetime_peak_rss_mb, measure
from toolkit.runs.record import ServiceLoad

Build = Callable[..., Callable[[Any], Any]]  # module-level, so a spawned process can import it


@dataclass
class WorkerLoad:
    """Building one service in its worker: time, the worker's peak memory up to the loaded model
    (``rss_after_load_mb``: its start, imports and the load) and its lifetime peak.

    ``ready_wall_s`` is what the run waited: starting the process, its imports and the load.
    """

    wall_s: float
    cpu_s: float
    rss_after_load_mb: float
    ready_wall_s: float
    worker_peak_rss_mb: float | None = None

    def stored(self) -> ServiceLoad:
        """The load as run.json keeps it: seconds to 0.1 ms, memory to 0.1 MB."""
        return ServiceLoad(
            cpu_s=round(self.cpu_s, 4),
            ready_wall_s=round(self.ready_wall_s, 4),
            rss_after_load_mb=round(self.rss_after_load_mb, 1),
            wall_s=round(self.wall_s, 4),
            worker_peak_rss_mb=None if self.worker_peak_rss_mb is None else round(self.worker_peak_rss_mb, 1),
        )


def _serve(build: Build, args: tuple[Any, ...], connection: Connection) -> None:
    """Worker process: build the service, then answer requests until ``None``, each with its time and the peak
    resident memory of this process over the load and that request (toolkit.pipeline.measure).

    Errors are sent to the parent, which raises them as one line; a failed build ends the worker,
    a failed request does not. Ctrl-C is left to the parent, which stops every worker.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with measure(memory=False) as spent:
            handle = build(*args)
    except Exception as error:
        connection.send(("error", f"{type(error).__name__}: {error}"))
        return
    # Each answer's peak includes the load's: no request runs without the model, and so the largest answer of
    # one worker's requests is that worker's lifetime peak, whichever arm asked.
    spent.peak_rss_mb = loaded_peak = lifetime_peak_rss_mb()
    connection.send(("loaded", spent.to_json()))
    while (request := connection.recv()) is not None:
        try:
            with measure() as spent:
                response = handle(request)
        except Exception as error:
            connection.send(("error", f"{type(error).__name__}: {error}"))
            continue
        spent.peak_rss_mb = max(spent.peak_rss_mb, loaded_peak)
        connection.send(("done", response, spent.to_json()))
    connection.send(("closed", lifetime_peak_rss_mb()))


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT while a worker process starts: it inherits the ignore through exec, and Python then
    installs no KeyboardInterrupt handler in it. The parent alone answers Ctrl-C, stopping every worker."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may change signal handlers; Dask task threads start workers too
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class Worker:
    """One service in its own spawned process (no inherited threads or loaded models)."""

    def __init__(self, label: str, build: Build, args: tuple[Any, ...]) -> None:
        context = multiprocessing.get_context("spawn")
        began = time.perf_counter()
        self.label = label
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(build, args, child), daemon=True, name=label)
        with _sigint_ignored():  # the worker starts with Ctrl-C ignored: no KeyboardInterrupt trace from it
            self.process.start()
        child.close()
        try:
            loaded = Measurement(**self._receive("loaded")[0])
        except ToolkitError:
            self.kill()
            raise
        self.load = WorkerLoad(loaded.wall_s, loaded.cpu_s, loaded.peak_rss_mb, time.perf_counter() - began)

    def _receive(self, expected: str) -> tuple[Any, ...]:
        try:
            kind, *payload = self.connection.recv()
        except (EOFError, ConnectionResetError):
            self.process.join(5)
            raise ToolkitError(
                f"{self.label}: its worker process ended unexpectedly (exit code {self.process.exitcode})"
            ) from None
        if kind == "error":
            raise ToolkitError(f"{self.label}: {payload[0]}")
        if kind != expected:
            raise RuntimeError(f"{self.label}: worker sent {kind!r}, expected {expected!r}")
        return tuple(payload)

    def call(self, request: Any) -> tuple[Any, Measurement]:
        """The service's answer to ``request`` and what producing it cost in this worker."""
        self.connection.send(request)
        response, spent = self._receive("done")
        return response, Measurement(**spent)

    def close(self) -> None:
        """Stop the worker, recording its lifetime peak memory."""
        if self.process.is_alive():
            self.connection.send(None)
            self.load.worker_peak_rss_mb = self._receive("closed")[0]
            self.process.join(10)
        self.connection.close()

    def kill(self) -> None:
        self.process.kill()
        self.process.join()
        self.connection.close()


class WorkNeeded(ToolkitError):
    """A service had to start where starting is not allowed (a coordinator reading results from the cache)."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"{name}: work that is not in the cache")


class Workers:
    """Named workers, started on first use (a unit that needs the service) and stopped together.

    With ``may_start`` false, a worker that is not running raises :class:`WorkNeeded` instead of
    starting: what lets a coordinator finish from the cache whatever needs no model.
    """

    def __init__(self) -> None:
        self._workers: dict[str, Worker] = {}
        self.may_start = True

    def get(self, name: str, build: Build, args: tuple[Any, ...]) -> Worker:
        """The worker called ``name``, started with ``build(*args)`` if it is not running; a service
        that cannot be built raises here (and every worker is stopped)."""
        if name not in self._workers:
            if not self.may_start:
                raise WorkNeeded(name)
            try:
                self._workers[name] = Worker(name, build, args)
            except BaseException:
                self.kill()
                raise
        return self._workers[name]

    def loads(self) -> dict[str, WorkerLoad]:
        return {name: worker.load for name, worker in self._workers.items()}

    def started_wall_s(self) -> float:
        """Wall time spent so far starting these workers and loading their services."""
        return sum(worker.load.ready_wall_s for worker in self._workers.values())

    def close(self) -> None:
        for worker in self._workers.values():
            worker.close()

    def kill(self) -> None:
        for worker in self._workers.values():
            worker.kill()
        self._workers.clear()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.close()
        else:  # an error is already on its way: do not wait on a worker
            self.kill()
