"""`screenmill selftest`: the quick mode runs every section but kill -9, reports the figures, and fails (exit 1) while
any expectation does not hold; the kill -9 part loses and duplicates nothing."""

from __future__ import annotations

import json

import pytest
from screenmill.pipelines.selftest import main
from screenmill.pipelines.selftest.fixtures import grouped, run_kill9


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    base = tmp_path_factory.mktemp("selftest")
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["--quick", "--workdir", str(base / "work"), "--json", str(base / "figures.json")])
    return code, json.loads((base / "figures.json").read_text()), buf.getvalue()


@pytest.mark.slow  # the module's quick selftest: the whole adversarial corpus, retries and the services run
def test_quick_selftest_reports_every_section_but_kill9(quick):
    code, figures, report = quick
    assert figures["mode"] == "quick" and "kill9" not in figures
    assert "kill -9 + rerun: skipped (--quick)" in report
    corpus = figures["corpus"]
    assert corpus["ok"], corpus["mismatches"]
    assert corpus["bad_dead_lettered"] == corpus["bad"] > 50 and corpus["crash"] is None
    assert f"bad inputs dead-lettered with the expected reason: {corpus['bad']}/{corpus['bad']} (100.0 %)" in report
    assert "files opened outside the input root: 0" in report
    assert figures["retry"]["ok"] and figures["retry"]["survived"] == figures["retry"]["transient"] == 10
    answers = figures["answers"]
    assert not answers["executed"] and answers["tried"] > 100
    assert answers["crashes"] == []
    services = figures["services"]
    assert services["crash"] is None and not services["hits"]
    assert all(services["faults"].values()), services["faults"]
    assert figures["crashes"] == len(figures["crash_list"])
    assert code == (0 if figures["ok"] else 1)
    assert report.rstrip().endswith("result: PASS" if code == 0 else "result: FAIL")


@pytest.mark.slow  # reads the module's quick selftest (above)
def test_quick_selftest_passes(quick):
    code, figures, _ = quick
    assert figures["crash_list"] == [] and figures["ok"] and code == 0


@pytest.mark.slow  # a clean run, then per kill point a run in a subprocess killed and run again
def test_kill9_then_rerun_loses_and_duplicates_nothing(tmp_path):
    res = run_kill9(tmp_path, points=("commit:after_first_move", "timed"))
    assert res.ok, res.points
    assert res.lost == 0 and res.duplicated == 0
    assert all(p["killed"] for p in res.points.values())


def test_selftest_is_a_screenmill_command():
    from screenmill.pipelines.cli import _COMMANDS

    assert _COMMANDS["selftest"][:2] == ("screenmill.pipelines.selftest", "main")


def test_grouped_folds_recipes():
    lines = ["a / huge_int: ValueError", "b / huge_int: ValueError", "a / deep: RecursionError"]
    assert grouped(lines) == ["huge_int: ValueError (2 recipes: a, b)", "deep: RecursionError (1 recipes: a)"]
