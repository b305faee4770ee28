"""Every page of the Streamlit app, run with Streamlit's AppTest against a real (small) experiment.

The browser side (keyboard, audio, cookies) is in ``test_app_browser.py``; here the pages are run in
process: what each role sees, what the stretch-review desk is given to show, and the messages.
"""

from __future__ import annotations

import io
import json
import re
import sqlite3
import sys
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from adjudication_fixture import TURNS, built, decide, exp, run_folder  # noqa: E402,F401 - fixtures
from streamlit.testing.v1 import AppTest  # noqa: E402

from toolkit.adjudication.blindness import BlindPasses  # noqa: E402
from toolkit.adjudication.context import open_experiment  # noqa: E402
from toolkit.adjudication.rows import LEFT_AS_IT_WAS  # noqa: E402
from toolkit.adjudication.store import DecisionStore  # noqa: E402
from toolkit.adjudication.users import LEAD, Login  # noqa: E402
from toolkit.cli import main  # noqa: E402

ENTRY = str(Path(__file__).resolve().parents[1] / "app" / "streamlit_app.py")
HYPOTHESIS_ONLY = ("mercador", "obrigado")  # words only the arms say, never the reference


@pytest.fixture(autouse=True)
def _keep_main_module(monkeypatch) -> None:
    """Streamlit's script runner installs the app as ``sys.modules['__main__']`` and leaves it there;
    a later test that spawns processes would then re-run the app in each child. Put it back."""
    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])


def _app(
    monkeypatch,
    exp: Path,
    annotator: str | None = "ana",
    role: str | None = None,
    users: Path | None = None,
    lang: str | None = None,
    excused: bool = False,
) -> AppTest:
    """The app as ``annotator`` sees it; ``excused``: a lead has excused them from every blind pass first."""
    if excused and annotator:
        passes = BlindPasses(exp / "adjudication.sqlite")
        for recording in TURNS:
            if not passes.is_closed(annotator, recording):
                passes.excuse(recording, annotator, Login("setup", LEAD))
    monkeypatch.setenv("ABLATE_APP_EXPERIMENT", str(exp))
    for name, value in (
        ("ABLATE_APP_ANNOTATOR", annotator),
        ("ABLATE_APP_ROLE", role),
        ("ABLATE_APP_USERS", users),
        ("ABLATE_APP_LANG", lang),
        ("ABLATE_APP_BLIND", None),
        ("ABLATE_APP_MANIFEST", None),
    ):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, str(value))
    at = AppTest.from_file(ENTRY, default_timeout=120)
    at.run()
    return at


