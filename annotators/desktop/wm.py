"""The window manager a desktop session runs on its display (``--window-manager``): decorations and placement.

Apps on a bare X display are undecorated and sit where they ask (mostly the top-left corner). With a window manager
they look as on a desktop: a title bar with the window's buttons, a border, a focused window's colours. The one
offered is JWM (Debian's ``jwm``: ~0.5 MB, 5 packages), run per session with a configuration of its own
(:data:`JWMRC`) chosen for screens that do not depend on time or on earlier apps: no tray (its clock and task list
would change frames), one desktop, windows centred on the screen (cascading placement would depend on the windows
before), focus on click (the pointer is parked in a corner), fixed colours and font. JWM frames (reparents) windows
that ask for decorations and leaves alone those that draw their own (GTK 4's client-side decorations, when the app
sets a title bar of its own; a plain GTK 4 window asks for a frame): the title bar and its buttons are drawn by the
window manager, are not in any app's accessible tree and so are never labelled.

``none`` runs no window manager (the screens of earlier runs).

The title bars are facts of the screen all the same: :func:`title_bars` reads them off a capture's ``frames`` (the
client window's geometry from the X server and the ``_NET_FRAME_EXTENTS`` the window manager set on it), so the
screenshot's app record names each bar's title and box (:class:`screenmill.schemas.records.WindowTitle`) and
``eval --truth-from-a11y`` counts OCR's reading of them.
"""

from __future__ import annotations

import os

from screenmill.schemas.records import WindowTitle

#: ``--window-manager`` values; the default is :data:`DEFAULT`.
WINDOW_MANAGERS = ("jwm", "none")
DEFAULT = "jwm"
#: Bumped when a window manager's configuration changes what a screen shows (part of the run's config hash).
VERSION = "1"

JWMRC = """<?xml version="1.0"?>
<JWM>
    <FocusModel>click</FocusModel>
    <Group><Option>centered</Option></Group>
    <WindowStyle>
        <Font>DejaVu Sans-9:bold</Font>
        <Width>4</Width>
        <Height>22</Height>
        <Active>
            <Foreground>#FFFFFF</Foreground><Background>#3465A4</Background>
            <Outline>#000000</Outline><Opacity>1.0</Opacity>
        </Active>
        <Foreground>#000000</Foreground><Background>#AAAAAA</Background>
        <Outline>#000000</Outline><Opacity>1.0</Opacity>
    </WindowStyle>
    <Desktops width="1" height="1"/>
    <MoveMode>opaque</MoveMode>
    <ResizeMode>opaque</ResizeMode>
</JWM>
"""


def check(name: str) -> str:
    """``name`` if it is a window manager offered here.

    Raises:
        ValueError: not one of :data:`WINDOW_MANAGERS`.
    """
    if name not in WINDOW_MANAGERS:
        raise ValueError(f"window manager {name!r}: must be one of {', '.join(WINDOW_MANAGERS)}")
    return name


def command(name: str, folder: str) -> list[str] | None:
    """The command line that runs window manager ``name`` with its configuration written under ``folder`` (None for
    ``none``)."""
    if check(name) == "none":
        return None
    path = os.path.join(folder, "jwmrc")
    with open(path, "w", encoding="utf-8") as f:
        f.write(JWMRC)
    os.chmod(path, 0o644)
    return ["jwm", "-f", path]


def client_geometry(capture, index: int) -> tuple[int, int, int, int]:
    """The client window of ``capture.x_windows[index]`` as the X server places it, ``(x, y, w, h)`` in screen pixels:
    the window a window manager framed (inside its frame), else the X window itself (also when ``capture.frames``
    was not read)."""
    frames = getattr(capture, "frames", None) or []
    got = frames[index] if index < len(frames) else None
    if got and got.get("client"):
        return tuple(got["client"])
    return tuple(capture.x_windows[index][1:5])


def title_bars(capture, screen: tuple[int, int]) -> tuple[WindowTitle, ...]:
    """The title bars the window manager drew on a capture's screen, bottom to top.

    Args:
        capture: a :class:`screenmill.annotators.desktop.session.Capture` (its ``x_windows`` and ``frames``).
        screen: the screen's size in pixels (a bar is clipped to it).

    Returns:
        One :class:`WindowTitle` per framed window (a ``_NET_FRAME_EXTENTS`` top above 0) with a non-empty title whose
        bar's centre lies on the screen and under no later-mapped (higher) X window: the bar spans the frame's width
        (client width + left + right extents) from the frame's top to the client's top, in screen pixels. Empty
        without a window manager (no extents) or when the frames were not read.
    """
    out = []
    frames = getattr(capture, "frames", None) or []
    for i, got in enumerate(frames[: len(capture.x_windows)]):
        if not got or not got.get("extents") or not got.get("title", "").strip():
            continue
        left, right, top, _bottom = got["extents"]
        x, y, w, _h = got["client"]
        if top <= 0:
            continue
        x0, y0 = max(x - left, 0), max(y - top, 0)
        x1, y1 = min(x + w + right, screen[0]), min(y, screen[1])
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        if (
            x1 <= x0
            or y1 <= y0
            or any(wx <= cx < wx + ww and wy <= cy < wy + wh for _, wx, wy, ww, wh in capture.x_windows[i + 1 :])
        ):
            continue  # off the screen, or a window or popup mapped later covers it
        out.append(WindowTitle(got["title"].strip(), float(x0), float(y0), float(x1), float(y1)))
    return tuple(out)
