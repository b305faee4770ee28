"""Results of a scored run, read from its files (nothing is recomputed): arms, recordings, strata, drift,
the gate verdict as a table, and how far independent listeners agree. Rates are percentages everywhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import altair as alt
import app_state
import pandas as pd
import streamlit as st
from i18n import caveat, figure, number, percent, t, translated, vega_locale

from toolkit.adjudication.agreement import DecisionAgreement, decision_agreement, transcription_agreement
from toolkit.adjudication.blind import TranscriptStore
from toolkit.adjudication.store import ACTIONS
from toolkit.core.errors import InputError
from toolkit.runs.score_files import GateVerdict, PairedFile

T = TypeVar("T")

RATES = ("wer", "cer", "delta", "ci_low", "ci_high")
# The arms table's counts after its rates; each has a header of its own.
COUNTS = (
    "substitutions",
    "deletions",
    "insertions",
    "ref_words",
    "negation_flipped",
    "negation_inserted",
    "names_errors",
    "numbers_errors",
    "nonspeech_per_minute",
)


def _as_written(frame: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """Rates as percentages and other numbers as the language writes them (``12,50%``, ``0,25``): the
    table's grid would write a decimal point whatever the language."""
    frame = frame.copy()
    for column in frame.columns:
        values = pd.to_numeric(frame[column], errors="coerce")
        if column in columns:
            frame[column] = [percent(v, 2) if pd.notna(v) else "—" for v in values]
        elif frame[column].dtype.kind == "f":
            frame[column] = [figure(v) if pd.notna(v) else "—" for v in values]
    return frame


def _chart(chart: alt.TopLevelMixin) -> None:
    """A chart whose axes write numbers as the tables do."""
    st.altair_chart(chart.configure(locale={"number": vega_locale()}), width="stretch")


