"""The OCR producer's instructions (:mod:`screenmill.annotators.ocr_producer`): unambiguous, repeats by position."""

from __future__ import annotations

import dataclasses
import datetime as dt

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont
from screenmill.annotators.evaluate.ambiguity import ambiguous_labels
from screenmill.annotators.ocr import OcrAnnotator, TextElement
from screenmill.annotators.ocr_producer import (
    OCR_REVISION,
    OcrProducer,
    elements_to_labels,
    glyph_noise,
    is_glyph_noise,
    painted_inside,
    repeat_key,
)
from screenmill.schemas.keys import config_hash
from screenmill.schemas.records import Screenshot
from screenmill.stages.label.ocr import AnnotateConfig


def _shot(width: int = 800, height: int = 600) -> Screenshot:
    return Screenshot("a" * 64, "/in/a.png", width, height, "PNG", "RGB", 1, 10, dt.datetime(2026, 1, 1), "r")


def _el(text: str, x: float, y: float, w: float = 60, h: float = 20) -> TextElement:
    return TextElement(text, (x, y, x + w, y + h), (x + w / 2, y + h / 2), 0.9)


def _labels(elements, **kw):
    producer = OcrProducer(run_id="r", config_hash="h", **kw)
    return elements_to_labels(_shot(), elements, OcrAnnotator, producer)


def test_repeated_text_is_named_by_its_place_in_reading_order():
    elements = [
        _el("Edit", 300, 101),  # same row as the next one, a pixel lower: still right of it
        _el("Edit", 100, 100),
        _el("Save", 100, 300),
        _el("EDIT ", 100, 400),  # case and whitespace do not make it another text
        _el("Open  file", 500, 500),
    ]
    labels = _labels(elements)
    by_box = {(lb.x0, lb.y0): lb.instruction for lb in labels}
    assert by_box == {
        (100.0, 100.0): 'click the first "Edit"',
        (300.0, 101.0): 'click the second "Edit"',
        (100.0, 300.0): 'click "Save"',
        (100.0, 400.0): 'click the third "EDIT"',
        (500.0, 500.0): 'click "Open file"',
    }
    assert not any(lb.instruction == 'click "Edit"' for lb in labels)  # the bare form is never said of a repeat
    assert ambiguous_labels([lb.to_row() for lb in labels]) == []
    assert {lb.recipe_version for lb in labels} == {OCR_REVISION}
    assert len({lb.label_id for lb in labels}) == len(labels)


def test_a_text_repeated_beyond_the_ordinals_gets_no_label():
    elements = [_el("1", 10 + 70 * i, 50) for i in range(11)] + [_el("2", 10 + 70 * i, 150) for i in range(10)]
    labels = _labels(elements)
    assert [lb.instruction for lb in labels if lb.element_text == "1"] == []
    assert [lb.instruction for lb in labels][-1] == 'click the tenth "2"'
    assert len(labels) == 10


