"""A small GTK 3 app with the shapes the a11y referring expressions are for: a test fixture, started like any
``--apps`` line (``/usr/bin/python3 THIS_FILE``; python3-gi + gir1.2-gtk-3.0, infra/desktop/install.sh).

What it shows (first screen: the "People" tab):

* a menu bar (File: New, Preferences…, Quit; Help: About…) and a tool bar (New, Open, Preferences);
* a side bar at the left: a heading, rows of an icon button left of a text, a "Sync" button;
* a notebook with the tabs "People", "Form", "Options";
* People: a list whose rows each hold a name and an "Edit" and a "Delete" button (GTK's list rows: ``list item``),
  and a tree view table (``table cell`` s, no row nodes) of names, teams and cities;
* Form: labels above fields ("Email", "Full name") and one beside its field ("Phone"), "Submit" / "Reset";
* Options: check boxes;
* a status bar; "Preferences…" (menu item or tool button) opens a dialog with labels above fields and one beside its
  field, "Cancel", "OK".

No network, no files written, nothing random: the same screen every run.
"""

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402

PEOPLE = ("Alice Smith", "Bob Jones", "Carol White")
#: The table's rows: a team and a city repeat, so only its row tells one such cell from the other.
TABLE = (("Dan Brown", "Sales", "Paris"), ("Eve Black", "Sales", "Oslo"), ("Finn Grey", "Support", "Paris"))
#: Side bar rows: (icon name, the icon button's accessible name, the text right of it).
SIDE = (("starred", "Star", "Favourites"), ("user-trash", "Trash", "Deleted"), ("folder", "Folder", "Documents"))


def _named(widget, name):
    widget.get_accessible().set_name(name)
    return widget


def _icon_button(icon, name):
    button = Gtk.Button.new_from_icon_name(icon, Gtk.IconSize.BUTTON)  # GTK's icon button: its image is exposed
    button.set_relief(Gtk.ReliefStyle.NONE)
    return _named(button, name)


def _prefs(parent):
    dialog = Gtk.Dialog(title="Preferences", transient_for=parent, modal=True)
    dialog.set_default_size(320, 220)
    dialog.move(360, 220)
    box = dialog.get_content_area()
    box.set_spacing(4)
    box.set_border_width(12)
    for label in ("Nickname", "Email"):  # a label above its field (the fields have no name of their own)
        box.pack_start(Gtk.Label(label=label, xalign=0), False, False, 0)
        box.pack_start(Gtk.Entry(), False, False, 0)
    beside = Gtk.Box(spacing=8)  # and one beside it: no field is "below" it
    beside.pack_start(Gtk.Label(label="Phone"), False, False, 0)
    beside.pack_start(Gtk.Entry(), True, True, 0)
    box.pack_start(beside, False, False, 6)
    dialog.add_button("Cancel", Gtk.ResponseType.CANCEL)
    dialog.add_button("OK", Gtk.ResponseType.OK)
    dialog.show_all()
    dialog.connect("response", lambda d, _r: d.destroy())


def _menu_bar(win):
    bar = Gtk.MenuBar()
    for title, items in (("File", ("New", "Preferences…", "Quit")), ("Help", ("About…",))):
        top = Gtk.MenuItem(label=title)
        menu = Gtk.Menu()
        for item in items:
            mi = Gtk.MenuItem(label=item)
            if item == "Preferences…":
                mi.connect("activate", lambda _m: _prefs(win))
            elif item == "Quit":
                mi.connect("activate", lambda _m: Gtk.main_quit())
            menu.append(mi)
        top.set_submenu(menu)
        bar.append(top)
    return bar


def _tool_bar(win):
    bar = Gtk.Toolbar()
    bar.set_style(Gtk.ToolbarStyle.BOTH_HORIZ)
    for icon, label in (("document-new", "New"), ("document-open", "Open"), ("preferences-system", "Preferences")):
        button = Gtk.ToolButton(
            icon_widget=Gtk.Image.new_from_icon_name(icon, Gtk.IconSize.LARGE_TOOLBAR), label=label
        )
        button.set_is_important(True)
        if label == "Preferences":
            button.connect("clicked", lambda _b: _prefs(win))
        bar.insert(button, -1)
    return bar


