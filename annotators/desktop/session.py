"""A desktop session: an X display with a private D-Bus and AT-SPI bus, one app at a time, fenced and time-limited.

:class:`DesktopSession` starts the session agent (:mod:`screenmill.annotators.desktop.agent`) in a network namespace
of its own (:class:`screenmill.annotators.netns.NetNamespace`, the render fence's: nothing but its own loopback, so
the app reaches no network at all, not even this machine's ``127.0.0.1``), under ``unshare -p -f --kill-child`` (a
PID namespace of its own: ending its first process ends every process of the session, the app's whole process tree
included, whatever it forked) and as an unprivileged user (``nobody``, :func:`screenmill.annotators.netns.unprivileged`
without capabilities). Where no namespace can be made (:func:`screenmill.annotators.netns.why_no_namespace`: not
root, no ``unshare``) the session runs without both, says so once per process and records it in :attr:`settings`
(``network_namespace``). Each app gets a fresh ``HOME`` and XDG folders under the session's folder
(:func:`screenmill.annotators.scratch.make_dir`): :meth:`DesktopSession.close` removes it and leaves no process; a
session still open at the process's exit is closed then, and the folder of a killed process is swept by the next
session.

What an app shows of its environment is the same in every session: in the PID namespace the session also gets a mount
namespace of its own (``/proc`` mounted afresh there: the app sees the session's processes only, by their own
ids), where a ``tmpfs`` hides ``/home`` and the app's fresh HOME folder is bound onto
:data:`FIXED_HOME` (``/home/user``), the app's ``HOME`` and working folder (a file dialog, mousepad's "Missing
Templates directory '<HOME>/Templates'" showed the session folder's random name, so no replay gave the same frame);
every file and folder of the fresh HOME, its XDG folders made beforehand (:data:`HOME_DIRS`), and ``/home`` are dated
:data:`FIXED_MTIME` (a dialog's "Modified" column). Without the
namespaces the HOME is the session folder's (:attr:`DesktopSession.settings` ``fixed_home`` False).

:meth:`DesktopSession.run_app` launches an app, waits (``start_timeout_s``) until it is on the AT-SPI bus with a
control of non-zero size, then :meth:`DesktopSession.capture` waits until the frame and the tree settle and returns a
:class:`Capture` (PNG of the screen, the accessibles, the windows). The frame is read from Xvfb's memory-mapped
frame buffer (``-fbdir``: an XWD file), no screenshot tool.

Failures (:class:`AppError`, ``reason``): ``app_start_failed`` (the session or the command could not start, or the
app exited cleanly before showing a window), ``app_timeout`` (not on the bus in time, or a step over
``step_timeout_s``: a hung app), ``app_crashed`` (the app died: a signal or a non-zero exit), ``app_window_storm``
(more than ``max_windows`` top-level windows). After any of them the session is closed; the caller starts a fresh
one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import select
import shutil
import signal
import subprocess
import time
from typing import Any

from screenmill.annotators import netns, scratch
from screenmill.annotators.desktop import wm
from screenmill.annotators.desktop.apps import AppSpec
from screenmill.annotators.dom.page import Viewport
from screenmill.annotators.netns import NOBODY

AGENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "agent.py")
SYSTEM_PYTHON = "/usr/bin/python3"
INSTALL_HINT = (
    "desktop apps need Xvfb, at-spi2-core, gir1.2-atspi-2.0, python3-gi, xdotool, x11-utils and jwm: "
    "bash infra/desktop/install.sh"
)
#: Environment every app gets (toolkits put on the accessibility bus; no portals, no GVFS, no sound).
APP_ENV = {
    "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1",
    "QT_ACCESSIBILITY": "1",
    "GTK_A11Y": "atspi",
    "GTK_USE_PORTAL": "0",
    "GIO_USE_VFS": "local",
    "NO_AT_BRIDGE": "0",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    # Qt's KDE platform theme (Qt's own, no KDE needed) is the one that reads a caret blink rate (QT_SETTINGS)
    "QT_QPA_PLATFORMTHEME": "kde",
    "KDE_SESSION_VERSION": "5",
}


#: Where an app's fresh HOME is in every session (a mount namespace's bind, see the module docstring): its path is
#: shown by file dialogs and messages, so it must not be the session folder's random name.
FIXED_HOME = "/home/user"
#: The time (s since the epoch, 2026-01-01T00:00:00Z) every file and folder of an app's fresh HOME is dated.
FIXED_MTIME = 1767225600
#: Run as root in the session's new mount namespace before the user switch: ``/home`` hidden by a tmpfs dated
#: :data:`FIXED_MTIME` (``$3``), the HOME folder (``$1``) bound onto :data:`FIXED_HOME` (``$2``), then the rest of
#: the command line.
MOUNT_HOME = (
    'mount -t tmpfs -o mode=0755,size=1m screenmill-home "$(dirname "$2")" && mkdir "$2" '
    '&& touch -d "@$3" "$(dirname "$2")" && mount --bind "$1" "$2" && shift 3 && exec "$@"'
)
#: The folders of every fresh HOME (the XDG ones the apps are given): made before it is dated, so an app that fills
#: them adds no entry to the HOME folder itself (whose date a file dialog shows in its parent, ``/home``).
HOME_DIRS = (".config", ".cache", ".local/share", ".local/state")

#: GTK settings of every app's fresh HOME (``$XDG_CONFIG_HOME/gtk-{3,4}.0/settings.ini``).
GTK_SETTINGS = "[Settings]\ngtk-cursor-blink = false\ngtk-enable-animations = false\n"
#: Qt's (``$XDG_CONFIG_HOME/kdeglobals``): no blinking caret. A Qt app's caret blinks every 0.5 s otherwise once a
#: field has the focus, and a screen "settles" (two reads ``settle_s`` apart agree) with it shown or hidden by timing:
#: the same step gave two frames in repeats of one episode.
QT_SETTINGS = "[KDE]\nCursorBlinkRate=0\n"


def _parents(path: str, root: str) -> list[str]:
    """The folders from below ``root`` down to ``path``'s folder, outermost first."""
    out, d = [], os.path.dirname(path)
    while len(d) > len(root):
        out.append(d)
        d = os.path.dirname(d)
    return out[::-1]


