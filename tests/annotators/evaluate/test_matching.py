"""screenmill.annotators.evaluate.matching: text matching, greedy assignment, precision and the metrics."""

from __future__ import annotations

import json

import pytest
from screenmill.annotators.evaluate.matching import Prediction, evaluate, evaluate_by_split, icons_count
from screenmill.annotators.evaluate.reports import (
    by_element,
    format_by_element,
    format_not_text,
    format_split_details,
    format_table,
    format_unreadable,
    summary,
    to_dict,
)
from screenmill.annotators.evaluate.text import names_part_of
from screenmill.annotators.evaluate.truth import ICON, LINE, TruthRecord, splits_from_manifest

from tests.annotators.evaluate.records import P, T


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
    d = to_dict(rep, details=True)
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
    roles = by_element(rep)
    assert (roles["button"]["predictions"], roles["button"]["precise"]) == (2, 1)
    assert (roles["link"]["predictions"], roles["link"]["precision"]) == (1, 0.0)
    assert roles["(none)"]["predictions"] == 1 and roles["(none)"]["truth"] == 0
    assert "precision" in format_by_element(rep) and "25.0%" in format_table(rep)
    assert to_dict(rep)["precision"] == 0.25


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
    assert "whole elements and lines only: 0.0%" in summary(rep)
    assert to_dict(rep)["line_parts"] == 3
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
    rows = by_element(report)
    assert rows["line"]["truth"] == 0 and (rows["line"]["predictions"], rows["line"]["precise"]) == (2, 1)
    without_lines = evaluate(truth[:1], preds)
    assert (without_lines.recall, without_lines.precise) == (report.recall, 1)  # recall unchanged by lines


def test_elements_with_no_visible_text_leave_recall_when_icons_are_apart():
    """Visible-text recall: an image link and a check box (whose text is its label's) are out of OCR's reach; with
    ``icons=False`` they leave recall's truth and are reported apart, named or not, and precision does not move."""

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
    assert "checkbox" not in by_element(apart) and by_element(apart)["link"]["truth"] == 0
    assert format_not_text(apart) == (
        "not text (out of OCR's reach, not in recall): 3 elements, 1 named by a label; by role link 2, checkbox 1"
    )
    assert format_not_text(counted) == "" and to_dict(apart)["not_text"]["by_element"] == {"link": 2, "checkbox": 1}
    assert "not text (out of OCR's reach" in format_table(apart)
    details = format_split_details(apart).splitlines()  # what `eval` prints under each split's summary
    assert details[0] == format_unreadable(apart) and details[1] == format_not_text(apart)
    assert "\n".join(details[2:]) == format_by_element(apart)
    assert format_split_details(counted) == f"{format_unreadable(counted)}\n{format_by_element(counted)}"


def test_icons_count_for_every_annotator_but_ocr():

    assert icons_count([{"annotator": "vllm"}, {"annotator": "dom"}]) is True
    assert icons_count([{"annotator": "vllm"}, {"annotator": "ocr-rapidocr"}]) is False
    assert icons_count([]) is True
    ocr = [{"annotator": "ocr-rapidocr"}]
    assert (icons_count(ocr, "count"), icons_count(ocr, "apart"), icons_count([], "apart")) == (True, False, False)