def test_a_repeat_painted_beyond_the_ordinals_counting_other_texts_words_gets_no_label():
    """Three "gboolean" cells read alone and nine joined to the function beside them ("gboolean g_hash_table_add"):
    the page paints it twelve times, so the places the OCR would name ("the third") are not a reader's; "Options" read
    twice alone and three times as a title's last word stays named by its place, and so does a text found only as part
    of longer words ("int" in "print", "interval") or painted inside other texts but once on its own."""
    rows = [_el("gboolean", 10, 30 * k) for k in range(3)]
    rows += [_el(f"gboolean g_hash_table_fn{k}", 10, 100 + 30 * k, w=200) for k in range(9)]
    rows += [_el("Options", 400, 30), _el("Options", 400, 60)]
    rows += [_el(f"Name {k} Options", 400, 100 + 30 * k, w=120) for k in range(3)]
    rows += [_el("int", 600, 30), _el("int", 600, 60)] + [
        _el(f"print interval {k}", 600, 90 + 30 * k) for k in range(9)
    ]
    rows += [_el("Types", 700, 30)] + [_el(f"Types of {k}", 700, 60 + 30 * k) for k in range(12)]
    by_text: dict[str, list[str]] = {}
    for lb in _labels(rows):
        by_text.setdefault(lb.element_text, []).append(lb.instruction)
    assert "gboolean" not in by_text
    assert by_text["Options"] == ['click the first "Options"', 'click the second "Options"']
    assert by_text["int"] == ['click the first "int"', 'click the second "int"']
    assert by_text["Types"] == ['click "Types"']
    assert painted_inside(["gboolean", "GBoolean  x", "gbooleans", "a gboolean, b gboolean"], [0]) == 3
    # the prose's comma or full stop after a link is no other text: "GHashTable," is a repeat of "GHashTable"
    rows = [_el("GHashTable,", 10, 30), _el("GHashTable.", 10, 60), _el("GHashTable", 10, 90), _el("Save", 10, 120)]
    assert [lb.instruction for lb in _labels(rows)] == [
        'click the first "GHashTable,"',
        'click the second "GHashTable."',
        'click the third "GHashTable"',
        'click "Save"',
    ]
    rows += [_el(f"GHashTable *t{k}", 200, 30 * k, w=120) for k in range(8)]
    assert [
        lb.element_text
        for lb in _labels(rows)
        if lb.element_text.startswith("GHashTable") and " " not in lb.element_text
    ] == []
    # ... but an ellipsis is part of the text: "Open..." opens a dialog, "Open" does not (the DOM counts them apart)
    assert repeat_key("Save…") != repeat_key("Save")
    named = {lb.instruction for lb in _labels([_el("Open...", 10, 30), _el("Open", 10, 60)])}
    assert named == {'click "Open..."', 'click "Open"'}


def test_a_custom_template_gets_its_positional_form_and_collisions_name_nobody():
    elements = [_el("Edit", 100, 100), _el("Edit", 100, 200), _el("the second Edit", 100, 300), _el("OK", 9, 9)]
    labels = _labels(elements, instruction_template="tap {text}")
    # "tap the second Edit" would name the second "Edit" and the literal text: given to neither
    assert [lb.instruction for lb in labels] == ["tap OK", "tap the first Edit"]


def test_a_text_longer_than_an_instruction_name_gets_no_label():
    from screenmill.annotators.wording import MAX_INSTRUCTION_NAME

    paragraph = "word " * (MAX_INSTRUCTION_NAME // 5 + 1)
    longest = "x" * MAX_INSTRUCTION_NAME
    labels = _labels([_el(paragraph, 10, 10, w=700), _el(longest, 10, 60, w=700), _el("Save", 10, 90)])
    assert [lb.element_text for lb in labels] == [longest, "Save"]


def test_text_cut_by_the_right_edge_gets_no_label_and_text_flush_with_the_left_edge_keeps_it():
    """A page wider than its viewport: "Joe Wres" touches the screenshot's right edge; its label would name a cut
    word. A page is shown from its left end, so "News" set flush with the left edge is whole and keeps its label, as
    does text two pixels clear of the right edge."""
    labels = _labels([_el("Joe Wres", 740, 10), _el("News", 0, 40), _el("Save", 10, 90), _el("Edit", 737, 120)])
    assert [lb.element_text for lb in labels] == ["News", "Save", "Edit"]


def test_a_text_read_unsure_gets_no_label_but_still_counts_as_a_repeat():
    """An element read with less confidence than the annotator's label_min_confidence gives no label (a third of them
    named nothing on the truth set's dev part); its text is painted all the same, so the sure "Edit" beside an unsure
    one is still named by its place, never as the bare "Edit" a model could answer with either box. A run may lower
    the floor (``--ocr-min-label-confidence``); a floor outside [0, 1] is refused."""
    from screenmill.annotators.ocr_config import OcrConfig

    floor = OcrConfig().label_min_confidence
    unsure = dataclasses.replace(_el("Edit", 100, 100), confidence=floor - 0.05)
    sure = dataclasses.replace(_el("Edit", 300, 100), confidence=floor)
    save = dataclasses.replace(_el("Svae", 100, 300), confidence=0.6)
    elements = [unsure, sure, save, _el("Open", 100, 400)]
    labels = _labels(elements)
    assert [(lb.instruction, lb.x0) for lb in labels] == [('click the second "Edit"', 300.0), ('click "Open"', 100.0)]
    lowered = _labels(elements, annotator_options=(("label_min_confidence", 0.5),))
    assert [lb.instruction for lb in lowered] == [
        'click the first "Edit"',
        'click the second "Edit"',
        'click "Svae"',
        'click "Open"',
    ]
    with pytest.raises(ValueError, match="label_min_confidence"):
        _labels(elements, annotator_options=(("label_min_confidence", 1.5),))


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"run_id": ""}, "run_id and config_hash"),
        ({"instruction_template": "press it"}, "instruction_template"),
        ({"max_batch_size": 0}, "max_batch_size"),
        ({"glyph_min_confidence": 2.0}, "glyph_min_confidence"),
        ({"annotator_options": (("no_such_option", 1),)}, "OcrProducer.annotator_options"),
    ],
)
def test_a_producer_built_directly_checks_its_settings_like_the_run_config(settings, message):
    """OcrProducer and the run's AnnotateConfig share OcrLabelSettings' checks: a bad setting fails at once."""
    from screenmill.stages.label.ocr import AnnotateConfig

    with pytest.raises(ValueError, match=message):
        OcrProducer(**{"run_id": "r", "config_hash": "h", **settings})
    with pytest.raises(ValueError, match=message.replace("OcrProducer", "AnnotateConfig")):
        AnnotateConfig(**{"run_id": "r", "config_hash": "h", **settings})


