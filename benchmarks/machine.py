"""What a speed figure was measured on: the CPU, the code CTranslate2 selected there, and the load.

CTranslate2 picks its kernels by instruction set (``CT2_FORCE_CPU_ISA`` forces one) and its GEMM
library by CPU vendor, so a ratio measured on one CPU need not hold on another: every speed
benchmark prints this line with its figures.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def machine() -> dict[str, Any]:
    """CPU model, cores, CTranslate2's selection for the bundled model (int8), forced ISA, load, time."""
    from toolkit.asr.cpu import ctranslate2_cpu
    from toolkit.asr.models import resolve_model
    from toolkit.core.devices import FORCE_VARIABLE

    selected = ctranslate2_cpu(resolve_model("whisper-base").path, "int8")
    return {
        "cpu": cpu_model(),
        "cores": len(os.sched_getaffinity(0)),
        "isa": selected.get("isa"),
        "gemm_s8": selected.get("gemm_s8"),
        "forced_isa": os.environ.get(FORCE_VARIABLE),
        "load_average": round(os.getloadavg()[0], 2),
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def describe(figures: dict[str, Any] | None = None) -> str:
    """One line: ``CPU AMD EPYC (2 cores), CTranslate2 ISA AVX2 (not forced), int8 GEMM DNNL, load 0.4, <time>``."""
    m = figures or machine()
    forced = f"forced {m['forced_isa']}" if m["forced_isa"] else "not forced"
    return (
        f"CPU {m['cpu']} ({m['cores']} cores), CTranslate2 ISA {m['isa']} ({forced}), int8 GEMM {m['gemm_s8']}, "
        f"load average {m['load_average']}, {m['measured']}"
    )
