"""Training targets: what one model family expects of a grounding or navigation sample, one declarative entry each.

``screenmill export --format trl|llamafactory|swift --target T`` (:mod:`screenmill.stages.export.training`) writes
every answer in the target's own convention. An entry (:class:`Target`) says:

* the coordinate system, from :mod:`screenmill.schemas.coords`: ``pixel_resized`` (absolute pixels of the image after
  Qwen's :func:`~screenmill.schemas.coords.smart_resize` with the entry's ``factor`` / ``min_pixels`` /
  ``max_pixels``: height and width round independently, so x and y scale by different ratios), ``norm_1000`` (0-1000
  of the image sent, **1000 inclusive** = the right / bottom edge, as the ``norm_1000`` converter defines it),
  ``norm_1`` (0-1) or ``pixel`` (original pixels);
* the rounding (``decimals``: 0 = integers; halves up) and the clamp (into ``[0, W']`` x ``[0, H']`` of the frame,
  ``[0, 1000]`` or ``[0, 1]``), both by :func:`~screenmill.schemas.coords.quantize`;
* ``point`` or ``box`` (what a grounding answer holds), the prompt and answer templates;
* the navigation action grammar: ``holo`` (Holo's navigation JSON: the ``navigate-step`` recipe's
  ``{note, thought, action}``), ``uitars`` (``Thought: …\\nAction: click(point='<point>x y</point>')``),
  ``pyautogui`` (``pyautogui.click(x=…, y=…)``) or ``showui`` (``{'action': 'CLICK', 'value': None, 'position':
  [x, y]}``).

Back to original pixels (what the dataset card states and the tests apply to every exported answer): ``x = v * W / W'``
and ``y = v * H / H'`` with ``(W', H')`` the resized frame (``pixel_resized``), ``(1000, 1000)`` (``norm_1000``),
``(1, 1)`` (``norm_1``) or ``(W, H)`` (``pixel``): :meth:`Target.decode_point` / :meth:`Target.decode_box`, the
converters of :mod:`screenmill.schemas.coords`.

Adding a model is adding an entry to :data:`TARGETS`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from screenmill.schemas.coords import (
    box_from_pixels,
    box_to_pixels,
    point_from_pixels,
    point_to_pixels,
    quantize,
    smart_resize,
)

SYSTEMS = ("pixel_resized", "norm_1000", "norm_1", "pixel")
GEOMETRIES = ("point", "box")

QWEN25_PIXELS = {"factor": 28, "min_pixels": 3136, "max_pixels": 12845056}  # Qwen2.5-VL preprocessor_config.json
UITARS_PIXELS = {"factor": 28, "min_pixels": 100 * 28 * 28, "max_pixels": 16384 * 28 * 28}  # UI-TARS' coordinate code

NAV_PROMPT = (
    "You are a GUI agent. Your task: {task}\n"
    "The last image is the current screen; earlier images are the previous screens, oldest first.\n"
    "Previous actions:\n{history}\n"
    "Coordinates: {coordinates}. Output the next action."
)


class Unspeakable(ValueError):
    """An action the target's grammar cannot say (``action_not_in_grammar``)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Target:
    """One model family's convention.

    Attributes:
        name: the ``--target`` name.
        system: one of :data:`SYSTEMS`.
        geometry: ``point`` or ``box``: what a grounding answer holds.
        decimals: places the coordinates are rounded to (0: integers).
        prompt: the grounding user turn; ``{instruction}``.
        answer: the grounding answer; ``{x}``, ``{y}`` (point) or ``{x0}``, ``{y0}``, ``{x1}``, ``{y1}`` (box), and
            ``{label}`` (the instruction as a JSON string).
        grammar: the navigation action grammar (a key of :data:`GRAMMARS`).
        factor, min_pixels, max_pixels: the ``smart_resize`` parameters (``pixel_resized`` only, else 0).
        nav_prompt: the navigation user turn; ``{task}``, ``{history}``, ``{coordinates}``.
        users: the models that answer this way (for the card).

    Raises:
        ValueError: an unknown system, geometry or grammar; resize parameters missing or given where unused.
    """

    name: str
    system: str
    geometry: str
    decimals: int
    prompt: str
    answer: str
    grammar: str
    factor: int = 0
    min_pixels: int = 0
    max_pixels: int = 0
    nav_prompt: str = NAV_PROMPT
    users: str = ""

    def __post_init__(self):
        if self.system not in SYSTEMS or self.geometry not in GEOMETRIES or self.grammar not in GRAMMARS:
            raise ValueError(f"target {self.name}: bad system/geometry/grammar {self.system, self.geometry}")
        resized = self.system == "pixel_resized"
        if resized != bool(self.factor and self.min_pixels and self.max_pixels) or self.decimals < 0:
            raise ValueError(f"target {self.name}: resize parameters belong to pixel_resized only, all three")

    # -------------------------------------------------------------------------------------------- coordinates

    def frame(self, width: int, height: int) -> tuple[int, int]:
        """``(W', H')``: the size of the image the model sees (after ``smart_resize`` for ``pixel_resized``)."""
        if self.system != "pixel_resized":
            return width, height
        h, w = smart_resize(height, width, self.factor, self.min_pixels, self.max_pixels)
        return w, h

    def limits(self, width: int, height: int) -> tuple[float, float]:
        """The clamp's upper ends: ``(W', H')``, ``(W, H)``, ``(1000, 1000)`` or ``(1, 1)``."""
        return {"norm_1000": (1000, 1000), "norm_1": (1, 1)}.get(self.system) or self.frame(width, height)

    def _ref(self, width: int, height: int):
        return self.frame(width, height) if self.system == "pixel_resized" else None

    def encode_point(self, point: Sequence[float], width: int, height: int) -> tuple[float, ...]:
        """Original pixels ``(x, y)`` → the target's rounded, clamped ``(x, y)``."""
        native = point_from_pixels(point, self.system, width, height, self._ref(width, height))
        return quantize(native, self.decimals, self.limits(width, height))

    def encode_box(self, box: Sequence[float], width: int, height: int) -> tuple[float, ...]:
        """Original pixels ``(x0, y0, x1, y1)`` → the target's rounded, clamped box."""
        native = box_from_pixels(box, self.system, width, height, self._ref(width, height))
        return quantize(native, self.decimals, self.limits(width, height))

    def decode_point(self, values: Sequence[float], width: int, height: int) -> tuple[float, float]:
        """The card's formula: the target's ``(x, y)`` → original pixels."""
        return point_to_pixels(values, self.system, width, height, self._ref(width, height))

    def decode_box(self, values: Sequence[float], width: int, height: int) -> tuple[float, float, float, float]:
        """The card's formula: the target's box → original pixels ``(x0, y0, x1, y1)``."""
        return box_to_pixels(values, self.system, width, height, self._ref(width, height))

    def number(self, value: float) -> str:
        """A coordinate as the answer writes it: an integer, or ``decimals`` places."""
        return str(int(value)) if self.decimals == 0 else f"{value:.{self.decimals}f}"

    # ---------------------------------------------------------------------------------------------- texts

    def grounding_prompt(self, instruction: str) -> str:
        return self.prompt.format(instruction=instruction)

    def grounding_answer(self, instruction: str, values: Sequence[float]) -> str:
        """The answer text for already encoded ``values`` (2 for a point target, 4 for a box target)."""
        names = ("x", "y") if self.geometry == "point" else ("x0", "y0", "x1", "y1")
        if len(values) != len(names):
            raise ValueError(f"target {self.name} answers a {self.geometry}, got {len(values)} values")
        fields = {n: self.number(v) for n, v in zip(names, values, strict=True)}
        return self.answer.format(label=json.dumps(instruction, ensure_ascii=False), **fields)

    def coordinates(self) -> str:
        """One phrase for a prompt: what the numbers mean."""
        return {
            "pixel_resized": "integer pixels of the screen as you see it",
            "norm_1000": "integers from 0 to 1000 across the screen's width and height",
            "norm_1": f"fractions from 0 to 1 of the screen's width and height, {self.decimals} decimals",
            "pixel": "integer pixels of the screen",
        }[self.system]

    def navigation_prompt(self, task: str, history: Sequence[str]) -> str:
        lines = "\n".join(f"{i + 1}. {h}" for i, h in enumerate(history)) or "none"
        return self.nav_prompt.format(task=task, history=lines, coordinates=self.coordinates())

    def action(self, kind: str, args: Mapping[str, Any], width: int, height: int, thought: str | None = None) -> str:
        """A recorded / predicted action (``actions`` row: original pixels) in this target's grammar.

        Raises:
            Unspeakable: the grammar has no such action.
        """
        point = None
        if "x" in args and "y" in args:
            point = tuple(self.number(v) for v in self.encode_point((args["x"], args["y"]), width, height))
        return GRAMMARS[self.grammar](self, kind, args, point, thought or "")

    def convention(self) -> dict[str, Any]:
        """The exact convention, for the card and ``_screenmill/state.json``."""
        limits = {"norm_1000": "[0, 1000] inclusive", "norm_1": "[0, 1]"}.get(self.system, "[0, W'] x [0, H']")
        back = {
            "pixel_resized": "x = v_x * W / W', y = v_y * H / H' with (H', W') = smart_resize(H, W)",
            "norm_1000": "x = v_x * W / 1000, y = v_y * H / 1000",
            "norm_1": "x = v_x * W, y = v_y * H",
            "pixel": "x = v_x, y = v_y",
        }[self.system]
        out = {
            "target": self.name,
            "system": self.system,
            "geometry": self.geometry,
            "rounding": "integers, halves up" if self.decimals == 0 else f"{self.decimals} decimals, halves up",
            "clamp": limits,
            "to_original_pixels": back,
            "grammar": self.grammar,
            "users": self.users,
        }
        if self.system == "pixel_resized":
            out.update(factor=self.factor, min_pixels=self.min_pixels, max_pixels=self.max_pixels)
        return out


