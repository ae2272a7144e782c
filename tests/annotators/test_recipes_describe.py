"""The ``describe-element`` recipe without an engine: prompt, answers, element lines, crops, work units, labels."""

from __future__ import annotations

import json

import pytest
from PIL import Image
from screenmill.annotators import recipes_describe as d
from screenmill.annotators.recipes import RECIPES, AnswerRejected, Frame, get_recipe
from screenmill.annotators.wording import MAX_INSTRUCTION_NAME, printable
from screenmill.stages.label.vlm import VlmConfig

from tests.stages.label.test_vlm import ENGINE, _shot

FRAME = Frame(1920, 1080, 1920, 1080)


def test_registered_with_its_schema_and_prompt():
    recipe = get_recipe(d.NAME)
    assert RECIPES[d.NAME] is recipe and recipe.kind == "describe" and recipe.version == "1"
    assert recipe.max_images == 2 and recipe.coord_system == "pixel"
    text = recipe.prompt(**dict(d.prompt_fields((96, 54, 192, 108), 1920, 1080)))
    assert "[50, 50, 100, 100]" in text and recipe.schema_text in text
    assert recipe.answer_schema["properties"]["description"]["maxLength"] == MAX_INSTRUCTION_NAME


def test_answers_are_cleaned_and_checked():
    recipe = get_recipe(d.NAME)
    got = recipe.answer(json.dumps({"description": "  open the \uf013  settings.\u200b "}), FRAME)
    assert got.instruction == "open the settings"
    cases = {
        "not json": "model_output_not_json",
        '{"description": ""}': "model_output_schema",
        '{"description": "x", "extra": 1}': "model_output_schema",
        '{"text": "open"}': "model_output_schema",
        json.dumps({"description": "\uf013 \ue000 ..."}): "model_output_schema",  # icon glyphs only: names nothing
        json.dumps({"description": "a" * (MAX_INSTRUCTION_NAME + 1)}): "model_output_schema",
    }
    for text, reason in cases.items():
        with pytest.raises(AnswerRejected) as e:
            recipe.answer(text, FRAME)
        assert e.value.reason == reason, text


def test_printable_drops_icon_glyphs_and_controls():
    assert printable("\uf03e Photos\x00\u200b  12\n") == "Photos 12"
    assert printable("Café ✓ 東京") == "Café ✓ 東京"


def test_element_lines():
    line = json.dumps({"image": "a/b/shot.png", "box": [10.4, 20, 110.6, 60]})
    assert d.parse_element_line(line, "f") == ("shot.png", "10,20,111,60")
    assert d.parse_element_line('{"img_filename": "x.png", "box": [0, 0, 1, 1]}', "f") == ("x.png", "0,0,1,1")
    bad = [
        "{",
        '{"image": "x.png"}',
        '{"image": "", "box": [0, 0, 1, 1]}',
        '{"image": "x.png", "box": [0, 0, 1]}',
        '{"image": "x.png", "box": [0, 0, true, 1]}',
        '{"image": "x.png", "box": [5, 0, 5, 1]}',
        '{"image": "x.png", "box": [0, 0, 1e300, 1]}',
        '["x.png"]',
    ]
    for text in bad:
        with pytest.raises(ValueError, match="bad element line"):
            d.parse_element_line(text, "f")


def test_crop_has_context_and_outlines_the_element():
    image = Image.new("RGB", (400, 300), (255, 255, 255))
    box = (100, 100, 140, 120)
    assert d.crop_region(box, 400, 300) == (52, 52, 188, 168)  # 48 px of context (> the 40 px side)
    assert d.crop_region((0, 0, 300, 20), 400, 300) == (0, 0, 400, 300)  # clipped to the image
    crop = d.outlined_crop(image, box)
    assert crop.size == (136, 116)
    assert crop.getpixel((48, 48)) == d.OUTLINE_RGB and crop.getpixel((48 + 39, 48 + 19)) == d.OUTLINE_RGB
    assert crop.getpixel((48 + 20, 48 + 10)) == (255, 255, 255)  # inside the outline: the element's own pixels
    assert crop.getpixel((10, 10)) == (255, 255, 255)
    assert image.getpixel((100, 100)) == (255, 255, 255)  # the screenshot itself is left as it was


def test_units_join_boxes_and_dead_letter_boxes_outside_the_screenshot():
    from screenmill.annotators.vllm.units import _JoinInstructions

    cfg = VlmConfig(run_id="r", config_hash="h", engine=ENGINE, recipe=d.NAME, instructions="e.jsonl")
    join = _JoinInstructions(cfg)
    join.setup()
    shot = _shot()  # 1920 x 1080
    out = list(join.process(("x.png", {"shots": [shot], "instructions": ["96,54,192,108", "1900,0,1921,10"]})))
    units = [o for o in out if not hasattr(o, "tag")]
    dead = [o.value for o in out if hasattr(o, "tag")]
    assert [dict(u.fields) for u in units] == [{"box": "96,54,192,108", "box_1000": "[50, 50, 100, 100]"}]
    assert units[0].key == f"{shot.screenshot_id}#96,54,192,108"
    assert [x.reason for x in dead] == ["element_outside_image"]
    assert dead[0].input_id == f"{shot.source_uri}#box=1900,0,1921,10"


def test_config_needs_an_elements_file():
    with pytest.raises(ValueError, match="needs an instructions file"):
        VlmConfig(run_id="r", config_hash="h", engine=ENGINE, recipe=d.NAME)
    with pytest.raises(ValueError, match="only localize recipes pack"):
        VlmConfig(run_id="r", config_hash="h", engine=ENGINE, recipe=d.NAME, instructions="e.jsonl", pack=2)


def test_answer_becomes_a_label_target_on_the_element():
    from screenmill.annotators.vllm.expand import described_target

    fields = dict(d.prompt_fields((100, 40, 300, 80), 1920, 1080))
    target = described_target(fields, d.Description("open the settings"))
    assert target.instruction == "open the settings"
    assert target.box == (100.0, 40.0, 300.0, 80.0) and target.point == (200.0, 60.0)
    assert target.native_box == (100, 40, 300, 80) and target.native_point is None


def test_element_lines_from_grounding_rows_one_per_box():
    rows = [
        {"screenshot_id": "b" * 64, "x0": 10.2, "y0": 5.0, "x1": 50.0, "y1": 25.0},
        {"screenshot_id": "b" * 64, "x0": 10.0, "y0": 5.0, "x1": 50.0, "y1": 25.0},  # another label, same element
        {"screenshot_id": "a" * 64, "x0": 3.0, "y0": 3.0, "x1": 3.0, "y1": 3.0},  # a point: no element box
        {"screenshot_id": "a" * 64, "x0": 0.0, "y0": 0.0, "x1": 8.0, "y1": 9.0},
    ]
    lines = d.element_lines(rows)
    assert [json.loads(x) for x in lines] == [
        {"image": "a" * 64, "box": [0, 0, 8, 9]},
        {"image": "b" * 64, "box": [10, 5, 50, 25]},
    ]
    assert [d.parse_element_line(x, "f") for x in lines] == [("a" * 64, "0,0,8,9"), ("b" * 64, "10,5,50,25")]
