"""One page in a tab of the fenced browser, read into screenshots and DOM elements (the coroutines
:class:`screenmill.annotators.dom.browser.BrowserHost` runs on its thread, for rendering and for exploration).

A page is loaded with its motion stopped (:data:`STILL_INIT_JS`, added to every document of a tab before its first
paint) and its fonts ready (:func:`open_page`); each screen is scrolled to and settled (:data:`SETTLE_JS`), then
captured (:func:`capture`: the DOM read of the page and the child frames that show through, :func:`extract`, its
names tidied by :func:`screenmill.annotators.dom.extract.tidy`, and the PNG). What comes out is a :class:`Screen`
per screenshot and a :class:`RenderedPage` per page and setting (:class:`Viewport`, colour scheme); what does not, a
:class:`RenderError`.

Reasons (:class:`RenderError`) raised here: ``render_failed`` (navigation error, the page failing under a read),
``page_too_large``, ``blank_page`` (the first screen is one colour: :func:`screenmill.schemas.png.one_colour`),
``page_redirects`` (the page went on to another while rendered: a meta refresh, a script's redirect). The browser
adds ``render_timeout`` and ``render_failed`` for a crash or a browser gone.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import json
import logging
import re

from screenmill.annotators.dom.extract import EXTRACT_JS, FRAME_HITS_JS, tidy
from screenmill.schemas.png import one_colour

# Finish transitions and animations at once, hide the caret: the screenshot shows the state the DOM was read in.
STILL_CSS = (
    "*,*::before,*::after{transition:none!important;animation-duration:0s!important;animation-delay:0s!important;"
    "caret-color:transparent!important;scroll-behavior:auto!important}"
)
# Added to every document of a tab as soon as it has one (an init script: styled once, before the first paint).
STILL_INIT_JS = (
    "(() => { const add = () => { const s = document.createElement('style'); s.textContent = "
    + json.dumps(STILL_CSS)
    + "; (document.head || document.documentElement).appendChild(s); };"
    " if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', add); else add(); })()"
)
# Scroll to screen k (none for the first) and wait two animation frames: what is shown is what was laid out. With
# ``finish``, script-made animations (Web Animations, in the document and every shadow root) are then finished, or
# cancelled when endless, as playwright's ``screenshot(animations="disabled")`` does (STILL_CSS covers CSS ones).
SETTLE_JS = r"""
([k, finish]) => {
  if (k) window.scrollTo(0, k * window.innerHeight);
  return new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(() => {
    if (finish) {
      const roots = [document];
      for (let i = 0; i < roots.length; i++) {
        const walker = document.createTreeWalker(roots[i], NodeFilter.SHOW_ELEMENT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) if (n.shadowRoot) roots.push(n.shadowRoot);
      }
      for (const root of roots) for (const a of root.getAnimations()) {
        if (!a.effect || a.playbackRate === 0) continue;
        try { Number.isFinite(a.effect.getComputedTiming().endTime) ? a.finish() : a.cancel(); } catch (e) {}
      }
    }
    ok(true);
  })));
}
"""
# What a frame waits for before it is shot (its layout done first, so what it needs has been asked for): the web
# fonts, and the images in the viewport loaded and decoded (a script's lazy loader sets their src after the load, at
# a time of its own; a large image is decoded off the main thread). At most :data:`READY_S` real seconds.
READY_JS = r"""async () => {
  document.documentElement.getBoundingClientRect();
  await document.fonts.ready;
  const shown = [...document.images].filter((i) => { const r = i.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth;
  });
  const loaded = (i) => i.complete ? Promise.resolve() : new Promise((ok) => {
    i.addEventListener('load', ok, {once: true}); i.addEventListener('error', ok, {once: true}); });
  await Promise.all(shown.map((i) => loaded(i).then(() => i.decode()).catch(() => null)));
  await document.fonts.ready;
  return true;
}"""
#: The longest (real seconds) :func:`ready` waits.
READY_S = 3.0
# Chromium's faster PNG encoding (``optimizeForSpeed``) for the direct screenshots: the same pixels in files ~1.4x
# as big, for ~1/5 less CPU a screenshot (most of a capture's cost is the encoding; measured in the README).
FAST_PNG = True
#: How long (s) a read that failed waits for the main frame's navigation request to show (a redirect).
REDIRECT_WAIT_S = 1.0
# The extraction script's result as one JSON string: one string crosses the DevTools pipe and playwright's driver
# instead of a tree of values each side (de)serializes one by one (the same values: undefined is sent as null).
EXTRACT_JSON_JS = f"(opts) => JSON.stringify(({EXTRACT_JS.strip()})(opts), (k, v) => v === undefined ? null : v)"
_VIEWPORT_RE = re.compile(r"^(\d{2,5})x(\d{2,5})(?:@(\d+(?:\.\d+)?)(m?))?$")
_log = logging.getLogger("screenmill.render")


class RenderError(Exception):
    """A page that could not be rendered: ``reason`` is the stable dead-letter code, ``message`` the explanation."""

    def __init__(self, reason: str, message: str):
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message


@dataclasses.dataclass(frozen=True, slots=True)
class Viewport:
    """A render setting: ``width`` x ``height`` CSS px at ``scale`` (device px per CSS px), ``mobile`` emulation."""

    width: int
    height: int
    scale: float = 1.0
    mobile: bool = False

    def __post_init__(self):
        if not (16 <= self.width <= 8192 and 16 <= self.height <= 8192):
            raise ValueError(f"viewport {self.width}x{self.height} is outside 16..8192 px")
        if not 0.5 <= self.scale <= 4:
            raise ValueError(f"device scale factor {self.scale} is outside 0.5..4")

    @classmethod
    def parse(cls, spec: str) -> Viewport:
        """``"1280x800"``, ``"1920x1080@2"``, ``"390x844@3m"`` (m: mobile emulation).

        Raises:
            ValueError: a malformed spec or values out of range.
        """
        m = _VIEWPORT_RE.match(spec.strip())
        if not m:
            raise ValueError(f"viewport {spec!r} is not WIDTHxHEIGHT[@SCALE[m]] (e.g. 1280x800, 390x844@3m)")
        return cls(int(m[1]), int(m[2]), float(m[3] or 1), m[4] == "m")

    @property
    def spec(self) -> str:
        scale = f"@{self.scale:g}{'m' if self.mobile else ''}" if self.scale != 1 or self.mobile else ""
        return f"{self.width}x{self.height}{scale}"


@dataclasses.dataclass(slots=True)
class Screen:
    """One screenshot of a page: PNG bytes at ``scroll`` (CSS px) and the elements read from the DOM there, in CSS px
    of what the screenshot shows (the visual viewport: screenshot pixels / device scale factor; see
    :mod:`screenmill.annotators.dom.extract`). ``page_scale`` is the page's zoom: 1, except in mobile emulation of a
    page without a mobile ``<meta name=viewport>``, which a phone shows zoomed out (``visualViewport.scale``)."""

    png: bytes
    scroll: tuple[int, int]
    elements: list[dict]
    page_scale: float = 1.0


@dataclasses.dataclass(slots=True)
class RenderedPage:
    """A page rendered under one setting: its screens, the requests the fence aborted, the DOM size."""

    uri: str
    viewport: Viewport
    color_scheme: str
    screens: list[Screen]
    blocked: list[str]
    dom_nodes: int


async def open_page(page, uri: str, *, timeout_s: float, max_dom_nodes: int) -> int:
    """Load ``uri`` in ``page`` (its motion stopped: :data:`STILL_INIT_JS`), wait for its fonts; its element count.

    Args:
        page: a playwright page of a fenced tab.
        uri: the page's URL.
        timeout_s: the navigation's time limit.
        max_dom_nodes: pages with more elements are refused.

    Raises:
        RenderError: ``render_failed`` (navigation error) or ``page_too_large``.
    """
    from playwright.async_api import Error as PlaywrightError

    try:
        await page.goto(uri, wait_until="load", timeout=timeout_s * 1000)
    except PlaywrightError as e:
        raise RenderError("render_failed", f"navigation failed: {str(e).splitlines()[0]}") from None
    nodes = await page.evaluate("document.fonts.ready.then(() => document.getElementsByTagName('*').length)")
    if nodes > max_dom_nodes:
        raise RenderError("page_too_large", f"{nodes} DOM elements, over the limit of {max_dom_nodes}")
    return int(nodes)


async def shoot(
    page,
    uri: str,
    viewport: Viewport,
    color_scheme: str,
    screens: int,
    fence,
    *,
    session,
    timeout_s: float,
    max_dom_nodes: int,
    max_text_chars: int,
) -> RenderedPage:
    """Render ``uri`` in ``page`` into up to ``screens`` screenshots down the page (the work of
    :meth:`screenmill.annotators.dom.browser.BrowserHost.render`).

    Args:
        page: a playwright page of a fenced tab set to ``viewport`` and ``color_scheme``.
        uri / viewport / color_scheme / screens: as for ``BrowserHost.render``.
        fence: the page's :class:`screenmill.annotators.dom.fence.Fence` (what it blocked goes on the result).
        session: the tab's CDP session, for Chromium's own screenshots (not used in mobile emulation).
        timeout_s / max_dom_nodes: as for :func:`open_page`; max_text_chars: as for :func:`extract`.

    Returns:
        The :class:`RenderedPage`.

    Raises:
        RenderError: ``render_failed``, ``page_too_large``, ``blank_page`` or ``page_redirects``.
    """
    from playwright.async_api import Error as PlaywrightError

    went: list[str] = []  # where the main frame was sent after the page itself (a redirect), fragments aside
    sent = asyncio.Event()

    def moved(request) -> None:
        if (
            request.is_navigation_request()
            and request.frame is page.main_frame
            and request.url.split("#")[0] != uri.split("#")[0]
        ):
            went.append(request.url)
            sent.set()

    page.on("request", moved)
    try:
        nodes = await open_page(page, uri, timeout_s=timeout_s, max_dom_nodes=max_dom_nodes)
        # Chromium's own screenshot on the tab's CDP session, but not in mobile emulation: a capture there resets
        # the page scale of a zoomed-out page (its later screens would change); playwright's screenshot keeps it
        cdp = None if viewport.mobile else session
        shots: list[Screen] = []
        for k in range(screens):
            await page.evaluate(SETTLE_JS, [k, cdp is not None])
            stop_at = shots[-1].scroll if shots else None
            shot = await capture(page, max_text_chars, stop_at, cdp, viewport.scale)
            if shot is None:
                break  # the page ended: scrolling no further
            if k == 0 and one_colour(shot.png):
                raise RenderError("blank_page", "the first screen is a single colour: nothing visible")
            shots.append(shot)
    except PlaywrightError as e:  # the page went away under the reads: a redirect, or a failure of its own
        with contextlib.suppress(TimeoutError):  # the navigation's request may show after the error it caused
            await asyncio.wait_for(sent.wait(), REDIRECT_WAIT_S)
        if went:
            raise RenderError("page_redirects", _redirected(went)) from None
        raise RenderError("render_failed", f"the page failed while rendered: {str(e).splitlines()[0]}") from None
    finally:
        page.remove_listener("request", moved)
    if went:  # the screens may mix the page and where it went
        raise RenderError("page_redirects", _redirected(went))
    return RenderedPage(uri, viewport, color_scheme, shots, list(fence.blocked), int(nodes))


async def ready(page) -> None:
    """Wait (at most :data:`READY_S` s) for the page's fonts and the images it shows (:data:`READY_JS`); a page
    whose image never loads, or whose document goes away meanwhile, is left as it is (exploration shoots it then)."""
    from playwright.async_api import Error as PlaywrightError

    try:
        await asyncio.wait_for(page.evaluate(READY_JS), READY_S)
    except (TimeoutError, PlaywrightError):
        pass  # an image that never loads, or a document going away: shot as it is


async def capture(
    page, max_text_chars: int, stop_at: tuple[int, int] | None = None, cdp=None, scale: float = 1.0
) -> Screen | None:
    """The settled ``page`` as a :class:`Screen`: its scroll, zoom, elements (:func:`extract`, ``max_text_chars`` as
    there) and PNG; None when the scroll is ``stop_at`` (the page scrolled no further). The PNG is playwright's
    ``page.screenshot`` (which stills animations and the caret for the shot), or with ``cdp`` (the page's CDP session,
    its animations stilled by :data:`SETTLE_JS`; ``scale``: the device scale factor) Chromium's
    ``Page.captureScreenshot``: the same pixels for less CPU (no evaluations in every frame around it, no layout
    metrics round trip)."""
    if stop_at is not None and tuple(await page.evaluate("[window.scrollX, window.scrollY]")) == stop_at:
        return None
    elements, (x, y), zoom = await _read(page.main_frame, max_text_chars)
    if cdp is None:
        png = await page.screenshot(type="png", animations="disabled", caret="hide", scale="device")
    else:
        # the viewport in document CSS px at the device scale factor: this session has no device metrics of its
        # own (playwright's session set them), so its capture is 1 device px per CSS px unless told
        clip = {"x": x, "y": y, **page.viewport_size, "scale": scale}
        shot = await cdp.send("Page.captureScreenshot", {"format": "png", "clip": clip, "optimizeForSpeed": FAST_PNG})
        png = base64.b64decode(shot["data"])
    return Screen(png, (int(x), int(y)), elements, float(zoom))


async def extract(frame, max_text_chars: int) -> list[dict]:
    """The elements of a page (its main ``frame`` and the child frames that show through), in CSS px of what a
    screenshot shows: the visual viewport (client px, unless a zoomed-out mobile page: see :class:`Screen`). Text
    owners with more than ``max_text_chars`` characters of their own are not labelled (paragraphs)."""
    return (await _read(frame, max_text_chars))[0]


async def _read(frame, max_text_chars: int) -> tuple[list[dict], list[float], float]:
    """:func:`extract` with the frame's scroll (CSS px) and zoom (``visualViewport.scale``) read with it."""
    found = await _extract_frame(frame, 0, max_text_chars)
    elements = [tidy(e) for e in found["elements"]]  # names as a person would say them
    zoom, dx, dy = found["zoom"]
    if (zoom, dx, dy) != (1, 0, 0):  # client CSS px -> the visual viewport's
        elements = [_zoomed(e, zoom, dx, dy) for e in elements]
    return elements, found["scroll"], zoom


