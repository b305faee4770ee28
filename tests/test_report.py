"""The report opens with its answer: verdict, then each arm's ΔWER with its causes, on the first screen.

Checked on a constructed run with known causes: the order of sections (the Markdown says the same as
the HTML in the same order), no empty section, gate instances with their causes, and the first screen
of report.html in headless chromium at 1400×900 (no table wider than the window).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from known_causes import known_causes_run

from toolkit.evaluate import score_run, write_scores
from toolkit.explain import explain
from toolkit.protocol.gates import evaluate_gates
from toolkit.protocol.gates_file import load_gates
from toolkit.protocol.report_sections import report_sections
from toolkit.report.run_report import report_title, write_reports
from toolkit.scorer.metrics.timing import TimingScore
from toolkit.scorer.options import ScoreOptions

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
OPTIONS = ScoreOptions(normalizer="ptbr-norm-3")


def _gated_report(root: Path) -> tuple[Path, Path, dict]:
    """The known-causes run, gated with the template's gates, its report written; (md, html, gates)."""
    from toolkit.core.files import atomic_write_json

    _, folder = known_causes_run(root, "holdout", number_at_seam=True)
    evaluation = score_run(folder, OPTIONS)
    write_scores(evaluation)
    report = evaluate_gates(evaluation, "vad", load_gates(ROOT / "protocol" / "gates.toml")).to_json()
    atomic_write_json(folder.scores / "gates.json", report)
    md, page = write_reports(evaluation, report_sections(folder))
    return md, page, report


def _headings(markdown: str) -> list[str]:
    return [line[3:] for line in markdown.splitlines() if line.startswith("## ")]


def test_the_report_opens_with_the_verdict_then_each_arm_by_cause_and_has_no_empty_section(tmp_path: Path) -> None:
    md, page, gates = _gated_report(tmp_path)
    markdown = md.read_text(encoding="utf-8")
    headings = _headings(markdown)
    assert headings[:3] == ["Verdict", "Each arm against `baseline`", "Per recording: paired differences"]
    verdict = markdown.split("## Verdict")[1].split("\n## ")[0]
    assert "**RETAIN BASELINE**: challenger `vad` against `baseline`" in verdict and "**Caveat:**" in verdict
    # The new number error lies by a seam, and its gate instance says so.
    numbers = next(g for g in gates["gates"] if g["name"] == "new_number_errors")
    assert numbers["passed"] is False and [i["cause"] for i in numbers["instances"]] == ["seam"]
    seam = "failed `new_number_errors`: 1, must be <= 0 — r1 @ 5.00 s “vinte e cinco” → “vinte e seis” (seam)"
    assert seam in verdict
    # The cause split: the numbers under the figure add up to ΔWER (+5 errors over 21 words).
    answer = markdown.split("## Each arm against `baseline`")[1].split("\n## ")[0]
    row = next(line for line in answer.splitlines() if line.startswith("| vad |"))
    assert "| +23.8 [" in row and "| +9.52 (2/0) |" in row and "| +0.00 (1/1) |" in row
    # No empty section: every heading has content, and the windowless run says so in one line.
    for heading, body in zip(headings, re.split(r"\n## .*\n", markdown)[1:]):
        assert body.strip(), heading
    assert markdown.split("## Seams\n")[1].strip().startswith("no windowed arm")
    fallback = markdown.split("## Temperature fallback\n")[1].split("\n## ")[0]
    assert "- none in this run: no (arm, recording) where more than half" in fallback
    # The HTML says the same, in the same order (folded sections' headings are in their summary).
    html = page.read_text(encoding="utf-8")
    shown = [
        re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<h2>(.*?)</h2>|<summary><b>(.*?)</b>", html) for h in h if h
    ]
    assert [h.replace("`", "") for h in headings] == shown
    assert (
        html.count("data:image/png;base64,") >= 3
        and "<script src" not in html
        and "http" not in html.split("<body>")[0]
    )


def test_a_run_without_timed_reference_words_says_so_instead_of_drawing_empty_axes(tmp_path: Path) -> None:
    _, folder = known_causes_run(tmp_path)
    evaluation = score_run(folder, OPTIONS)
    evaluation.scores = {
        arm: {rid: replace(score, timing=TimingScore()) for rid, score in by_rec.items()}
        for arm, by_rec in evaluation.scores.items()
    }
    md, page = write_reports(evaluation)
    markdown = md.read_text(encoding="utf-8")
    timing = next(h for h in _headings(markdown) if h.startswith("Timing"))
    assert markdown.split(f"## {timing}\n")[1].strip().startswith("no timed reference words")
    assert page.read_text(encoding="utf-8").count("data:image/png;base64,") == 2  # causes and per recording only


