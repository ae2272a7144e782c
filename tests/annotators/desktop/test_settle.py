"""What makes an app's screen settle the same way every time: a Qt app's text field with the focus shows a caret that
does not blink (tests/stages/test_render_apps.py runs whole episodes twice in one session and replays them)."""

from __future__ import annotations

import subprocess
import time

import pytest

pytestmark = pytest.mark.slow  # a desktop session and a real Qt app


@pytest.fixture(scope="module")
def session():
    from screenmill.annotators.desktop.session import DesktopSession, SessionConfig, check_tools
    from screenmill.annotators.dom.page import Viewport

    try:
        check_tools()
    except RuntimeError as e:
        pytest.skip(str(e))
    if subprocess.run(["which", "speedcrunch"], capture_output=True).returncode:
        pytest.skip("speedcrunch missing (bash infra/desktop/install.sh)")
    # No window manager: then the app's window has no input focus until the click, so the caret appears only after it
    # (a window manager focuses a new window at once, and the caret would be in the first frame already); the blink
    # setting is the app's, the same with or without one.
    s = DesktopSession(Viewport(1280, 800), SessionConfig(window_manager="none")).start()
    yield s
    s.close()


def test_a_qt_field_with_the_focus_shows_a_caret_that_does_not_blink(session):
    """Qt blinks its caret every 0.5 s by default, so a capture after a click into a field showed it or not by
    timing; the app's kdeglobals (session.QT_SETTINGS) stops the blink: the frame stays the same for 1.5 s."""
    from screenmill.annotators.desktop import a11y
    from screenmill.annotators.desktop.apps import AppSpec

    app = AppSpec("speedcrunch", ("speedcrunch",))
    session.run_app(app)
    try:
        first = session.capture(app)
        field = next(e for e in a11y.elements(first, session.screen_size, 1) if e.get("name", "").startswith("Type"))
        x, y = (str(round(v)) for v in field["point"])
        session.xdotool("mousemove", x, y, "click", "1")
        session.xdotool("mousemove", "1279", "799")
        focused = session.capture(app)
        seen = set()
        for _ in range(10):
            seen.add(session.frame()[0])
            time.sleep(0.15)
    finally:
        session.stop_app()
    assert focused.frame_sha != first.frame_sha  # the caret is there (the field has the focus)
    assert seen == {focused.frame_sha}  # and it stays
