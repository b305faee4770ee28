"""Adjudication of references, without any user interface.

``store`` keeps every listener's decision in SQLite with its provenance, ``queue`` ranks the
spans of a run folder that need a listener, ``spans`` reads what the span review shows,
``apply`` turns settled decisions into a new reference version, ``users`` checks logins and
``transcripts`` keeps blind transcriptions. The Streamlit app in ``app/`` and the CLI sit on top.
"""
