"""A real headless Chromium for the DOM tests (Debian's chromium + the playwright package); skipped without them."""

from __future__ import annotations

import os

import pytest
from screenmill.annotators.dom.browser import CHROMIUM, BrowserConfig, BrowserHost


def browser_missing() -> str | None:
    """Why the browser tests cannot run here (None: they can)."""
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return "the playwright package is missing (bash infra/browser/install.sh)"
    if not os.access(CHROMIUM, os.X_OK):
        return f"{CHROMIUM} is missing (bash infra/browser/install.sh)"
    return None


@pytest.fixture(scope="session")
def host():
    """One headless Chromium host for every DOM test module of the session (it relaunches the browser every third
    page itself); tests that need other settings start a host of their own."""
    why = browser_missing()
    if why:
        pytest.skip(why)
    h = BrowserHost(BrowserConfig(timeout_s=4, max_dom_nodes=500, recycle_every=3)).start()
    yield h
    h.close()
