"""The desktop session's teardown and fence (:mod:`screenmill.annotators.desktop.session`): after a session with a
good app, a hung app or a crashing one, no process of it is left (none in its PID namespace, no zombie) and
its folder is gone; a session left open at the process's exit, or whose process was killed, leaves nothing either;
the session runs in the render fence's network namespace."""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import time

import pytest
from screenmill.annotators.desktop.apps import AppSpec
from screenmill.annotators.desktop.session import AppError, DesktopSession, SessionConfig, _children, check_tools
from screenmill.annotators.dom.page import Viewport

pytestmark = pytest.mark.slow  # real Xvfb sessions


@pytest.fixture(scope="module", autouse=True)
def _desktop():
    try:
        check_tools()
    except RuntimeError as e:
        pytest.skip(str(e))
    if os.geteuid() != 0:
        pytest.skip("the session's namespaces need root")


def _pid_ns(session: DesktopSession) -> str:
    (init,) = _children(session._proc.pid)
    return os.readlink(f"/proc/{init}/ns/pid")


def _in_ns(link: str) -> list[str]:
    """Command names of the processes in the PID namespace ``link``."""
    out = []
    for d in glob.glob("/proc/[0-9]*"):
        try:
            if os.readlink(f"{d}/ns/pid") == link:
                with open(f"{d}/comm") as f:
                    out.append(f.read().strip())
        except OSError:
            continue
    return out


def _left_after(session: DesktopSession, init: int, link: str) -> tuple[list, bool, bool]:
    """Close ``session``: the processes left in its PID namespace, whether its first process is still there (a
    zombie nobody reaps: its parent ``unshare`` killed with it reparents it to a PID 1 that may never reap), and
    whether its folder is."""
    root = session._root
    session.close()
    return _in_ns(link), os.path.exists(f"/proc/{init}"), os.path.exists(root)


def test_the_session_start_has_its_own_time_limit():
    """An app's start limit (2 s below, to keep the hang short) does not bound the display's own start: on a loaded
    machine that took over 2 s and the crashing app was filed as app_start_failed."""
    assert SessionConfig(start_timeout_s=2).session_start_timeout_s == 60
    for bad in (0, -1):
        with pytest.raises(ValueError, match="time limits"):
            SessionConfig(session_start_timeout_s=bad)


def test_a_session_leaves_no_process_and_no_folder_after_a_good_hung_or_crashing_app():
    for app, reason, start_s in (
        (AppSpec("good", ("galculator",)), None, 20),
        (AppSpec("hang", ("sh", "-c", "sleep 600 & sleep 600")), "app_timeout", 2),
        (AppSpec("crash", ("sh", "-c", "sleep 600 & kill -SEGV $$")), "app_crashed", 2),
    ):
        session = DesktopSession(Viewport(640, 480), SessionConfig(start_timeout_s=start_s)).start()
        assert session.settings["network_namespace"] and session.settings["user"] == "nobody"
        (init,) = _children(session._proc.pid)
        link, root = _pid_ns(session), session._root
        assert {"Xvfb", "dbus-daemon"} <= set(_in_ns(link))
        try:
            session.run_app(app)
            assert reason is None, app
            assert "galculator" in _in_ns(link)
            _check_fixed_home(session, app)
        except AppError as e:  # the caller closes the session then (as RenderApps does)
            assert e.reason == reason, (app, e)
        assert _left_after(session, init, link) == ([], False, False), app
        assert not os.path.exists(root)


#: What the app sees of its HOME: its environment's HOME, its working folder, the date of a file written there, /home.
SEEN = (
    'tr "\\0" "\\n" < /proc/$SCREENMILL_APP_PID/environ | grep ^HOME=; readlink /proc/$SCREENMILL_APP_PID/cwd; '
    "date -u -r /home/user/.config/kdeglobals +%F; ls -A /home; ls -A /home/user"
)


