"""RenderApps through whole runs: real apps under Xvfb (GTK 3, GTK 4, Qt 5), their accessibility labels checked by an
independent checker in fresh sessions, hostile apps dead-lettered while the run goes on."""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import threading
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from screenmill.pipelines.run import run
from screenmill.schemas.tables import read_shards

pytestmark = pytest.mark.slow  # each test starts desktop sessions and real apps through a whole run

CHECKER = Path(__file__).resolve().parents[1] / "annotators" / "desktop" / "point_check.py"
TREE_DUMP = CHECKER.with_name("tree_dump.py")
#: The self-made GTK 3 app with the shapes the referring expressions are for (run by the system Python).
SHAPES = CHECKER.with_name("apps") / "gtk3_shapes.py"
#: Every a11y recipe family (the expressions beyond the text too: checked by tests/annotators/desktop/referring.py).
RECIPES = ("--a11y-recipes", "text,relational,visual,icon")
APPS = {"GTK3": "galculator", "GTK4": "gnome-calculator", "Qt5": "speedcrunch"}
#: The same apps on a display of scale 2 (logical 800x600, a 1600x1200 screen): checked like the others.
HIDPI = {f"{t}@2": json.dumps({"name": f"{a}-x2", "command": [a], "display": "800x600@2"}) for t, a in APPS.items()}
#: The self-made GTK 4 app without a title bar of its own, so the window manager frames it (server-side decorations;
#: gnome-calculator draws its own): its labels checked like the others', its title bar recorded.
FRAMED = CHECKER.with_name("apps") / "gtk4_framed.py"
FRAMED_LINE = json.dumps({"name": "gtk4-framed", "command": ["/usr/bin/python3", str(FRAMED)]})
#: Each checked case → the name of its app in the run.
CASES = {**APPS, **{f"{t}@2": f"{a}-x2" for t, a in APPS.items()}, "GTK4-framed": "gtk4-framed"}
#: JWM's active title bar colour (annotators/desktop/wm.py's JWMRC): the recorded title bars are painted in it.
TITLE_BAR_RGB = (0x34, 0x65, 0xA4)


def _desktop_missing() -> str | None:
    from screenmill.annotators.desktop.session import check_tools

    try:
        check_tools()
    except RuntimeError as e:
        return str(e)
    missing = [a for a in APPS.values() if subprocess.run(["which", a], capture_output=True).returncode]
    gtk4 = 'import gi; gi.require_version("Gtk", "4.0"); from gi.repository import Gtk'
    if subprocess.run(["/usr/bin/python3", "-c", gtk4], capture_output=True).returncode:
        missing.append("gir1.2-gtk-4.0")
    return f"test apps missing: {missing} (bash infra/desktop/install.sh)" if missing else None


@pytest.fixture(scope="module", autouse=True)
def _desktop():
    why = _desktop_missing()
    if why:
        pytest.skip(why)


def _args(out: Path, apps: Path, *extra: str) -> list[str]:
    return ["--apps", str(apps), "--output", str(out), "--annotator", "none", "--dt", "2026-12-02", "--quiet", *extra]


@pytest.fixture(scope="module")
def apps_run(tmp_path_factory):
    """One run over one app per toolkit (the session fixture the checks share)."""
    root = tmp_path_factory.mktemp("apps")
    apps = root / "apps.txt"
    lines = ["# one app per toolkit", *APPS.values(), *HIDPI.values(), FRAMED_LINE]
    apps.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = root / "out"
    manifest = run(_args(out, apps, *RECIPES))
    return out, apps, manifest


