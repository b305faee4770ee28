"""``device = "auto" | "cpu" | "cuda"`` for recognizers, VAD passes and enhancers, on a machine without a GPU.

The configuration path is tested here: every setting parses strictly, "auto" resolves to the CPU
and the run record names it, and "cuda" is refused in one line naming the file and the table
before anything is written. The CUDA path itself is the libraries' own (faster-whisper's and
whisperx's ``device=``, onnxruntime's CUDA provider, noisereduce's torch backend).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from demo_variant import DEMO, demo_variant

from toolkit.core.config import build_config
from toolkit.core.devices import NoCuda, cuda_devices, device_record, resolve
from toolkit.core.errors import InputError
from toolkit.enhance import build_enhancer
from toolkit.pipeline.cache import ResultCache
from toolkit.pipeline.experiment import load_experiment
from toolkit.pipeline.recognizers import RecognizerPool
from toolkit.pipeline.runner import ArmRunner

pytestmark = pytest.mark.skipif(
    cuda_devices("ctranslate2") > 0 or cuda_devices("onnxruntime") > 0 or cuda_devices("torch") > 0,
    reason="this machine has a CUDA device: the refusals tested here do not apply",
)


@pytest.mark.needs_model  # the recognizers' runtimes probe CTranslate2 on the bundled model
def test_auto_is_the_cpu_here_and_the_run_record_says_so() -> None:
    experiment = load_experiment(DEMO)
    pool = RecognizerPool(experiment)
    runtimes = pool.runtimes()
    assert {runtime["device"] for runtime in runtimes.values()} == {"cpu"}
    assert all(runtime["isa"] for runtime in runtimes.values())  # on a CPU, the code CTranslate2 selects
    assert runtimes["whisper_base_batched"]["silero_device"] == "cpu"
    runner = ArmRunner(experiment, ResultCache(Path("unused")), pool, list(experiment.arms.values()))
    assert runner.stage_devices() == {
        "vad": {"device": "cpu"},
        "windows": {"device": "cpu"},
        "onset_repair": {"device": "cpu"},
        "gtcrn": {"device": "cpu"},
    }


@pytest.mark.needs_model
def test_cuda_for_a_recognizer_is_refused_naming_the_file_and_table(tmp_path: Path) -> None:
    # The primary recognizer's decoding table holds the file's first device line.
    experiment = load_experiment(demo_variant(tmp_path, 'device = "auto"', 'device = "cuda"'))  # loads anywhere
    with pytest.raises(InputError) as raised:
        RecognizerPool(experiment).runtimes()
    message = str(raised.value)
    assert message.startswith(f'{tmp_path / "experiment.toml"}: [recognizers.whisper_base.decoding] device = "cuda"')
    assert "ctranslate2 sees no CUDA device here" in message and "\n" not in message


@pytest.mark.needs_model  # GTCRN's refusal comes from onnxruntime, which the enhancer starts
def test_cuda_for_a_vad_pass_or_an_enhancer_is_refused_naming_the_component(tmp_path: Path) -> None:
    text = DEMO.read_text(encoding="utf-8")
    profile = text.index("\n[vad_profiles.demo]\n")  # the vad component's Silero settings
    path = demo_variant(tmp_path, text[profile:], text[profile:].replace('device = "auto"', 'device = "cuda"', 1))
    experiment = load_experiment(path)
    pool = RecognizerPool(experiment)
    runner = ArmRunner(experiment, ResultCache(tmp_path / "cache"), pool, [experiment.arms["vad"]])
    with pytest.raises(InputError, match=r"\[components\.vad\] device = \"cuda\".*onnxruntime sees no CUDA device"):
        runner.stage_devices()

    gtcrn = text.index("[components.gtcrn.params]")
    path = demo_variant(tmp_path, text[gtcrn:], text[gtcrn:].replace('device = "auto"', 'device = "cuda"', 1))
    experiment = load_experiment(path)
    with pytest.raises(InputError) as raised:
        ArmRunner(experiment, ResultCache(tmp_path / "cache"), RecognizerPool(experiment), [experiment.arms["enhance"]])
    assert str(raised.value).startswith(f'{path}: [components.gtcrn] gtcrn parameters: device = "cuda"')
    assert "install onnxruntime-gpu" in str(raised.value)


def test_device_settings_are_parsed_strictly(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"device must be one of 'auto', 'cpu', 'cuda', not 'gpu'"):
        load_experiment(demo_variant(tmp_path, 'device = "auto"', 'device = "gpu"'))
    with pytest.raises(InputError, match=r"device_index must be a CUDA device number >= 0, not -1"):
        load_experiment(demo_variant(tmp_path, "device_index = 0", "device_index = -1"))
    with pytest.raises(InputError, match="gtcrn parameter device must be one of 'auto', 'cpu', 'cuda', got 'tpu'"):
        build_enhancer("gtcrn", {"device": "tpu"})
    from toolkit.audio.vad import LIBRARY_DEFAULTS, SileroVadConfig

    with pytest.raises(InputError, match="must write out every parameter; missing device, device_index"):
        table = {f: v for f, v in LIBRARY_DEFAULTS.__dict__.items() if not f.startswith("device")}
        build_config(SileroVadConfig, table, path="exp.toml", where="vad")


def test_resolution_and_record_of_a_device() -> None:
    assert resolve("auto", 0, "ctranslate2") == "cpu" and resolve("cpu", 3, "torch") == "cpu"
    with pytest.raises(NoCuda, match='set device = "cpu"'):
        resolve("cuda", 1, "torch")
    assert device_record("cpu") == {"device": "cpu"}
    assert device_record("cuda:1")["device_index"] == 1  # the GPU's name is looked up where there is one