def test_the_ocr_revision_is_the_recipe_version_and_in_the_config_hash():
    assert AnnotateConfig.recipe_version == OcrProducer.recipe_version == OCR_REVISION == "88"
    cfg = AnnotateConfig(run_id="r", config_hash="h")
    assert cfg.producer().recipe_version == OCR_REVISION
    assert config_hash(cfg) != config_hash(dataclasses.replace(cfg, recipe_version="1"))


def test_a_drawn_screenshot_with_three_edits_through_the_real_ocr():
    pytest.importorskip("rapidocr_onnxruntime")
    try:
        font = ImageFont.load_default(size=22)
    except (TypeError, OSError):  # pragma: no cover - old Pillow
        pytest.skip("needs Pillow >= 10.1 with FreeType for a scalable default font")
    im = Image.new("RGB", (800, 600), (250, 250, 252))
    d = ImageDraw.Draw(im)
    for i, (x, y) in enumerate([(40, 60), (420, 60), (40, 380)]):
        d.rounded_rectangle((x, y, x + 140, y + 50), radius=6, fill=(43, 74, 203))
        d.text((x + 44, y + 12), "Edit", font=font, fill=(255, 255, 255))
        d.text((x, y + 120), ["Profile", "Billing", "Security"][i], font=font, fill=(30, 30, 30))
    producer = OcrProducer(run_id="r", config_hash="h")
    model = producer.load()
    labels = list(producer.produce(model, _shot(), np.asarray(im)))
    edits = sorted((lb for lb in labels if lb.element_text.casefold() == "edit"), key=lambda lb: (lb.y0, lb.x0))
    assert [lb.instruction for lb in edits] == [
        'click the first "Edit"',
        'click the second "Edit"',
        'click the third "Edit"',
    ]
    assert ambiguous_labels([lb.to_row() for lb in labels]) == []
    assert len({lb.instruction.casefold() for lb in labels}) == len(labels)


def test_glyph_noise_is_symbols_and_lone_low_confidence_or_square_glyphs():
    tall = (0, 0, 10, 20)  # a letter of running text: narrower than tall
    square = (0, 0, 20, 20)  # an icon's cell
    assert is_glyph_noise("≡", tall, 0.99) and is_glyph_noise("» ·", (0, 0, 40, 20), 0.99)
    assert is_glyph_noise("Q", tall, 0.8) and is_glyph_noise("三", tall, 0.7) and is_glyph_noise("X.", tall, 0.85)
    assert is_glyph_noise("b", square, 0.99)
    assert not is_glyph_noise("b", tall, 0.95)  # a confident lone letter in a text-like box stays
    assert is_glyph_noise("b", tall, 0.95, in_toolbar=True)
    for word in ("OK", "Go", "123", "Sign up"):
        assert not is_glyph_noise(word, square, 0.5, in_toolbar=True), word
    for number in ("1", "42", "Q1", "x2"):  # a short number: a bracket read as "1", a logo read as "2", unless sure
        assert not is_glyph_noise(number, square, 0.8, in_toolbar=True), number
        assert is_glyph_noise(number, tall, 0.7), number


