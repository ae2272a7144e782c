"""The session agent: runs *inside* a desktop session (its network namespace, as the unprivileged app user, under the
system Python with Debian's ``python3-gi``) and answers JSON commands on stdin, one a line, on stdout.

Standalone on purpose (the standard library and ``gi`` only, no screenmill import): the venv's interpreter may not be
runnable by the unprivileged user, and an AT-SPI client caches its bus for the life of its process, so a fresh
session needs a fresh client. :class:`screenmill.annotators.desktop.session.DesktopSession` starts it with
``unshare -n -p`` + ``setpriv`` and kills the namespace's every process after.

On start it brings up, in order: ``Xvfb`` on a free display (``-displayfd``; ``-noreset -nolisten tcp``, no pointer
drawn; its frame buffer memory-mapped under ``fbdir`` as an XWD file), the window manager when ``wm`` names its
command line (:mod:`screenmill.annotators.desktop.wm`), a private D-Bus session bus (a socket path of
its own), the AT-SPI bus (``at-spi-bus-launcher --launch-immediately``), then prints ``{"ready": ..., "display": N}``.

Commands (``{"cmd": ...}``), each answered by one JSON line (``{"error": ...}`` when it fails):

* ``launch`` (``argv``, ``env``): start the app in a process group of its own, in its ``HOME``; answer its pid.
* ``wait_app`` (``timeout_s``): poll until the app is on the AT-SPI bus with a showing element of non-zero size (a
  first tree can be half built); answer its toolkit and version, or ``{"error": "not_on_bus"}``; ``{"exited": rc}``
  when it died.
* ``tree`` (``max_nodes``): the app's showing accessibles (role, name, text, states, extents in screen and window
  coordinates, the size of a picture it shows, the index of the top-level window each lies in) and the top-level X
  windows in stacking order.
* ``windows``: the mapped top-level X windows (a window storm is many of them).
* ``frames`` (``ids``): for each top-level X window named, its client window (the window itself, or the child a
  window manager reparented into its frame: the one with ``WM_STATE``) as the X server places it, the frame extents
  the window manager set on it (``_NET_FRAME_EXTENTS``: left, right, top, bottom; None without a window manager) and
  its title (``_NET_WM_NAME`` or ``WM_NAME``, as ``xdotool getwindowname`` reads it).
* ``xdotool`` (its arguments), ``exec`` (a helper run inside the session, e.g. the tests' independent checker),
  ``alive``, ``kill_app``, ``quit``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings

warnings.filterwarnings("ignore", category=DeprecationWarning)  # gi's *_iface getters: the same calls as the new ones
ROOT_SCREEN_RE = re.compile(r"^\s+(0x[0-9a-f]+) (\"[^\"]*\"|\(has no name\)).*?(\d+)x(\d+)\+(-?\d+)\+(-?\d+)\s+\+")
#: A child line of ``xwininfo -children``: its id, size and absolute origin (the line's last ``+X+Y``).
CHILD_RE = re.compile(r"^\s+(0x[0-9a-f]+) .*?(\d+)x(\d+)[+-]-?\d+[+-]-?\d+\s+\+(-?\d+)\+(-?\d+)\s*$")


def _start_x(width: int, height: int, fbdir: str) -> tuple[subprocess.Popen, int]:
    r, w = os.pipe()
    args = ["Xvfb", "-displayfd", str(w), "-screen", "0", f"{width}x{height}x24", "-fbdir", fbdir]
    args += ["-noreset", "-nolisten", "tcp", "-nocursor", "-dpi", "96", "+extension", "XTEST"]
    xvfb = subprocess.Popen(args, pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(w)
    got = b""
    deadline = time.monotonic() + 20
    os.set_blocking(r, False)
    while not got.endswith(b"\n") and time.monotonic() < deadline:
        if xvfb.poll() is not None:
            raise RuntimeError(f"Xvfb exited with {xvfb.returncode}")
        try:
            chunk = os.read(r, 64)
        except BlockingIOError:
            time.sleep(0.02)
            continue
        if not chunk:
            break
        got += chunk
    os.close(r)
    if not got.strip():
        raise RuntimeError("Xvfb gave no display number")
    return xvfb, int(got.strip())


def _start_wm(argv: list[str]) -> subprocess.Popen:
    """Start the window manager and wait until it manages the display (it names itself on the root window:
    ``_NET_SUPPORTING_WM_CHECK``), so the app's first window is framed and placed by it."""
    wm = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if wm.poll() is not None:
            raise RuntimeError(f"{argv[0]} exited with {wm.returncode}")
        got = subprocess.run(["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"], capture_output=True, text=True)
        if "window id" in got.stdout:
            return wm
        time.sleep(0.02)
    wm.kill()
    raise RuntimeError(f"{argv[0]} did not take the display")