# ------------------------------------------------------------------------------------------------ grammars


def _q(text: Any) -> str:
    """A single-quoted Python-style string literal."""
    return "'" + str(text).replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


def _pyautogui(t: Target, kind: str, args: Mapping[str, Any], point, thought: str) -> str:
    scroll = {"down": "scroll(-5)", "up": "scroll(5)", "left": "hscroll(-5)", "right": "hscroll(5)"}
    if kind == "click_element":
        code = f"pyautogui.click(x={point[0]}, y={point[1]})"
    elif kind == "write_element_abs":
        code = f"pyautogui.click(x={point[0]}, y={point[1]})\npyautogui.write({_q(args.get('content', ''))})"
    elif kind == "scroll":
        code = f"pyautogui.{scroll[args.get('direction', 'down')]}"
    elif kind == "go_back":
        code = "pyautogui.hotkey('alt', 'left')"
    elif kind == "refresh":
        code = "pyautogui.press('f5')"
    elif kind == "press_key":
        code = f"pyautogui.press({_q(str(args.get('key', '')).lower())})"
    elif kind == "goto":
        code = f"pyautogui.hotkey('ctrl', 'l')\npyautogui.write({_q(args['url'])})\npyautogui.press('enter')"
    elif kind == "wait":
        code = f"pyautogui.sleep({int(args.get('seconds', 1))})"
    else:
        raise Unspeakable(f"pyautogui has no {kind!r}")
    return f"# {thought}\n{code}" if thought else code


