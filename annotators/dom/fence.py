"""The request fence of a rendered page (every page, every frame of it).

Requests: ``file://`` only under the page's root folder, ``http(s)``/``ws(s)`` only to the page's own origin and
``allow_origins``; everything else is aborted and counted
(:attr:`screenmill.annotators.dom.page.RenderedPage.blocked`). Only requests that need a decision reach Python: the
browser context's handler is registered for :meth:`Fence.fast_pattern`, which playwright's driver matches (a
``file://`` URL it can tell is under a root without escaping symlinks goes on by itself). The rest of a page's
containment (service workers, downloads, dialogs, popups, time limits) is the browser's:
:mod:`screenmill.annotators.dom.browser`.
"""

from __future__ import annotations

import os
import re
import urllib.parse


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of an http(s)/ws(s) URL (None for other schemes)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https", "ws", "wss") or not parts.hostname:
        return None
    return f"{parts.scheme}://{parts.netloc.lower()}"


# The characters a root and the rest of a file:// URL under it may have for the driver to let it through unasked
# (:meth:`Fence.fast_pattern`): the URL spells them as the path does (no escapes), and none is special to realpath
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


class Fence:
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
