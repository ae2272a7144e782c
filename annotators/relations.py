"""Referring expressions beyond the text: the elements of one screenshot → instructions by place, look and icon.

One code path for every producer of elements (the DOM's and the accessibility tree's): an element is a dict with
``box`` (``x0, y0, x1, y1`` in px of its frame), ``kind`` (``control`` / ``text`` / ``icon``), ``role`` (the ARIA
vocabulary of :data:`screenmill.annotators.wording.ROLE_NOUNS`), ``name``, ``text``, the field keys
(``input_type``, ``label``, ``placeholder``) and a ``rel`` block, the common record of what the recipes read:

* ``region``: ``{kind, id}``, the landmark-like container it lies in (a key of
  :data:`screenmill.annotators.wording.REGION_NOUNS`: ``top`` / ``side`` / ``dialog`` from the DOM's landmarks;
  ``menubar`` / ``toolbar`` / ``statusbar`` / ``dialog`` from an app's accessibles), or None;
* ``row``: ``{id, text}``, its table row (or list / tree item) and that row's text, or None;
* ``fg`` / ``bg`` / ``under``: colours ``[r, g, b, a]`` of its text, its own background and what is behind it
  (computed styles for the DOM, the screenshot's pixels for an app); ``bg_image`` (a CSS gradient or image, the DOM
  only) and ``colours`` (other colours it shows, each of them a name it could be called by; an app's pixels);
* ``up``: ids (any hashable) of it, its parent and its grandparent (what it is grouped with);
* ``icon`` (optional): whether it is an icon, where the producer knows better than :func:`is_icon`'s rule;
* ``zoom``: px of the box per px of the distances here (a zoomed-out mobile page's; 1 elsewhere).

The recipes (DOM names here; phrasings in :mod:`screenmill.annotators.wording`, chosen with ``--dom-recipes`` and
``--a11y-recipes``; the accessibility producer writes them as ``a11y-row``, ...):

* ``dom-row`` (relational): ``click the "Edit" button in the row of "Alice Smith"``: a control of a table row named
  by a cell's text (or another cell's name: a table of cells only) that no other row on the screenshot holds, where
  no other control of that row has its role and name;
* ``dom-below`` (relational): ``click the field below "Email"``: a form field under a text (at most
  :data:`BELOW_GAP` CSS px above it, overlapping it across, nothing between them) that no other element shows or is
  named, where the field is the one nearest under it and no other field sits beside it;
* ``dom-left-of`` (relational): ``click the icon to the left of "Settings"``: an icon (:func:`is_icon`) just left of
  a text (at most :data:`LEFT_GAP` CSS px, on its line, nothing between them, the two of one group: a parent or
  grandparent in common) that no other element shows or is named;
* ``dom-landmark`` (relational): ``click the "Search" button in the top bar`` (``side bar``, ``dialog``): a control
  in the only region of that kind on the screenshot (the extraction's ``rel.region``: by landmark role and
  geometry), the only one there of its role and name;
* ``dom-colour`` (visual): ``click the green button`` / ``click the red link``: a button by its own background (that
  stands out from what is behind it), a link by its text colour, named from :data:`PALETTE` only where the colour is
  clearly of that name (:data:`HUE_MARGIN` degrees from another) and no other element of the role could be called
  so (every name near its colours; a gradient any of its colours', a background image any name);
* ``dom-size`` (visual): ``click the large button``: a button whose box has at least :data:`LARGE_RATIO` times the
  area of every other button's;
* ``dom-icon`` (icon): ``click the search icon``: an icon whose accessible name is one or two words, where no other
  element shows or is named those words.

Every instruction here is unique on its screenshot by construction (an expression that might fit two elements is
not made), elements of child frames are left out (their geometry is their frame's), and ``labels.choose_instructions``
drops any that still collides with another element's instruction. The DOM's elements are
:mod:`screenmill.annotators.dom.extract`'s (CSS px), an app's :mod:`screenmill.annotators.desktop.a11y`'s (logical
px).
"""

from __future__ import annotations

import colorsys
import re
from collections import Counter, defaultdict
from collections.abc import Iterator

from screenmill.annotators import wording
from screenmill.annotators.wording import DOM_RECIPE_FAMILIES, ROLE_NOUNS, nameable

