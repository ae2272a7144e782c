"""The fenced browser: what it renders, what it blocks, and how it survives pages that misbehave."""

from __future__ import annotations

import functools
import http.server
import io
import threading
from pathlib import Path

import pytest
from PIL import Image
from screenmill.annotators.dom.browser import BrowserConfig
from screenmill.annotators.dom.page import RenderError, Viewport


def page(tmp_path, name, body, head=""):
    path = tmp_path / name
    path.write_text(f"<!doctype html><html><head>{head}</head><body>{body}</body></html>", encoding="utf-8")
    return path.as_uri()


def test_allow_origin_must_be_an_origin():
    with pytest.raises(ValueError, match="not an origin"):
        BrowserConfig(allow_origins=("https://example.com/path",))


def test_fence_blocks_outside_files_and_hosts_and_counts_them(host, tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    (tmp_path / "secret.png").write_bytes(b"not for pages")
    uri = page(
        root,
        "p.html",
        '<button>Go</button><img src="../secret.png" alt="s"><img src="https://example.invalid/a.png" alt="r">'
        "<script>fetch('http://example.invalid/x.json').catch(() => {});</script>",
    )
    got = host.render(uri, str(root), Viewport(640, 480), "light", 1)
    blocked = sorted(got.blocked)
    assert any(u.endswith("/secret.png") for u in blocked)
    assert "https://example.invalid/a.png" in blocked and "http://example.invalid/x.json" in blocked
    assert [e["name"] for e in got.screens[0].elements if e["kind"] == "control"] == ["Go"]


def test_a_kept_tab_fences_each_root_it_goes_to(tmp_path):
    """Pages of two roots in one tab: under a root without escaping symlinks its files load without the fence being
    asked, a file outside is still blocked; under a root with a symlink leaving it, that symlink is blocked and
    counted (and one that stays inside loads), then the first root again."""
    from screenmill.annotators.dom.browser import BrowserHost

    from tests.annotators.dom.conftest import browser_missing

    if browser_missing():
        pytest.skip(browser_missing())
    Image.new("RGB", (8, 8), "red").save(tmp_path / "secret.png")
    plain, linked = tmp_path / "plain", tmp_path / "linked"
    for root in (plain, linked):
        root.mkdir()
        Image.new("RGB", (8, 8), "blue").save(root / "pic.png")
    (linked / "out.png").symlink_to(tmp_path / "secret.png")
    (linked / "in.png").symlink_to(linked / "pic.png")
    shows = "<p id=o>none</p><script>const seen = []; function ok(n) { seen.push(n);"
    shows += " document.getElementById('o').textContent = 'loaded ' + seen.sort().join(' '); }</script>"
    first = page(plain, "p.html", shows + "<img src=pic.png onload=ok('pic')><img src=../secret.png onload=ok('s')>")
    second = page(linked, "p.html", shows + "<img src=in.png onload=ok('in')><img src=out.png onload=ok('out')>")
    host = BrowserHost(BrowserConfig(timeout_s=5, recycle_every=100)).start()
    try:
        for uri, root, loaded, blocked in (
            (first, plain, "loaded pic", ["secret.png"]),
            (second, linked, "loaded in", ["out.png"]),
            (first, plain, "loaded pic", ["secret.png"]),
        ):
            got = host.render(uri, str(root), Viewport(400, 300), "light", 1)
            assert [e["text"] for e in got.screens[0].elements if e.get("text", "").startswith("loaded")] == [loaded]
            assert [u.rsplit("/", 1)[1] for u in got.blocked] == blocked
        assert host.contexts == 1  # one tab, its request handler moved from root to root
    finally:
        host.close()


def test_allowed_origin_on_loopback_is_reached(tmp_path):
    from screenmill.annotators.dom.browser import BrowserHost

    from tests.annotators.dom.conftest import browser_missing

    if browser_missing():
        pytest.skip(browser_missing())
    (tmp_path / "index.html").write_text("<button>Served</button><img src='/x.png' alt='x'>", encoding="utf-8")
    handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path))  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host = BrowserHost(BrowserConfig(timeout_s=5)).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/index.html"
        got = host.render(url, None, Viewport(400, 300), "light", 1)
        assert [e["name"] for e in got.screens[0].elements if e["kind"] == "control"] == ["Served"]
        assert got.blocked == []  # its own origin is allowed (the missing /x.png is a 404, not a block)
    finally:
        host.close()
        server.shutdown()


