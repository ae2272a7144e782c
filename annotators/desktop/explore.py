"""Explore a desktop app step by step into an action trace (frames + recorded actions), as pages are explored.

:func:`explore_app` takes the app's first settled screen (frame 0), then up to ``steps`` actions: each picks one of
the labelled elements (:func:`screenmill.annotators.desktop.a11y.elements`) with a seeded policy (:func:`choose`),
acts on it with ``xdotool`` at its click point (:func:`act`: the pointer parked in the screen's corner after, except on
an item that opened a submenu, :func:`stays`), waits until the screen and the tree settle
(:meth:`screenmill.annotators.desktop.session.DesktopSession.capture`) and records what came of it. The actions are
the page explorer's (:mod:`screenmill.annotators.dom.explore`: :class:`Action`, :class:`Step`, their recorded format
and instruction templates): a click, or for a text field a click, select-all and plausible text typed, or a key
pressed (``type='key'``, recorded as ``press_key`` with the key's name, instruction ``press Escape``).

The policy, seeded and deterministic (``random.Random(seed)`` over candidates in reading order): the controls not yet
acted on (by role and name), buttons / menu items / tabs / text fields first; never one that would end the app
(:func:`denied`: a name that starts with a word of :data:`DENY_WORDS`, quit, exit, close a window or a tab, or is one
of :data:`DENY_IN_WINDOW`, minimise or maximise, or of :data:`DENY_CLOCKED`, a new folder dated by the clock; the ban
holds for every element the policy may act on, the items of an open menu included (mousepad's File > "Close Window"
ended the app); only a dialog's own "Close" button, a control in a popup that is not a menu item, is fine). While a
menu or dialog an action opened is up (more X windows than before it), only its elements are candidates (a click
elsewhere is eaten by the menu); when none of them is left, :data:`CLOSE_KEY` (Escape) is pressed to close it (a
submenu closes first, its menu is then on top again), and if it is still up its opener is clicked again; when neither
closes it the episode ends. The episode also ends when nothing is left (fewer than ``steps`` actions).

Outcomes: a step whose frame has the same sha256 as the previous one is a no-op (recorded, flagged). Failures are the
session's (:class:`screenmill.annotators.desktop.session.AppError`): an app that dies or hangs mid-episode fails the
episode.
"""

from __future__ import annotations

import dataclasses
import random

from screenmill.annotators.desktop import a11y
from screenmill.annotators.desktop.apps import AppSpec
from screenmill.annotators.desktop.session import Capture, DesktopSession
from screenmill.annotators.dom.explore import (
    HIGH_ROLES,
    Action,
    ExploreSettings,
    Step,
    action_for,
    action_from_recorded,
    element_key,
)

#: Bumped whenever the policy or the actions change what an episode holds (part of every episode's id).
#: 2: Escape closes a menu or dialog whose elements are all acted on (before its opener is clicked again).
#: 3: the ban (:func:`denied`) holds for the items of an open menu too ("Close Window", "Close Tab").
#: 4: the pointer stays on an open menu's item that opens a submenu after its click (:func:`stays`), not parked.
#: 5: the ban reads a whole name without mnemonic marks (``&``), not its first word only (:func:`denied`).
EXPLORE_VERSION = "5"
#: A control whose name's first word is one of these is never acted on, wherever it is (a menu's item too): it would
#: end the app ("Quit", "Exit"), or close one of its windows or its last tab and so end it ("Close Window", "Close
#: Tab", "Close All"), except a dialog's button (:data:`DIALOG_CLOSE`).
DENY_WORDS = frozenset({"quit", "exit", "close"})
#: A dialog's button of a name of these words closes the dialog only: acted on (a button in a popup, not a menu item).
DIALOG_CLOSE = frozenset({"close"})
#: Controls of these names not acted on in any window (they would hide or resize it).
DENY_IN_WINDOW = frozenset({"minimize", "minimise", "maximize", "maximise"})
#: Controls of these names make a file in the app's HOME whose date is the wall clock's, which a file dialog then
#: shows (Qt 5's "Create New Folder": speedcrunch's seed 4 never gave the same frames twice after it): not acted on,
#: so an episode replays to the same frames.
DENY_CLOCKED = frozenset({"create new folder", "new folder", "create folder"})
#: The roles of a menu's items (:data:`screenmill.annotators.desktop.a11y.ROLES`): never a dialog's button.
MENU_ROLES = frozenset({"menuitem", "menuitemcheckbox", "menuitemradio"})
#: The key that closes the menu or dialog on top (a menu's submenu first), pressed before its opener is clicked again.
CLOSE_KEY = "Escape"


