"""Adjudication of references, without any user interface.

``store`` keeps every listener's decision in SQLite with its provenance, ``queue`` ranks the
stretches of a run folder that need a listener, ``spans`` reads what the stretch review shows
(the scorer's own alignment, the audio), ``form`` reads what a listener submitted,
``conflicts`` finds what a lead settles and ``apply`` turns settled decisions into a new
reference version; ``users`` (roles, logins), ``sessions`` (cookies, password-try backoff) and
``drafts`` serve the app; ``blind`` keeps blind transcriptions of the ``stretches`` cut at the
experiment's VAD pauses, and ``agreement`` compares listeners. The Streamlit app in ``app/`` and
the CLI sit on top.
"""
