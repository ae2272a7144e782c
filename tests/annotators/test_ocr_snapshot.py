"""OCR quality in CI: the committed snapshot (ungrouped OCR pieces, pixels and DOM truth of the project's own pages,
tests/annotators/ocr_snapshot/README.md) grouped and labelled by the code as it stands and scored by the project's
matching, with floors a little below the figures measured when the snapshot was made. No ONNX run: the grouping
alone, a few seconds. The snapshot's sites are the rules' tuning pages (split dev): the floors guard against
regressions, they are no held-out figure (infra/truthset/BASELINE.md)."""

from __future__ import annotations

import pytest
from screenmill.annotators.ocr import OcrAnnotator, group_elements
from screenmill.annotators.ocr_config import OcrConfig
from screenmill.annotators.ocr_snapshot import DEFAULT_SNAPSHOT, read_snapshot, score_snapshot

#: Measured with the default grouping (the packaged model gb1-224fee5c959b over OCR revision 85's rules) on the 28
#: screenshots (2026-12-03): recall of texts of at most 60 characters 97.2 % (1172 truth texts), point accuracy
#: 99.8 %, precision 98.0 % (1228 labels), 0 ambiguous labels; the rules alone 97.8 / 99.8 / 98.6 % (1227 labels).
RECALL_SHORT_FLOOR = 0.965
POINT_ACCURACY_FLOOR = 0.99
PRECISION_FLOOR = 0.975


@pytest.fixture(scope="module")
def snapshot():
    return read_snapshot(DEFAULT_SNAPSHOT)


def test_the_snapshot_is_of_this_ocr_revision_and_holds_a_few_dozen_screenshots(snapshot):
    version, shots = snapshot
    assert version == OcrAnnotator.VERSION, "the OCR's reading changed: rebuild the snapshot (README.md)"
    assert len(shots) >= 24
    assert {s.split for s in shots} == {"dev"}
    assert all(s.pieces and s.truth for s in shots)


def test_grouping_the_snapshot_scores_above_the_floors(snapshot):
    _, shots = snapshot
    score = score_snapshot(shots)["all"]
    print(score.line())
    assert score.recall_short >= RECALL_SHORT_FLOOR, score.line()
    assert score.point_accuracy >= POINT_ACCURACY_FLOOR, score.line()
    assert score.precision >= PRECISION_FLOOR, score.line()
    assert score.ambiguous_labels == 0, score.line()


def test_pieces_never_joined_score_below_the_floor(snapshot):
    """The floors can fail: the same pieces with no candidate pair of pieces or lines joined (measured: recall 97.3 %,
    precision 93.8 % of 1284 labels: fragments of wrapped links and headings) fall under the precision floor."""
    _, shots = snapshot
    score = score_snapshot(shots, decide=lambda *pair: False)["all"]
    assert score.precision < PRECISION_FLOOR, score.line()


def test_a_decide_callback_that_returns_the_rules_decision_groups_as_the_rules_do(snapshot):
    _, shots = snapshot
    shot = max(shots, key=lambda s: len(s.pieces))
    pixels, seen = shot.pixels(), []

    def rules(kind, i, j, rule, view):
        seen.append(kind)
        return rule

    by_rules = group_elements(pixels, list(shot.pieces), OcrConfig(grouping="rules"))
    assert group_elements(pixels, list(shot.pieces), OcrConfig(), decide=rules) == by_rules
    assert {"row", "line"} <= set(seen)
    never = group_elements(pixels, list(shot.pieces), OcrConfig(), decide=lambda *a: False)
    assert len(never) > len(by_rules)


def test_the_rules_alone_score_above_the_floors_too(snapshot):
    """``OcrConfig(grouping="rules")``, the option (``--ocr-join rules``): the snapshot's sites are the rules' tuning
    pages, so this guards the option against breaking, not its held-out quality (measured with OCR revision 85:
    recall of short texts 97.8 %, point accuracy 99.8 %, precision 98.6 % of 1227 labels)."""
    _, shots = snapshot
    score = score_snapshot(shots, OcrConfig(grouping="rules"))["all"]
    assert score.recall_short >= RECALL_SHORT_FLOOR, score.line()
    assert score.point_accuracy >= POINT_ACCURACY_FLOOR, score.line()
    assert score.precision >= PRECISION_FLOOR, score.line()
    assert score.ambiguous_labels == 0, score.line()


def test_reread_refuses_a_folder_with_no_snapshot(tmp_path, capsys):
    from screenmill.annotators.ocr_snapshot import main

    assert main(["reread", str(tmp_path)]) == 2
    assert "is no readable snapshot" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
