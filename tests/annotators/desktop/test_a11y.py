"""The accessibility labeller's name cleaning and filters on a hand-made capture (the real apps: tests/stages/
test_render_apps.py)."""

from __future__ import annotations

from screenmill.annotators.desktop.a11y import clean_name, clean_text, elements
from screenmill.annotators.desktop.session import Capture


def test_developer_names_are_dropped_and_doubled_names_halved():
    assert clean_name("GtkMenuButton") is None and clean_name("AdwGizmo") is None and clean_name("QWidget") is None
    assert clean_name("7 7") == "7" and clean_name("mod mod") == "mod" and clean_name("New  Tab") == "New Tab"
    assert clean_name("Gtk rocks") == "Gtk rocks" and clean_name("") is None and clean_name("7 7 7") == "7 7 7"
    # the wording module's cleaning, as for DOM names: an icon-font glyph is no name, a zero-width space goes
    assert clean_name("\ue5cd") is None and clean_name("\ue5cd Close") == "Close"
    assert clean_name("Sa\u200bve") == "Save"
    # a text is what is painted: never halved (galculator's RPN stack of four lines), cleaned otherwise
    assert clean_text("0\n0\n0\n0") == "0 0 0 0" and clean_text("7 7") == "7 7" and clean_name("0\n0\n0\n0") == "0 0"
    assert clean_text("GtkLabel") is None and clean_text(" \ue5cd ") is None


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
    assert [(e["role"], e["name"], e["text"], e.get("disabled")) for e in els] == [
        ("button", None, "Save", None),
        ("button", "Off", None, True),  # greyed: seen (below), never labelled
    ]
    assert els[0]["box"] == [10, 10, 60, 40] and els[0]["point"] == [35, 25]


def test_a_greyed_control_is_never_labelled_but_makes_an_expression_it_shares_no_ones():
    """A Qt file dialog: a greyed "Open" as large as "Cancel" (both twice the other buttons): no "the large button",
    nor a label of "Open"; "Cancel" keeps its own (cost: none, a hand-made capture)."""
    frame = {"role": "dialog", "name": "Load Session", "box": [0, 0, 400, 300]}
    nodes = [
        _node([0, 0], "push button", "Open", [200, 250, 80, 40], states=("visible", "showing")),
        _node([0, 1], "push button", "Cancel", [300, 250, 80, 40]),
        _node([0, 2], "push button", "Back", [10, 10, 20, 20]),
    ]
    capture = Capture(b"", nodes, [frame], [["0x1", 0, 0, 400, 300]], "Qt", "5.15.8", "")
    got = {(text, i) for (_, i), text in _labels(capture).items()}
    assert ("Cancel", 'click the "Cancel" button') in got and not {t for t, _ in got} & {"Open"}
    assert not [i for _, i in got if "large" in i]
    nodes[0]["states"].append("enabled")  # the control: enabled, "Open" is labelled, still no large button
    got = {(text, i) for (_, i), text in _labels(capture).items()}
    assert ("Open", 'click the "Open" button') in got and not [i for _, i in got if "large" in i]


def test_gtk4_boxes_are_moved_by_the_window_origin_and_margin():
    frame = {"role": "frame", "name": "App", "box": [0, 0, 300, 200]}
    node = _node([0, 0], "push button", "7 7", [16, 20, 40, 30], states=("visible", "sensitive"))
    capture = Capture(b"", [node], [frame], [["0x1", 100, 50, 310, 210]], "GTK", "4.8.3", "")
    (el,) = elements(capture, (1280, 800), 1.0)
    assert el["name"] == "7" and el["box"] == [121, 75, 161, 105]


