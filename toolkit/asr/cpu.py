"""Which CPU code CTranslate2 runs on this machine: instruction set, GEMM backends, compute type.

CTranslate2 picks its kernels by instruction set (``CT2_FORCE_CPU_ISA`` forces GENERIC, AVX,
AVX2 or AVX512) and its GEMM library by CPU vendor, so the same audio, model and seed give
slightly different words on another CPU. Every run records this per recognizer, and cache keys
include it, so one machine's words are never handed to another. It is read from CTranslate2's
own log (``CT2_VERBOSE=1``) while a separate process loads the model, and kept on disk per
machine: the selection depends only on the CPU, the library version and the environment.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

from toolkit.core.devices import FORCE_VARIABLE
from toolkit.core.errors import ToolkitError


class CannotLoad(ToolkitError):
    """CTranslate2 refused to load the model here; ``detail`` is its own message (first line)."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(detail)


_FIELDS = {
    "cpu": r"\] CPU: (\S+)",
    "isa": r"Selected ISA: (\S+)",
    "intel_mkl": r"Use Intel MKL: (\S+)",
    "sgemm": r"SGEMM backend: (\S+)",
    "gemm_s8": r"GEMM_S8 backend: (\S+)",
    "compute_type": r"Selected compute type: (\S+)",
}
_PROBE = (
    "import sys, ctranslate2; "
    "m = ctranslate2.models.Whisper(sys.argv[1], device='cpu', compute_type=sys.argv[2], intra_threads=1); "
    "print('n_mels', m.n_mels)"
)


def ctranslate2_cpu(model_path: str, compute_type: str) -> dict[str, str | None]:
    """What CTranslate2 selects here for this model and compute type (isa, gemm backends, compute type, ...),
    and the model's mel bins (``n_mels``: 128 for large-v3, 80 before)."""
    return dict(_probe(model_path, compute_type, os.environ.get(FORCE_VARIABLE), _machine_key()))


def _machine_key() -> str:
    """The CPU as CTranslate2 sees it (vendor, model, flags) and the library version."""
    from importlib import metadata

    try:
        info = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        info = ""
    first = info.split("\n\n", 1)[0]
    wanted = [line for line in first.splitlines() if line.split(":")[0].strip() in ("vendor_id", "model name", "flags")]
    return json.dumps([metadata.version("ctranslate2"), sys.platform, os.uname().machine, wanted])


@cache
def _probe(model_path: str, compute_type: str, forced: str | None, machine: str) -> tuple[tuple[str, str | None], ...]:
    from toolkit.core.files import atomic_write_json, config_hash, machine_cache

    stored = machine_cache("cpu") / f"{config_hash([model_path, compute_type, forced, machine, 'n_mels'])}.json"
    try:
        return tuple(json.loads(stored.read_text(encoding="utf-8")).items())
    except (OSError, ValueError, AttributeError):
        pass
    found = _ask_ctranslate2(model_path, compute_type, forced)
    atomic_write_json(stored, found)
    return tuple(found.items())


def _ask_ctranslate2(model_path: str, compute_type: str, forced: str | None) -> dict[str, str | None]:
    env = {**os.environ, "CT2_VERBOSE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, model_path, compute_type], env=env, capture_output=True, text=True, timeout=300
    )
    log = done.stderr
    if done.returncode != 0:
        last = next((line for line in reversed(log.strip().splitlines()) if line.strip()), "no message")
        setting = f" ({FORCE_VARIABLE}={forced})" if forced else ""
        raise CannotLoad(re.sub(r"^\w+(Error|Exception): ", "", last) + setting)
    found: dict[str, str | None] = {
        name: (m.group(1) if (m := re.search(pattern, log)) else None) for name, pattern in _FIELDS.items()
    }
    found["forced_isa"] = forced
    mels = re.search(r"^n_mels (\d+)$", done.stdout, re.MULTILINE)
    found["n_mels"] = mels.group(1) if mels else None
    return found