def test_a_page_that_loops_forever_times_out_and_the_browser_goes_on(host, tmp_path):
    loop = page(tmp_path, "loop.html", "<p>hi</p><script>setTimeout(() => { while (true) {} }, 0)</script>")
    with pytest.raises(RenderError) as e:
        host.render(loop, str(tmp_path), Viewport(400, 300), "light", 1)
    assert e.value.reason == "render_timeout"
    ok = page(tmp_path, "ok.html", "<button>Still here</button>")
    assert (
        host.render(ok, str(tmp_path), Viewport(400, 300), "light", 1).screens[0].elements[0]["name"] == "Still here"
    )


def test_dialogs_popups_and_downloads_do_not_stop_a_page(host, tmp_path):
    uri = page(
        tmp_path,
        "rude.html",
        "<button>Main</button><a download href='data:text/plain,x' id=d>Get</a>"
        "<script>alert('hi'); confirm('sure?'); window.open('about:blank'); document.getElementById('d').click();"
        "</script>",
    )
    got = host.render(uri, str(tmp_path), Viewport(400, 300), "light", 1)
    assert "Main" in [e["name"] for e in got.screens[0].elements]


def test_too_many_elements_and_blank_pages_are_refused(host, tmp_path):
    big = page(tmp_path, "big.html", "<div>x</div>" * 600)
    with pytest.raises(RenderError) as e:
        host.render(big, str(tmp_path), Viewport(400, 300), "light", 1)
    assert e.value.reason == "page_too_large"
    blank = page(tmp_path, "blank.html", "")
    with pytest.raises(RenderError) as e:
        host.render(blank, str(tmp_path), Viewport(400, 300), "light", 1)
    assert e.value.reason == "blank_page"


def test_a_page_that_goes_on_to_another_is_refused_not_a_crash(host, tmp_path):
    page(tmp_path, "target.html", "<button>Target</button>")
    meta = page(tmp_path, "meta.html", "<p>Moved</p>", '<meta http-equiv="Refresh" content="0; url=target.html">')
    gone = page(tmp_path, "gone.html", "<p>Moved</p>", '<meta http-equiv="Refresh" content="0; url=nowhere.html">')
    script = page(tmp_path, "script.html", "<p>Moved</p><script>location.href = 'target.html'</script>")
    for uri, where in ((meta, "target.html"), (gone, "nowhere.html"), (script, "target.html")):
        with pytest.raises(RenderError) as e:
            host.render(uri, str(tmp_path), Viewport(400, 300), "light", 1)
        assert e.value.reason == "page_redirects" and where in e.value.message, uri
    # a jump within the page is no redirect, and the browser goes on with the next page
    anchor = page(tmp_path, "anchor.html", "<button id=b>Here</button><script>location.hash = 'b'</script>")
    assert host.render(anchor, str(tmp_path), Viewport(400, 300), "light", 1).screens[0].elements[0]["name"] == "Here"


def test_a_page_that_reloads_itself_without_end_fails_as_render_failed_and_the_next_page_renders(host, tmp_path):
    """A refresh to the page itself goes nowhere else, so it is no redirect; but each reload destroys what the reads
    were reading: the read fails, the page is refused as ``render_failed`` with the browser's reason, and the tab
    renders the next page."""
    again = page(tmp_path, "again.html", "<p>Again</p>", '<meta http-equiv="Refresh" content="0">')
    with pytest.raises(RenderError) as e:
        host.render(again, str(tmp_path), Viewport(400, 300), "light", 1)
    assert e.value.reason == "render_failed" and "failed while rendered" in e.value.message, e.value.message
    fine = page(tmp_path, "fine.html", "<button>Fine</button>")
    assert host.render(fine, str(tmp_path), Viewport(400, 300), "light", 1).screens[0].elements[0]["name"] == "Fine"