def _page(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"views/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _nodes(at: AppTest) -> list:
    found = []

    def walk(node) -> None:  # noqa: ANN001 - AppTest tree nodes
        found.append(node)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return found


def _everything(at: AppTest) -> str:
    """All the page shows or holds: every element's protobuf (labels, options, values) and table contents."""
    parts = []
    for node in _nodes(at):
        parts.append(str(getattr(node, "proto", "")))
        if type(node).__name__ == "Dataframe":
            parts.append(node.value.to_string())
    return "\n".join(parts)


def _desk(at: AppTest) -> dict:
    """What the stretch-review desk was given to show (the browser component's data)."""
    for node in _nodes(at):
        proto = getattr(node, "proto", None)
        if type(proto).__name__ == "BidiComponent" and '"mode": "review"' in proto.json:
            return json.loads(proto.json)
    raise AssertionError("no review desk on the page")


def _go_to(at: AppTest, start: str) -> dict:
    box = next(box for box in at.selectbox if box.label == "Trecho")
    box.set_value(next(k for k, label in enumerate(box.options) if f" {start}–" in label))
    at.run()
    return _desk(at)


def test_portuguese_is_the_default_and_english_a_setting(monkeypatch, exp):
    at = _app(monkeypatch, exp)
    assert [t.value for t in at.title] == ["Fila de revisão"]
    at = _app(monkeypatch, exp, lang="en")
    assert [t.value for t in at.title] == ["Review queue"]
    at.selectbox(key="lang").set_value("pt")
    at.run()
    assert [t.value for t in at.title] == ["Fila de revisão"]


def test_blind_page_shows_no_hypothesis_text_and_no_server_path(monkeypatch, exp):
    lead = _app(monkeypatch, exp, annotator="lia", role="lead")
    assert all(word in _everything(lead) for word in HYPOTHESIS_ONLY)  # the check can see them where shown
    at = _page(_app(monkeypatch, exp), "blind")
    blind_text = _everything(at)
    assert "Transcrição às cegas" in blind_text
    assert not [word for word in HYPOTHESIS_ONLY if word in blind_text]
    assert str(exp) not in blind_text and str(exp.resolve()) not in blind_text


@pytest.mark.parametrize("how", ["role", "blind"])
def test_a_transcriber_reaches_blind_transcription_only(monkeypatch, exp, how):
    if how == "blind":
        monkeypatch.setenv("ABLATE_APP_BLIND", "1")
    at = _app(monkeypatch, exp, role="transcriber" if how == "role" else None)
    if how == "blind":
        monkeypatch.setenv("ABLATE_APP_BLIND", "1")
        at.run()
    assert [t.value for t in at.title] == ["Transcrição às cegas"]
    assert not [word for word in HYPOTHESIS_ONLY if word in _everything(at)]
    for page in ("queue", "review", "conflicts", "results"):
        with pytest.raises(ValueError, match="Known pages: .*blind.py'\\]"):
            at.switch_page(f"views/{page}.py")


@pytest.mark.needs_model  # the stretches are cut at the pauses of the experiment's Silero VAD
def test_blind_stretches_are_cut_at_pauses_and_fill_start_and_end(monkeypatch, exp):
    at = _page(_app(monkeypatch, exp), "blind")
    stretches = next(box for box in at.selectbox if box.label == "Trecho")
    assert "pausas que o VAD do experimento encontra" in _everything(at)
    first = stretches.options[stretches.value]
    start, end = at.number_input(key="blind_start").value, at.number_input(key="blind_end").value
    assert first.startswith(f"1. {start:.2f}–{end:.2f} s".replace(".", ",").replace("1, ", "1. ", 1))
    at.text_area[0].set_value("eu não sei se o João vem")
    at.radio[0].set_value("speech")
    next(b for b in at.button if b.label == "Gravar este trecho").click()
    at.run()
    assert not at.error, [e.value for e in at.error]
    assert any("transcriptions/ana/entrevista.TextGrid reescrito" in s.value.replace("\\", "") for s in at.success)
    from toolkit.formats import read_reference

    grid = read_reference(exp / "transcriptions" / "ana" / "entrevista.TextGrid")
    assert [(u.start, u.end, u.text) for u in grid.utterances] == [(start, end, "eu não sei se o João vem")]
    # on to the next stretch: it starts where the saved one ended
    assert at.number_input(key="blind_start").value == end


def test_queue_ranks_negation_first_and_shows_an_annotator_only_their_own_status(monkeypatch, exp):
    open_experiment(exp).decide(recording_id="entrevista", start=1.0, end=4.0, action="keep", annotator="beto")
    at = _app(monkeypatch, exp, excused=True)
    table = at.dataframe[0].value
    assert (table.iloc[0]["tipo"], table.iloc[0]["detalhe"]) == ("palavra crítica", "negação")
    assert table["os braços dizem"].str.contains("vad: mercador").any()
    assert "situação" not in table and table.iloc[0]["você"] == "aberto" and table.iloc[0]["ouvintes"] == 1
    assert [m.value for m in at.metric] == ["1", "3", "3", "2", "1", "2"]
    lead = _app(monkeypatch, exp, annotator="lia", role="lead")
    assert lead.dataframe[0].value.iloc[0]["situação"] == "decidido"


def test_review_desk_shows_each_arm_as_the_scorer_aligned_it(monkeypatch, exp):
    at = _page(_app(monkeypatch, exp, excused=True), "review")
    desk = _desk(at)
    assert desk["item"]["reference_text"] == "eu não sei se o João vem" and desk["position"] == "1 / 12"
    arms = {arm["name"]: arm for arm in desk["arms"]}
    dropped = next(s for s in arms["vad"]["steps"] if s["reference"] == "não")
    assert (dropped["op"], dropped["critical"]) == ("delete", ["negation"])
    joao = next(s for s in arms["baseline"]["steps"] if s["reference"] == "joão")
    assert (joao["op"], joao["critical"]) == ("equal", ["name"])
    desk = _go_to(at, "14,50")
    vad = next(arm for arm in desk["arms"] if arm["name"] == "vad")
    assert ("mercado", "mercador", "substitute") in [(s["reference"], s["hypothesis"], s["op"]) for s in vad["steps"]]
    desk = _go_to(at, "17,00")  # text in confirmed non-speech: no turn, the gap's insertion
    windows = next(arm for arm in desk["arms"] if arm["name"] == "windows")
    assert desk["item"]["reference_text"] == "" and [s["hypothesis"] for s in windows["before"]] == ["obrigado"]


def test_review_hides_other_listeners_decisions_until_this_listener_decides(monkeypatch, exp):
    adjudication = open_experiment(exp)
    adjudication.decide(
        recording_id="entrevista", start=1.0, end=4.0, action="correct", annotator="beto", new_text="eu sei", note="?"
    )
    at = _page(_app(monkeypatch, exp, excused=True), "review")
    desk = _desk(at)
    assert desk["history"]["rows"] == [] and "Outro ouvinte já decidiu" in desk["history"]["hidden_label"]
    assert "eu sei" not in json.dumps(desk["history"]) and desk["item"]["listeners_label"] == "1 ouvinte decidiu"
    adjudication.decide(recording_id="entrevista", start=1.0, end=4.0, action="keep", annotator="ana")
    at.run()
    desk = _desk(at)
    assert [row[1] for row in desk["history"]["rows"]] == ["beto", "ana"] and desk["history"]["hidden_label"] == ""
    assert desk["item"]["status_label"] == "você decidiu: Manter a referência"


def test_a_third_listener_is_labelled_third(monkeypatch, exp):
    at = _page(_app(monkeypatch, exp, annotator="carla", excused=True), "review")  # on the negation's stretch
    adjudication = open_experiment(exp)
    for who, action in (("ana", "keep"), ("beto", "keep"), ("carla", "nonspeech")):
        adjudication.decide(recording_id="entrevista", start=1.0, end=4.0, action=action, annotator=who)
    at.run()
    rows = _desk(at)["history"]["rows"]
    assert [row[2] for row in rows] == ["primeiro(a) ouvinte", "segundo(a) ouvinte", "terceiro(a) ouvinte"]
    at = _page(_app(monkeypatch, exp, annotator="lia", role="lead", lang="en"), "conflicts")
    assert list(at.dataframe[0].value["role"]) == ["first listener", "second listener", "third listener"]


def test_review_gives_back_a_draft(monkeypatch, exp):
    from toolkit.adjudication.drafts import Draft, Drafts

    Drafts(exp / "adjudication.sqlite").save("ana", "entrevista", 1.0, 4.0, Draft("correct", "eu não sei mesmo", ""))
    desk = _desk(_page(_app(monkeypatch, exp, excused=True), "review"))
    assert desk["draft"] == {"action": "correct", "text": "eu não sei mesmo", "note": ""}


def test_conflicts_page_is_for_leads_who_settle_only_others_conflicts(monkeypatch, exp):
    adjudication = open_experiment(exp)
    adjudication.decide(recording_id="entrevista", start=14.5, end=14.9, action="keep", annotator="ana")
    adjudication.decide(recording_id="entrevista", start=14.5, end=14.9, action="nonspeech", annotator="beto")
    annotator = _app(monkeypatch, exp, annotator="carla")
    with pytest.raises(ValueError, match="Known pages"):
        annotator.switch_page("views/conflicts.py")
    at = _page(_app(monkeypatch, exp, annotator="ana", role="lead"), "conflicts")
    assert "1 conflito para resolver" in _everything(at)
    assert next(b for b in at.button if b.label == "Resolver este trecho").disabled  # ana is part of it
    at = _page(_app(monkeypatch, exp, annotator="lia", role="lead"), "conflicts")
    assert next(b for b in at.button if b.label == "Aplicar as decisões").disabled
    assert any("Resolva todos os conflitos" in w.value for w in at.warning)
    settle = next(b for b in at.button if b.label == "Resolver este trecho")
    settle.click()
    at.run()
    assert any("nada vem pré-selecionado" in e.value.replace("\\", "") for e in at.error)  # nothing stored
    assert [d.role for d in DecisionStore(exp / "adjudication.sqlite").decisions()] == ["first", "second"]
    at.radio[0].set_value(at.radio[0].options[0])  # as ana: keep
    next(b for b in at.button if b.label == "Resolver este trecho").click()
    at.run()
    decisions = DecisionStore(exp / "adjudication.sqlite").decisions()
    assert [(d.role, d.annotator, d.action) for d in decisions][-1] == ("settlement", "lia", "keep")
    apply = next(b for b in at.button if b.label == "Aplicar as decisões")
    assert not apply.disabled
    apply.click()
    at.run()
    [applied] = [s.value for s in at.success if "references" in s.value]
    shown = applied.replace("\\", "")  # plain text: every punctuation mark escaped for Markdown
    assert re.search(r"references/v001-\d{8}T\d{6}Z", shown) and str(exp) not in shown


def test_overlapping_disagreements_are_one_conflict_the_only_lead_settles_then_applies(monkeypatch, exp):
    adjudication = open_experiment(exp)
    for (start, end), ana, beto in (((1.0, 4.0), "keep", "unresolved"), ((1.43, 1.77), "correct", "keep")):
        text = "eu não sei se o João vem mesmo" if ana == "correct" else ""
        adjudication.decide(recording_id="entrevista", start=start, end=end, action=ana, annotator="ana", new_text=text)
        adjudication.decide(recording_id="entrevista", start=start, end=end, action=beto, annotator="beto")
    at = _page(_app(monkeypatch, exp, annotator="lia", role="lead"), "conflicts")
    assert "1 conflito para resolver" in _everything(at)
    assert any("2 trechos que tocam os mesmos turnos, resolvidos juntos" in c.value for c in at.caption)
    settle = next(b for b in at.button if b.label == "Resolver este trecho")
    assert not settle.disabled and len(at.dataframe[0].value) == 4  # every decision of both stretches
    at.radio[0].set_value("other")
    next(b for b in at.selectbox if b.label == "Outra decisão").select_index(2)  # keep, correct, unresolved
    settle.click()
    at.run()
    assert not next(b for b in at.button if b.label == "Aplicar as decisões").disabled
    [settlement] = [d for d in DecisionStore(exp / "adjudication.sqlite").decisions() if d.role == "settlement"]
    assert (settlement.start, settlement.end, settlement.action) == (1.0, 4.0, "unresolved")


def test_results_page_reads_the_run_files_in_percent_and_the_agreement(monkeypatch, exp):
    adjudication = open_experiment(exp)
    for who, action in (("ana", "keep"), ("beto", "keep")):
        adjudication.decide(recording_id="entrevista", start=1.0, end=4.0, action=action, annotator=who)
    at = _page(_app(monkeypatch, exp, excused=True), "results")
    arms = at.dataframe[0].value
    assert list(arms["braço"]) == ["baseline", "vad", "windows"]
    assert arms.set_index("braço").loc["vad", "WER"] == "7,14%"  # percent with a decimal comma, as on every table
    assert "10,53%" in set(at.dataframe[1].value["WER"])  # vad on entrevista: 2 errors over 19 words
    text = _everything(at)
    assert "Concordância entre ouvintes" in text and "κ indefinido (1 trecho(s) com dois ouvintes" in text
    assert "α indefinido" in text
    pairs = next(d.value for d in at.dataframe if "ouvintes" in d.value)
    assert pairs.to_dict("records") == [{"ouvintes": "ana · beto", "trechos": 1, "concordância": "100,0%"}]


def test_results_page_measures_agreement_over_a_third_listener(monkeypatch, exp):
    adjudication = open_experiment(exp)
    spans = [("keep", "keep", "correct"), ("keep", "keep", "keep"), ("correct", "keep", "keep")]
    for k, actions in enumerate(spans):
        for who, action in zip(("ana", "beto", "carla"), actions):
            adjudication.decide(
                recording_id="entrevista",
                start=1.0 + 3 * k,
                end=3.5 + 3 * k,
                action=action,
                annotator=who,
                new_text="eu sei" if action == "correct" else "",
            )
    at = _page(_app(monkeypatch, exp, excused=True), "results")
    text = _everything(at)
    assert "α de Krippendorff" in text and "3 por três ou mais: o κ acima vê só os dois primeiros" in text
    pairs = next(d.value for d in at.dataframe if "ouvintes" in d.value)
    assert list(pairs["ouvintes"]) == ["ana · beto", "ana · carla", "beto · carla"]
    assert list(pairs["trechos"]) == [3, 3, 3]


def test_gate_verdict_is_a_table_not_raw_json_and_a_damaged_one_is_one_line(monkeypatch, exp):
    gate = {
        "name": "new_negation_errors",
        "passed": False,
        "value": 1,
        "threshold": 0.0,
        "comparison": "<=",
        "instances": [{"recording": "entrevista", "time": 1.5}],
        "measures": "negation flips",
        "applicable": True,
        "opportunities": 3,
        "note": "",
        "reason": "",
    }
    verdict = {
        "verdict": "RETAIN BASELINE",
        "challenger": "vad",
        "baseline": "baseline",
        "caveat": "small set",
        "gates": [gate],
        "holdout": {"recordings": 1, "minutes": 0.1, "reference_words": 14},
        "signature": "ablate-score:test",
        "split": "holdout",
    }
    gates_file = run_folder(exp).scores / "gates.json"
    run_folder(exp).write_gates(verdict)
    at = _page(_app(monkeypatch, exp, excused=True), "results")
    gates = next(d.value for d in at.dataframe if "portão" in d.value)
    assert gates.iloc[0].to_dict()["passou"] == "NÃO" and gates.iloc[0].to_dict()["casos"] == 1
    assert not at.json
    gates_file.write_text(json.dumps({**verdict, "gates": [{**gate, "passed": "maybe"}]}))
    at = _page(_app(monkeypatch, exp, excused=True), "results")
    warned = [w.value.replace("\\", "") for w in at.warning]
    assert warned == ["runs/tuning-fixture/scores/gates.json: gates[0].passed must be bool, not 'maybe'"]
    assert not at.exception
    assert not any("portão" in d.value for d in at.dataframe)


def test_a_damaged_scores_table_is_one_line_and_the_agreement_still_shows(monkeypatch, exp):
    (run_folder(exp).scores / "per_recording.csv").write_text("wer\n0.1\n", encoding="utf-8")
    at = _page(_app(monkeypatch, exp, excused=True), "results")
    warned = [w.value.replace("\\", "") for w in at.warning]
    assert warned == [
        "runs/tuning-fixture/scores/per_recording.csv: not a scores table: its columns begin arm, recording_id, "
        "strata and hold wer"
    ]
    assert not at.exception and not any("braço" in d.value for d in at.dataframe)
    assert "Concordância entre ouvintes" in _everything(at)


def test_name_is_asked_and_an_empty_one_refused(monkeypatch, exp):
    at = _app(monkeypatch, exp, annotator=None)
    assert any("não são verificados" in c.value for c in at.caption)
    at.text_input[0].set_value("   ")
    at.button[0].click()
    at.run()
    assert any("uma decisão sem autor não pode ser gravada" in e.value for e in at.error)
    at.text_input[0].set_value("Beto")
    at.button[0].click()
    at.run()
    assert "beto" in _everything(at).lower() and [t.value for t in at.title] == ["Fila de revisão"]


def test_login_with_a_role_and_backoff_after_wrong_passwords(monkeypatch, exp, tmp_path):
    users = tmp_path / "users.json"
    monkeypatch.setattr("sys.stdin", io.StringIO("segredo123\n"))
    assert main(["app", "add-user", "Ana Lima", "--role", "annotator", "--users", str(users), "--password-stdin"]) == 0
    at = _app(monkeypatch, exp, annotator=None, users=users)
    for _ in range(3):
        at.text_input[0].set_value("Ana Lima")
        at.text_input[1].set_value("senha errada")
        at.button[0].click()
        at.run()
        assert any("Nome ou senha incorretos" in e.value for e in at.error)
    at.text_input[1].set_value("segredo123")  # the right password, too soon
    at.button[0].click()
    at.run()
    assert any("Tentativas demais. Espere" in e.value for e in at.error)
    assert not at.title


def test_a_lead_is_warned_about_login_names_from_before_the_naming_rules(monkeypatch, exp, tmp_path):
    from toolkit.adjudication.users import hash_password

    users = tmp_path / "users.json"
    accounts = {"Lia": "lead", "ana\u200b": "annotator"}  # a zero-width space: another tool wrote it
    logins = {n: {"role": r, "password": hash_password("segredo123")} for n, r in accounts.items()}
    users.write_text(json.dumps({"format": 2, "users": logins}))
    at = _app(monkeypatch, exp, annotator=None, users=users)
    assert not any("u200b" in w.value for w in at.warning)  # the login page names nobody
    at.text_input[0].set_value("Lia")
    at.text_input[1].set_value("segredo123")
    at.button[0].click()
    at.run()
    [warning] = [w.value for w in at.sidebar.warning]
    assert "ana\\\\u200b" in warning and "ZERO WIDTH SPACE" in warning and "ainda funciona" in warning


def test_an_unverified_name_that_runs_as_a_formula_is_refused(monkeypatch, exp):
    at = _app(monkeypatch, exp, annotator=None)
    at.text_input[0].set_value("=HYPERLINK(1)")
    at.button[0].click()
    at.run()
    assert any("runs as a formula" in e.value for e in at.error) and not at.title


def test_bad_input_is_a_message_not_a_traceback(monkeypatch, exp):
    folder = run_folder(exp)
    folder.hypothesis_json("vad", "entrevista").unlink()
    folder.arm_output("vad", "reuniao").unlink()
    at = _app(monkeypatch, exp, excused=True)
    assert any("outputs/vad/reuniao.json: missing" in w.value.replace("\\", "") for w in at.warning)
    at = _page(at, "review")
    vad = next(arm for arm in _desk(at)["arms"] if arm["name"] == "vad")
    assert vad["error"] == "hipótese ausente (runs/tuning-fixture/hypotheses/vad/entrevista.json)"
    assert str(exp) not in _everything(at)


def test_corrupt_store_is_shown_and_left_untouched(monkeypatch, exp):
    store = exp / "adjudication.sqlite"
    store.write_bytes(b"garbage" * 100)
    at = _app(monkeypatch, exp)
    assert not at.exception
    assert any("not a readable decision store" in e.value for e in at.error)
    assert store.read_bytes() == b"garbage" * 100


def test_a_damaged_decision_row_is_one_line_on_the_page(monkeypatch, exp):
    """A decision whose time another tool replaced by text: the page names the store and the row, no traceback."""
    store = DecisionStore(exp / "adjudication.sqlite")
    decide(store, "ana")
    with sqlite3.connect(store.path) as connection:  # a copy of the decision, its start made text
        columns = ", ".join(f'"{c}"' for (_, c, *_) in connection.execute("PRAGMA table_info(decisions)") if c != "id")
        picked = columns.replace('"start"', "'soon'")
        connection.execute(f"INSERT INTO decisions ({columns}) SELECT {picked} FROM decisions")
    at = _app(monkeypatch, exp)
    assert not at.exception
    shown = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]  # the page escapes Markdown: plain text
    assert [line for line in shown if "damaged" in line] == [
        "adjudication.sqlite: row 2 of table decisions is damaged (start holds 'soon', not a number); " + LEFT_AS_IT_WAS
    ]


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["app", "{exp}", "--users", "{exp}/u.json", "--annotator", "ana"],
            "--annotator and --users exclude each other",
        ),
        (["app", "{exp}", "--users", "{exp}/u.json", "--role", "lead"], "--role and --users exclude each other"),
        (["app", "{exp}/nowhere"], "experiment file not found"),
        (["app", "{exp}", "--port", "0"], "--port must be 1-65535"),
        (["app", "{exp}", "extra"], "unexpected argument 'extra'"),
        (["app", "add-user", "ana"], "usage: ablate app add-user NAME --users FILE"),
        (["app", "{exp}", "--annotator", "ana\u200b"], "--annotator: login name 'ana\\u200b' holds invisible"),
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


