"""Scoring metrics: WER/CER counts, critical-word audits, VAD, non-speech, timing.

Each module computes one family of figures from normalized token tables and an alignment;
:mod:`toolkit.scorer.score` puts them together for one recording.
"""
