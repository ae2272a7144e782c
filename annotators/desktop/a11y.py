"""An app's accessibles on one settled screen → grounding labels (``annotator='a11y'``), worded like the DOM's.

Input: a :class:`screenmill.annotators.desktop.session.Capture` (the AT-SPI nodes the session agent read, the app's
top-level accessibles, the mapped X windows bottom to top). :func:`elements` keeps the nodes a person sees and can
name:

* a role this module maps onto the DOM labels' role vocabulary (:data:`ROLES`: ``push button`` → ``button``, ``menu``
  / ``menu item`` → ``menuitem``, editable ``text`` → ``textbox``, ``label`` → a text), or a static text;
* showing (GTK 4 sets SHOWING on windows only: VISIBLE there, see the agent), visible, enabled (or sensitive); a
  control that is not (greyed) is kept as ``disabled``: never labelled nor acted on, but seen, so an expression it
  would share is no one's (a Qt file dialog's greyed "Open" as large as "Cancel": no "the large button");
* a name or text left after cleaning (:func:`clean_name`: developer names such as ``GtkMenuButton`` / ``AdwGizmo``
  dropped, GTK 4's doubled ``"7 7"`` made ``"7"``; a control without a name takes the text of the label inside it);
* a box of non-zero size whose centre lies on the screen and in its own window, and no later-mapped (higher) X window
  over that centre (a popup or another window covers it; ``showing`` does not mean unoccluded); an item of an open
  menu (a descendant of a :data:`POPUP_ROLES` node: GTK's ``menu``, Qt 5's ``popup menu``) lies in the topmost X
  window under its centre, the menu's popup;
* a label inside a kept control is the control's text, not an element of its own (its words would name two things).

Boxes are screen pixels after the per-toolkit corrections (:func:`screen_box`): GTK 3 and Qt 5 report screen
coordinates (Qt's window-relative ones are wrong: never used); GTK 4 reports its widgets relative to its window's
content whatever is asked, so its client window's origin (the X server's geometry of the window a window manager
framed, :func:`screenmill.annotators.desktop.wm.client_geometry`, not the frame's) and its client-side shadow margin
are added. When the toolkit
reports logical pixels of a scaled display (its window's box is the X window's over the scale), boxes are scaled.

Each element carries the ``rel`` block :mod:`screenmill.annotators.relations` reads (the referring expressions by
place, look and icon: the DOM's code, one path for both), read off the tree the agent already walked (no extra
AT-SPI call):

* ``region``: the innermost container of :data:`REGION_ROLES` among its ancestors (a menu bar, a tool bar, a status
  bar, a dialog: an ancestor of those roles or its window's role; nested ones of a kind folded into the outermost),
  none for an item of an open menu (it is in the menu's popup, not in the bar);
* ``row``: its nearest ancestor of :data:`ROW_ROLES` (a table row, list or tree item) with the words of every node
  under it (the other cells' names);
* ``up``: its node, parent and grandparent (by tree path); ``zoom`` 1; ``icon``: whether it is an icon (a picture
  role, :data:`PICTURE_ROLES`, or a control without text holding one);
* colours (only when a visual recipe is asked: :func:`add_paint`) from the screenshot's pixels of its box: the most
  common colour inside (``bg``), the most common one far from it (``fg``: its text or glyph), the most common in a
  ring around it (``under``) and every colour that covers :data:`PAINT_SHARE` of the box (``colours``), named by the
  DOM's palette (:func:`screenmill.annotators.relations.colour_names`).

:func:`a11y_labels` words them with the DOM's rules (:func:`screenmill.annotators.dom.labels.element_labels`: text,
name, role + name, fields, positions for repeats, nothing ambiguous, and the expressions of ``recipes``), recipes
``a11y-*`` (:data:`screenmill.annotators.wording.A11Y_OF_ALL`).
"""

from __future__ import annotations

import io
import re

