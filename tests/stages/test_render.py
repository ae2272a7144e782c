"""`screenmill run --pages/--urls`: rendered screenshots through the ordinary spine, DOM labels, dead letters,
incremental reruns, and de-duplication of identical renders (real Chromium, real Beam, real Parquet)."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import pytest
from screenmill.pipelines.run import run
from screenmill.schemas.tables import read_shards

from tests.annotators.dom.conftest import browser_missing

pytestmark = pytest.mark.slow  # each test renders pages in a real headless Chromium through a whole run

PAGE = """<!doctype html><html><head><meta name="viewport" content="width=device-width">
<style>body{{font:16px sans-serif;background:#fff}}
@media (prefers-color-scheme: dark){{body{{background:#111;color:#eee}}}}</style></head>
<body><h1>{title}</h1><nav><a href="other.html">Docs</a> <a href="#">Blog</a></nav>
<button aria-label="Close"><svg width="16" height="16"><path d="M2 2L14 14M14 2L2 14" stroke="black"/></svg></button>
<ul><li>One <button>Edit</button></li><li>Two <button>Edit</button></li></ul>
<label>City <input name="city" placeholder="Lyon"></label></body></html>"""


@pytest.fixture(autouse=True)
def _browser():
    why = browser_missing()
    if why:
        pytest.skip(why)


def _site(root: Path) -> Path:
    site = root / "site"
    (site / "css").mkdir(parents=True)
    (site / "index.html").write_text(PAGE.format(title="Welcome"), encoding="utf-8")
    (site / "about.htm").write_text(PAGE.format(title="About us"), encoding="utf-8")
    (site / "css" / "x.css").write_text("body{}", encoding="utf-8")  # an asset, not a page
    (site / "loop.html").write_text("<p>x</p><script>setTimeout(() => { while (true) {} }, 0)</script>", "utf-8")
    (site / "blank.html").write_text("<html><body></body></html>", encoding="utf-8")
    # a texinfo anchor's page: it goes on at once to the node that holds the anchor
    moved = '<meta http-equiv="Refresh" content="0; url=index.html#top"><p>Moved</p>'
    (site / "moved.html").write_text(moved, encoding="utf-8")
    return site


def _args(out: Path, *extra: str) -> list[str]:
    return ["--output", str(out), "--annotator", "none", "--dt", "2026-11-25", "--quiet", "--render-timeout", "4",
            *extra]  # fmt: skip


def test_pages_render_into_screenshots_with_dom_labels_and_dead_letters(tmp_path):
    site, out = _site(tmp_path), tmp_path / "out"
    m = run(_args(out, "--pages", str(site), "--viewports", "640x480,390x844@2m", "--color-schemes", "light,dark"))

    shots = read_shards(str(out), "screenshots").to_pylist()
    # 2 good pages x 2 viewports x 2 schemes, one screen each
    assert len(shots) == 8 and m["counts"]["render"]["screens"] == 8
    for s in shots:
        data = Path(s["source_uri"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == s["screenshot_id"]
        assert Path(s["source_uri"]).parent == out / "images"
        page_file = Path(s["page_uri"].removeprefix("file://"))
        assert s["page_sha256"] == hashlib.sha256(page_file.read_bytes()).hexdigest()
        r = s["render"]
        assert (s["width"], s["height"]) == (r["viewport_width"] * r["device_scale_factor"],
                                             r["viewport_height"] * r["device_scale_factor"])  # fmt: skip
    assert Counter((s["render"]["viewport_width"], s["render"]["color_scheme"]) for s in shots) == {
        (640, "light"): 2, (640, "dark"): 2, (390, "light"): 2, (390, "dark"): 2}  # fmt: skip

    labels = read_shards(str(out), "grounding").to_pylist()
    assert {r["annotator"] for r in labels} == {"dom"} and {r["confidence"] for r in labels} == {1.0}
    assert len({r["label_id"] for r in labels}) == len(labels)
    for s in shots:
        mine = {r["instruction"] for r in labels if r["screenshot_id"] == s["screenshot_id"]}
        assert {'click the "Close" button', 'click the "Docs" link', 'click the second "Edit" button',
                'click the "City" field', 'click the field with placeholder "Lyon"'} <= mine  # fmt: skip
        assert 'click "Edit"' not in mine  # ambiguous: said with a position only

    assert {s["render"]["blocked_requests"] for s in shots} == {0}  # nothing to block on these pages
    dead = read_shards(str(out), "_dead_letter/render").to_pylist()
    reasons = Counter((Path(d["payload_ref"]).name, d["reason"]) for d in dead)
    assert reasons == {("loop.html", "render_timeout"): 4, ("blank.html", "blank_page"): 4,
                       ("moved.html", "page_redirects"): 4}  # fmt: skip
    assert all("index.html" in d["error"] for d in dead if d["reason"] == "page_redirects")


def test_a_rerun_renders_only_new_or_changed_pages(tmp_path):
    site, out = _site(tmp_path), tmp_path / "out"
    (site / "loop.html").unlink()
    first = run(_args(out, "--pages", str(site)))
    again = run(_args(out, "--pages", str(site)))
    assert first["counts"]["render"]["screens"] == 2
    assert again["counts"]["render"].get("screens", 0) == 0
    assert again["counts"]["render"]["skipped_done"] == 4  # the 2 pages + the blank and the moved one (for good)
    (site / "about.htm").write_text(PAGE.format(title="About us, changed"), encoding="utf-8")
    third = run(_args(out, "--pages", str(site)))
    assert third["counts"]["render"]["screens"] == 1 and third["counts"]["render"]["skipped_done"] == 3
    shots = read_shards(str(out), "screenshots").to_pylist()
    assert len(shots) == 3 and len({s["screenshot_id"] for s in shots}) == 3
    labels = read_shards(str(out), "grounding").to_pylist()
    assert len({r["label_id"] for r in labels}) == len(labels)
    # other settings are other work: a new viewport renders every page again
    fourth = run(_args(out, "--pages", str(site), "--viewports", "800x600"))
    assert fourth["counts"]["render"]["screens"] == 2


def test_identical_renders_keep_one_screenshot_and_one_set_of_labels(tmp_path):
    site, out = tmp_path / "site", tmp_path / "out"
    site.mkdir()
    for name in ("a.html", "b.html"):
        (site / name).write_text(PAGE.format(title="Same"), encoding="utf-8")
    urls = tmp_path / "urls.txt"
    urls.write_text(f"# pages by URL\n{(site / 'a.html').as_uri()}\nftp://nope/x.html\n", encoding="utf-8")
    m = run(_args(out, "--pages", str(site), "--urls", str(urls)))
    shots = read_shards(str(out), "screenshots").to_pylist()
    assert len(shots) == 1 and shots[0]["page_uri"].endswith("/a.html")
    dups = read_shards(str(out), "_dead_letter/ingest").to_pylist()
    assert [d["reason"] for d in dups] == ["duplicate"]  # b.html; a.html named twice is rendered once
    labels = read_shards(str(out), "grounding").to_pylist()
    assert labels and len({r["label_id"] for r in labels}) == len(labels)
    bad = read_shards(str(out), "_dead_letter/render").to_pylist()
    assert [(b["reason"], b["input_id"]) for b in bad] == [("bad_url", f"{urls}:3")]
    assert m["counts"]["render"]["dropped_bad_url"] == 1


def test_eval_scores_ocr_labels_against_the_dom_labels_of_the_same_screenshots(tmp_path, capsys):
    from screenmill.pipelines.evaluate import main as eval_main

    site, out = tmp_path / "site", tmp_path / "out"
    site.mkdir()
    (site / "index.html").write_text(PAGE.format(title="Quarterly report"), encoding="utf-8")
    args = _args(out, "--pages", str(site))
    args[args.index("none")] = "ocr"
    run(args)
    capsys.readouterr()
    assert eval_main(["--truth-from-dom", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "role" in printed and "heading" in printed and "button" in printed
    report = next((out / "_eval").glob("*.json")).read_text()
    import json

    body = json.loads(report)
    assert body["truth"] > 0 and body["found"] > 0  # OCR reads the heading and the links
    assert body["by_element"]["heading"]["found"] == 1
    assert body["by_element"]["button"]["truth"] >= 2  # two Edit
    assert body["not_text"]["by_element"]["button"] == 1  # Close (icon only): out of OCR's reach, reported apart
    assert "not text (out of OCR's reach" in printed


def test_eval_from_dom_without_dom_labels_says_so(tmp_path, capsys):
    from screenmill.pipelines.evaluate import main as eval_main

    (tmp_path / "grounding").mkdir()
    assert eval_main(["--truth-from-dom", str(tmp_path)]) == 2
    assert "no DOM labels" in capsys.readouterr().out


def test_hostile_pages_in_a_run_reach_no_listener_and_the_normal_pages_are_labelled(tmp_path):
    """``run --pages DIR --urls FILE`` with a hostile page among normal ones, as ``file://`` and from an allowed
    loopback server (the URLs' own origin): no connection or datagram reaches the host's listeners, the canary file
    is in no label, the normal pages are labelled as ever (the fence's own tests: annotators/dom/test_jail.py)."""
    import functools
    import http.server
    import threading

    from screenmill.annotators import netns

    from tests.annotators.dom.hostile import CANARY_TEXT, Listeners, host_addresses, write_hostile

    listeners = Listeners(host_addresses())
    site, web, out = tmp_path / "site", tmp_path / "web", tmp_path / "out"
    (tmp_path / "canary.txt").write_text(CANARY_TEXT, encoding="utf-8")
    for folder, title in ((site, "Welcome"), (web, "Served")):
        folder.mkdir()
        (folder / "index.html").write_text(PAGE.format(title=title), encoding="utf-8")
        write_hostile(folder, listeners.targets, tmp_path / "canary.txt")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(web))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.RequestHandlerClass.log_message = lambda *a: None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    urls = tmp_path / "urls.txt"
    urls.write_text(f"{base}/hostile.html\n{base}/index.html\n", encoding="utf-8")
    try:
        m = run(_args(out, "--pages", str(site), "--urls", str(urls), "--render-timeout", "8"))
        seen = listeners.settle()
    finally:
        listeners.close()
        server.shutdown()
    assert seen == [], seen
    shots = read_shards(str(out), "screenshots").to_pylist()
    labels = read_shards(str(out), "grounding").to_pylist()
    for uri in ((site / "index.html").as_uri(), f"{base}/index.html"):
        ids = {s["screenshot_id"] for s in shots if s["page_uri"] == uri}
        assert 'click the "Docs" link' in {r["instruction"] for r in labels if r["screenshot_id"] in ids}, uri
    assert not [r for r in labels if CANARY_TEXT in r["instruction"]]
    if netns.why_no_namespace() is None:
        assert not m["counts"]["render"].get("browsers_without_namespace")
