"""Every target's answers convert back with the card's formula into their label's box, and its grammars parse."""

from __future__ import annotations

import ast
import json
import re

import numpy as np
import pytest
from screenmill.annotators.recipes import Frame, get_recipe
from screenmill.annotators.targets import TARGETS, Target, Unspeakable, get_target
from screenmill.schemas.coords import box_iou, point_in_box

SCREENS = [(1920, 1080), (1366, 768), (390, 844), (1280, 800), (3840, 2160), (1024, 768)]
REQUIRED = ("qwen2.5-vl", "qwen3-vl", "holo2", "ui-tars-1.5", "showui", "norm1000", "norm1", "pixel")


def _boxes(rng, w: int, h: int, n: int, least: tuple[float, float] = (16, 16)):
    """Element-sized boxes: ``least``-400 px wide, ``least``-120 px high (``least`` at least 16), anywhere."""
    lx, ly = max(16, least[0]), max(16, least[1])
    for _ in range(n):
        bw, bh = rng.uniform(lx, max(lx, min(400, w))), rng.uniform(ly, max(ly, min(120, h)))
        x0, y0 = rng.uniform(0, w - bw), rng.uniform(0, h - bh)
        yield (x0, y0, x0 + bw, y0 + bh)


def _numbers(text: str) -> list[float]:
    return [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", text)]


def test_the_required_targets_exist_and_unknown_ones_are_named():
    assert set(REQUIRED) <= set(TARGETS)
    with pytest.raises(ValueError, match="known: .*qwen2.5-vl"):
        get_target("qwen9")
    with pytest.raises(ValueError):
        Target("bad", "pixel_resized", "point", 0, "{instruction}", "{x} {y}", "uitars")  # no resize parameters


@pytest.mark.parametrize("name", REQUIRED)
def test_every_answer_converts_back_into_its_box(name):
    """The answer text (not the internal numbers) → the card's formula → inside the box / IoU >= 0.9, for every box at
    least one rounding step of the target wide and high (showui's 2 decimals: 1 % of the screen; finer boxes are what
    the export's ``rounding_leaves_box`` check holds back)."""
    target = get_target(name)
    rng = np.random.default_rng(7)
    total = 0
    for w, h in SCREENS:
        lx, ly = target.limits(w, h)
        step = 10.0**-target.decimals
        for box in _boxes(rng, w, h, 60, (step * w / lx, step * h / ly)):
            point = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
            if target.geometry == "box":
                values = target.encode_box(box, w, h)
                text = target.grounding_answer("press it", values)
                back = target.decode_box(_numbers(text.split("bbox_2d")[1])[:4], w, h)
                assert box_iou(back, box) >= 0.9, (name, w, h, box, text)
                assert point_in_box(((back[0] + back[2]) / 2, (back[1] + back[3]) / 2), box)
            else:
                text = target.grounding_answer("press it", target.encode_point(point, w, h))
                back = target.decode_point(_numbers(text)[-2:], w, h)
                assert point_in_box(back, box), (name, w, h, box, text)
            total += 1
    assert total == 6 * 60


def test_qwen_pixels_follow_the_resized_frame_per_axis():
    """1366x768 → smart_resize 756x1372: x and y scale by different ratios, both exact at the far edge."""
    t = get_target("qwen2.5-vl")
    assert t.frame(1366, 768) == (1372, 756)
    assert t.encode_box((0, 0, 1366, 768), 1366, 768) == (0, 0, 1372, 756)
    assert t.decode_box((0, 0, 1372, 756), 1366, 768) == (0, 0, 1366, 768)
    conv = t.convention()
    assert (conv["factor"], conv["min_pixels"], conv["max_pixels"]) == (28, 3136, 12845056)
    assert get_target("qwen3-vl").encode_point((1366, 768), 1366, 768) == (1000, 1000)  # 1000 inclusive
    assert get_target("qwen3-vl").convention()["clamp"] == "[0, 1000] inclusive"


def test_holo2_answers_parse_with_the_holo2_recipe_into_the_box():
    target, recipe = get_target("holo2"), get_recipe("holo2-localize")
    assert target.grounding_prompt("the OK button") == recipe.prompt(instruction="the OK button")
    rng = np.random.default_rng(3)
    for w, h in SCREENS:
        for box in _boxes(rng, w, h, 20):
            point = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
            text = target.grounding_answer("x", target.encode_point(point, w, h))
            (parsed,) = recipe.answer(text, Frame(w, h, w, h), {"instruction": "x"})
            assert point_in_box(parsed.point, box)


def test_navigation_grammars_say_actions_their_own_way():
    click = {"x": 960.0, "y": 540.0, "element": "OK"}
    w, h = 1920, 1080
    step = get_recipe("navigate-step").answer(
        get_target("holo2").action("click_element", click, w, h, "press OK"), Frame(w, h, w, h)
    )
    assert (step.action_type, step.action_args["x"], step.action_args["y"]) == ("click_element", 960.0, 540.0)
    uitars = get_target("ui-tars-1.5").action("click_element", click, w, h, "press OK")
    rw, rh = get_target("ui-tars-1.5").frame(w, h)
    x, y = round(960 * rw / w), round(540 * rh / h)
    assert uitars == f"Thought: press OK\nAction: click(point='<point>{x} {y}</point>')"
    code = get_target("qwen2.5-vl").action("write_element_abs", {**click, "content": "it's"}, w, h)
    assert "pyautogui.write('it\\'s')" in code
    ast.parse(code)  # valid Python
    showui = ast.literal_eval(get_target("showui").action("click_element", click, w, h))
    assert showui == {"action": "CLICK", "value": None, "position": [0.5, 0.5]}
    with pytest.raises(Unspeakable):
        get_target("showui").action("goto", {"url": "https://x"}, w, h)
    assert json.loads(get_target("holo2").action("scroll", {"direction": "down"}, w, h))["action"] == {
        "action": "scroll",
        "direction": "down",
    }