from screenmill.annotators import relations
from screenmill.annotators.desktop import wm
from screenmill.annotators.dom.labels import element_labels
from screenmill.annotators.wording import A11Y_OF, A11Y_OF_ALL, DOM_COLOUR, DOM_RECIPES, printable
from screenmill.schemas.labels import LabelProvenance
from screenmill.schemas.records import GroundingLabel, Screenshot

NAME = "a11y"
VERSION = "1"
#: Each text recipe's version (1: the first rules; 2: a text is never halved, only a name: :func:`clean_text`; the
#: nodes of a GTK 4 popover placed in its own X window: :func:`gtk4_popovers`; 3: Qt 5's open menus' items, two
#: windows at one place told apart by title: :func:`own_x_windows`; greyed controls seen, never labelled; 4: windows
#: of a scaled display matched to their X windows in screen pixels, :func:`own_x_windows`; "QR", "QWERTY" kept, not
#: taken for Qt class names, :func:`clean_text`; a hidden window takes no X window).
RECIPE_VERSIONS = {r: "4" for r in A11Y_OF.values()}
#: The version of this module's ``rel`` block (regions, rows, colours from pixels): part of the relation recipes'
#: (3: the texts and popover boxes of recipe version 2; 4: the elements of recipe version 3; 5: those of version 4,
#: and a side bar's edge in logical px whatever px the toolkit reports: :func:`_side_bars`).
REL_VERSION = "5"
#: Each recipe's version, the relation recipes' too (``a11y-row``: the relations' rules and :data:`REL_VERSION`).
ALL_RECIPE_VERSIONS = {
    **RECIPE_VERSIONS,
    **{A11Y_OF_ALL[r]: f"{relations.RELATIONS_VERSION}+r{REL_VERSION}" for r in relations.RECIPES},
}
#: AT-SPI roles of the containers an element can be said to be in → :data:`screenmill.annotators.wording.REGION_NOUNS`.
REGION_ROLES = {
    "menu bar": "menubar",
    "tool bar": "toolbar",
    "status bar": "statusbar",
    "dialog": "dialog",
    "alert": "dialog",
    "file chooser": "dialog",
    "color chooser": "dialog",
    "font chooser": "dialog",
}
#: Roles of an open menu's popup: an item under one is not in the bar its menu hangs from.
POPUP_ROLES = frozenset({"menu", "popup menu"})
#: AT-SPI roles of a row: a table row, a list item, a tree item.
ROW_ROLES = frozenset({"table row", "list item", "tree item"})
#: Roles of a picture: an element of one, or a control without text that holds one, is an icon (the tree tells; a
#: toolkit's button that paints its name has no text node, so no text of its own does not make it an icon).
PICTURE_ROLES = frozenset({"icon", "image"})
#: A picture-holding control is an icon when its box is at most this many logical px wider than its picture (no room
#: for a painted name beside it: GTK 3 exposes a button's icon as the size of its image, not as a child).
ICON_ROOM = 32
#: A side bar: a container at its window's left or right edge (within this many logical px) ...
SIDE_EDGE = 16
#: ... at least this share of its window's height tall ...
SIDE_MIN_HEIGHT = 0.5
#: ... and at most this share of its window's width wide, holding at least this many of the kept controls.
SIDE_MAX_WIDTH, SIDE_MIN_CONTROLS = 0.3, 2
#: The AT-SPI action of a Qt 5 menu item that opens a menu of its own (a plain item offers ``Press``).
SUBMENU_ACTION = "ShowMenu"
#: Roles of a table whose cells are its children with no row nodes between (GTK 3's tree views): a row is the cells
#: of one table on one line.
CELL_TABLE_ROLES = frozenset({"table", "tree table", "tree"})

#: The least share of an element's box a colour covers to be among the colours it could be called by.
PAINT_SHARE = 0.05
#: The ring around a box whose most common colour is what is behind it: from this many pixels out (GTK 4's boxes sit
#: 2-4 px inside the painted button) ...
RING_GAP = 4
#: ... for this many pixels.
RING_PX = 4
#: Colour bins: a channel's value // this (16 levels a channel).
PAINT_BIN = 16
#: The least distance (RGB, 0-255) from the box's most common colour that makes a colour its text's.
FG_DISTANCE = 96