class AppError(Exception):
    """An app or its session failed; ``reason`` is a registered dead-letter reason code."""

    def __init__(self, reason: str, message: str):
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message


@dataclasses.dataclass(frozen=True)
class SessionConfig:
    """Limits of a desktop session.

    Attributes:
        user: the unprivileged user (name or uid) apps run as.
        start_timeout_s: the time limit of an app's start (on the bus with a sized control).
        session_start_timeout_s: the time limit of the session's own start (display, buses, agent), apart from the
            app's: a short app limit must not turn a slow start of the display (a loaded machine) into a failed app.
        step_timeout_s: the time limit of one step (a tree read, an input event, a settle).
        settle_s: how long frame and tree must stay the same to count as settled (the settle's poll interval).
        max_windows: more mapped top-level windows than this is a window storm.
        max_nodes: accessibles read per tree at most.
        python: the interpreter the agent runs under (has ``gi``; runnable by ``user``).
        window_manager: the window manager of the display (:data:`screenmill.annotators.desktop.wm.WINDOW_MANAGERS`;
            ``none``: apps undecorated).
    """

    user: str = "nobody"
    start_timeout_s: float = 20.0
    session_start_timeout_s: float = 60.0
    step_timeout_s: float = 10.0
    settle_s: float = 0.3
    max_windows: int = 20
    max_nodes: int = 5000
    python: str = SYSTEM_PYTHON
    window_manager: str = wm.DEFAULT

    def __post_init__(self):
        wm.check(self.window_manager)
        if min(self.start_timeout_s, self.session_start_timeout_s, self.step_timeout_s, self.settle_s) <= 0:
            raise ValueError("desktop time limits must be > 0 s")
        if self.max_windows < 1 or self.max_nodes < 1:
            raise ValueError("max_windows and max_nodes must be >= 1")