def test_apps_render_into_screenshots_with_a11y_labels(apps_run):
    out, apps, m = apps_run
    every = read_shards(str(out), "screenshots").to_pylist()
    shots = [s for s in every if s["render"]["device_scale_factor"] == 1 and s["app"]["name"] in APPS.values()]
    assert sorted(s["app"]["toolkit"] for s in shots) == sorted(APPS)
    for s in shots:
        assert hashlib.sha256(Path(s["source_uri"]).read_bytes()).hexdigest() == s["screenshot_id"]
        app = s["app"]
        assert s["page_uri"] == f"app:{app['name']}" and app["name"] == APPS[app["toolkit"]]
        version = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", app["package"]], capture_output=True)
        assert app["package_version"] == version.stdout.decode() and app["package"] == app["name"]
        assert (s["width"], s["height"]) == (1280, 800) and s["render"]["device_scale_factor"] == 1
    labels = read_shards(str(out), "grounding").to_pylist()
    assert {r["annotator"] for r in labels} == {"a11y"} and all(r["recipe"].startswith("a11y-") for r in labels)
    labels = [r for r in labels if r["screenshot_id"] in {s["screenshot_id"] for s in shots}]
    by_app = defaultdict(set)
    toolkit = {s["screenshot_id"]: s["app"]["toolkit"] for s in shots}
    per_shot = Counter((r["screenshot_id"], r["instruction"].casefold()) for r in labels)
    assert max(per_shot.values()) == 1  # never ambiguous: an instruction names one element of a screenshot
    for r in labels:
        by_app[toolkit[r["screenshot_id"]]].add(r["instruction"])
        assert "Gtk" not in r["instruction"] and "Adw" not in r["instruction"]  # developer names dropped
    assert {'click the "7" button', 'click the "File" menu item'} <= by_app["GTK3"]
    assert {'click the "7" button', 'click "Undo"', 'click the "Close" button'} <= by_app["GTK4"]
    assert 'click "7 7"' not in by_app["GTK4"]  # GTK 4's doubled names are halved
    assert {'click the "Session" menu item', 'click "Type an expression here"'} <= by_app["Qt5"]
    # a rerun does nothing new: every app setting is done under the same config
    again = run(_args(out, apps, *RECIPES))
    assert again["counts"]["render_apps"]["skipped_done"] == 7
    made = m["counts"]["render_apps"]
    assert made["labels_a11y-landmark"] >= 10 and made["labels_a11y-size"] >= 2  # menu bars; the "=" buttons
    assert len(read_shards(str(out), "screenshots")) == 7


def test_the_title_bars_the_window_manager_drew_are_in_the_app_record(apps_run):
    """GTK 3 and a GTK 4 window without a title bar of its own (server-side decorations) are framed by JWM: the app
    record names the window's title and its bar's box, where the screenshot shows JWM's title bar colour above the
    labelled elements; gnome-calculator draws its own (GTK 4 client-side decorations): unframed, no title bar."""
    import numpy as np
    from PIL import Image

    out, _, _ = apps_run
    shots = {s["app"]["name"]: s for s in read_shards(str(out), "screenshots").to_pylist()}
    labels = read_shards(str(out), "grounding").to_pylist()
    want = {"galculator": "galculator", "galculator-x2": "galculator", "gtk4-framed": "Framed shapes"}
    want |= {"speedcrunch": "SpeedCrunch", "speedcrunch-x2": "SpeedCrunch"}
    assert {n: [t["title"] for t in s["app"]["window_titles"]] for n, s in shots.items()} == {
        n: [want[n]] if n in want else [] for n in shots
    }
    for name in want:
        shot = shots[name]
        (bar,) = shot["app"]["window_titles"]
        x0, y0, x1, y1 = (int(bar[k]) for k in ("x0", "y0", "x1", "y1"))
        assert y1 - y0 == 22  # JWM's <Height> (annotators/desktop/wm.py), read back from _NET_FRAME_EXTENTS
        px = np.asarray(Image.open(shot["source_uri"]).convert("RGB"))[y0:y1, x0:x1].reshape(-1, 3)
        share = (np.abs(px.astype(int) - TITLE_BAR_RGB).max(axis=1) <= 8).mean()
        assert share >= 0.6, (name, share)  # JWM's active title bar is painted there
        mine = [r for r in labels if r["screenshot_id"] == shot["screenshot_id"]]
        # a toolkit answering in logical px of a scaled display rounds an odd client origin down (GTK 3 at @2: its
        # menu bar's boxes start 1 px above the client window, y 256 under a bar ending at 257)
        slack = shot["render"]["device_scale_factor"] - 0.5
        assert mine and all(r["y0"] >= y1 - slack and x0 <= r["click_x"] <= x1 for r in mine), name


