"""Every page of the Streamlit app, run with Streamlit's AppTest against a real (small) experiment."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from adjudication_fixture import built, exp, run_folder  # noqa: E402,F401 - fixtures
from streamlit.testing.v1 import AppTest  # noqa: E402

from toolkit.adjudication.store import DecisionStore  # noqa: E402
from toolkit.cli import main  # noqa: E402

ENTRY = str(Path(__file__).resolve().parents[1] / "app" / "streamlit_app.py")
HYPOTHESIS_ONLY = ("mercador", "obrigado")  # words only the arms say, never the reference


@pytest.fixture(autouse=True)
def _keep_main_module(monkeypatch) -> None:
    """Streamlit's script runner installs the app as ``sys.modules['__main__']`` and leaves it there;
    a later test that spawns processes would then re-run the app in each child. Put it back."""
    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])


def _app(monkeypatch, exp: Path, annotator: str | None = "ana", users: Path | None = None) -> AppTest:
    monkeypatch.setenv("ABLATE_APP_EXPERIMENT", str(exp))
    for name, value in (("ABLATE_APP_ANNOTATOR", annotator), ("ABLATE_APP_USERS", users)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, str(value))
    monkeypatch.delenv("ABLATE_APP_MANIFEST", raising=False)
    at = AppTest.from_file(ENTRY, default_timeout=60)
    at.run()
    return at


def _page(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"views/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _choose_span(at: AppTest, start: str) -> None:
    box = next(box for box in at.selectbox if box.label == "Span")
    box.set_value(next(k for k, label in enumerate(box.options) if f" {start}–" in label))
    at.run()


def _everything(at: AppTest) -> str:
    """All the page shows or holds: every element's protobuf (labels, options, values) and table contents."""
    parts = []

    def walk(node) -> None:  # noqa: ANN001 - AppTest tree nodes
        parts.append(str(getattr(node, "proto", "")))
        if type(node).__name__ == "Dataframe":
            parts.append(node.value.to_string())
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(parts)


def test_blind_page_shows_no_hypothesis_text_anywhere(monkeypatch, exp):
    at = _app(monkeypatch, exp)
    queue_text = _everything(at)
    assert all(word in queue_text for word in HYPOTHESIS_ONLY)  # the check can see them where they are shown
    at = _page(at, "blind")
    blind_text = _everything(at)
    assert "Blind transcription" in blind_text and len(at.get("audio")) == 2  # with context, and alone
    assert not [word for word in HYPOTHESIS_ONLY if word in blind_text]


def test_blind_mode_registers_no_other_page(monkeypatch, exp):
    monkeypatch.setenv("ABLATE_APP_BLIND", "1")
    at = _app(monkeypatch, exp)
    assert [t.value for t in at.title] == ["Blind transcription"]
    assert not [word for word in HYPOTHESIS_ONLY if word in _everything(at)]
    for page in ("queue", "review", "conflicts", "results"):
        with pytest.raises(ValueError, match="Known pages: .*blind.py'\\]"):
            at.switch_page(f"views/{page}.py")


def test_blind_transcription_writes_a_textgrid(monkeypatch, exp):
    at = _page(_app(monkeypatch, exp), "blind")
    at.number_input(key="blind_start").set_value(1.0)
    at.number_input(key="blind_end").set_value(4.0)
    at.run()
    at.text_area[0].set_value("eu não sei se o João vem")
    at.radio[0].set_value("speech")
    at.button[1].click()  # "Save this stretch"
    at.run()
    assert not at.error, [e.value for e in at.error]
    assert any("Saved 1.00–4.00 s" in s.value for s in at.success)
    # on to the next untranscribed stretch: the gap before the saved turn
    assert (at.number_input(key="blind_start").value, at.number_input(key="blind_end").value) == (0.0, 1.0)
    from toolkit.formats import read_reference

    grid = read_reference(exp / "transcriptions" / "ana" / "entrevista.TextGrid")
    assert [(u.start, u.end, u.text) for u in grid.utterances] == [(1.0, 4.0, "eu não sei se o João vem")]
    assert [(i.start, i.end, i.label) for i in grid.speech] == [(1.0, 4.0, "speech")]
    text = (exp / "transcriptions" / "ana" / "entrevista.TextGrid").read_text()
    assert all(f'name = "{tier}"' in text for tier in ("utterances", "words", "speech", "unresolved"))


