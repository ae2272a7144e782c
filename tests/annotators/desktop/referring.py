"""An independent checker of the a11y referring expressions beyond the text (``a11y-row``, ``a11y-landmark``,
``a11y-colour``, ...): each instruction is read back as a person would read it and resolved against the live tree of
a fresh session (``tree_dump.py``'s walk, screen pixels) and that session's screenshot; it must select exactly one
element, the labelled one (the label's click point in its box).

Written apart from the labeller (:mod:`screenmill.annotators.desktop.a11y`, :mod:`screenmill.annotators.relations`),
sharing none of its code, rules or thresholds: "in the menu bar" is the inside of the one menu bar's box; "the large
button" the largest button when no other comes near it; "the orange button" every button a quarter of whose pixels are
of that hue; "the settings icon" everything named so; "in the row of" the row nodes holding the words (a table or
tree of cells only, GTK 3's and Qt 5's views: the cells across it at its height); "in the side bar" the inside of the
one container along a window's side; "below" the nearest field under the words; "to the left of" the nearest thing
left of them on their line. A window wholly under the active one (a second window opened over the first) shows
nothing.
"""

from __future__ import annotations

import colorsys
import re
import unicodedata

NOUNS = {
    "push button": "button",
    "toggle button": "button",
    "button": "button",
    "menu": "menu item",
    "menu item": "menu item",
    "check menu item": "menu item",
    "radio menu item": "menu item",
    "check box": "checkbox",
    "radio button": "radio button",
    "page tab": "tab",
    "table cell": "cell",
    "combo box": "drop-down",
    "text": "text field",
    "entry": "text field",
    "list item": "option",
    "spin button": "number field",
    "slider": "slider",
    "link": "link",
    "image": "image",
    "icon": "image",
}
REGIONS = {"menu bar": ("menu bar",), "tool bar": ("tool bar",), "status bar": ("status bar",)}
DIALOG_ROLES = ("dialog", "alert", "file chooser")
FIELDS = ("text", "entry", "password text", "spin button", "combo box")
ROWS = ("table row", "list item", "tree item")
#: Roles that are no container a side bar could be (things, words, lines).
NOT_CONTAINERS = ("label", "static", "text", "separator", "scroll bar", "menu bar", "tool bar", "status bar")
#: Hue bands (degrees) of the checker's own reading of colour names.
HUES = {"red": [(0, 12), (345, 360)], "orange": [(18, 40)], "yellow": [(46, 66)], "green": [(75, 160)],
        "teal": [(170, 190)], "blue": [(200, 255)], "purple": [(265, 290)], "pink": [(300, 335)]}  # fmt: skip

PATTERNS = [
    ("row", re.compile(r'^click the "(?P<name>.+)" (?P<noun>[a-z -]+?) in the row of "(?P<anchor>.+)"$')),
    ("landmark", re.compile(r'^click the "(?P<name>.+)" (?P<noun>[a-z -]+?) in the (?P<region>menu bar|tool bar|'
                            r"status bar|dialog|top bar|side bar)$")),
    ("below", re.compile(r'^click the field below "(?P<anchor>.+)"$')),
    ("left-of", re.compile(r'^click the icon to the left of "(?P<anchor>.+)"$')),
    ("size", re.compile(r"^click the large (?P<noun>button)$")),
    ("colour", re.compile(r"^click the (?P<colour>[a-z]+) (?P<noun>button|link)$")),
    ("icon", re.compile(r"^click the (?P<words>[a-z]+(?: [a-z]+)?) icon$")),
]  # fmt: skip