def _check_fixed_home(session: DesktopSession, app: AppSpec) -> None:
    """The app's HOME is /home/user (the session folder's random name nowhere), dated FIXED_MTIME, the only folder
    of /home; a second app in the session gets it emptied (cost: one more galculator start, ~1.5 s)."""
    seen = session.exec(["sh", "-c", SEEN + "; touch /home/user/left-by-the-first"])
    assert seen["rc"] == 0, seen
    lines = seen["stdout"].split("\n")
    assert lines[:4] == ["HOME=/home/user", "/home/user", "2026-01-01", "user"], seen
    assert session._root not in seen["stdout"] and not os.path.exists("/home/user")  # bound in its namespace only
    session.stop_app()
    session.run_app(app)
    again = session.exec(["sh", "-c", SEEN])["stdout"].split("\n")
    assert again[:4] == lines[:4] and "left-by-the-first" not in again[4:], again


def test_the_app_has_no_network_but_its_own_loopback():
    session = DesktopSession(Viewport(640, 480)).start()
    try:
        got = session.exec(["cat", "/proc/net/dev"])
        devices = {line.split(":")[0].strip() for line in got["stdout"].splitlines() if ":" in line}
        assert got["rc"] == 0 and devices == {"lo"}  # no interface of the host's
        route = session.exec(["cat", "/proc/net/route"])["stdout"].splitlines()
        assert route[1:] == []  # no route
    finally:
        session.close()


SESSION_CHILD = """
import sys, time
from screenmill.annotators.desktop.apps import AppSpec
from screenmill.annotators.desktop.session import DesktopSession, _children
from screenmill.annotators.dom.page import Viewport
s = DesktopSession(Viewport(640, 480)).start()
s.run_app(AppSpec("x", ("galculator",)))
(init,) = _children(s._proc.pid)
import os
print(s._root, os.readlink(f"/proc/{init}/ns/pid"), flush=True)
if sys.argv[1] == "hang":
    time.sleep(600)
"""


@pytest.mark.parametrize("end", ["exit", "sigkill"])
def test_an_owner_that_exits_or_is_killed_leaves_nothing(end):
    """A session held for the life of its process (never closed) is closed at exit; when the process is killed,
    its processes end with it (the agent's stdin closes) and the next session sweeps its folder."""
    child = subprocess.Popen(
        [sys.executable, "-c", SESSION_CHILD, "hang" if end == "sigkill" else "exit"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    root, link = child.stdout.readline().split()
    if end == "sigkill":
        child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    child.stdout.close()
    deadline = time.monotonic() + 10
    while _in_ns(link) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _in_ns(link) == []
    if end == "sigkill":
        assert os.path.isdir(root)  # nothing ran at its death: the next session sweeps it
        DesktopSession(Viewport(320, 240)).start().close()
    assert not os.path.exists(root)


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        kids = _children(todo.pop())
        out += kids
        todo += kids
    return out


def test_without_a_namespace_the_session_says_so_and_still_leaves_nothing(monkeypatch):
    """The fallback (no namespace can be made here): the session runs without one, records it, and its close (the
    agent told to quit, then its process group killed) still ends every process, the app's included."""
    from screenmill.annotators import netns

    monkeypatch.setattr(netns, "why_no_namespace", lambda: "pretend: unshare refused")
    session = DesktopSession(Viewport(640, 480)).start()
    try:
        assert session.settings == {"network_namespace": False, "fixed_home": False, "user": "nobody"}
        session.run_app(AppSpec("good", ("galculator",)))
        procs = [session._proc.pid, *_descendants(session._proc.pid)]
        assert len(procs) >= 5  # the agent, Xvfb, the window manager, the buses, the app
    finally:
        root = session._root
        session.close()
    left = [open(f"/proc/{p}/stat").read()[:60] for p in procs if os.path.exists(f"/proc/{p}")]
    assert left == [] and not os.path.exists(root)
