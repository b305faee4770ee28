"""The app's web server: Streamlit's pages (``streamlit_app.py``) plus the routes of ``web.py``.

``ablate app`` runs ``streamlit run app/server.py``; Streamlit finds ``app`` below and serves the
pages with our routes (session cookie, audio, drafts) and with ``/media`` closed to anyone
without a session.
"""

from __future__ import annotations

import streamlit as st
import web
from starlette.middleware import Middleware

app = st.App("streamlit_app.py", routes=web.routes(), middleware=[Middleware(web.SessionRequired)])