def _start_bus(home: str) -> tuple[subprocess.Popen, str]:
    path = os.path.join(home, ".session-bus")
    proc = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--nopidfile", f"--address=unix:path={path}", "--print-address"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    address = proc.stdout.readline().strip()
    if not address:
        raise RuntimeError("dbus-daemon gave no address")
    return proc, address


class Agent:
    def __init__(self, cfg: dict):
        self.cfg = cfg
        self.procs: list[subprocess.Popen] = []
        self.app: subprocess.Popen | None = None
        self.atspi = None
        self.gtk4 = False  # GTK 4 sets no SHOWING below the window: VISIBLE stands in (see :meth:`_shown`)

    def start(self) -> dict:
        cfg = self.cfg
        _become_subreaper()
        xvfb, display = _start_x(cfg["width"], cfg["height"], cfg["fbdir"])
        self.procs.append(xvfb)
        os.environ["DISPLAY"] = f":{display}"
        if cfg.get("wm"):
            self.procs.append(_start_wm(cfg["wm"]))
        bus, address = _start_bus(cfg["home"])
        self.procs.append(bus)
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = address
        launcher = subprocess.Popen(
            ["/usr/libexec/at-spi-bus-launcher", "--launch-immediately"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.procs.append(launcher)
        import gi

        gi.require_version("Atspi", "2.0")
        from gi.repository import Atspi

        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # the launcher registers org.a11y.Bus on the session bus
            out = subprocess.run(
                [
                    "dbus-send",
                    "--session",
                    "--print-reply",
                    "--dest=org.a11y.Bus",
                    "/org/a11y/bus",
                    "org.a11y.Bus.GetAddress",
                ],
                capture_output=True,
                text=True,
            )
            if out.returncode == 0:
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("the AT-SPI bus did not start")
        Atspi.init()
        Atspi.set_timeout(int(cfg.get("atspi_timeout_ms", 3000)), int(cfg.get("atspi_timeout_ms", 3000)))
        self.atspi = Atspi
        return {"ready": True, "display": display}

    # -- commands --------------------------------------------------------------------------------------------------
    def launch(self, argv: list[str], env: dict) -> dict:
        full = dict(os.environ)
        full.update(env)
        self.app = subprocess.Popen(
            argv,
            env=full,
            cwd=env.get("HOME") or self.cfg["home"],  # the app's own HOME (a fixed path: it may be shown)
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        return {"pid": self.app.pid}

    def _app_node(self):
        desktop = self.atspi.get_desktop(0)
        pid = self.app.pid if self.app else None
        for i in range(desktop.get_child_count()):
            app = desktop.get_child_at_index(i)
            if app is None:
                continue
            try:
                if app.get_process_id() == pid:
                    return app
            except Exception:  # noqa: BLE001 - a dying app
                continue
        return None

    def wait_app(self, timeout_s: float) -> dict:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.app is None or self.app.poll() is not None:
                return {"exited": None if self.app is None else self.app.returncode}
            app = self._app_node()
            if app is not None:
                toolkit, version = self._note_toolkit(app)
            if app is not None and self._has_sized_control(app):
                return {"toolkit": toolkit, "toolkit_version": version, "name": app.get_name() or ""}
            time.sleep(0.1)
        return {"error": "not_on_bus"}

    def _shown(self, states) -> bool:
        Atspi = self.atspi
        return states.contains(Atspi.StateType.SHOWING) or (self.gtk4 and states.contains(Atspi.StateType.VISIBLE))

    def _note_toolkit(self, app) -> tuple[str, str]:
        try:
            toolkit, version = app.get_toolkit_name() or "", app.get_toolkit_version() or ""
        except Exception:  # noqa: BLE001
            return "", ""
        self.gtk4 = toolkit.lower() == "gtk" and version.startswith("4")
        return toolkit, version

    def _has_sized_control(self, app) -> bool:
        Atspi = self.atspi
        stack, seen = [app], 0
        while stack and seen < 3000:
            node = stack.pop()
            seen += 1
            try:
                states = node.get_state_set()
                if node is not app and not self._shown(states):
                    continue
                role = node.get_role_name()
                if role in ("push button", "button", "menu item", "text", "entry", "toggle button"):
                    comp = node.get_component_iface()
                    if comp is not None:
                        e = comp.get_extents(Atspi.CoordType.SCREEN)
                        if e.width > 0 and e.height > 0:
                            return True
                n = node.get_child_count()
                for i in range(min(n, 500)):
                    child = node.get_child_at_index(i)
                    if child is not None:
                        stack.append(child)
            except Exception:  # noqa: BLE001 - a node going away while read
                continue
        return False

    def tree(self, max_nodes: int = 5000) -> dict:
        Atspi = self.atspi
        app = self._app_node()
        if app is None:
            return {"error": "not_on_bus"}
        self._note_toolkit(app)
        nodes: list[dict] = []
        windows: list[dict] = []

        def visit(node, depth: int, window: int | None, path: list[int]):
            if len(nodes) >= max_nodes or depth > 80:
                return
            try:
                states = node.get_state_set()
                showing = self._shown(states)
                role = node.get_role_name()
                if depth == 1:
                    window = len(windows)
                    comp = node.get_component_iface()
                    box = _box(comp, Atspi.CoordType.SCREEN) if comp else None
                    windows.append(
                        {
                            "role": role,
                            "name": node.get_name() or "",
                            "box": box,
                            "showing": showing,
                            "active": states.contains(Atspi.StateType.ACTIVE),
                        }
                    )
                if depth >= 1 and not showing:
                    return
                if depth >= 2:
                    comp = node.get_component_iface()
                    text = None
                    ti = node.get_text_iface()
                    if ti is not None:
                        try:
                            count = ti.get_character_count()
                            text = ti.get_text(0, min(count, 400)) if count else ""
                        except Exception:  # noqa: BLE001
                            text = None
                    st = [
                        s
                        for s in (
                            "visible",
                            "showing",
                            "enabled",
                            "sensitive",
                            "focusable",
                            "editable",
                            "checked",
                            "selected",
                            "expanded",
                            "focused",
                        )
                        if states.contains(getattr(Atspi.StateType, s.upper()))
                    ]
                    nodes.append(
                        {
                            "path": path,
                            "role": role,
                            "name": node.get_name() or "",
                            "description": node.get_description() or "",
                            "text": text,
                            "states": st,
                            "screen": _box(comp, Atspi.CoordType.SCREEN) if comp else None,
                            "win": _box(comp, Atspi.CoordType.WINDOW) if comp else None,
                            "window": window,
                            "children": node.get_child_count(),
                            "actions": _actions(node),
                            "image": _image_size(node),
                        }
                    )
                n = node.get_child_count()
                for i in range(min(n, 500)):
                    child = node.get_child_at_index(i)
                    if child is not None:
                        visit(child, depth + 1, window, path + [i])
            except _Hung:
                raise
            except Exception as e:  # noqa: BLE001 - a node going away while read; a call timing out: a hung app
                if _timed_out(e):
                    raise _Hung from e
                return

        try:
            visit(app, 0, None, [])
        except _Hung:
            return {"error": "timeout"}
        return {"nodes": nodes, "windows": windows, "x_windows": self.windows()["windows"]}

    def windows(self) -> dict:
        """Mapped top-level X windows, bottom to top (``xwininfo -root -children``), each ``[id, x, y, w, h]``."""
        out = subprocess.run(["xwininfo", "-root", "-children"], capture_output=True, text=True, timeout=10)
        wins = []
        for line in out.stdout.splitlines():
            m = ROOT_SCREEN_RE.match(line)
            if m:
                wid, _, w, h, x, y = m.groups()
                wins.append([wid, int(x), int(y), int(w), int(h)])
        mapped = []
        for wid, x, y, w, h in reversed(wins):  # xwininfo lists top first
            attrs = subprocess.run(["xwininfo", "-id", wid], capture_output=True, text=True, timeout=10).stdout
            if "IsViewable" in attrs:
                mapped.append([wid, x, y, w, h])
        return {"windows": mapped}

    def frames(self, ids: list[str]) -> dict:
        """``{"frames": [{"client": [x, y, w, h], "extents": [l, r, t, b] or None, "title": str}, ...]}``, one per
        window of ``ids`` (see the module docstring)."""
        out = []
        for wid in ids:
            try:
                out.append(self._frame(wid))
            except (subprocess.SubprocessError, KeyError, OSError):  # the window went away while read
                out.append(None)
        return {"frames": out}

    @staticmethod
    def _frame(wid: str) -> dict:
        """One window's entry of :meth:`frames`.

        Raises:
            KeyError / subprocess.SubprocessError: the window went away while it was read.
        """
        props, client, geometry = _xprop(wid), wid, None
        if "WM_STATE" not in props:  # a frame (or no window manager at all): the child the manager framed
            listing = subprocess.run(["xwininfo", "-children", "-id", wid], capture_output=True, text=True, timeout=10)
            for line in listing.stdout.splitlines():
                m = CHILD_RE.match(line)
                if m and "WM_STATE" in (child := _xprop(m.group(1))):
                    w, h, x, y = (int(v) for v in m.groups()[1:])
                    client, props, geometry = m.group(1), child, [x, y, w, h]
                    break
        if geometry is None:
            info = subprocess.run(["xwininfo", "-id", client], capture_output=True, text=True, timeout=10).stdout
            g = dict(re.findall(r"^\s*(Absolute upper-left [XY]|Width|Height):\s+(-?\d+)", info, re.M))
            geometry = [int(g[k]) for k in ("Absolute upper-left X", "Absolute upper-left Y", "Width", "Height")]
        name = subprocess.run(["xdotool", "getwindowname", client], capture_output=True, timeout=10)
        title = name.stdout.decode("utf-8", "replace").rstrip("\n") if name.returncode == 0 else ""
        return {"client": geometry, "extents": props.get("_NET_FRAME_EXTENTS"), "title": title}

    def xdotool(self, args: list[str]) -> dict:
        out = subprocess.run(["xdotool", *args], capture_output=True, text=True, timeout=10)
        return {"rc": out.returncode}

    def exec(self, argv: list[str], stdin: str, timeout_s: float) -> dict:
        """Run a helper inside the session (its display and buses; the app's pid in ``SCREENMILL_APP_PID``)."""
        env = dict(os.environ, SCREENMILL_APP_PID=str(self.app.pid if self.app else ""))
        out = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout_s, env=env)
        return {"rc": out.returncode, "stdout": out.stdout, "stderr": out.stderr[-2000:]}

    def kill_app(self) -> dict:
        if self.app is not None and self.app.poll() is None:
            try:
                os.killpg(self.app.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.app.wait(timeout=10)
        self.app = None
        return {"killed": True}

    def alive(self) -> dict:
        return {
            "alive": self.app is not None and self.app.poll() is None,
            "rc": None if self.app is None else self.app.returncode,
        }

    def close(self) -> None:
        """Kill the app's process group and the session's helpers, and reap them: a child left unreaped when the
        agent exits goes to PID 1, which may never reap it (in a PID namespace of its own the agent is PID 1)."""
        procs = ([self.app] if self.app else []) + self.procs[::-1]
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGKILL) if proc is self.app else proc.kill()
            except (ProcessLookupError, PermissionError):
                pass
        for proc in procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        for _ in range(20):  # orphans handed to the agent as subreaper (the AT-SPI bus's dbus-daemon, an app's forks)
            kids = _own_children()
            if not kids:
                break
            for pid in kids:
                try:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                except (ProcessLookupError, PermissionError, ChildProcessError):
                    pass


def _own_children() -> list[int]:
    out = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children", encoding="ascii") as f:
                out += [int(p) for p in f.read().split()]
        except OSError:
            continue
    return out


def _become_subreaper() -> None:
    """Orphaned descendants come to this process (``PR_SET_CHILD_SUBREAPER``), which reaps them at close."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


class _Hung(Exception):
    """An AT-SPI call to the app timed out: the app does not answer (stopped, busy, deadlocked)."""


def _xprop(wid: str) -> dict:
    """The properties of X window ``wid`` a frame is told by: ``WM_STATE`` (present: a window manager manages it)
    and ``_NET_FRAME_EXTENTS`` (``[left, right, top, bottom]``)."""
    got = subprocess.run(
        ["xprop", "-notype", "-id", wid, "WM_STATE", "_NET_FRAME_EXTENTS"], capture_output=True, text=True, timeout=10
    ).stdout
    props: dict = {}
    if re.search(r"^WM_STATE:\s*$", got, re.M):
        props["WM_STATE"] = True
    m = re.search(r"^_NET_FRAME_EXTENTS = (\d+), (\d+), (\d+), (\d+)", got, re.M)
    if m:
        props["_NET_FRAME_EXTENTS"] = [int(v) for v in m.groups()]
    return props


def _timed_out(e: Exception) -> bool:
    text = str(e).lower()
    return "timeout" in text or "timed out" in text or "noreply" in text


def _box(comp, coord) -> list[int] | None:
    try:
        e = comp.get_extents(coord)
    except Exception:  # noqa: BLE001
        return None
    return [e.x, e.y, e.width, e.height]


def _image_size(node) -> list[int] | None:
    """The size of the picture a node shows (its image interface: a GTK 3 button's icon), or None without one."""
    try:
        image = node.get_image_iface()
        size = image.get_image_size() if image is not None else None
    except Exception:  # noqa: BLE001 - a node without a picture, or going away
        return None
    return [size.x, size.y] if size is not None and size.x > 0 and size.y > 0 else None


def _actions(node) -> list[str]:
    try:
        ai = node.get_action_iface()
        if ai is None:
            return []
        return [ai.get_action_name(i) for i in range(min(ai.get_n_actions(), 8))]
    except Exception:  # noqa: BLE001
        return []


def main() -> int:
    agent = Agent(json.loads(sys.argv[1]))
    out = sys.stdout

    def say(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()

    try:
        say(agent.start())
    except Exception as e:  # noqa: BLE001 - the session could not start: say why and stop
        say({"error": f"{type(e).__name__}: {e}"})
        agent.close()
        return 1
    try:
        for line in sys.stdin:
            msg = json.loads(line)
            cmd = msg.pop("cmd")
            try:
                if cmd == "launch":
                    say(agent.launch(msg["argv"], msg.get("env", {})))
                elif cmd == "wait_app":
                    say(agent.wait_app(float(msg.get("timeout_s", 20))))
                elif cmd == "tree":
                    say(agent.tree(int(msg.get("max_nodes", 5000))))
                elif cmd == "windows":
                    say(agent.windows())
                elif cmd == "frames":
                    say(agent.frames(list(msg["ids"])))
                elif cmd == "xdotool":
                    say(agent.xdotool(msg["args"]))
                elif cmd == "exec":
                    say(agent.exec(msg["argv"], msg.get("input", ""), float(msg.get("timeout_s", 60))))
                elif cmd == "kill_app":
                    say(agent.kill_app())
                elif cmd == "alive":
                    say(agent.alive())
                elif cmd == "quit":
                    say({"bye": True})
                    break
                else:
                    say({"error": f"unknown command {cmd}"})
            except Exception as e:  # noqa: BLE001 - one command's failure, said
                say({"error": f"{type(e).__name__}: {e}"})
    finally:
        agent.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
