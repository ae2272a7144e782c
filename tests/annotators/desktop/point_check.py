"""The independent checker of accessibility labels, run *inside* a fresh desktop session (system Python + gi).

Written apart from the labeller (:mod:`screenmill.annotators.desktop.a11y`), sharing none of its code: it does not walk
the tree the labeller walked, it looks up what is at each label's click point (its own descent from the app's window
through the shown children holding the point, the last painted first, and ``Atspi.Component.get_accessible_at_point``
where no child holds it), then climbs from that accessible towards its window and says whether one of them has the
label's role and name (or, for a text label, its words).

Its own coordinate handling: screen coordinates for every toolkit but GTK 4, whose components answer in coordinates
relative to the window's content; for GTK 4 the point is moved into that frame with the app's X window's geometry
as ``xwininfo`` reports it (its absolute origin, inside a window manager's frame if any, plus the client-side shadow
margin); on a scaled display, a toolkit whose window is the X window over the scale answers in logical pixels, so
the point is divided by the scale (a window manager's frame makes a toolkit's window a few pixels larger than its X
window: GTK 3 reports the frame's extents). A GTK 4 popover is an X window of its own whose extents GTK 4 gives at
another place of the window's content: a point in that X window is moved into the popover's extents (its top left
the X window's) and looked up from the popover.

stdin: ``{"points": [{"x": .., "y": .., "text": .., "role": ..}, ...], "scale": ..}`` (screen pixels; ``role`` the
labels' ARIA-style role or null for a text; ``scale`` the display's). stdout: ``{"results": [{"ok": bool, "found":
[[role, name], ...]}, ...], "toolkit": ...}``. The app's pid comes in ``SCREENMILL_APP_PID``.
"""

import json
import os
import subprocess
import sys
import warnings

warnings.filterwarnings("ignore")
import gi  # noqa: E402

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402

# The checker's own reading of AT-SPI roles in the labels' vocabulary.
ARIA = {
    "push button": "button",
    "toggle button": "button",
    "button": "button",
    "menu": "menuitem",
    "menu item": "menuitem",
    "check menu item": "menuitemcheckbox",
    "radio menu item": "menuitemradio",
    "check box": "checkbox",
    "radio button": "radio",
    "page tab": "tab",
    "table cell": "gridcell",
    "combo box": "combobox",
    "text": "textbox",
    "entry": "textbox",
    "list item": "option",
    "spin button": "spinbutton",
    "slider": "slider",
    "link": "link",
    "image": "img",
    "icon": "img",
}