@dataclasses.dataclass(slots=True)
class Capture:
    """One settled screen: PNG bytes, the accessibles read (the agent's ``nodes``), the app's top-level accessibles
    (``windows``), the mapped X windows bottom to top (``x_windows``: ``[id, x, y, w, h]``), the app's toolkit, and
    per X window (``frames``, in the order of ``x_windows``; empty when not read) its client window and the window
    manager's frame around it: ``{"client": [x, y, w, h], "extents": [left, right, top, bottom] or None, "title":
    str}`` (the agent's ``frames``; no extents without a window manager, all zero for a window it leaves
    undecorated)."""

    png: bytes
    nodes: list[dict]
    windows: list[dict]
    x_windows: list[list]
    toolkit: str
    toolkit_version: str
    frame_sha: str
    frames: list[dict] = dataclasses.field(default_factory=list)


def check_tools() -> None:
    """Raise RuntimeError with :data:`INSTALL_HINT` when a tool the session needs is missing."""
    need = ["Xvfb", "dbus-daemon", "dbus-send", "xwininfo", "xprop", "xdotool", "unshare", "setpriv", "jwm"]
    missing = [t for t in need if shutil.which(t) is None]
    if not os.path.exists("/usr/libexec/at-spi-bus-launcher"):
        missing.append("at-spi-bus-launcher")
    if subprocess.run([SYSTEM_PYTHON, "-c", "import gi"], capture_output=True).returncode != 0:
        missing.append("python3-gi")
    if missing:
        raise RuntimeError(f"missing {', '.join(missing)}; {INSTALL_HINT}")


def read_xwd(path: str) -> tuple[int, int, bytes]:
    """Xvfb's frame buffer file (XWD, 32 bits per pixel, LSB first) → ``(width, height, RGB bytes)``.

    Raises:
        ValueError: not the 32-bit layout Xvfb writes at depth 24.
    """
    import numpy as np

    with open(path, "rb") as f:
        data = f.read()
    head = np.frombuffer(data[:100], dtype=">u4")
    header_size, width, height, bpp, bpl, ncolors = (int(head[i]) for i in (0, 4, 5, 11, 12, 19))
    if bpp != 32 or int(head[7]) != 0:
        raise ValueError(f"unexpected frame buffer layout: {bpp} bits per pixel, byte order {int(head[7])}")
    start = header_size + 12 * ncolors
    pix = np.frombuffer(data, dtype=np.uint8, count=bpl * height, offset=start).reshape(height, bpl)
    bgrx = pix[:, : width * 4].reshape(height, width, 4)
    return width, height, np.ascontiguousarray(bgrx[:, :, 2::-1]).tobytes()


def to_png(width: int, height: int, rgb: bytes) -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.frombytes("RGB", (width, height), rgb).save(out, format="PNG", compress_level=6)
    return out.getvalue()


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _end(proc: subprocess.Popen, namespaced: bool, wait_s: float = 5.0) -> None:
    """End a session's process tree (see :meth:`DesktopSession.close`) and reap its first process."""
    if namespaced:
        for child in _children(proc.pid):  # the PID namespace's init: its death ends the namespace
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
    elif proc.poll() is None:
        try:
            proc.stdin.write(b'{"cmd": "quit"}\n')
            proc.stdin.flush()
            proc.wait(timeout=wait_s)
        except (OSError, subprocess.TimeoutExpired):
            pass
    try:
        proc.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait(timeout=wait_s)
    for f in (proc.stdin, proc.stdout):
        try:
            f.close()
        except OSError:
            pass