def test_scale_mobile_dark_and_screens(host, tmp_path):
    css = (
        '<meta name="viewport" content="width=device-width">'  # without it a mobile browser zooms out to 980 px
        "<style>body{background:#fff} @media (prefers-color-scheme: dark){body{background:#000;color:#fff}}</style>"
    )
    uri = page(tmp_path, "long.html", "<h1>Top</h1><div style='height:700px'></div><a href='#'>Down here</a>", css)
    light = host.render(uri, str(tmp_path), Viewport(300, 400, 2.0, True), "light", 5)
    dark = host.render(uri, str(tmp_path), Viewport(300, 400, 2.0, True), "dark", 1)
    assert [s.scroll[1] for s in light.screens][:1] == [0] and len(light.screens) >= 2
    assert len({s.scroll for s in light.screens}) == len(light.screens)  # stops where the page ends
    im = Image.open(io.BytesIO(light.screens[0].png))
    assert im.size == (600, 800)
    assert im.convert("RGB").getpixel((2, 2)) == (255, 255, 255)
    assert Image.open(io.BytesIO(dark.screens[0].png)).convert("RGB").getpixel((2, 2)) == (0, 0, 0)
    last = light.screens[-1]
    assert any(e["name"] == "Down here" for e in last.elements)


def test_iframe_content_is_labelled_in_page_coordinates(host, tmp_path):
    page(tmp_path, "child.html", "<button style='margin:0'>Inner</button>", "<style>body{margin:0}</style>")
    uri = page(
        tmp_path,
        "parent.html",
        "<iframe src='child.html' style='position:absolute;left:100px;top:50px;width:200px;height:100px;border:0'>"
        "</iframe>",
        "<style>body{margin:0}</style>",
    )
    got = host.render(uri, str(tmp_path), Viewport(400, 300), "light", 1)
    inner = next(e for e in got.screens[0].elements if e["name"] == "Inner")
    assert 100 <= inner["point"][0] <= 300 and 50 <= inner["point"][1] <= 150
    assert inner["box"][0] >= 100 and inner["box"][1] >= 50


def test_the_browser_is_recycled(host, tmp_path):
    uri = page(tmp_path, "r.html", "<button>R</button>")
    before = host.launches
    for _ in range(4):
        host.render(uri, str(tmp_path), Viewport(200, 200), "light", 1)
    assert host.launches > before


def test_chinese_japanese_and_korean_pages_render_as_text_the_ocr_reads(host, tmp_path):
    """infra/browser/install.sh installs Noto CJK: without it such pages render as empty boxes while their DOM
    labels name the text. The OCR models read Chinese, so what the browser drew is checked by reading it back."""
    import shutil
    import subprocess

    import numpy as np

    if (
        shutil.which("fc-list") is None
        or not subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True).stdout.strip()
    ):
        pytest.skip("no Chinese font (fonts-noto-cjk): run `bash infra/browser/install.sh` as root")
    pytest.importorskip("rapidocr_onnxruntime", reason="the OCR annotator is not installed")
    from screenmill.annotators.ocr import OcrAnnotator

    body = '<p style="font:28px sans-serif;margin:20px">欢迎光临</p><p style="font:28px sans-serif">登录</p>'
    got = host.render(page(tmp_path, "zh.html", body, '<meta charset="utf-8">'), str(tmp_path), Viewport(400, 200),
                      "light", 1)  # fmt: skip
    names = {e["name"] for e in got.screens[0].elements}
    assert "欢迎光临" in names  # the DOM label names the text ...
    image = np.asarray(Image.open(io.BytesIO(got.screens[0].png)).convert("RGB"))
    read = {e.text for e in OcrAnnotator().annotate(image)}
    assert {"欢迎光临", "登录"} <= read, read  # ... and the screenshot shows it


def test_pages_of_one_setting_share_a_tab_that_keeps_nothing_of_the_page_before(tmp_path):
    from screenmill.annotators.dom.browser import BrowserHost

    from tests.annotators.dom.conftest import browser_missing

    if browser_missing():
        pytest.skip(browser_missing())
    writer = page(
        tmp_path,
        "writer.html",
        "<p>Writer</p><script>localStorage.setItem('k', 'local'); sessionStorage.setItem('k', 'session');"
        "window.name = 'named'; document.cookie = 'k=cookie'; history.pushState({}, '', '#moved');</script>",
    )
    reader = page(
        tmp_path,
        "reader.html",
        "<p id=o>x</p><script>document.getElementById('o').textContent = 'seen: ' + [localStorage.getItem('k'),"
        "sessionStorage.getItem('k'), window.name, document.cookie, history.length].join('|');</script>",
    )
    host = BrowserHost(BrowserConfig(timeout_s=5, recycle_every=100)).start()
    try:
        first = host.render(reader, str(tmp_path), Viewport(400, 300), "light", 1)
        host.render(writer, str(tmp_path), Viewport(400, 300), "light", 1)
        again = host.render(reader, str(tmp_path), Viewport(400, 300), "light", 1)
        assert host.contexts == 1  # one tab served the three pages
        seen = [e["name"] for e in again.screens[0].elements if e["name"].startswith("seen")]
        assert seen == [e["name"] for e in first.screens[0].elements if e["name"].startswith("seen")]
        assert again.screens[0].png == first.screens[0].png
        host.render(reader, str(tmp_path), Viewport(400, 300), "dark", 1)
        assert host.contexts == 2  # another setting, another tab
    finally:
        host.close()


