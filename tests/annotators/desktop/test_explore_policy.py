"""The desktop explorer's policy on hand-made elements (the real apps: tests/stages/test_render_apps.py)."""

from __future__ import annotations

from screenmill.annotators.desktop.explore import candidates


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
