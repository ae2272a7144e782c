"""The learned OCR grouping: pair labels from DOM truth, the pair table of real screenshots (the committed snapshot),
training and exporting the trees, the packaged model as the grouping's decisions and as a config option."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from screenmill.annotators import ocr_learn, ocr_model
from screenmill.annotators.evaluate.truth import LINE, TruthRecord
from screenmill.annotators.ocr import TextElement, group_elements
from screenmill.annotators.ocr_config import OcrConfig
from screenmill.annotators.ocr_snapshot import DEFAULT_SNAPSHOT, read_snapshot


def _piece(text: str, box: tuple[float, float, float, float]) -> TextElement:
    return TextElement(text, box, ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), 0.99)


def _truth(text: str, box: tuple[float, float, float, float], kind: str = "text") -> TruthRecord:
    return TruthRecord("s", text, box, element="link", data_type=kind)


def test_two_pieces_join_when_one_truth_element_holds_both_and_their_words():
    link = _truth("Main call to action", (10, 10, 200, 60))
    a, b = _piece("Main call", (12, 12, 120, 32)), _piece("to action", (12, 38, 110, 58))
    assert ocr_learn.pair_label(a, b, [link]) == (True, True)
    other = _piece("Pricing", (12, 38, 110, 58))  # inside the box, but not the element's words
    assert ocr_learn.pair_label(a, other, [link]) == (False, True)
    apart = [_truth("Main call", (10, 10, 122, 34)), _truth("to action", (10, 36, 112, 60))]
    assert ocr_learn.pair_label(a, b, apart) == (False, True)


def test_two_lines_of_a_paragraph_are_a_pair_the_dom_does_not_tell():
    lines = [
        _truth("This value means that", (10, 10, 300, 34), LINE),
        _truth("an out-of-memory", (10, 36, 250, 60), LINE),
    ]
    a, b = _piece("This value means that", (12, 12, 290, 32)), _piece("an out-of-memory", (12, 38, 240, 58))
    assert ocr_learn.pair_label(a, b, lines) == (False, False)


@pytest.fixture(scope="module")
def pair_table(tmp_path_factory):
    """The pair table of six screenshots of the committed snapshot (phone and desktop, two sites)."""
    import pyarrow as pa

    _, shots = read_snapshot(DEFAULT_SNAPSHOT)
    picked = sorted(shots, key=lambda s: -len(s.pieces))[:6]
    rows = []
    for s in picked:
        rows += ocr_learn.pair_rows(
            s.id, s.pixels(), s.pieces, s.truth, {"site": s.site, "page": s.page, "split": s.split}
        )
    schema = ocr_learn._schema()
    path = tmp_path_factory.mktemp("pairs") / "pairs.parquet"
    pq.write_table(pa.Table.from_pylist([{n: r.get(n) for n in schema.names} for r in rows], schema=schema), path)
    return path, picked


def test_the_pair_table_has_both_kinds_both_labels_and_every_feature(pair_table):
    path, _ = pair_table
    table = pq.read_table(path)
    assert table.schema == ocr_learn._schema()
    rows = table.to_pylist()
    assert {r["kind"] for r in rows} == {"row", "line"}
    assert {r["label"] for r in rows} == {True, False}
    for r in rows:
        assert all(r[f"f_{n}"] is not None for n in ocr_model.FEATURES[r["kind"]])
        assert r["f_rule"] in (0.0, 1.0)


def test_training_writes_trees_that_reproduce_the_classifier_and_group_as_a_decide_callback(pair_table, tmp_path):
    pytest.importorskip("sklearn", reason="training needs scikit-learn (the learn extra)")
    path, shots = pair_table
    out = tmp_path / "model.json"
    assert ocr_learn.train(str(path), out, trees=30) == 0  # train() checks the exported trees against sklearn's
    model = json.loads(out.read_text())
    assert model["version"].startswith("gb1-") and model["provenance"]["pairs"] == pq.read_table(path).num_rows
    acc = ocr_learn.pair_accuracy(str(path), out)
    assert acc["dev", "row"]["model"] >= 0.9 and acc["dev", "line"]["model"] >= 0.9  # its own training pairs
    shot = shots[0]
    grouped = group_elements(shot.pixels(), list(shot.pieces), OcrConfig(), ocr_model.packaged_decide(out))
    assert 0 < len(grouped) <= len(shot.pieces)


def test_several_pair_tables_read_as_one_and_a_foreign_table_is_refused(pair_table, tmp_path):
    import pyarrow as pa

    path, _ = pair_table
    one, digest = ocr_learn.read_pairs(str(path))
    two, digest2 = ocr_learn.read_pairs([str(path), str(path)])
    assert two.num_rows == 2 * one.num_rows and digest != digest2 and len(digest2) == 64
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"kind": ["row"]}), other)
    with pytest.raises(ValueError, match="not a pair table"):
        ocr_learn.read_pairs([str(path), str(other)])


def test_leaving_one_site_out_scores_each_flip_and_never_flipping_is_the_rules(pair_table, tmp_path):
    pytest.importorskip("sklearn", reason="cross-validation needs scikit-learn (the learn extra)")
    import pyarrow as pa

    path, _ = pair_table
    table = pq.read_table(path)  # each page of the fixture as a dev site of its own: each is left out once
    for name, values in (("split", ["dev"] * table.num_rows), ("site", table.column("page").to_pylist())):
        i = table.schema.get_field_index(name)
        table = table.set_column(i, table.schema.field(i), pa.array(values))
    pq.write_table(table, tmp_path / "dev.parquet")
    cv = ocr_learn.crossval(str(tmp_path / "dev.parquet"), trees=20, flips=(0.5, 1.0))
    pages = set(table.column("page").to_pylist())
    assert len(pages) >= 2
    assert set(cv) == {(k, f) for k in ocr_model.KINDS for f in (0.5, 1.0)}
    for (_, flip), v in cv.items():
        assert 2 <= v["sites"] <= len(pages) and v["pairs"] > 0 and 0 <= v["model"] <= 1  # sites with told pairs
        if flip == 1.0:
            assert v["model"] == v["rules"] and v["worst_site_delta"] == 0.0


def test_the_chosen_flip_gives_up_a_little_mean_accuracy_for_a_better_worst_site():
    def v(model, worst):
        return {"pairs": 10.0, "sites": 3.0, "rules": 0.9, "model": model, "worst_site_delta": worst}

    cv = {("line", 0.5): v(0.968, -0.10), ("line", 0.7): v(0.965, -0.02), ("line", 0.8): v(0.959, 0.0)}
    cv |= {("row", 0.5): v(0.80, -0.2), ("row", 1.0): v(0.90, 0.0)}
    assert ocr_learn.chosen_flips(cv) == {"line": 0.7, "row": 1.0}
    assert ocr_learn.chosen_flips(cv, slack=0.0) == {"line": 0.5, "row": 1.0}