def test_gtk4_popover_items_are_placed_in_the_popovers_own_x_window():
    """gnome-calculator's mode popover as read: GTK 4 gives the popover's box at (105, 6) of the window's content, but
    it is an X window of its own at (469, 189) of its size; its items lie at their offset from the popover there (and
    a popover without an X window of its size is not on the screen)."""
    frame = {"role": "frame", "name": "Calculator", "box": [0, 0, 355, 486]}
    vis = ("visible", "sensitive")
    nodes = [
        _node([0, 0], "menu", "GtkPopoverMenu", [105, 6, 277, 232], states=vis),
        _node([0, 0, 0], "radio menu item", "Basic", [147, 46, 193, 32], states=vis),
        _node([0, 1], "popup menu", "", [10, 300, 100, 100], states=vis),  # no X window of its size
        _node([0, 1, 0], "menu item", "Gone", [12, 310, 90, 20], states=vis),
        _node([0, 2], "push button", "7 7", [16, 288, 55, 40], states=vis),
    ]
    xwins = [["0x1", 458, 165, 365, 496], ["0x2", 469, 189, 277, 232]]
    els = elements(Capture(b"", nodes, [frame], xwins, "GTK", "4.8.3", ""), (1280, 800), 1.0)
    assert [(e["name"], e["box"], e["xwin"]) for e in els] == [
        ("Basic", [511, 229, 704, 261], 1),
        ("7", [479, 458, 534, 498], 0),
    ]


def _labels(capture, families=("text", "relational", "visual", "icon")):
    from screenmill.annotators.desktop.a11y import a11y_labels
    from screenmill.annotators.wording import DOM_RECIPE_FAMILIES
    from screenmill.schemas.records import Screenshot, utcnow

    shot = Screenshot("s" * 64, "x.png", 400, 300, "png", "RGB", 1, 1, utcnow(), "r")
    recipes = frozenset(r for f in families for r in DOM_RECIPE_FAMILIES[f])
    els = elements(capture, (400, 300), 1.0)
    return {
        (x.recipe, x.instruction): x.element_text for x in a11y_labels(shot, els, (400, 300), 1.0, "h", "r", recipes)
    }


def test_relational_expressions_from_the_tree_menu_bar_rows_dialog_and_icons():
    """The DOM's relation rules over an app's accessibles: a menu bar's items (not those of its open menu), a button
    in the row of a cell no other row holds, a dialog's button, an icon button (a picture inside), the large one."""
    frame = {"role": "frame", "name": "App", "box": [0, 0, 400, 300]}
    dialog = {"role": "dialog", "name": "Ask", "box": [200, 150, 200, 150]}
    nodes = [
        _node([0, 0], "menu bar", "", [0, 0, 400, 20]),
        _node([0, 0, 0], "menu", "File", [0, 0, 40, 20]),
        _node([0, 0, 0, 0], "menu item", "Open", [0, 20, 80, 20]),  # in the open menu's popup, not in the bar
        _node([0, 1], "table row", "", [0, 40, 190, 30]),
        _node([0, 1, 0], "label", "Alice Smith", [0, 40, 100, 30], text="Alice Smith"),
        _node([0, 1, 1], "push button", "Edit", [110, 40, 40, 30]),
        _node([0, 2], "table row", "", [0, 80, 190, 30]),
        _node([0, 2, 0], "label", "Bob Jones", [0, 80, 100, 30], text="Bob Jones"),
        _node([0, 2, 1], "push button", "Edit", [110, 80, 40, 30]),
        _node([0, 3], "push button", "Settings", [10, 120, 24, 24]),
        _node([0, 3, 0], "icon", "", [14, 124, 16, 16]),
        _node([0, 4], "push button", "Go", [10, 160, 150, 80]),
        _node([1, 0], "push button", "OK", [300, 260, 40, 24], window=1),
    ]
    x_windows = [["0x1", 0, 0, 400, 300], ["0x3", 0, 20, 80, 20], ["0x2", 200, 150, 200, 150]]
    got = _labels(Capture(b"", nodes, [frame, dialog], x_windows, "gtk", "3.24", ""))
    text = ("a11y-text", "a11y-name", "a11y-role", "a11y-field", "a11y-position", "a11y-name-position")
    rel = {k: v for k, v in got.items() if k[0] not in text}
    assert rel == {
        ("a11y-landmark", 'click the "File" menu item in the menu bar'): "File",
        ("a11y-row", 'click the "Edit" button in the row of "Alice Smith"'): "Edit",
        ("a11y-row", 'click the "Edit" button in the row of "Bob Jones"'): "Edit",
        ("a11y-icon", "click the settings icon"): "Settings",
        ("a11y-size", "click the large button"): "Go",
        ("a11y-landmark", 'click the "OK" button in the dialog'): "OK",
    }
    assert not [k for k in got if k[0] == "a11y-landmark" and "Open" in k[1]]
    assert {k for k in _labels(Capture(b"", nodes, [frame, dialog], x_windows, "gtk", "3.24", ""), ("text",))} == {
        k for k in got if k[0] in text
    }  # the text recipes are the same with or without the others


