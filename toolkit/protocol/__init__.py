"""The protocol the toolkit enforces.

``audit``: the hash-chained, append-only audit log of an experiment. ``record``: the protocol
state replayed from that log. ``challenger``: freezing the challenger with the gates file.
``testsplit``: holdout (and challenge) opened once, for the baseline and frozen challenger
only. ``verdict``: the gates evaluated on the holdout run.
"""
