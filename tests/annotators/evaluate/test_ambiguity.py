"""screenmill.annotators.evaluate.ambiguity: instructions whose labels name disjoint boxes."""

from __future__ import annotations

import dataclasses

from screenmill.annotators.evaluate.ambiguity import Ambiguity, ambiguous_labels
from screenmill.annotators.evaluate.matching import evaluate
from screenmill.annotators.evaluate.reports import format_table, to_dict

from tests.annotators.evaluate.records import P, T


def _row(instruction, box, sid="s1"):
    return {"screenshot_id": sid, "instruction": instruction, **dict(zip(("x0", "y0", "x1", "y1"), box, strict=True))}


def test_ambiguous_labels_are_disjoint_boxes_under_one_instruction():
    rows = [
        _row('click "Edit"', (0, 0, 40, 20)),
        _row('Click  "edit"', (100, 0, 140, 20)),  # case and spacing do not make another instruction
        _row('click "Edit"', (5, 5, 35, 15)),  # overlaps the first: still in the pair, which is ambiguous
        _row('click "Save"', (0, 50, 40, 70)),
        _row('click "Save"', (10, 55, 50, 75)),  # another annotator's box of the same element: not ambiguous
        _row('click "Edit"', (200, 0, 240, 20), sid="s2"),  # another screenshot
        _row('click "Next"', (0, 0, 10, 10)),
        _row('click "Next"', (10, 0, 20, 10)),  # touching edges: two elements
    ]
    found = ambiguous_labels(rows)
    assert found == [
        Ambiguity("s1", 'click "Edit"', ((0, 0, 40, 20), (100, 0, 140, 20), (5, 5, 35, 15))),
        Ambiguity("s1", 'click "Next"', ((0, 0, 10, 10), (10, 0, 20, 10))),
    ]
    rep = evaluate([T("Edit", (0, 0, 40, 20))], [P("Edit", (5, 5))])
    assert rep.ambiguous_labels == 0 and "ambiguous labels: 0 in 0" in format_table(rep)
    rep = dataclasses.replace(rep, ambiguous=tuple(found))
    assert rep.ambiguous_labels == 5 and "ambiguous labels: 5 in 2" in format_table(rep)
    d = to_dict(rep, details=True)
    assert (d["ambiguous_labels"], d["ambiguous_pairs"]) == (5, 2)
    assert d["ambiguous"][1]["instruction"] == 'click "Next"'