def said(s: str | None) -> str:
    """Words as read: unprintables out, whitespace collapsed, a doubled "7 7" halved, case folded."""
    s = "".join(c if not unicodedata.category(c).startswith("C") else " " for c in s or "")
    words = s.split()
    if words and len(words) % 2 == 0 and words[: len(words) // 2] == words[len(words) // 2 :]:
        words = words[: len(words) // 2]
    return " ".join(words).casefold()


def _seen(nodes):
    """What a person sees: sized nodes inside their window (GTK 3's hidden tab pages are visible at -2^31), none of a
    window wholly under the active one (AT-SPI's ACTIVE: the one on top, a second window opened over the first; a
    window only partly under it keeps its nodes, its rows' structure with them)."""
    frames = {n["window"]: n["box"] for n in nodes if n["depth"] == 0}
    on_top = [n for n in nodes if n["depth"] == 0 and n.get("active")]
    hidden = {
        w
        for w, box in frames.items()
        if any(t["window"] != w and _inside(box[:2], t["box"]) and _inside(box[2:], t["box"]) for t in on_top)
    }
    return [
        n
        for n in nodes
        if n["sized"]
        and n["depth"] >= 1
        and n["window"] not in hidden
        and _inside(_centre(n), frames.get(n["window"], n["box"]))
    ]


def _shows(n, words):
    return words in (said(n["name"]), said(n["text"]))


def _inside(pt, box, slack=0.0):
    return box[0] - slack <= pt[0] <= box[2] + slack and box[1] - slack <= pt[1] <= box[3] + slack


def _centre(n):
    b = n["box"]
    return ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)


def _ancestors(nodes, i):
    """Indices of node ``i``'s ancestors (tree order + depth), nearest first."""
    out, depth = [], nodes[i]["depth"]
    for j in range(i - 1, -1, -1):
        if nodes[j]["window"] == nodes[i]["window"] and nodes[j]["depth"] < depth:
            out.append(j)
            depth = nodes[j]["depth"]
    return out


def resolve(instruction: str, nodes: list[dict], image) -> tuple[str | None, list[dict]]:
    """``(kind, the nodes the instruction selects)``; kind None when it is none of these expressions."""
    for kind, pattern in PATTERNS:
        m = pattern.match(instruction)
        if m:
            frames = [n for n in nodes if n["depth"] == 0]  # the windows: a dialog, the side a side bar is along
            return kind, globals()["_" + kind.replace("-", "_")](m, _seen(nodes), image, frames)
    return None, []


def _named(nodes, name, noun):
    return [n for n in nodes if NOUNS.get(n["role"]) == noun and said(n["name"] or n["text"]) == said(name)]


def _landmark(m, nodes, _image, frames):
    region = m["region"]
    if region == "dialog":
        boxes = [n["box"] for n in frames if n["role"] in DIALOG_ROLES]
    elif region == "side bar":
        boxes = _side_bars(nodes, frames)
    else:
        boxes = [n["box"] for n in nodes if n["role"] in REGIONS.get(region, ())]
    if len(boxes) != 1:
        return []
    return [n for n in _named(nodes, m["name"], m["noun"]) if _inside(_centre(n), boxes[0])]


def _side_bars(nodes, frames):
    """The boxes of containers along a window's left or right side (within 20 px), at least 40 % of its height and at
    most 35 % of its width, holding two things with a noun; the outermost of nested ones."""
    boxes = {n["window"]: n["box"] for n in frames}
    found = []
    for i, n in enumerate(nodes):
        f, b = boxes.get(n["window"]), n["box"]
        if f is None or n["role"] in NOUNS or n["role"] in NOT_CONTAINERS:
            continue
        side = b[0] - f[0] <= 20 or f[2] - b[2] <= 20
        if side and b[3] - b[1] >= 0.4 * (f[3] - f[1]) and b[2] - b[0] <= 0.35 * (f[2] - f[0]):
            held = [k for k in range(len(nodes)) if NOUNS.get(nodes[k]["role"]) and i in _ancestors(nodes, k)]
            if len(held) >= 2:
                found.append(b)
    return [b for b in found if not any(o != b and _inside(b[:2], o) and _inside(b[2:], o) for o in found)]


def _row(m, nodes, _image, _frames):
    out = []
    for i, n in enumerate(nodes):
        if NOUNS.get(n["role"]) == m["noun"] and said(n["name"] or n["text"]) == said(m["name"]):
            ups = _ancestors(nodes, i)
            rows = [j for j in ups if nodes[j]["role"] in ROWS]
            under = []
            if rows:
                r = rows[0]
                under = [k for k in range(len(nodes)) if r in _ancestors(nodes, k)]
            elif ups and nodes[ups[0]]["role"].split()[-1] in ("table", "tree"):  # cells only (Qt 5's tree view:
                # its cells straight under a "tree"): their line across the table
                y = _centre(n)[1]
                under = [k for k in range(len(nodes)) if _ancestors(nodes, k)[:1] == ups[:1]
                         and nodes[k]["box"][1] <= y <= nodes[k]["box"][3]]  # fmt: skip
            if under:
                if any(said(m["anchor"]) in (said(nodes[k]["name"]) + " " + said(nodes[k]["text"])) for k in under):
                    out.append(n)
    return out


def _size(m, nodes, _image, _frames):
    buttons = sorted((n for n in nodes if NOUNS.get(n["role"]) == "button"), key=lambda n: -_area(n))
    if len(buttons) < 2 or _area(buttons[1]) >= 0.8 * _area(buttons[0]):
        return buttons[:2]  # none stands out: as good as two
    return buttons[:1]


def _area(n):
    b = n["box"]
    return (b[2] - b[0]) * (b[3] - b[1])


def _colour(m, nodes, image, _frames):
    out = []
    for n in nodes:
        if NOUNS.get(n["role"]) != m["noun"]:
            continue
        x0, y0, x1, y1 = (int(v) for v in n["box"])
        px = [image.getpixel((x, y)) for x in range(max(x0, 0), min(x1, image.width), 2)
              for y in range(max(y0, 0), min(y1, image.height), 2)]  # fmt: skip
        hits = 0
        for r, g, b in px:
            h, s, v = colorsys.rgb_to_hsv(r / 255, g / 255, b / 255)
            if s >= 0.4 and v >= 0.3 and any(a <= h * 360 < z for a, z in HUES.get(m["colour"], ())):
                hits += 1
        if px and hits >= 0.25 * len(px):
            out.append(n)
    return out


def _icon(m, nodes, _image, _frames):
    return [n for n in nodes if n["role"] not in ("label", "static", "text") and _shows(n, m["words"])]


def _below(m, nodes, _image, _frames):
    anchors = [n for n in nodes if _shows(n, said(m["anchor"])) and NOUNS.get(n["role"]) != "text field"]
    if len(anchors) != 1:
        return []
    a = anchors[0]["box"]
    under = [n for n in nodes if n["role"] in FIELDS and n["box"][1] >= a[3] - 1 and n["box"][1] - a[3] <= 60
             and min(n["box"][2], a[2]) > max(n["box"][0], a[0])]  # fmt: skip
    if not under:
        return []
    top = min(n["box"][1] for n in under)
    return [n for n in under if n["box"][1] - top < 4]


def _left_of(m, nodes, _image, _frames):
    anchors = [n for n in nodes if _shows(n, said(m["anchor"]))]
    if len(anchors) != 1:
        return []
    a = anchors[0]["box"]
    line = [n for n in nodes if n["box"][2] <= a[0] + 2 and a[0] - n["box"][2] <= 30
            and min(n["box"][3], a[3]) - max(n["box"][1], a[1]) > 0 and n is not anchors[0]]  # fmt: skip
    if not line:
        return []
    right = max(n["box"][2] for n in line)
    near = [n for n in line if right - n["box"][2] < 2]
    boxes = {tuple(round(v) for v in n["box"]) for n in near}  # a button and its picture share a place: one thing
    return near[:1] if len(boxes) == 1 else near


def check(labels: list[dict], nodes: list[dict], image) -> dict[str, dict[str, int]]:
    """Per recipe: ``labels`` (grounding rows of the expressions here), ``right`` (it selects exactly one element and
    the label's click point is in it), ``ambiguous`` (more than one), ``missed`` (none or another), ``pua``."""
    out: dict[str, dict[str, int]] = {}
    for row in labels:
        kind, got = resolve(row["instruction"], nodes, image)
        if kind is None:
            continue
        c = out.setdefault(row["recipe"], {"labels": 0, "right": 0, "ambiguous": 0, "missed": 0, "pua": 0})
        c["labels"] += 1
        c["pua"] += any(unicodedata.category(ch) == "Co" for ch in row["instruction"])
        point = (row["click_x"], row["click_y"])
        places = {tuple(round(v) for v in n["box"]) for n in got}
        if len(places) > 1:
            c["ambiguous"] += 1
        elif got and _inside(point, got[0]["box"], slack=2):
            c["right"] += 1
        else:
            c["missed"] += 1
    return out