def test_queue_page_ranks_negation_flip_above_plain_substitution(monkeypatch, exp):
    at = _app(monkeypatch, exp)
    table = at.dataframe[0].value
    assert (table.iloc[0]["kind"], table.iloc[0]["detail"]) == ("critical", "negation")
    substitution = table.index[table["arms say"].str.contains("vad: mercador")][0]
    assert substitution > 0
    assert [m.value for m in at.metric] == ["1", "3", "2", "1", "2"]


def test_decision_round_trips_to_the_store_and_export(monkeypatch, exp, capsys):
    at = _page(_app(monkeypatch, exp), "review")
    _choose_span(at, "14.50")
    assert "mercador" in _everything(at)
    at.radio[0].set_value("correct")
    at.text_area[0].set_value("a casa fica perto do mercadão")
    at.button[0].click()
    at.run()
    assert any("Saved decision #1 (correct) as first listener" in s.value for s in at.success)
    [decision] = DecisionStore(exp / "adjudication.sqlite").decisions()
    assert (decision.annotator, decision.start, decision.end, decision.old_text, decision.new_text) == (
        "ana",
        14.5,
        14.9,
        "a casa fica perto do mercado",
        "a casa fica perto do mercadão",
    )
    assert main(["decisions", "export", str(exp)]) == 0
    assert json.loads(capsys.readouterr().out)[0]["new_text"] == "a casa fica perto do mercadão"


def test_queue_opens_the_next_open_span_in_review(monkeypatch, exp):
    at = _app(monkeypatch, exp)
    next(b for b in at.button if b.label == "Review next open span").click()
    at.run()
    assert any(t.value == "Span review" for t in at.title)
    span = next(box for box in at.selectbox if box.label == "Span")
    assert span.options[span.value] == "1. [open] critical · negation · entrevista 1.00–4.00 s"
    # the vad arm drops "não": coloured by the scorer's alignment, marked as a critical word
    assert re.search(r"title=\\?'delete \(negation\)\\?'>não<", _everything(at))
    # a name every arm got right is still marked (the style is well formed, not ";font-weight…")
    assert re.search(r"style=\\?'font-weight:bold;[^']*\\?' title=\\?'equal \(name\)\\?'>joão<", _everything(at))
    next(b for b in at.button if b.label == "Next open span").click()
    at.run()
    span = next(box for box in at.selectbox if box.label == "Span")
    assert span.options[span.value].startswith("2. [open] disagreement")


def test_conflict_is_listed_and_blocks_apply(monkeypatch, exp):
    adjudication_store = DecisionStore(exp / "adjudication.sqlite")
    from toolkit.adjudication.context import open_experiment

    adjudication = open_experiment(exp)
    adjudication.decide(recording_id="entrevista", start=14.5, end=14.9, action="keep", annotator="ana")
    adjudication.decide(recording_id="entrevista", start=14.5, end=14.9, action="nonspeech", annotator="beto")
    at = _page(_app(monkeypatch, exp, annotator="carla"), "conflicts")
    assert "1** conflict(s) to settle" in _everything(at)
    apply = next(b for b in at.button if b.label == "Apply decisions")
    assert apply.disabled
    assert any("Settle every conflict" in w.value for w in at.warning)
    settle = next(b for b in at.button if b.label == "Settle this span")
    settle.click()
    at.run()
    assert [d.role for d in adjudication_store.decisions()] == ["first", "second", "settlement"]
    assert not next(b for b in at.button if b.label == "Apply decisions").disabled


def test_results_page_reads_the_run_files(monkeypatch, exp):
    at = _page(_app(monkeypatch, exp), "results")
    arms = at.dataframe[0].value
    assert list(arms["arm"]) == ["baseline", "vad", "windows"]
    assert arms.set_index("arm").loc["vad", "negation_flipped"] == 1