#: A GTK 4 popover's X window is of its box's size (times k) within this many screen px (:func:`gtk4_popovers`).
POPOVER_SLACK = 1
#: A label lies in a control's box when it is out of it by at most this many logical px on a side (:func:`_within`).
WITHIN_SLACK = 1

#: AT-SPI role name → the DOM labels' role (ARIA) vocabulary (:data:`screenmill.annotators.wording.ROLE_NOUNS`).
ROLES = {
    "push button": "button",
    "toggle button": "button",
    "button": "button",
    "menu": "menuitem",
    "menu item": "menuitem",
    "check menu item": "menuitemcheckbox",
    "radio menu item": "menuitemradio",
    "check box": "checkbox",
    "radio button": "radio",
    "toggle switch": "switch",
    "page tab": "tab",
    "table cell": "gridcell",
    "combo box": "combobox",
    "list item": "option",
    "slider": "slider",
    "spin button": "spinbutton",
    "link": "link",
    "tree item": "treeitem",
    "heading": "heading",
    "image": "img",
    "icon": "img",
    "entry": "textbox",
    "password text": "textbox",
}
#: Roles whose node is a text (its words), not a control.
TEXT_ROLES = frozenset({"label", "static", "caption", "text", "paragraph"})
#: A developer's class name: a toolkit's prefix and a capital (``GtkMenuButton``, ``AdwGizmo``); Qt's (``QWidget``,
#: ``QLCDNumber``) hold a lower-case letter after the ``Q``, so "QR" or "QWERTY" are names a person reads.
_DEV_NAME = re.compile(r"^(?:(?:Gtk|Adw|Gdk|Gsk|Hdy|Xfce)[A-Z][A-Za-z0-9]*|Q[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*)$")


def clean_text(text: str | None) -> str | None:
    """A text as a person reads it, or None: cleaned as every producer's texts are
    (:func:`screenmill.annotators.wording.printable`: icon-font glyphs of the Private Use Area and unprintable code
    points out, whitespace and line breaks collapsed), a developer's class name (``GtkMenuButton``) dropped. Never
    halved: a text of two equal halves is what is painted (galculator's RPN stack ``"0\\n0\\n0\\n0"`` reads
    ``"0 0 0 0"``, not ``"0 0"``); only names come doubled (GTK 4's, :func:`clean_name`)."""
    if not text:
        return None
    text = printable(text)
    if _DEV_NAME.match(text):
        return None
    return text or None


def clean_name(name: str | None) -> str | None:
    """A name a person would read, or None: :func:`clean_text`, and a name of two equal halves (GTK 4's buttons are
    named ``"7 7"``, ``"mod mod"``: their label's text twice) halved."""
    name = clean_text(name)
    if not name:
        return None
    words = name.split(" ")
    half = len(words) // 2
    if len(words) % 2 == 0 and words[:half] == words[half:]:
        name = " ".join(words[:half])
    return name or None


def _inside(point: tuple[float, float], rect: list[int] | tuple) -> bool:
    x, y, w, h = rect
    return x <= point[0] < x + w and y <= point[1] < y + h


def _overlap(a, b) -> int:
    w = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    h = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    return max(w, 0) * max(h, 0)


def _unit(x_width: float, box_width: float, scale: float) -> float:
    """The factor from a toolkit's box to screen pixels when its window is an X window ``x_width`` wide: ``scale``
    when the box is that width over the scale (logical px of a scaled display), else 1."""
    ratio = x_width / box_width
    return scale if abs(ratio - scale) < abs(ratio - 1) else 1.0


