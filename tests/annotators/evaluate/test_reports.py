"""screenmill.annotators.evaluate.reports: the per-image table of an evaluation."""

from __future__ import annotations

from screenmill.annotators.evaluate.matching import evaluate
from screenmill.annotators.evaluate.reports import format_table

from tests.annotators.evaluate.records import P, T


def test_empty_inputs():
    rep = evaluate([], [P("x", (0, 0))])
    assert rep.recall is None and rep.point_accuracy is None and rep.ignored_predictions == 1
    rep = evaluate([T("Save", (0, 0, 1, 1))], [])
    assert rep.recall == 0.0 and rep.point_accuracy is None and rep.images[0].recall == 0.0
    table = format_table(rep)
    assert "TOTAL" in table and "a.png" in table and "-" in table


def test_format_table_rows():
    truth = [T("Save", (0, 0, 50, 20)), T("Open", (0, 0, 50, 20), image="b.png")]
    table = format_table(evaluate(truth, [P("Save", (5, 5))]))
    lines = table.splitlines()
    assert lines[0].split()[:4] == ["image", "truth", "found", "recall"]
    assert any(line.startswith("a.png") and "100.0%" in line for line in lines)
    assert any(line.startswith("TOTAL") and "50.0%" in line for line in lines)