def test_colours_come_from_the_screenshot_pixels_and_only_a_distinctive_one_is_named():
    import io

    from PIL import Image, ImageDraw
    from screenmill.annotators.desktop.a11y import a11y_labels
    from screenmill.annotators.wording import DOM_RECIPE_FAMILIES
    from screenmill.schemas.records import Screenshot, utcnow

    im = Image.new("RGB", (400, 300), (235, 235, 235))
    d = ImageDraw.Draw(im)
    d.rectangle([20, 20, 79, 59], fill=(30, 90, 220))  # blue, white text
    d.text((30, 30), "Send", fill=(255, 255, 255))
    d.rectangle([120, 20, 179, 59], fill=(210, 210, 210))  # grey with a green glyph (8 %): it could be called green
    d.rectangle([130, 30, 139, 49], fill=(40, 180, 60))
    d.rectangle([220, 20, 279, 59], fill=(40, 180, 60))  # green: but not the only one that could be called so
    png = io.BytesIO()
    im.save(png, "PNG")
    frame = {"role": "frame", "name": "App", "box": [0, 0, 400, 300]}
    nodes = [
        _node([0, 0], "push button", "Send", [20, 20, 60, 40]),
        _node([0, 1], "push button", "Later", [120, 20, 60, 40]),
        _node([0, 2], "push button", "Stop", [220, 20, 60, 40]),
    ]
    capture = Capture(png.getvalue(), nodes, [frame], [["0x1", 0, 0, 400, 300]], "gtk", "3.24", "")
    shot = Screenshot("s" * 64, "x.png", 400, 300, "png", "RGB", 1, 1, utcnow(), "r")
    els = elements(capture, (400, 300), 1.0)
    labels = a11y_labels(shot, els, (400, 300), 1.0, "h", "r", frozenset(DOM_RECIPE_FAMILIES["visual"]), capture.png)
    assert [(x.recipe, x.instruction, x.element_text) for x in labels] == [
        ("a11y-colour", "click the blue button", "Send")
    ]
    assert labels[0].recipe_version == "1+r5"
    els = elements(capture, (400, 300), 1.0)  # unpainted
    no_png = a11y_labels(shot, els, (400, 300), 1.0, "h", "r", frozenset(DOM_RECIPE_FAMILIES["visual"]))
    assert [x.recipe for x in no_png] == []  # no pixels, no colour; nor a large button among equals