@pytest.mark.parametrize("toolkit", sorted(CASES))
def test_an_independent_checker_confirms_every_label_in_a_fresh_session(apps_run, toolkit):
    """Relaunch the app at the recorded settings in a fresh session; the deepest accessible at each label's click
    point (asked of the toolkit by tests/annotators/desktop/point_check.py) has the label's name and role (with the
    window manager on, the default: GTK 4 framed by it too, ``GTK4-framed``)."""
    from screenmill.annotators.desktop.apps import AppSpec
    from screenmill.annotators.desktop.session import DesktopSession
    from screenmill.annotators.dom.page import Viewport

    out, _, _ = apps_run
    scale = toolkit.partition("@")[2]
    shots = read_shards(str(out), "screenshots").to_pylist()
    shot = next(s for s in shots if s["app"]["name"] == CASES[toolkit])
    assert shot["app"]["toolkit"] == toolkit.partition("@")[0].split("-")[0]
    assert (shot["width"], shot["height"]) == ((1280, 800) if not scale else (1600, 1200))
    labels = [r for r in read_shards(str(out), "grounding").to_pylist() if r["screenshot_id"] == shot["screenshot_id"]]
    assert len(labels) >= 10
    r = shot["render"]
    app = AppSpec(shot["app"]["name"], tuple(json.loads(shot["app"]["command"])))
    session = DesktopSession(Viewport(r["viewport_width"], r["viewport_height"], r["device_scale_factor"])).start()
    try:
        session.run_app(app)
        live = session.capture(app)  # settled
        points = _points(labels)
        # the checker's control: each label's point asked for the next label's element (a different one, mostly)
        texts = sorted({p["text"] for p in points if p["text"]})  # words to ask for (a field below a text: none)
        decoys = [p | {"text": texts[(texts.index(p["text"]) + 1) % len(texts)]} for p in points if p["text"]]
        got = session.exec(
            ["/usr/bin/python3", "-I", str(CHECKER)],
            json.dumps({"points": points + decoys, "scale": r["device_scale_factor"]}),
        )
        tree = session.exec(
            ["/usr/bin/python3", "-I", str(TREE_DUMP)], json.dumps({"scale": r["device_scale_factor"]})
        )
    finally:
        session.close()
    _check_expressions(toolkit, labels, tree, live.png)
    assert got["rc"] == 0, got["stderr"]
    results = json.loads(got["stdout"])["results"]
    wrong = [(p, res["found"]) for p, res in zip(points, results[: len(points)], strict=True) if not res["ok"]]
    precision = 1 - len(wrong) / len(points)
    assert precision >= 0.99, (toolkit, precision, wrong[:5])
    fooled = sum(res["ok"] for res in results[len(points) :])
    print(f"checker {toolkit}: {len(points)} labels, precision {precision:.3f}, {fooled} of {len(decoys)} decoys")
    assert fooled <= 0.1 * len(decoys), (toolkit, fooled)  # it tells one element from another


def _points(labels: list[dict]) -> list[dict]:
    """The point checker's request for labels: each one's click point, words and role. A field below a text has no
    name of its own (its text is the anchor): its role at its point, which field it is by the referring checker."""
    return [
        {"x": x["click_x"], "y": x["click_y"], "role": x["role"]}
        | {"text": "" if x["recipe"] == "a11y-below" else x["element_text"]}
        for x in labels
    ]


def _check_expressions(toolkit: str, labels: list[dict], tree: dict, png: bytes) -> dict[str, dict[str, int]]:
    """The expressions beyond the text, resolved by tests/annotators/desktop/referring.py against the fresh session's
    live tree and screenshot: each selects exactly its element (precision >= 0.99 per recipe), none ambiguous."""
    import io

    from PIL import Image

    from tests.annotators.desktop.referring import check

    assert tree["rc"] == 0, tree["stderr"]
    nodes = json.loads(tree["stdout"])["nodes"]
    got = check(labels, nodes, Image.open(io.BytesIO(png)).convert("RGB"))
    print(f"referring {toolkit}: {json.dumps(got, sort_keys=True)}")
    assert got or "#" in toolkit, (toolkit, "no expression beyond the text")  # a menu bar or a large "=" button
    for recipe, c in got.items():
        assert c["ambiguous"] == 0 and c["pua"] == 0, (toolkit, recipe, c)
        assert c["right"] / c["labels"] >= 0.99, (toolkit, recipe, c)
    # the checker's control: each expression with the click point of the next (another element) is not confirmed
    rel = [x for x in labels if x["recipe"] in got]
    pairs = [(x, y) for x, y in zip(rel, rel[1:] + rel[:1], strict=True) if x["element_text"] != y["element_text"]]
    moved = [x | {"click_x": y["click_x"], "click_y": y["click_y"]} for x, y in pairs]
    fooled = sum(c["right"] for c in check(moved, nodes, Image.open(io.BytesIO(png)).convert("RGB")).values())
    assert fooled == 0, (toolkit, fooled, len(moved))
    return got


