"""The live accessibility tree of the session's app, for the referring-expression checker (tests/annotators/desktop/
referring.py), run *inside* a fresh desktop session (system Python + gi) and written apart from the labeller.

Its own walk: from each of the app's windows down through shown children (at most 5000 nodes), each node's role,
name, text and box in screen pixels (the window frame transform of ``point_check.py``, the point checker's own
coordinate handling, not the labeller's; a GTK 4 popover's subtree by the popover's own X window). stdin:
``{"scale": ..}``; stdout: ``{"nodes": [{"role", "name", "text", "box": [x0, y0, x1, y1], "depth", "window_role",
"active"}, ...]}``, in tree order (``active``: the node's window is AT-SPI's ACTIVE one). The app's pid comes in
``SCREENMILL_APP_PID``.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import point_check  # noqa: E402  (the point checker's window transform and helpers)
from point_check import Atspi  # noqa: E402


def main():
    request = json.loads(sys.stdin.read() or "{}")
    pid = int(os.environ["SCREENMILL_APP_PID"])
    app = point_check.find_app(pid)
    if app is None:
        print(json.dumps({"error": "app not on the bus"}))
        return 1
    toolkit = (app.get_toolkit_name() or "") + " " + (app.get_toolkit_version() or "")
    gtk4 = toolkit.lower().startswith("gtk 4")
    coord = Atspi.CoordType.WINDOW if gtk4 else Atspi.CoordType.SCREEN
    scale = float(request.get("scale", 1))
    nodes = []
    for i in range(app.get_child_count()):
        frame = app.get_child_at_index(i)
        if frame is None or not point_check.shown(frame):
            continue
        pops = point_check.popovers(pid, frame, gtk4, scale)
        window_role = frame.get_role_name()
        stack = [(frame, 0, point_check.frame_transform(pid, frame, gtk4, scale))]
        while stack and len(nodes) < 5000:
            node, depth, (dx, dy, k) = stack.pop()
            dx, dy, k = next((t for p, t in pops if p == node), (dx, dy, k))  # a popover: its own surface
            try:
                e = node.get_extents(coord)
                text = None
                ti = node.get_text_iface()
                if ti is not None and ti.get_character_count():
                    text = ti.get_text(0, min(ti.get_character_count(), 200))
                states = node.get_state_set()
                nodes.append(
                    {
                        "role": node.get_role_name(),
                        "name": node.get_name() or "",
                        "text": text,
                        "box": [e.x * k + dx, e.y * k + dy, (e.x + e.width) * k + dx, (e.y + e.height) * k + dy],
                        "sized": e.width > 0 and e.height > 0,
                        "enabled": states.contains(Atspi.StateType.ENABLED)
                        or states.contains(Atspi.StateType.SENSITIVE),
                        "depth": depth,
                        "window": i,
                        "window_role": window_role,
                        "active": states.contains(Atspi.StateType.ACTIVE),  # its window's: the one on top
                    }
                )
                children = [node.get_child_at_index(j) for j in range(min(node.get_child_count(), 500))]
            except Exception:  # noqa: BLE001 - a node going away while read
                continue
            for child in reversed(children):
                if child is not None and point_check.shown(child):
                    stack.append((child, depth + 1, (dx, dy, k)))
    print(json.dumps({"nodes": nodes, "toolkit": toolkit}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
