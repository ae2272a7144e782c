"""DOM elements of one rendered screenshot → grounding labels (``annotator='dom'``), several referring expressions.

Recipes (each a row with its recipe name, :data:`screenmill.annotators.wording.DOM_RECIPES`; an element gets every one
that applies; the wording is :mod:`screenmill.annotators.wording`'s):

* ``dom-text``: by visible text, ``click "Sign in"``;
* ``dom-name``: by accessible name where it differs from the visible text (icon-only buttons, images),
  ``click "Search"``;
* ``dom-role``: by role + name, ``click the "Pricing" link``;
* ``dom-field``: form fields by label or placeholder, ``click the "Email" field``,
  ``click the field with placeholder "you@example.com"``;
* ``dom-position``: where a role + name repeats on the screenshot, its place in reading order (top to bottom, then left
  to right: :func:`screenmill.annotators.wording.reading_order` by rows of
  :attr:`screenmill.annotators.wording.Rows.BANDS`), ``click the second "Edit" button``; where the visible text of a
  text or of a control no role noun names repeats, its place among every element showing it, ``click the second
  "History"``;
* ``dom-name-position``: the same for an element that shows no text of its own, named by its accessible name only
  (two "Up" arrow images in links: ``click the second "Up" link``), so a reader of the labels can tell it from
  painted text (``screenmill.annotators.evaluate.truth.truth_from_labels`` leaves it out of OCR's recall).

No ambiguous instruction: an instruction that would name two different elements of the screenshot is given to none
of them (the positional one stands in where it applies), and an instruction is compared case-insensitively.
Coordinates are screenshot pixels (CSS px × device scale factor), boxes clamped to the image; confidence 1.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Iterable

from screenmill.annotators import relations
from screenmill.annotators.dom.extract import EXTRACT_VERSION
from screenmill.annotators.wording import (
    DOM_FIELD,
    DOM_NAME,
    DOM_NAME_POSITION,
    DOM_POSITION,
    DOM_RECIPES,
    DOM_ROLE,
    DOM_TEXT,
    ORDINALS,
    ROLE_NOUNS,
    Rows,
    click,
    nameable,
    placeholder_instruction,
    reading_order,
)
from screenmill.schemas.labels import LabelBuilder, LabelProvenance
from screenmill.schemas.records import GroundingLabel, Screenshot

NAME = "dom"
VERSION = "1"
#: Each recipe's version: the recipe's own rules (2: visible text wins over a name nobody sees, positions for a
#: repeated text without a role noun; 3: no label for an element the screenshot does not show, see
#: :func:`dom_labels`; 4: the position of an element that shows no text is ``dom-name-position``; 5: a control no
#: role noun names whose text repeats, a ``<summary>``'s "History", is named by its place as a text is, where it had
#: no label at all) and the extraction rules it stands on.
RECIPE_VERSIONS = {r: f"5+x{EXTRACT_VERSION}" for r in DOM_RECIPES}
#: Each recipe's version of :mod:`screenmill.annotators.relations` here: its rules' and the extraction's.
RELATION_VERSIONS = {r: f"{relations.RELATIONS_VERSION}+x{EXTRACT_VERSION}" for r in relations.RECIPES}
#: Every recipe this producer can write, in the order an element's labels are written: the text recipes, then
#: :mod:`screenmill.annotators.relations`' (chosen with ``recipes``).
ALL_RECIPE_VERSIONS = {**RECIPE_VERSIONS, **RELATION_VERSIONS}
_ORDER = [*DOM_RECIPES, *relations.RECIPES]

FIELD_TYPES = frozenset(
    {"text", "email", "search", "url", "tel", "number", "password", "date", "time", "datetime-local", "month"}
    | {"week", "textarea", "select"}
)


@dataclasses.dataclass(frozen=True, slots=True)
class _Candidate:
    recipe: str
    instruction: str
    element_text: str
    element: int


def _candidates(i: int, el: dict) -> Iterable[_Candidate]:
    text, name, role = el.get("text"), el.get("name"), el.get("role") or ""
    noun = ROLE_NOUNS.get(role)
    if nameable(text):
        yield _Candidate(DOM_TEXT, click(text), text, i)
    if nameable(name) and name != text and el["kind"] != "text":
        yield _Candidate(DOM_NAME, click(name), name, i)
    if nameable(name) and noun:
        yield _Candidate(DOM_ROLE, click(name, noun), name, i)
    if el.get("input_type") in FIELD_TYPES:
        if nameable(el.get("label")):
            yield _Candidate(DOM_FIELD, click(el["label"], "field"), el["label"], i)
        if nameable(el.get("placeholder")):
            ph = el["placeholder"]
            yield _Candidate(DOM_FIELD, placeholder_instruction(ph), ph, i)


def _ranked(elements: list[dict], members: list[int]) -> list[int]:
    """``members`` (indices into ``elements``) in reading order of their boxes (CSS px: :attr:`Rows.BANDS`)."""
    return [members[k] for k in reading_order([elements[i]["box"] for i in members], Rows.BANDS)]


def _positional(elements: list[dict]) -> list[_Candidate]:
    """``click the second "Edit" button`` for every role + name that repeats, in reading order; ``click the second
    "Paid"`` for a text or a control without a role noun (a table cell, a line, a ``<summary>``: "History") whose
    visible text repeats, ranked among every element showing that text (the OCR producer's wording: a reader counts
    what is painted, whatever its role)."""
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, el in enumerate(elements):
        name, noun = el.get("name") or el.get("text"), ROLE_NOUNS.get(el.get("role") or "")
        if noun and nameable(name):
            groups[(noun, name.casefold())].append(i)
    out = []
    for (noun, _), members in groups.items():
        if len(members) < 2 or len(members) > len(ORDINALS):
            continue
        for rank, i in enumerate(_ranked(elements, members)):
            name = elements[i].get("name") or elements[i]["text"]
            recipe = DOM_POSITION if nameable(elements[i].get("text")) else DOM_NAME_POSITION
            out.append(_Candidate(recipe, click(name, noun, rank), name, i))
    shown: dict[str, list[int]] = defaultdict(list)
    for i, el in enumerate(elements):
        if nameable(el.get("text")):
            shown[el["text"].casefold()].append(i)
    for members in shown.values():
        if len(members) < 2 or len(members) > len(ORDINALS):
            continue
        for rank, i in enumerate(_ranked(elements, members)):
            el = elements[i]
            if not ROLE_NOUNS.get(el.get("role") or ""):  # a text, or a control no role noun names (a <summary>)
                out.append(_Candidate(DOM_POSITION, click(el["text"], rank=rank), el["text"], i))
    return out


def choose_instructions(elements: list[dict], recipes: frozenset[str] = frozenset(DOM_RECIPES)) -> list[_Candidate]:
    """Every unambiguous referring expression of ``elements`` (one screenshot) of ``recipes`` (default: the text
    recipes, :data:`DOM_RECIPES`; others: :mod:`screenmill.annotators.relations`), in element order then recipe
    order.

    An instruction two elements would share is dropped for both, except that visible text wins over a name nobody
    sees: when one element shows the text (``dom-text``) and the others only have it as their accessible name (a
    check box named by the label beside it), the one showing it keeps it. The positional recipe only speaks where a
    role + name or a text without a role noun repeats, and is itself dropped if it still collides (a repeat beyond
    the tenth, or a text of the same words). An element marked ``disabled`` (shown, but nothing to act on: a
    desktop app's greyed button) is never labelled, yet counts like any other: an instruction it would share is no
    one's ("the large button" beside a greyed one of its size).
    """
    cands = [c for i, el in enumerate(elements) for c in _candidates(i, el)] + _positional(elements)
    if recipes - set(DOM_RECIPES):
        cands += [_Candidate(*c) for c in relations.candidates(elements, recipes, FIELD_TYPES)]
    owners: dict[str, set[int]] = defaultdict(set)
    showing: dict[str, set[int]] = defaultdict(set)
    for c in cands:
        owners[c.instruction.casefold()].add(c.element)
        if c.recipe == DOM_TEXT:
            showing[c.instruction.casefold()].add(c.element)
    seen: set[str] = set()
    kept = []
    for c in sorted(cands, key=lambda c: (c.element, _ORDER.index(c.recipe))):
        key = c.instruction.casefold()
        unique = len(owners[key]) == 1 or (c.recipe == DOM_TEXT and showing[key] == {c.element})
        if unique and key not in seen:
            seen.add(key)
            if c.recipe in recipes and not elements[c.element].get("disabled"):
                kept.append(c)
    return kept


def dom_labels(
    shot: Screenshot,
    elements: list[dict],
    viewport: tuple[int, int],
    scale: float,
    config_hash: str,
    run_id: str,
    recipes: frozenset[str] = frozenset(DOM_RECIPES),
) -> list[GroundingLabel]:
    """The DOM labels of one rendered screenshot: :func:`element_labels` with the DOM's provenance.

    Args:
        shot: the screenshot (its id and size are stamped on every label).
        elements: what :mod:`screenmill.annotators.dom.extract` read at that screen (CSS px of the viewport).
        viewport: the viewport's CSS size: the frame of the native numbers (``coord_system='pixel_resized'``).
        scale: device pixels per CSS px (the screenshot's pixels).
        config_hash / run_id: provenance.
        recipes: which recipes to write (default: the text recipes; see :func:`choose_instructions`).
    """
    return element_labels(
        shot,
        elements,
        viewport,
        scale,
        lambda r: LabelProvenance(NAME, VERSION, r, ALL_RECIPE_VERSIONS[r], config_hash, run_id),
        recipes,
    )


def element_labels(
    shot: Screenshot,
    elements: list[dict],
    viewport: tuple[int, int],
    scale: float,
    provenance: Callable[[str], LabelProvenance],
    recipes: frozenset[str] = frozenset(DOM_RECIPES),
) -> list[GroundingLabel]:
    """The labels of one screenshot's elements (the DOM's, or any producer's elements of the same shape: ``box`` and
    ``point`` in px of ``viewport``, ``text``, ``name``, ``role``, ``kind``, the field keys), worded by
    :func:`choose_instructions`.

    Args:
        shot: the screenshot (its id and size are stamped on every label).
        elements: the elements (px of ``viewport``).
        viewport: the elements' frame: the frame of the native numbers (``coord_system='pixel_resized'``).
        scale: screenshot pixels per px of ``viewport``.
        provenance: a recipe name (:data:`DOM_RECIPES`, or a relation recipe) → the provenance its labels carry.
        recipes: which recipes to write (default: the text recipes; see :func:`choose_instructions`).

    Returns:
        Labels in element order, then recipe order; boxes and points in screenshot pixels, clamped to the image.
        An element whose box, clamped to the image, is less than one CSS px high or wide gets no label: the
        screenshot does not show it (the extraction's viewport can reach past the screenshot's last row, e.g. a
        mobile page's layout viewport; such boxes became zero-height truth at the image's edge), and it does not
        count among the elements a repeated text's position is told from.
    """
    w, h = shot.width, shot.height

    def shown(box: list[float]) -> tuple[float, float, float, float]:
        x0, y0, x1, y1 = box
        return (
            min(max(x0 * scale, 0.0), w),
            min(max(y0 * scale, 0.0), h),
            min(max(x1 * scale, 0.0), w),
            min(max(y1 * scale, 0.0), h),
        )

    kept = [(e, b) for e in elements if (b := shown(e["box"]))[2] - b[0] >= scale and b[3] - b[1] >= scale]
    elements, boxes = [e for e, _ in kept], [b for _, b in kept]
    builders = {r: LabelBuilder(shot, provenance(r), "pixel_resized", viewport) for r in recipes}
    labels = []
    for c in choose_instructions(elements, recipes):
        el = elements[c.element]
        x0, y0, x1, y1 = boxes[c.element]
        px = min(max(el["point"][0] * scale, x0), x1, w - 0.5)  # a pixel of the image, never its far edge
        py = min(max(el["point"][1] * scale, y0), y1, h - 0.5)
        labels.append(
            builders[c.recipe].add(
                c.instruction,
                (x0, y0, x1, y1),
                (px, py),
                element_text=c.element_text,
                role=el.get("role"),
                native_box=el["box"],
                native_point=el["point"],
                confidence=1.0,
            )
        )
    return labels