def test_a_recording_interval_resamples_its_turns_and_a_single_turn_has_none(tmp_path: Path) -> None:
    _, folder = known_causes_run(tmp_path)
    evaluation = score_run(folder, OPTIONS)
    recording = explain(evaluation, "vad").recordings[0]
    assert recording.turn_words == (7, 8, 6) and sum(recording.turn_words) == recording.ref_words
    low, high = recording.interval(2000, 0)
    assert low <= recording.delta_wer <= high and recording.interval(2000, 0) == (low, high)
    single = replace(
        recording, turn_words=(recording.ref_words,), changes=tuple(replace(c, turn=0) for c in recording.changes)
    )
    assert single.interval(2000, 0) is None


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (scripts/setup.sh installs it)")
def test_the_first_screen_in_chromium_shows_the_verdict_and_the_causes_and_nothing_overflows(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    _, page_path, _ = _gated_report(tmp_path)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            requests: list[str] = []
            page.on("request", lambda request: requests.append(request.url))
            page.goto(page_path.as_uri())
            verdict = page.locator("h2", has_text="Verdict").bounding_box()
            figure = page.locator(".lead img").bounding_box()
            assert verdict is not None and figure is not None
            assert 0 <= verdict["y"] < figure["y"] and figure["y"] + figure["height"] <= 900
            assert page.evaluate("document.documentElement.scrollWidth") <= 1400
            widest = page.evaluate(
                "Math.max(...[...document.querySelectorAll('.scroll')].map(d => d.getBoundingClientRect().right))"
            )
            assert widest <= 1400
            page.screenshot(path=str(tmp_path / "first-screen.png"))
            assert (tmp_path / "first-screen.png").stat().st_size > 10_000
            assert [url for url in requests if not url.startswith(("file:", "data:"))] == []
        finally:
            browser.close()


def test_the_title_tells_a_stability_rerun_and_a_run_of_some_arms_from_the_split_run(tmp_path: Path) -> None:
    """Runs of one split share the folder prefix: the report's title names the arms and any dither."""
    _, run = known_causes_run(tmp_path)
    record = run.read_record()
    assert report_title(record) == "ASR ablation report: constructed / tuning (baseline, vad)"
    dithered = replace(record, config=replace(record.config, dither={"seed": 3, "level_dbfs": -90.0}))
    assert report_title(dithered).endswith(", stability rerun with inaudible dither (seed 3, -90.0 dBFS)")
    subset = replace(record, config=replace(record.config, arms=record.config.arms[:1]))
    assert report_title(subset) == "ASR ablation report: constructed / tuning (baseline)"


def test_the_arms_table_shows_cpu_time_beside_wall_time_over_the_audio(tmp_path: Path) -> None:
    """Wall time moves with a shared machine's load; the CPU figure sits beside it, each summed over the
    arm's recordings and divided by their audio."""
    import json

    from toolkit.report.tables import arms_table, number

    _, folder = known_causes_run(tmp_path, "tuning")
    record = json.loads(folder.record.read_text(encoding="utf-8"))
    for k, row in enumerate(record["measurements"]):  # two cores: CPU time above the wall time, unequal by arm
        row["cpu_s"] = 1.7 * row["wall_s"] + 0.1 * k
    folder.record.write_text(json.dumps(record), encoding="utf-8")
    evaluation = score_run(folder, OPTIONS)
    table = arms_table(evaluation).set_index("arm")
    assert (table["CPU RTF"] != table["RTF"]).all()
    for arm, rows in evaluation.runtime.groupby("arm"):
        audio = rows["duration_s"].sum()
        assert table.loc[arm, "RTF"] == number(rows["wall_s"].sum() / audio, 3)
        assert table.loc[arm, "CPU RTF"] == number(rows["cpu_s"].sum() / audio, 3)


def test_long_times_keep_their_hundredths_and_small_figures_four_digits() -> None:
    import pandas as pd

    from toolkit.report.document import float_cell, markdown_table

    assert [float_cell(v) for v in (1117.608, 1117.6, 1120.7, 1234.0, 12.3456, 0.0123449, 2.0)] == [
        "1117.61",
        "1117.6",
        "1120.7",
        "1234",
        "12.35",
        "0.01234",
        "2",
    ]
    frame = pd.DataFrame({"seam start": [1117.608, 1120.7], "cut": [1117.044, 1121.0]})
    assert "| 1117.61 | 1117.04 |" in markdown_table(frame)
