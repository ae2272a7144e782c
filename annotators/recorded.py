"""Recorded human / automation actions of an episode step → our action space, in original-image pixels.

Understood formats (the JSON kept in ``Screenshot.recorded_action``):

* ScreenAgent: a list of ``{"action_type": "MouseAction", "mouse_action_type": "click"|"double_click"|
  "right_click"|"scroll_up"|"scroll_down", "mouse_position": {"width": x, "height": y}}`` (pixels, despite the key
  names) and ``{"action_type": "KeyboardAction", "keyboard_action_type": "text"|"press", "keyboard_text"|
  "keyboard_key"}``; ``PlanAction`` / ``EvaluateSubTaskAction`` are reasoning, not UI actions.
* DroidBot: ``{"event_type": "touch"|"long_touch"|"set_text"|"scroll"|"key"|"intent", "click_point": [x, y],
  "target_bbox": [x0, y0, x1, y1], "target_text", "target_content_description", "text", "direction", "name"}``.
* Generic: ``{"action": <one of ACTION_TYPES, or KEY_ACTION>, ...}`` with ``x``/``y`` in pixels (the explorers'
  recorded format; a key pressed is ``{"action": "press_key", "key": "Escape"}``).

:func:`ui_actions` returns the UI actions of a step (possibly none); unknown shapes raise ``ValueError`` so the
stage can dead-letter them (``bad_recorded_action``).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from screenmill.annotators.recipes import ACTION_TYPES

_NOT_UI = {"PlanAction", "EvaluateSubTaskAction", "intent"}
#: A key pressed (``key``: its name): recorded by every format, said by the grammars that have keys
#: (:mod:`screenmill.annotators.targets`), not an action the navigation recipe's model answers with.
KEY_ACTION = "press_key"


@dataclasses.dataclass(frozen=True, slots=True)
class RecordedAction:
    """One UI action: ``action_type`` from :data:`screenmill.annotators.recipes.ACTION_TYPES`, arguments in original
    pixels.

    ``box`` is the target element's box when the recording has it (DroidBot's view bounds), else None.
    """

    action_type: str
    args: dict[str, Any]
    box: tuple[float, float, float, float] | None = None
    element: str | None = None

    @property
    def point(self) -> tuple[float, float] | None:
        return (self.args["x"], self.args["y"]) if "x" in self.args else None

    def describe(self, width: int, height: int) -> str:
        """A one-line description for a prompt; coordinates in 0–1000 of the screen."""
        parts = [self.action_type]
        if self.point is not None:
            x, y = self.point
            parts.append(f"at x={round(x * 1000 / width)}, y={round(y * 1000 / height)} (0-1000 scale)")
        for key in ("content", "direction", "url", "key"):
            if key in self.args:
                parts.append(f"{key}={self.args[key]!r}")
        if self.element:
            parts.append(f"on element {self.element!r}")
        return " ".join(parts)


def _screenagent(item: dict) -> list[RecordedAction]:
    kind = item.get("action_type")
    if kind in _NOT_UI:
        return []
    if kind == "MouseAction":
        mouse = item.get("mouse_action_type")
        if mouse in ("scroll_up", "scroll_down"):
            return [RecordedAction("scroll", {"direction": mouse.split("_")[1]})]
        pos = item["mouse_position"]
        x, y = float(pos["width"]), float(pos["height"])
        return [RecordedAction("click_element", {"x": x, "y": y, "button": item.get("mouse_button", "left"),
                                                 "clicks": 2 if mouse == "double_click" else 1})]  # fmt: skip
    if kind == "KeyboardAction":
        if item.get("keyboard_action_type") == "text":
            return [RecordedAction("write_element_abs", {"content": str(item["keyboard_text"])})]
        return [RecordedAction(KEY_ACTION, {"key": str(item.get("keyboard_key", ""))})]
    raise ValueError(f"unknown ScreenAgent action_type {kind!r}")


def _droidbot(item: dict) -> list[RecordedAction]:
    kind = item["event_type"]
    if kind in _NOT_UI:
        return []
    element = item.get("target_text") or item.get("target_content_description") or None
    box = tuple(float(v) for v in item["target_bbox"]) if item.get("target_bbox") else None
    if kind in ("touch", "long_touch", "set_text"):
        point = item.get("click_point")
        if point is None and box is not None:
            point = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        if point is None:
            raise ValueError(f"DroidBot {kind} event without click_point or target_bbox")
        args: dict[str, Any] = {"x": float(point[0]), "y": float(point[1])}
        if kind == "set_text":
            args["content"] = str(item.get("text", ""))
            return [RecordedAction("write_element_abs", args, box, element)]
        if kind == "long_touch":
            args["long_press"] = True
        return [RecordedAction("click_element", args, box, element)]
    if kind == "scroll":
        return [RecordedAction("scroll", {"direction": str(item.get("direction", "down")).lower()}, box, element)]
    if kind == "key":
        name = str(item.get("name", "")).upper()
        return [RecordedAction("go_back", {}) if name == "BACK" else RecordedAction(KEY_ACTION, {"key": name})]
    raise ValueError(f"unknown DroidBot event_type {kind!r}")


def _generic(item: dict) -> list[RecordedAction]:
    kind = item["action"]
    if kind not in ACTION_TYPES and kind != KEY_ACTION:
        raise ValueError(f"unknown action {kind!r}; known: {', '.join((*ACTION_TYPES, KEY_ACTION))}")
    args = {k: v for k, v in item.items() if k != "action"}
    return [RecordedAction(kind, args)]


def ui_actions(recorded: str | None) -> list[RecordedAction]:
    """The UI actions recorded for one step (``[]`` for none, or for reasoning-only steps).

    Raises:
        ValueError: the JSON does not parse or has a shape none of the known formats has.
    """
    if not recorded:
        return []
    try:
        value = json.loads(recorded)
    except json.JSONDecodeError as e:
        raise ValueError(f"recorded action is not JSON: {e}") from None
    items = value if isinstance(value, list) else [value]
    out: list[RecordedAction] = []
    for item in items:
        if not isinstance(item, dict):
            raise ValueError(f"a recorded action must be an object, got {type(item).__name__}")
        try:
            if "action_type" in item:
                out += _screenagent(item)
            elif "event_type" in item:
                out += _droidbot(item)
            elif "action" in item:
                out += _generic(item)
            else:
                raise ValueError(f"unknown recorded action shape with keys {sorted(item)}")
        except (KeyError, TypeError) as e:
            raise ValueError(f"recorded action {json.dumps(item)[:200]} is missing or has a bad {e}") from None
    return out
