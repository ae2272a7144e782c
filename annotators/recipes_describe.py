"""The functional recipe ``describe-element`` (issue 49): an element's purpose as a referring expression.

Given a screenshot and one element's box (original-image pixels, from existing grounding labels such as the DOM
producer's, an ``--instructions``-style JSONL of ``{"image", "box": [x0, y0, x1, y1]}``), the model sees the whole
screen and a crop of the element with context around it (the element outlined, :func:`crop_region`,
:func:`outlined_crop`), and answers ``{"description"}``: what the element does, as a user would ask for it
("open the settings", "submit the sign-up form"). The answer becomes a grounding label of recipe
``describe-element``: its box is the element's, its point the box's centre, its instruction the description
(whitespace collapsed, unprintable and Private Use Area code points removed, at most
:data:`screenmill.annotators.wording.MAX_INSTRUCTION_NAME` characters: the schema's ``maxLength`` caps the
structured output, :func:`parse_description` checks it again).

The recipe itself is registered in :data:`screenmill.annotators.recipes.RECIPES` from :data:`RECIPE_FIELDS` (this
module imports nothing of :mod:`screenmill.annotators.recipes` at import time, so the registry can import it).

Errors: an answer that is not JSON or not the schema is ``model_output_not_json`` / ``model_output_schema`` (as for
every recipe); a description left blank or without a letter or digit once cleaned is ``model_output_schema``. An
element line whose box does not parse is a bad ``--instructions`` line (:func:`parse_element_line`); a box outside
its screenshot is dead-lettered ``element_outside_image`` by the work-unit stage.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from screenmill.annotators.outputs import AnswerRejected
from screenmill.annotators.wording import MAX_INSTRUCTION_NAME, printable

NAME = "describe-element"
KIND = "describe"
#: The prompt fields of a describe unit: the element's box in original pixels (``x0,y0,x1,y1``, integers), and the
#: same box in 0–1000 of the screen for the prompt.
BOX_FIELD = "box"
BOX_1000_FIELD = "box_1000"
#: Context around the element in its crop: this share of the element's larger side on every side, at least
#: :data:`MIN_CONTEXT_PX` pixels.
CONTEXT_SHARE = 1.0
MIN_CONTEXT_PX = 48
#: The outline drawn around the element in its crop (RGB, pixels wide).
OUTLINE_RGB = (255, 0, 0)
OUTLINE_PX = 2

DESCRIBE_PROMPT = (
    "The first image is a GUI screen. The second image is a part of it around one element, which is outlined in "
    "red; on the screen the element's box is {box_1000} (x0, y0, x1, y1 as integers from 0 to 1000 across the "
    "screen's width and height). Say what this element does, as the instruction a user would give to use it, "
    "naming it by its purpose rather than by its text (for example: open the settings, submit the sign-up form, "
    "go to the next page). You must output a valid JSON following the format: {schema}"
)

ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"description": {"type": "string", "minLength": 1, "maxLength": MAX_INSTRUCTION_NAME}},
    "required": ["description"],
    "additionalProperties": False,
}


@dataclasses.dataclass(frozen=True, slots=True)
class Description:
    """An element's purpose as an instruction (cleaned, at most :data:`MAX_INSTRUCTION_NAME` characters)."""

    instruction: str


def clean_description(text: str) -> str:
    """``text`` made :func:`screenmill.annotators.wording.printable` (no icon-font glyphs, whitespace collapsed),
    its closing full stops dropped (``"Open the  settings."`` → ``"Open the settings"``)."""
    return printable(text).rstrip(".").rstrip()


def parse_description(obj: Mapping[str, Any], frame: Any, fields: Mapping[str, Any]) -> Description:
    """The recipe's ``parse``: a schema-valid answer → :class:`Description`.

    Raises:
        AnswerRejected: ``model_output_schema`` when the cleaned description is blank, has no letter or digit, or is
            longer than :data:`MAX_INSTRUCTION_NAME` characters.
    """
    text = clean_description(obj["description"])
    if not any(map(str.isalnum, text)):
        raise AnswerRejected("model_output_schema", f"the description {obj['description'][:80]!r} names nothing")
    if len(text) > MAX_INSTRUCTION_NAME:
        raise AnswerRejected("model_output_schema", f"the description has {len(text)} > {MAX_INSTRUCTION_NAME} chars")
    return Description(text)


#: The keyword arguments of the registered :class:`screenmill.annotators.recipes.Recipe`.
RECIPE_FIELDS: dict[str, Any] = {
    "name": NAME,
    "version": "1",
    "kind": KIND,
    "coord_system": "pixel",
    "template": DESCRIBE_PROMPT,
    "answer_schema": ANSWER_SCHEMA,
    "max_images": 2,
    "max_tokens": 96,
    "parse": parse_description,
}