#: The rules' own version (part of each recipe's version, with the version of the producer's extraction).
RELATIONS_VERSION = "1"
#: The recipes here (DOM names), in the order an element's labels are written.
RECIPES = tuple(r for f, rs in DOM_RECIPE_FAMILIES.items() if f != "text" for r in rs)
#: The most CSS px between a label's bottom and the field below it.
BELOW_GAP = 40
#: The most CSS px between an icon's right edge and the text right of it.
LEFT_GAP = 24
#: An icon's largest side (CSS px).
ICON_MAX_SIDE = 64
#: How many times the area of every other button the large one has.
LARGE_RATIO = 2.0
#: Colour names by hue (degrees, HSL): each name from its start to the next start.
PALETTE = (
    (0, "red"),
    (15, "orange"),
    (42, "yellow"),
    (70, "green"),
    (165, "teal"),
    (195, "blue"),
    (260, "purple"),
    (295, "pink"),
    (340, "red"),
)
#: A hue this close (degrees) to another name's bin could be called either.
HUE_MARGIN = 8
#: Saturation and lightness (HSL, 0-1) a chromatic colour's name needs; darker or greyer is no name but black / none.
MIN_SATURATION, MIN_LIGHTNESS, MAX_LIGHTNESS = 0.35, 0.25, 0.85
#: Lightness below which a colour is black.
BLACK_LIGHTNESS = 0.12
_RGB = re.compile(r"rgba?\(([\d.]+,\s*[\d.]+,\s*[\d.]+)")
_WORDS = re.compile(r"^[A-Za-z]+(?: [A-Za-z]+)?$")


def candidates(
    elements: list[dict], recipes: frozenset[str], field_types: frozenset[str]
) -> Iterator[tuple[str, str, str, int]]:
    """The instructions of ``recipes`` (among :data:`RECIPES`) that name exactly one of ``elements`` (one
    screenshot, px of its frame; the module docstring says their shape); ``field_types``: the ``input_type`` s of
    the form fields ``dom-below`` names (``labels.FIELD_TYPES``).

    Yields:
        ``(recipe, instruction, element_text, element index)``; ``element_text`` is the element's own name where it
        has one (a field's name, label or placeholder; an icon's name), else the text the instruction quotes.
    """
    usable = [i for i, el in enumerate(elements) if not el.get("frame") and el.get("rel")]
    said = _said(elements)
    fields = [i for i in usable if elements[i].get("input_type") in field_types]
    makers = (
        (wording.DOM_ROW, _rows),
        (wording.DOM_BELOW, _below),
        (wording.DOM_LEFT_OF, _left_of),
        (wording.DOM_LANDMARK, _landmarks),
        (wording.DOM_COLOUR, _colours),
        (wording.DOM_SIZE, _sizes),
        (wording.DOM_ICON, _icons),
    )
    for recipe, make in makers:
        if recipe in recipes:
            for instruction, text, i in make(elements, usable, said, fields):
                yield recipe, instruction, text, i


def _zoom(el: dict) -> float:
    """The page's zoom: boxes are CSS px times it (below 1 in a zoomed-out mobile page), so are the distances here."""
    return float(el["rel"].get("zoom") or 1.0)


def is_icon(el: dict) -> bool:
    """An icon: at most :data:`ICON_MAX_SIDE` CSS px a side, and what ``rel.icon`` says where the producer says
    (an app's tree), else a named image outside controls or a control that shows no text, no form field."""
    x0, y0, x1, y1 = el["box"]
    if max(x1 - x0, y1 - y0) > ICON_MAX_SIDE * _zoom(el):
        return False
    known = el["rel"].get("icon")
    if known is not None:  # the producer knows (an app's tree: a picture, or a control holding one)
        return bool(known)
    if el["kind"] == "icon":
        return True
    return el["kind"] == "control" and not nameable(el.get("text")) and el.get("input_type") is None


def colour_names(rgba: list[float] | None) -> tuple[str | None, set[str]]:
    """The palette name of a colour and every name it could be given.

    Returns:
        ``(name, possible)``: ``name`` is None where no name is clear (greys, whites, a hue near a bin's edge, a
        translucent colour); ``possible`` holds every name a person might give it (empty for greys and whites).
    """
    if not rgba or rgba[3] < 0.9:
        return None, set()
    h, lightness, s = colorsys.rgb_to_hls(*(c / 255 for c in rgba[:3]))
    if lightness < BLACK_LIGHTNESS:
        return "black", {"black"}
    if lightness < BLACK_LIGHTNESS * 2:
        return None, {"black"} | _hue_names(h * 360)
    if s < MIN_SATURATION * 0.6 or lightness > 0.95:
        return None, set()
    possible = _hue_names(h * 360)
    clear = s >= MIN_SATURATION and MIN_LIGHTNESS <= lightness <= MAX_LIGHTNESS and len(possible) == 1
    return (next(iter(possible)) if clear else None), possible


