"""``ablate manifest freeze|verify``: freeze a corpus into a hashed manifest, and check it still matches."""

from __future__ import annotations

import argparse
import sys
import typing
from collections import Counter
from pathlib import Path

from toolkit.core.errors import InputError

if typing.TYPE_CHECKING:
    from toolkit.corpus.imported import ImportedRecording


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
        description="Check, hash and record every recording and reference file: AUDIO_DIR with --refs, or a "
        "Kaldi data folder, lhotse manifests or an audiofolder, whose references are written into refs/ "
        "beside the manifest.",
    )
    freeze.add_argument("audio_dir", nargs="?", metavar="AUDIO_DIR", help="folder of original recordings")
    freeze.add_argument(
        "--refs",
        metavar="REF_DIR",
        help="folder of references: ID.TextGrid, ID.stm or ID.txt, and optional ID.names.txt (with AUDIO_DIR)",
    )
    freeze.add_argument(
        "--kaldi",
        metavar="DATA_DIR",
        help="instead of AUDIO_DIR and --refs: a Kaldi data folder (wav.scp, text, optional segments, utt2spk)",
    )
    freeze.add_argument(
        "--lhotse",
        nargs=2,
        metavar=("RECORDINGS", "SUPERVISIONS"),
        help="instead of AUDIO_DIR and --refs: lhotse recordings and supervisions manifests (.jsonl or .jsonl.gz)",
    )
    freeze.add_argument(
        "--audiofolder",
        metavar="DIR",
        help="instead of AUDIO_DIR and --refs: a Hugging Face audiofolder (metadata.csv: file_name, transcription)",
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

    options = {
        "splits_csv": args.splits,
        "split": args.split,
        "channel": parse_channel(args.channel, "--channel"),
        "allow_mixed_sample_rates": args.allow_mixed_sample_rates,
        "no_speech": [rid.strip() for rid in args.no_speech.split(",") if rid.strip()],
    }
    imported = _imported(args)
    if imported is None:
        manifest = freeze(args.audio_dir, args.refs, args.out, **options)
    else:
        from toolkit.corpus.imported import freeze_imported

        manifest = freeze_imported(*imported, args.out, **options)
    minutes = sum(entry.duration for entry in manifest.recordings) / 60
    splits = ", ".join(
        f"{name} {count}" for name, count in sorted(Counter(entry.split for entry in manifest.recordings).items())
    )
    print(
        f"froze {len(manifest.recordings)} recordings ({minutes:.1f} min; {splits}) "
        f"into {args.out} (manifest sha256 {manifest.sha256})"
    )
    return 0


def _imported(args: argparse.Namespace) -> tuple[list[ImportedRecording], Path] | None:
    """The recordings of the one corpus form named (with the path errors about the whole set name), or None
    for AUDIO_DIR with --refs; any other mix of forms is refused."""
    forms = [name for name in ("kaldi", "lhotse", "audiofolder") if getattr(args, name) is not None]
    if len(forms) > 1 or (forms and (args.audio_dir or args.refs)):
        given = [f"--{name}" for name in forms] + ["AUDIO_DIR"] * bool(args.audio_dir) + ["--refs"] * bool(args.refs)
        raise InputError(
            None,
            f"give one corpus: AUDIO_DIR with --refs, --kaldi, --lhotse or --audiofolder, not {' and '.join(given)}",
        )
    if not forms:
        if not args.audio_dir or not args.refs:
            raise InputError(None, "give AUDIO_DIR with --refs REF_DIR, or one of --kaldi, --lhotse, --audiofolder")
        return None
    if args.kaldi is not None:
        from toolkit.corpus.kaldi import read_kaldi_folder

        return read_kaldi_folder(args.kaldi), Path(args.kaldi)
    if args.lhotse is not None:
        from toolkit.corpus.lhotse_manifests import read_lhotse

        return read_lhotse(*args.lhotse), Path(args.lhotse[0])
    from toolkit.corpus.audiofolder import read_audiofolder

    return read_audiofolder(args.audiofolder), Path(args.audiofolder) / "metadata.csv"


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