def _side_bar():
    side = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
    side.set_border_width(8)
    side.set_size_request(190, -1)
    side.pack_start(Gtk.Label(label="Folders", xalign=0), False, False, 0)
    for icon, name, text in SIDE:
        row = Gtk.Box(spacing=2)
        row.pack_start(_icon_button(icon, name), False, False, 0)
        row.pack_start(Gtk.Label(label=text, xalign=0), False, False, 0)
        side.pack_start(row, False, False, 0)
    side.pack_end(Gtk.Button(label="Sync"), False, False, 0)
    return side


def _people():
    page = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8)
    page.set_border_width(10)
    page.pack_start(Gtk.Label(label="Team members", xalign=0), False, False, 0)
    rows = Gtk.ListBox()
    rows.set_selection_mode(Gtk.SelectionMode.NONE)
    for person in PEOPLE:
        line = Gtk.Box(spacing=8)
        line.set_border_width(4)
        line.pack_start(Gtk.Label(label=person, xalign=0, width_chars=16), False, False, 0)
        line.pack_end(Gtk.Button(label="Delete"), False, False, 0)
        line.pack_end(Gtk.Button(label="Edit"), False, False, 0)
        rows.add(line)
    page.pack_start(rows, False, False, 0)
    page.pack_start(Gtk.Label(label="Other teams", xalign=0), False, False, 0)
    store = Gtk.ListStore(str, str, str)
    for entry in TABLE:
        store.append(list(entry))
    view = Gtk.TreeView(model=store)
    for i, title in enumerate(("Name", "Team", "City")):
        column = Gtk.TreeViewColumn(title, Gtk.CellRendererText(), text=i)
        column.set_min_width(140)
        view.append_column(column)
    page.pack_start(view, False, False, 0)
    return page


def _form():
    page = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=4)
    page.set_border_width(10)
    for label in ("Email", "Full name"):
        page.pack_start(Gtk.Label(label=label, xalign=0), False, False, 0)
        page.pack_start(Gtk.Entry(), False, False, 0)
    beside = Gtk.Box(spacing=8)
    beside.pack_start(Gtk.Label(label="Phone"), False, False, 0)
    beside.pack_start(Gtk.Entry(), True, True, 0)
    page.pack_start(beside, False, False, 8)
    buttons = Gtk.Box(spacing=8)
    buttons.pack_start(Gtk.Button(label="Submit"), False, False, 0)
    buttons.pack_start(Gtk.Button(label="Reset"), False, False, 0)
    page.pack_start(buttons, False, False, 8)
    return page


def _options():
    page = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=4)
    page.set_border_width(10)
    for label in ("Send reports", "Dark theme", "Show hidden files"):
        page.pack_start(Gtk.CheckButton(label=label), False, False, 0)
    return page


def main():
    win = Gtk.Window(title="Shapes")
    win.set_default_size(960, 640)
    win.move(0, 0)
    win.connect("destroy", Gtk.main_quit)
    outer = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
    outer.pack_start(_menu_bar(win), False, False, 0)
    outer.pack_start(_tool_bar(win), False, False, 0)
    middle = Gtk.Box()
    middle.pack_start(_side_bar(), False, False, 0)
    middle.pack_start(Gtk.Separator(orientation=Gtk.Orientation.VERTICAL), False, False, 0)
    book = Gtk.Notebook()
    for title, page in (("People", _people()), ("Form", _form()), ("Options", _options())):
        book.append_page(page, Gtk.Label(label=title))
    middle.pack_start(book, True, True, 0)
    outer.pack_start(middle, True, True, 0)
    status = Gtk.Statusbar()
    status.push(0, "Ready")
    outer.pack_end(status, False, False, 0)
    win.add(outer)
    win.show_all()
    Gtk.main()


if __name__ == "__main__":
    main()