def _hue_names(hue: float) -> set[str]:
    return {_hue_name(hue - HUE_MARGIN), _hue_name(hue), _hue_name(hue + HUE_MARGIN)}


def _hue_name(hue: float) -> str:
    hue %= 360
    return [name for start, name in PALETTE if hue >= start][-1]


def _said(elements: list[dict]) -> Counter:
    """How many elements show or are named each text (case-folded): an anchor must be said by one only."""
    said: Counter = Counter()
    for el in elements:
        for s in {(el.get("text") or "").casefold(), (el.get("name") or "").casefold()} - {""}:
            said[s] += 1
    return said


def _is_text(el: dict) -> bool:
    """A text that anchors an expression: a whole text element (no line of a longer one) an instruction can quote."""
    return el["kind"] == "text" and el.get("role") != "line" and nameable(el.get("text"))


def _noun(el: dict) -> str | None:
    return ROLE_NOUNS.get(el.get("role") or "")


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return min(a1, b1) - max(a0, b0)


def _rows(elements, usable, said, _fields):
    rows: dict[int, list[int]] = defaultdict(list)
    row_text: dict[int, str] = {}
    for i in usable:
        row = elements[i]["rel"].get("row")
        if row:
            rows[row["id"]].append(i)
            row_text[row["id"]] = row["text"].casefold()
    for members in rows.values():
        named = Counter((_noun(elements[i]), (elements[i].get("name") or "").casefold()) for i in members)
        cells = [elements[i]["text"] for i in members if _is_text(elements[i])]
        cells += [
            elements[i]["name"]
            for i in members
            if elements[i].get("role") == "gridcell" and not _is_text(elements[i]) and nameable(elements[i]["name"])
        ]
        for i in members:
            el = elements[i]
            noun, name = _noun(el), el.get("name")
            if el["kind"] != "control" or not noun or not nameable(name) or named[(noun, name.casefold())] != 1:
                continue
            for cell in cells:
                key = cell.casefold()
                if key != name.casefold() and sum(key in t for t in row_text.values()) == 1:
                    yield wording.in_row(name, noun, cell), name, i
                    break


def _below(elements, usable, said, fields):
    texts = [i for i in usable if _is_text(elements[i])]
    for i in fields:
        fx0, fy0, fx1, fy1 = elements[i]["box"]
        above = [
            t
            for t in texts
            if 0 <= fy0 - elements[t]["box"][3] <= BELOW_GAP * _zoom(elements[i])
            and _overlap(fx0, fx1, *elements[t]["box"][0::2]) > 0
        ]
        if not above:
            continue
        t = max(above, key=lambda t: elements[t]["box"][3])
        ax0, _, ax1, ay1 = elements[t]["box"]
        text = elements[t]["text"]
        own = {(elements[i].get("name") or "").casefold(), (elements[i].get("label") or "").casefold()}
        if said[text.casefold()] - (text.casefold() in own) != 1:
            continue  # another element shows or is named it
        between = [
            j
            for j in usable
            if j not in (i, t)
            and elements[j]["box"][1] < fy0
            and elements[j]["box"][3] > ay1
            and _overlap(fx0, fx1, elements[j]["box"][0], elements[j]["box"][2]) > 0
        ]
        under = sorted(
            (elements[f]["box"][1], f)
            for f in fields
            if elements[f]["box"][1] >= ay1 - 1 and _overlap(ax0, ax1, *elements[f]["box"][0::2]) > 0
        )
        beside = [f for f in fields if f != i and _overlap(fy0, fy1, elements[f]["box"][1], elements[f]["box"][3]) > 0]
        if between or beside or under[0][1] != i or (len(under) > 1 and under[1][0] < fy1):
            continue
        field = elements[i]
        yield wording.below(text), field.get("name") or field.get("label") or field.get("placeholder") or text, i


