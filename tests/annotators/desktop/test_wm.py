"""The session's window manager (:mod:`screenmill.annotators.desktop.wm`): apps framed with a title bar and placed
the same way every time, the title bar's buttons never labelled; GTK 4's window-relative boxes corrected for a
frame as for a client-side shadow."""

from __future__ import annotations

import pytest
from screenmill.annotators.desktop import a11y, wm
from screenmill.annotators.desktop.session import Capture, SessionConfig


def _capture(window_box, x_window, node_win) -> Capture:
    node = {"path": [0, 0], "role": "push button", "name": "7", "states": ["visible", "showing", "enabled"]}
    node |= {"win": node_win, "screen": node_win, "window": 0, "children": 0, "text": None}
    win = {"role": "frame", "name": "app", "box": window_box, "showing": True, "active": True}
    return Capture(b"", [node], [win], [["0x1", *x_window]], "GTK", "4.8.3", "")


@pytest.mark.parametrize(
    ("x_window", "want"),
    [
        ([100, 50, 300 + 2 * 12, 200 + 2 * 12], (112 + 10, 62 + 20)),  # a client-side shadow of 12 px all round
        ([100, 50, 300 + 2 * 4, 200 + 22 + 4], (104 + 10, 72 + 20)),  # a frame: border 4, title bar 22
    ],
)
def test_gtk4_window_relative_boxes_land_on_the_screen_inside_a_shadow_or_a_frame(x_window, want):
    cap = _capture([0, 0, 300, 200], x_window, [10, 20, 30, 40])
    (_, k, offset) = a11y.own_x_windows(cap, True, 1.0)[0]
    x0, y0, x1, y1 = a11y.screen_box(cap.nodes[0], k, offset, True)
    assert (x0, y0) == want and (x1 - x0, y1 - y0) == (30, 40)


def test_gtk4_boxes_follow_the_client_window_inside_a_frame_of_any_extents():
    """With the frame read (the client window's geometry, the manager's extents) a framed GTK 4 window's content is
    its client window: right whatever the frame's border below; the equal-margins guess is off by a thicker one."""
    cap = _capture([0, 0, 300, 200], [100, 50, 300 + 2 * 4, 200 + 22 + 10], [10, 20, 30, 40])  # bottom border 10
    guessed = a11y.screen_box(cap.nodes[0], *a11y.own_x_windows(cap, True, 1.0)[0][1:], True)
    assert guessed[:2] == (104 + 10, 50 + 28 + 20)  # the rule without facts puts it 6 px too low
    cap.frames = [{"client": [104, 72, 300, 200], "extents": [4, 4, 22, 10], "title": "app"}]
    (_, k, offset) = a11y.own_x_windows(cap, True, 1.0)[0]
    assert a11y.screen_box(cap.nodes[0], k, offset, True)[:2] == (104 + 10, 72 + 20)


def test_title_bars_come_from_the_frames_and_only_uncovered_framed_ones_count():
    framed = {"client": [104, 72, 300, 200], "extents": [4, 4, 22, 4], "title": " Notes - mousepad "}
    cap = _capture([0, 0, 300, 200], [100, 50, 308, 226], [10, 20, 30, 40])
    assert wm.title_bars(cap, (1024, 768)) == ()  # frames not read: nothing guessed
    cap.frames = [framed]
    (bar,) = wm.title_bars(cap, (1024, 768))
    assert (bar.title, bar.x0, bar.y0, bar.x1, bar.y1) == ("Notes - mousepad", 100, 50, 408, 72)
    unframed = [framed | {"extents": [0, 0, 0, 0]}, framed | {"extents": None}, framed | {"title": ""}, None]
    for frame in unframed:  # drawn by the client, no window manager, no title, not read
        cap.frames = [frame]
        assert wm.title_bars(cap, (1024, 768)) == ()
    cap.x_windows.append(["0x2", 150, 40, 200, 100])  # a window mapped later over the bar's centre
    cap.frames = [framed, {"client": [150, 40, 200, 100], "extents": [0, 0, 0, 0], "title": "popup"}]
    assert wm.title_bars(cap, (1024, 768)) == ()
    cap.x_windows[1][1] = 600  # moved off the bar
    assert [b.title for b in wm.title_bars(cap, (1024, 768))] == ["Notes - mousepad"]
    assert wm.title_bars(cap, (300, 768))[0].x1 == 300  # clipped to the screen


def test_the_window_manager_is_checked():
    assert SessionConfig().window_manager == wm.DEFAULT == "jwm"
    with pytest.raises(ValueError, match="window manager"):
        SessionConfig(window_manager="twm")


@pytest.mark.slow
def test_apps_are_framed_centred_and_the_title_bar_is_not_labelled():
    from screenmill.annotators.desktop.apps import AppSpec
    from screenmill.annotators.desktop.session import DesktopSession, check_tools
    from screenmill.annotators.dom.page import Viewport

    try:
        check_tools()
    except RuntimeError as e:
        pytest.skip(str(e))
    app = AppSpec("galculator", ("galculator",))
    got = {}
    for name in ("jwm", "none"):
        session = DesktopSession(Viewport(1024, 768), SessionConfig(window_manager=name)).start()
        try:
            session.run_app(app)
            cap = session.capture(app)
        finally:
            session.close()
        (win,) = [w for w in cap.windows if w["box"] and w["box"][2] > 100]
        frame = max(cap.x_windows, key=lambda x: x[3] * x[4])  # the app's (framed) window
        els = a11y.elements(cap, (1024, 768), 1.0)
        got[name] = (win["box"], frame, els, cap.frame_sha)
    (bx, by, bw, bh), frame, els, _ = got["jwm"]
    bare_box, bare_frame, bare_els, _ = got["none"]
    assert bare_box[:2] == [0, 0] and bare_frame[1:] == bare_box  # undecorated, top left
    # framed: GTK 3 gives the frame's box for its window; a border of 4 and a title bar of 22 around the client
    assert frame[1:] == [bx, by, bw, bh] and (bw, bh) == (bare_box[2] + 8, bare_box[3] + 26)
    cx, cy = bx + 4, by + 22  # the client's origin
    assert abs(cx + bare_box[2] / 2 - 512) <= 1 and abs(cy + bare_box[3] / 2 - 384) <= 1  # centred
    assert {e["name"] or e["text"] for e in els} >= {"7", "File"}
    assert all(e["box"][1] >= cy for e in els)  # nothing labelled on the title bar (the WM draws it)
    moved = [[x0 + cx, y0 + cy, x1 + cx, y1 + cy] for x0, y0, x1, y1 in (e["box"] for e in bare_els)]
    assert moved == [e["box"] for e in els]  # the same elements, moved into the frame