def _holo(t: Target, kind: str, args: Mapping[str, Any], point, thought: str) -> str:
    from screenmill.annotators.recipes import ACTION_TYPES

    if kind not in ACTION_TYPES:
        raise Unspeakable(f"Holo's navigation JSON has no {kind!r}")
    action: dict[str, Any] = {"action": kind}
    if point is not None:
        action["element"] = str(args.get("element") or "")
        action["x"], action["y"] = (json.loads(v) for v in point)
    for key in ("content", "direction", "url", "seconds"):
        if key in args:
            action[key] = args[key]
    return json.dumps({"note": "", "thought": thought, "action": action}, ensure_ascii=False)


def _uitars(t: Target, kind: str, args: Mapping[str, Any], point, thought: str) -> str:
    def at(p) -> str:
        return f"point='<point>{p[0]} {p[1]}</point>'"

    keys = {"go_back": "alt left", "refresh": "f5"}
    if kind == "click_element":
        act = f"click({at(point)})"
    elif kind == "write_element_abs":
        act = f"click({at(point)})\n\ntype(content={_q(args.get('content', ''))})"
    elif kind == "scroll":
        act = f"scroll(direction={_q(args.get('direction', 'down'))})"
    elif kind in keys or kind == "press_key":
        act = f"hotkey(key={_q(keys.get(kind) or str(args.get('key', '')).lower())})"
    elif kind == "wait":
        act = "wait()"
    elif kind == "answer":
        act = f"finished(content={_q(args.get('content', ''))})"
    else:
        raise Unspeakable(f"UI-TARS has no {kind!r}")
    return f"Thought: {thought}\nAction: {act}"


