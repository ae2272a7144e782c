"""An app's accessibles on one settled screen → grounding labels (``annotator='a11y'``), worded like the DOM's.

Input: a :class:`screenmill.annotators.desktop.session.Capture` (the AT-SPI nodes the session agent read, the app's
top-level accessibles, the mapped X windows bottom to top). :func:`elements` keeps the nodes a person sees and can
name:

* a role this module maps onto the DOM labels' role vocabulary (:data:`ROLES`: ``push button`` → ``button``, ``menu``
  / ``menu item`` → ``menuitem``, editable ``text`` → ``textbox``, ``label`` → a text), or a static text;
* showing (GTK 4 sets SHOWING on windows only: VISIBLE there, see the agent), visible, enabled (or sensitive);
* a name or text left after cleaning (:func:`clean_name`: developer names such as ``GtkMenuButton`` / ``AdwGizmo``
  dropped, GTK 4's doubled ``"7 7"`` made ``"7"``; a control without a name takes the text of the label inside it);
* a box of non-zero size whose centre lies on the screen and in its own window, and no later-mapped (higher) X window
  over that centre (a popup or another window covers it; ``showing`` does not mean unoccluded); an item of an open
  menu (a descendant of a ``menu``) lies in the topmost X window under its centre, the menu's popup;
* a label inside a kept control is the control's text, not an element of its own (its words would name two things).

Boxes are screen pixels after the per-toolkit corrections (:func:`screen_box`): GTK 3 and Qt 5 report screen
coordinates (Qt's window-relative ones are wrong: never used); GTK 4 reports its widgets relative to its window's
content whatever is asked, so the X window's origin and its client-side shadow margin are added. When the toolkit
reports logical pixels of a scaled display (its window's box is the X window's over the scale), boxes are scaled.

:func:`a11y_labels` words them with the DOM's rules (:func:`screenmill.annotators.dom.labels.element_labels`: text,
name, role + name, fields, positions for repeats, nothing ambiguous), recipes ``a11y-*``
(:data:`screenmill.annotators.wording.A11Y_OF`).
"""

from __future__ import annotations

import re

from screenmill.annotators.dom.labels import element_labels
from screenmill.annotators.wording import A11Y_OF, printable
from screenmill.schemas.labels import LabelProvenance
from screenmill.schemas.records import GroundingLabel, Screenshot

NAME = "a11y"
VERSION = "1"
#: Each recipe's version (1: the first rules).
RECIPE_VERSIONS = {r: "1" for r in A11Y_OF.values()}

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
_DEV_NAME = re.compile(r"^(Gtk|Adw|Gdk|Gsk|Hdy|Xfce|Q)[A-Z][A-Za-z0-9]*$")


def clean_name(name: str | None) -> str | None:
    """A name a person would read, or None: cleaned as every producer's names are
    (:func:`screenmill.annotators.wording.printable`: icon-font glyphs of the Private Use Area and unprintable code
    points out, whitespace collapsed), a developer's class name (``GtkMenuButton``, ``AdwGizmo``, ``QWidget``)
    dropped, a name of two equal halves (GTK 4's ``"7 7"``, ``"mod mod"``) halved."""
    if not name:
        return None
    name = printable(name)
    if _DEV_NAME.match(name):
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