@dataclasses.dataclass(slots=True)
class Frame:
    """One settled screen of an episode and its labelled elements."""

    capture: Capture
    elements: list[dict]


@dataclasses.dataclass(slots=True)
class ExploredApp:
    """An episode: ``frames`` (frame 0 the app as started, frame *i* after ``steps[i-1]``)."""

    frames: list[Frame]
    steps: list[Step]


def candidates(elements: list[dict], visited: set[tuple], windows_before: int | None) -> list[tuple[int, dict]]:
    """``(tier, element)`` of the elements the policy may act on: controls not visited nor denied; when a popup is up
    (``windows_before``: the X windows before the action that opened it), only elements of windows above those."""
    out = []
    for el in elements:
        if el["kind"] != "control" or el.get("disabled") or denied(el, windows_before is not None):
            continue
        if element_key(el) in visited:
            continue
        if windows_before is not None and el["xwin"] < windows_before:
            continue
        out.append((0 if el["role"] in HIGH_ROLES or el["role"] == "textbox" else 1, el))
    return out


def denied(el: dict, in_popup: bool) -> bool:
    """Whether the policy must never act on control ``el`` (the module docstring): its name (or text) starts with a
    word of :data:`DENY_WORDS` (a menu's item too) unless it is a dialog's "Close" (:data:`DIALOG_CLOSE`: a button in
    a popup, ``in_popup``, not a menu item), or it is one of :data:`DENY_IN_WINDOW` or :data:`DENY_CLOCKED`. The name
    is compared without case nor mnemonic marks (GTK's ``_``, Qt's ``&``)."""
    said = (el.get("name") or el.get("text") or "").casefold().replace("_", "").replace("&", "")
    name = " ".join(said.split())
    words = name.split(" ")
    if name in DENY_IN_WINDOW or name in DENY_CLOCKED:
        return True
    if words[0] not in DENY_WORDS:
        return False
    return not (in_popup and name in DIALOG_CLOSE and el.get("role") not in MENU_ROLES)


def choose(elements: list[dict], visited: set[tuple], rng: random.Random, windows_before: int | None) -> dict | None:
    """The element to act on next (the best tier, a seeded choice among it in reading order), or None."""
    fresh = candidates(elements, visited, windows_before)
    if not fresh:
        return None
    best = min(t for t, _ in fresh)
    group = sorted((el for t, el in fresh if t == best), key=lambda el: (round(el["box"][1]), round(el["box"][0])))
    return rng.choice(group)


def screen_point(action: Action, scale: float) -> tuple[int, int]:
    """The screen pixel an action's point (logical px) falls on: the screenshot of an app is the whole screen, so
    its pixels (``pixel`` coordinates, :mod:`screenmill.schemas.coords`) are the screen's; the recorded ``x``/``y``
    are ``point x scale`` and are acted on at the pixel they round to."""
    return round(action.point[0] * scale), round(action.point[1] * scale)


def stays(frame: Frame, action: Action) -> bool:
    """Whether the pointer stays where ``action`` clicked instead of being parked: a click on an item of an open menu
    that opens a submenu (:func:`screenmill.annotators.desktop.a11y.opens_submenu`; the topmost control of ``frame``,
    the frame acted on, under the click's point). Qt 5 closes a submenu about 1 s after the pointer leaves its item
    for anywhere outside it (its sloppy-submenu timeout): parked, the settled frame had the submenu or not by timing.

    Args:
        frame: the frame the action acts on (its elements and their tree nodes).
        action: the action (a key, typing or an action without a point never stays).

    Returns:
        True to leave the pointer at the click's point.
    """
    if action.kind != "click" or action.point is None:
        return False
    x, y = action.point
    hit = [
        el
        for el in frame.elements
        if el["kind"] == "control" and el["box"][0] <= x < el["box"][2] and el["box"][1] <= y < el["box"][3]
    ]
    if not hit:
        return False
    top = max(hit, key=lambda el: (el["xwin"], len(el["path"])))
    nodes = {tuple(n["path"]): n for n in frame.capture.nodes}
    roles = {path: n["role"] for path, n in nodes.items()}
    node = nodes.get(tuple(top["path"]))
    return node is not None and a11y.opens_submenu(node, roles)