def test_explored_frames_of_the_shapes_app_pass_both_checkers(tmp_path):
    """The self-made GTK 3 app (tests/annotators/desktop/apps/gtk3_shapes.py: rows of a name and "Edit" / "Delete",
    a table of cells, a form, icon buttons left of texts, a side bar, tabs, a tool bar, a dialog), explored with
    every a11y recipe; in one fresh session each episode's recorded actions are replayed and every frame
    (menus and dialogs opened included) is checked by both independent checkers against that frame's live tree."""
    gtk = 'import gi; gi.require_version("Gtk", "3.0"); from gi.repository import Gtk'
    if subprocess.run(["/usr/bin/python3", "-c", gtk], capture_output=True).returncode:
        pytest.skip("GTK 3's introspection data is missing (bash infra/desktop/install.sh: gir1.2-gtk-3.0)")
    shapes = json.dumps({"name": "shapes", "command": ["/usr/bin/python3", str(SHAPES)]})
    apps = tmp_path / "apps.txt"
    apps.write_text(f"{shapes}\n", encoding="utf-8")
    out = tmp_path / "out"
    m = run(_args(out, apps, *RECIPES, "--explore", "6", "--explore-seed", "1"))
    made = m["counts"]["render_apps"]
    assert made["episodes"] == 1 and not (out / "_dead_letter").exists()
    shots = read_shards(str(out), "screenshots").to_pylist()
    labels = read_shards(str(out), "grounding").to_pylist()
    by_shot = defaultdict(list)
    for r in labels:
        by_shot[r["screenshot_id"]].append(r)
    per_recipe = Counter(r["recipe"] for r in labels)
    print(f"explored labels: {len(shots)} frames, {json.dumps(dict(sorted(per_recipe.items())))}")
    for recipe in ("a11y-row", "a11y-left-of", "a11y-icon", "a11y-landmark", "a11y-below"):
        assert per_recipe[recipe] >= 1, (recipe, per_recipe)
    said = {r["instruction"] for r in labels}
    assert 'click the "Edit" button in the row of "Alice Smith"' in said  # a list row of a name and its buttons
    assert 'click the "Sales" cell in the row of "Eve Black"' in said  # GTK 3's table cells, rows by their line
    assert {'click the "Sync" button in the side bar', 'click the icon to the left of "Favourites"'} <= said
    assert (
        "click the star icon" in said and 'click the "OK" button in the dialog' in said
    )  # a dialog the episode opened
    assert {'click the field below "Nickname"', 'click the field below "Email"'} <= said  # its fields have no names
    totals, wrong = _check_explored(shots, labels)
    assert not wrong, wrong[:5]


#: galculator in RPN notation (its settings file written in the app's fresh XDG_CONFIG_HOME): its display is a stack
#: of four lines, a text of equal halves ("0 0 0 0") that is painted so, not a doubled name to be halved.
RPN = (
    'mkdir -p "$XDG_CONFIG_HOME/galculator" && printf "[general]\\ndefault_notation_mode=1\\n" '
    '> "$XDG_CONFIG_HOME/galculator/galculator.conf" && exec galculator'
)