def test_an_http_page_is_unloaded_before_its_origin_is_cleared(tmp_path):
    """A file:// page goes straight to the next page of its setting; a page that reached an http(s) origin goes to
    about:blank first, so what its unload handler writes to that origin's storage is cleared before the next page."""
    from screenmill.annotators.dom.browser import BrowserHost

    from tests.annotators.dom.conftest import browser_missing

    if browser_missing():
        pytest.skip(browser_missing())
    (tmp_path / "writer.html").write_text(
        "<p>Writer</p><script>addEventListener('pagehide', () => { localStorage.setItem('k', 'unload');"
        " document.cookie = 'k=unload'; });</script>",
        encoding="utf-8",
    )
    (tmp_path / "reader.html").write_text(
        "<p id=o>x</p><script>document.getElementById('o').textContent = 'seen: ' +"
        " [localStorage.getItem('k'), document.cookie].join('|');</script>",
        encoding="utf-8",
    )
    handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path))  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host = BrowserHost(BrowserConfig(timeout_s=5, recycle_every=100)).start()
    try:
        base = f"http://127.0.0.1:{server.server_port}"
        host.render(f"{base}/writer.html", None, Viewport(400, 300), "light", 1)
        got = host.render(f"{base}/reader.html", None, Viewport(400, 300), "light", 1)
        assert host.contexts == 1  # the same tab
        assert [e["name"] for e in got.screens[0].elements if e["name"].startswith("seen")] == ["seen: |"]
    finally:
        host.close()
        server.shutdown()


PAGES = Path(__file__).resolve().parent / "pages"


def _pixels(png: bytes) -> bytes:
    with Image.open(io.BytesIO(png)) as im:
        return im.convert("RGBA").tobytes()


async def _playwrights_screens(host, page, fence, uri, screens):
    """The page's screens as render takes them, but each PNG from playwright's ``page.screenshot``."""
    from screenmill.annotators.dom.page import SETTLE_JS, capture, open_page

    await open_page(page, uri, timeout_s=host.config.timeout_s, max_dom_nodes=host.config.max_dom_nodes)
    shots = []
    for k in range(screens):
        await page.evaluate(SETTLE_JS, [k, False])
        shots.append(await capture(page, host.config.max_text_chars))
    return shots


@pytest.mark.parametrize("viewport", ["1280x800", "800x600@2", "390x844@3m"])
def test_render_screenshots_are_playwrights_pixels_with_the_same_elements(host, viewport):
    """Render's screenshots (Chromium's own capture on the tab's CDP session at desktop settings, playwright's in
    mobile emulation) show the pixels of playwright's ``page.screenshot`` of the same page, screen by screen, and
    the elements are the same: checked on every test page, light and dark, two screens down."""
    v = Viewport.parse(viewport)
    pages = sorted(p for p in PAGES.glob("*.html") if p.name not in ("loop.html", "iframe_child.html"))
    for path in pages:
        uri = path.as_uri()
        for scheme in ("light", "dark"):
            got = host.render(uri, str(PAGES), v, scheme, 2)
            work = functools.partial(_playwrights_screens, host, uri=uri, screens=len(got.screens))
            want = host.run_page(uri, str(PAGES), v, scheme, work, 10, "render_timeout")
            assert len(want) == len(got.screens) >= 1, path.name
            for w, g in zip(want, got.screens, strict=True):
                assert (g.scroll, g.page_scale, g.elements) == (w.scroll, w.page_scale, w.elements), path.name
                assert _pixels(g.png) == _pixels(w.png), (path.name, scheme, g.scroll)
