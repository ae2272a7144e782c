"""The referring expressions of DOM elements: every recipe, no ambiguous instruction, positions for repeats."""

from __future__ import annotations

import datetime as dt

from screenmill.annotators.dom.labels import choose_instructions, dom_labels
from screenmill.schemas.records import Screenshot


def el(kind="control", role="button", name=None, text=None, box=(0, 0, 10, 10), **extra):
    point = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
    return {"kind": kind, "role": role, "name": name, "text": text, "box": list(box), "point": list(point), **extra}


def instructions(elements):
    return {(c.element, c.recipe, c.instruction) for c in choose_instructions(elements)}


def test_every_recipe_applies_where_it_should():
    got = instructions(
        [
            el(name="Sign in", text="Sign in"),
            el(name="Search", text=None),  # icon-only button: by name, and by role + name
            el(role="textbox", name="Email", label="Email", placeholder="you@example.com", input_type="email"),
        ]
    )
    assert (0, "dom-text", 'click "Sign in"') in got
    assert (0, "dom-role", 'click the "Sign in" button') in got
    assert not any(i == 0 and r == "dom-name" for i, r, _ in got)  # the name is the text: said once
    assert (1, "dom-name", 'click "Search"') in got
    assert (1, "dom-role", 'click the "Search" button') in got
    assert (2, "dom-field", 'click the "Email" field') in got
    assert (2, "dom-field", 'click the field with placeholder "you@example.com"') in got


def test_repeated_names_get_positions_in_reading_order_and_no_bare_instruction():
    rows = [el(name="Edit", text="Edit", box=(100, y, 140, y + 20)) for y in (300, 100, 200)]
    got = instructions(rows)
    bare = {ins for _, _, ins in got if ins in ('click "Edit"', 'click the "Edit" button')}
    assert bare == set()
    assert (1, "dom-position", 'click the first "Edit" button') in got  # top row first, whatever the DOM order
    assert (2, "dom-position", 'click the second "Edit" button') in got
    assert (0, "dom-position", 'click the third "Edit" button') in got


def test_a_repeated_name_an_element_does_not_show_gets_a_position_of_its_own_recipe():
    # an "Up" text link between two "Up" arrow images in links: the text link keeps the bare text
    rows = [el(name="Up", text=text, box=(100, y, 140, y + 20)) for y, text in ((100, ""), (200, "Up"), (300, None))]
    got = instructions([{**r, "role": "link"} for r in rows])
    assert (1, "dom-text", 'click "Up"') in got
    assert (1, "dom-position", 'click the second "Up" link') in got
    assert (0, "dom-name-position", 'click the first "Up" link') in got
    assert (2, "dom-name-position", 'click the third "Up" link') in got


def test_same_text_on_two_roles_keeps_only_the_role_expressions():
    got = instructions(
        [
            el(role="link", name="Pricing", text="Pricing"),
            el(kind="text", role="heading", name="Pricing", text="Pricing"),
        ]
    )
    texts = {ins for _, _, ins in got}
    assert 'click "Pricing"' not in texts
    assert {'click the "Pricing" link', 'click the "Pricing" heading'} <= texts


def test_case_only_differences_are_ambiguous_too():
    got = instructions([el(name="OK", text="OK"), el(role="link", name="ok", text="ok")])
    assert not any(ins.casefold() == 'click "ok"' for _, _, ins in got)


def test_no_instruction_names_two_elements():
    rows = [el(name=n, text=n, box=(0, i * 20, 50, i * 20 + 15)) for i, n in enumerate(["A1", "B2", "A1", "C3"])]
    rows.append(el(kind="text", role="text", name="A1", text="A1", box=(60, 0, 90, 15)))
    chosen = choose_instructions(rows)
    owners = {}
    for c in chosen:
        owners.setdefault(c.instruction.casefold(), set()).add(c.element)
    assert all(len(v) == 1 for v in owners.values())


