"""A name the user gave that is not a known one (split, arm, component, recording id, cluster key) is refused
with the closest known name suggested, in one wording (toolkit.core.names.unknown_name)."""

from __future__ import annotations

import difflib

from hypothesis import assume, given
from hypothesis import strategies as st

from toolkit.core.names import did_you_mean, unknown_name

NAMES = st.text(alphabet="abcdefgh_0123", min_size=1, max_size=10)


def test_the_closest_name_is_suggested_before_the_list() -> None:
    assert unknown_name("split", "tunning", ["tuning", "test"]) == (
        "no split 'tunning'; did you mean 'tuning'?  (splits: tuning, test)"
    )
    assert unknown_name("arm", "Vad", ["baseline", "vad"]) == "no arm 'Vad'; did you mean 'vad'?  (arms: baseline, vad)"


def test_without_a_close_name_only_the_list_is_given() -> None:
    assert unknown_name("split", "holdout", ["tuning"]) == "no split 'holdout' (splits: tuning)"
    assert unknown_name("arm", "vad", []) == "no arm 'vad' (arms: none)"
    assert did_you_mean("zzz", ["tuning", "holdout"]) == ""


def test_names_equally_close_are_all_offered_and_too_many_are_not_guessed() -> None:
    assert did_you_mean("rec_1", ["rec_10", "rec_22", "rec_01"]) == "; did you mean 'rec_10' or 'rec_01'?"
    assert did_you_mean("rec_1", [f"rec_{i:02d}" for i in range(30)]) == ""  # a dozen tie: any pick is a guess


def test_a_long_list_is_cut_and_counted() -> None:
    known = [f"clip{i:03d}" for i in range(40)]
    message = unknown_name("recording", "clip-039", known)
    assert message.startswith("no recording 'clip-039'; did you mean 'clip039'?")  # found, though not listed
    assert message.endswith("clip010, clip011, … (40 in all))")


@given(name=NAMES, known=st.lists(NAMES, max_size=12, unique=True))
def test_a_suggestion_is_a_known_name_of_difflibs_best_ratio(name: str, known: list[str]) -> None:
    assume(name not in known)  # callers refuse only names that are not known
    hint = did_you_mean(name, known)
    offered = [k for k in known if f"'{k}'" in hint]
    best = difflib.get_close_matches(name, known, n=1)
    assert (hint == "") == (not best or len(offered) > 3 or not offered)
    if hint:
        assert best[0] in offered and 1 <= len(offered) <= 3
        ratio = difflib.SequenceMatcher(None, best[0], name).ratio()
        assert all(difflib.SequenceMatcher(None, k, name).ratio() == ratio for k in offered)