def test_two_windows_at_one_place_are_told_apart_by_their_titles():
    """mousepad's "New Window" is mapped exactly over the first (JWM places both alike): each accessible window is
    matched to the X window of its title, so the top one's elements are labelled and the one below is covered."""
    wins = [{"role": "frame", "name": f"Untitled {i} - Mousepad", "box": [316, 138, 648, 506]} for i in (1, 2)]
    nodes = [_node([w, 0], "menu", "File", [320, 160, 40, 20], window=w) for w in (0, 1)]
    nodes += [_node([1, 1], "push button", "Only in the second", [400, 300, 80, 30], window=1)]
    xwins = [["0x200032", 316, 138, 648, 506], ["0x200043", 316, 138, 648, 506]]
    frames = [{"client": [320, 160, 640, 480], "extents": [4, 4, 22, 4], "title": w["name"]} for w in wins]
    els = elements(Capture(b"", nodes, wins, xwins, "gtk", "3.24", "", frames), (1280, 800), 1.0)
    assert [(e["name"], e["path"][0], e["xwin"]) for e in els] == [("File", 1, 1), ("Only in the second", 1, 1)]
    # the stacking order reversed (the first window raised): the first window's elements, none of the second's
    raised = elements(Capture(b"", nodes, wins, xwins, "gtk", "3.24", "", frames[::-1]), (1280, 800), 1.0)
    assert [(e["name"], e["path"][0]) for e in raised] == [("File", 0)]


def test_an_editable_node_of_any_text_role_is_a_text_field_not_a_crash():
    """An editable ``paragraph`` (a document's text, as word processors expose it) is a field like an editable
    ``text``: before, a text role other than ``text`` was looked up in ROLES and raised KeyError, failing the run."""
    frame = {"role": "frame", "name": "Doc", "box": [0, 0, 400, 300]}
    editable = ("visible", "showing", "enabled", "editable")
    nodes = [
        _node([0, 0], "paragraph", "Body", [10, 10, 200, 20], states=editable, text="Hello"),
        _node([0, 1], "text", "Title", [10, 40, 200, 20], states=editable, text="Hi"),
        _node([0, 2], "paragraph", "", [10, 70, 200, 20], text="Read only"),
    ]
    els = elements(Capture(b"", nodes, [frame], [["0x1", 0, 0, 400, 300]], "gtk", "3.24", ""), (1280, 800), 1.0)
    assert [(e["kind"], e["role"], e["name"], e["text"]) for e in els] == [
        ("control", "textbox", "Body", None),
        ("control", "textbox", "Title", None),
        ("text", None, None, "Read only"),
    ]


def test_windows_of_a_scaled_display_are_matched_in_screen_pixels():
    """At scale 2 a toolkit's boxes are logical px, its X windows screen px: matched by overlap and size after the
    box is scaled. Before, a Qt dialog's logical box overlapped the main X window more than its own, so the dialog
    was taken for the main window and its button dropped as covered by its own X window; a GTK 4 window was matched
    by a margin of mixed units and put its button in another X window (a popup 320x200 px)."""
    dialog = {"role": "dialog", "name": "Ask", "box": [300, 250, 150, 100]}
    wins = [{"role": "frame", "name": "Main", "box": [200, 150, 400, 300]}, dialog]
    nodes = [
        _node([0, 0], "push button", "Main", [210, 160, 40, 20]),
        _node([1, 0], "push button", "OK", [350, 300, 40, 20], 1),
    ]
    xwins = [["0x1", 400, 300, 800, 600], ["0x2", 600, 500, 300, 200]]
    els = elements(Capture(b"", nodes, wins, xwins, "Qt", "5.15.8", ""), (1600, 1200), 2.0)
    assert [(e["name"], e["xwin"], e["box"]) for e in els] == [
        ("Main", 0, [210, 160, 250, 180]),
        ("OK", 1, [350, 300, 390, 320]),
    ]
    frame = {"role": "frame", "name": "Calculator", "box": [0, 0, 300, 200]}
    node = _node([0, 0], "push button", "7", [10, 20, 30, 40], states=("visible", "sensitive"))
    xwins = [["0x1", 100, 50, 600, 400], ["0x2", 800, 100, 320, 200]]
    (el,) = elements(Capture(b"", [node], [frame], xwins, "GTK", "4.8.3", ""), (1600, 1200), 2.0)
    assert (el["xwin"], el["box"]) == (0, [60, 45, 90, 85])
    # a toolkit of screen px (k 1) at scale 2: its dialog's box doubled would lie inside the main X window, more
    # pixels than its own X window's; the share of the box covered tells (both whole: then by size, its own)
    wins = [{"role": "frame", "name": "Main", "box": [0, 0, 1600, 1200]}, dialog | {"box": [100, 100, 300, 200]}]
    nodes = [
        _node([0, 0], "push button", "Main", [1000, 1000, 40, 20]),
        _node([1, 0], "push button", "OK", [150, 150, 40, 20], 1),
    ]
    xwins = [["0x1", 0, 0, 1600, 1200], ["0x2", 100, 100, 300, 200]]
    els = elements(Capture(b"", nodes, wins, xwins, "Qt", "5.15.8", ""), (1600, 1200), 2.0)
    assert [(e["name"], e["xwin"], e["box"]) for e in els] == [
        ("Main", 0, [500, 500, 520, 510]),
        ("OK", 1, [75, 75, 95, 85]),
    ]