def test_labels_are_in_screenshot_pixels_with_css_pixels_as_native():
    shot = Screenshot("s" * 64, "/x.png", 1170, 2532, "PNG", "RGB", 1, 10, dt.datetime.now(dt.UTC), "r")
    (label, *_) = dom_labels(shot, [el(name="Menu", text="Menu", box=(10, 20, 50, 40))], (390, 844), 3.0, "h", "r")
    assert (label.x0, label.y0, label.x1, label.y1) == (30.0, 60.0, 150.0, 120.0)
    assert (label.click_x, label.click_y) == (90.0, 90.0)
    assert label.coord_system == "pixel_resized" and (label.ref_width, label.ref_height) == (390, 844)
    assert label.native_box == [10.0, 20.0, 50.0, 40.0] and label.confidence == 1.0 and label.annotator == "dom"


def test_visible_text_wins_over_a_name_nobody_sees():
    """A check box named by the label beside it: ``click "Remember me"`` names the label's text, which is painted."""
    got = instructions(
        [
            el(role="checkbox", name="Remember me", text=None, box=(0, 0, 12, 12)),
            el(kind="text", role="text", name="Remember me", text="Remember me", box=(20, 0, 120, 12)),
        ]
    )
    assert (1, "dom-text", 'click "Remember me"') in got
    assert not any(i == 0 and ins == 'click "Remember me"' for i, _, ins in got)
    assert (0, "dom-role", 'click the "Remember me" checkbox') in got


def test_repeated_text_without_a_role_noun_is_named_by_its_place_among_every_element_showing_it():
    rows = [
        el(kind="text", role="cell", name="Paid", text="Paid", box=(300, 100, 340, 120)),
        el(role="link", name="Paid", text="Paid", box=(10, 100, 50, 120)),  # first in reading order
        el(kind="text", role="cell", name="Paid", text="Paid", box=(300, 200, 340, 220)),
    ]
    got = instructions(rows)
    assert (0, "dom-position", 'click the second "Paid"') in got
    assert (2, "dom-position", 'click the third "Paid"') in got
    assert not any(ins.casefold() in ('click "paid"', 'click the first "paid"') for _, _, ins in got)
    assert (1, "dom-role", 'click the "Paid" link') in got  # the only link of that name


def test_a_repeated_control_no_role_noun_names_is_named_by_its_place_as_a_text_is():
    """Three ``<summary>`` "History" toggles (Chromium's role: a disclosure triangle, no noun for it) and a cell
    "History": each gets its place among all four, as the OCR producer counts what is painted. Before recipe 5 the
    toggles had no label at all: their text was ambiguous and no positional recipe spoke for a control."""
    rows = [el(role="DisclosureTriangle", name="History", text="History", box=(10, y, 80, y + 20)) for y in (100, 300)]
    rows += [el(kind="text", role="cell", name="History", text="History", box=(10, 200, 80, 220))]
    rows += [el(role="DisclosureTriangle", name="History", text="History", box=(10, 400, 80, 420))]
    got = instructions(rows)
    assert {(i, ins) for i, r, ins in got if r == "dom-position"} == {
        (0, 'click the first "History"'),
        (2, 'click the second "History"'),
        (1, 'click the third "History"'),
        (3, 'click the fourth "History"'),
    }
    assert not any(ins.casefold() == 'click "history"' for _, _, ins in got)


def test_an_element_the_screenshot_does_not_show_gets_no_label_and_no_place_among_repeats():
    shot = Screenshot("s" * 64, "/x.png", 1170, 2532, "PNG", "RGB", 1, 10, dt.datetime.now(dt.UTC), "r")
    elements = [
        el(role="link", text="Up", box=(10, 20, 50, 40)),
        el(role="link", text="Up", box=(10, 844, 50, 864)),  # starts at the screenshot's last row: not shown
        el(role="link", text="Tail", box=(10, 843.8, 50, 860)),  # 0.2 CSS px of it shown: not readable
        el(role="link", text="Down", box=(10, 830, 50, 850)),  # half shown: labelled, clamped
    ]
    labels = dom_labels(shot, elements, (390, 844), 3.0, "h", "r")
    texts = {(lb.element_text, lb.instruction) for lb in labels}
    assert {t for t, _ in texts} == {"Up", "Down"}
    assert all(lb.y1 - lb.y0 >= 3.0 for lb in labels)
    assert ("Up", 'click "Up"') in texts  # the hidden second "Up" no longer makes it "the first"
    assert max(lb.y1 for lb in labels) == 2532.0
