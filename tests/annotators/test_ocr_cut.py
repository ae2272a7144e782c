"""ocr_cut: a detected line's candidate cuts, their features and labels, and the reader's ``cut`` callback."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont
from screenmill.annotators import ocr_cut
from screenmill.annotators.evaluate.truth import ICON, LINE, TruthRecord
from screenmill.annotators.ocr import OcrAnnotator
from screenmill.annotators.ocr_config import OcrConfig
from screenmill.annotators.ocr_text import _Piece


def test_words_rule_cuts_and_recut_rebuild_the_rules_pieces():
    runs = [(0, 5), (6, 12), (20, 25), (27, 30), (40, 48)]
    words = ocr_cut.line_words(runs, {1, 2, 3})
    assert words == [(0, 12), (20, 25), (27, 30), (40, 48)]
    pieces = [_Piece(0, 12), _Piece(20, 30), _Piece(40, 48)]
    rule = ocr_cut.rule_cuts(words, pieces)
    assert rule == [True, False, True]
    assert [(p.x0, p.x1) for p in ocr_cut.recut(words, rule, False)] == [(0, 12), (20, 30), (40, 48)]
    every = ocr_cut.recut(words, [True] * 3, True)
    assert [(p.x0, p.x1) for p in every] == words and all(p.mono for p in every)
    assert [(p.x0, p.x1) for p in ocr_cut.recut(words, [False] * 3, False)] == [(0, 48)]


def _truth(box, data_type="text", text="x") -> TruthRecord:
    return TruthRecord(image="s.png", text=text, box=box, data_type=data_type)


def test_a_boundary_cuts_where_an_element_holds_one_word_and_not_the_other():
    a, b = (10, 10, 40, 20), (50, 10, 80, 20)
    line = _truth((0, 8, 200, 22), LINE)
    link = _truth((48, 9, 82, 21))
    assert ocr_cut.cut_label(a, b, [line, link]) == (True, True)  # prose, then a link in it
    assert ocr_cut.cut_label(a, b, [line]) == (False, True)  # two words of one line of prose
    assert ocr_cut.cut_label(a, b, [_truth((0, 0, 100, 30))]) == (False, True)  # one button
    both = [_truth((0, 0, 45, 30)), _truth((46, 0, 100, 30))]
    assert ocr_cut.cut_label(a, b, both) == (True, True)  # two buttons
    assert ocr_cut.cut_label(a, b, [_truth((0, 0, 100, 30), ICON)]) == (False, False)  # an icon tells nothing
    assert ocr_cut.cut_label(a, b, [_truth((0, 0, 45, 30), LINE), _truth((46, 0, 100, 30), LINE)]) == (True, True)
    assert ocr_cut.cut_label(a, b, [_truth((0, 0, 45, 30))]) == (True, True)  # a word outside the element
    assert ocr_cut.cut_label(a, b, []) == (False, False)


@pytest.fixture(scope="module")
def annotator_cls():
    pytest.importorskip("rapidocr_onnxruntime")
    return OcrAnnotator


def _row_image(size: int = 22) -> np.ndarray:
    """Grey prose and a blue link right after it (one detected line), then two words far off (a line of its own)."""
    try:
        font = ImageFont.load_default(size=size)
    except (TypeError, OSError):  # pragma: no cover - old Pillow
        pytest.skip("needs Pillow >= 10.1 with FreeType for a scalable default font")
    im = Image.new("RGB", (900, 80), (250, 250, 252))
    d = ImageDraw.Draw(im)
    x = 20.0
    for text, colour in (("Read the ", (70, 70, 70)), ("release notes", (20, 80, 220))):
        d.text((x, 25), text, font=font, fill=colour)
        x += d.textlength(text, font=font)
    d.text((x + 3 * size, 25), "Save draft", font=font, fill=(70, 70, 70))
    return np.asarray(im)


def test_the_rules_cut_changes_nothing_and_a_callback_decides_every_boundary(annotator_cls):
    image = _row_image()
    config = OcrConfig(group_lines=False)
    plain = [e.text for e in annotator_cls(config).read(image).elements]
    views: list[ocr_cut.CutView] = []

    def record(view):
        views.append(view)
        return ocr_cut.rules_cut(view)

    assert [e.text for e in annotator_cls(config, cut=record).read(image).elements] == plain
    assert len(plain) == 3, plain  # prose | link (their colours) | the far words
    view = next(v for v in views if len(v.words) == 4)
    assert view.rule == [False, True, False]
    assert view.box is not None and 0 <= view.box[0] < view.box[2] <= image.shape[1]
    features = ocr_cut.cut_features(view, config)
    assert features.shape == (3, len(ocr_cut.CUT_FEATURES)) and np.isfinite(features).all()
    assert features[:, ocr_cut.CUT_FEATURES.index("rule")].tolist() == [0, 1, 0]
    hue = features[:, ocr_cut.CUT_FEATURES.index("hue_distance")]
    assert hue[1] > 2 * max(hue[0], hue[2])  # grey prose | blue link
    assert features[0, ocr_cut.CUT_FEATURES.index("tokens_match")] == 1

    every = annotator_cls(config, cut=lambda v: [True] * len(v.rule)).read(image).elements
    assert [e.text.replace(" ", "") for e in every] == ["Read", "the", "release", "notes", "Save", "draft"]
    none = annotator_cls(config, cut=lambda v: [False] * len(v.rule)).read(image).elements
    assert [e.text.replace(" ", "") for e in none] == ["Readthereleasenotes", "Savedraft"]

    with pytest.raises(ValueError, match="decisions for 3 boundaries"):
        annotator_cls(config, cut=lambda v: [True]).read(image)


def test_the_cut_recorder_labels_every_boundary_from_the_dom_and_keeps_the_rules(annotator_cls):
    """``ocr_learn cuts``' recorder: the link's two boundaries with the prose cut by the DOM, the prose's own word
    space and the link's do not; what the reader returns is the rules' split."""
    from screenmill.annotators.ocr_learn import CutRecorder, _cut_schema

    image = _row_image()
    recorder = CutRecorder()
    plain = [e.text for e in annotator_cls(recorder.config).read(image).elements]
    words = next(v for v in _views(annotator_cls, image) if len(v.words) == 4)
    boxes = ocr_cut.word_boxes(words)
    line = _truth((0, boxes[0][1] - 2, 600, boxes[0][3] + 2), LINE)
    link = _truth((boxes[2][0] - 1, boxes[2][1] - 1, boxes[3][2] + 1, boxes[3][3] + 1))
    recorder.truth = [line, link]
    assert [e.text for e in annotator_cls(recorder.config, cut=recorder).read(image).elements] == plain
    rows = [r for r in recorder.rows if r["text"] == words.text]
    assert [(r["k"], r["label"], r["told"]) for r in rows] == [(0, False, True), (1, True, True), (2, False, True)]
    assert {f"f_{n}" for n in ocr_cut.CUT_FEATURES} <= set(rows[0]) and set(rows[0]) < set(_cut_schema().names)


def _views(annotator_cls, image) -> list[ocr_cut.CutView]:
    views: list[ocr_cut.CutView] = []

    def record(view):
        views.append(view)
        return view.rule

    annotator_cls(OcrConfig(group_lines=False), cut=record).read(image)
    return views


def test_ocr_learn_cuts_refuses_a_negative_limit_writing_nothing(tmp_path, capsys):
    from screenmill.annotators.ocr_learn import main

    out = tmp_path / "cuts.parquet"
    with pytest.raises(SystemExit) as e:
        main(["cuts", str(tmp_path), str(tmp_path / "pages.jsonl"), str(out), "--limit", "-1"])
    assert e.value.code == 2 and "--limit must be >= 0" in capsys.readouterr().err and not out.exists()
