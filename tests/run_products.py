"""What a run produced that must not depend on how it was run (workers, SLURM jobs, a restructure)."""

from __future__ import annotations

from pathlib import Path

# Hypotheses, disagreements and scores; runtime.csv holds timings, which always differ.
PRODUCTS = ("hypotheses", "disagreements", "scores")


def run_products(run: Path) -> dict[str, bytes]:
    """Every product file of the run folder ``run`` by its relative path, with its bytes."""
    return {
        str(p.relative_to(run)): p.read_bytes()
        for part in PRODUCTS
        for p in sorted((run / part).rglob("*"))
        if p.is_file() and p.name != "runtime.csv"
    }
