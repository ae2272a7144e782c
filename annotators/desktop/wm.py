"""The window manager a desktop session runs on its display (``--window-manager``): decorations and placement.

Apps on a bare X display are undecorated and sit where they ask (mostly the top-left corner). With a window manager
they look as on a desktop: a title bar with the window's buttons, a border, a focused window's colours. The one
offered is JWM (Debian's ``jwm``: ~0.5 MB, 5 packages), run per session with a configuration of its own
(:data:`JWMRC`) chosen for screens that do not depend on time or on earlier apps: no tray (its clock and task list
would change frames), one desktop, windows centred on the screen (cascading placement would depend on the windows
before), focus on click (the pointer is parked in a corner), fixed colours and font. JWM frames (reparents) windows
that ask for decorations and leaves alone those that draw their own (GTK 4's client-side decorations): the title
bar's buttons are drawn by the window manager, are not in any app's accessible tree and so are never labelled.

``none`` runs no window manager (the screens of earlier runs).
"""

from __future__ import annotations

import os

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