def test_lone_glyphs_side_by_side_are_a_toolbar_a_single_one_far_from_others_is_not():
    texts = ["B", "I", "U", "a", "Save", "Z"]
    boxes = [(0, 0, 10, 20), (40, 0, 50, 20), (80, 0, 90, 20), (600, 0, 610, 20), (100, 0, 160, 20), (0, 300, 10, 320)]
    assert glyph_noise(texts, boxes, [0.99] * 6) == {0, 1, 2}


def test_a_toolbar_of_glyph_icons_next_to_words_labels_only_the_words():
    row = [("Q", 10, 0.82), ("b", 40, 0.76), ("A", 70, 0.71), ("三", 100, 0.68), ("≡", 130, 0.95)]
    icons = [TextElement(t, (x, 10, x + 20, 30), (x + 10, 20), c) for t, x, c in row]
    words = [
        TextElement(t, (x, 10, x + 80, 30), (x + 40, 20), c) for t, x, c in [("Save", 200, 0.97), ("OK", 300, 0.9)]
    ]
    labels = _labels([*icons, *words])
    assert [lb.element_text for lb in labels] == ["Save", "OK"]
    kept = _labels([*icons, *words], drop_glyphs=False)
    # the rule, not something else, removes the icons read surely enough to be labelled (the confidence floor takes
    # "b", "A" and "三" either way)
    assert [lb.element_text for lb in kept] == ["Q", "≡", "Save", "OK"]


def test_a_drawn_toolbar_of_glyph_icons_through_the_real_ocr():
    pytest.importorskip("rapidocr_onnxruntime")
    try:
        font = ImageFont.load_default(size=22)
        small = ImageFont.load_default(size=16)
    except (TypeError, OSError):  # pragma: no cover - old Pillow
        pytest.skip("needs Pillow >= 10.1 with FreeType for a scalable default font")
    im = Image.new("RGB", (800, 600), (243, 243, 243))
    d = ImageDraw.Draw(im)
    for i, glyph in enumerate(["B", "I", "U", "A", "X", "Q"]):  # glyph icons in square toolbar buttons
        x = 20 + i * 44
        d.rounded_rectangle((x, 20, x + 36, 56), radius=4, fill=(225, 225, 230), outline=(200, 200, 205))
        d.text((x + 18, 38), glyph, font=small, fill=(60, 60, 60), anchor="mm")
    for i, word in enumerate(["Paste", "Format", "Insert table"]):
        d.text((340 + i * 130, 28), word, font=font, fill=(30, 30, 30))
    d.text((40, 200), "Quarterly report draft", font=font, fill=(30, 30, 30))
    producer = OcrProducer(run_id="r", config_hash="h")
    model = producer.load()
    elements = model.annotate(np.asarray(im))
    labels = elements_to_labels(_shot(), elements, model, producer)
    texts = {lb.element_text for lb in labels}
    assert {"Paste", "Format", "Insert table", "Quarterly report draft"} <= texts
    assert not [t for t in texts if len("".join(t.split())) <= 2], texts  # no glyph became a label


def test_a_lone_glyph_of_a_script_the_page_is_not_written_in_is_an_icon():
    """The recogniser reads an icon font's plus-in-a-square as "田" at confidence 0.99 in a tall box, beside the
    link it opens ("Functions"): on a page with no other Chinese text it is glyph noise; where Chinese is written, a
    lone character is a word like any other, and a lone Latin letter on a Latin page is not noise for its script."""
    tall = (0, 0, 14, 24)
    texts = ["田", "Functions", "Classes", "A"]
    boxes = [tall, (20, 0, 120, 24), (20, 40, 100, 64), (0, 80, 14, 104)]
    assert glyph_noise(texts, boxes, [0.99] * 4) == {0}
    texts = ["田", "函数列表", "Classes", "A"]
    assert glyph_noise(texts, boxes, [0.99] * 4) == set()
    assert glyph_noise(["田"], [tall], [0.99]) == set()  # no other text: nothing tells the page's script