def test_explored_frames_of_the_sample_apps_pass_both_checkers(tmp_path):
    """The sample apps (samples/apps.txt: GTK 3 galculator, in RPN notation, and mousepad; GTK 4 gnome-calculator;
    Qt 5 speedcrunch), explored 3 steps with every a11y recipe (seed 2: a galculator menu opened, mousepad's File >
    New Window mapped over the first, gnome-calculator's mode popover opened and an item of it chosen, speedcrunch's
    Session menu opened, its items labelled, and Load... chosen: a file dialog in the fixed HOME), each episode
    replayed in one fresh session and every frame checked by both independent checkers: per toolkit precision >=
    0.99, no expression ambiguous, the point checker not fooled by another label's text. No frame is left out."""
    rpn = json.dumps({"name": "galculator", "command": ["sh", "-c", RPN]})
    apps = tmp_path / "apps.txt"
    apps.write_text("\n".join([rpn, "mousepad", "gnome-calculator", "speedcrunch"]) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    m = run(_args(out, apps, *RECIPES, "--explore", "3", "--explore-seed", "2"))
    assert m["counts"]["render_apps"]["episodes"] == 4 and not (out / "_dead_letter").exists()
    shots = read_shards(str(out), "screenshots").to_pylist()
    labels = read_shards(str(out), "grounding").to_pylist()
    app_of = {s["screenshot_id"]: s["app"]["name"] for s in shots}
    said = {(app_of[r["screenshot_id"]], r["element_text"], r["role"]) for r in labels}
    assert ("galculator", "0 0 0 0", None) in said  # the RPN stack as painted, four lines
    assert ("gnome-calculator", "Advanced", "menuitemradio") in said  # an item of GTK 4's popover, its own surface
    assert ("speedcrunch", "Load...", "menuitem") in said  # an item of Qt 5's open menu (its "popup menu")
    step_of = {s["screenshot_id"]: (s["app"]["name"], s["step_index"]) for s in shots}
    on_top = {r["element_text"] for r in labels if step_of[r["screenshot_id"]] == ("mousepad", 3)}
    assert {"File", "Edit"} <= on_top, on_top  # mousepad's New Window over the first: its own elements labelled
    totals, wrong = _check_explored(shots, labels)
    assert not [w for w in wrong if w[2]["text"] == "0 0 0 0"], wrong  # the display's words are its text's
    for toolkit in ("GTK3", "GTK4", "Qt5"):
        c = totals[f"{toolkit} point"]
        assert c["labels"] >= 40 and c["right"] / c["labels"] >= 0.99, (toolkit, c, wrong[:5])
        assert c["fooled"] <= 0.1 * c["decoys"], (toolkit, c)


#: The explored frames' control of the point checker: every this-many-th label's point asked for another text (the
#: checker's time is per point; the first screens' test asks it for every label).
DECOY_EVERY = 4


def _check_explored(shots: list[dict], labels: list[dict]) -> tuple[dict[str, Counter], list]:
    """Replay every episode of ``shots`` (one fresh session, app after app) and check each frame by both checkers.

    Each frame's recorded action is acted out by the explorer's own ``act`` (clicks, typing, keys to the topmost
    window); the live frame must hash as recorded; the referring checker resolves the frame's expressions
    (:func:`_check_expressions`: precision >= 0.99 per recipe and frame, none ambiguous) and the point checker asks
    for each label's element at its point (a field below a text has no name of its own: its role there) and, as its
    control, for the next label's text at every :data:`DECOY_EVERY`-th label's point.

    Returns:
        ``(totals, wrong)``: per ``"<toolkit> <recipe>"`` and ``"<toolkit> point"`` the counts (``labels``,
        ``right``; the point checker's ``decoys`` and ``fooled``, decoys confirmed), and the point checker's misses
        ``(app, step, point, found)``. Printed.
    """
    from screenmill.annotators.desktop import a11y
    from screenmill.annotators.desktop.apps import AppSpec
    from screenmill.annotators.desktop.explore import Frame, act
    from screenmill.annotators.desktop.session import DesktopSession
    from screenmill.annotators.dom.explore import action_from_recorded
    from screenmill.annotators.dom.page import Viewport

    by_shot = defaultdict(list)
    for r in labels:
        by_shot[r["screenshot_id"]].append(r)
    totals: dict[str, Counter] = defaultdict(Counter)
    wrong: list = []
    session = DesktopSession(Viewport(1280, 800)).start()
    try:
        for name in sorted({s["app"]["name"] for s in shots}):
            frames = sorted((s for s in shots if s["app"]["name"] == name), key=lambda s: s["step_index"])
            app = AppSpec(name, tuple(json.loads(frames[0]["app"]["command"])))
            session.run_app(app)
            live = None
            for shot in frames:
                if shot["step_index"]:
                    action = action_from_recorded(json.loads(frames[shot["step_index"] - 1]["recorded_action"]), 1)
                    act(session, action, 1, Frame(live, a11y.elements(live, session.screen_size, 1)))
                live = session.capture(app)
                assert hashlib.sha256(live.png).hexdigest() == shot["screenshot_id"], (name, shot["step_index"])
                kit, rows = shot["app"]["toolkit"], by_shot[shot["screenshot_id"]]
                tree = session.exec(["/usr/bin/python3", "-I", str(TREE_DUMP)], json.dumps({"scale": 1}))
                for recipe, c in _check_expressions(f"{name}#{shot['step_index']}", rows, tree, live.png).items():
                    totals[f"{kit} {recipe}"].update(c)
                points = _points(rows)
                texts = sorted({p["text"] for p in points if p["text"]})
                decoys = [  # every DECOY_EVERY-th label's point asked for the next text (the checker's control)
                    p | {"text": texts[(texts.index(p["text"]) + 1) % len(texts)]}
                    for p in points[::DECOY_EVERY]
                    if p["text"] and len(texts) > 1
                ]
                got = session.exec(
                    ["/usr/bin/python3", "-I", str(CHECKER)], json.dumps({"points": points + decoys, "scale": 1})
                )
                assert got["rc"] == 0, got["stderr"]
                results = json.loads(got["stdout"])["results"]
                missed = [
                    (name, shot["step_index"], p, r["found"])
                    for p, r in zip(points, results[: len(points)], strict=True)
                    if not r["ok"]
                ]
                wrong += missed
                decoyed = zip(decoys, results[len(points) :], strict=True)
                confirmed = [(d["text"], r["found"][:2]) for d, r in decoyed if r["ok"]]
                fooled = len(confirmed)
                if confirmed:
                    print("decoys confirmed at", name, shot["step_index"], confirmed)
                right = len(points) - len(missed)
                totals[f"{kit} point"].update(
                    {"labels": len(points), "right": right, "decoys": len(decoys), "fooled": fooled}
                )
            session.stop_app()
    finally:
        session.close()
    print("explored precision:", {k: f"{c['right']}/{c['labels']}" for k, c in sorted(totals.items())})
    print("decoys confirmed:", {k: f"{c['fooled']}/{c['decoys']}" for k, c in sorted(totals.items()) if "decoys" in c})
    return totals, wrong


def test_eval_scores_ocr_labels_against_the_a11y_labels_of_the_same_app_screens(tmp_path, capsys):
    """`run --apps --annotator ocr` OCRs the app screenshots like any others; `eval --truth-from-a11y` scores those
    labels against the app's accessibility labels and its window's title bar (recall, point accuracy, a table by
    role, the window titles apart)."""
    from screenmill.pipelines.evaluate import main as eval_main

    apps = tmp_path / "apps.txt"
    apps.write_text("galculator\n", encoding="utf-8")
    out = tmp_path / "out"
    args = _args(out, apps)
    args[args.index("none")] = "ocr"
    run(args)
    annotators = Counter(r["annotator"] for r in read_shards(str(out), "grounding").to_pylist())
    assert annotators["a11y"] > 0 and sum(n for a, n in annotators.items() if a.startswith("ocr")) > 0
    capsys.readouterr()
    assert eval_main([str(out), "--truth-from-a11y"]) == 0
    printed = capsys.readouterr().out
    assert "role" in printed and "button" in printed and "menuitem" in printed
    body = json.loads(next((out / "_eval").glob("*.json")).read_text())
    assert body["truth"] > 0 and body["found"] > 0 and body["predictions"] > 0
    assert 0 < body["recall"] <= 1 and 0 < body["point_accuracy"] <= 1
    assert body["by_element"]["menuitem"]["found"] >= 1  # OCR reads the menu bar (File, Edit, ...)
    # the title bar JWM drew (in no accessible tree) is truth too, from the app record, and OCR reads it
    assert "window titles: 1, found 1" in printed and body["by_element"]["window title"]["precision"] == 1
    assert eval_main([str(out), "--truth-from-dom"]) == 2  # no rendered page: the a11y labels are no DOM truth
    assert "no DOM labels" in capsys.readouterr().out


def test_hostile_apps_are_dead_lettered_and_the_run_goes_on(tmp_path):
    """A hang, a crash, a window storm and an app reaching for the network; a good app after them is labelled."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    seen: list = []
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                seen.append(listener.accept()[1])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    probe = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)"
    storm = "for i in $(seq 50); do xmessage -geometry +$((i*9))+$((i*7)) storm$i & done; sleep 1; exec galculator"
    lines = [
        "hang: sleep 600",
        "crash: sh -c 'kill -SEGV $$'",
        json.dumps({"name": "storm", "command": ["sh", "-c", storm]}),
        json.dumps({"name": "net", "command": ["sh", "-c", f'/usr/bin/python3 -c "{probe}"; exec mousepad']}),
        "good: galculator",
    ]
    apps = tmp_path / "apps.txt"
    apps.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    try:
        m = run(_args(out, apps, "--app-start-timeout", "4"))
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()
    assert seen == []  # nothing reached this machine's loopback from inside the session
    dead = {
        r["input_id"].split(" ")[0]: r["reason"] for r in read_shards(str(out), "_dead_letter/render_apps").to_pylist()
    }
    assert dead == {"app:hang": "app_timeout", "app:crash": "app_crashed", "app:storm": "app_window_storm"}
    shots = read_shards(str(out), "screenshots").to_pylist()
    assert sorted(s["app"]["name"] for s in shots) == ["good", "net"]  # the net app runs (mousepad), offline
    assert m["counts"]["render_apps"]["sessions"] >= 3  # a fresh session after each dead letter
    assert not m["counts"]["render_apps"].get("sessions_without_namespace")  # each in the fence's namespace
    labels = read_shards(str(out), "grounding").to_pylist()
    assert {r["screenshot_id"] for r in labels} == {s["screenshot_id"] for s in shots}
    leftover = subprocess.run(["pgrep", "-u", "nobody", "-f", "galculator|xmessage|sleep 600"], capture_output=True)
    assert leftover.stdout == b""  # every process of every session is gone


def _tamper(out: Path, dest: Path, episode: str, step: int, **changes) -> None:
    """A copy of the run's output whose ``step`` of ``episode`` has its recorded action changed (real Parquet)."""
    import shutil

    import pyarrow.parquet as pq
    from screenmill.schemas.records import Screenshot

    shutil.copytree(out, dest)
    for part in (dest / "screenshots").glob("dt=*/part-*.parquet"):
        rows = pq.read_table(part).to_pylist()
        for r in rows:
            if r["episode_id"] == episode and r["step_index"] == step:
                r["recorded_action"] = json.dumps(json.loads(r["recorded_action"]) | changes)
        pq.write_table(pa_table(rows, Screenshot.SCHEMA), part)


def pa_table(rows, schema):
    import pyarrow as pa

    return pa.Table.from_pylist(rows, schema=schema)


def test_explored_app_episodes_replay_their_recorded_actions_to_the_same_frames(tmp_path, capsys):
    """--explore on apps (galculator, mousepad: menus opened and closed, by Escape too): frames, a11y labels per
    frame (an opened menu's items too), actions rows (a key pressed among them); `screenmill replay` acts out each
    episode's recorded actions in a fresh session and gets the same frame hashes; a recorded action changed in the
    table gives other frames from that step on (exit 1); the same seed in a fresh session explores the same, and
    again in that session gives the same frames, elements and actions; an app that then hangs is a time-out."""
    from screenmill.annotators.desktop.apps import AppSpec
    from screenmill.annotators.desktop.explore import explore_app
    from screenmill.annotators.desktop.session import AppError, DesktopSession, SessionConfig
    from screenmill.annotators.dom.explore import ExploreSettings, instruction
    from screenmill.annotators.dom.page import Viewport
    from screenmill.pipelines.cli import main as cli

    apps = tmp_path / "apps.txt"
    apps.write_text("galculator\nmousepad\n", encoding="utf-8")
    out = tmp_path / "out"
    m = run(_args(out, apps, "--explore", "5", "--explore-seed", "1"))
    counts = m["counts"]["render_apps"]
    assert counts["episodes"] == 2 and counts["steps"] == 10 and counts["sessions"] == 1
    episodes = defaultdict(list)
    for s in read_shards(str(out), "screenshots").to_pylist():
        episodes[s["page_uri"]].append(s)
    every = sorted(read_shards(str(out), "actions").to_pylist(), key=lambda r: r["step"])
    shots = sorted(episodes["app:galculator"], key=lambda s: s["step_index"])
    assert [s["step_index"] for s in shots] == list(range(6)) and len({s["episode_id"] for s in shots}) == 1
    actions = [r for r in every if r["episode_id"] == shots[0]["episode_id"]]
    assert [r["step"] for r in actions] == list(range(5)) and {r["annotator"] for r in every} == {"a11y"}
    assert (
        all(json.loads(s["recorded_action"])["type"] == "click" for s in shots[:5])
        and shots[5]["recorded_action"] is None
    )
    # mousepad: File > Open Recent opens a submenu of disabled items only, which Escape closes (a key step)
    keys = [json.loads(r["action_args"]) | {"t": r["action_type"]} for r in every if r["action_type"] == "press_key"]
    assert keys and keys[0] == {"type": "key", "key": "Escape", "instruction": "press Escape", "noop": False,
                                "blocked": False, "t": "press_key"}  # fmt: skip
    labels = read_shards(str(out), "grounding").to_pylist()
    by_step = {s["screenshot_id"]: s["step_index"] for s in shots}
    menu_items = {r["element_text"] for r in labels if r["role"] == "menuitem" and by_step.get(r["screenshot_id"])}
    assert menu_items - {"File", "Edit", "View", "Calculator", "Help"}  # a menu the episode opened is labelled

    capsys.readouterr()
    assert cli(["replay", str(out), "--apps", str(apps)]) == 0
    printed = capsys.readouterr().out
    assert "app:galculator: 6/6 frames match" in printed and "app:mousepad: 6/6 frames match" in printed
    assert "2/2 episodes replay to the same frames" in printed
    report = json.loads((out / "_replay" / "replay.json").read_text())
    assert report["ok"] and all(e["got"] == e["recorded"] for e in report["episodes"])
    # the replay acts out the table's actions (not the policy): step 1's click moved to an empty corner (it closes
    # the menu step 0 opened instead) changes frame 2 and every frame after it
    eid = shots[0]["episode_id"]
    _tamper(out, tmp_path / "tampered", eid, 1, x=1270, y=790)
    assert cli(["replay", str(tmp_path / "tampered"), "--episode", eid[:12]]) == 1
    printed = capsys.readouterr().out
    report = json.loads((tmp_path / "tampered" / "_replay" / "replay.json").read_text())["episodes"]
    assert len(report) == 1 and report[0]["mismatched"][0] == 2 and report[0]["got"][:2] == report[0]["recorded"][:2]
    assert report[0]["got"][2] == shots[0]["screenshot_id"] and "frames differ at step(s) 2" in printed
    assert cli(["replay", str(out), "--episode", "nosuchepisode"]) == 2
    assert "--episode nosuchepisode: names no episode" in capsys.readouterr().err

    app = AppSpec("galculator", ("galculator",))
    session = DesktopSession(Viewport(1280, 800), SessionConfig(step_timeout_s=6)).start()
    try:
        session.run_app(app)
        again = explore_app(session, app, ExploreSettings(5, 1))
        session.stop_app()
        session.run_app(app)  # the same app and seed again in the same session: the same frames and labels
        twice = explore_app(session, app, ExploreSettings(5, 1))
        # then the app hangs (stopped): the next screen is a time-out, not a screenshot of a frozen window
        assert session.exec(["sh", "-c", "kill -STOP $SCREENMILL_APP_PID"])["rc"] == 0
        with pytest.raises(AppError) as hung:
            session.capture(app)
        assert hung.value.reason == "app_timeout"
    finally:
        session.close()
    assert [hashlib.sha256(f.capture.png).hexdigest() for f in again.frames] == [s["screenshot_id"] for s in shots]
    assert [f.elements for f in twice.frames] == [f.elements for f in again.frames]
    assert [f.capture.frame_sha for f in twice.frames] == [f.capture.frame_sha for f in again.frames]
    assert [s.action for s in twice.steps] == [s.action for s in again.steps]
    assert [instruction(s.action) for s in again.steps] == [
        json.loads(r["action_args"])["instruction"] for r in actions
    ]
