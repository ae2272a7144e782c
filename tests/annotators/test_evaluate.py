"""screenmill.annotators.evaluate: loading ScreenSpot-style truth, text matching, greedy assignment and the metrics."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import pytest
from screenmill.annotators.evaluate import (
    Ambiguity,
    Prediction,
    TruthRecord,
    ambiguous_labels,
    evaluate,
    evaluate_by_split,
    load_truth,
    names_part_of,
    normalize_text,
    point_in_box,
    splits_from_manifest,
    text_similarity,
)


def T(text, box, image="a.png"):  # noqa: N802 - short helper
    return TruthRecord(image=image, text=text, box=box)


def P(text, point, image="a.png"):  # noqa: N802
    return Prediction(image=image, text=text, point=point)


def write_jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


# ---------------------------------------------------------------------- load_truth
def test_load_truth_xywh_default_and_bbox_xyxy_key(tmp_path):
    (tmp_path / "a.png").write_bytes(b"fake image bytes")
    f = write_jsonl(
        tmp_path / "t.jsonl",
        [
            {"img_filename": "a.png", "instruction": "Sign in", "bbox": [10, 20, 30, 40], "element": "button"},
            "",
            {"img_filename": "b.png", "instruction": "Help", "bbox_xyxy": [1, 2, 3, 4]},
        ],
    )
    recs = load_truth(f)
    assert [r.box for r in recs] == [(10, 20, 40, 60), (1, 2, 3, 4)]
    assert recs[0].element == "button" and recs[0].data_type == "text"
    assert recs[0].sha256 == hashlib.sha256(b"fake image bytes").hexdigest()
    assert recs[1].sha256 is None  # no b.png next to the file
    assert load_truth(f, bbox_format="xyxy")[0].box == (10, 20, 30, 40)


@pytest.mark.parametrize(
    "line, msg",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ({"instruction": "x", "bbox": [0, 0, 1, 1]}, "img_filename"),
        ({"img_filename": "a.png", "instruction": "  ", "bbox": [0, 0, 1, 1]}, "instruction"),
        ({"img_filename": "a.png", "instruction": "x"}, "bbox"),
        ({"img_filename": "a.png", "instruction": "x", "bbox": [0, 0, 1]}, "4 finite numbers"),
        ({"img_filename": "a.png", "instruction": "x", "bbox": [0, 0, "1", 1]}, "4 finite numbers"),
        ({"img_filename": "a.png", "instruction": "x", "bbox": [0, 0, True, 1]}, "4 finite numbers"),
        ({"img_filename": "a.png", "instruction": "x", "bbox": [0, 0, -5, 1]}, "negative"),
        ({"img_filename": "a.png", "instruction": "x", "bbox_xyxy": [5, 0, 1, 1]}, "negative"),
    ],
)
def test_load_truth_bad_lines_name_the_line(tmp_path, line, msg):
    good = {"img_filename": "a.png", "instruction": "ok", "bbox": [0, 0, 1, 1]}
    f = write_jsonl(tmp_path / "t.jsonl", [good, good, line])
    with pytest.raises(ValueError, match=rf"t\.jsonl:3: .*{msg}"):
        load_truth(f)


def test_load_truth_rejects_unknown_format(tmp_path):
    with pytest.raises(ValueError, match="bbox_format"):
        load_truth(write_jsonl(tmp_path / "t.jsonl", []), bbox_format="cxcywh")


# ---------------------------------------------------------------------- text helpers
def test_normalize_and_similarity():
    assert normalize_text("  Forgot   PASSWORD? ") == "forgot password"
    assert normalize_text("« Back") == "back"
    assert normalize_text("$1,240.00") == "1,240.00"
    assert normalize_text("...") == ""
    assert text_similarity("Sign in", "SIGN IN") == 1.0
    assert text_similarity("Settings", "Settinqs") >= 0.8  # one OCR slip
    assert text_similarity("Home", "Home Products") < 0.8  # a merged line does not count
    assert text_similarity("", "x") == 0.0
    assert point_in_box((10, 10), (10, 10, 20, 20)) and point_in_box((20, 20), (10, 10, 20, 20))
    assert not point_in_box((20.01, 15), (10, 10, 20, 20))


# ---------------------------------------------------------------------- evaluate
def test_perfect_predictions():
    truth = [T("Sign in", (0, 0, 100, 40)), T("Help", (200, 0, 260, 40))]
    rep = evaluate(truth, [P("Sign in", (50, 20)), P("help", (230, 20))])
    assert (rep.recall, rep.point_accuracy, len(rep.unmatched), len(rep.missed)) == (1.0, 1.0, 0, 0)


def test_recall_and_point_accuracy_are_separate():
    truth = [T("Sign in", (0, 0, 100, 40)), T("Help", (200, 0, 260, 40)), T("Cancel", (300, 0, 360, 40))]
    preds = [P("Sign in", (50, 20)), P("Help", (500, 500)), P("Something else", (330, 20))]
    rep = evaluate(truth, preds)
    assert rep.found == 2 and rep.truth == 3 and rep.recall == pytest.approx(2 / 3)
    assert rep.point_in_box == 1 and rep.point_accuracy == 0.5
    assert [p.text for p in rep.unmatched] == ["Something else"]
    assert [t.text for t in rep.missed] == ["Cancel"]
    d = rep.to_dict(details=True)
    assert d["point_misses"][0]["text"] == "Help" and d["unmatched_predictions"] == 1
    json.dumps(d)  # JSON-ready


def test_one_prediction_matches_one_truth_and_duplicates_pair_by_distance():
    truth = [T("Edit", (0, 0, 40, 20)), T("Edit", (0, 100, 40, 120)), T("Edit", (0, 200, 40, 220))]
    preds = [P("Edit", (20, 210)), P("Edit", (20, 10))]  # two predictions for three identical labels
    rep = evaluate(truth, preds)
    assert rep.found == 2 and rep.point_accuracy == 1.0  # each went to the row it points at
    assert [t.box for t in rep.missed] == [(0, 100, 40, 120)]


def test_greedy_prefers_similarity_over_distance():
    truth = [T("Settings", (0, 0, 100, 20)), T("Setting", (0, 100, 100, 120))]
    # "Settings" lies in the second box, but it is an exact match for the first truth element
    rep = evaluate(truth, [P("Settings", (50, 110)), P("Setting", (50, 10))])
    pairs = {(m.truth.text, m.prediction.text) for m in rep.matches}
    assert pairs == {("Settings", "Settings"), ("Setting", "Setting")}
    assert rep.point_accuracy == 0.0


def test_below_threshold_is_not_a_match():
    truth = [T("All", (0, 0, 30, 20))]
    assert evaluate(truth, [P("AlI", (10, 10))]).found == 0  # ratio 0.67
    assert evaluate(truth, [P("AlI", (10, 10))], min_ratio=0.6).found == 1
    with pytest.raises(ValueError, match="min_ratio"):
        evaluate(truth, [], min_ratio=0)


def test_images_are_kept_apart_and_keyed_by_name_path_or_sha256():
    sha = "ab" * 32
    truth = [
        TruthRecord(image="a.png", text="Save", box=(0, 0, 50, 20), sha256=sha),
        TruthRecord(image="b.png", text="Save", box=(0, 0, 50, 20)),
    ]
    preds = [
        P("Save", (10, 10), image=sha.upper()),  # content hash, any case
        P("Save", (10, 10), image="/some/dir/b.png"),  # a path: base name
        P("Save", (10, 10), image="c.png"),  # not in the truth
    ]
    rep = evaluate(truth, preds)
    assert rep.found == 2 and rep.ignored_predictions == 1
    assert [(s.image, s.found, s.predictions) for s in rep.images] == [("a.png", 1, 1), ("b.png", 1, 1)]


def test_empty_inputs():
    rep = evaluate([], [P("x", (0, 0))])
    assert rep.recall is None and rep.point_accuracy is None and rep.ignored_predictions == 1
    rep = evaluate([T("Save", (0, 0, 1, 1))], [])
    assert rep.recall == 0.0 and rep.point_accuracy is None and rep.images[0].recall == 0.0
    table = rep.format_table()
    assert "TOTAL" in table and "a.png" in table and "-" in table


def test_format_table_rows():
    truth = [T("Save", (0, 0, 50, 20)), T("Open", (0, 0, 50, 20), image="b.png")]
    table = evaluate(truth, [P("Save", (5, 5))]).format_table()
    lines = table.splitlines()
    assert lines[0].split()[:4] == ["image", "truth", "found", "recall"]
    assert any(line.startswith("a.png") and "100.0%" in line for line in lines)
    assert any(line.startswith("TOTAL") and "50.0%" in line for line in lines)


# ---------------------------------------------------------------------- ambiguity
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
    assert rep.ambiguous_labels == 0 and "ambiguous labels: 0 in 0" in rep.format_table()
    rep = dataclasses.replace(rep, ambiguous=tuple(found))
    assert rep.ambiguous_labels == 5 and "ambiguous labels: 5 in 2" in rep.format_table()
    d = rep.to_dict(details=True)
    assert (d["ambiguous_labels"], d["ambiguous_pairs"]) == (5, 2)
    assert d["ambiguous"][1]["instruction"] == 'click "Next"'


# ---------------------------------------------------------------------- precision and splits
def test_precision_counts_points_in_a_truth_element_of_matching_text():
    truth = [
        TruthRecord("a.png", "Sign in", (0, 0, 100, 40), element="button"),
        TruthRecord("a.png", "Help", (200, 0, 260, 40), element="link"),
    ]
    preds = [
        P("Sign in", (50, 20)),  # precise
        P("Sign", (60, 20)),  # in the button, text does not match: not precise
        P("Help", (500, 500)),  # matches Help by text, point outside: not precise
        P("Q", (230, 20)),  # a glyph read on the link: not precise
    ]
    rep = evaluate(truth, preds)
    assert (rep.predictions, rep.precise, rep.precision) == (4, 1, 0.25)
    roles = rep.by_element()
    assert (roles["button"]["predictions"], roles["button"]["precise"]) == (2, 1)
    assert (roles["link"]["predictions"], roles["link"]["precision"]) == (1, 0.0)
    assert roles["(none)"]["predictions"] == 1 and roles["(none)"]["truth"] == 0
    assert "precision" in rep.format_by_element() and "25.0%" in rep.format_table()
    assert rep.to_dict()["precision"] == 0.25


def test_a_run_of_a_lines_words_is_precise_and_counted_apart():
    """A line of non-element text has no parts a page marks out: a prediction naming a run of its whole words, its box
    within the line's, is precise (counted in ``line_parts``); a cut word, a box reaching past the line, or a part of
    an element (a button) is not."""
    line = TruthRecord("a.png", "family String Font family names", (0, 0, 400, 20), element="line", data_type="line")
    button = TruthRecord("a.png", "Sign in now", (0, 100, 200, 140), element="button")

    def box_p(text, box):
        return Prediction("a.png", text, ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), box)

    preds = [
        box_p("String", (60, 2, 110, 18)),  # a column of the row: a part of the line
        box_p("Font family names", (150, 2, 390, 18)),
        box_p("Fontfamily names", (150, 2, 390, 18)),  # a space lost: still the same words
        box_p("mily na", (170, 2, 260, 18)),  # cut words: no
        box_p("String", (60, 2, 110, 60)),  # a box reaching far below the line: no
        box_p("Sign in", (10, 105, 120, 135)),  # a fragment of an element: no
    ]
    rep = evaluate([line, button], preds)
    assert (rep.predictions, rep.precise, rep.line_parts) == (6, 3, 3)
    assert rep.precision == 0.5 and rep.precision_whole == 0.0
    assert "whole elements and lines only: 0.0%" in rep.summary()
    assert rep.to_dict()["line_parts"] == 3
    assert names_part_of("in the", "Read about it in the manual") and not names_part_of("in th e manual x y", "in the")
    assert not names_part_of("a", "a b c")  # a single character names nothing


def test_evaluate_by_split_scores_each_split_alone(tmp_path):
    truth = [T("Save", (0, 0, 50, 20), image="s1"), T("Open", (0, 0, 50, 20), image="s2")]
    preds = [P("Save", (10, 10), image="s1"), P("Opn", (300, 300), image="s2"), P("x", (1, 1), image="s2")]
    pages = tmp_path / "set"
    (pages / "siteA").mkdir(parents=True)
    (pages / "pages.jsonl").write_text(
        json.dumps({"path": "siteA/a.html", "site": "siteA", "split": "dev"})
        + "\n"
        + json.dumps({"path": "siteB/b.html", "site": "siteB", "split": "test"})
        + "\n"
    )
    shots = [
        {"screenshot_id": "s1", "page_uri": f"file://{pages}/siteA/a.html"},
        {"screenshot_id": "s2", "page_uri": "file:///elsewhere/moved/siteB/b.html"},  # matched by tail
        {"screenshot_id": "s3", "page_uri": None},
        {"screenshot_id": "s4", "page_uri": "file:///x/siteC/c.html"},
    ]
    split_of = splits_from_manifest(pages / "pages.jsonl", shots)
    assert split_of == {"s1": "dev", "s2": "test"}
    reps = evaluate_by_split(truth, preds, split_of)
    assert list(reps) == ["dev", "test"]
    assert (reps["dev"].recall, reps["dev"].precision) == (1.0, 1.0)
    assert (reps["test"].recall, reps["test"].point_accuracy, reps["test"].precision) == (1.0, 0.0, 0.0)
    assert reps["test"].predictions == 2 and reps["dev"].ignored_predictions == 0


def test_lines_of_painted_text_count_for_precision_only():
    """A DOM line (text that is no element: a paragraph's line) makes an OCR label of it precise, but is no element
    recall must find."""
    from screenmill.annotators.evaluate import LINE

    truth = [
        TruthRecord("a", "Save", (0, 0, 50, 20), element="button"),
        TruthRecord("a", "This is a long paragraph's first line", (0, 40, 300, 60), element="line", data_type=LINE),
        TruthRecord("a", "and its second line", (0, 60, 200, 80), element="line", data_type=LINE),
    ]
    preds = [
        Prediction("a", "Save", (25, 10)),
        Prediction("a", "This is a long paragraph's first line", (150, 50)),
        Prediction("a", "noise", (100, 70)),  # inside a line, but not its text
    ]
    report = evaluate(truth, preds)
    assert (report.truth, report.found, report.missed) == (1, 1, ())
    assert report.precise == 2 and report.precision == 2 / 3
    rows = report.by_element()
    assert rows["line"]["truth"] == 0 and (rows["line"]["predictions"], rows["line"]["precise"]) == (2, 1)
    without_lines = evaluate(truth[:1], preds)
    assert (without_lines.recall, without_lines.precise) == (report.recall, 1)  # recall unchanged by lines


def test_elements_with_no_visible_text_leave_recall_when_icons_are_apart():
    """Visible-text recall: an image link and a check box (whose text is its label's) are out of OCR's reach; with
    ``icons=False`` they leave recall's truth and are reported apart, named or not, and precision does not move."""
    from screenmill.annotators.evaluate import ICON

    truth = [
        TruthRecord("a", "Save", (0, 0, 50, 20), element="button"),
        TruthRecord("a", "W3C logo", (100, 0, 150, 40), element="link", data_type=ICON),
        TruthRecord("a", "Remember me", (20, 50, 120, 70), element="text"),
        TruthRecord("a", "Remember me", (0, 50, 15, 65), element="checkbox", data_type=ICON),
        TruthRecord("a", "Help", (200, 0, 220, 20), element="link", data_type=ICON),
    ]
    preds = [
        Prediction("a", "Save", (25, 10)),
        Prediction("a", "Remember me", (70, 60)),  # the label's text: found there, not on the box
        Prediction("a", "Q", (125, 20)),  # a glyph in the logo
        Prediction("a", "Help", (210, 10)),  # an icon's name a label happens to read
    ]
    counted = evaluate(truth, preds)
    apart = evaluate(truth, preds, icons=False)
    assert (counted.truth, counted.found, counted.recall) == (5, 3, 0.6)
    assert (apart.truth, apart.found, apart.recall, apart.point_accuracy) == (2, 2, 1.0, 1.0)
    assert {t.text for t in apart.missed} == set() and apart.images[0].truth == 2
    assert [m.truth.text for m in apart.not_text_matches] == ["Help"]
    assert sorted(t.element for t in apart.not_text_missed) == ["checkbox", "link"]
    assert (counted.precise, apart.precise, apart.predictions) == (3, 3, 4)
    assert "checkbox" not in apart.by_element() and apart.by_element()["link"]["truth"] == 0
    assert apart.format_not_text() == (
        "not text (out of OCR's reach, not in recall): 3 elements, 1 named by a label; by role link 2, checkbox 1"
    )
    assert counted.format_not_text() == "" and apart.to_dict()["not_text"]["by_element"] == {"link": 2, "checkbox": 1}
    assert "not text (out of OCR's reach" in apart.format_table()
    details = apart.format_split_details().splitlines()  # what `eval` prints under each split's summary
    assert details[0] == apart.format_unreadable() and details[1] == apart.format_not_text()
    assert "\n".join(details[2:]) == apart.format_by_element()
    assert counted.format_split_details() == f"{counted.format_unreadable()}\n{counted.format_by_element()}"


def test_icons_count_for_every_annotator_but_ocr():
    from screenmill.annotators.evaluate import icons_count

    assert icons_count([{"annotator": "vllm"}, {"annotator": "dom"}]) is True
    assert icons_count([{"annotator": "vllm"}, {"annotator": "ocr-rapidocr"}]) is False
    assert icons_count([]) is True
    ocr = [{"annotator": "ocr-rapidocr"}]
    assert (icons_count(ocr, "count"), icons_count(ocr, "apart"), icons_count([], "apart")) == (True, False, False)


def test_truth_from_dom_tells_elements_that_show_no_text_from_their_recipes():
    """An image link (a name that differs from its text, no ``dom-text``) and a check box (named by its label) show
    no text; a heading or a cell whose text repeats (only a role / positional label) does."""
    from screenmill.annotators.evaluate import ICON, LINE, truth_from_dom

    from tests.annotators.test_formats import label_row

    sid = "a" * 64

    def dom(n, box, recipe, role, text):
        return label_row(sid, n, box=box, instruction=f"click {text}", element_text=text, annotator="dom",
                         recipe=recipe, role=role)  # fmt: skip

    rows = [
        dom(1, (0, 0, 10, 10), "dom-text", "button", "Save"),
        dom(2, (0, 0, 10, 10), "dom-role", "button", "Save"),
        dom(3, (0, 20, 10, 30), "dom-name", "link", "W3C logo"),
        dom(4, (0, 20, 10, 30), "dom-role", "link", "W3C logo"),
        dom(5, (0, 40, 10, 50), "dom-role", "checkbox", "Remember me"),
        dom(6, (0, 60, 10, 70), "dom-role", "heading", "Time"),
        dom(7, (0, 80, 10, 90), "dom-position", "cell", "Paid"),
        dom(8, (0, 100, 10, 110), "dom-text", "line", "a long paragraph's line"),
        dom(10, (0, 120, 10, 130), "dom-name-position", "link", "Up"),  # the first of two "Up" arrow images
        dom(11, (0, 140, 10, 150), "dom-position", "link", "Next"),  # a text link whose text repeats
        label_row(sid, 9, box=(0, 0, 10, 10), element_text="Save"),  # an OCR label: not truth
    ]
    kinds = {t.text: (t.data_type, t.element) for t in truth_from_dom(rows)}
    assert kinds == {
        "Save": ("text", "button"),
        "W3C logo": (ICON, "link"),
        "Remember me": (ICON, "checkbox"),
        "Time": ("text", "heading"),
        "Paid": ("text", "cell"),
        "a long paragraph's line": (LINE, "line"),
        "Up": (ICON, "link"),
        "Next": ("text", "link"),
    }


def test_a_fields_truth_text_is_its_placeholder_whatever_the_row_order():
    """An empty field paints its placeholder inside its box and its label beside it: the placeholder is its truth
    text, in either order of its two ``dom-field`` rows (the order follows label ids, so changes between runs)."""
    from screenmill.annotators.evaluate import truth_from_dom
    from screenmill.annotators.wording import PLACEHOLDER_INSTRUCTION

    from tests.annotators.test_formats import label_row

    sid = "d" * 64
    field = {"box": (0, 0, 100, 20), "annotator": "dom", "recipe": "dom-field", "role": "textbox"}
    by_label = label_row(sid, 1, instruction='click the "Work email" field', element_text="Work email", **field)
    by_placeholder = label_row(
        sid, 2, instruction=f'{PLACEHOLDER_INSTRUCTION} "you@x.com"', element_text="you@x.com", **field
    )
    for rows in ([by_label, by_placeholder], [by_placeholder, by_label]):
        assert [t.text for t in truth_from_dom(rows)] == ["you@x.com"]
    assert [t.text for t in truth_from_dom([by_label])] == ["Work email"]


def test_text_the_screenshots_edge_cuts_through_leaves_visible_text_recall():
    """A link scrolled half out of view keeps a DOM box a few pixels high at the screenshot's edge: its text is a
    strip of glyphs, out of OCR's reach like an icon. A full-height text at the edge, a low text away from it and a
    line (precision only) stay as they are."""
    from screenmill.annotators.evaluate import CUT, LINE, truth_from_dom

    from tests.annotators.test_formats import label_row

    sid = "c" * 64

    def dom(n, box, role, text):
        return label_row(sid, n, box=box, width=200, height=100, instruction=f"click {text}", element_text=text,
                         annotator="dom", recipe="dom-text", role=role)  # fmt: skip

    rows = [
        dom(1, (0, 93, 50, 100), "link", "Programming with libbzip2"),  # 7 px of a 14 px line at the bottom
        dom(2, (0, 0, 50, 5), "link", "Top"),  # 5 px at the top
        dom(3, (60, 86, 110, 100), "link", "Next"),  # whole, at the bottom edge
        dom(4, (0, 40, 50, 47), "text", "small print"),  # low, away from the edges
        dom(5, (0, 20, 50, 34), "heading", "Title"),
        dom(6, (0, 60, 50, 74), "paragraph", "Some prose"),
        dom(7, (120, 94, 190, 100), "line", "a line's strip"),
        *(dom(8 + k, (120, 10 + 16 * k, 190, 24 + 16 * k), "link", f"Item {k}") for k in range(3)),
    ]
    kinds = {t.text: t.data_type for t in truth_from_dom(rows)}
    assert kinds == {"Programming with libbzip2": CUT, "Top": CUT, "Next": "text", "small print": "text",
                     "Title": "text", "Some prose": "text", "a line's strip": LINE,
                     **{f"Item {k}": "text" for k in range(3)}}  # fmt: skip
    preds = [Prediction(sid, "Next", (85, 93)), Prediction(sid, "Title", (25, 27)), Prediction(sid, "Top", (25, 2))]
    apart = evaluate(truth_from_dom(rows), preds, icons=False)
    assert (apart.truth, apart.found) == (7, 2)  # the two cut links are out of recall, one named anyway
    assert [m.truth.text for m in apart.not_text_matches] == ["Top"]
    assert apart.format_not_text().startswith("not text (out of OCR's reach, not in recall): 2 elements (2 text cut")
    assert apart.to_dict()["not_text"]["cut"] == 2
    counted = evaluate(truth_from_dom(rows), preds)
    assert (counted.truth, counted.found) == (9, 3)
