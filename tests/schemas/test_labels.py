"""The one GroundingLabel builder (:mod:`screenmill.schemas.labels`) and the one choice of an image's occurrence."""

from __future__ import annotations

import datetime as dt

import pytest
from screenmill.schemas.keys import stable_id
from screenmill.schemas.labels import LabelBuilder, LabelProvenance
from screenmill.schemas.records import GroundingLabel, Screenshot, first_occurrence

PROV = LabelProvenance("ocr", "rapidocr-1", "ocr-text-click", "1", "cfg-hash", "run-1")


def _shot(uri="/in/a.png", episode=None, step=None, sid="a" * 64) -> Screenshot:
    return Screenshot(
        sid, uri, 200, 100, "PNG", "RGB", 1, 10, dt.datetime(2026, 1, 1, tzinfo=dt.UTC), "r", episode, step
    )


def test_every_field_is_stamped_and_repeats_are_numbered():
    build = LabelBuilder(_shot(), PROV)
    kw = dict(element_text="OK", role="text", native_box=(1, 2, 3, 4), native_point=(2, 3), confidence=0.5)
    first = build.add('click "OK"', (1, 2, 3, 4), (2, 3), **kw)
    other = build.add('click "Cancel"', (5, 6, 7, 8), (6, 7), **kw)
    again = build.add('click "OK"', (10, 2, 30, 4), (20, 3), **kw)
    assert first == GroundingLabel(
        label_id=stable_id("a" * 64, "ocr", "1", 'click "OK"', 0),
        screenshot_id="a" * 64,
        image_width=200,
        image_height=100,
        instruction='click "OK"',
        element_text="OK",
        role="text",
        x0=1.0,
        y0=2.0,
        x1=3.0,
        y1=4.0,
        click_x=2.0,
        click_y=3.0,
        coord_system="pixel",
        native_box=[1.0, 2.0, 3.0, 4.0],
        native_point=[2.0, 3.0],
        ref_width=200,
        ref_height=100,
        confidence=0.5,
        annotator="ocr",
        annotator_version="rapidocr-1",
        recipe="ocr-text-click",
        recipe_version="1",
        config_hash="cfg-hash",
        run_id="run-1",
    )
    assert first.label_id == GroundingLabel.make_id("a" * 64, "ocr", "1", 'click "OK"', 0)
    assert other.label_id == GroundingLabel.make_id("a" * 64, "ocr", "1", 'click "Cancel"', 0)
    assert again.label_id == GroundingLabel.make_id("a" * 64, "ocr", "1", 'click "OK"', 1)
    assert all(type(v) is float for v in (first.x0, first.click_y, first.confidence, *first.native_box))
    # a fresh builder (another answer) starts counting again
    assert LabelBuilder(_shot(), PROV).add('click "OK"', (1, 2, 3, 4), (2, 3), **kw).label_id == first.label_id


def test_native_frame_and_missing_native_numbers():
    build = LabelBuilder(_shot(), PROV, "pixel_resized", (1024, 512))
    label = build.add("x", (1, 2, 3, 4), (2, 3), element_text=None, role=None, native_box=None, native_point=None,
                      confidence=1)  # fmt: skip
    assert (label.coord_system, label.ref_width, label.ref_height) == ("pixel_resized", 1024, 512)
    assert label.native_box is None and label.native_point is None and label.element_text is None
    assert (label.image_width, label.image_height) == (200, 100)


def test_first_occurrence_is_the_smallest_uri_then_episode_then_step():
    shots = [
        _shot("/in/b.png"),
        _shot("/in/a.png", "ep2", 3),
        _shot("/in/a.png", "ep1", 5),
        _shot("/in/a.png", "ep1", 2),
    ]
    assert first_occurrence(shots) is shots[3]
    assert first_occurrence(reversed(shots)) is shots[3]
    rows = [s.to_row() for s in shots]  # table rows (mappings) choose the same occurrence
    assert first_occurrence(rows) is rows[3]
    with pytest.raises(ValueError):
        first_occurrence([])