def test_name_is_asked_and_an_empty_one_refused(monkeypatch, exp):
    at = _app(monkeypatch, exp, annotator=None)
    assert any("not verified" in c.value for c in at.caption)
    at.text_input[0].set_value("   ")
    at.button[0].click()
    at.run()
    assert any("a decision without an annotator cannot be stored" in e.value for e in at.error)
    at.text_input[0].set_value("Beto")
    at.button[0].click()
    at.run()
    assert "**Annotator** Beto" in _everything(at)


def test_login_names_every_decision(monkeypatch, exp, tmp_path):
    users = tmp_path / "users.json"
    monkeypatch.setattr("sys.stdin", io.StringIO("segredo123\n"))
    assert main(["app", "add-user", "Ana Lima", "--users", str(users), "--password-stdin"]) == 0
    assert "segredo123" not in users.read_text()
    at = _app(monkeypatch, exp, annotator=None, users=users)
    at.text_input[0].set_value("Ana Lima")
    at.text_input[1].set_value("wrong password")
    at.button[0].click()
    at.run()
    assert any("wrong password" in e.value for e in at.error)
    at.text_input[1].set_value("segredo123")
    at.button[0].click()
    at.run()
    at = _page(at, "review")
    at.button[0].click()  # keep the reference on the first span
    at.run()
    assert [d.annotator for d in DecisionStore(exp / "adjudication.sqlite").decisions()] == ["Ana Lima"]


def test_bad_input_is_a_message_not_a_traceback(monkeypatch, exp):
    folder = run_folder(exp)
    folder.hypothesis_json("vad", "entrevista").unlink()
    folder.arm_output("vad", "reuniao").unlink()
    listing = json.loads(folder.disagreements("windows", "reuniao").read_text())
    listing["spans"].append(
        {
            "start": 30.0,
            "end": 31.0,
            "kind": "only_b",
            "text_a": "",
            "text_b": "fantasma",
            "time_source": "words",
            "words_a": [],
            "words_b": [],
        }
    )
    folder.disagreements("windows", "reuniao").write_text(json.dumps(listing))
    at = _app(monkeypatch, exp)
    assert any("outputs/vad/reuniao.json: missing" in w.value for w in at.warning)
    at = _page(at, "review")
    assert "hypotheses/vad/entrevista.json: hypothesis missing" in _everything(at)
    _choose_span(at, "30.00")
    at.button[0].click()
    at.run()
    assert not at.exception
    assert any("lies outside recording 'reuniao'" in e.value for e in at.error)
    assert DecisionStore(exp / "adjudication.sqlite").decisions() == []


def test_corrupt_store_is_shown_and_left_untouched(monkeypatch, exp):
    store = exp / "adjudication.sqlite"
    store.write_bytes(b"garbage" * 100)
    at = _app(monkeypatch, exp)
    assert not at.exception
    assert any("not a readable decision store" in e.value for e in at.error)
    assert store.read_bytes() == b"garbage" * 100


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["app", "{exp}", "--users", "{exp}/u.json", "--annotator", "ana"],
            "--annotator and --users exclude each other",
        ),
        (["app", "{exp}/nowhere"], "experiment file not found"),
        (["app", "{exp}", "--port", "0"], "--port must be 1-65535"),
        (["app", "{exp}", "extra"], "unexpected argument 'extra'"),
        (["app", "add-user", "ana"], "usage: ablate app add-user NAME --users FILE"),
    ],
)
def test_app_command_refuses_bad_input_before_starting(exp, capsys, argv, message):
    assert main([part.format(exp=exp) for part in argv]) == 2
    assert message in capsys.readouterr().err


def test_add_user_refuses_short_password_and_duplicates(tmp_path, monkeypatch, capsys):
    users = tmp_path / "users.json"
    monkeypatch.setattr("sys.stdin", io.StringIO("curta\n"))
    assert main(["app", "add-user", "ana", "--users", str(users), "--password-stdin"]) == 2
    assert "at least 8 characters" in capsys.readouterr().err and not users.exists()
    monkeypatch.setattr("sys.stdin", io.StringIO("comprida1\n"))
    assert main(["app", "add-user", "ana", "--users", str(users), "--password-stdin"]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO("comprida2\n"))
    assert main(["app", "add-user", "ana", "--users", str(users), "--password-stdin"]) == 2
    assert "already has a login" in capsys.readouterr().err