def own_x_windows(capture, gtk4: bool, scale: float) -> dict[int, tuple[int, float, tuple[int, int]]]:
    """Each app window's (index into ``capture.windows``) X window: ``(index into x_windows, scale k, offset)``; a
    node's screen box is its box x ``k`` + ``offset`` (GTK 4: the X window's origin and shadow margin).

    Matched by facts, in order: the X window whose client's title (``_NET_WM_NAME``, :attr:`Capture.frames`) is the
    window's accessible name (two windows at one place, mousepad's "New Window" over the first, tell apart so: each
    its own X window, the one below covered); then GTK 4 by size (its boxes are window-relative), the others by the
    most overlap and, of windows holding it whole (a dialog over its main one), the one of its size; then an X window
    no other accessible window took (one to one); then by stacking order (as before: GTK 4 the topmost, the others the
    lowest). Sizes and overlaps are compared in screen pixels: the window's box times the ``k`` it would have in
    that X window (:func:`_unit`; a scaled display's logical box against its X window's pixels told nothing), an
    overlap as the share of that box covered (a box doubled for a large X window is not more overlapped). A
    window that is not showing is matched to none (it would take an X window from a shown one)."""
    out: dict[int, tuple[int, float, tuple[int, int]]] = {}
    titles = [(f or {}).get("title") or "" for f in capture.frames] if capture.frames else []
    taken: set[int] = set()
    # GTK 4: its client window (inside a window manager's frame, if any); the others: the X window itself
    geometry = [wm.client_geometry(capture, j) if gtk4 else tuple(x[1:5]) for j, x in enumerate(capture.x_windows)]
    for i, win in enumerate(capture.windows):
        box = win.get("box")
        if not box or box[2] <= 0 or box[3] <= 0 or not capture.x_windows or not win.get("showing", True):
            continue  # a hidden window (listed, no nodes under it) takes no X window
        name = (win.get("name") or "").strip()
        units = [_unit(g[2], box[2], scale) for g in geometry]

        def titled(j: int, name: str = name) -> bool:
            return bool(name) and j < len(titles) and titles[j].strip() == name

        # how much wider and taller each X window is than the window's box in its units
        off = [(g[2] - box[2] * u, g[3] - box[3] * u) for g, u in zip(geometry, units, strict=True)]

        if gtk4:  # window-relative: match by size (the client window is the box plus a margin all round)
            best = min(
                range(len(capture.x_windows)),
                key=lambda j: (
                    not titled(j),
                    abs(off[j][0] - off[j][1]),
                    abs(off[j][0]),
                    j in taken,
                    -j,
                ),
            )
        else:
            best = max(
                range(len(capture.x_windows)),
                key=lambda j: (
                    titled(j),
                    _overlap(geometry[j], [v * units[j] for v in box]) / (box[2] * box[3] * units[j] ** 2),
                    -abs(off[j][0]) - abs(off[j][1]),
                    j not in taken,
                    -j,
                ),
            )
        taken.add(best)
        xx, xy, xw, xh = geometry[best]
        k = units[best]  # logical px of a scaled display, or screen px
        # GTK 4: the content sits in its client window (inside a window manager's frame, if any: the X server's
        # geometry of the client, not the frame's) with equal margins left, right and below (its client-side shadow,
        # none when framed); the top margin may be larger
        side = (xw - box[2] * k) / 2
        offset = (xx + side, xy + xh - box[3] * k - side) if gtk4 else (0, 0)
        out[i] = (best, k, offset)
    return out


def gtk4_popovers(capture, wins: dict) -> dict[tuple, tuple[int, float, tuple[float, float]] | None]:
    """GTK 4's popovers (a node of :data:`POPUP_ROLES`, a ``GtkPopoverMenu``) are surfaces of their own: an X window
    of the popover's size, mapped above its window, while GTK 4 reports the popover's box at another place relative to
    its window's content. Each popover's path → ``(index into x_windows, k, offset)`` placing the nodes under it (their
    box minus the popover's is where they lie in its X window: :func:`screen_box` with this offset), the topmost X
    window of that size (within :data:`POPOVER_SLACK`); None when no X window has its size (not on the screen)."""
    out: dict[tuple, tuple[int, float, tuple[float, float]] | None] = {}
    for node in capture.nodes:
        box = node.get("win")
        if node["role"] not in POPUP_ROLES or not box or box[2] <= 0 or node.get("window") not in wins:
            continue
        own, k, _ = wins[node["window"]]
        out[tuple(node["path"])] = next(
            (
                (j, k, (xx - box[0] * k, xy - box[1] * k))
                for j in range(len(capture.x_windows) - 1, own, -1)
                for _, xx, xy, xw, xh in [capture.x_windows[j]]
                if abs(xw - box[2] * k) <= POPOVER_SLACK and abs(xh - box[3] * k) <= POPOVER_SLACK
            ),
            None,
        )
    return out


