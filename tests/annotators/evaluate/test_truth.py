"""screenmill.annotators.evaluate.truth: reading ScreenSpot-style truth, the truth a run's DOM labels give."""

from __future__ import annotations

import hashlib
import json

import pytest
from screenmill.annotators.evaluate.matching import Prediction, evaluate
from screenmill.annotators.evaluate.reports import format_not_text, to_dict
from screenmill.annotators.evaluate.truth import CUT, ICON, LINE, load_truth, truth_from_labels


def write_jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


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


def test_truth_from_dom_tells_elements_that_show_no_text_from_their_recipes():
    """An image link (a name that differs from its text, no ``dom-text``) and a check box (named by its label) show
    no text; a heading or a cell whose text repeats (only a role / positional label) does."""

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
    kinds = {t.text: (t.data_type, t.element) for t in truth_from_labels(rows)}
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
    from screenmill.annotators.wording import PLACEHOLDER_INSTRUCTION

    from tests.annotators.test_formats import label_row

    sid = "d" * 64
    field = {"box": (0, 0, 100, 20), "annotator": "dom", "recipe": "dom-field", "role": "textbox"}
    by_label = label_row(sid, 1, instruction='click the "Work email" field', element_text="Work email", **field)
    by_placeholder = label_row(
        sid, 2, instruction=f'{PLACEHOLDER_INSTRUCTION} "you@x.com"', element_text="you@x.com", **field
    )
    for rows in ([by_label, by_placeholder], [by_placeholder, by_label]):
        assert [t.text for t in truth_from_labels(rows)] == ["you@x.com"]
    assert [t.text for t in truth_from_labels([by_label])] == ["Work email"]


def test_text_the_screenshots_edge_cuts_through_leaves_visible_text_recall():
    """A link scrolled half out of view keeps a DOM box a few pixels high at the screenshot's edge: its text is a
    strip of glyphs, out of OCR's reach like an icon. A full-height text at the edge, a low text away from it and a
    line (precision only) stay as they are."""

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
    kinds = {t.text: t.data_type for t in truth_from_labels(rows)}
    assert kinds == {"Programming with libbzip2": CUT, "Top": CUT, "Next": "text", "small print": "text",
                     "Title": "text", "Some prose": "text", "a line's strip": LINE,
                     **{f"Item {k}": "text" for k in range(3)}}  # fmt: skip
    preds = [Prediction(sid, "Next", (85, 93)), Prediction(sid, "Title", (25, 27)), Prediction(sid, "Top", (25, 2))]
    apart = evaluate(truth_from_labels(rows), preds, icons=False)
    assert (apart.truth, apart.found) == (7, 2)  # the two cut links are out of recall, one named anyway
    assert [m.truth.text for m in apart.not_text_matches] == ["Top"]
    assert format_not_text(apart).startswith("not text (out of OCR's reach, not in recall): 2 elements (2 text cut")
    assert to_dict(apart)["not_text"]["cut"] == 2
    counted = evaluate(truth_from_labels(rows), preds)
    assert (counted.truth, counted.found) == (9, 3)


def test_truth_from_a11y_labels_reads_an_accessibles_name_as_its_shown_text():
    """The accessibility labels are read by the DOM's rules under their own recipe names, with two differences: a
    control named by its accessible name alone (a calculator's "7" button) shows that name, so it is text, not an
    icon; and a menu bar's item at the screen's top edge is whole, not cut. A check box is still named by its label;
    the DOM's and the OCR's rows of the same screenshot are no a11y truth."""

    from tests.annotators.test_formats import label_row

    sid = "e" * 64

    def a11y(n, box, recipe, role, text, annotator="a11y"):
        return label_row(sid, n, box=box, width=400, height=300, instruction=f"click {text}", element_text=text,
                         annotator=annotator, recipe=recipe, role=role)  # fmt: skip

    rows = [
        a11y(1, (0, 0, 40, 25), "a11y-name", "menuitem", "File"),  # at the top edge, lower than the buttons
        a11y(2, (0, 0, 40, 25), "a11y-role", "menuitem", "File"),
        a11y(3, (0, 40, 60, 74), "a11y-name", "button", "7"),
        a11y(4, (0, 40, 60, 74), "a11y-role", "button", "7"),
        a11y(5, (70, 40, 130, 74), "a11y-name-position", "button", "MS"),  # the first of two "MS"
        a11y(6, (0, 80, 20, 100), "a11y-role", "checkbox", "Degrees"),
        a11y(7, (0, 110, 300, 140), "a11y-text", None, "0"),
        a11y(8, (0, 150, 60, 184), "dom-text", "button", "Save", annotator="dom"),
        a11y(9, (0, 150, 60, 184), "ocr-text-click", "text", "7", annotator="ocr-rapidocr"),
    ]
    kinds = {t.text: (t.data_type, t.element) for t in truth_from_labels(rows, "a11y")}
    assert kinds == {
        "File": ("text", "menuitem"),
        "7": ("text", "button"),
        "MS": ("text", "button"),
        "Degrees": (ICON, "checkbox"),
        "0": ("text", ""),
    }
    assert {t.text: t.data_type for t in truth_from_labels(rows)} == {"Save": "text"}  # the DOM's truth: its rows
    with pytest.raises(KeyError):
        truth_from_labels(rows, "ocr-rapidocr")


def test_window_titles_are_truth_an_ocr_reading_inside_the_bar_finds():
    """The title bars recorded in the screenshots' app records are text truth of element ``window title``, each
    (screenshot, bar) once; an OCR label reading the title at a point in the bar finds it, one outside it does not
    count as in the box, and a row without an app or written before titles were recorded gives none."""
    from screenmill.annotators.evaluate.reports import format_window_titles
    from screenmill.annotators.evaluate.truth import WINDOW_TITLE, window_title_truth

    bar = {"title": "galculator", "x0": 471.0, "y0": 207.0, "x1": 810.0, "y1": 229.0}
    a, b = "a" * 64, "b" * 64
    shots = [
        {"screenshot_id": a, "app": {"name": "galculator", "window_titles": [bar]}},
        {"screenshot_id": a, "app": {"name": "galculator", "window_titles": [bar]}},  # an episode's repeated frame
        {"screenshot_id": b, "app": {"name": "old", "window_titles": None}},  # written before titles were recorded
        {"screenshot_id": "c" * 64, "app": None},  # a page's screenshot
        {"screenshot_id": "d" * 64, "app": {"name": "other", "window_titles": [bar]}},  # not asked for
    ]
    (t,) = window_title_truth(shots, {a, b, "c" * 64})
    assert (t.image, t.text, t.box, t.element, t.data_type, t.sha256) == (
        a, "galculator", (471.0, 207.0, 810.0, 229.0), WINDOW_TITLE, "text", a
    )  # fmt: skip
    assert len(window_title_truth(shots)) == 2
    hit = evaluate([t], [Prediction(a, "galculator", (540.0, 218.0))])
    assert (hit.found, hit.point_in_box, hit.precision) == (1, 1, 1.0)
    assert format_window_titles(hit) == "window titles: 1, found 1"
    below = evaluate([t], [Prediction(a, "galculator", (540.0, 260.0))])  # the same words read in the window
    assert (below.point_in_box, below.precision) == (0, 0.0)
    other = evaluate([t], [Prediction(a, "File", (540.0, 218.0))])
    assert other.found == 0 and format_window_titles(other) == "window titles: 1, found 0"
