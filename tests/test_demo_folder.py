"""``ablate demo [FOLDER]`` runs in the folder the user names, with the shipped experiment unless one is there."""

from __future__ import annotations

from pathlib import Path

from toolkit.cli import build_parser
from toolkit.cli.demo import DEFAULT_FOLDER, ablate_command, place_experiment_file
from toolkit.demo import DEMO_EXPERIMENT


def test_the_default_folder_is_experiments_demo_under_the_current_directory() -> None:
    assert build_parser().parse_args(["demo"]).folder == DEFAULT_FOLDER == Path("experiments/demo")
    assert build_parser().parse_args(["demo", "/data/mydemo"]).folder == Path("/data/mydemo")


def test_an_empty_folder_gets_the_shipped_experiment(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "new" / "demo"
    place_experiment_file(folder)
    assert (folder / "experiment.toml").read_bytes() == DEMO_EXPERIMENT.read_bytes()
    assert "wrote the demo experiment" in capsys.readouterr().out


def test_an_experiment_already_there_is_run_as_it_is_and_said_to_differ(tmp_path: Path, capsys) -> None:
    edited = DEMO_EXPERIMENT.read_text(encoding="utf-8").replace("seed = 0", "seed = 1")
    (tmp_path / "experiment.toml").write_text(edited, encoding="utf-8")
    place_experiment_file(tmp_path)
    assert (tmp_path / "experiment.toml").read_text(encoding="utf-8") == edited
    assert "differs from the shipped demo experiment" in capsys.readouterr().out
    (tmp_path / "experiment.toml").write_bytes(DEMO_EXPERIMENT.read_bytes())
    place_experiment_file(tmp_path)
    assert capsys.readouterr().out == ""


def test_the_app_command_the_demo_suggests_is_one_that_runs(tmp_path: Path, monkeypatch) -> None:
    """``make demo`` calls .venv/bin/ablate without the virtualenv on the PATH: the hint names that path."""
    venv_ablate = tmp_path / "venv" / "bin" / "ablate"
    venv_ablate.parent.mkdir(parents=True)
    venv_ablate.write_text("#!/bin/sh\n", encoding="utf-8")
    venv_ablate.chmod(0o755)
    monkeypatch.setattr("sys.argv", [str(venv_ablate), "demo"])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert ablate_command() == str(venv_ablate)
    monkeypatch.setenv("PATH", f"{venv_ablate.parent}:/usr/bin")  # activated: the bare name finds the same file
    assert ablate_command() == "ablate"
    monkeypatch.setattr("sys.argv", ["/somewhere/toolkit/__main__.py", "demo"])  # python -m toolkit demo
    assert ablate_command().endswith(" -m toolkit")
