"""The desktop explorer's policy on hand-made elements (the real apps: tests/stages/test_render_apps.py)."""

from __future__ import annotations

from screenmill.annotators.desktop.explore import Frame, candidates, stays
from screenmill.annotators.desktop.session import Capture
from screenmill.annotators.dom.explore import Action


def _el(name, role="menuitem", xwin=1):
    return {"kind": "control", "role": role, "name": name, "text": None, "xwin": xwin, "box": [0, 0, 10, 10]}


def test_the_ban_on_ending_the_app_holds_for_the_items_of_an_open_menu_too():
    # mousepad's File menu (seed 3 once clicked "Close Window" in it: the app exited, the episode dead-lettered)
    menu = [_el(n) for n in ("New Window", "Close Window", "Close Tab", "_Quit", "Exit", "Close", "Save")]
    left = {el["name"] for _, el in candidates(menu, set(), windows_before=1)}
    assert left == {"New Window", "Save"}
    # in the app's own window (no popup up): the same words banned, and minimise / maximise
    own = [_el(n, "button", 0) for n in ("Close", "Minimize", "Closed captions", "Open", "Quit SpeedCrunch")]
    assert {el["name"] for _, el in candidates(own, set(), None)} == {"Closed captions", "Open"}
    # a dialog's own "Close" button (a button in a popup, not a menu item) only closes the dialog: acted on
    dialog = [_el("Close", "button"), _el("Close", "menuitem"), _el("Close Window", "button")]
    assert [el["role"] for _, el in candidates(dialog, set(), windows_before=1)] == ["button"]
    # a file dialog's "Create New Folder" makes a folder the clock dates (the dialog shows it): not acted on
    files = [_el(n, "button") for n in ("Create New Folder", "New Folder", "Open", "Folders")]
    assert {el["name"] for _, el in candidates(files, set(), windows_before=1)} == {"Open", "Folders"}


def _node(path, role, name, actions=(), children=0):
    return {"path": list(path), "role": role, "name": name, "actions": list(actions), "children": children}


def test_the_pointer_stays_on_an_open_menu_item_that_opens_a_submenu_and_nowhere_else():
    # speedcrunch's open Session menu as the agent reads it (Qt 5: an item holding a submenu offers "ShowMenu"; its
    # popup menu child is not read while not showing), and mousepad's (GTK 3: a submenu's item is a "menu" itself)
    nodes = [
        _node((0, 0), "menu bar", ""),
        _node((0, 0, 0), "menu item", "Session", ["ShowMenu"], 1),  # the bar's item: parked after, as ever
        _node((0, 0, 0, 0), "popup menu", ""),
        _node((0, 0, 0, 0, 0), "menu item", "Load...", ["Press"]),
        _node((0, 0, 0, 0, 4), "menu item", "Export", ["ShowMenu"], 1),
        _node((1, 0), "menu bar", ""),
        _node((1, 0, 0), "menu", "File", ["click"], 1),
        _node((1, 0, 0, 0), "menu", ""),
        _node((1, 0, 0, 0, 2), "menu", "New From Template", ["click"]),
        _node((1, 0, 0, 0, 4), "menu item", "Open...", ["click"]),
    ]
    at = {"Session": 0, "Load...": 1, "Export": 2, "File": 3, "New From Template": 4, "Open...": 5}
    els = [
        _el(n, xwin=int(n not in ("Session", "File"))) | {"box": [0, 20 * i, 100, 20 * i + 20]} for n, i in at.items()
    ]
    for el, node in zip(els, [n for n in nodes if n["name"] in at], strict=True):
        el["path"] = node["path"]
    frame = Frame(Capture(b"", nodes, [], [["0x1", 0, 0, 800, 600], ["0x2", 0, 20, 100, 200]], "", "", ""), els)

    def click(name):
        return stays(frame, Action("click", (50.0, 20 * at[name] + 10.0), None, None, "menuitem", name))

    assert {n for n in at if click(n)} == {"Export", "New From Template"}
    assert not stays(frame, Action("click", (500.0, 500.0)))  # on no element
    assert not stays(frame, Action("key", None, "Escape"))


def test_a_mnemonic_ampersand_is_no_part_of_a_name_the_ban_compares():
    """The ban read a name without its mnemonic marks (``&``, ``_``) for its first word only: "Create New &Folder"
    and "Mi&nimize" were acted on, a dialog's "&Close" was not. Now the whole name is read without them."""
    files = [_el(n, "button") for n in ("Create New &Folder", "&Close", "_Open")]
    assert [el["name"] for _, el in candidates(files, set(), windows_before=1)] == ["&Close", "_Open"]
    own = [_el(n, "button", 0) for n in ("Mi&nimize", "Ma_ximize", "&Quit", "&Open")]
    assert [el["name"] for _, el in candidates(own, set(), None)] == ["&Open"]