def act(session: DesktopSession, action: Action, scale: float, frame: Frame | None = None) -> None:
    """Do ``action`` with xdotool on ``frame`` (the frame it acts on; None: the app's first, before any capture): a
    key pressed (``xdotool key``: X keysym names, ``Escape``) with the input focus on the frame's topmost X window
    first (no window manager gives a dialog the focus: the key would go to the window below), or a click at its
    point (logical px x ``scale``) with the pointer parked in the corner after, unless it opened a submenu
    (:func:`stays`: the pointer stays on its item)."""
    wins = frame.capture.x_windows if frame is not None else []
    if action.kind == "key":
        if wins:
            session.xdotool("windowfocus", wins[-1][0])
        session.xdotool("key", action.text or "")
        return
    x, y = screen_point(action, scale)
    session.xdotool("mousemove", str(x), str(y), "click", "1")
    if action.kind == "type":
        session.xdotool("key", "ctrl+a")
        session.xdotool("type", "--delay", "0", action.text or "")
    if frame is not None and stays(frame, action):
        return
    w, h = session.screen_size
    session.xdotool("mousemove", str(w - 1), str(h - 1))


def explore_app(
    session: DesktopSession, app: AppSpec, settings: ExploreSettings, replay: list[dict] | None = None
) -> ExploredApp:
    """Explore ``app`` (already started in ``session`` by :meth:`DesktopSession.run_app`) into an episode.

    Args:
        session / app: the session and the app started in it.
        settings: steps and seed of the policy.
        replay: recorded actions (``Screenshot.recorded_action`` dicts, :meth:`Step.recorded`) to act out instead of
            choosing: their frames are what the recorded episode's must hash to.

    Raises:
        AppError: the app died, hung or stormed mid-episode.
    """
    scale, screen = session.display.scale, session.screen_size
    rng = random.Random(settings.seed)
    first = session.capture(app)
    frames = [Frame(first, a11y.elements(first, screen, scale))]
    steps: list[Step] = []
    visited: set[tuple] = set()
    openers: list[tuple[Action, int]] = []  # the clicks that opened the popups now up, and the X windows before each
    closing = 0  # how the popup on top was tried to close: 0 not yet, 1 the close key pressed, 2 its opener clicked
    while len(steps) < (len(replay) if replay is not None else settings.steps):
        frame = frames[-1]
        windows = len(frame.capture.x_windows)
        el = None
        if replay is not None:
            action = action_from_recorded(replay[len(steps)], scale)
        else:
            while openers and windows <= openers[-1][1]:
                openers.pop()  # the popup went away (a submenu: its menu is on top again)
                closing = 0
            el = choose(frame.elements, visited, rng, openers[-1][1] if openers else None)
            if el is not None:
                visited.add(element_key(el))
                action = action_for(el)
            elif openers and closing < 2:  # nothing left in the popup: the close key, then its opener again
                action = Action("key", text=CLOSE_KEY) if closing == 0 else openers[-1][0]
                closing += 1
            else:
                break  # nothing left, or a popup neither the key nor its opener closes
        act(session, action, scale, frame)
        capture = session.capture(app)
        noop = capture.frame_sha == frame.capture.frame_sha
        if el is not None and len(capture.x_windows) > windows:
            openers.append((action, windows))
            closing = 0
        steps.append(Step(action, noop, False, None, f"app:{app.name}"))
        frames.append(Frame(capture, a11y.elements(capture, screen, scale)))
    return ExploredApp(frames, steps)
