"""The shared wording (:mod:`screenmill.annotators.wording`): reading order, ordinals, phrasings, recipe names."""

from __future__ import annotations

import random

import pytest
from screenmill.annotators import wording
from screenmill.annotators.dom.labels import choose_instructions
from screenmill.annotators.ocr import OcrAnnotator, TextElement
from screenmill.annotators.ocr_producer import OcrProducer, elements_to_labels
from screenmill.annotators.wording import (
    ORDINALS,
    Rows,
    click,
    is_placeholder_label,
    nameable,
    placeholder_instruction,
    positional_template,
    printable,
    quoted,
    reading_order,
)

from tests.annotators.test_ocr_producer import _shot


def test_ordinals_rank_ten_repeats():
    assert len(ORDINALS) == 10
    assert (ORDINALS[0], ORDINALS[1], ORDINALS[-1]) == ("first", "second", "tenth")


def test_click_phrasings():
    assert click("Save") == 'click "Save"'
    assert click("Pricing", "link") == 'click the "Pricing" link'
    assert click("Email", "field") == 'click the "Email" field'
    assert click("Edit", "button", 1) == 'click the second "Edit" button'
    assert click("Paid", rank=0) == 'click the first "Paid"'
    assert click('Say "hi"') == "click \"Say 'hi'\""
    assert quoted('a "b"') == "\"a 'b'\""
    with pytest.raises(IndexError):
        click("Edit", rank=len(ORDINALS))


def test_placeholder_phrasing_is_told_apart():
    ins = placeholder_instruction("you@example.com")
    assert ins == 'click the field with placeholder "you@example.com"'
    assert is_placeholder_label(ins)
    assert not is_placeholder_label(click("Email", "field"))


def test_nameable():
    assert nameable("Sign in") and nameable("x" * wording.MAX_INSTRUCTION_NAME)
    assert not nameable("x" * (wording.MAX_INSTRUCTION_NAME + 1))
    assert not nameable("»") and not nameable("") and not nameable(None)


def test_positional_template():
    assert positional_template(wording.CLICK_TEMPLATE) == 'click the {ordinal} "{text}"'
    assert positional_template("tap {text}") == "tap the {ordinal} {text}"
    assert positional_template("press '{text}' now") == "press the {ordinal} '{text}' now"
    with pytest.raises(ValueError):
        positional_template("click")


def test_recipe_names():
    assert wording.DOM_RECIPES == (
        "dom-text",
        "dom-name",
        "dom-role",
        "dom-field",
        "dom-position",
        "dom-name-position",
    )
    assert wording.OCR_TEXT_CLICK == "ocr-text-click"


def test_lines_group_a_jittered_row():
    boxes = [(200, 12, 260, 30), (10, 10, 60, 28), (10, 40, 60, 58), (120, 9, 180, 27)]
    assert reading_order(boxes, Rows.LINES) == [1, 3, 0, 2]


def test_bands_round_top_edges():
    boxes = [(200, 16, 260, 30), (10, 19, 60, 28), (10, 0, 60, 10), (90, 3, 120, 10)]
    # tops 16 and 19 are band 2, 0 and 3 band 0; ties keep their given order
    assert reading_order(boxes, Rows.BANDS) == [2, 3, 1, 0]
    assert reading_order([(5, 8, 5, 8), (5, 8, 5, 8)], Rows.BANDS) == [0, 1]


def _grid(seed: int) -> list[tuple[float, float, float, float]]:
    """Boxes in rows 40 px apart, tops of one row equal, heights (within 1.5x) and widths of their own, shuffled."""
    rng = random.Random(seed)
    boxes = []
    for row in range(3):
        top = 16 + 40 * row
        for col in range(3):
            x0 = 10 + 150 * col + rng.randint(0, 20)
            boxes.append((x0, top, x0 + rng.randint(30, 90), top + rng.randint(16, 24)))
    rng.shuffle(boxes)
    return boxes


@pytest.mark.parametrize("seed", range(5))
def test_dom_and_ocr_order_the_same_boxes_the_same_way(seed):
    boxes = _grid(seed)
    assert reading_order(boxes, Rows.BANDS) == reading_order(boxes, Rows.LINES)
    # ... and their producers name each repeat of one text by the same place, in the same words
    text = {"kind": "text", "role": None, "name": None, "text": "Edit", "point": [0, 0]}
    dom = [{**text, "box": list(b)} for b in boxes]
    by_dom = {tuple(dom[c.element]["box"]): c.instruction for c in choose_instructions(dom)}
    ocr = [TextElement("Edit", b, ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2), 0.95) for b in boxes]
    labels = elements_to_labels(_shot(), ocr, OcrAnnotator, OcrProducer(run_id="r", config_hash="h"))
    by_ocr = {(lb.x0, lb.y0, lb.x1, lb.y1): lb.instruction for lb in labels}
    assert len(by_dom) == len(boxes) == 9
    assert by_dom == by_ocr
    assert sorted(by_dom.values()) == sorted(click("Edit", rank=k) for k in range(9))


def test_where_bands_and_lines_part():
    """Two boxes of one row whose tops straddle a band's edge (3 and 5 px: bands 0 and 1): the DOM's bands read the
    higher one first, the OCR's lines the left one; a band holding two lines (tops 0 and 2.5 px, 2 px high): the
    bands read left to right across both, the lines the upper first; and a row of equal tops where one box is over
    twice as high as the other: the bands read it left to right, the lines take the low box's centre for another
    line, below the short box's."""
    straddle = [(100, 3, 160, 23), (10, 5, 60, 25)]
    assert reading_order(straddle, Rows.BANDS) == [0, 1]
    assert reading_order(straddle, Rows.LINES) == [1, 0]
    thin = [(100, 0, 160, 2), (10, 2.5, 60, 4.5)]
    assert reading_order(thin, Rows.BANDS) == [1, 0]
    assert reading_order(thin, Rows.LINES) == [0, 1]
    tall = [(10, 0, 60, 30), (100, 0, 160, 14)]
    assert reading_order(tall, Rows.BANDS) == [0, 1]
    assert reading_order(tall, Rows.LINES) == [1, 0]


@pytest.mark.parametrize(
    "raw, want",
    [
        ("\uf03e Photos", "Photos"),  # a Font Awesome glyph (Private Use Area) before the text
        ("\uf0b0 Spam 12", "Spam 12"),
        ("\uf002", ""),  # an icon-only name: nothing left
        ("Settings \U000f0013", "Settings"),  # plane 15's private use area
        ("Save\u200b", "Save"),  # a zero-width space (format)
        ("co\u00adop\u200e", "coop"),  # a soft hyphen, a left-to-right mark
        ("a\x00b\x07", "ab"),  # controls
        ("  Sign \n\t in\u00a0 ", "Sign in"),  # whitespace collapsed
        (
            "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
            "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
        ),  # ZWNJ kept
        ("\U0001f469\u200d\U0001f4bb Team", "\U0001f469\u200d\U0001f4bb Team"),  # an emoji ZWJ sequence kept
        ("Caf\u00e9 \u00bb", "Caf\u00e9 \u00bb"),
        ("Spam\uf0b0Inbox", "Spam Inbox"),  # a glyph between words leaves them apart
    ],
)
def test_printable(raw, want):
    assert printable(raw) == want