def own_x_windows(capture, gtk4: bool, scale: float) -> dict[int, tuple[int, float, tuple[int, int]]]:
    """Each app window's (index into ``capture.windows``) X window: ``(index into x_windows, scale k, offset)``; a
    node's screen box is its box x ``k`` + ``offset`` (GTK 4: the X window's origin and shadow margin)."""
    out = {}
    for i, win in enumerate(capture.windows):
        box = win.get("box")
        if not box or box[2] <= 0 or box[3] <= 0 or not capture.x_windows:
            continue
        if gtk4:  # window-relative: match by size (the X window is the box plus a margin all round)
            best = min(
                range(len(capture.x_windows)),
                key=lambda j: (
                    abs((capture.x_windows[j][3] - box[2]) - (capture.x_windows[j][4] - box[3])),
                    abs(capture.x_windows[j][3] - box[2]),
                    -j,
                ),
            )
        else:
            best = max(range(len(capture.x_windows)), key=lambda j: (_overlap(capture.x_windows[j][1:], box), -j))
        _, xx, xy, xw, xh = capture.x_windows[best]
        k = scale if abs(xw / box[2] - scale) < abs(xw / box[2] - 1) else 1.0  # logical px of a scaled display
        # GTK 4: the content sits in the X window with equal margins left, right and below (its client-side shadow,
        # or a window manager's frame border); the top margin may be larger (a frame's title bar)
        side = (xw - box[2] * k) / 2
        offset = (xx + side, xy + xh - box[3] * k - side) if gtk4 else (0, 0)
        out[i] = (best, k, offset)
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
    roles = {tuple(n["path"]): n["role"] for n in capture.nodes}
    sw, sh = screen
    kept: list[tuple[dict, dict]] = []
    for node in capture.nodes:
        role = node["role"]
        states = set(node.get("states") or ())
        if role not in ROLES and role not in TEXT_ROLES:
            continue
        if "visible" not in states or not states & {"enabled", "sensitive"}:
            continue
        if node.get("window") not in wins:
            continue
        xi, k, offset = wins[node["window"]]
        box = screen_box(node, k, offset, gtk4)
        if box is None:
            continue
        centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
        if _in_open_menu(node, roles):  # a menu's popup: an X window of its own, over its window's
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
            text = clean_name(node.get("text")) or name
            el = {"kind": "text", "role": None, "text": text, "name": name}
        else:
            el = {"kind": "control", "role": "textbox" if role == "text" else ROLES[role], "text": None, "name": name}
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
        kept.append((node, el))
    out: list[dict] = []
    controls = [el for _, el in kept if el["kind"] == "control"]
    for _, el in kept:
        if el["kind"] == "text":
            owners = [c for c in controls if _within(el, c)]
            if owners:  # a control's own label (the innermost control's): its text, not an element of its own
                owner = max(owners, key=lambda c: len(c["path"]))
                if not owner["text"] and el["text"] and owner["role"] != "textbox":
                    owner["text"] = el["text"]
                continue
        out.append(el)
    return [el for el in out if el["text"] or el["name"]]


def _in_open_menu(node: dict, roles: dict[tuple, str]) -> bool:
    """Whether ``node`` is an item of a menu (an ancestor of role ``menu``): shown, it is in the menu's popup."""
    path = node["path"]
    return any(roles.get(tuple(path[:i])) == "menu" for i in range(1, len(path)))


def _within(inner: dict, outer: dict) -> bool:
    """Whether ``inner`` is a descendant of ``outer`` in the tree and its box lies in ``outer``'s."""
    p, q = inner["path"], outer["path"]
    if len(p) <= len(q) or p[: len(q)] != q:
        return False
    a, b = inner["box"], outer["box"]
    return a[0] >= b[0] - 1 and a[1] >= b[1] - 1 and a[2] <= b[2] + 1 and a[3] <= b[3] + 1


def a11y_labels(
    shot: Screenshot, els: list[dict], display: tuple[int, int], scale: float, config_hash: str, run_id: str
) -> list[GroundingLabel]:
    """The accessibility labels of one app screenshot (:func:`elements` → the DOM's wording rules).

    Args:
        shot: the screenshot.
        els: :func:`elements` of its capture (logical px).
        display: the display's logical size (the native frame, ``pixel_resized``).
        scale: screenshot pixels per logical px.
        config_hash / run_id: provenance.

    Returns:
        Labels with ``annotator='a11y'``, recipes ``a11y-*``, boxes and points in screenshot pixels.
    """

    def provenance(recipe: str) -> LabelProvenance:
        r = A11Y_OF[recipe]
        return LabelProvenance(NAME, VERSION, r, RECIPE_VERSIONS[r], config_hash, run_id)

    return element_labels(shot, els, display, scale, provenance)
