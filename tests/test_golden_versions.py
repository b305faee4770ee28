"""Every normalizer version keeps its behaviour: its tokens and scores on a fixed set of real pt-BR
pairs (tests/golden/corpus.json: legal text, news, speech transcripts) are pinned in
tests/golden/<version>.json, so an old version still reproduces its old scores exactly and a rule
changed without a new version fails here.

A new version's file is written once, when the version is added, from the checkout's root:
``PYTHONPATH=. .venv/bin/python tests/test_golden_versions.py --write ptbr-norm-N`` (it refuses to
overwrite a file).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.scorer.normalize import POLICY_VERSIONS
from toolkit.scorer.normalize.registry import POLICIES, normalizer
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.score import score_recording

GOLDEN = Path(__file__).resolve().parent / "golden"
CORPUS = GOLDEN / "corpus.json"


def _pairs() -> list[dict[str, Any]]:
    return json.loads(CORPUS.read_text(encoding="utf-8"))["pairs"]


def _reference(pair: dict[str, Any]) -> Reference:
    return Reference(pair["id"], [Utterance(s, e, t) for s, e, t in pair["reference"]], names=pair["names"])


def _hypothesis(pair: dict[str, Any]) -> Hypothesis:
    words = pair["hypothesis"].split()
    return Hypothesis(pair["id"], [Word(w, 0.2 * k, 0.2 * k + 0.15) for k, w in enumerate(words)], arm="golden")


def _tokens(version: str, policy: str, words: list[str], reference: bool) -> list[list[Any]]:
    """Each token as [text, source index, number value], then "optional" or "undecided" when it is."""
    tokens = normalizer(policy, version).tokens(words, reference=reference)
    marks = ("optional", "undecided")
    return [[t.text, t.source_index, t.number_value, *(m for m in marks if getattr(t, m))] for t in tokens]


def outputs(version: str) -> dict[str, Any]:
    """What a version produces on the corpus: tokens per policy, and the scores (without the signature)."""
    out: dict[str, Any] = {}
    for pair in _pairs():
        tokens = {
            policy: {
                "reference": [_tokens(version, policy, text.split(), True) for _, _, text in pair["reference"]],
                "hypothesis": _tokens(version, policy, pair["hypothesis"].split(), False),
            }
            for policy in POLICIES
        }
        score = score_recording(_reference(pair), _hypothesis(pair), ScoreOptions(normalizer=version)).to_json()
        del score["signature"], score["signature_fields"]
        out[pair["id"]] = {"tokens": tokens, "score": score}
    return out


def _neutral(value: Any) -> bool:
    """A figure a later version added, as an older version reports it: zero, empty or absent."""
    if isinstance(value, dict):
        return all(_neutral(v) for v in value.values())
    return value in (0, None, [], {}, False)


def _differences(golden: Any, current: Any, path: str = "") -> list[str]:
    """Where ``current`` differs from ``golden``; keys ``current`` adds must be neutral."""
    if isinstance(golden, dict) and isinstance(current, dict):
        found = [d for key in golden for d in _differences(golden[key], current.get(key, "<absent>"), f"{path}/{key}")]
        added = [key for key in current if key not in golden and not _neutral(current[key])]
        found += [f"{path}/{key}: added {current[key]!r}" for key in added]
        return found
    return [] if golden == current else [f"{path}: {golden!r} -> {current!r}"]


@pytest.mark.parametrize("version", POLICY_VERSIONS)
def test_a_version_reproduces_its_pinned_tokens_and_scores(version: str) -> None:
    path = GOLDEN / f"{version}.json"
    assert path.is_file(), f"no golden outputs for {version}: write them with this file's --write"
    golden = json.loads(path.read_text(encoding="utf-8"))
    found = _differences(golden, json.loads(json.dumps(outputs(version))))
    assert not found, f"{version} changed behaviour (add a new normalizer version instead):\n" + "\n".join(found[:20])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", required=True, choices=POLICY_VERSIONS, help="the new version to pin")
    args = parser.parse_args()
    path = GOLDEN / f"{args.write}.json"
    if path.exists():
        print(f"{path} exists: a pinned version is never rewritten", file=sys.stderr)
        return 2
    found = outputs(args.write)
    lines = [f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}" for key, value in found.items()]
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")  # a pair a line
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
