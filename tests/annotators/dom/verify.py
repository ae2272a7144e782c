"""An independent checker for DOM labels: reload the page and ask the browser what is under every click point.

It shares no code with the DOM labeller on purpose: it loads the page again in its own browser context at a
screenshot's recorded settings and trusts only ``document.elementFromPoint``.

* ``check_labels(browser, shot, labels)``: every grounding row of one screenshot must click its own element. The
  point (screenshot pixels / device scale factor, after the recorded scroll) must lie inside the row's box and the
  screenshot, and the element hit there (descending into iframes), or one of its ancestors in that document, must
  carry the row's ``element_text`` as its normalised accessible name (``computedName``), ``innerText``, ``value``,
  ``placeholder``, ``alt``, ``title`` or ``aria-label``.
* ``check_expected(browser, page_uri, labels, ...)``: against the page's own marks at scroll 0, light scheme: every
  ``[data-expect]`` element (in the page or its frames) is hit by some label, and no label hits a
  ``[data-expect-not]`` element or anything inside one.

Both return a list of problems (one readable string each); an empty list means all good. The page is contained
like the renderer must contain it: every request outside the page's folder is aborted, dialogs are dismissed, and a
script that never yields (``loop.html``) is stopped with CDP ``Runtime.terminateExecution``; once loaded, scrolled and
painted (two animation frames), the page's own scripts are switched off (CDP ``Emulation.setScriptExecutionDisabled``)
so that it stays as it is while it is asked.

Needs the ``playwright`` Python package and Debian's ``/usr/bin/chromium`` (never ``playwright install``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--enable-blink-features=ComputedAccessibilityInfo"]
LOAD_TIMEOUT_MS = 15_000
SETTLE_TIMEOUT_MS = 1_500  # two animation frames take longer only when a script hogs the page: it is stopped
RESETTLE_TIMEOUT_MS = 5_000
DESKTOP = {"viewport": (1280, 800), "scale": 1.0, "mobile": False}

# Resolves on the second animation frame: layout and paint have caught up with load and scroll.
TWO_FRAMES_JS = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"

# What is at a point of this document. For a frame element (when descending): how far its content box is from the
# viewport's corner. Otherwise: whether it or an ancestor is named `text` (with `part`: whose shown text holds it, for
# a line of text that is no element), a description of it, and the indices (in document order) of the marked elements
# among it and its ancestors.
PROBE_JS = """([x, y, text, descend, part]) => {
  const el = document.elementFromPoint(x, y);
  if (!el) return null;
  if (descend && (el.tagName === 'IFRAME' || el.tagName === 'FRAME')) {
    const r = el.getBoundingClientRect(), cs = getComputedStyle(el);
    return {frame: true, dx: r.left + el.clientLeft + parseFloat(cs.paddingLeft),
            dy: r.top + el.clientTop + parseFloat(cs.paddingTop)};
  }
  const norm = (s) => (s === null || s === undefined ? '' : String(s)).replace(/\\s+/g, ' ').trim();
  const want = norm(text);
  const marks = [...document.querySelectorAll('[data-expect], [data-expect-not]')];
  let named = false;
  const marked = [];
  for (let e = el; e; e = e.parentElement) {
    const names = [e.computedName, e.innerText, e.value, e.getAttribute('placeholder'), e.getAttribute('alt'),
                   e.getAttribute('title'), e.getAttribute('aria-label')];
    if (want && names.some((n) => norm(n) === want)) named = true;
    if (want && part && norm(e.innerText).includes(want)) named = true;
    const i = marks.indexOf(e);
    if (i >= 0) marked.push(i);
  }
  const label = norm(el.innerText || el.getAttribute('aria-label') || el.getAttribute('value') || '').slice(0, 40);
  const id = el.id ? '#' + el.id : '';
  const cls = typeof el.className === 'string' && el.className.trim()
    ? '.' + el.className.trim().split(/\\s+/).join('.') : '';
  return {frame: false, named, marked,
          desc: `<${el.tagName.toLowerCase()}${id}${cls}>` + (label ? ` "${label}"` : '')};
}"""

MARK_LIST_JS = """() => [...document.querySelectorAll('[data-expect], [data-expect-not]')].map((el) => ({
  expect: el.hasAttribute('data-expect'),
  text: ((el.innerText || el.getAttribute('aria-label') || el.getAttribute('placeholder') || el.getAttribute('value')
          || el.getAttribute('title') || '') + '').replace(/\\s+/g, ' ').trim().slice(0, 40),
  tag: el.tagName.toLowerCase(),
}))"""


@contextmanager
def open_browser() -> Iterator[Any]:
    """Launch Debian's headless Chromium through playwright; yields a ``playwright.sync_api.Browser``.

    Raises:
        ImportError: the ``playwright`` package is missing (``pip install playwright``; never ``playwright install``).
        playwright.sync_api.Error: ``/usr/bin/chromium`` is missing or does not start.
    """
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def page_settings(page_path: str | Path) -> dict[str, Any]:
    """The viewport a page is made for, as keyword arguments of ``check_expected``.

    Read from ``<meta name="screenmill:viewport" content="390x844@3m">`` (the ``--viewports`` syntax: width x height,
    optional @scale, ``m`` for mobile emulation); pages without it are for 1280x800 at scale 1.
    """
    text = Path(page_path).read_text(encoding="utf-8")
    meta = re.search(r'<meta\s+name="screenmill:viewport"\s+content="(\d+)x(\d+)(?:@([\d.]+))?(m?)"', text)
    if not meta:
        return dict(DESKTOP)
    width, height, scale, mobile = meta.groups()
    return {"viewport": (int(width), int(height)), "scale": float(scale or 1), "mobile": mobile == "m"}


@contextmanager
def _loaded(browser: Any, page_uri: str, render: dict[str, Any]) -> Iterator[Any]:
    """Yield a playwright Page showing ``page_uri`` at ``render``'s settings, scrolled, settled and contained."""
    folder = page_uri.rsplit("/", 1)[0] + "/"
    mobile = bool(render.get("mobile", False))
    context = browser.new_context(
        viewport={"width": int(render["viewport_width"]), "height": int(render["viewport_height"])},
        device_scale_factor=float(render.get("device_scale_factor", 1.0)),
        is_mobile=mobile,
        has_touch=mobile,
        color_scheme=render.get("color_scheme", "light"),
        accept_downloads=False,
    )
    try:
        context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(folder) else r.abort())
        page = context.new_page()
        page.on("popup", lambda popup: popup.close())
        page.on("dialog", lambda dialog: dialog.dismiss())
        cdp = context.new_cdp_session(page)  # opened before the page can hog its main thread
        page.goto(page_uri, wait_until="load", timeout=LOAD_TIMEOUT_MS)
        _settle(page, cdp, TWO_FRAMES_JS)
        scroll_x, scroll_y = render.get("scroll_x", 0), render.get("scroll_y", 0)
        if scroll_x or scroll_y:
            page.evaluate("([x, y]) => window.scrollTo({left: x, top: y, behavior: 'instant'})", [scroll_x, scroll_y])
            _settle(page, cdp, TWO_FRAMES_JS)
        # Freeze the page as it is now: no timer, frame callback or handler of its own runs again, so none can
        # change it or start spinning while it is asked (evaluate has no time limit). A script that started
        # spinning between the last frame and the freeze is stopped by the timed ping.
        cdp.send("Emulation.setScriptExecutionDisabled", {"value": True})
        _settle(page, cdp, "() => true")
        yield page
    finally:
        context.close()