def test_a_lead_settles_a_transcription_conflict_and_writes_the_agreed_textgrid(monkeypatch, exp):
    from toolkit.adjudication.blind import TranscriptStore
    from toolkit.formats import read_reference

    transcripts = TranscriptStore(exp / "adjudication.sqlite", exp)
    for who, text in (("ana", "a Maria chegou cedo hoje"), ("beto", "a Maria chegou muito cedo")):
        transcripts.save(recording_id="reuniao", annotator=who, start=1.0, end=4.0, duration=20.0, text=text)
    at = _page(_app(monkeypatch, exp, annotator="lia", role="lead"), "conflicts")
    assert "WER entre ouvintes 40,0%" in _everything(at).replace("\\", "")
    write = next(b for b in at.button if b.label == "Gravar a transcrição acordada de reuniao")
    assert write.disabled
    radio = next(r for r in at.radio if "Usar o texto de ana" in r.options)
    radio.set_value("first")
    next(b for b in at.button if b.label == "Resolver esta transcrição").click()
    at.run()
    next(b for b in at.button if b.label == "Gravar a transcrição acordada de reuniao").click()
    at.run()
    assert any("transcriptions/_agreed/reuniao.TextGrid" in s.value.replace("\\", "") for s in at.success)
    agreed = read_reference(exp / "transcriptions" / "_agreed" / "reuniao.TextGrid")
    assert [(u.start, u.end, u.text) for u in agreed.utterances] == [(1.0, 4.0, "a Maria chegou cedo hoje")]
