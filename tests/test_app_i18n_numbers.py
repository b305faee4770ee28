"""The app's numbers and the gate verdict's caveat in Brazilian Portuguese: one formatting function
(``i18n.number``) and the caveat ``ablate gate`` writes, read back into its figures whatever they are."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.protocol.gates import GateResult, caveat

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))
i18n = pytest.importorskip("i18n", reason="the app's pages need streamlit (the app extra)")


@pytest.fixture(autouse=True)
def portuguese(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ABLATE_APP_LANG", "pt")


def test_numbers_and_percentages_are_written_the_brazilian_way() -> None:
    assert i18n.percent(0.125) == "12,5%" and i18n.percent(None) == "—"
    assert i18n.number(1234.5) == "1.234,50" and i18n.figure(3.0) == "3" and i18n.figure(0.25) == "0,25"
    assert i18n.vega_locale()["decimal"] == ","


@settings(max_examples=80, deadline=None)
@given(
    recordings=st.integers(1, 500),
    minutes=st.floats(0.1, 5000, allow_nan=False),
    words=st.integers(1, 10**6),
    opportunities=st.lists(st.integers(0, 5000), max_size=4),
)
def test_the_gate_caveat_is_translated_with_every_figure(recordings, minutes, words, opportunities) -> None:
    results = [
        GateResult(name, True, True, 0, 0.0, "<=", "", n, "", "", [])
        for name, n in zip(
            ("new_negation_errors", "new_name_errors", "new_number_errors", "seam_omissions"), opportunities
        )
    ]
    english = caveat("holdout", {"recordings": recordings, "minutes": minutes, "reference_words": words}, results)
    shown = i18n.caveat(english)
    assert shown != english and "recording" not in shown and "failure" not in shown and "opportunit" not in shown
    assert f"{recordings} gravação(ões)" in shown and f"{i18n.number(words, 0)} palavras" in shown
    assert shown.count("falha") + shown.count("oportunidades") >= len(results)
