"""Shared by every subsystem: the error type, the records of timed text, the word-stream invariant,
atomic file writes and hashes, and strict construction of configuration records."""
