"""The accessibility labeller's name cleaning and filters on a hand-made capture (the real apps: tests/stages/
test_render_apps.py)."""

from __future__ import annotations

from screenmill.annotators.desktop.a11y import clean_name, elements
from screenmill.annotators.desktop.session import Capture


def test_developer_names_are_dropped_and_doubled_names_halved():
    assert clean_name("GtkMenuButton") is None and clean_name("AdwGizmo") is None and clean_name("QWidget") is None
    assert clean_name("7 7") == "7" and clean_name("mod mod") == "mod" and clean_name("New  Tab") == "New Tab"
    assert clean_name("Gtk rocks") == "Gtk rocks" and clean_name("") is None and clean_name("7 7 7") == "7 7 7"
    # the wording module's cleaning, as for DOM names: an icon-font glyph is no name, a zero-width space goes
    assert clean_name("\ue5cd") is None and clean_name("\ue5cd Close") == "Close"
    assert clean_name("Sa\u200bve") == "Save"


def _node(path, role, name, screen, window=0, states=("visible", "showing", "enabled"), text=None):
    return {"path": path, "role": role, "name": name, "text": text, "states": list(states), "screen": screen,
            "win": screen, "window": window}  # fmt: skip


def test_filters_occlusion_and_a_controls_own_label():
    frame = {"role": "frame", "name": "App", "box": [0, 0, 400, 300]}
    nodes = [
        _node([0, 0], "push button", "GtkButton", [10, 10, 50, 30]),
        _node([0, 0, 0], "label", "Save", [12, 12, 40, 20], text="Save"),  # the button's own label
        _node([0, 1], "push button", "Off", [100, 10, 50, 30], states=("visible", "showing")),  # disabled
        _node([0, 2], "push button", "Hidden", [160, 10, 50, 30], states=("enabled",)),  # not visible
        _node([0, 3], "push button", "Under", [10, 200, 50, 30]),  # under the popup window
        _node([0, 4], "push button", "Zero", [300, 10, 0, 30]),
        _node([0, 5], "push button", "Past", [390, 10, 50, 30]),  # centre outside its window
        _node([0, 6], "panel", "Box", [0, 0, 400, 300]),  # a role that is not labelled
    ]
    capture = Capture(b"", nodes, [frame], [["0x1", 0, 0, 400, 300], ["0x2", 0, 180, 200, 100]], "gtk", "3.24", "")
    els = elements(capture, (1280, 800), 1.0)
    assert [(e["role"], e["name"], e["text"]) for e in els] == [("button", None, "Save")]
    assert els[0]["box"] == [10, 10, 60, 40] and els[0]["point"] == [35, 25]


def test_gtk4_boxes_are_moved_by_the_window_origin_and_margin():
    frame = {"role": "frame", "name": "App", "box": [0, 0, 300, 200]}
    node = _node([0, 0], "push button", "7 7", [16, 20, 40, 30], states=("visible", "sensitive"))
    capture = Capture(b"", [node], [frame], [["0x1", 100, 50, 310, 210]], "GTK", "4.8.3", "")
    (el,) = elements(capture, (1280, 800), 1.0)
    assert el["name"] == "7" and el["box"] == [121, 75, 161, 105]
