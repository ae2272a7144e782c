"""The render fence's network layer (:mod:`screenmill.annotators.dom.jail`): hostile pages, for ``file://`` pages and
for pages of an allowed loopback origin, reach none of the host's TCP/UDP listeners (loopback and a non-loopback
address) nor a resolver, paint no canary file, and the normal page after them is labelled as ever."""

from __future__ import annotations

import functools
import http.server
import os
import threading

import pytest
from screenmill.annotators import netns
from screenmill.annotators.dom.page import RenderError, Viewport

from tests.annotators.dom.hostile import CANARY_TEXT, Listeners, host_addresses, write_hostile

NORMAL = "<!doctype html><html><body><h1>Normal</h1><button>Sign in</button><a href='#x'>Help</a></body></html>"


def _texts(rendered) -> list[str]:
    return [f"{e.get('name', '')} {e.get('text', '')}" for s in rendered.screens for e in s.elements]


def _render_or_reason(host, uri, root):
    try:
        return host.render(uri, root, Viewport(640, 480), "light", 1)
    except RenderError as e:
        return e.reason


def test_hostile_pages_reach_no_listener_resolver_or_canary_and_normal_pages_still_render(host, tmp_path):
    listeners = Listeners(host_addresses())
    private = tmp_path / "private"  # 0700 root (pytest's tmp_path): Chromium runs as nobody and still reads it
    root = private / "site"
    root.mkdir(parents=True)
    os.chmod(private, 0o700)
    canary = tmp_path / "canary.txt"
    canary.write_text(CANARY_TEXT, encoding="utf-8")
    hostile = write_hostile(root, listeners.targets, canary)
    (root / "normal.html").write_text(NORMAL, encoding="utf-8")
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    )
    server.RequestHandlerClass.log_message = lambda *a: None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        got = {
            "file": _render_or_reason(host, hostile.as_uri(), str(root)),
            "file normal": _render_or_reason(host, (root / "normal.html").as_uri(), str(root)),
            "http": _render_or_reason(host, f"{base}/hostile.html", None),
            "http normal": _render_or_reason(host, f"{base}/normal.html", None),
        }
        seen = listeners.settle()
    finally:
        listeners.close()
        server.shutdown()
    assert seen == [], seen  # not one connection or datagram: TCP, UDP (WebRTC), DNS
    for kind in ("file normal", "http normal"):
        assert not isinstance(got[kind], str), (kind, got[kind])
        assert {"Normal", "Sign in", "Help"} <= {e["name"] for e in got[kind].screens[0].elements}, kind
    for kind in ("file", "http"):
        assert not isinstance(got[kind], str), (kind, got[kind])  # the hostile page itself renders ...
        assert "Hostile page" in {e["name"] for e in got[kind].screens[0].elements}
        assert not [t for t in _texts(got[kind]) if CANARY_TEXT in t]  # ... without the canary
        assert got[kind].blocked  # the request layer saw (and stopped) what it could
    refused = host._jail.forwarder.refused
    assert {f"{a}:{tcp}" for a, tcp, _ in listeners.targets} & set(refused), refused  # WebRTC's TURN over TCP ...
    assert f"127.0.0.1:{server.server_port}" not in refused  # ... was refused at the forwarder, the allowed origin not


def test_without_a_namespace_the_forwarder_and_flags_alone_still_let_nothing_out(tmp_path, monkeypatch):
    """The fallback of a host that cannot make a namespace (nor switch users): said in the settings, and the same
    hostile pages still reach nothing (WebRTC's UDP is off by the flags, TCP goes to the forwarder)."""
    from screenmill.annotators.dom.browser import BrowserConfig, BrowserHost

    from tests.annotators.dom.conftest import browser_missing

    if browser_missing():
        pytest.skip(browser_missing())
    monkeypatch.setattr(netns, "why_no_namespace", lambda: "not allowed here")
    monkeypatch.setattr(netns, "unprivileged", lambda: [])
    h = BrowserHost(BrowserConfig(timeout_s=8, max_dom_nodes=500, recycle_every=3)).start()
    try:
        assert (
            h.fence_settings["network_namespace"] is False and "not allowed here" in h.fence_settings["fallbacks"][0]
        )
        test_hostile_pages_reach_no_listener_resolver_or_canary_and_normal_pages_still_render(h, tmp_path)
    finally:
        h.close()


def test_chromium_runs_unprivileged_sandboxed_in_a_namespace_that_goes_with_the_host(tmp_path):
    """On a host that allows it: every Chromium process in the namespace runs as ``nobody`` with the sandbox on, the
    namespace is not the host's; after close no process is left in it (nor the holder)."""
    from screenmill.annotators.dom.browser import BrowserConfig, BrowserHost

    from tests.annotators.dom.conftest import browser_missing

    if browser_missing():
        pytest.skip(browser_missing())
    if netns.why_no_namespace():
        pytest.skip(f"no network namespace here: {netns.why_no_namespace()}")
    h = BrowserHost(BrowserConfig(timeout_s=5)).start()
    try:
        (tmp_path / "p.html").write_text(NORMAL, encoding="utf-8")
        h.render((tmp_path / "p.html").as_uri(), str(tmp_path), Viewport(400, 300), "light", 1)
        assert h.fence_settings == {"network_namespace": True, "user": "nobody", "fallbacks": [], "sandbox": True}
        ns = os.stat(h._jail._ns.path).st_ino
        assert ns != os.stat("/proc/self/ns/net").st_ino
        inside = _processes_in(ns)
        users = {_uid(p) for p in inside}
        assert len(inside) >= 3 and users == {0, netns.NOBODY}  # the holder (root) and Chromium's processes
        assert [p for p in inside if _uid(p) == 0] == [h._jail._ns._holder.pid]
    finally:
        h.close()
    assert _processes_in(ns) == []


def _processes_in(ns_inode: int) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}/ns/net").st_ino == ns_inode:
                found.append(int(pid))
        except OSError:
            pass
    return found


def _uid(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="utf-8") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("Uid:"))