def screen_box(
    node: dict, k: float, offset: tuple[float, float], gtk4: bool
) -> tuple[float, float, float, float] | None:
    """The node's box ``(x0, y0, x1, y1)`` in screen pixels (see the module docstring), or None without one."""
    box = node.get("win") if gtk4 else node.get("screen")
    if not box or box[2] <= 0 or box[3] <= 0:
        return None
    x, y, w, h = box
    return (x * k + offset[0], y * k + offset[1], (x + w) * k + offset[0], (y + h) * k + offset[1])


def elements(capture, screen: tuple[int, int], scale: float) -> list[dict]:
    """The labelled elements of a capture (see the module docstring), in tree order, ``box`` / ``point`` in logical
    px (screen pixels / ``scale``), the shape :func:`screenmill.annotators.dom.labels.element_labels` takes."""
    gtk4 = capture.toolkit.lower() == "gtk" and capture.toolkit_version.startswith("4")
    wins = own_x_windows(capture, gtk4, scale)
    pops = gtk4_popovers(capture, wins) if gtk4 else {}
    roles = {tuple(n["path"]): n["role"] for n in capture.nodes}
    texts = _RowTexts(capture.nodes)
    sides = _side_bars(capture, wins, gtk4, scale)
    sw, sh = screen
    kept: list[tuple[dict, dict]] = []
    for node in capture.nodes:
        role = node["role"]
        states = set(node.get("states") or ())
        if role not in ROLES and role not in TEXT_ROLES:
            continue
        disabled = not states & {"enabled", "sensitive"}
        if "visible" not in states or (disabled and role not in ROLES):
            continue
        if node.get("window") not in wins:
            continue
        xi, k, offset = wins[node["window"]]
        ups = [pops[p] for i in range(len(node["path"]), 1, -1) if (p := tuple(node["path"][:i])) in pops]
        pop = next((u for u in ups if u), None if ups else ())  # the nearest popover with an X window of its own
        if pop is None:
            continue  # in a GTK 4 popover that is not on the screen
        xi, k, offset = pop or (xi, k, offset)
        box = screen_box(node, k, offset, gtk4)
        if box is None:
            continue
        centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        if not pop and _in_open_menu(node, roles):  # a menu's popup: an X window of its own, over its window's
            xi = next(
                (j for j in range(len(capture.x_windows) - 1, -1, -1) if _inside(centre, capture.x_windows[j][1:])), xi
            )
        xwin = capture.x_windows[xi]
        if not (0 <= centre[0] < sw and 0 <= centre[1] < sh and _inside(centre, xwin[1:])):
            continue
        if any(_inside(centre, above[1:]) for above in capture.x_windows[xi + 1 :]):
            continue  # a window or popup mapped later covers it
        editable = "editable" in states
        name = clean_name(node.get("name"))
        if role in TEXT_ROLES and not editable:
            text = clean_text(node.get("text")) or name
            el = {"kind": "text", "role": None, "text": text, "name": name}
        else:
            field = role in TEXT_ROLES  # editable: a field whatever its text role (a document's ``paragraph``)
            el = {"kind": "control", "role": "textbox" if field else ROLES[role], "text": None, "name": name}
            if el["role"] == "textbox":
                el |= {"input_type": "text", "label": name, "name": name}
        x0, y0, x1, y1 = (
            max(box[0], xwin[1]),
            max(box[1], xwin[2]),
            min(box[2], xwin[1] + xwin[3]),
            min(box[3], xwin[2] + xwin[4]),
        )
        el["box"] = [x0 / scale, y0 / scale, x1 / scale, y1 / scale]
        el["point"] = [centre[0] / scale, centre[1] / scale]
        el["path"] = node["path"]
        el["xwin"] = xi
        el["atspi_role"] = role
        if disabled:
            el["disabled"] = True  # seen, never labelled nor acted on (dom.labels.choose_instructions)
        el["rel"] = _rel(node, roles, texts, capture.windows, sides)
        if node.get("image"):  # the picture's width, logical px
            el["image_w"] = node["image"][0] * k / scale
        kept.append((node, el))
    _cell_rows(capture.nodes, [el for _, el in kept], roles)
    holders = {  # a row node holding other controls is their row, not an element: its words stay the row's texts
        tuple(r["path"])
        for _, r in kept
        if r["atspi_role"] in ROW_ROLES
        and any(c is not r and c["kind"] == "control" and _under(c, r) for _, c in kept)
    }
    kept = [(node, el) for node, el in kept if tuple(el["path"]) not in holders]
    out: list[dict] = []
    controls = [el for _, el in kept if el["kind"] == "control"]
    for _, el in kept:
        if el["kind"] == "text":
            owners = [c for c in controls if _within(el, c)]  # a greyed control's too
            if owners:  # a control's own label (the innermost control's): its text, not an element of its own
                owner = max(owners, key=lambda c: len(c["path"]))
                if not owner["text"] and el["text"] and owner["role"] != "textbox":
                    owner["text"] = el["text"]
                continue
        out.append(el)
    pictures = [tuple(n["path"]) for n in capture.nodes if n["role"] in PICTURE_ROLES]
    for el in out:  # an icon: a picture, or a control that shows no text of its own and holds one (or shows one only)
        p = tuple(el["path"])
        held = any(len(q) > len(p) and q[: len(p)] == p for q in pictures)
        shows = "image_w" in el and el["box"][2] - el["box"][0] <= el.pop("image_w") + ICON_ROOM
        plain = el["kind"] == "control" and not el["text"]
        el["rel"]["icon"] = el["atspi_role"] in PICTURE_ROLES or (plain and (held or shows))
    gtk = capture.toolkit.lower() == "gtk"  # Qt 5 nests an unnamed text in its named editor: GTK's bare fields only
    return [el for el in out if el["text"] or el["name"] or (gtk and el["role"] == "textbox")]  # "the field below"


