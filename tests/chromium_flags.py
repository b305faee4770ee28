"""The flags Debian's chromium runs with under Playwright, for the browser tests and the decisions benchmark alike."""

from __future__ import annotations

# No sandbox (containers), no GPU, and nothing fetched or synced in the background: only the app's own requests.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