def _gates(verdict: GateVerdict, file: str) -> None:
    st.markdown(
        app_state.plain(
            t(
                "res_verdict_line",
                file=file,
                verdict=translated("verdict_", verdict.verdict),
                challenger=verdict.challenger,
                baseline=verdict.baseline,
            )
        )
    )
    rows = [
        {
            t("res_gate"): gate.name,
            t("res_passed"): t("res_na") if not gate.applicable else (t("res_yes") if gate.passed else t("res_no")),
            t("res_value"): "" if gate.value is None else figure(gate.value),
            t("res_threshold"): f"{gate.comparison} {'' if gate.threshold is None else figure(gate.threshold)}".strip(),
            t("res_instances"): len(gate.instances),
            t("res_measures"): translated("gate_", gate.name),
            t("res_reason"): gate.reason or gate.note,
        }
        for gate in verdict.gates
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", placeholder="—")
    if verdict.caveat:
        st.caption(app_state.plain(caveat(verdict.caveat)))


def _read(read: Callable[[], T], fallback: T) -> T:
    """A run file through its record; a damaged one is one line on the page, and the page goes on."""
    try:
        return read()
    except InputError as error:
        where = app_state.relative(adj, error.path) if error.path is not None else ""
        st.warning(app_state.plain(f"{where}: {error.problem}" if where else error.problem))
        return fallback


def _coefficient(key: str, name: str, interval: tuple[float, float | None, float | None], **figures: object) -> None:
    """An agreement coefficient and its interval, kappa and alpha written alike (an open bound shown as 0)."""
    value, low, high = interval
    st.markdown(t(key, **{name: number(value)}, low=number(low or 0.0), high=number(high or 0.0), **figures))


def _agreement(seen: Callable[[str], bool]) -> None:
    """Agreement between listeners, over the recordings whose blind pass this login has closed (``seen``)."""
    st.subheader(t("res_agreement"))
    transcripts = TranscriptStore(adj.store.path, adj.experiment_dir)
    recordings = [e.id for e in adj.manifest.recordings if seen(e.id)]
    words = transcription_agreement(transcripts, recordings, adj.score_options)
    st.markdown(f"**{t('res_tr_agreement')}**")
    if words.comparisons:
        settled = sum(1 for c in words.comparisons if c.disagree and c.settlement is not None)
        st.markdown(
            app_state.plain(
                t(
                    "res_tr_summary",
                    wer=percent(words.wer),
                    stretches=len(words.comparisons),
                    words=words.ref_words,
                    errors=words.errors,
                    conflicts=len(words.conflicts),
                    settled=settled,
                )
            )
        )
    else:
        st.caption(t("res_tr_none"))
    decisions = decision_agreement([s for s in adj.store.span_states() if seen(s.recording_id)])
    st.markdown(f"**{t('res_kappa')}**")
    if not decisions.pairs:
        st.caption(t("res_kappa_none"))
        return
    if decisions.kappa is None:
        st.markdown(
            t(
                "res_kappa_undefined",
                pairs=decisions.pairs,
                observed=percent(decisions.observed),
                agreed=decisions.agreed,
            )
        )
    else:
        _coefficient(
            "res_kappa_summary",
            "kappa",
            (decisions.kappa, decisions.kappa_low, decisions.kappa_high),
            pairs=decisions.pairs,
            observed=percent(decisions.observed),
            agreed=decisions.agreed,
            same=decisions.same_correction,
            both=decisions.both_corrected,
        )
    st.dataframe(
        pd.DataFrame(
            [[decisions.table[a][b] for b in ACTIONS] for a in ACTIONS],
            index=[t(f"action_{a}") for a in ACTIONS],
            columns=[t(f"action_{a}") for a in ACTIONS],
        ).rename_axis(t("res_first_second")),
        width="content",
        placeholder="—",
    )
    _all_listeners(decisions)


def _all_listeners(decisions: DecisionAgreement) -> None:
    """Alpha over every listener, and each named pair's agreement (kappa above sees the first two only)."""
    if decisions.alpha is None:
        st.caption(t("res_alpha_undefined"))
    else:
        _coefficient(
            "res_alpha_summary",
            "alpha",
            (decisions.alpha, decisions.alpha_low, decisions.alpha_high),
            pairs=decisions.pairs,
            more=decisions.more_listeners,
        )
    st.dataframe(
        pd.DataFrame(
            [
                [f"{pair.first} · {pair.second}", pair.spans, percent(pair.observed)]
                for pair in decisions.listener_pairs
            ],
            columns=[t("res_col_listeners"), t("res_col_stretches"), t("res_col_agreement")],
        ),
        hide_index=True,
        width="content",
        placeholder="—",
    )


adj, folder = app_state.run_page(t("page_results"))
with app_state.shown_errors():
    record = folder.read_record()
    used = record.manifest.sha256
    line = t(
        "res_run",
        run=folder.root.name,
        split=record.split,
        recordings=len(record.recordings),
        used=used[:12],
    )
    if used != adj.manifest.sha256:
        line += t("res_not_open", open=adj.manifest.sha256[:12])
    st.markdown(app_state.plain(line))
    seen = app_state.may_see(adj)
    hidden = app_state.hidden_recordings(adj, folder)
    aggregate_csv = folder.score_tables[1]
    scored = aggregate_csv.is_file()
    if not scored:
        st.info(app_state.plain(t("res_not_scored", path=app_state.relative(adj, aggregate_csv))))
    tables = _read(folder.read_score_tables, None) if scored else None
    if tables is None:
        _agreement(seen)
        st.stop()
    per_recording, aggregate = tables
    per_recording = per_recording[per_recording["recording_id"].map(seen).astype(bool)]
    if hidden:  # every table, chart and verdict pooled over the run holds the hidden recordings too
        aggregate = aggregate.iloc[0:0]
        st.caption(t("res_pooled_hidden"))
    paired: PairedFile = _read(folder.read_paired, {}) if (folder.scores / "paired.json").is_file() else {}

    overall = aggregate[aggregate["stratum"] == "all"].copy()
    overall["delta"] = overall["arm"].map(lambda a: paired[a].delta if a in paired else None)
    overall["ci_low"] = overall["arm"].map(lambda a: paired[a].ci[0] if a in paired else None)
    overall["ci_high"] = overall["arm"].map(lambda a: paired[a].ci[1] if a in paired else None)
    columns = ["arm", "wer", "delta", "ci_low", "ci_high", "cer", *COUNTS]
    headers = {
        "arm": t("res_col_arm"),
        "wer": "WER",
        "cer": "CER",
        "delta": t("res_col_delta"),
        "ci_low": t("res_col_ci_low"),
        "ci_high": t("res_col_ci_high"),
        **{c: t(f"res_col_{c}") for c in (*COUNTS, "errors", "drift_s_per_min", "onset_abs_p95_s")},
    }
    if not hidden:
        st.subheader(t("res_arms"))
        st.dataframe(
            _as_written(overall[[c for c in columns if c in overall]], RATES).rename(columns=headers),
            hide_index=True,
            width="stretch",
            placeholder="—",
        )
        _chart(
            alt.Chart(overall)
            .mark_bar()
            .encode(
                x=alt.X("arm:N", sort="-y", title=t("res_col_arm")),
                y=alt.Y("wer:Q", axis=alt.Axis(format="%"), title="WER"),
                tooltip=[
                    alt.Tooltip("arm:N", title=t("res_col_arm")),
                    alt.Tooltip("wer:Q", format=".2%", title="WER"),
                    alt.Tooltip("errors:Q", title=t("res_col_errors")),
                    alt.Tooltip("ref_words:Q", title=t("res_col_ref_words")),
                ],
            )
        )

    st.subheader(t("res_per_recording"))
    arms = st.multiselect(
        t("res_arms_filter"), sorted(per_recording["arm"].unique()), key="results_arms", placeholder=t("choose")
    )
    shown = per_recording if not arms else per_recording[per_recording["arm"].isin(arms)]
    chosen = [
        c
        for c in (
            "arm",
            "recording_id",
            "strata",
            "wer",
            "cer",
            "errors",
            "ref_words",
            "negation_flipped",
            "names_errors",
            "numbers_errors",
            "drift_s_per_min",
            "onset_abs_p95_s",
        )
        if c in shown
    ]
    st.dataframe(
        _as_written(shown[chosen], RATES).rename(
            columns={**headers, "recording_id": t("res_col_recording"), "strata": t("res_col_strata")}
        ),
        hide_index=True,
        width="stretch",
        placeholder="—",
    )

    st.subheader(t("res_per_stratum"))
    strata = aggregate[aggregate["stratum"] != "all"]
    if hidden:
        st.caption(t("res_pooled_hidden"))
    elif len(strata):
        _chart(
            alt.Chart(strata)
            .mark_bar()
            .encode(
                x=alt.X("stratum:N", title=None, axis=alt.Axis(labelAngle=0)),
                xOffset="arm:N",
                color=alt.Color("arm:N", title=t("res_col_arm")),
                y=alt.Y("wer:Q", axis=alt.Axis(format="%"), title="WER"),
                tooltip=[
                    alt.Tooltip("arm:N", title=t("res_col_arm")),
                    alt.Tooltip("stratum:N", title=t("res_col_stratum")),
                    alt.Tooltip("wer:Q", format=".2%", title="WER"),
                    alt.Tooltip("recordings:Q", title=t("res_col_recordings")),
                ],
            )
        )
    else:
        st.caption(t("res_no_strata"))

    st.subheader(t("res_drift"))
    points = []
    for arm in per_recording["arm"].unique():
        for recording in per_recording["recording_id"].unique():  # the recordings this login may see
            if not (folder.scores / arm / f"{recording}.json").is_file():
                continue
            score = _read(lambda: folder.read_recording_score(arm, recording), None)  # noqa: B023 - read at once
            thirds = (score.figures.get("timing") or {}).get("thirds") or {} if score else {}
            for name, third in thirds.items():
                if third.get("onset_median_s") is not None:
                    points.append(
                        {
                            "arm": arm,
                            "recording": recording,
                            "third": name,
                            "time_s": (third["start"] + third["end"]) / 2,
                            "onset_median_s": third["onset_median_s"],
                            "matched": third.get("matched"),
                        }
                    )
    if points:
        _chart(
            alt.Chart(pd.DataFrame(points))
            .mark_line(point=True)
            .encode(
                x=alt.X("time_s:Q", title=t("res_drift_x")),
                y=alt.Y("onset_median_s:Q", title=t("res_drift_y")),
                color=alt.Color("arm:N", title=t("res_col_arm")),
                detail="recording:N",
                tooltip=[
                    alt.Tooltip("arm:N", title=t("res_col_arm")),
                    alt.Tooltip("recording:N", title=t("res_col_recording")),
                    alt.Tooltip("third:N", title=t("res_col_third")),
                    alt.Tooltip("onset_median_s:Q", format=".3f", title=t("res_drift_y")),
                    alt.Tooltip("matched:Q", title=t("res_col_matched")),
                ],
            )
            .interactive()
        )
    else:
        st.caption(t("res_no_drift"))

    st.subheader(t("res_verdict"))
    verdict = _read(folder.read_gates, None) if (folder.scores / "gates.json").is_file() else None
    if hidden:
        st.caption(t("res_pooled_hidden"))
    elif verdict is not None:
        _gates(verdict, "gates.json")
    else:
        st.caption(t("res_no_verdict"))
    report = folder.root / "report.html"
    if report.is_file() and not hidden:
        st.caption(app_state.plain(t("res_report", path=app_state.relative(adj, report))))
    _agreement(seen)