async def _extract_frame(frame, depth: int, max_text_chars: int) -> dict:
    """:data:`EXTRACT_JS`'s result for the frame: its ``elements`` (its own viewport's CSS px) with those of its
    child frames that show through."""
    found = json.loads(await frame.evaluate(EXTRACT_JSON_JS, {"maxTextChars": max_text_chars}))
    elements = found["elements"]
    if depth >= 3 or not found["frames"]:
        return found
    for child in frame.child_frames:
        try:
            handle = await child.frame_element()
            index = await handle.evaluate("(el) => [...document.querySelectorAll('iframe, frame')].indexOf(el)")
            info = next((f for f in found["frames"] if f["index"] == index), None)
            if info is None:
                continue
            inner = (await _extract_frame(child, depth + 1, max_text_chars))["elements"]
        except Exception as e:  # noqa: BLE001 - a frame that went away or cannot be read: its content is left out
            _log.info("render: frame %s left out: %s", child.url, e)
            continue
        ox, oy = info["offset"]
        vl, vt, vr, vb = info["visible"]
        moved = []
        for el in inner:
            x, y = el["point"][0] + ox, el["point"][1] + oy
            if not (vl <= x <= vr and vt <= y <= vb):
                continue
            x0, y0, x1, y1 = el["box"]
            box = [max(x0 + ox, vl), max(y0 + oy, vt), min(x1 + ox, vr), min(y1 + oy, vb)]
            if box[2] - box[0] < 1 or box[3] - box[1] < 1:
                continue
            moved.append({**el, "box": box, "point": [x, y], "frame": depth + 1})
        hits = await frame.evaluate(FRAME_HITS_JS, [index, [m["point"] for m in moved]]) if moved else []
        elements.extend(m for m, hit in zip(moved, hits, strict=True) if hit)
    return found


def _zoomed(element: dict, zoom: float, dx: float, dy: float) -> dict:
    x0, y0, x1, y1 = element["box"]
    px, py = element["point"]
    box = [(x0 - dx) * zoom, (y0 - dy) * zoom, (x1 - dx) * zoom, (y1 - dy) * zoom]
    return {**element, "box": box, "point": [(px - dx) * zoom, (py - dy) * zoom]}


def _redirected(went: list[str]) -> str:
    """The message of a ``page_redirects`` refusal: where the page went."""
    return f"the page went on to {went[0]} while rendered (a meta refresh or a script): render that page instead"