def _settle(page: Any, cdp: Any, predicate: str) -> None:
    """Wait until ``predicate`` resolves in the page; when the page's script never yields, stop it and wait again."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(predicate, timeout=SETTLE_TIMEOUT_MS)
    except PlaywrightTimeout:
        cdp.send("Runtime.terminateExecution")
        page.wait_for_function(predicate, timeout=RESETTLE_TIMEOUT_MS)


def _probe(page: Any, x: float, y: float, text: str = "", part: bool = False) -> tuple[Any, dict[str, Any]] | None:
    """What is at CSS point (x, y) of the viewport, descending into iframes: (frame, PROBE_JS answer) or None;
    ``part``: ``text`` is a line of the element's text (role ``line``), not all of it.

    A point on a frame's border or padding hits the frame element itself (named and marked like any element).
    Frames are reached through the browser's frame tree, so file:// frames (cross-origin to their parent: their
    contentDocument is null) are descended into too.
    """
    frame = page.main_frame
    while True:
        info = frame.evaluate(PROBE_JS, [x, y, text, True, part])
        if info is None or not info["frame"]:
            return (frame, info) if info else None
        handle = frame.evaluate_handle("([x, y]) => document.elementFromPoint(x, y)", [x, y]).as_element()
        child = handle.content_frame() if handle else None
        cx, cy = x - info["dx"], y - info["dy"]
        inside = child is not None and child.evaluate(
            "([x, y]) => x >= 0 && y >= 0 && x < innerWidth && y < innerHeight", [cx, cy]
        )
        if not inside:  # ask this document again, as if the frame were an ordinary element
            return frame, frame.evaluate(PROBE_JS, [x, y, text, False, part])
        frame, x, y = child, cx, cy


def _where(frame: Any) -> str:
    return "" if frame.parent_frame is None else f" in frame {frame.url.rsplit('/', 1)[-1]}"


def check_labels(browser: Any, shot: dict[str, Any], labels: list[dict[str, Any]]) -> list[str]:
    """Check every grounding row of one screenshot against the page reloaded at the screenshot's settings.

    Args:
        browser: from ``open_browser()``.
        shot: a ``screenshots`` row: ``screenshot_id, width, height, page_uri, page_sha256, render`` with ``render``
            = ``{viewport_width, viewport_height, device_scale_factor, mobile, color_scheme, scroll_x, scroll_y}``.
        labels: its ``grounding`` rows: ``label_id, instruction, element_text, role, x0, y0, x1, y1, click_x,
            click_y`` in screenshot pixels (CSS px x device scale factor).

    Returns:
        One problem per wrong row (click point outside its box or the screenshot, nothing hit, or the element hit is
        not named ``element_text``), or one problem for the whole screenshot when its page does not load.
    """
    from playwright.sync_api import Error as PlaywrightError

    render = shot["render"]
    # screenshot px per client CSS px: the device scale factor times the page's zoom (a page without a mobile viewport
    # in mobile emulation is shown zoomed out)
    scale = float(render.get("device_scale_factor", 1.0)) * float(render.get("page_scale") or 1.0)
    problems: list[str] = []
    try:
        with _loaded(browser, shot["page_uri"], render) as page:
            for label in labels:
                problem = _check_one(page, shot, label, scale)
                if problem:
                    problems.append(problem)
    except PlaywrightError as exc:  # a page that cannot be loaded again fails every row at once
        return [f"screenshot {shot.get('screenshot_id')}: {shot['page_uri']} could not be checked: {exc}"]
    return problems


def _check_one(page: Any, shot: dict[str, Any], label: dict[str, Any], scale: float) -> str | None:
    cx, cy = float(label["click_x"]), float(label["click_y"])
    head = f"label {label['label_id']} ({label['instruction']!r}) at ({cx:g}, {cy:g})"
    if not (0 <= cx < shot["width"] and 0 <= cy < shot["height"]):
        return f"{head}: outside the {shot['width']}x{shot['height']} screenshot"
    if not (label["x0"] <= cx <= label["x1"] and label["y0"] <= cy <= label["y1"]):
        return f"{head}: outside its box [{label['x0']}, {label['y0']}, {label['x1']}, {label['y1']}]"
    hit = _probe(page, cx / scale, cy / scale, label["element_text"], part=label.get("role") == "line")
    if hit is None:
        return f"{head}: hits nothing"
    frame, info = hit
    if not info["named"]:
        return f"{head}: hits {info['desc']}{_where(frame)}, not an element named {label['element_text']!r}"
    return None


def check_expected(
    browser: Any,
    page_uri: str,
    labels: list[dict[str, Any]],
    viewport: tuple[int, int] = (1280, 800),
    scale: float = 1,
    mobile: bool = False,
) -> list[str]:
    """Check one screenshot's labels against the page's marks (scroll 0, light scheme).

    Args:
        browser: from ``open_browser()``.
        page_uri: the page (``file://...``); its frames are checked too.
        labels: grounding rows with ``label_id, instruction, click_x, click_y`` in screenshot pixels.
        viewport, scale, mobile: the render settings (``page_settings(path)`` gives a page's own).

    Returns:
        A problem for every ``[data-expect]`` element no click point hits (the hit is it or inside it), and for
        every label whose click point hits a ``[data-expect-not]`` element or something inside one; one problem for
        the whole page when it does not load.
    """
    from playwright.sync_api import Error as PlaywrightError

    render = {
        "viewport_width": viewport[0],
        "viewport_height": viewport[1],
        "device_scale_factor": float(scale),
        "mobile": mobile,
        "color_scheme": "light",
        "scroll_x": 0,
        "scroll_y": 0,
    }
    problems: list[str] = []
    try:
        with _loaded(browser, page_uri, render) as page:
            frames = [f for f in page.frames if not f.is_detached()]
            marks = {id(f): f.evaluate(MARK_LIST_JS) for f in frames}
            hit_marks: set[tuple[int, int]] = set()
            for label in labels:
                hit = _probe(page, float(label["click_x"]) / scale, float(label["click_y"]) / scale)
                if hit is None:
                    continue
                frame, info = hit
                for index in info["marked"]:
                    hit_marks.add((id(frame), index))
                    mark = marks[id(frame)][index]
                    if not mark["expect"]:
                        problems.append(
                            f"label {label['label_id']} ({label['instruction']!r}) hits <{mark['tag']}> "
                            f"{mark['text']!r}, marked data-expect-not"
                        )
            for frame in frames:
                where = _where(frame)
                for index, mark in enumerate(marks[id(frame)]):
                    if mark["expect"] and (id(frame), index) not in hit_marks:
                        problems.append(f"no label hits <{mark['tag']}> {mark['text']!r}{where}, marked data-expect")
    except PlaywrightError as exc:
        return [f"{page_uri} could not be checked: {exc}"]
    return problems
