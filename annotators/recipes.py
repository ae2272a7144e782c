"""Prompt recipes: named, versioned prompts whose answers are JSON with a declared schema and coordinate system.

A recipe turns (screenshot(s), task fields) into a prompt and turns the model's text answer into validated results in
**original-image pixels**. Every recipe decodes with structured outputs (:attr:`Recipe.answer_schema` is handed to
vLLM), and every answer is still parsed and checked here: random weights, another backend or a truncated answer can
all produce text that is not what the schema says.

Registry (:data:`RECIPES`, :func:`get_recipe`):

``holo2-localize``   instruction → ``{"x", "y"}`` in 0–1000 of the image (``norm_1000``).
``holo15-localize``  instruction → ``{"action": "click_absolute", "x", "y"}`` in pixels of the image after the
                     model's resize (``pixel_resized``: the tile grid's ``resized_width`` × ``resized_height``).
``navigate-step``    task + the last ≤ 4 screenshots → ``{note, thought, action}`` (a policy step; coordinates in
                     ``norm_1000`` of the current screenshot).
``explain-step``     task + screenshots + a *recorded* action → ``{thought, instruction}``: inverse labelling of
                     human / automation trajectories (the action's coordinates are the recording's, in pixels).
``synthesize-task``  up to 4 frames of a whole episode (first, last, evenly spaced between) + its actions in order →
                     ``{"task"}``: the high-level task the episode accomplishes (reverse task synthesis, as OS-Genesis
                     does it for explored trajectories); one answer per episode.
``propose-elements`` screenshot → interactive elements, each with an instruction and a box (``norm_1000``):
                     synthetic grounding data the way UGround / OS-Atlas make it.
``describe-element`` screenshot + an element's box (pixels) → ``{"description"}``: the element's purpose as a
                     functional referring expression (:mod:`screenmill.annotators.recipes_describe`).

Errors raise :class:`AnswerRejected` with a stable ``reason`` (``model_output_not_json``, ``model_output_schema``,
``coords_out_of_bounds``), which the stage dead-letters with the raw text.

Packing (localize recipes, :meth:`Recipe.packed`): up to K instructions about one screenshot in one request, so the
image is prefilled once for K answers. The prompt lists the targets in order and asks for the recipe's own answer
format extended to a JSON array of exactly K items (:meth:`Recipe.pack_schema`, structured outputs as for one answer);
:meth:`Recipe.answer_pack` checks every item on its own (a truncated array still gives its complete items). The
packed recipe's version is the recipe's plus ``+pack<K>`` (part of ``label_id`` and, through the config, of
``config_hash``); its single-request prompt, schema and parsing are the recipe's own.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from screenmill.annotators.outputs import AnswerRejected
from screenmill.schemas.coords import box_to_pixels, point_to_pixels

LOCALIZE_PROMPT = (
    "Localize an element on the GUI image according to the provided target and output a click position. "
    "You must output a valid JSON following the format: {schema}. Your target is: {instruction}"
)

NAVIGATE_PROMPT = (
    "You are a computer-use agent. Your task: {task}\n"
    "The last image is the current screen; earlier images are the previous screens, oldest first.\n"
    "Previous actions: {history}\n"
    "Decide the next step. Coordinates are integers from 0 to 1000 across the current screen's width and height. "
    "You must output a valid JSON following the format: {schema}"
)

EXPLAIN_PROMPT = (
    "You are labelling a recorded computer-use session. The user's task: {task}\n"
    "The last image is the screen the action was taken on; earlier images are the previous screens, oldest first.\n"
    "Previous actions: {history}\n"
    "The recorded action: {action}\n"
    "Explain why this action was taken, and write the instruction it carries out as a user would say it "
    "(for example: click the Sign in button). You must output a valid JSON following the format: {schema}"
)

SYNTHESIZE_PROMPT = (
    "You are labelling a computer-use session that was recorded by exploring an interface. The images are screens of "
    "the session in order: the first is the screen before the first action, the last the screen after the last one.\n"
    "The actions taken, in order:\n{actions}\n"
    "Write the high-level task a user would have given to make these actions worthwhile, as one imperative sentence "
    "(for example: Find the price of the lamp and add one to the cart). You must output a valid JSON following the "
    "format: {schema}"
)

PACK_PROMPT = (
    "Localize elements on the GUI image according to the provided targets and output a click position for each. "
    "You must output a valid JSON array with one item per target, in order, each following the format: {schema}. "
    "Your targets are:\n{targets}"
)

PROPOSE_PROMPT = (
    "List up to {max_elements} interactive elements visible on this GUI screenshot (buttons, links, inputs, tabs, "
    "icons, menu items). For each give: an instruction a user would give to act on it, its visible text (empty when "
    "it has none), its role, and its bounding box as integers from 0 to 1000 across the image's width and height. "
    "You must output a valid JSON following the format: {schema}"
)

_NORM = {"type": "integer", "minimum": 0, "maximum": 1000}
KINDS = ("localize", "propose", "step", "explain", "task", "describe")
MAX_PACK = 64  # instructions per packed request
MAX_TASK_FRAMES = 4
#: A task recipe's answer is an ``actions`` row of the episode as a whole: ``step`` -1, ``action_type`` ``task``,
#: ``action_args`` ``{"task", "frames"}`` (the step indices of the frames the model saw), no ``screenshot_id``.
TASK_STEP = -1
TASK_ACTION = "task"


@dataclasses.dataclass(frozen=True, slots=True)
class Frame:
    """The image an answer's coordinates refer to: original size and the model's resized size (tile grid)."""

    width: int
    height: int
    resized_width: int
    resized_height: int


@dataclasses.dataclass(frozen=True, slots=True)
class Target:
    """One parsed grounding answer in original-image pixels (``box`` is zero-size for point-only answers)."""

    instruction: str
    element_text: str | None
    role: str | None
    box: tuple[float, float, float, float]
    point: tuple[float, float]
    native_box: tuple[float, ...] | None
    native_point: tuple[float, float] | None


@dataclasses.dataclass(frozen=True, slots=True)
class Step:
    """One parsed policy step: ``action_args`` has its coordinates in original-image pixels."""

    action_type: str
    action_args: dict[str, Any]
    thought: str | None
    note: str | None


@dataclasses.dataclass(frozen=True, slots=True)
class Explanation:
    """Why a recorded action was taken (``thought``) and the instruction it carries out."""

    thought: str
    instruction: str


@dataclasses.dataclass(frozen=True, slots=True)
class SynthesizedTask:
    """The high-level task a whole episode accomplishes (one per episode)."""

    task: str


def task_frames(n: int, most: int = MAX_TASK_FRAMES) -> list[int]:
    """Which of an episode's ``n`` frames a task recipe sees: the first, the last and evenly spaced between, at most
    ``most``, in order (``[0, 2, 5, 7]`` of 8)."""
    if n <= most:
        return list(range(n))
    return sorted({round(i * (n - 1) / (most - 1)) for i in range(most)})


@dataclasses.dataclass(frozen=True)
class Recipe:
    """A named, versioned prompt with its answer schema and coordinate system.

    Attributes:
        name: registry key.
        version: bump whenever the prompt, schema or parsing changes (it is part of ``label_id``).
        kind: ``localize`` (instruction in → one target), ``propose`` (→ many targets), ``step`` (→ a policy
            step), ``explain`` (a recorded action → its thought and instruction: inverse labelling), ``task`` (a
            whole episode → the task it accomplishes) or ``describe`` (an element's box → its purpose).
        coord_system: the system the answer's numbers are in (see :mod:`screenmill.schemas.coords`).
        template: ``str.format`` template; ``{schema}`` is filled with the compact answer schema.
        answer_schema: JSON schema of the answer (used for structured outputs and for validation).
        max_images: screenshots per prompt (≤ 4).
        max_tokens: generation budget per request.
        parse: ``parse(obj, frame, fields) -> list[Target] | Step``; raises :class:`AnswerRejected`.
        defaults: template fields used when the caller does not give them.
        pack: instructions per request (1: one; more: :meth:`packed`, localize recipes only).
    """

    name: str
    version: str
    kind: str
    coord_system: str
    template: str
    answer_schema: Mapping[str, Any]
    max_images: int
    max_tokens: int
    parse: Callable[[Any, Frame, Mapping[str, Any]], Any]
    defaults: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    pack: int = 1

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Recipe {self.name}: kind must be one of {KINDS}, got {self.kind!r}")
        if not 1 <= self.max_images <= 4:
            raise ValueError(f"Recipe {self.name}: max_images must be 1..4, got {self.max_images}")
        if self.max_tokens < 1:
            raise ValueError(f"Recipe {self.name}: max_tokens must be >= 1")
        if not 1 <= self.pack <= MAX_PACK:
            raise ValueError(f"Recipe {self.name}: pack must be 1..{MAX_PACK}, got {self.pack}")
        if self.pack > 1 and self.kind != "localize":
            raise ValueError(f"Recipe {self.name}: only localize recipes pack instructions, this one is {self.kind}")

    @property
    def schema_text(self) -> str:
        return json.dumps(self.answer_schema, separators=(",", ":"))

    def prompt(self, **fields: Any) -> str:
        """The text of the user turn (image placeholders are added by the engine's chat format).

        Raises:
            KeyError: a field the template needs is missing (``instruction`` for localize, ``task`` for step).
        """
        return self.template.format(schema=self.schema_text, **{**self.defaults, **fields})

    def answer(self, text: str, frame: Frame, fields: Mapping[str, Any] | None = None):
        """Parse and validate a raw answer.

        Args:
            text: the model's output text.
            frame: the (current) screenshot's original and resized size.
            fields: the fields the prompt was made from (``instruction`` is copied into localize targets).

        Returns:
            ``list[Target]`` for localize/propose recipes, a :class:`Step` for step recipes, an
            :class:`Explanation` for explain recipes, a :class:`SynthesizedTask` for task recipes.

        Raises:
            AnswerRejected: ``model_output_not_json`` (not one JSON value), ``model_output_schema`` (the value
                does not match the schema), ``coords_out_of_bounds`` (a coordinate outside the image).
        """
        return self._checked(_decoded(text), frame, fields or {})

    def _checked(self, obj: Any, frame: Frame, fields: Mapping[str, Any]):
        """One decoded answer → the recipe's result (see :meth:`answer`); raises :class:`AnswerRejected`."""
        try:
            json.dumps(obj, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as e:  # a lone surrogate ("\udcff") cannot be stored as UTF-8 text
            raise AnswerRejected("model_output_schema", f"text that is not valid Unicode: {e.reason}") from None
        except (ValueError, RecursionError) as e:
            raise AnswerRejected("model_output_not_json", f"{e.__class__.__name__}: {str(e)[:200]}") from None
        _validate(obj, self.answer_schema)
        try:
            return self.parse(obj, frame, fields)
        except AnswerRejected:
            raise
        except OverflowError as e:  # an integer too large for a float coordinate
            raise AnswerRejected("coords_out_of_bounds", f"{type(e).__name__}: {e}") from None
        except (ValueError, TypeError, KeyError) as e:
            raise AnswerRejected("model_output_schema", f"{type(e).__name__}: {e}") from None

    def packed(self, k: int) -> Recipe:
        """This recipe asking ``k`` instructions per request (version ``<version>+pack<k>``; ``k`` 1: itself).

        Raises:
            ValueError: not a localize recipe, or ``k`` outside 1..:data:`MAX_PACK`.
        """
        if k == 1:
            return self
        return dataclasses.replace(self, version=f"{self.version}+pack{k}", pack=k)

    def pack_schema(self, n: int) -> dict[str, Any]:
        """The answer schema of a packed request of ``n`` instructions: an array of exactly ``n`` answers."""
        return {"type": "array", "items": dict(self.answer_schema), "minItems": n, "maxItems": n}

    def pack_prompt(self, instructions: Sequence[str]) -> str:
        """The user turn of a packed request: the answer format of one item, the targets numbered in order (the array
        and its length are the structured output's, :meth:`pack_schema`)."""
        targets = "\n".join(f"{i}. {text}" for i, text in enumerate(instructions, 1))
        return PACK_PROMPT.format(schema=self.schema_text, targets=targets)

    def pack_max_tokens(self, n: int) -> int:
        """The answer budget of a packed request of ``n`` instructions: ``n`` answers, their commas, the brackets."""
        return n * (self.max_tokens + 1) + 2

    def answer_pack(self, text: str, frame: Frame, fields: Sequence[Mapping[str, Any]]) -> list:
        """Parse a packed answer item by item (``fields[i]``: the prompt fields of the i-th instruction).

        Returns:
            one entry per instruction, in order: its result (as :meth:`answer` returns it), or the
            :class:`AnswerRejected` that item got: ``model_output_not_json`` when the answer is not JSON or ends
            before the item (a truncated array keeps the items before the cut), ``model_output_schema`` when the
            answer is not an array or has fewer items, or the item's own reason.
        """
        n = len(fields)
        items, missing = _array_items(text, n)
        out: list = []
        for i, f in enumerate(fields):
            where = f"item {i + 1} of {n}"
            if i >= len(items):
                out.append(AnswerRejected(missing.reason, f"{where}: {missing.message}"))
                continue
            try:
                out.append(self._checked(items[i], frame, f))
            except AnswerRejected as e:
                out.append(AnswerRejected(e.reason, f"{where}: {e.message}"))
        return out


def _decoded(text: str) -> Any:
    """The one JSON value of ``text``; raises :class:`AnswerRejected` (``model_output_not_json``)."""
    try:
        return json.loads(text)
    except (TypeError, ValueError, RecursionError) as e:  # ValueError: JSONDecodeError, a >4300-digit int
        raise AnswerRejected("model_output_not_json", f"{e.__class__.__name__}: {str(e)[:200]}") from None


def _array_items(text: str, n: int) -> tuple[list, AnswerRejected | None]:
    """The items of a packed answer (at most ``n``) and why the rest are missing (None: none is).

    A whole JSON array gives its items; text that is not one JSON value but starts an array (an answer cut at
    ``max_tokens``) gives the items complete before the cut."""
    try:
        obj = _decoded(text)
    except AnswerRejected as e:
        items = _leading_items(text, n)
        if items is None:
            return [], e
        return items, AnswerRejected("model_output_not_json", f"the answer ends after {len(items)} complete items")
    if not isinstance(obj, list):
        return [], AnswerRejected("model_output_schema", f"the answer is a {type(obj).__name__}, not an array")
    if len(obj) < n:
        return obj, AnswerRejected("model_output_schema", f"the array has {len(obj)} items, {n} were asked for")
    return obj[:n], None


def _leading_items(text: str, n: int) -> list | None:
    """The complete values at the start of a JSON array cut short (None: ``text`` does not start an array)."""
    decoder = json.JSONDecoder()
    text = text if isinstance(text, str) else ""
    i = len(text) - len(text.lstrip())
    if not text.startswith("[", i):
        return None
    i += 1
    items: list = []
    while len(items) < n:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        try:
            value, i = decoder.raw_decode(text, i)
        except (ValueError, RecursionError):
            break
        items.append(value)
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if not text.startswith(",", i):
            break
        i += 1
    return items


def _validate(obj: Any, schema: Mapping[str, Any]) -> None:
    import jsonschema

    try:
        jsonschema.validate(obj, schema)
    except RecursionError:
        raise AnswerRejected("model_output_schema", "the answer is nested too deeply to validate") from None
    except jsonschema.ValidationError as e:
        where = "/".join(str(p) for p in e.absolute_path) or "(root)"
        raise AnswerRejected("model_output_schema", f"at {where}: {e.message}") from None


def _to_pixels_point(values: Sequence[float], system: str, frame: Frame) -> tuple[float, float]:
    ref = (frame.resized_width, frame.resized_height)
    x, y = point_to_pixels(values, system, frame.width, frame.height, ref)
    if not (0 <= x <= frame.width and 0 <= y <= frame.height):
        size = f"{frame.width}x{frame.height}"
        raise AnswerRejected("coords_out_of_bounds", f"point {list(values)} ({system}) is outside the {size} image")
    return x, y


def _to_pixels_box(values: Sequence[float], system: str, frame: Frame) -> tuple[float, float, float, float]:
    ref = (frame.resized_width, frame.resized_height)
    x0, y0, x1, y1 = box_to_pixels(values, system, frame.width, frame.height, ref)
    if x1 < x0 or y1 < y0:
        raise AnswerRejected("model_output_schema", f"box {list(values)} has its corners in the wrong order")
    if x0 < 0 or y0 < 0 or x1 > frame.width or y1 > frame.height:
        raise AnswerRejected(
            "coords_out_of_bounds", f"box {list(values)} ({system}) is outside the {frame.width}x{frame.height} image"
        )
    return x0, y0, x1, y1


def _localize(system: str) -> Callable:
    def parse(obj: Mapping[str, Any], frame: Frame, fields: Mapping[str, Any]) -> list[Target]:
        native = (obj["x"], obj["y"])
        x, y = _to_pixels_point(native, system, frame)
        return [Target(fields.get("instruction", ""), None, None, (x, y, x, y), (x, y), None, native)]

    return parse


def _parse_propose(obj: Mapping[str, Any], frame: Frame, fields: Mapping[str, Any]) -> list[Target]:
    out = []
    for i, el in enumerate(obj["elements"]):
        native = tuple(el["box"])
        try:
            box = _to_pixels_box(native, "norm_1000", frame)
        except AnswerRejected as e:
            raise AnswerRejected(e.reason, f"element {i}: {e.message}") from None
        point = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        out.append(Target(el["instruction"].strip(), el["text"] or None, el["role"] or None, box, point, native, None))
    return out


_POINT_ACTIONS = ("click_element", "write_element_abs")


def _parse_step(obj: Mapping[str, Any], frame: Frame, fields: Mapping[str, Any]) -> Step:
    action = dict(obj["action"])
    kind = action.pop("action")
    if kind in _POINT_ACTIONS:
        native = (action["x"], action["y"])
        action["x"], action["y"] = _to_pixels_point(native, "norm_1000", frame)
        action["native_point"] = list(native)
    return Step(kind, action, obj.get("thought") or None, obj.get("note") or None)


def _parse_explain(obj: Mapping[str, Any], frame: Frame, fields: Mapping[str, Any]) -> Explanation:
    instruction = " ".join(obj["instruction"].split())
    if not instruction:
        raise AnswerRejected("model_output_schema", "the instruction is blank")
    return Explanation(" ".join(obj["thought"].split()), instruction)


def _parse_task(obj: Mapping[str, Any], frame: Frame, fields: Mapping[str, Any]) -> SynthesizedTask:
    task = " ".join(obj["task"].split())
    if not task:
        raise AnswerRejected("model_output_schema", "the task is blank")
    return SynthesizedTask(task)


def _obj(properties: dict, required: Sequence[str] | None = None) -> dict:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties if required is None else required),
        "additionalProperties": False,
    }


def _action(name: str, **props) -> dict:
    return _obj({"action": {"const": name}, **props})


_ACTION_SCHEMA = {
    "anyOf": [
        _action("click_element", element={"type": "string"}, x=_NORM, y=_NORM),
        _action("write_element_abs", content={"type": "string"}, element={"type": "string"}, x=_NORM, y=_NORM),
        _action("scroll", direction={"enum": ["up", "down", "left", "right"]}),
        _action("go_back"),
        _action("refresh"),
        _action("goto", url={"type": "string", "minLength": 1}),
        _action("wait", seconds={"type": "integer", "minimum": 0, "maximum": 60}),
        _action("restart"),
        _action("answer", content={"type": "string"}),
    ]
}

ACTION_TYPES = tuple(a["properties"]["action"]["const"] for a in _ACTION_SCHEMA["anyOf"])


def _registry() -> dict[str, Recipe]:
    from screenmill.annotators import recipes_describe  # imports nothing of this module at import time

    recipes = [
        Recipe(
            name="holo2-localize",
            version="1",
            kind="localize",
            coord_system="norm_1000",
            template=LOCALIZE_PROMPT,
            answer_schema=_obj({"x": _NORM, "y": _NORM}),
            max_images=1,
            max_tokens=32,
            parse=_localize("norm_1000"),
        ),
        Recipe(
            name="holo15-localize",
            version="1",
            kind="localize",
            coord_system="pixel_resized",
            template=LOCALIZE_PROMPT,
            answer_schema=_obj(
                {
                    "action": {"const": "click_absolute"},
                    "x": {"type": "integer", "minimum": 0},
                    "y": {"type": "integer", "minimum": 0},
                }
            ),
            max_images=1,
            max_tokens=48,
            parse=_localize("pixel_resized"),
        ),
        Recipe(
            name="navigate-step",
            version="1",
            kind="step",
            coord_system="norm_1000",
            template=NAVIGATE_PROMPT,
            answer_schema=_obj(
                {
                    "note": {"type": "string", "maxLength": 400},
                    "thought": {"type": "string", "maxLength": 800},
                    "action": _ACTION_SCHEMA,
                }
            ),
            max_images=4,
            max_tokens=256,
            parse=_parse_step,
            defaults={"history": "none"},
        ),
        Recipe(
            name="explain-step",
            version="1",
            kind="explain",
            coord_system="pixel",
            template=EXPLAIN_PROMPT,
            answer_schema=_obj(
                {
                    "thought": {"type": "string", "maxLength": 600},
                    "instruction": {"type": "string", "minLength": 1, "maxLength": 200},
                }
            ),
            max_images=4,
            max_tokens=256,
            parse=_parse_explain,
            defaults={"history": "none", "task": "none stated (exploration)"},
        ),
        Recipe(
            name="synthesize-task",
            version="1",
            kind="task",
            coord_system="pixel",
            template=SYNTHESIZE_PROMPT,
            answer_schema=_obj({"task": {"type": "string", "minLength": 1, "maxLength": 300}}),
            max_images=MAX_TASK_FRAMES,
            max_tokens=128,
            parse=_parse_task,
            defaults={"actions": "none"},
        ),
        Recipe(
            name="propose-elements",
            version="1",
            kind="propose",
            coord_system="norm_1000",
            template=PROPOSE_PROMPT,
            answer_schema=_obj(
                {
                    "elements": {
                        "type": "array",
                        "maxItems": 32,
                        "items": _obj(
                            {
                                "instruction": {"type": "string", "minLength": 1, "maxLength": 200},
                                "text": {"type": "string", "maxLength": 200},
                                "role": {"type": "string", "maxLength": 40},
                                "box": {"type": "array", "items": _NORM, "minItems": 4, "maxItems": 4},
                            }
                        ),
                    }
                }
            ),
            max_images=1,
            max_tokens=1024,
            parse=_parse_propose,
            defaults={"max_elements": 20},
        ),
        Recipe(**recipes_describe.RECIPE_FIELDS),
    ]
    return {r.name: r for r in recipes}


RECIPES: dict[str, Recipe] = _registry()


def get_recipe(name: str, **overrides: Any) -> Recipe:
    """A registered recipe, optionally with fields replaced (``template``, ``max_tokens``, ``version`` …).

    Raises:
        KeyError: ``name`` is not registered (the message lists the registered names).
    """
    try:
        recipe = RECIPES[name]
    except KeyError:
        raise KeyError(f"unknown recipe {name!r}; registered: {', '.join(sorted(RECIPES))}") from None
    return dataclasses.replace(recipe, **overrides) if overrides else recipe
