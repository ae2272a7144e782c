"""`screenmill export` from the command line: registration, exit codes, the --local-dir run and its report."""

from __future__ import annotations

import json

import pytest
from screenmill.pipelines import cli
from screenmill.pipelines.export import main

pytest.importorskip("datasets")
pytest.importorskip("huggingface_hub")
from tests.stages.export.test_hub import PLANTED, Out, day1, day2  # noqa: E402  (skipped above without the hub extra)


def test_export_is_a_screenmill_command(capsys):
    assert cli.main(["--help"]) == 0
    assert "export" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        cli.main(["export", "--help"])
    assert e.value.code == 0
    assert "--local-dir" in capsys.readouterr().out


def test_bad_settings_exit_2_without_calling_the_hub(tmp_path, monkeypatch, capsys):
    import huggingface_hub

    def boom(*args, **kwargs):
        raise AssertionError("the Hub was called")

    monkeypatch.setattr(huggingface_hub.HfApi, "create_repo", boom)
    for var in ("HF_TOKEN", "HUGGINGFACE_HUB_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "_runs").mkdir()  # an output tree (an empty one)
    assert main([str(tmp_path), "--repo", "org/name"]) == 2
    assert "HF_TOKEN" in capsys.readouterr().err
    assert main([str(tmp_path)]) == 2  # neither --repo nor --local-dir
    assert main([str(tmp_path), "--repo", "not a repo"]) == 2
    assert main([str(tmp_path), "--local-dir", str(tmp_path / "d"), "--test-fraction", "1"]) == 2
    assert "test_fraction" in capsys.readouterr().err


def test_local_dir_run_prints_counts_and_writes_a_report(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_TOKEN", PLANTED)  # unused in --local-dir mode, and never shown
    o = Out(tmp_path)
    d1 = day1(o)
    day2(o, d1)
    local = tmp_path / "repo"
    assert main([str(o.out), "--local-dir", str(local), "--seed", "t", "--test-fraction", "0.5"]) == 0
    out = capsys.readouterr().out
    assert f"-> {local}" in out and "screenshots/missing_image=2" in out and "grounding/held_back=3" in out
    report = json.loads(next((o.out / "_export").glob("export-*.json")).read_text())
    assert {d["reason"] for d in report["dead_letters"]} == {
        "missing_image",
        "changed_since_run",
        "held_back",
        "missing_screenshot",
        "missing_label",
    }
    assert report["written"][-3:] == ["README.md", "_screenmill/index.parquet", "_screenmill/state.json"]
    assert (local / "README.md").is_file() and PLANTED not in out
    assert main([str(o.out), "--local-dir", str(local), "--seed", "other", "--test-fraction", "0.5"]) == 2
    assert "same --test-fraction/--seed" in capsys.readouterr().err
