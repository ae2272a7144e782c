"""``screenmill.stages.runners``: which runner Beam arguments name and where it runs, without importing any runner."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from screenmill.stages.runners import RUNNER, STOCK_RUNNER, is_local_runner, resolve_runner, runner_name


def test_the_run_driver_does_not_import_dask():
    """Jobs on the default runner never import dask or Beam's Dask runner (~0.5 s of every CLI start)."""
    code = (
        "import sys, screenmill.pipelines.run; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed') "
        "or m in ('apache_beam.runners.dask', 'screenmill.stages.runners.dask')))"
    )
    root = Path(__file__).parents[3]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root).stdout
    assert out.strip() == "[]"


def test_the_resolved_runner_is_the_dask_runner_class():
    pytest.importorskip("distributed")
    from apache_beam.runners.runner import create_runner
    from screenmill.stages.runners.dask import DaskRunner

    assert type(create_runner(RUNNER)) is DaskRunner


@pytest.mark.parametrize(
    "args, expected",
    [
        ([f"--runner={STOCK_RUNNER}", "--x=1"], [f"--runner={RUNNER}", "--x=1"]),
        (["--runner", "DaskRunner"], ["--runner", RUNNER]),
        (["--runner=DaskRunner"], [f"--runner={RUNNER}"]),
        (["--runner=DirectRunner", "--dask_client_address=a"], ["--runner=DirectRunner", "--dask_client_address=a"]),
        ([], []),
    ],
)
def test_resolve_runner_swaps_only_the_stock_dask_runner(args, expected):
    assert resolve_runner(args) == expected


@pytest.mark.parametrize(
    ("args", "here"),
    [
        ([], True),
        (["--direct_num_workers=2", "--direct_running_mode=multi_processing"], True),
        (["--runner=DirectRunner"], True),
        (["--runner", "PrismRunner"], True),
        (["--runner=apache_beam.runners.portability.fn_api_runner.FnApiRunner"], True),
        ([f"--runner={RUNNER}"], False),
        (["--runner", "DataflowRunner", "--project=p"], False),
        (["--runner=FlinkRunner"], False),
    ],
)
def test_only_local_runners_run_in_this_environment(args, here):
    assert is_local_runner(runner_name(args)) is here


@pytest.mark.parametrize(
    ("args", "name"),
    [
        ([], None),
        (["--direct_num_workers=2"], None),
        (["--runner=DirectRunner"], "DirectRunner"),
        (["--runner", "PrismRunner", "--x=1"], "PrismRunner"),
        (["--runner=DirectRunner", "--runner", "DataflowRunner"], "DataflowRunner"),  # the last wins, as in Beam
    ],
)
def test_runner_name(args, name):
    assert runner_name(args) == name


@pytest.mark.parametrize("args", [["--runner"], ["--runner", "--project=p"], ["--runner="]])
def test_a_runner_option_without_a_value_is_refused(args, tmp_path):
    from screenmill.pipelines.run import run

    with pytest.raises(ValueError, match="--runner needs a value"):
        runner_name(args)
    with pytest.raises(ValueError, match="--runner needs a value"):
        resolve_runner(args)
    with pytest.raises(SystemExit, match="^screenmill run: --runner needs a value"):
        run(["--input", str(tmp_path), "--output", str(tmp_path / "out"), "--annotator", "none", *args])
    assert not (tmp_path / "out").exists()