def words(node):
    """The names a person could read off ``node``: its name (a doubled ``"7 7"`` also as ``"7"``) and its text."""
    out = set()
    try:
        name = " ".join((node.get_name() or "").split())
    except Exception:  # noqa: BLE001
        name = ""
    if name:
        out.add(name.casefold())
        half = name.split(" ")
        if len(half) % 2 == 0 and half[: len(half) // 2] == half[len(half) // 2 :]:
            out.add(" ".join(half[: len(half) // 2]).casefold())
    try:
        ti = node.get_text_iface()
        if ti is not None and ti.get_character_count():
            out.add(" ".join(ti.get_text(0, min(ti.get_character_count(), 400)).split()).casefold())
    except Exception:  # noqa: BLE001
        pass
    return out


def find_app(pid):
    desktop = Atspi.get_desktop(0)
    for i in range(desktop.get_child_count()):
        app = desktop.get_child_at_index(i)
        try:
            if app is not None and app.get_process_id() == pid:
                return app
        except Exception:  # noqa: BLE001
            continue
    return None


def x_geometries(pid):
    """The app's visible X windows (``xdotool search --pid``) where the X server has them (``xwininfo``'s absolute
    origin and size): ``(x, y, width, height)`` each. Not ``xdotool getwindowgeometry``: for a window a window
    manager reparented into its frame it adds the frame's offset twice (4, 22 px too far under JWM)."""
    ids = subprocess.run(["xdotool", "search", "--onlyvisible", "--pid", str(pid)], capture_output=True, text=True)
    out = []
    for wid in ids.stdout.split():
        info = subprocess.run(["xwininfo", "-id", wid], capture_output=True, text=True).stdout
        g = {}
        for line in info.splitlines():
            key, _, value = line.strip().partition(":")
            if key in ("Absolute upper-left X", "Absolute upper-left Y", "Width", "Height"):
                g[key] = int(value)
        if len(g) == 4:
            out.append((g["Absolute upper-left X"], g["Absolute upper-left Y"], g["Width"], g["Height"]))
    return out


def frame_transform(pid, frame, gtk4, scale):
    """``(dx, dy, k)``: the toolkit's point for a screen pixel (x, y) is ``((x - dx) / k, (y - dy) / k)``. ``k`` is
    the display's scale where the toolkit answers in logical pixels (its window is the X window over the scale);
    GTK 4 answers relative to its window's content: ``dx, dy`` are the X window's origin + its shadow margin."""
    ext = frame.get_extents(Atspi.CoordType.WINDOW if gtk4 else Atspi.CoordType.SCREEN)
    if ext.width <= 0:
        return 0, 0, 1
    best = None
    for x, y, w, h in x_geometries(pid):
        k = scale if abs(w / ext.width - scale) < abs(w / ext.width - 1) else 1
        margin_x, margin_y = (w - ext.width * k) / 2, (h - ext.height * k) / 2
        if gtk4 and margin_x >= 0 and abs(margin_x - margin_y) < 1:
            best = (x + margin_x, y + margin_y, k)
        elif not gtk4 and abs(ext.width * k - w) <= max(2, 0.05 * w):  # a window manager's frame: a few px more
            best = best or (0, 0, k)
    return best or (0, 0, 1)


def popovers(pid, frame, gtk4, scale, limit=3000):
    """GTK 4's open popovers under ``frame``: ``[(node, (dx, dy, k)), ...]``, topmost last. A GTK 4 popover is a
    surface of its own (an X window of its size, ``xdotool``'s geometry), but its extents are given relative to the
    window's content at another place: its subtree's point for a screen pixel (x, y) is ``((x - dx) / k, ...)`` with
    ``dx`` the X window's origin minus the popover's own extents (so its top left is the X window's)."""
    if not gtk4:
        return []
    geos = x_geometries(pid)
    out, stack = [], [frame]
    while stack and limit > 0:
        node = stack.pop()
        limit -= 1
        try:
            role = node.get_role_name()
            kids = [node.get_child_at_index(i) for i in range(min(node.get_child_count(), 500))]
        except Exception:  # noqa: BLE001
            continue
        if role in ("menu", "popup menu") and node != frame:
            e = node.get_extents(Atspi.CoordType.WINDOW)
            for x, y, w, h in geos:
                k = scale if abs(w / max(e.width, 1) - scale) < abs(w / max(e.width, 1) - 1) else 1
                if e.width > 0 and abs(w - e.width * k) <= 1 and abs(h - e.height * k) <= 1:
                    out.append((node, (x - e.x * k, y - e.y * k, k)))
                    break
        stack += [c for c in reversed(kids) if c is not None and shown(c)]
    return out


def contains(node, x, y, coord):
    try:
        e = node.get_extents(coord)
    except Exception:  # noqa: BLE001
        return False
    return e.width > 0 and e.height > 0 and e.x <= x < e.x + e.width and e.y <= y < e.y + e.height


def shown(node):
    try:
        states = node.get_state_set()
    except Exception:  # noqa: BLE001
        return False
    return states.contains(Atspi.StateType.SHOWING) or states.contains(Atspi.StateType.VISIBLE)


def deepest(frame, x, y, coord):
    """The deepest accessible at the point: at each level the last shown child holding the point (children paint in
    order, the last on top: Qt's own answer is the first child holding it, the one under an overlay), else the last
    shown child of a page tab holding it (GTK 3: a small tab box, its page below it), else what the toolkit
    answers (``get_accessible_at_point``), else this node."""
    node = frame
    for _ in range(80):
        child = None
        try:
            n = node.get_child_count()
        except Exception:  # noqa: BLE001
            n = 0
        kids = [c for c in (node.get_child_at_index(i) for i in range(min(n, 500))) if c is not None and shown(c)]
        for c in reversed(kids):
            if contains(c, x, y, coord):
                child = c
                break
        tabs = [c for c in kids if child is None and c.get_role_name() == "page tab"]
        for c in reversed(tabs):  # a GTK 3 tab holds its page, painted below the tab's own small box
            grand = [g for g in (c.get_child_at_index(i) for i in range(min(c.get_child_count(), 500))) if g]
            held = [g for g in grand if shown(g) and contains(g, x, y, coord)]
            if held:
                child = held[-1]
                break
        if child is None:
            try:
                child = node.get_accessible_at_point(int(x), int(y), coord)
            except Exception:  # noqa: BLE001
                child = None
            if child is not None and (child == node or not shown(child)):
                child = None
        if child is None:
            return node
        node = child
    return node


def open_menu_items(frame, coord, limit=3000):
    """The items of the menus open over ``frame`` (an item SHOWING under a ``menu`` or ``popup menu``): a popup is
    painted above the window, so at its points it is what a person sees, whatever lies under it in the tree."""
    out, stack = [], [(frame, False)]
    while stack and limit > 0:
        node, in_menu = stack.pop()
        limit -= 1
        try:
            role = node.get_role_name()
            states = node.get_state_set()
            kids = [node.get_child_at_index(i) for i in range(min(node.get_child_count(), 500))]
        except Exception:  # noqa: BLE001
            continue
        if in_menu and states.contains(Atspi.StateType.SHOWING):
            out.append(node)
        menu = role in ("menu", "popup menu")  # GTK's menu; Qt 5's popup under its menu bar's item
        stack += [(k, menu) for k in kids if k is not None and (shown(k) or menu)]
    return out


def check(point, frame, x, y, coord, items=(), start=None):
    held = [i for i in items if contains(i, x, y, coord)]
    node, seen, found = held[-1] if held else deepest(start or frame, x, y, coord), set(), []
    want_text = (point.get("text") or "").casefold()
    role = point.get("role")
    while node is not None and node != frame:
        seen |= words(node)
        r = node.get_role_name()
        found.append([r, node.get_name() or ""])
        if (want_text in seen or not want_text) and (role is None or ARIA.get(r) == role):  # no text: the role
            return True, found
        node = node.get_parent()
    return False, found


def main():
    request = json.loads(sys.stdin.read())
    pid = int(os.environ["SCREENMILL_APP_PID"])
    app = find_app(pid)
    if app is None:
        print(json.dumps({"error": "app not on the bus"}))
        return 1
    toolkit = (app.get_toolkit_name() or "") + " " + (app.get_toolkit_version() or "")
    gtk4 = toolkit.lower().startswith("gtk 4")
    frames = [app.get_child_at_index(i) for i in range(app.get_child_count())]
    results = []
    scale = float(request.get("scale", 1))
    transforms = [frame_transform(pid, f, gtk4, scale) for f in frames]
    coord = Atspi.CoordType.WINDOW if gtk4 else Atspi.CoordType.SCREEN
    items = [open_menu_items(f, coord) for f in frames]
    pops = [(f, p, t) for f in frames for p, t in popovers(pid, f, gtk4, scale)]
    for point in request["points"]:
        ok, found, over = False, [], False
        for frame, pop, (dx, dy, k) in reversed(pops):  # a popover is painted over its window: what is there
            x, y = (point["x"] - dx) / k, (point["y"] - dy) / k
            if contains(pop, x, y, coord):
                ok, found = check(point, frame, x, y, coord, start=pop)
                over = True
                break
        for frame, (dx, dy, k), menu in zip(frames, transforms, items, strict=True):
            x, y = (point["x"] - dx) / k, (point["y"] - dy) / k
            if over or not contains(frame, x, y, coord) and not any(contains(i, x, y, coord) for i in menu):
                continue
            ok, found = check(point, frame, x, y, coord, menu)
            if ok:
                break
        results.append({"ok": ok, "found": found})
    print(json.dumps({"results": results, "toolkit": toolkit}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