def _under(inner: dict, outer: dict) -> bool:
    p, q = inner["path"], outer["path"]
    return len(p) > len(q) and p[: len(q)] == q


def _cell_rows(nodes: list[dict], els: list[dict], roles: dict[tuple, str]) -> None:
    """Give the cells of a table without row nodes (:data:`CELL_TABLE_ROLES`: GTK 3's tree views) their row: the
    cells of that table on one line (the same top and bottom), its text their names in order."""
    lines: dict[tuple, list[str]] = {}
    line_of: dict[tuple, tuple] = {}
    for node in nodes:
        box = node.get("screen") or node.get("win")
        table = tuple(node["path"][:-1])
        if node["role"] != "table cell" or not box or roles.get(table) not in CELL_TABLE_ROLES:
            continue
        key = (table, box[1], box[3])
        lines.setdefault(key, [])
        said = clean_name(node.get("name")) or clean_text(node.get("text"))
        if said and said not in lines[key]:
            lines[key].append(said)
        line_of[tuple(node["path"])] = key
    for el in els:
        key = line_of.get(tuple(el["path"]))
        if key and el["rel"]["row"] is None:
            el["rel"]["row"] = {"id": ".".join(map(str, key[0])) + f"@{key[1]}", "text": " ".join(lines[key])}


