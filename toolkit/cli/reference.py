"""``ablate reference apply EXP [--out REF_DIR]``: write a new reference version from settled decisions;
``ablate reference align AUDIO REF --out OUT.TextGrid``: derive word times by forced alignment."""

from __future__ import annotations

import argparse
import getpass
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reference",
        help="reference versions: apply adjudication decisions, derive word times",
        description="Reference versions made from the experiment's decisions, and word times derived for an "
        "untimed reference.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    apply = actions.add_parser(
        "apply",
        help="write a new reference version (TextGrids, manifest, record of decisions)",
        description="Apply every span's effective decision to the experiment's current references and write "
        "a new reference version: new TextGrid files, a new manifest with their hashes, and "
        "adjudication.json naming the decisions that went in, into the experiment's references/ folder "
        "under a generated version name (vNNN-<UTC time>) unless --out names another. Open conflicts block "
        "it; decisions made on another reference version are listed and never applied.",
    )
    apply.add_argument("experiment", type=Path, metavar="EXP", help="experiment folder")
    apply.add_argument(
        "--out",
        type=Path,
        metavar="REF_DIR",
        help="new, empty folder to write (default: EXP/references/vNNN-<UTC time>)",
    )
    apply.add_argument(
        "--manifest",
        type=Path,
        metavar="MANIFEST",
        help="the reference version to start from (default: the experiment's manifest)",
    )
    apply.add_argument("--by", default=None, metavar="NAME", help="who applies (default: the login name)")
    apply.set_defaults(func=_apply)
    align = actions.add_parser(
        "align",
        help="derive word times for an untimed reference by forced alignment (a TextGrid marked as derived)",
        description="Align the reference's own words to the recording with a Whisper model (a timed turn's words "
        "within its own interval, untimed turns' in 30 s windows; words that cannot be placed stay untimed) and "
        "write a TextGrid whose words tier holds the derived times and whose derived_times tier names the model, "
        "its weights sha256 and the aligner's measured p95 onset error, which holds only for the reference's own "
        "recording: when fewer than 70% of the words can be placed the recording is refused as not the "
        "reference's, unless --allow-partial. The scorer marks timing figures measured against it as derived, and "
        "a time gate finer than that p95 refuses it (docs/forced-alignment.md).",
    )
    align.add_argument("audio", type=Path, metavar="AUDIO", help="the recording")
    align.add_argument("ref", type=Path, metavar="REF", help="its reference (.txt, .stm or .TextGrid: untimed words)")
    align.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="OUT.TextGrid",
        help="TextGrid to write (missing folders are created, as other commands' --out do)",
    )
    align.add_argument("--channel", metavar="N|mix", help="the channel of multichannel audio: a number or 'mix'")
    align.add_argument(
        "--allow-partial",
        action="store_true",
        help="write the alignment even when fewer than 70%% of the words can be placed (the measured accuracy "
        "then does not hold)",
    )
    align.add_argument("--model", default="whisper-base", help="Whisper model (default: the bundled whisper-base)")
    align.add_argument("--cpu-threads", type=int, default=2, metavar="N", help="CTranslate2 threads (default 2)")
    align.set_defaults(func=_align)


def _apply(args: argparse.Namespace) -> int:
    from toolkit.adjudication.apply import MANIFEST_NAME, apply_decisions
    from toolkit.adjudication.context import open_experiment

    adjudication = open_experiment(args.experiment, args.manifest)
    result = apply_decisions(adjudication, args.by or getpass.getuser(), args.out)
    for decision in result.stale:
        print(
            f"not applied (made on reference version {decision.reference_sha256[:12]}, not this one): "
            f"#{decision.id} {decision.recording_id} {decision.start:g}-{decision.end:g} s {decision.action}"
        )
    print(
        f"applied {len(result.applied)} decisions to {len(result.changed)} recordings "
        f"({', '.join(result.changed)}) into {result.out_dir}"
    )
    print(
        f"new manifest {result.out_dir / MANIFEST_NAME} (manifest sha256 {result.manifest.sha256}); "
        f"point the experiment's 'manifest =' at it to score against this version"
    )
    return 0


def _align(args: argparse.Namespace) -> int:
    from toolkit.asr.derived_times import MIN_PLACED_SHARE, derive_reference_times
    from toolkit.audio.io import probe_audio
    from toolkit.core.errors import InputError
    from toolkit.corpus.freeze import parse_channel
    from toolkit.formats import read_reference
    from toolkit.formats.textgrid import write_textgrid

    if args.out.suffix.lower() != ".textgrid":
        raise InputError(args.out, "--out must name a .TextGrid file (the command writes a TextGrid)")
    channel = parse_channel(args.channel, "--channel")
    info = probe_audio(args.audio)
    if info.channels > 1 and channel is None:
        raise InputError(
            args.audio, f"has {info.channels} channels; choose one with --channel (0-{info.channels - 1} or mix)"
        )
    reference = read_reference(args.ref, args.audio.stem, info.duration)
    reference = derive_reference_times(
        reference,
        args.audio,
        args.model,
        args.cpu_threads,
        channel=channel,
        source=args.ref,
        min_placed=0.0 if args.allow_partial else MIN_PLACED_SHARE,
    )
    write_textgrid(reference, args.out, info.duration)
    words = sum(len(u.text.split()) for u in reference.utterances)
    derived = reference.derived_times
    caution = (
        f" (fewer than {MIN_PLACED_SHARE:.0%} placed: that accuracy, measured on matching audio, may not hold)"
        if len(reference.words) < MIN_PLACED_SHARE * words
        else ""
    )
    described = derived.describe() if derived is not None else "marked times"
    print(f"{len(reference.words)} of {words} words timed into {args.out}: {described}{caution}")
    return 0
