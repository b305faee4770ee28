"""The adjudication app's pages; ``ablate app EXP`` serves them through ``server.py``.

Pages live in ``views/`` (not ``pages/``, which Streamlit would list on its own before login);
which of them a login sees depends on its role (``app_state.pages``).
"""

from __future__ import annotations

import app_state
import streamlit as st
from i18n import t

st.set_page_config(page_title=t("app_title"), layout="wide")
adj = app_state.adjudication()
who = app_state.login(adj)
app_state.sidebar(adj, who)
app_state.session_keeper()
st.navigation(app_state.pages(who)).run()
