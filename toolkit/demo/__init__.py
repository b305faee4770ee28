"""Deterministic synthetic pt-BR long-form demo corpus with exact references (issue 2, item 7)."""

from toolkit.demo.corpus import CorpusInfo, RecordingInfo, build_corpus

__all__ = ["CorpusInfo", "RecordingInfo", "build_corpus"]