def parse_element_line(line: str, path: str) -> tuple[str, str]:
    """One element line → (image file name or content id, box text ``x0,y0,x1,y1`` in integer pixels).

    Args:
        line: ``{"image" (or "img_filename"): ..., "box": [x0, y0, x1, y1]}``, original-image pixels (what a
            ``grounding`` row's ``screenshot_id`` and ``x0``..``y1`` give).
        path: the file, for the message.

    Raises:
        ValueError: the line is not such an object, or the box is not four finite numbers with x0 < x1, y0 < y1.
    """
    try:
        obj = json.loads(line)
        image = obj.get("image") or obj.get("img_filename")
        box = obj["box"]
        if not isinstance(image, str) or not image:
            raise ValueError("needs a non-empty 'image' (or 'img_filename')")
        if not isinstance(box, list) or len(box) != 4 or not all(_number(v) for v in box):
            raise ValueError("'box' must be [x0, y0, x1, y1], four numbers (pixels)")
        x0, y0, x1, y1 = (round(v) for v in box)
        if not (x0 < x1 and y0 < y1):
            raise ValueError("'box' must have x0 < x1 and y0 < y1")
    except (ValueError, KeyError, AttributeError, TypeError, OverflowError) as e:
        raise ValueError(f"{path}: bad element line {line[:200]!r}: {e}") from None
    return image.replace("\\", "/").rsplit("/", 1)[-1], f"{x0},{y0},{x1},{y1}"


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) < 1e9


def box_of(fields: Mapping[str, str]) -> tuple[int, int, int, int]:
    """The element box of a describe unit's fields (:data:`BOX_FIELD`)."""
    x0, y0, x1, y1 = (int(v) for v in fields[BOX_FIELD].split(","))
    return x0, y0, x1, y1


def inside(box: Sequence[int], width: int, height: int) -> bool:
    """Whether ``box`` lies within a ``width`` x ``height`` image."""
    x0, y0, x1, y1 = box
    return 0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height


def prompt_fields(box: Sequence[int], width: int, height: int) -> tuple[tuple[str, str], ...]:
    """A describe unit's prompt fields: the box in pixels and in 0–1000 of the screen."""
    x0, y0, x1, y1 = box
    norm = [round(x0 * 1000 / width), round(y0 * 1000 / height), round(x1 * 1000 / width), round(y1 * 1000 / height)]
    return (BOX_FIELD, f"{x0},{y0},{x1},{y1}"), (BOX_1000_FIELD, json.dumps(norm))


def crop_region(box: Sequence[int], width: int, height: int) -> tuple[int, int, int, int]:
    """The part of the screen the crop shows: ``box`` grown by :data:`CONTEXT_SHARE` of its larger side (at least
    :data:`MIN_CONTEXT_PX`) on every side, clipped to the image."""
    x0, y0, x1, y1 = box
    pad = max(MIN_CONTEXT_PX, round(CONTEXT_SHARE * max(x1 - x0, y1 - y0)))
    return max(0, x0 - pad), max(0, y0 - pad), min(width, x1 + pad), min(height, y1 + pad)


def crop_id(screenshot_id: str, box: Sequence[int]) -> str:
    """The multimodal id of an element's crop (the same element on the same pixels: the same crop)."""
    return f"{screenshot_id}#crop={','.join(map(str, box))}"


def outlined_crop(image, box: Sequence[int]):
    """The crop of ``image`` (Pillow, original pixels) around ``box`` with the element outlined (a new image)."""
    from PIL import ImageDraw

    region = crop_region(box, image.width, image.height)
    crop = image.crop(region).convert("RGB")
    x0, y0, x1, y1 = box
    left, top = region[0], region[1]
    ImageDraw.Draw(crop).rectangle(
        (x0 - left, y0 - top, x1 - left - 1, y1 - top - 1), outline=OUTLINE_RGB, width=OUTLINE_PX
    )
    return crop


def element_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The element lines of existing grounding labels (rows of a ``grounding`` table, e.g. a DOM run's): one
    ``{"image": <screenshot_id>, "box": [x0, y0, x1, y1]}`` per distinct element box (several labels of one element
    give one line), boxes rounded to whole pixels, in order; point-only labels (a box of no size) give none."""
    seen: dict[tuple, None] = {}
    for r in rows:
        box = tuple(round(r[k]) for k in ("x0", "y0", "x1", "y1"))
        if box[0] < box[2] and box[1] < box[3]:
            seen.setdefault((r["screenshot_id"], *box), None)
    return [json.dumps({"image": sid, "box": list(box)}) for sid, *box in sorted(seen)]
