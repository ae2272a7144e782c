"""One headless Chromium per worker process, rendering untrusted pages inside a fence.

:class:`BrowserHost` drives Debian's ``chromium`` with the ``playwright`` package's async API on a thread of its own
(one event loop, one browser), so any thread of a Beam worker can call :meth:`BrowserHost.render` and a page that
hangs can be given up on: every page has a time limit, after which its context is closed and, when that does not
work, the browser is replaced. The browser is also replaced after ``recycle_every`` pages (memory stays flat) and
whenever it crashes. Never ``playwright install``: the executable is the system's (``infra/browser/install.sh``).

Rendering keeps one context and page (a :class:`_Tab`) per setting and navigates it from page to page: a new page
costs a renderer process, which is most of the CPU a screenshot costs. Between pages the tab is reset: the page's
``localStorage``/``sessionStorage`` (every frame) and ``window.name`` are cleared; a page that reached an http(s)
origin then goes to ``about:blank`` (unload handlers run) and cookies and the storage of every origin it reached are
cleared; the history is reset. A ``file://``-only page skips the ``about:blank`` hop (a whole navigation, ~1/6 of a
screenshot's CPU): the next page's navigation unloads it. A tab that fails any of this, whose page failed or timed
out, or that still has a popup open, is closed instead. Known limit: storage a ``file://`` page writes while being
unloaded survives to the next page of the same setting (Chromium clears no ``file://`` storage by origin).
Exploration keeps a fresh context per episode. Every document of a tab gets :data:`STILL_CSS` from an init script,
before its first paint (no restyle after load).

The fence (every page, every frame):
* requests: ``file://`` only under the page's root folder, ``http(s)``/``ws(s)`` only to the page's own origin and
  ``allow_origins``; everything else is aborted and counted (:attr:`RenderedPage.blocked`). Only requests that need
  a decision reach Python: the context's handler is registered for :meth:`_Fence.fast_pattern`, which playwright's
  driver matches (a ``file://`` URL it can tell is under a root without escaping symlinks goes on by itself);
* service workers blocked, downloads refused, dialogs dismissed, popups closed;
* ``max_dom_nodes``: a page with more elements is ``page_too_large``.

Reasons (:class:`RenderError`): ``render_timeout`` (over the time limit), ``render_failed`` (navigation error, crash,
browser gone, the page failing under a read), ``page_too_large``, ``blank_page`` (the first screen is one colour),
``page_redirects`` (the page went on to another while rendered: a meta refresh, a script's redirect).
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import dataclasses
import io
import json
import logging
import os
import re
import struct
import threading
import urllib.parse
import zlib
from collections.abc import Iterator
from typing import Any

from screenmill.annotators.dom.extract import EXTRACT_JS, FRAME_HITS_JS

CHROMIUM = "/usr/bin/chromium"
INSTALL_HINT = (
    "rendering pages needs the playwright package and a system Chromium: bash infra/browser/install.sh "
    "(apt-get install chromium; pip install playwright; never `playwright install`)"
)
LAUNCH_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--font-render-hinting=none",
    "--enable-blink-features=ComputedAccessibilityInfo",
    # no back-forward cache: a page gone back to is loaded afresh, so its frame does not depend on what the cache kept
    # (a restored page can differ by a raster pixel, which breaks replaying an episode to the same frame hashes)
    "--disable-features=BackForwardCache",
)
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


@dataclasses.dataclass(frozen=True)
class BrowserConfig:
    """How pages are rendered and fenced.

    Attributes:
        chromium: the Chromium executable (never downloaded).
        timeout_s: the time limit of one page (load, settle, every screen, DOM reads).
        max_dom_nodes: pages with more elements are ``page_too_large``.
        recycle_every: the browser is replaced after this many pages (flat memory).
        allow_origins: ``scheme://host[:port]`` origins pages may reach besides their own.
        max_text_chars: text owners with more characters of their own are not labelled (paragraphs).
    """

    chromium: str = CHROMIUM
    timeout_s: float = 20.0
    max_dom_nodes: int = 20000
    recycle_every: int = 50
    allow_origins: tuple[str, ...] = ()
    max_text_chars: int = 120

    def __post_init__(self):
        if self.timeout_s <= 0:
            raise ValueError(f"render timeout must be > 0 s, got {self.timeout_s}")
        if self.max_dom_nodes < 1 or self.recycle_every < 1 or self.max_text_chars < 1:
            raise ValueError("max_dom_nodes, recycle_every and max_text_chars must be >= 1")
        for origin in self.allow_origins:
            if origin_of(origin) != origin.rstrip("/"):
                raise ValueError(f"--allow-origin {origin!r} is not an origin like https://example.com[:port]")


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of an http(s)/ws(s) URL (None for other schemes)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https", "ws", "wss") or not parts.hostname:
        return None
    return f"{parts.scheme}://{parts.netloc.lower()}"


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


# The characters a root and the rest of a file:// URL under it may have for the driver to let it through unasked
# (:meth:`_Fence.fast_pattern`): the URL spells them as the path does (no escapes), and none is special to realpath
# but the dot, which may not start a segment. A first character other than the dot (no hidden or dot segment first).
_SAFE_PATH_CHARS = r"A-Za-z0-9_~/.\-"
_SAFE_ROOT_RE = re.compile(r"^(/[A-Za-z0-9_~\-][A-Za-z0-9_~.\-]*)+$")
_ROOT_WALK_LIMIT = 100_000  # entries: a bigger root is not walked, its file:// requests all go to the fence


def _root_stays_inside(root: str) -> bool:
    """Whether every path under ``root`` (a folder) resolves inside it: no symlink there points out of it (nor
    dangles to a place outside). False too for a root that is not a folder or has more than
    :data:`_ROOT_WALK_LIMIT` entries."""
    real = os.path.realpath(root)
    inside = real.rstrip("/") + "/"
    if not os.path.isdir(real):
        return False
    seen = 0
    for folder, dirs, files in os.walk(root, followlinks=False):
        seen += len(dirs) + len(files)
        if seen > _ROOT_WALK_LIMIT:
            return False
        for name in (*dirs, *files):
            path = os.path.join(folder, name)
            if os.path.islink(path):
                target = os.path.realpath(path)
                if target != real and not target.startswith(inside):
                    return False
    return True


class _Fence:
    """The request policy of one page (see the module docstring); counts what it aborts."""

    def __init__(self, page_uri: str, root: str | None, allow_origins: tuple[str, ...]):
        self.given_root = os.path.abspath(root) if root else None
        self.root = os.path.realpath(root) if root else None
        own = origin_of(page_uri)
        self.origins = {o.rstrip("/") for o in allow_origins} | ({own} if own else set())
        self.blocked: list[str] = []
        self.reached: set[str] = set()  # the http(s)/ws(s) origins let through (their storage is cleared after)

    def allows(self, url: str) -> bool:
        scheme = url.split(":", 1)[0].lower()
        if scheme in ("data", "blob", "about"):
            return True
        if scheme == "file":
            if self.root is None:
                return False
            path = os.path.realpath(urllib.parse.unquote(urllib.parse.urlsplit(url).path))
            return path == self.root or path.startswith(self.root.rstrip("/") + "/")
        origin = origin_of(url)
        if origin in self.origins:
            self.reached.add(origin.replace("ws", "http", 1) if origin.startswith("ws") else origin)
            return True
        return False

    def fast_pattern(self, root_stays: dict[str, bool]) -> re.Pattern | str:
        """The URL pattern of the requests that need :meth:`route`'s decision: playwright's driver matches it, so a
        request it does not match goes on without a round trip to Python. Every request matches (``**/*``) unless
        the root's ``file://`` URLs can be told safe from the URL alone: a root spelled in :data:`_SAFE_PATH_CHARS`
        holding no symlink that leaves it (:func:`_root_stays_inside`, asked once per root: ``root_stays`` caches
        it); then ``file://`` URLs under it whose rest is of those characters with no segment starting with a dot
        (no ``..``, no percent escape, query or fragment) and ``data:``/``blob:`` URLs are not matched, for
        :meth:`allows` lets every one of them through."""
        if self.given_root is None:
            return "**/*"
        given = self.given_root.rstrip("/")
        if not _SAFE_ROOT_RE.match(given):
            return "**/*"
        if given not in root_stays:
            root_stays[given] = _root_stays_inside(given)
        if not root_stays[given]:
            return "**/*"
        return re.compile(rf"^(?!data:|blob:|file://{re.escape(given)}/(?!\.|.*/\.)[{_SAFE_PATH_CHARS}]*$)")

    async def route(self, route):
        url = route.request.url
        if self.allows(url):
            await route.continue_()
        else:
            self.blocked.append(url)
            await route.abort("blockedbyclient")

    async def route_ws(self, ws):
        if self.allows(ws.url):
            ws.connect_to_server()
        else:
            self.blocked.append(ws.url)
            await ws.close()


# Clears what a document leaves in its tab: its storage and the window's name (errors: an opaque origin, no storage).
CLEAR_JS = (
    "() => { for (const s of ['localStorage', 'sessionStorage']) { try { window[s].clear(); } catch (e) {} }"
    " window.name = ''; }"
)


@dataclasses.dataclass(slots=True)
class _Tab:
    """A fenced context and its page, navigated from page to page of one setting (see the module docstring).
    ``fence`` is the current page's (the context's request handlers ask it), ``crashed`` resolves when the page's
    renderer crashes during the current page."""

    ctx: Any
    page: Any
    cdp: Any
    fence: _Fence
    crashed: asyncio.Future
    routed: Any = None  # the URL pattern the context's request handler is registered for (see _Fence.fast_pattern)
    handler: Any = None  # that handler: asks the tab's fence (one callable, so it can be unrouted)

    async def route(self, fence: _Fence, root_stays: dict[str, bool]) -> None:
        """Hand the tab's requests to ``fence``: (re-)register the context's request handler when the fence's
        :meth:`_Fence.fast_pattern` differs from the one registered (pages of one root keep theirs)."""
        self.fence = fence
        pattern = fence.fast_pattern(root_stays)
        if pattern == self.routed:
            return
        if self.handler is None:
            self.handler = lambda route: self.fence.route(route)
        await self.ctx.route(pattern, self.handler)
        if self.routed is not None:
            await self.ctx.unroute(self.routed, self.handler)
        self.routed = pattern


class BrowserHost:
    """A Chromium on a thread of its own; :meth:`render` from any thread. Build with :meth:`start` (raises
    RuntimeError with :data:`INSTALL_HINT` when playwright or the executable is missing)."""

    def __init__(self, config: BrowserConfig):
        self.config = config
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pw: Any = None
        self._browser: Any = None
        self._pages_since_launch = 0
        self._tabs: dict[tuple[Viewport, str], _Tab] = {}
        self._sessions: dict[Any, Any] = {}  # the page of every open tab -> its CDP session (direct screenshots)
        self.launches = 0
        self.contexts = 0  # fresh contexts opened (a tab kept for the next page opens none)
        self._root_stays: dict[str, bool] = {}  # page root -> no symlink leaves it (checked once: _Fence.fast_pattern)
        self._lock = threading.Lock()

    def start(self) -> BrowserHost:
        try:
            import playwright.async_api  # noqa: F401 - the check that it is installed
        except ImportError as e:
            raise RuntimeError(INSTALL_HINT) from e
        if not os.access(self.config.chromium, os.X_OK):
            raise RuntimeError(f"{self.config.chromium} is missing; {INSTALL_HINT}")
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="screenmill-browser", daemon=True)
        self._thread.start()
        self._call(self._launch(), timeout=120)
        return self

    def close(self) -> None:
        if self._loop is None:
            return
        try:
            self._call(self._shutdown(), timeout=30)
        except Exception as e:  # noqa: BLE001 - closing is best effort
            _log.warning("browser: close failed: %s", e)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._loop = None

    def _call(self, coro, timeout: float):
        assert self._loop is not None, "BrowserHost.start() first"
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise

    async def _launch(self):
        from playwright.async_api import async_playwright

        if self._pw is None:
            self._pw = await async_playwright().start()
        self._browser = await self._pw.chromium.launch(executable_path=self.config.chromium, args=list(LAUNCH_ARGS))
        self._pages_since_launch = 0
        self._tabs, self._sessions = {}, {}  # the old browser's tabs went with it
        self.launches += 1

    async def _shutdown(self):
        if self._browser is not None:
            try:
                await asyncio.wait_for(self._browser.close(), 15)
            except Exception:  # noqa: BLE001
                pass
            self._browser = None
        if self._pw is not None:
            await self._pw.stop()
            self._pw = None

    async def _relaunch(self):
        old, self._browser = self._browser, None
        if old is not None:
            try:
                await asyncio.wait_for(old.close(), 10)
            except Exception:  # noqa: BLE001 - a hung browser: its process goes with the driver's cleanup
                _log.warning("browser: could not close the old browser cleanly")
        await self._launch()

    def render(self, uri: str, root: str | None, viewport: Viewport, color_scheme: str, screens: int) -> RenderedPage:
        """Render ``uri`` under one setting into up to ``screens`` screenshots down the page.

        Args:
            uri: a ``file://`` or ``http(s)://`` URL.
            root: the folder ``file://`` requests must stay in (None: no file access besides ``uri`` itself).
            viewport: size, scale and mobile emulation.
            color_scheme: ``light`` or ``dark`` (``prefers-color-scheme``).
            screens: how many viewport screenshots, scrolling down one viewport each (fewer when the page ends).

        Returns:
            The :class:`RenderedPage`.

        Raises:
            RenderError: ``render_timeout``, ``render_failed``, ``page_too_large``, ``blank_page`` or
                ``page_redirects``.
        """
        return self.run_page(
            uri,
            root,
            viewport,
            color_scheme,
            lambda page, fence: self._shoot(page, uri, viewport, color_scheme, screens, fence),
            self.config.timeout_s,
            "render_timeout",
            reuse=True,
        )

    def run_page(
        self, uri, root, viewport, color_scheme, work, limit_s: float, timeout_reason: str, reuse: bool = False
    ):
        """Run ``await work(page, fence)`` on a fenced page within ``limit_s`` seconds; the building block of
        :meth:`render` and of exploration (:mod:`screenmill.annotators.dom.explore`).

        Args:
            uri / root / viewport / color_scheme: as for :meth:`render` (``uri`` is the fence's own origin).
            work: an async callable ``(page, fence) -> result`` run on the browser's thread.
            limit_s: the time limit of the whole ``work``.
            timeout_reason: the :class:`RenderError` reason when the limit is passed.
            reuse: navigate the setting's kept tab (reset after, see the module docstring) instead of a fresh
                context; ``work`` must then leave nothing behind but what the reset clears.

        Raises:
            RenderError: ``timeout_reason`` (over the limit, or the browser stopped answering: it is replaced),
                ``render_failed`` (the renderer crashed), or whatever ``work`` raises.
        """
        with self._lock:  # one page at a time per browser: the time limit is the page's own
            try:
                return self._call(
                    self._in_fence(uri, root, viewport, color_scheme, work, limit_s, timeout_reason, reuse),
                    limit_s + 30,
                )
            except concurrent.futures.TimeoutError:
                self._call(self._relaunch(), timeout=120)
                raise RenderError(timeout_reason, "the browser stopped answering; it was replaced") from None

    async def _in_fence(self, uri, root, viewport, color_scheme, work, limit_s, timeout_reason, reuse):
        if self._browser is None or not self._browser.is_connected():
            await self._relaunch()
        elif self._pages_since_launch >= self.config.recycle_every:
            await self._relaunch()
        self._pages_since_launch += 1
        fence = _Fence(uri, root, self.config.allow_origins)
        tab = self._tabs.pop((viewport, color_scheme), None) if reuse else None
        if tab is None:
            tab = await self._new_tab(viewport, color_scheme, fence)
        await tab.route(fence, self._root_stays)
        tab.crashed = asyncio.get_running_loop().create_future()
        keep = False
        try:
            job = asyncio.ensure_future(work(tab.page, fence))
            done, _ = await asyncio.wait({job, tab.crashed}, timeout=limit_s, return_when="FIRST_COMPLETED")
            if job not in done:
                job.cancel()
                if tab.crashed in done:
                    raise RenderError("render_failed", "the page's renderer crashed")
                raise RenderError(timeout_reason, f"not done within {limit_s:g} s")
            result = job.result()
            if reuse:
                keep = await self._reset(tab)
            return result
        finally:
            if keep:
                self._tabs[(viewport, color_scheme)] = tab
            else:
                self._sessions.pop(tab.page, None)
                try:
                    await asyncio.wait_for(tab.ctx.close(), 10)
                except Exception:  # noqa: BLE001 - a context that cannot close: replace the browser
                    await self._relaunch()

    async def _new_tab(self, viewport, color_scheme, fence) -> _Tab:
        """A fresh fenced context and its page (the fence, dialogs, popups and downloads: see the module docstring);
        its requests go to whatever fence the tab holds then."""
        ctx = await self._browser.new_context(
            viewport={"width": viewport.width, "height": viewport.height},
            device_scale_factor=viewport.scale,
            is_mobile=viewport.mobile,
            has_touch=viewport.mobile,
            color_scheme=color_scheme,
            accept_downloads=False,
            service_workers="block",
            reduced_motion="reduce",
        )
        self.contexts += 1
        tab = _Tab(ctx, None, None, fence, asyncio.get_running_loop().create_future())
        try:
            await tab.route(fence, self._root_stays)
            await ctx.route_web_socket(re.compile(".*"), lambda ws: tab.fence.route_ws(ws))
            tab.page = page = await ctx.new_page()
            ctx.on("page", lambda p: asyncio.ensure_future(p.close()) if p is not page else None)
            page.on("dialog", lambda d: asyncio.ensure_future(d.dismiss()))
            page.on("crash", lambda _: tab.crashed.done() or tab.crashed.set_result(True))
            await ctx.add_init_script(STILL_INIT_JS)
            tab.cdp = self._sessions[page] = await ctx.new_cdp_session(page)
            # With the accessibility tree kept, the DOM read's computedRole/computedName read it; otherwise each
            # builds and drops one for the whole document (~90 % of the DOM read's time). The same values.
            await tab.cdp.send("Accessibility.enable")
        except BaseException:
            self._sessions.pop(tab.page, None)
            await asyncio.wait_for(ctx.close(), 10)
            raise
        return tab

    async def _reset(self, tab: _Tab, limit_s: float = 5.0) -> bool:
        """Clear what the page left in its tab (see the module docstring); whether the tab can be used again."""

        async def reset():
            for frame in tab.page.frames:
                try:
                    await frame.evaluate(CLEAR_JS)
                except Exception:  # noqa: BLE001 - a frame that went away or has no script: nothing of it to clear
                    pass
            if tab.fence.reached:  # unloaded first, so what its unload handlers write is cleared too
                await tab.page.goto("about:blank")
                await tab.ctx.clear_cookies()
                for origin in tab.fence.reached:
                    await tab.cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
            await tab.cdp.send("Page.resetNavigationHistory")

        try:
            await asyncio.wait_for(reset(), limit_s)
        except Exception as e:  # noqa: BLE001 - a tab that cannot be reset is closed instead
            _log.info("browser: tab not reused: %s", e)
            return False
        return not tab.crashed.done() and tab.ctx.pages == [tab.page]

    async def open_page(self, page, uri) -> int:
        """Load ``uri`` in ``page`` (its motion stopped: :data:`STILL_INIT_JS`), wait for its fonts; its element count.

        Raises:
            RenderError: ``render_failed`` (navigation error) or ``page_too_large``.
        """
        from playwright.async_api import Error as PlaywrightError

        try:
            await page.goto(uri, wait_until="load", timeout=self.config.timeout_s * 1000)
        except PlaywrightError as e:
            raise RenderError("render_failed", f"navigation failed: {str(e).splitlines()[0]}") from None
        nodes = await page.evaluate("document.fonts.ready.then(() => document.getElementsByTagName('*').length)")
        if nodes > self.config.max_dom_nodes:
            raise RenderError("page_too_large", f"{nodes} DOM elements, over the limit of {self.config.max_dom_nodes}")
        return int(nodes)

    async def _shoot(self, page, uri, viewport, color_scheme, screens, fence) -> RenderedPage:
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
            nodes = await self.open_page(page, uri)
            # Chromium's own screenshot on the tab's CDP session, but not in mobile emulation: a capture there resets
            # the page scale of a zoomed-out page (its later screens would change); playwright's screenshot keeps it
            cdp = None if viewport.mobile else self._sessions.get(page)
            shots: list[Screen] = []
            for k in range(screens):
                await page.evaluate(SETTLE_JS, [k, cdp is not None])
                shot = await self.capture(page, shots[-1].scroll if shots else None, cdp, viewport.scale)
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

    async def capture(
        self, page, stop_at: tuple[int, int] | None = None, cdp=None, scale: float = 1.0
    ) -> Screen | None:
        """The settled ``page`` as a :class:`Screen`: its scroll, zoom, elements (:meth:`extract`) and PNG; None when
        the scroll is ``stop_at`` (the page scrolled no further). The PNG is playwright's ``page.screenshot`` (which
        stills animations and the caret for the shot), or with ``cdp`` (the page's CDP session, its animations
        stilled by :data:`SETTLE_JS`; ``scale``: the device scale factor) Chromium's ``Page.captureScreenshot``: the
        same pixels for less CPU (no evaluations in every frame around it, no layout metrics round trip)."""
        if stop_at is not None and tuple(await page.evaluate("[window.scrollX, window.scrollY]")) == stop_at:
            return None
        elements, (x, y), zoom = await self._read(page.main_frame)
        if cdp is None:
            png = await page.screenshot(type="png", animations="disabled", caret="hide", scale="device")
        else:
            # the viewport in document CSS px at the device scale factor: this session has no device metrics of its
            # own (playwright's session set them), so its capture is 1 device px per CSS px unless told
            clip = {"x": x, "y": y, **page.viewport_size, "scale": scale}
            shot = await cdp.send(
                "Page.captureScreenshot", {"format": "png", "clip": clip, "optimizeForSpeed": FAST_PNG}
            )
            png = base64.b64decode(shot["data"])
        return Screen(png, (int(x), int(y)), elements, float(zoom))

    async def extract(self, frame) -> list[dict]:
        """The elements of a page (its main ``frame`` and the child frames that show through), in CSS px of what a
        screenshot shows: the visual viewport (client px, unless a zoomed-out mobile page: see :class:`Screen`)."""
        return (await self._read(frame))[0]

    async def _read(self, frame) -> tuple[list[dict], list[float], float]:
        """:meth:`extract` with the frame's scroll (CSS px) and zoom (``visualViewport.scale``) read with it."""
        found = await self._extract_frame(frame, 0)
        elements = found["elements"]
        zoom, dx, dy = found["zoom"]
        if (zoom, dx, dy) != (1, 0, 0):  # client CSS px -> the visual viewport's
            elements = [_zoomed(e, zoom, dx, dy) for e in elements]
        return elements, found["scroll"], zoom

    async def _extract_frame(self, frame, depth: int) -> dict:
        """:data:`EXTRACT_JS`'s result for the frame: its ``elements`` (its own viewport's CSS px) with those of its
        child frames that show through."""
        found = json.loads(await frame.evaluate(EXTRACT_JSON_JS, {"maxTextChars": self.config.max_text_chars}))
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
                inner = (await self._extract_frame(child, depth + 1))["elements"]
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