def _showui(t: Target, kind: str, args: Mapping[str, Any], point, thought: str) -> str:
    position = f"[{point[0]}, {point[1]}]" if point is not None else "None"
    if kind == "click_element":
        action, value = "CLICK", "None"
    elif kind == "write_element_abs":
        action, value = "INPUT", _q(args.get("content", ""))
    elif kind == "scroll":
        action, value = "SCROLL", _q(args.get("direction", "down"))
    elif kind == "answer":
        action, value = "ANSWER", _q(args.get("content", ""))
    elif kind == "press_key" and str(args.get("key", "")).upper() == "ENTER":
        action, value = "ENTER", "None"
    else:
        raise Unspeakable(f"ShowUI has no {kind!r}")
    return f"{{'action': '{action}', 'value': {value}, 'position': {position}}}"


GRAMMARS: dict[str, Callable[..., str]] = {
    "pyautogui": _pyautogui,
    "holo": _holo,
    "uitars": _uitars,
    "showui": _showui,
}


# ------------------------------------------------------------------------------------------------ the entries


def _holo2_prompt() -> str:
    from screenmill.annotators.recipes import get_recipe

    recipe = get_recipe("holo2-localize")
    return recipe.template.replace("{schema}", recipe.schema_text.replace("{", "{{").replace("}", "}}"))


_QWEN_BOX_PROMPT = (
    "Locate the element for this instruction and output its bbox coordinates in JSON format: {instruction}"
)
_QWEN_BOX_ANSWER = '```json\n[\n\t{{"bbox_2d": [{x0}, {y0}, {x1}, {y1}], "label": {label}}}\n]\n```'
_PLAIN_PROMPT = "Click on the element for this instruction and output the point as JSON: {instruction}"
_PLAIN_ANSWER = '{{"point": [{x}, {y}]}}'


def _registry() -> dict[str, Target]:
    entries = [
        Target(
            "qwen2.5-vl",
            "pixel_resized",
            "box",
            0,
            _QWEN_BOX_PROMPT,
            _QWEN_BOX_ANSWER,
            "pyautogui",
            **QWEN25_PIXELS,
            users="Qwen2.5-VL, GroundNext, Holo1.5 (absolute pixels of the smart-resized image)",
        ),
        Target(
            "qwen3-vl",
            "norm_1000",
            "box",
            0,
            _QWEN_BOX_PROMPT,
            _QWEN_BOX_ANSWER,
            "pyautogui",
            users="Qwen3-VL (0-1000 of the image sent)",
        ),
        Target("holo2", "norm_1000", "point", 0, _holo2_prompt(), '{{"x": {x}, "y": {y}}}', "holo", users="Holo2"),
        Target(
            "ui-tars-1.5",
            "pixel_resized",
            "point",
            0,
            "Output only the coordinate of one point in your response. What element matches the following task: "
            "{instruction}",
            "click(point='<point>{x} {y}</point>')",
            "uitars",
            **UITARS_PIXELS,
            users="UI-TARS-1.5 (absolute pixels of the smart-resized image)",
        ),
        Target(
            "showui",
            "norm_1",
            "point",
            2,
            "Based on the screenshot of the page, I give a text description and you give its corresponding "
            "location. The coordinate represents a clickable location [x, y] for an element, which is a relative "
            "coordinate on the screenshot, scaled from 0 to 1.\n{instruction}",
            "[{x}, {y}]",
            "showui",
            users="ShowUI, Aguvis, GUI-Actor ([0, 1])",
        ),
        Target("norm1000", "norm_1000", "point", 0, _PLAIN_PROMPT, _PLAIN_ANSWER, "pyautogui", users="UGround"),
        Target("norm1", "norm_1", "point", 3, _PLAIN_PROMPT, _PLAIN_ANSWER, "pyautogui", users="OS-Atlas data"),
        Target("pixel", "pixel", "point", 0, _PLAIN_PROMPT, _PLAIN_ANSWER, "pyautogui", users="original pixels"),
    ]
    return {t.name: t for t in entries}


TARGETS: dict[str, Target] = _registry()


def get_target(name: str) -> Target:
    """The entry called ``name``.

    Raises:
        ValueError: no such target (the message lists them).
    """
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown target {name!r}; known: {', '.join(TARGETS)}") from None
