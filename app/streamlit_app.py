"""The adjudication app (SPEC section 7); `ablate app EXP` starts it.

Pages live in ``views/`` (not ``pages/``, which Streamlit would list on its own before login).
"""

from __future__ import annotations

import os

import app_state
import streamlit as st

from toolkit.adjudication.context import APP_ENV

st.set_page_config(page_title="ablate · adjudication", layout="wide")
adj = app_state.adjudication()
who = app_state.annotator()
app_state.sidebar(adj, who)
blind = st.Page("views/blind.py", title="Blind transcription", icon=":material/edit_note:")
if os.environ.get(APP_ENV["blind"]):  # `ablate app --blind`: the only page, so no model output is reachable
    page = st.navigation([blind], position="hidden")
else:
    page = st.navigation(
        [
            st.Page("views/queue.py", title="Review queue", icon=":material/checklist:", default=True),
            st.Page("views/review.py", title="Span review", icon=":material/headphones:"),
            st.Page("views/conflicts.py", title="Second listener & apply", icon=":material/balance:"),
            blind,
            st.Page("views/results.py", title="Results", icon=":material/bar_chart:"),
        ]
    )
page.run()
