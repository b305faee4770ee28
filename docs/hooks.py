"""MkDocs hooks: pages generated from the code, so the reference never drifts from it.

``<!-- cli-reference -->`` in a page becomes every ``ablate`` subcommand's help, read from the parser
the command itself uses (toolkit.cli.build_parser); ``<!-- experiment-reference -->`` every table of an
experiment file, from the dataclasses its loader builds; ``<!-- gates-reference -->`` every gate, from
the gates' own specification (toolkit.protocol.gates_file.SPECS).
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
from typing import Any

MARKER = "<!-- cli-reference -->"
EXPERIMENT_MARKER = "<!-- experiment-reference -->"
GATES_MARKER = "<!-- gates-reference -->"


def _subcommands(parser: argparse.ArgumentParser, prefix: str) -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(prefix, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _subcommands(sub, f"{prefix} {name}")
    return found


def cli_reference() -> str:
    """Markdown: one section per command and subcommand, its full ``--help`` text."""
    from toolkit.cli import build_parser

    parts = []
    for name, parser in _subcommands(build_parser(), "ablate")[1:]:
        parser.prog = name
        parts.append(f"## `{name}`\n\n```text\n{parser.format_help().rstrip()}\n```\n")
    return "\n".join(parts)


def _cell(text: str) -> str:
    """A Markdown table cell: a "|" inside would end it."""
    return text.replace("|", "\\|")


# Annotations as a reader of an experiment file knows them (the modules' postponed annotations are strings).
_READABLE = {
    "Any": "table",
    "SileroVadConfig": "Silero table",
    "Device": '"auto", "cpu" or "cuda"',
    "tuple[float, ...]": "list of float",
    "tuple[int, ...]": "list of int",
    "tuple[str, ...]": "list of str",
    "Path | None": "path",
    "float | None": "float",
}


def _readable(annotation: Any) -> str:
    text = str(annotation)
    if text.startswith("Literal["):
        choices = [choice.strip(" '") for choice in text[len("Literal[") : -1].split(",")]
        return " or ".join(f'"{choice}"' for choice in choices)
    return _READABLE.get(text, text)


def _toml(value: Any) -> str:
    """A default as an experiment file writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    return repr(value)


def _default(field: dataclasses.Field) -> str:
    default = field.default
    if default is dataclasses.MISSING and field.default_factory is not dataclasses.MISSING:
        default = field.default_factory()
    if default is dataclasses.MISSING:
        return "required"
    if default is None:
        return "left out"
    if dataclasses.is_dataclass(default):
        return "a table (below)"
    return f"`{_cell(_toml(default))}`"


def _fields_table(
    config: type, inherited: type | None = None, *, every_key: bool = False, skip: tuple[str, ...] = ()
) -> str:
    """Markdown: the dataclass's docstring, then one row per field (but ``skip`` and those of ``inherited``);
    ``every_key``: the loader requires every key written out, so no default applies."""
    left_out = {*skip, *(f.name for f in dataclasses.fields(inherited))} if inherited else set(skip)
    rows = [
        f"| `{f.name}` | {_cell(_readable(f.type))} | {'required' if every_key else _default(f)} |"
        for f in dataclasses.fields(config)
        if f.name not in left_out
    ]
    rule = "Every key must be written out." if every_key else "A key left out takes the value in the last column."
    doc = inspect.cleandoc(config.__doc__ or "")
    return "\n".join([doc, "", rule, "", "| key | type | when left out |", "|---|---|---|", *rows, ""])


def experiment_reference() -> str:
    """Markdown: each table of an experiment file, from the dataclass its loader builds it into."""
    from toolkit.asr.command_backend import CommandConfig
    from toolkit.asr.faster_whisper_backend import DecodingConfig
    from toolkit.asr.whisperx_backend import WhisperXConfig
    from toolkit.audio.vad import SileroVadConfig
    from toolkit.enhance import ENHANCERS
    from toolkit.pipeline.loudness import LoudnessConfig
    from toolkit.pipeline.seam_records import SeamConfig
    from toolkit.pipeline.stages import OnsetRepairConfig, SecondModelConfig, VadStageConfig, WindowsConfig
    from toolkit.pipeline.windows import PauseConfig
    from toolkit.scorer.options import ScoreOptions

    sections = [
        ("`[recognizers.NAME.decoding]`, backend `faster-whisper`", _fields_table(DecodingConfig)),
        (
            "`[recognizers.NAME.decoding]`, backend `whisperx`: the keys above, and",
            _fields_table(WhisperXConfig, DecodingConfig),
        ),
        (
            "`[recognizers.NAME]`, backend `command`: `label`, an optional `model` (a file, a folder or "
            "`whisper-base`, hashed), and ([Bring your own recognizer](../command-recognizer.md))",
            _fields_table(CommandConfig, every_key=True),
        ),
        (
            'Silero: `[vad_profiles.NAME]`, or a table in place of `vad_profile = "NAME"` (the `vad` stage, '
            "`pauses.vad`, the onset repair's `vad`, a whisperx recognizer's `decoding.silero`)",
            _fields_table(SileroVadConfig, every_key=True),
        ),
        (
            '`[components.NAME]`, `stage = "vad"`: the Silero keys, and',
            _fields_table(VadStageConfig, SileroVadConfig, every_key=True),
        ),
        ('`[components.NAME]`, `stage = "windows"`', _fields_table(WindowsConfig, every_key=True)),
        ("`[components.NAME.seam]` (windows)", _fields_table(SeamConfig, every_key=True)),
        (
            '`[components.NAME.pauses]` (windows, `placement = "vad_pauses"`)',
            _fields_table(PauseConfig, every_key=True),
        ),
        ('`[components.NAME]`, `stage = "onset_repair"`', _fields_table(OnsetRepairConfig, every_key=True)),
        ('`[components.NAME]`, `stage = "loudness"`', _fields_table(LoudnessConfig, every_key=True)),
        ('`[components.NAME]`, `stage = "second_model"`', _fields_table(SecondModelConfig)),
        *(
            (f'`[components.NAME.params]`, `stage = "enhance"`, `method = "{method}"`', _fields_table(params))
            for method, (_, params) in ENHANCERS.items()
        ),
        ("`[scoring]` (names come from each recording's reference)", _fields_table(ScoreOptions, skip=("names",))),
    ]
    return "\n".join(f"## {title}\n\n{body}" for title, body in sections)


def gates_reference() -> str:
    """Markdown: every gate a gates file declares, what it measures and which way it passes."""
    from toolkit.protocol.gates_file import SPECS

    rows = [
        f"| `{spec.name}` | {_cell(spec.measures)} | value {_cell(spec.comparison)} threshold "
        f"| {'count' if spec.count else 'value'} |"
        for spec in SPECS
    ]
    return "\n".join(["| gate | measures | passes when | kind |", "|---|---|---|---|", *rows, ""])


GENERATED = {MARKER: cli_reference, EXPERIMENT_MARKER: experiment_reference, GATES_MARKER: gates_reference}


def on_page_markdown(markdown: str, **_: Any) -> str:
    for marker, generate in GENERATED.items():
        if marker in markdown:
            markdown = markdown.replace(marker, generate())
    return markdown
