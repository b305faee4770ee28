"""Import-time benchmark: how long a fresh interpreter takes to ``import toolkit`` and score one pair.

Each figure is the median of fresh ``python -c`` processes (so nothing is cached in the
interpreter), minus the bare interpreter's start-up, measured the same way. Target: importing
the scorer well under half a second (scipy and pandas load only for tables and drift).
Run: ``.venv/bin/python benchmarks/bench_import.py [--repeats N]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

CASES = {
    "python (start-up only)": "pass",
    "import toolkit": "import toolkit",
    "import toolkit; toolkit.wer(...)": "import toolkit; toolkit.wer('o réu não assinou', 'o réu assinou')",
    "import toolkit.scorer.score": "import toolkit.scorer.score",
    "import pandas, scipy.stats (for scale)": "import pandas, scipy.stats",
}


def seconds(code: str) -> float:
    begin = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - begin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    runs: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.repeats):  # interleaved, so load from other processes affects every case alike
        for name, code in CASES.items():
            runs[name].append(seconds(code))
    medians = {name: statistics.median(times) for name, times in runs.items()}
    startup = medians["python (start-up only)"]
    print(f"{'what':42s} {'median (s)':>11s} {'minus start-up (s)':>19s}")
    for name, median in medians.items():
        print(f"{name:42s} {median:11.3f} {median - startup:19.3f}")


if __name__ == "__main__":
    main()