def _side_bars(capture, wins: dict, gtk4: bool, scale: float) -> frozenset[tuple]:
    """The paths of the side bars of a capture: the outermost containers (nodes of no element role, with children)
    within :data:`SIDE_EDGE` logical px (x ``scale`` screen px, whatever px the toolkit reports) of their window's
    left or right edge, :data:`SIDE_MIN_HEIGHT` of its height, at most :data:`SIDE_MAX_WIDTH` of its width, holding
    :data:`SIDE_MIN_CONTROLS` controls (screen px, the X window's box)."""
    found: list[tuple] = []
    for node in capture.nodes:
        role, path = node["role"], tuple(node["path"])
        if role in ROLES or role in TEXT_ROLES or not node.get("children") or node.get("window") not in wins:
            continue
        xi, k, offset = wins[node["window"]]
        box = screen_box(node, k, offset, gtk4)
        _, wx, wy, ww, wh = capture.x_windows[xi]
        if box is None or any(path[: len(f)] == f for f in found):
            continue
        edge = SIDE_EDGE * scale
        at_edge = box[0] - wx <= edge or wx + ww - box[2] <= edge
        if not at_edge or box[3] - box[1] < SIDE_MIN_HEIGHT * wh or box[2] - box[0] > SIDE_MAX_WIDTH * ww:
            continue
        held = [n for n in capture.nodes if n["role"] in ROLES and tuple(n["path"][: len(path)]) == path]
        if len(held) >= SIDE_MIN_CONTROLS:
            found.append(path)
    return frozenset(found)


class _RowTexts:
    """The words under a row node (by path), read once per row asked."""

    def __init__(self, nodes: list[dict]):
        self._nodes, self._cache = nodes, {}

    def __call__(self, path: tuple) -> str:
        if path not in self._cache:
            n = len(path)
            words = []
            for node in self._nodes:
                if len(node["path"]) > n and tuple(node["path"][:n]) == path:
                    for said in (clean_name(node.get("name")), clean_text(node.get("text"))):
                        if said and said not in words:
                            words.append(said)
            self._cache[path] = " ".join(words)
        return self._cache[path]


def _rel(
    node: dict, roles: dict[tuple, str], row_text: _RowTexts, windows: list[dict], sides: frozenset[tuple]
) -> dict:
    """The ``rel`` block of a node (the module docstring): region, row, parents; colours come later."""
    path = node["path"]
    region = row = None
    popup = False
    for i in range(len(path) - 1, 1, -1):  # its ancestors below the window, innermost first
        up = tuple(path[:i])
        role = roles.get(up)
        if role in POPUP_ROLES:
            popup = True
        kind = "side" if up in sides else REGION_ROLES.get(role)
        if kind and not popup and (region is None or region[0] == kind):
            region = (kind, ".".join(map(str, up)))
        if row is None and role in ROW_ROLES:
            row = {"id": ".".join(map(str, up)), "text": row_text(up)}
    window = windows[node["window"]]
    if REGION_ROLES.get(window.get("role")) == "dialog" and not popup and (region is None or region[0] == "dialog"):
        region = ("dialog", f"w{node['window']}")
    ups = [".".join(map(str, path[:k])) for k in (len(path), len(path) - 1, len(path) - 2) if k > 0]
    return {"region": region and {"kind": region[0], "id": region[1]}, "row": row, "up": ups, "zoom": 1.0}


def add_paint(els: list[dict], png: bytes, scale: float) -> None:
    """Put the colours of each element's box in the screenshot ``png`` (screen pixels; boxes are logical px, times
    ``scale``) into its ``rel`` block (see the module docstring): ``bg``, ``fg``, ``under``, ``colours``."""
    import numpy as np
    from PIL import Image

    im = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    h, w = im.shape[:2]
    for el in els:
        x0, y0, x1, y1 = (int(round(v * scale)) for v in el["box"])
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
        if x1 <= x0 or y1 <= y0:
            continue
        inside = _bins(im[y0:y1, x0:x1].reshape(-1, 3))
        out, gap = RING_GAP + RING_PX, RING_GAP
        rx0, ry0, rx1, ry1 = max(x0 - out, 0), max(y0 - out, 0), min(x1 + out, w), min(y1 + out, h)
        ring = np.ones((ry1 - ry0, rx1 - rx0), bool)
        ring[max(y0 - gap - ry0, 0) : y1 + gap - ry0, max(x0 - gap - rx0, 0) : x1 + gap - rx0] = False
        around = _bins(im[ry0:ry1, rx0:rx1][ring])
        bg = inside[0][0]
        fg = next(
            (c for c, _ in inside if sum((a - b) ** 2 for a, b in zip(c, bg, strict=True)) >= FG_DISTANCE**2), None
        )
        el["rel"] |= {
            "bg": [*bg, 1.0],
            "fg": fg and [*fg, 1.0],
            "under": [*around[0][0], 1.0] if around else None,
            "colours": [[*c, 1.0] for c, share in inside if share >= PAINT_SHARE],
        }