def test_a_side_bars_edge_is_measured_in_logical_px_whatever_px_the_toolkit_reports():
    """SIDE_EDGE is logical px: at scale 2 it is twice as many screen px, also when the toolkit reports screen px
    (k 1). Before, the edge was SIDE_EDGE x k: a bar 10 logical px in from its window's edge was one for a toolkit
    of logical px and none for one of screen px, on the same screen."""
    frame = {"role": "frame", "name": "App", "box": [0, 0, 800, 600]}
    nodes = [_node([0, 0], "panel", "", [20, 40, 100, 500]) | {"children": 2}]
    nodes += [_node([0, 0, i], "push button", f"B{i}", [30, 60 + 50 * i, 80, 40]) for i in range(2)]
    xwins = [["0x1", 0, 0, 800, 600]]
    els = elements(Capture(b"", nodes, [frame], xwins, "gtk", "3.24", ""), (800, 600), 2.0)
    assert [(e["name"], (e["rel"]["region"] or {}).get("kind")) for e in els] == [("B0", "side"), ("B1", "side")]


def test_a_short_capitalised_word_after_q_is_a_name_not_a_qt_class():
    """A Qt class name (``QWidget``, ``QLCDNumber``) has a lower-case letter after its ``Q``: "QR", "QA", "QWERTY"
    are what a button or a label shows. Before, any ``Q`` + capital was dropped as a developer's name."""
    assert [clean_name(n) for n in ("QR", "QA", "QWERTY")] == ["QR", "QA", "QWERTY"] and clean_text("QR") == "QR"
    assert {clean_name(n) for n in ("QWidget", "QLCDNumber", "QMenuBar", "QLineEdit", "GtkBox", "AdwGizmo")} == {None}


def test_a_window_that_is_not_showing_takes_no_x_window():
    """The agent lists every top-level accessible, a hidden one too (no nodes under it). Before, a hidden window
    was matched first and took an X window, so with two windows at one place and no titles read the top one was
    matched to the X window below and its elements lost, the lower one's labelled instead."""
    hidden = {"role": "dialog", "name": "Preferences", "box": [400, 250, 300, 200], "showing": False}
    wins = [{"role": "frame", "name": f"Untitled {i}", "box": [316, 138, 648, 506], "showing": True} for i in (1, 2)]
    nodes = [_node([w, 0], "menu", "File", [320, 160, 40, 20], window=w) for w in (1, 2)]
    nodes += [_node([2, 1], "push button", "Only in the second", [400, 300, 80, 30], window=2)]
    xwins = [["0x200032", 316, 138, 648, 506], ["0x200043", 316, 138, 648, 506]]
    els = elements(Capture(b"", nodes, [hidden, *wins], xwins, "gtk", "3.24", ""), (1280, 800), 1.0)
    assert [(e["name"], e["path"][0], e["xwin"]) for e in els] == [("File", 2, 1), ("Only in the second", 2, 1)]
