"""``ablate manifest freeze|verify``: freeze a corpus into a hashed manifest, and check it still matches."""

from __future__ import annotations

import argparse
import sys
from collections import Counter


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "manifest",
        help="freeze a corpus into a hashed manifest, or verify one",
        description="Freeze a corpus into a hashed manifest, or verify one.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    freeze = actions.add_parser(
        "freeze",
        help="hash audio and references into manifest.json",
        description="Check, hash and record every recording and reference file.",
    )
    freeze.add_argument("audio_dir", metavar="AUDIO_DIR", help="folder of original recordings")
    freeze.add_argument(
        "--refs",
        required=True,
        metavar="REF_DIR",
        help="folder of references: ID.TextGrid, ID.stm or ID.txt, and optional ID.names.txt",
    )
    freeze.add_argument("--out", required=True, metavar="MANIFEST", help="manifest to write (JSON)")
    freeze.add_argument(
        "--splits", metavar="CSV", help="CSV with columns id,split[,strata,speaker,channel]; strata separated by ';'"
    )
    freeze.add_argument(
        "--split",
        metavar="NAME",
        help="split (tuning, holdout, challenge or drift) for recordings not named in --splits",
    )
    freeze.add_argument(
        "--channel",
        metavar="N|mix",
        help="channel (0, 1, ...) or 'mix' for multichannel recordings not set in --splits",
    )
    freeze.add_argument(
        "--allow-mixed-sample-rates",
        action="store_true",
        help="accept recordings with different sample rates in one manifest",
    )
    freeze.add_argument(
        "--no-speech",
        metavar="ID[,ID...]",
        default="",
        help="recordings meant to hold no speech (their references have no words; "
        "any other reference without words is refused)",
    )
    freeze.set_defaults(func=_freeze)

    verify = actions.add_parser(
        "verify",
        help="re-hash every file and name each one that differs",
        description="Exit 0 if every file matches the manifest, else 2 naming each.",
    )
    verify.add_argument("manifest", metavar="MANIFEST", help="manifest.json written by 'ablate manifest freeze'")
    verify.set_defaults(func=_verify)


def _freeze(args: argparse.Namespace) -> int:
    from toolkit.corpus.freeze import freeze, parse_channel

    manifest = freeze(
        args.audio_dir,
        args.refs,
        args.out,
        splits_csv=args.splits,
        split=args.split,
        channel=parse_channel(args.channel, "--channel"),
        allow_mixed_sample_rates=args.allow_mixed_sample_rates,
        no_speech=[rid.strip() for rid in args.no_speech.split(",") if rid.strip()],
    )
    minutes = sum(entry.duration for entry in manifest.recordings) / 60
    splits = ", ".join(
        f"{name} {count}" for name, count in sorted(Counter(entry.split for entry in manifest.recordings).items())
    )
    print(
        f"froze {len(manifest.recordings)} recordings ({minutes:.1f} min; {splits}) "
        f"into {args.out} (manifest sha256 {manifest.sha256})"
    )
    return 0


def _verify(args: argparse.Namespace) -> int:
    from toolkit.corpus.manifest import load, verify

    manifest = load(args.manifest)
    problems = verify(manifest)
    for problem in problems:
        print(f"ablate: error: {problem}", file=sys.stderr)
    if problems:
        return 2
    files = sum(1 + len(entry.references) for entry in manifest.recordings)
    print(
        f"OK: {len(manifest.recordings)} recordings, {files} files match {args.manifest} "
        f"(manifest sha256 {manifest.sha256})"
    )
    return 0
