"""A small GTK 4 app framed by the window manager: a test fixture, started like any ``--apps`` line
(``/usr/bin/python3 THIS_FILE [--csd]``; python3-gi + gir1.2-gtk-4.0, infra/desktop/install.sh).

A plain ``Gtk.ApplicationWindow`` titled "Framed shapes" with no custom title bar: on X11 GTK 4 then asks the window
manager for decorations (``_MOTIF_WM_HINTS`` decorations on) and draws no client-side shadow or title bar, so JWM
frames it (title bar, border, ``_NET_FRAME_EXTENTS``). ``--csd`` gives it a ``Gtk.HeaderBar`` as its title bar
instead (client-side decorations, titled "Drawn shapes"): GTK 4 then turns the window manager's decorations off and
JWM leaves it unframed, as it does gnome-calculator.

What it shows: a row of buttons ("Add", "Remove", "Help"), a label "Name" beside a text field, a label "Email" above
a text field, a check box "Remember me", a label "Ready" at the bottom. No network, no files written, nothing random:
the same screen every run.
"""

import sys

import gi

gi.require_version("Gtk", "4.0")
from gi.repository import Gio, Gtk  # noqa: E402

CSD = "--csd" in sys.argv[1:]
TITLE = "Drawn shapes" if CSD else "Framed shapes"


def build(app: Gtk.Application) -> None:
    win = Gtk.ApplicationWindow(application=app, title=TITLE)
    win.set_default_size(420, 300)
    if CSD:
        win.set_titlebar(Gtk.HeaderBar())
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=12)
    for side in ("top", "bottom", "start", "end"):
        getattr(box, f"set_margin_{side}")(16)
    buttons = Gtk.Box(spacing=8)
    for name in ("Add", "Remove", "Help"):
        buttons.append(Gtk.Button(label=name))
    box.append(buttons)
    field = Gtk.Box(spacing=8)
    field.append(Gtk.Label(label="Name"))
    entry = Gtk.Entry()
    entry.set_hexpand(True)
    field.append(entry)
    box.append(field)
    box.append(Gtk.Label(label="Email", halign=Gtk.Align.START))  # a label above its field: "the field below"
    box.append(Gtk.Entry())
    box.append(Gtk.CheckButton(label="Remember me"))
    status = Gtk.Label(label="Ready")
    status.set_vexpand(True)
    status.set_valign(Gtk.Align.END)
    status.set_halign(Gtk.Align.START)
    box.append(status)
    win.set_child(box)
    win.present()


def main() -> int:
    app = Gtk.Application(application_id="org.screenmill.Gtk4Framed", flags=Gio.ApplicationFlags.NON_UNIQUE)
    app.connect("activate", build)
    return app.run([sys.argv[0]])


if __name__ == "__main__":
    sys.exit(main())
