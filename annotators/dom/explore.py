"""Explore a rendered page step by step, as a person would, into an action trace (frames + recorded actions).

:func:`explore_page` opens a page in the fenced browser (:meth:`BrowserHost.run_page`: the same fence, dialogs,
popups and downloads as rendering) and takes up to ``steps`` actions. At each step it reads the page's elements
(:data:`screenmill.annotators.dom.extract.EXTRACT_JS`), picks one (:func:`choose`), acts on it, waits until the page
settles (the navigation's commit and ``load`` if it navigated, then two animation frames), takes a screenshot and reads
the elements again. Frame 0 is the page as loaded, frame *i* the page after action *i*.

The policy (:func:`choose`), seeded and deterministic (``random.Random(seed)`` over a sorted candidate list):

* candidates are the visible controls; file, colour, range and date/time inputs are left out;
* tiers: 0 links to pages the fence allows, buttons, tabs, menu items, text fields, selects; 1 other controls
  (checkboxes, radios, ``summary``, links within the page, ``javascript:`` links); 2 links the fence blocks;
* unvisited elements first (an element is visited once acted on, on any page of the episode: its role, name, type,
  link target and field name), from the best tier present; when none is left the page scrolls down one viewport;
  when it cannot scroll any further the browser goes back to the page the episode came from, and on the first page
  the episode ends (fewer than ``steps`` actions).

Acting: a click (a tap with mobile emulation) at the element's click point; text fields get a click, select-all and
typed text from a small vocabulary keyed by input type and field name / label / placeholder (:func:`plausible_text`);
a ``<select>`` gets one of its other enabled options (seeded); a scroll is ``window.scrollBy`` one viewport down; a
back is the browser's.

Outcomes: a step whose screenshot has the same sha256 as the previous frame is a no-op (recorded, flagged). A step
whose main-frame navigation cannot be followed is flagged ``blocked`` with the URL (``blocked_url``) and why
(``blocked_reason``): ``fence`` (the fence blocks it) or ``missing`` (a ``file://`` page that does not exist, a saved
site's link to a page not saved) are held before they leave the page: answered "204 No Content", so the page stays as
it was (no error page, no reload, its state kept: the tab opened, the text typed) and the frame is the page as it
stays; ``failed`` (any other navigation error: the page shows Chromium's error page) goes back. Time limits:
``step_timeout_s`` per step, the browser's ``timeout_s`` plus ``steps`` × ``step_timeout_s`` per episode; over
either: ``explore_timeout``.

Determinism: the same page, setting, seed and steps give the same actions and frames. Pages that would change by
themselves are made to hold still: the episode runs on a virtual clock (Playwright's fake ``Date``, ``performance``,
timers and animation frames, paused at :data:`VIRTUAL_EPOCH_S`) that moves only when the episode settles, by
:data:`TICK_MS` each time, firing the timers due in between; and ``Math.random`` is a seeded generator in every
document. A clock, a countdown, a carousel on a timer, a random banner then show the same thing in every run and
replay, and an effect up to :data:`TICK_MS` after an action (a message shown by a timeout) is in the action's frame.
``crypto``'s random values are seeded the same way (:data:`SEEDED_RANDOM_JS`), every frame waits for its fonts and
the images it shows (:func:`screenmill.annotators.dom.page.ready`), and the browser rasters changed tiles whole
(:data:`screenmill.annotators.dom.browser.DETERMINISM_ARGS`). What stays out of reach: media playback, animated
images, workers, the Web Animations timeline (the screenshot finishes or cancels what runs) and effects of network
timing (the fence's file and loopback loads are fast, not timed). :func:`explore_page` with ``replay`` acts out
recorded actions instead of choosing (their frames must hash the same).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import random
import re
import urllib.parse
from collections.abc import Mapping
from typing import Any

from screenmill.annotators.dom.browser import BrowserHost
from screenmill.annotators.dom.page import RenderError, Screen, Viewport, capture, open_page, ready
from screenmill.annotators.recorded import KEY_ACTION
from screenmill.annotators.wording import MAX_INSTRUCTION_NAME, ROLE_NOUNS, click, press, quoted
from screenmill.schemas.png import one_colour

#: Bumped whenever the policy or the actions change what an episode holds (part of every episode's id).
#: 3: a navigation that cannot be followed is held (the page stays), frames wait for fonts and images, crypto is
#: seeded. 4: the virtual clock moves once per document in a step (:func:`_settle`), not once more when a held
#: navigation's request showed late.
EXPLORE_VERSION = "4"
NAME = "dom"
KINDS = ("click", "type", "select", "scroll", "back", "key")
#: Each kind of action in the pipeline's action space (:data:`screenmill.annotators.recipes.ACTION_TYPES`).
ACTION_OF = {
    "click": "click_element",
    "type": "write_element_abs",
    "select": "write_element_abs",
    "scroll": "scroll",
    "back": "go_back",
    "key": KEY_ACTION,
}
SKIP_INPUTS = frozenset({"file", "color", "range", "date", "time", "datetime-local", "month", "week", "hidden"})
TEXT_INPUTS = frozenset({"text", "email", "search", "url", "tel", "number", "password", "textarea"})
HIGH_ROLES = frozenset({"button", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "link", "combobox"})
QUIET_S = 0.15  # after two animation frames: time for a click's navigation request to show (a loaded 2-core
# machine took over 50 ms: a replay then read the frame before the navigation)
NAV_WAIT_S = 3.0  # a navigation request's commit (a download never commits)
#: The virtual clock: where it starts (2023-11-14T22:13:20Z, in seconds) and how far each settle moves it (ms).
VIRTUAL_EPOCH_S = 1_700_000_000
TICK_MS = 1000

# (keywords, text): the first entry with a keyword in the field's type, name, label or placeholder wins. Keywords of
# up to 3 letters match whole words only.
VOCABULARY: tuple[tuple[tuple[str, ...], str], ...] = (
    (("email", "e-mail", "mail"), "ada.lovelace@example.com"),
    (("password", "passwd", "pwd"), "Correct-Horse-7"),
    (("tel", "phone", "mobile"), "+33 4 72 00 00 00"),
    (("url", "website", "homepage"), "https://example.com"),
    (("search", "query", "q", "find", "keyword"), "lamp"),
    (("city", "town"), "Lyon"),
    (("zip", "postal", "postcode"), "69001"),
    (("country",), "France"),
    (("street", "address"), "12 rue de la République"),
    (("first", "given"), "Ada"),
    (("last", "surname", "family"), "Lovelace"),
    (("user", "login", "nick"), "ada"),
    (("name",), "Ada Lovelace"),
    (("company", "organi"), "Acme"),
    (("number", "age", "qty", "quantity", "count", "amount", "guests", "people", "size"), "3"),
    (("code", "coupon", "promo"), "SPRING10"),
    (("subject", "title"), "Order question"),
    (("message", "comment", "note", "description", "textarea", "feedback"), "Hello, a question about my order."),
)
DEFAULT_TEXT = "hello"

CAN_SCROLL_JS = "() => window.scrollY + window.innerHeight < document.documentElement.scrollHeight - 1"
ELEMENT_AT_JS = "([x, y]) => document.elementFromPoint(x, y)"
OPTIONS_JS = (
    "(s) => s.tagName === 'SELECT' ? [...s.options].map((o) => [o.value, o.text.replace(/\\s+/g, ' ').trim(),"
    " o.disabled, o.selected]) : null"
)
# Math.random and crypto's random values (``getRandomValues``, ``randomUUID``: ids, random content) from seeded
# generators (mulberry32), the same sequences in every document the episode reaches. (``Intl.DateTimeFormat``'s
# format() without a date, a calendar's "today", is the virtual clock's already.)
SEEDED_RANDOM_JS = r"""(() => {
  const generator = (s) => () => { s = (s + 0x6D2B79F5) | 0; let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return (t ^ (t >>> 14)) >>> 0; };
  const random = generator(0x5eed), bytes = generator(0xc0ffee);
  Math.random = () => random() / 4294967296;
  if (globalThis.crypto) {
    crypto.getRandomValues = (a) => { const b = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
      for (let i = 0; i < b.length; i++) b[i] = bytes() & 255; return a; };
    crypto.randomUUID = () => { const b = crypto.getRandomValues(new Uint8Array(16)); b[6] = (b[6] & 15) | 64;
      b[8] = (b[8] & 63) | 128; const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`; };
  }
})()"""


@dataclasses.dataclass(frozen=True)
class ExploreSettings:
    """How an episode is explored.

    Attributes:
        steps: actions per episode (K).
        seed: the policy's seed.
        step_timeout_s: the time limit of one step (act, settle, screenshot, read).
    """

    steps: int
    seed: int = 0
    step_timeout_s: float = 10.0

    def __post_init__(self):
        if not 1 <= self.steps <= 100:
            raise ValueError(f"explore steps must be 1..100, got {self.steps}")
        if self.step_timeout_s <= 0:
            raise ValueError(f"explore step timeout must be > 0 s, got {self.step_timeout_s}")


@dataclasses.dataclass(frozen=True, slots=True)
class Action:
    """One action, at a point in CSS px of the viewport: ``kind`` (:data:`KINDS`), the typed text, the chosen
    option's label or the key pressed (``text``: a key name X and Playwright share, ``Escape``, ``Tab``) and the
    option's value (``value``), and the element's role and name."""

    kind: str
    point: tuple[float, float] | None = None
    text: str | None = None
    value: str | None = None
    role: str | None = None
    name: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Step:
    """An action taken and what came of it: ``noop`` (the screen did not change), ``blocked`` (its navigation was not
    followed; ``blocked_url``: where it went, ``blocked_reason``: ``fence``, ``missing`` or ``failed``, see the module
    docstring), the page's URL after it."""

    action: Action
    noop: bool
    blocked: bool
    blocked_url: str | None
    url: str
    blocked_reason: str | None = None

    def recorded(self, scale: float) -> dict[str, Any]:
        """The step as ``Screenshot.recorded_action`` holds it: the generic recorded format of
        :mod:`screenmill.annotators.recorded` (``action`` from :data:`ACTION_OF`, ``x``/``y`` in screenshot pixels)
        plus ``type`` (:data:`KINDS`), ``content`` (typed text / option label), ``key`` (the key pressed: the
        recorded formats' ``press_key``), ``value`` (option value), ``role``, ``name``, ``noop``, ``blocked`` (+
        ``blocked_url``, ``blocked_reason``)."""
        a = self.action
        out: dict[str, Any] = {"action": ACTION_OF[a.kind], "type": a.kind}
        if a.point is not None:
            out["x"], out["y"] = a.point[0] * scale, a.point[1] * scale
        if a.kind == "scroll":
            out["direction"] = "down"
        for key, value in (
            ("key" if a.kind == "key" else "content", a.text),
            ("value", a.value),
            ("role", a.role),
            ("name", a.name),
        ):
            if value is not None:
                out[key] = value
        out["noop"], out["blocked"] = self.noop, self.blocked
        if self.blocked_url:
            out["blocked_url"] = self.blocked_url
        if self.blocked_reason:
            out["blocked_reason"] = self.blocked_reason
        return out


@dataclasses.dataclass(slots=True)
class ExploredPage:
    """An episode: ``frames`` (frame 0 the page as loaded, frame *i* after ``steps[i-1]``), the requests the fence
    aborted over the whole episode, the first document's element count."""

    uri: str
    viewport: Viewport
    color_scheme: str
    frames: list[Screen]
    steps: list[Step]
    blocked: list[str]
    dom_nodes: int


def action_from_recorded(recorded: dict[str, Any], scale: float) -> Action:
    """The :class:`Action` of a recorded step (:meth:`Step.recorded`), for replay."""
    point = (recorded["x"] / scale, recorded["y"] / scale) if "x" in recorded else None
    text = recorded.get("key") if recorded["type"] == "key" else recorded.get("content")
    return Action(
        recorded["type"], point, text, recorded.get("value"), recorded.get("role"), recorded.get("name"),
    )  # fmt: skip


def element_key(el: dict) -> tuple:
    """What makes an element the same one across frames and pages of an episode (visited once acted on)."""
    return (
        el.get("role") or "",
        el.get("name") or el.get("text") or "",
        el.get("input_type") or "",
        el.get("href") or "",
        el.get("field") or "",
    )


def tier(el: dict, allows, url: str) -> int | None:
    """The element's tier (0 best, see the module docstring), or None when it is not a candidate.

    Args:
        el: an extracted element.
        allows: the fence's predicate (``Fence.allows``): may the page go to this URL?
        url: the page's current URL (a link to it plus a fragment stays on the page).
    """
    if el.get("kind") != "control" or el.get("input_type") in SKIP_INPUTS:
        return None
    href = el.get("href")
    if href:
        if href.split(":", 1)[0].lower() == "javascript":
            return 1
        if not allows(href):
            return 2
        target, fragment = urllib.parse.urldefrag(href)
        return 1 if fragment and target == urllib.parse.urldefrag(url)[0] else 0
    if el.get("input_type") in TEXT_INPUTS or el.get("input_type") == "select" or el.get("role") in HIGH_ROLES:
        return 0
    return 1


def choose(
    elements: list[dict],
    visited: set[tuple],
    rng: random.Random,
    can_scroll: bool,
    allows,
    url: str,
    can_back: bool = False,
) -> dict | str | None:
    """The element to act on next, ``"scroll"``, ``"back"``, or None (nothing new, no further to scroll, no page to
    go back to: the episode ends).

    The best tier among the unvisited candidates, then a seeded choice among them in reading order.
    """
    fresh = [(t, el) for el in elements if (t := tier(el, allows, url)) is not None and element_key(el) not in visited]
    if not fresh:
        return "scroll" if can_scroll else "back" if can_back else None
    best = min(t for t, _ in fresh)
    group = sorted(
        (el for t, el in fresh if t == best),
        key=lambda el: (round(el["box"][1]), round(el["box"][0]), element_key(el)),
    )
    return rng.choice(group)


def _words(el: dict) -> tuple[str, set[str]]:
    text = " ".join(str(el.get(k) or "") for k in ("input_type", "field", "label", "name", "placeholder")).lower()
    return text, set(re.split(r"[^a-z0-9]+", text))


def plausible_text(el: dict) -> str:
    """What a person would type into this field (:data:`VOCABULARY` by type, name, label and placeholder)."""
    text, words = _words(el)
    for keys, value in VOCABULARY:
        if any((k in words) if len(k) <= 3 else (k in text) for k in keys):
            return value
    return DEFAULT_TEXT


def action_for(el: dict) -> Action:
    """How a person acts on ``el``: type into a text field, choose in a select (the option is chosen when acting),
    click anything else."""
    point = (float(el["point"][0]), float(el["point"][1]))
    name = el.get("name") or el.get("text") or el.get("label") or el.get("placeholder") or None
    kind = el.get("input_type")
    if kind in TEXT_INPUTS or (kind is None and el.get("role") in ("textbox", "searchbox")):
        return Action("type", point, plausible_text(el), None, el.get("role"), name)
    if kind == "select" and "frame" not in el:
        return Action("select", point, None, None, el.get("role"), name)
    return Action("click", point, None, None, el.get("role"), name)


def instruction(action: Action) -> str:
    """The template instruction of an action: ``click the "Pricing" link``, ``type "Lyon" into the "City" field``,
    ``choose "France" in the "Country" drop-down``, ``scroll down``, ``go back``, ``press Escape``."""
    noun = ROLE_NOUNS.get(action.role or "")
    name = action.name if action.name and len(action.name) <= MAX_INSTRUCTION_NAME else None
    if action.kind == "key":
        return press(action.text or "")
    if action.kind == "scroll":
        return "scroll down"
    if action.kind == "back":
        return "go back"
    if action.kind == "type":
        where = f"the {quoted(name)} field" if name else f"the {noun or 'text field'}"
        return f"type {quoted(action.text or '')} into {where}"
    if action.kind == "select":
        where = f"the {quoted(name)} {noun or 'drop-down'}" if name else f"the {noun or 'drop-down'}"
        return f"choose {quoted(action.text or '')} in {where}"
    if name:
        return click(name, noun)
    return f"click the {noun or 'element'}"


def recorded_instruction(recorded: Mapping[str, Any]) -> str | None:
    """The template instruction of an explored action as ``Screenshot.recorded_action`` holds it
    (:meth:`Step.recorded`); None for an action in another recorded format (no explored ``type``)."""
    kind = recorded.get("type")
    if kind not in KINDS:
        return None
    text = recorded.get("key" if kind == "key" else "content")
    role, name = recorded.get("role"), recorded.get("name")
    return instruction(Action(kind, None, text if isinstance(text, str) else None, None, role, name))


class _NavWatch:
    """The main frame's navigations: requests started and documents committed, in order; and the ones held
    (:meth:`hold`: answered 204, so they never commit), with why, since the last :meth:`take_held`."""

    def __init__(self, page):
        self.page = page
        self.seq = self.last_request = self.last_commit = 0
        self.commits = 0
        self.last_url: str | None = None  # of the last navigation request
        self.held: list[tuple[str, str]] = []  # (url, reason) of the navigations held
        self._held_urls: set[str] = set()
        self.changed = asyncio.Event()
        page.on("request", self._request)
        page.on("framenavigated", self._navigated)

    def hold(self, url: str, reason: str) -> None:
        self.held.append((url, reason))
        self._held_urls.add(url)
        self.changed.set()

    def take_held(self) -> tuple[str, str] | None:
        """The first navigation held since the last call (None: none), the list emptied."""
        first = self.held[0] if self.held else None
        self.held.clear()
        return first

    def _request(self, request):
        if request.is_navigation_request() and request.frame == self.page.main_frame:
            self.seq += 1
            self.last_request = self.seq
            self.last_url = request.url
            self.changed.set()

    def _navigated(self, frame):
        if frame == self.page.main_frame:
            self.seq += 1
            self.last_commit = self.seq
            self.commits += 1
            self.changed.set()

    @property
    def pending(self) -> bool:
        return self.last_request > self.last_commit and self.last_url not in self._held_urls

    async def wait_commit(self, limit_s: float) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + limit_s
        while self.pending and loop.time() < end:
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), max(0.0, end - loop.time()))
            except TimeoutError:
                break
        self.last_commit = max(self.last_commit, self.last_request)  # a request that never commits (a download)


async def _hold_navigations(page, fence, nav: _NavWatch) -> None:
    """Route the main frame's navigations that cannot be followed to a "204 No Content" (the page stays, see the
    module docstring): those the fence blocks (counted in its ``blocked``) and ``file://`` pages that do not exist.
    Every other request falls back to the fence's own handler."""
    import os

    def missing(url: str) -> bool:
        return url.startswith("file:") and not os.path.exists(urllib.parse.unquote(urllib.parse.urlsplit(url).path))

    async def handle(route):
        request = route.request
        url = request.url
        if request.is_navigation_request() and request.frame.parent_frame is None:
            reason = "missing" if fence.allows(url) and missing(url) else None if fence.allows(url) else "fence"
            if reason is not None:
                if reason == "fence":
                    fence.blocked.append(url)
                nav.hold(url, reason)
                await route.fulfill(status=204, body="")
                return
        await route.fallback()

    await page.route("**/*", handle)


async def _settle(page, nav: _NavWatch, seen: int) -> None:
    """Wait until the page settles after an action: a navigation it started commits and loads (and any that
    follows, up to a few), then the virtual clock moves on (:func:`_tick`) and no navigation starts.

    The clock moves once per document, whatever the timing: first after :data:`QUIET_S` (a click's navigation request
    shows by then), then once more for each new document committed. A navigation held (answered 204) or a request
    that shows late moves it no further (it did: a held link's frame showed the clock one second on when its request
    came after the first tick, a different frame in a replay on a loaded machine)."""
    from playwright.async_api import Error as PlaywrightError

    ticked: int | None = None  # the document (commit count) the clock last moved for
    await asyncio.sleep(QUIET_S)
    for _ in range(5):
        if nav.pending:
            await nav.wait_commit(NAV_WAIT_S)
        if nav.commits != seen:
            seen = nav.commits
            try:
                await page.wait_for_load_state("load", timeout=NAV_WAIT_S * 1000)
                await page.evaluate("document.fonts.ready.then(() => true)")
            except PlaywrightError:
                continue  # the document went away again
        if ticked != seen:
            try:
                await _tick(page)
            except PlaywrightError:
                continue  # the document went away under the call: a navigation
            ticked = seen
        await asyncio.sleep(QUIET_S)
        if not nav.pending and nav.commits == seen:
            return


async def _tick(page) -> None:
    """Move the virtual clock on by :data:`TICK_MS`, firing the timers and animation frames due in between."""
    await page.clock.run_for(TICK_MS)


async def _act(page, action: Action, rng: random.Random, mobile: bool) -> Action:
    """Carry out ``action``; the action as taken (a select's chosen option filled in, or a click where the select
    could not be reached)."""
    if action.kind == "scroll":
        await page.evaluate("window.scrollBy(0, window.innerHeight)")
        return action
    if action.kind == "back":
        await page.go_back(wait_until="load", timeout=NAV_WAIT_S * 1000)
        return action
    if action.kind == "key":  # the page explorer does not choose keys; a replay of a recorded one presses it
        await page.keyboard.press(action.text or "")
        return action
    x, y = action.point
    if action.kind == "select":
        handle = await page.evaluate_handle(ELEMENT_AT_JS, [x, y])
        el = handle.as_element()
        options = await el.evaluate(OPTIONS_JS) if el is not None else None
        if options is not None:
            value = action.value
            if value is None:
                choices = [(v, t) for v, t, disabled, selected in options if not disabled and not selected]
                if not choices:
                    return await _act(page, dataclasses.replace(action, kind="click"), rng, mobile)
                value = rng.choice(choices)[0]
            label = next((t for v, t, *_ in options if v == value), value)
            await el.select_option(value=value)
            return dataclasses.replace(action, text=label, value=value)
        action = dataclasses.replace(action, kind="click")
    if mobile:
        await page.touchscreen.tap(x, y)
    else:
        await page.mouse.click(x, y)
    if action.kind == "type":
        await page.keyboard.press("Control+A")
        await page.keyboard.type(action.text or "")
    return action


async def _step(host, page, fence, nav, action: Action, rng, mobile: bool, frames: list[Screen]) -> Step:
    seen = nav.commits
    action = await _act(page, action, rng, mobile)
    await _settle(page, nav, seen)
    blocked_url, reason = nav.take_held() or (None, None)
    if page.url.startswith("chrome-error:"):  # a navigation that failed otherwise: back to where it was
        blocked_url, reason = nav.last_url, "failed"
        seen = nav.commits
        await page.go_back(wait_until="load", timeout=NAV_WAIT_S * 1000)
        await _settle(page, nav, seen)
    if not mobile:
        # After a navigation, Chromium re-applies :hover under a resting pointer on a timer of its own, so whether a
        # frame shows the hover depends on load: move the pointer to the corner, where the event applies it at once
        await page.mouse.move(0, 0)
        await _tick(page)
    await ready(page)
    frame = await capture(page, host.config.max_text_chars)
    frames.append(frame)
    noop = hashlib.sha256(frame.png).digest() == hashlib.sha256(frames[-2].png).digest()
    return Step(action, noop, blocked_url is not None, blocked_url, page.url, reason)


async def _episode(host, page, fence, uri, viewport: Viewport, scheme: str, settings: ExploreSettings, replay):
    await page.add_init_script(SEEDED_RANDOM_JS)
    await page.clock.pause_at(VIRTUAL_EPOCH_S)  # installs the virtual clock, paused (see the module docstring)
    nodes = await open_page(page, uri, timeout_s=host.config.timeout_s, max_dom_nodes=host.config.max_dom_nodes)
    nav = _NavWatch(page)
    await _hold_navigations(page, fence, nav)
    await _tick(page)
    await ready(page)
    frames = [await capture(page, host.config.max_text_chars)]
    if one_colour(frames[0].png):
        raise RenderError("blank_page", "the first screen is a single colour: nothing visible")
    rng = random.Random(settings.seed)
    visited: set[tuple] = set()
    trail = [urllib.parse.urldefrag(page.url)[0]]  # the pages the episode went through, back steps taken off
    steps: list[Step] = []
    for i in range(len(replay) if replay is not None else settings.steps):
        if replay is not None:
            action = action_from_recorded(replay[i], viewport.scale)
        else:
            can_scroll = await page.evaluate(CAN_SCROLL_JS)
            choice = choose(frames[-1].elements, visited, rng, can_scroll, fence.allows, page.url, len(trail) > 1)
            if choice is None:
                break
            if choice in ("scroll", "back"):
                action = Action(choice)
            else:
                visited.add(element_key(choice))
                action = action_for(choice)
        try:
            step = await asyncio.wait_for(
                _step(host, page, fence, nav, action, rng, viewport.mobile, frames), settings.step_timeout_s
            )
        except TimeoutError:
            raise RenderError("explore_timeout", f"step {i + 1} took over {settings.step_timeout_s:g} s") from None
        steps.append(step)
        here = urllib.parse.urldefrag(step.url)[0]
        if step.action.kind == "back" and len(trail) > 1:
            trail.pop()
        elif here != trail[-1]:
            trail.append(here)
    return ExploredPage(uri, viewport, scheme, frames, steps, list(fence.blocked), nodes)


def explore_page(
    host: BrowserHost,
    uri: str,
    root: str | None,
    viewport: Viewport,
    color_scheme: str,
    settings: ExploreSettings,
    replay: list[dict] | None = None,
) -> ExploredPage:
    """Explore ``uri`` under one setting into an episode (see the module docstring).

    Args:
        host: a started browser.
        uri / root / viewport / color_scheme: as for :meth:`BrowserHost.render`.
        settings: steps, seed, the per-step time limit.
        replay: recorded actions (:meth:`Step.recorded` dicts) to act out instead of choosing.

    Returns:
        The :class:`ExploredPage`.

    Raises:
        RenderError: ``explore_timeout`` (a step or the episode over its limit), ``render_failed``,
            ``page_too_large`` or ``blank_page`` (the first frame).
    """
    n = len(replay) if replay is not None else settings.steps
    limit = host.config.timeout_s + n * settings.step_timeout_s

    def work(page, fence):
        return _episode(host, page, fence, uri, viewport, color_scheme, settings, replay)

    return host.run_page(uri, root, viewport, color_scheme, work, limit, "explore_timeout")
