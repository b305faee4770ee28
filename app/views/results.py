"""Results of a scored run, read from its files (nothing is recomputed): arms, recordings, strata, drift, gate."""

from __future__ import annotations

import json

import altair as alt
import app_state
import pandas as pd
import streamlit as st

adj, folder = app_state.run_page("Results")
with app_state.shown_errors():
    record = folder.read_record()
    used = record.manifest.sha256
    st.markdown(
        f"Run `{folder.root.name}` · split **{record.split}** · "
        f"{len(record.recordings)} recordings · scored against reference version "
        f"(manifest) `{used[:12]}`"
        + ("" if used == adj.manifest.sha256 else f" — **not** the version open here (`{adj.manifest.sha256[:12]}`)")
    )
    aggregate_csv = folder.scores / "aggregate.csv"
    if not aggregate_csv.is_file():
        st.info(f"This run has not been scored yet ({aggregate_csv} is missing): `ablate run` scores when it finishes.")
        st.stop()
    aggregate = pd.read_csv(aggregate_csv)
    per_recording = pd.read_csv(folder.scores / "per_recording.csv")
    paired_path = folder.scores / "paired.json"
    paired = json.loads(paired_path.read_text(encoding="utf-8")) if paired_path.is_file() else {}

    st.subheader("Arms (whole split)")
    overall = aggregate[aggregate["stratum"] == "all"].copy()
    overall["ΔWER vs baseline"] = overall["arm"].map(lambda a: paired.get(a, {}).get("delta"))
    overall["95% CI low"] = overall["arm"].map(lambda a: (paired.get(a, {}).get("ci") or [None, None])[0])
    overall["95% CI high"] = overall["arm"].map(lambda a: (paired.get(a, {}).get("ci") or [None, None])[1])
    columns = [
        "arm",
        "wer",
        "ΔWER vs baseline",
        "95% CI low",
        "95% CI high",
        "cer",
        "substitutions",
        "deletions",
        "insertions",
        "ref_words",
        "negation_flipped",
        "negation_inserted",
        "names_errors",
        "numbers_errors",
        "nonspeech_per_minute",
    ]
    st.dataframe(
        overall[[c for c in columns if c in overall]],
        hide_index=True,
        width="stretch",
        column_config={
            c: st.column_config.NumberColumn(format="percent")
            for c in ("wer", "cer", "ΔWER vs baseline", "95% CI low", "95% CI high")
        },
    )
    st.altair_chart(
        alt.Chart(overall)
        .mark_bar()
        .encode(
            x=alt.X("arm:N", sort="-y"),
            y=alt.Y("wer:Q", axis=alt.Axis(format="%"), title="WER"),
            tooltip=["arm", alt.Tooltip("wer:Q", format=".2%"), "errors", "ref_words"],
        ),
        width="stretch",
    )

    st.subheader("Per recording")
    arms = st.multiselect("Arms", sorted(per_recording["arm"].unique()), key="results_arms")
    shown = per_recording if not arms else per_recording[per_recording["arm"].isin(arms)]
    st.dataframe(
        shown[
            [
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
        ],
        hide_index=True,
        width="stretch",
    )

    st.subheader("Per stratum")
    strata = aggregate[aggregate["stratum"] != "all"]
    if len(strata):
        st.altair_chart(
            alt.Chart(strata)
            .mark_bar()
            .encode(
                x=alt.X("stratum:N", title=None, axis=alt.Axis(labelAngle=0)),
                xOffset="arm:N",
                color="arm:N",
                y=alt.Y("wer:Q", axis=alt.Axis(format="%"), title="WER"),
                tooltip=["arm", "stratum", alt.Tooltip("wer:Q", format=".2%"), "recordings"],
            ),
            width="stretch",
        )
    else:
        st.caption("No strata in this run's manifest.")

    st.subheader("Drift: median word-onset error per third of each recording")
    points = []
    for arm in per_recording["arm"].unique():
        for recording in per_recording["recording_id"].unique():
            path = folder.scores / arm / f"{recording}.json"
            if not path.is_file():
                continue
            thirds = json.loads(path.read_text(encoding="utf-8")).get("timing", {}).get("thirds") or {}
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
        st.altair_chart(
            alt.Chart(pd.DataFrame(points))
            .mark_line(point=True)
            .encode(
                x=alt.X("time_s:Q", title="time in the recording (s)"),
                y=alt.Y("onset_median_s:Q", title="onset error (s)"),
                color="arm:N",
                detail="recording:N",
                tooltip=["arm", "recording", "third", "onset_median_s", "matched"],
            )
            .interactive(),
            width="stretch",
        )
    else:
        st.caption("No timed reference words, so no drift figures.")

    st.subheader("Gate verdict")
    verdicts = sorted(folder.root.glob("gate*.json")) + sorted(folder.scores.glob("gate*.json"))
    if verdicts:
        for path in verdicts:
            st.markdown(f"`{path.name}`")
            st.json(json.loads(path.read_text(encoding="utf-8")))
    else:
        st.caption("No gate verdict for this run.")
    report = folder.root / "report.html"
    if report.is_file():
        st.caption(f"Full report: {report}")
