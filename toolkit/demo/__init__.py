"""Deterministic synthetic pt-BR long-form demo corpus with exact references (what ``ablate demo`` runs on)."""

from pathlib import Path

from toolkit.demo.corpus import CorpusInfo, RecordingInfo, build_corpus

# The demo experiment, shipped as package data (in a checkout, a link to experiments/demo/experiment.toml).
DEMO_EXPERIMENT = Path(__file__).resolve().parent / "experiment.toml"

__all__ = ["DEMO_EXPERIMENT", "CorpusInfo", "RecordingInfo", "build_corpus"]
