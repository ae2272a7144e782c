"""Recorded actions of real episodes (ScreenAgent, DroidBot, generic) → our action space in original pixels."""

from __future__ import annotations

import json

import pytest
from screenmill.annotators.recipes import ACTION_TYPES
from screenmill.annotators.recorded import ui_actions


def test_screenagent_mouse_and_keyboard():
    recorded = [
        {"action_type": "MouseAction", "mouse_action_type": "click", "mouse_button": "left",
         "mouse_position": {"width": 460, "height": 45}},
        {"action_type": "KeyboardAction", "keyboard_action_type": "text", "keyboard_text": "hello"},
        {"action_type": "KeyboardAction", "keyboard_action_type": "press", "keyboard_key": "Return"},
        {"action_type": "MouseAction", "mouse_action_type": "scroll_down", "scroll_repeat": 10},
        {"action_type": "PlanAction", "element": "plan"},
    ]  # fmt: skip
    click, text, key, scroll = ui_actions(json.dumps(recorded))
    assert (click.action_type, click.point, click.box) == ("click_element", (460.0, 45.0), None)
    assert (text.action_type, text.args) == ("write_element_abs", {"content": "hello"})
    assert (key.action_type, key.args) == ("press_key", {"key": "Return"})
    assert (scroll.action_type, scroll.args) == ("scroll", {"direction": "down"})
    assert click.describe(1024, 768) == "click_element at x=449, y=59 (0-1000 scale)"
    assert ui_actions(json.dumps([{"action_type": "EvaluateSubTaskAction", "situation": "ok"}])) == []


def test_droidbot_touch_keeps_the_view_box():
    event = {"event_type": "touch", "target_bbox": [847, 112, 929, 194], "target_text": None,
             "target_content_description": "Add List", "click_point": [888.0, 153.0]}  # fmt: skip
    (a,) = ui_actions(json.dumps(event))
    assert (a.action_type, a.point, a.element) == ("click_element", (888.0, 153.0), "Add List")
    assert a.box == (847, 112, 929, 194)
    assert "on element 'Add List'" in a.describe(1080, 2340)
    assert ui_actions(json.dumps({"event_type": "intent", "intent": "am start x"})) == []
    (back,) = ui_actions(json.dumps({"event_type": "key", "name": "BACK"}))
    assert back.action_type == "go_back"
    (typed,) = ui_actions(json.dumps({"event_type": "set_text", "target_bbox": [0, 0, 10, 10], "text": "hi"}))
    assert typed.args == {"x": 5.0, "y": 5.0, "content": "hi"}


def test_generic_and_bad_shapes():
    (a,) = ui_actions(json.dumps({"action": "goto", "url": "https://example.org"}))
    assert (a.action_type, a.args) == ("goto", {"url": "https://example.org"})
    assert ui_actions(None) == [] and ui_actions("") == []
    for bad in ("{", "[1]", '{"what": 1}', '{"action": "fly"}', '{"action_type": "MouseAction"}',
                '{"event_type": "touch"}', '{"event_type": "teleport"}'):  # fmt: skip
        with pytest.raises(ValueError):
            ui_actions(bad)


def test_every_shared_episode_step_parses(shared_dir):
    episodes = shared_dir / "episodes"
    if not episodes.is_dir():
        pytest.skip("../shared/episodes is not here")
    seen = 0
    for steps in sorted(episodes.glob("*/steps.jsonl")):
        for line in steps.read_text().splitlines():
            step = json.loads(line)
            value = step.get("actions", step.get("action"))
            for action in ui_actions(json.dumps(value)):
                seen += 1
                assert action.action_type in (*ACTION_TYPES, "press_key")
                if action.point is not None:
                    assert 0 <= action.point[0] <= step["width"] and 0 <= action.point[1] <= step["height"]
    assert seen >= 20