class DesktopSession:
    """One display and its buses (see the module docstring). :meth:`start` first; :meth:`close` always."""

    def __init__(self, display: Viewport, config: SessionConfig = SessionConfig()):
        self.settings: dict = {}
        self.display = display
        self.config = config
        self._proc: subprocess.Popen | None = None
        self._root: str | None = None
        self._apps = 0
        self.display_number: int | None = None
        self.toolkit = ("", "")

    @property
    def screen_size(self) -> tuple[int, int]:
        """The screen in device pixels (the display's size x its scale)."""
        return round(self.display.width * self.display.scale), round(self.display.height * self.display.scale)

    def start(self) -> DesktopSession:
        """Start Xvfb, the buses and the agent.

        Raises:
            RuntimeError: a tool is missing (:data:`INSTALL_HINT`).
            AppError: ``app_start_failed`` / ``app_timeout``: the session did not come up.
        """
        check_tools()
        import pwd

        if os.geteuid() == 0:
            name = self.config.user
            user = pwd.getpwnam(name) if not name.isdigit() else pwd.getpwuid(int(name))
            self._uid, self._gid = user.pw_uid, user.pw_gid
        else:  # no user to switch to: the apps run as the caller
            self._uid, self._gid = os.geteuid(), os.getegid()
        self._root = scratch.make_dir("screenmill-desktop-")
        scratch.close_at_exit(self)
        os.chmod(self._root, 0o755)
        fb = self._own_dir("fb")
        home = self._own_dir("home")
        self._app_home = self._own_dir("app-home", 0o700)  # bound onto FIXED_HOME in the namespace; emptied per app
        width, height = self.screen_size
        cfg = {"width": width, "height": height, "home": home, "fbdir": fb}
        cfg["wm"] = wm.command(self.config.window_manager, self._root)
        env = {
            "HOME": home,
            "PATH": "/usr/bin:/bin",
            "XDG_RUNTIME_DIR": self._own_dir("run", 0o700),
            "LANG": "C.UTF-8",
        }
        ns = self._namespace()
        argv = (
            [*ns.command(), "unshare", "-p", "-f", "--kill-child", "--mount-proc", "--propagation", "private"]
            if ns
            else []
        )
        if ns:
            argv += ["sh", "-c", MOUNT_HOME, "sh", self._app_home, FIXED_HOME, str(FIXED_MTIME)]
        argv += netns.unprivileged(self._uid, self._gid, read_all=False)
        argv += ["env", "-i", *(f"{k}={v}" for k, v in env.items())]
        argv += [self.config.python, "-I", AGENT, json.dumps(cfg)]
        try:
            self._proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True
            )
            ready = self._ask(None, self.config.session_start_timeout_s, on_timeout="app_start_failed")
        finally:
            if ns is not None:
                ns.close()  # the session's processes keep the namespace; nothing else need hold it
        if not ready.get("ready"):
            self.close()
            raise AppError("app_start_failed", f"the desktop session did not start: {ready.get('error')}")
        self.display_number = ready["display"]
        self._fb = os.path.join(fb, "Xvfb_screen0")
        return self

    def _namespace(self) -> netns.NetNamespace | None:
        """A network namespace for the session (:class:`screenmill.annotators.netns.NetNamespace`), or None when none
        can be made here (said once per process; :attr:`settings` records it)."""
        why = netns.why_no_namespace()
        ns = None
        if why is None:
            try:
                ns = netns.NetNamespace()
            except netns.NamespaceError as e:
                why = str(e)
        if why is not None:
            netns.say_once("desktop-netns", f"desktop fence: no network namespace ({why}): apps run with the network")
        self.settings = {
            "network_namespace": ns is not None,
            "fixed_home": ns is not None,
            "user": "nobody" if self._uid == NOBODY else "caller",
        }
        return ns

    def _own_dir(self, name: str, mode: int = 0o755) -> str:
        path = os.path.join(self._root, name)
        os.makedirs(path, exist_ok=True)
        os.chmod(path, mode)
        os.chown(path, self._uid, self._gid)
        return path

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def close(self) -> None:
        """End the session and remove its folder. In its PID namespace: the namespace's first process (``unshare
        -f``'s child) is killed, which takes every process of the namespace with it, then ``unshare`` is reaped.
        Without namespaces: the agent is told to quit (it kills the app's process group and its own helpers), then
        its process group is killed."""
        scratch.forget(self)
        proc, self._proc = self._proc, None
        if proc is not None:
            _end(proc, self.settings.get("network_namespace", False))
        if self._root:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None

    def _ask(self, msg: dict | None, timeout_s: float, on_timeout: str = "app_timeout") -> dict:
        """Send ``msg`` (None: only read) and read the agent's answer within ``timeout_s``; a silent agent is a hung
        app: the session is closed and :class:`AppError` ``on_timeout`` raised."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            raise AppError("app_crashed", "the desktop session is gone")
        try:
            if msg is not None:
                proc.stdin.write((json.dumps(msg) + "\n").encode())
                proc.stdin.flush()
            ready, _, _ = select.select([proc.stdout], [], [], timeout_s)
            line = proc.stdout.readline() if ready else b""
        except (BrokenPipeError, OSError):
            line = b""
        if not line:
            gone = proc.poll() is not None
            self.close()
            if gone:
                raise AppError("app_crashed", "the desktop session died")
            what = msg["cmd"] if msg else "start"
            raise AppError(on_timeout, f"no answer to {what} within {timeout_s:g} s (a hung app)")
        return json.loads(line)

    def run_app(self, app: AppSpec) -> dict:
        """Launch ``app`` with a fresh HOME and wait until it is on the AT-SPI bus with a sized control.

        Returns:
            The agent's answer: ``toolkit``, ``toolkit_version``, ``name`` (the app's accessible name).

        Raises:
            AppError: ``app_start_failed``, ``app_timeout``, ``app_crashed``, ``app_window_storm``.
        """
        self._apps += 1
        real = self._fresh_home()
        home = FIXED_HOME if self.settings.get("fixed_home") else real  # the app's path of it
        env = dict(APP_ENV)
        for sub, var in zip(
            HOME_DIRS, ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"), strict=True
        ):
            env[var] = os.path.join(home, sub)
            self._mkdir(os.path.join(real, sub))
        env["HOME"] = home
        config = os.path.join(real, ".config")
        for gtk in ("gtk-3.0", "gtk-4.0"):  # no blinking caret, no animations: a screen that settles
            self._write(os.path.join(config, gtk, "settings.ini"), GTK_SETTINGS)
        self._write(os.path.join(config, "kdeglobals"), QT_SETTINGS)
        _date_tree(real, FIXED_MTIME)
        if self.display.scale != 1:
            env |= {"GDK_SCALE": f"{self.display.scale:g}", "QT_SCALE_FACTOR": f"{self.display.scale:g}"}
        env |= dict(app.env)
        cfg = self.config
        launched = self._ask({"cmd": "launch", "argv": list(app.argv), "env": env}, cfg.step_timeout_s)
        if "error" in launched:
            raise AppError("app_start_failed", f"{app.argv[0]}: {launched['error']}")
        got = self._ask(
            {"cmd": "wait_app", "timeout_s": cfg.start_timeout_s}, cfg.start_timeout_s + cfg.step_timeout_s
        )
        if "exited" in got:
            rc = got["exited"]
            if rc == 0:
                raise AppError("app_start_failed", f"{app.name} exited before showing a window")
            raise AppError("app_crashed", f"{app.name} died while starting (exit status {rc})")
        if "error" in got:
            raise AppError(
                "app_timeout", f"{app.name} was not on the accessibility bus within {cfg.start_timeout_s:g} s"
            )
        self._check_windows(app)
        w, h = self.screen_size
        self.xdotool("mousemove", str(w - 1), str(h - 1))  # the pointer parked in the corner, off the app
        self.toolkit = (got.get("toolkit", ""), got.get("toolkit_version", ""))
        return got

    def _fresh_home(self) -> str:
        """The app HOME folder (this side's path) emptied: its contents removed, not the folder (the namespace's
        bind holds the folder itself)."""
        home = self._app_home
        for entry in os.listdir(home):
            path = os.path.join(home, entry)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
        return home

    def _mkdir(self, path: str) -> None:
        """Make ``path`` and its parents below the session folder, owned by the app user."""
        for d in [*_parents(path, self._root), path]:
            os.makedirs(d, exist_ok=True)
            os.chown(d, self._uid, self._gid)

    def _write(self, path: str, text: str) -> None:
        self._mkdir(os.path.dirname(path))
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        os.chown(path, self._uid, self._gid)

    def _check_windows(self, app: AppSpec) -> list[list]:
        wins = self._ask({"cmd": "windows"}, self.config.step_timeout_s).get("windows", [])
        if len(wins) > self.config.max_windows:
            raise AppError(
                "app_window_storm", f"{app.name} mapped {len(wins)} windows (limit {self.config.max_windows})"
            )
        return wins

    def _alive_or_raise(self, app: AppSpec) -> None:
        got = self._ask({"cmd": "alive"}, self.config.step_timeout_s)
        if not got.get("alive"):
            raise AppError("app_crashed", f"{app.name} died (exit status {got.get('rc')})")

    def frame(self) -> tuple[str, int, int, bytes]:
        width, height, rgb = read_xwd(self._fb)
        return hashlib.sha256(rgb).hexdigest(), width, height, rgb

    def capture(self, app: AppSpec) -> Capture:
        """Wait until the screen and the tree settle (two reads ``settle_s`` apart agree), within ``step_timeout_s``.

        Raises:
            AppError: ``app_timeout`` (no settle in time, a hung app), ``app_crashed``, ``app_window_storm``.
        """
        cfg = self.config
        deadline = time.monotonic() + cfg.step_timeout_s
        last: tuple | None = None
        while True:
            self._alive_or_raise(app)
            tree = self._ask({"cmd": "tree", "max_nodes": cfg.max_nodes}, cfg.step_timeout_s)
            if tree.get("error") == "timeout":
                raise AppError("app_timeout", f"{app.name} does not answer on the accessibility bus (a hung app)")
            if "error" in tree:
                raise AppError("app_crashed", f"{app.name} left the accessibility bus: {tree['error']}")
            if len(tree["x_windows"]) > cfg.max_windows:
                raise AppError("app_window_storm", f"{app.name} mapped {len(tree['x_windows'])} windows")
            sha, width, height, rgb = self.frame()
            key = (sha, json.dumps(tree, sort_keys=True))
            if key == last:  # settled: the frames of its windows read once (their geometry is in the tree's key)
                ids = [x[0] for x in tree["x_windows"]]
                frames = self._ask({"cmd": "frames", "ids": ids}, cfg.step_timeout_s).get("frames") or []
                return Capture(
                    to_png(width, height, rgb),
                    tree["nodes"],
                    tree["windows"],
                    tree["x_windows"],
                    self.toolkit[0],
                    self.toolkit[1],
                    sha,
                    frames if len(frames) == len(ids) else [],
                )
            if time.monotonic() > deadline:
                raise AppError("app_timeout", f"{app.name}: the screen did not settle within {cfg.step_timeout_s:g} s")
            last = key
            time.sleep(cfg.settle_s)

    def stop_app(self) -> None:
        """Kill the current app's process group (the session stays)."""
        if self.alive:
            self._ask({"cmd": "kill_app"}, self.config.step_timeout_s)

    def exec(self, argv: list[str], stdin: str = "", timeout_s: float = 60.0) -> dict:
        """Run ``argv`` inside the session (its display, its buses, as its user); ``rc``, ``stdout``, ``stderr``."""
        return self._ask({"cmd": "exec", "argv": argv, "input": stdin, "timeout_s": timeout_s}, timeout_s + 5)

    def xdotool(self, *args: str) -> None:
        self._ask({"cmd": "xdotool", "args": list(args)}, self.config.step_timeout_s)


def _date_tree(root: str, when: float) -> None:
    """Date every file and folder under ``root`` (itself included) ``when`` (access and modification times)."""
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            os.utime(os.path.join(folder, name), (when, when), follow_symlinks=False)
    os.utime(root, (when, when))


def session_info(session: DesktopSession) -> dict[str, Any]:
    """The settings a screenshot records of its session (display size and scale)."""
    d = session.display
    return {"display": d.spec, "screen": list(session.screen_size)}
