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
Exploration keeps a fresh context per episode. Every document of a tab gets
:data:`screenmill.annotators.dom.page.STILL_CSS` from an init script, before its first paint (no restyle after load).

Containment, every page and every frame: the browser runs in a :class:`screenmill.annotators.dom.jail.Jail` (a
network namespace whose only way out is a forwarder allowed per page to the page's origins, WebRTC without UDP, as
``nobody`` with Chromium's sandbox where the host allows it: ``fence_settings`` says which layers are on); requests go
through the page's fence
(:class:`screenmill.annotators.dom.fence.Fence`: ``file://`` under the page's root, ``http(s)``/``ws(s)`` to its own
origin and ``allow_origins``, the rest aborted and counted); service workers blocked, downloads refused, dialogs
dismissed, popups closed; ``max_dom_nodes``: a page with more elements is ``page_too_large``. What a render does in
its tab (load, settle, screenshots, the DOM read) is :mod:`screenmill.annotators.dom.page`.

Reasons (:class:`~screenmill.annotators.dom.page.RenderError`): ``render_timeout`` (over the time limit),
``render_failed`` (navigation error, crash, browser gone, the page failing under a read), ``page_too_large``,
``blank_page`` (the first screen is one colour), ``page_redirects`` (the page went on to another while rendered: a
meta refresh, a script's redirect).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import logging
import os
import re
import threading
from typing import Any

from screenmill.annotators import scratch
from screenmill.annotators.dom.fence import Fence, origin_of
from screenmill.annotators.dom.jail import Jail, say_once
from screenmill.annotators.dom.page import STILL_INIT_JS, RenderedPage, RenderError, Viewport, shoot
from screenmill.annotators.wording import MAX_INSTRUCTION_NAME

CHROMIUM = "/usr/bin/chromium"
INSTALL_HINT = (
    "rendering pages needs the playwright package and a system Chromium: bash infra/browser/install.sh "
    "(apt-get install chromium; pip install playwright; never `playwright install`)"
)
LAUNCH_ARGS = (
    "--headless",
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
#: Launch flags for frames that do not depend on timing, added to :data:`LAUNCH_ARGS`: a tile is rastered whole
#: whenever any of it changed (with partial raster, its pixels depend on which parts were repainted in which frames:
#: anti-aliasing at the edge of a clipped repaint, e.g. a spinner beside a ticking clock, differed between two runs of
#: one episode by a few pixels).
DETERMINISM_ARGS = ("--disable-partial-raster",)
_log = logging.getLogger("screenmill.render")
_SANDBOX = {"works": True}  # Chromium's own sandbox started in this process (probed on the first launch)


@dataclasses.dataclass(frozen=True)
class BrowserConfig:
    """How pages are rendered and fenced.

    Attributes:
        chromium: the Chromium executable (never downloaded).
        timeout_s: the time limit of one page (load, settle, every screen, DOM reads).
        max_dom_nodes: pages with more elements are ``page_too_large``.
        recycle_every: the browser is replaced after this many pages (flat memory).
        allow_origins: ``scheme://host[:port]`` origins pages may reach besides their own.
        max_text_chars: text owners with more characters of their own are not labelled (paragraphs); the longest
            name an instruction quotes by default.
    """

    chromium: str = CHROMIUM
    timeout_s: float = 20.0
    max_dom_nodes: int = 20000
    recycle_every: int = 50
    allow_origins: tuple[str, ...] = ()
    max_text_chars: int = MAX_INSTRUCTION_NAME

    def __post_init__(self):
        if self.timeout_s <= 0:
            raise ValueError(f"render timeout must be > 0 s, got {self.timeout_s}")
        if self.max_dom_nodes < 1 or self.recycle_every < 1 or self.max_text_chars < 1:
            raise ValueError("max_dom_nodes, recycle_every and max_text_chars must be >= 1")
        for origin in self.allow_origins:
            if origin_of(origin) != origin.rstrip("/"):
                raise ValueError(f"--allow-origin {origin!r} is not an origin like https://example.com[:port]")


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
    fence: Fence
    crashed: asyncio.Future
    routed: Any = None  # the URL pattern the context's request handler is registered for (see Fence.fast_pattern)
    handler: Any = None  # that handler: asks the tab's fence (one callable, so it can be unrouted)

    async def route(self, fence: Fence, root_stays: dict[str, bool]) -> None:
        """Hand the tab's requests to ``fence``: (re-)register the context's request handler when the fence's
        :meth:`Fence.fast_pattern` differs from the one registered (pages of one root keep theirs)."""
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
        self._root_stays: dict[str, bool] = {}  # page root -> no symlink leaves it (checked once: Fence.fast_pattern)
        self._lock = threading.Lock()
        self._jail: Jail | None = None
        self.sandbox = False  # Chromium's own sandbox is on (known once launched)

    @property
    def fence_settings(self) -> dict:
        """The network layers this host's browser has (:attr:`screenmill.annotators.dom.jail.Jail.settings`) and
        ``sandbox`` (Chromium's own sandbox on)."""
        return {**(self._jail.settings if self._jail else {}), "sandbox": self.sandbox}

    def start(self) -> BrowserHost:
        try:
            import playwright.async_api  # noqa: F401 - the check that it is installed
        except ImportError as e:
            raise RuntimeError(INSTALL_HINT) from e
        if not os.access(self.config.chromium, os.X_OK):
            raise RuntimeError(f"{self.config.chromium} is missing; {INSTALL_HINT}")
        self._jail = Jail(self.config.chromium)
        scratch.close_at_exit(self)  # a host held for the life of its process is closed at its exit
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="screenmill-browser", daemon=True)
        self._thread.start()
        try:
            self._call(self._launch(), timeout=120)
        except BaseException:
            self.close()  # the driver, the loop and the jail (its namespace holder) go too
            raise
        return self

    def close(self) -> None:
        scratch.forget(self)
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
        if self._jail is not None:
            self._jail.close()
            self._jail = None

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
        jail = self._jail
        args = [*LAUNCH_ARGS, *DETERMINISM_ARGS, *jail.args()]
        self.sandbox = _SANDBOX["works"] and not jail.runs_as_root
        try:
            self._browser = await self._pw.chromium.launch(
                executable_path=jail.executable, args=args, chromium_sandbox=self.sandbox
            )
        except Exception as e:
            if not self.sandbox:
                raise
            _SANDBOX["works"] = self.sandbox = False
            say_once("sandbox", f"Chromium's sandbox did not start ({str(e).splitlines()[0]}): --no-sandbox")
            self._browser = await self._pw.chromium.launch(executable_path=jail.executable, args=args)
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
            lambda page, fence: shoot(
                page,
                uri,
                viewport,
                color_scheme,
                screens,
                fence,
                session=self._sessions.get(page),
                timeout_s=self.config.timeout_s,
                max_dom_nodes=self.config.max_dom_nodes,
                max_text_chars=self.config.max_text_chars,
            ),
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
        fence = Fence(uri, root, self.config.allow_origins)
        self._jail.forwarder.allow(fence.origins)
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