def _bins(pixels) -> list[tuple[tuple[float, float, float], float]]:
    """Pixels ``(n, 3)`` → ``(colour, share)`` of each colour bin (its pixels' mean), the most common first."""
    import numpy as np

    if not len(pixels):
        return []
    q = pixels.astype(np.int32) // PAINT_BIN
    keys = (q[:, 0] * 256 + q[:, 1] * 16 + q[:, 2]).astype(np.int32)
    uniq, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    sums = np.zeros((len(uniq), 3))
    np.add.at(sums, inverse.ravel(), pixels)
    order = np.argsort(-counts, kind="stable")
    total = float(len(pixels))
    return [(tuple(float(v) for v in sums[k] / counts[k]), counts[k] / total) for k in order]


def _in_open_menu(node: dict, roles: dict[tuple, str]) -> bool:
    """Whether ``node`` is an item of a menu (an ancestor of :data:`POPUP_ROLES`: GTK's ``menu``, Qt 5's ``popup
    menu`` under its menu bar's item): shown, it is in the menu's popup."""
    path = node["path"]
    return any(roles.get(tuple(path[:i])) in POPUP_ROLES for i in range(1, len(path)))


def opens_submenu(node: dict, roles: dict[tuple, str]) -> bool:
    """Whether ``node`` (an agent's tree node; ``roles``: every node's role by path) is an item of an open menu that
    opens a menu of its own: GTK 3's submenu item is a ``menu`` itself, Qt 5's holds its ``popup menu`` (a child,
    not read while not showing) and offers :data:`SUBMENU_ACTION`."""
    if not _in_open_menu(node, roles):
        return False
    return node["role"] in POPUP_ROLES or SUBMENU_ACTION in (node.get("actions") or ())


def _within(inner: dict, outer: dict) -> bool:
    """Whether ``inner`` is a descendant of ``outer`` in the tree and its box lies in ``outer``'s (within
    :data:`WITHIN_SLACK`)."""
    p, q = inner["path"], outer["path"]
    if len(p) <= len(q) or p[: len(q)] != q:
        return False
    a, b = inner["box"], outer["box"]
    d = WITHIN_SLACK
    return a[0] >= b[0] - d and a[1] >= b[1] - d and a[2] <= b[2] + d and a[3] <= b[3] + d


def a11y_labels(
    shot: Screenshot,
    els: list[dict],
    display: tuple[int, int],
    scale: float,
    config_hash: str,
    run_id: str,
    recipes: frozenset[str] = frozenset(DOM_RECIPES),
    png: bytes | None = None,
) -> list[GroundingLabel]:
    """The accessibility labels of one app screenshot (:func:`elements` → the DOM's wording rules).

    Args:
        shot: the screenshot.
        els: :func:`elements` of its capture (logical px).
        display: the display's logical size (the native frame, ``pixel_resized``).
        scale: screenshot pixels per logical px.
        config_hash / run_id: provenance.
        recipes: the DOM recipes whose rules to apply (default: the text recipes; ``--a11y-recipes``' families).
        png: the screenshot's bytes (the colours of ``dom-colour``: :func:`add_paint`; without them no colour label).

    Returns:
        Labels with ``annotator='a11y'``, recipes ``a11y-*``, boxes and points in screenshot pixels.
    """

    def provenance(recipe: str) -> LabelProvenance:
        r = A11Y_OF_ALL[recipe]
        return LabelProvenance(NAME, VERSION, r, ALL_RECIPE_VERSIONS[r], config_hash, run_id)

    if DOM_COLOUR in recipes and png is not None:
        add_paint(els, png, scale)
    return element_labels(shot, els, display, scale, provenance, recipes)