def _left_of(elements, usable, said, _fields):
    for i in usable:
        el = elements[i]
        if not is_icon(el):
            continue
        x0, y0, x1, y1 = el["box"]
        right = []
        for t in usable:
            tx0, ty0, tx1, ty1 = elements[t]["box"]
            line = _overlap(y0, y1, ty0, ty1) >= 0.5 * min(y1 - y0, ty1 - ty0)
            if t != i and line and -1 <= tx0 - x1 <= LEFT_GAP * _zoom(el):
                right.append(t)
        if len(right) != 1:
            continue
        t = right[0]
        text = elements[t].get("text")
        own = (el.get("name") or "").casefold() == (text or "").casefold()  # an icon titled as its text
        if not _is_text(elements[t]) or said[text.casefold()] - own != 1:
            continue
        if not set(el["rel"].get("up", ())) & set(elements[t]["rel"].get("up", ())):
            continue  # not of one group (an item, a row): a side bar's icon beside a card's text is not "its" icon
        tx0, ty0, _, ty1 = elements[t]["box"]
        # the icon is what is nearest left of the text: nothing else on its line ends between them
        nearer = [
            j
            for j in usable
            if j not in (i, t)
            and _overlap(ty0, ty1, elements[j]["box"][1], elements[j]["box"][3]) > 0
            and x0 - 1 <= elements[j]["box"][2] <= tx0 + 1
        ]
        if not nearer:
            yield wording.left_of(text), el.get("name") or text, i


def _landmarks(elements, usable, said, _fields):
    regions: dict[str, set[int]] = defaultdict(set)
    for i in usable:
        region = elements[i]["rel"].get("region")
        if region:
            regions[region["kind"]].add(region["id"])
    named: Counter = Counter()
    for i in usable:
        region = elements[i]["rel"].get("region")
        if region:
            named[(region["kind"], _noun(elements[i]), (elements[i].get("name") or "").casefold())] += 1
    for i in usable:
        el, region = elements[i], elements[i]["rel"].get("region")
        noun, name = _noun(el), el.get("name")
        if not region or el["kind"] != "control" or not noun or not nameable(name):
            continue
        if len(regions[region["kind"]]) != 1:
            continue
        if named[(region["kind"], noun, name.casefold())] == 1:
            yield wording.in_region(name, noun, region["kind"]), name, i


def _colour_of(el: dict) -> tuple[str | None, set[str]]:
    """A button's colour is its own background where it stands out from what is behind it, a link's its text's."""
    rel = el["rel"]
    if rel.get("bg_image"):  # a gradient could be called by any of its colours; an image by any name
        stops = [[float(v) for v in m.split(",")[:3]] + [1.0] for m in _RGB.findall(rel["bg_image"])]
        if "url(" in rel["bg_image"] or not stops:
            return None, {name for _, name in PALETTE} | {"black"}
        return None, set().union(*(colour_names(c)[1] | {colour_names(c)[0]} - {None} for c in stops))
    shown = set().union(*(colour_names(c)[1] for c in rel.get("colours") or ()))  # every other colour it shows
    if el.get("role") == "link":
        name, possible = colour_names(rel.get("fg"))
        return name, possible | shown
    name, possible = colour_names(rel.get("bg"))
    under, under_possible = colour_names(rel.get("under"))
    if name and name == under or not (rel.get("bg") or [0, 0, 0, 0])[3] >= 0.9:
        name = None
    fg_name, fg_possible = colour_names(rel.get("fg"))
    return name, possible | fg_possible | shown | (under_possible if not name else set())


def _colours(elements, usable, said, _fields):
    for role in ("button", "link"):
        members = [i for i in usable if elements[i].get("role") == role and elements[i]["kind"] == "control"]
        named = {i: _colour_of(elements[i]) for i in members}
        others = [i for i in range(len(elements)) if elements[i].get("role") == role and i not in named]
        if others:  # a button of a child frame: its colour is not known here
            continue
        for i, (name, _) in named.items():
            if name and all(name not in possible for j, (_, possible) in named.items() if j != i):
                yield wording.by_colour(name, ROLE_NOUNS[role]), elements[i].get("name") or "", i


def _area(el: dict) -> float:
    x0, y0, x1, y1 = el["box"]
    return max(x1 - x0, 0) * max(y1 - y0, 0)


def _sizes(elements, usable, said, _fields):
    buttons = [i for i in range(len(elements)) if elements[i].get("role") == "button"]
    if len(buttons) < 2:
        return
    big = max(buttons, key=lambda i: _area(elements[i]))
    if big in usable and all(_area(elements[big]) >= LARGE_RATIO * _area(elements[j]) for j in buttons if j != big):
        yield wording.by_size("button"), elements[big].get("name") or "", big


def _icons(elements, usable, said, _fields):
    made: Counter = Counter()
    found = []
    for i in usable:
        el, name = elements[i], elements[i].get("name") or ""
        if is_icon(el) and _WORDS.match(name):
            made[name.casefold()] += 1
            found.append((i, name))
    for i, name in found:
        if made[name.casefold()] == 1 and said[name.casefold()] == 1:
            yield wording.icon(name.lower()), name, i