def one_colour(png: bytes) -> bool:
    """Whether the image is a single colour (a blank screen). An 8-bit RGB(A) PNG, what Chromium writes, is read row
    by row from its compressed stream and stops at the first row that is not the first pixel's colour (most pages
    differ near the top: a fraction of a full decode); other images are decoded whole."""
    known = _png_one_colour(png)
    if known is not None:
        return known
    from PIL import Image

    with Image.open(io.BytesIO(png)) as im:
        extrema = (im if im.mode in ("RGB", "RGBA") else im.convert("RGB")).getextrema()
    return all(lo == hi for lo, hi in extrema)


def _png_one_colour(png: bytes) -> bool | None:
    """:func:`one_colour` without decoding pixels, for a non-interlaced 8-bit RGB or RGBA PNG (None: another image).

    Unfiltering is one-to-one given the row above, so an image is one colour ``p`` (its first pixel: the first
    filtered bytes, whatever row 0's filter) exactly when every filtered row is what each PNG filter makes of a row of
    ``p`` under a row of ``p`` (or of zeros, above row 0): None ``p p p``, Sub ``p 0 0``, Up ``0 0 0`` (row 0:
    ``p p p``), Average ``p-p//2, 0 0`` (row 0: ``p, p-p//2 ...``), Paeth ``0 0 0`` (row 0: ``p 0 0``)."""
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        return None
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", png[16:29])
    if depth != 8 or colour not in (2, 6) or interlace or not width or not height:
        return None
    bpp = 3 if colour == 2 else 4
    expected: dict[tuple[int, bool], bytes] = {}
    row = 0
    try:
        for line in _png_rows(png, 1 + width * bpp):
            if not expected:
                p, zeros, blank = line[1 : 1 + bpp], bytes(width * bpp - bpp), bytes(width * bpp)
                half = bytes((c - c // 2) & 255 for c in p)
                expected = {  # (filter, row 0) -> the filtered row of a one-colour image
                    (0, True): b"\x00" + p * width,
                    (0, False): b"\x00" + p * width,
                    (1, True): b"\x01" + p + zeros,
                    (1, False): b"\x01" + p + zeros,
                    (2, True): b"\x02" + p * width,
                    (2, False): b"\x02" + blank,
                    (3, True): b"\x03" + p + half * (width - 1),
                    (3, False): b"\x03" + half + zeros,
                    (4, True): b"\x04" + p + zeros,
                    (4, False): b"\x04" + blank,
                }
            if line[0] > 4:
                return None  # not a PNG filter: the full decode says what it is
            if line != expected[(line[0], row == 0)]:
                return False
            row += 1
            if row == height:
                return True
    except zlib.error:
        return None  # a corrupt stream: the full decode says what it is
    return None  # too few rows: likewise


def _png_rows(png: bytes, stride: int) -> Iterator[bytes]:
    """The filtered rows (filter byte first) of a non-interlaced PNG, inflated a few rows at a time."""
    inflate = zlib.decompressobj()
    pos, pending = 8, b""
    while pos + 8 <= len(png):
        size, kind = struct.unpack(">I4s", png[pos : pos + 8])
        data = png[pos + 8 : pos + 8 + size] if kind == b"IDAT" else b""
        pos += 12 + size
        while data:
            pending += inflate.decompress(data, 64 * stride)
            data = inflate.unconsumed_tail
            full = len(pending) // stride * stride
            for at in range(0, full, stride):
                yield pending[at : at + stride]
            pending = pending[full:]
