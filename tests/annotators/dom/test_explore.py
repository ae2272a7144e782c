"""Exploration: the policy (pure), and episodes on self-made sites in a real Chromium (replay, no-ops, the fence,
determinism), from files and from a local HTTP server."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import http.server
import io
import json
import random
import threading

import pytest
from PIL import Image
from screenmill.annotators.dom.browser import BrowserConfig, BrowserHost
from screenmill.annotators.dom.explore import (
    Action,
    ExploreSettings,
    Step,
    action_for,
    action_from_recorded,
    choose,
    element_key,
    explore_page,
    instruction,
    plausible_text,
    recorded_instruction,
)
from screenmill.annotators.dom.page import Viewport
from screenmill.annotators.recorded import ui_actions

from tests.annotators.dom.conftest import browser_missing
from tests.annotators.dom.sites import make_shapes, make_site

VIEW = Viewport(800, 600)
K = 14  # enough for every control of the shop, so the remote link (the last tier) is reached


def _el(role, name, **kw):
    return {"kind": "control", "role": role, "name": name, "box": kw.pop("box", [0, 0, 10, 10]), "point": [5, 5], **kw}


@pytest.mark.parametrize(
    "field, want",
    [
        ({"input_type": "email", "name": "Contact"}, "ada.lovelace@example.com"),
        ({"input_type": "text", "field": "city", "label": "Ville"}, "Lyon"),
        ({"input_type": "search", "name": "Search products"}, "lamp"),
        ({"input_type": "number", "name": "Guests"}, "3"),
        ({"input_type": "text", "field": "q"}, "lamp"),
        ({"input_type": "text", "name": "Page"}, "hello"),  # "page" holds "age": short keywords match words only
        ({"input_type": "textarea", "name": "Your message"}, "Hello, a question about my order."),
    ],
)
def test_plausible_text_by_type_and_name(field, want):
    assert plausible_text(field) == want


def test_choose_prefers_unvisited_high_value_then_scrolls_then_ends():
    allows = lambda url: url.startswith("file:///site/")  # noqa: E731
    here = "file:///site/index.html"
    els = [
        _el("link", "Partner", href="http://example.invalid/"),
        _el("checkbox", "Remember me", input_type="checkbox"),
        _el("link", "Top", href=here + "#top"),
        _el("link", "Pricing", href="file:///site/pricing.html", box=[0, 50, 10, 60]),
        _el("button", "Send", box=[0, 20, 10, 30]),
        _el("textbox", "Birthday", input_type="date"),  # not a candidate
        {"kind": "text", "role": "heading", "name": "Shop", "box": [0, 0, 9, 9], "point": [1, 1]},
    ]
    picked, visited, rng = [], set(), random.Random(3)
    while (c := choose(els, visited, rng, False, allows, here)) is not None:
        picked.append(c["name"])
        visited.add(element_key(c))
    assert sorted(picked[:2]) == ["Pricing", "Send"] and sorted(picked[2:4]) == ["Remember me", "Top"]
    assert picked[4:] == ["Partner"]
    assert choose(els, visited, rng, True, allows, here) == "scroll"
    assert choose(els, visited, rng, False, allows, here, can_back=True) == "back"  # to the page it came from
    again, rng2, seen = [], random.Random(3), set()
    while (c := choose(els, seen, rng2, False, allows, here)) is not None:
        again.append(c["name"])
        seen.add(element_key(c))
    assert again == picked  # seeded: the same order every time


def test_actions_instructions_and_the_recorded_form():
    city = _el("textbox", "City", input_type="text", field="city")
    a = action_for(city)
    assert (a.kind, a.text) == ("type", "Lyon")
    assert instruction(a) == 'type "Lyon" into the "City" field'
    assert instruction(action_for(_el("link", "Pricing", href="x"))) == 'click the "Pricing" link'
    assert instruction(Action("select", (1, 2), "France", "fr", "combobox", "Country")) == (
        'choose "France" in the "Country" drop-down'
    )
    assert instruction(Action("scroll")) == "scroll down"
    step = Step(Action("click", (10.5, 20.0), role="button", name="Go"), True, False, None, "file:///x")
    rec = step.recorded(2.0)
    assert rec == {"action": "click_element", "type": "click", "x": 21.0, "y": 40.0, "role": "button", "name": "Go",
                   "noop": True, "blocked": False}  # fmt: skip
    assert action_from_recorded(rec, 2.0) == step.action
    [parsed] = ui_actions(json.dumps(rec))  # explain-step reads it as a generic recorded action
    assert parsed.action_type == "click_element" and parsed.point == (21.0, 40.0)
    key = Step(Action("key", text="Escape"), False, False, None, "app:x")  # the app explorer's close key
    rec = key.recorded(1.0)
    assert rec == {"action": "press_key", "type": "key", "key": "Escape", "noop": False, "blocked": False}
    assert action_from_recorded(rec, 1.0) == key.action and instruction(key.action) == "press Escape"
    assert recorded_instruction(rec) == "press Escape"
    [parsed] = ui_actions(json.dumps(rec))
    assert (parsed.action_type, parsed.args["key"]) == ("press_key", "Escape")


@pytest.fixture(scope="module")
def explorer():
    why = browser_missing()
    if why:
        pytest.skip(why)
    h = BrowserHost(BrowserConfig(timeout_s=5)).start()
    yield h
    h.close()


def _hashes(ep):
    return [hashlib.sha256(f.png).hexdigest() for f in ep.frames]


def _summary(ep):
    return [(instruction(s.action), s.noop, s.blocked) for s in ep.steps], _hashes(ep)


@pytest.fixture(scope="module")
def shop(tmp_path_factory, explorer):
    site = make_site(tmp_path_factory.mktemp("shop"), quiet=True)
    ep = explore_page(explorer, (site / "index.html").as_uri(), str(site), VIEW, "light", ExploreSettings(K, 0))
    return site, ep


def test_an_episode_walks_the_site_and_the_fence_keeps_it_on_the_machine(shop):
    site, ep = shop
    said = [instruction(s.action) for s in ep.steps]
    assert 8 <= len(ep.steps) <= K and len(ep.frames) == len(ep.steps) + 1
    assert {"click", "type", "select"} <= {s.action.kind for s in ep.steps}
    assert 'type "Lyon" into the "City" field' in said
    assert 'type "ada.lovelace@example.com" into the "Email" field' in said
    assert 'click the "Pricing" link' in said and 'click the "Menu" button' in said
    assert any(s.url.endswith("/pricing.html") for s in ep.steps)  # a link to another page was followed
    texts = {e["name"] for f in ep.frames for e in f.elements}
    assert "Height 40 cm, 3 W." in texts  # the Specs tab opened
    assert "Settings" in texts  # the menu opened (its item is only visible then)
    assert any(t.startswith(("Please give", "Thanks, we will write")) for t in texts)  # the form validated
    blocked = [s for s in ep.steps if s.blocked]
    assert [s.blocked_url for s in blocked] == ["http://example.invalid/"]
    assert blocked[0].action.name == "Partner site" and blocked[0].url.startswith("file://")  # and stayed
    assert ep.blocked == ["http://example.invalid/"]  # the request was aborted in the browser: nothing left


def test_replaying_the_recorded_actions_in_a_fresh_browser_gives_the_same_frames(shop):
    site, ep = shop
    recorded = [s.recorded(VIEW.scale) for s in ep.steps]
    fresh = BrowserHost(BrowserConfig(timeout_s=5)).start()
    try:
        again = explore_page(
            fresh, (site / "index.html").as_uri(), str(site), VIEW, "light", ExploreSettings(K), replay=recorded
        )
    finally:
        fresh.close()
    assert _hashes(again) == _hashes(ep)
    assert [s.recorded(VIEW.scale) for s in again.steps] == recorded


def test_the_same_seed_gives_the_same_episode_and_another_seed_another(shop, explorer):
    site, ep = shop
    uri = (site / "index.html").as_uri()
    assert _summary(explore_page(explorer, uri, str(site), VIEW, "light", ExploreSettings(K, 0))) == _summary(ep)
    other = explore_page(explorer, uri, str(site), VIEW, "light", ExploreSettings(4, 1))
    assert _summary(other)[0] != _summary(ep)[0][:4]


def test_noops_are_marked_and_the_page_scrolls_when_nothing_new_is_left(shop, explorer):
    site, _ = shop
    uri = (site / "quiet.html").as_uri()
    ep = explore_page(explorer, uri, str(site), Viewport(640, 480), "light", ExploreSettings(8, 0))
    got = [(instruction(s.action), s.noop) for s in ep.steps]
    # nothing new after "Bottom" and no further to scroll: the episode ends before 8 steps
    assert got == [('click the "Nothing" button', True), ("scroll down", False), ("scroll down", False),
                   ('click the "Bottom" button', True)]  # fmt: skip
    assert _hashes(ep)[0] == _hashes(ep)[1] and _hashes(ep)[1] != _hashes(ep)[2]


def test_a_page_that_changes_by_itself_holds_still_on_the_virtual_clock(shop, explorer):
    site, _ = shop
    uri = (site / "live.html").as_uri()
    one = explore_page(explorer, uri, str(site), VIEW, "light", ExploreSettings(3, 0))
    recorded = [s.recorded(VIEW.scale) for s in one.steps]
    fresh = BrowserHost(BrowserConfig(timeout_s=5)).start()
    try:
        again = explore_page(fresh, uri, str(site), VIEW, "light", ExploreSettings(3), replay=recorded)
    finally:
        fresh.close()
    assert _hashes(again) == _hashes(one)  # the clock, the random banner and the carousel showed the same
    assert _hashes(explore_page(explorer, uri, str(site), VIEW, "light", ExploreSettings(3, 0))) == _hashes(one)
    save = next(i for i, s in enumerate(one.steps) if s.action.name == "Save")
    assert not one.steps[save].noop  # the message of the timeout after the click is in the click's frame
    assert "Saved" in {e["name"] for e in one.frames[save + 1].elements}
    texts = [e["name"] for e in one.frames[0].elements]
    assert any(t.startswith("2023-11-14T22:13:21.000Z") for t in texts), texts  # the clock starts where it is set


def test_a_site_served_over_http_on_loopback(tmp_path, explorer):
    site = make_site(tmp_path)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_port}/"
        ep = explore_page(explorer, base + "index.html", None, VIEW, "light", ExploreSettings(K, 0))
    finally:
        server.shutdown()
    assert base + "pricing.html" in {s.url for s in ep.steps}
    assert [s.blocked_url for s in ep.steps if s.blocked] == ["http://example.invalid/"]
    assert ep.blocked == ["http://example.invalid/"]


@pytest.fixture(scope="module")
def shapes(tmp_path_factory, explorer):
    """The page of real pages' shapes (:func:`make_shapes`) explored twice with the same seed, and replayed."""
    site = make_shapes(tmp_path_factory.mktemp("shapes"))
    uri = (site / "index.html").as_uri()
    one, two = (explore_page(explorer, uri, str(site), VIEW, "light", ExploreSettings(8, 0)) for _ in range(2))
    recorded = [s.recorded(VIEW.scale) for s in one.steps]
    again = explore_page(explorer, uri, str(site), VIEW, "light", ExploreSettings(8), replay=recorded)
    return site, one, two, again


def test_real_page_shapes_explore_the_same_twice_and_replay_the_same(shapes):
    _, one, two, again = shapes
    said = [instruction(s.action) for s in one.steps]
    assert {'click the "Details" tab', 'click the "Next month" button', 'click the "Show photo" button'} <= set(said)
    assert {'click the "Partner" link', 'click the "Old page" link'} <= set(said)
    assert _summary(two) == _summary(one) and len(set(_hashes(one))) == len(one.frames)  # every frame a new screen
    assert [s.recorded(VIEW.scale) for s in two.steps] == [s.recorded(VIEW.scale) for s in one.steps]
    assert _hashes(again) == _hashes(one)
    texts = {e["name"] for e in one.frames[0].elements}
    assert "Today is Tuesday, November 14, 2023" in texts and "November 2023" in texts  # today is the clock's
    shown = {e["name"] for f in one.frames for e in f.elements}
    assert "Weight 2 kg" in shown and "December 2023" in shown  # the tab opened, the calendar turned


def test_a_navigation_that_cannot_be_followed_is_held_and_the_page_keeps_its_state(shapes):
    site, one, _, _ = shapes
    held = {s.action.name: s for s in one.steps if s.blocked}
    assert set(held) == {"Partner", "Old page"}
    assert (held["Partner"].blocked_url, held["Partner"].blocked_reason) == ("http://blocked.invalid/page", "fence")
    assert (held["Old page"].blocked_url, held["Old page"].blocked_reason) == (
        (site / "missing.html").as_uri(),
        "missing",
    )
    assert held["Partner"].recorded(1.0)["blocked_reason"] == "fence"
    assert one.blocked == ["http://blocked.invalid/page"]  # the fence counts what it blocked; a missing page is not
    assert {s.url for s in one.steps} == {(site / "index.html").as_uri()}  # never an error page, never left

    # the page stays as it was: what the steps before did (the month turned, the text typed) is still there; only
    # the clock moved on
    def still(frame):
        return {(e["name"], e["text"], tuple(e["box"])) for e in frame.elements if not e["name"].startswith("Now:")}

    for i, step in enumerate(one.steps):
        if step.blocked:
            assert still(one.frames[i + 1]) == still(one.frames[i])


def test_a_frame_waits_for_its_fonts_and_images(shapes):
    site, one, _, _ = shapes
    show = next(i for i, s in enumerate(one.steps) if s.action.name == "Show photo")
    frame = one.frames[show + 1]
    image = Image.open(io.BytesIO(frame.png)).convert("RGB")
    (photo,) = [e for e in frame.elements if e["name"] == "Photo"]
    x0, y0, x1, y1 = (round(v) for v in photo["box"])
    colours = {image.getpixel((x, y)) for x in range(x0 + 2, x1 - 2, 7) for y in range(y0 + 2, y1 - 2, 5)}
    assert len(colours) > 10  # the photo's bands are painted, not an empty box


CLOCKED = """<!doctype html><html><body>
<p id="now"></p>
<button id="plain">Plain</button>
<a href="http://blocked.invalid/direct">Away</a>
<script>
const show = () => { document.getElementById('now').textContent = 'T+' + (Date.now() / 1000 - 1700000000); };
show(); setInterval(show, 250);
</script></body></html>"""


@pytest.mark.parametrize("late", [False, True], ids=["on-time", "late"])
def test_a_held_navigation_moves_the_clock_as_far_as_any_step(tmp_path, explorer, monkeypatch, late):
    """A link the fence holds moves the virtual clock as far as a click that navigates nowhere, also when its request
    shows after the first tick and is held later still (``late``: as on a loaded machine, where a replay of it showed
    the clock a second on and hashed differently)."""
    from screenmill.annotators.dom import explore as ex

    if late:
        request, hold = ex._NavWatch._request, ex._NavWatch.hold

        def later(method, delay_s):
            return lambda self, *a: asyncio.get_running_loop().call_later(delay_s, method, self, *a)

        monkeypatch.setattr(ex._NavWatch, "_request", later(request, ex.QUIET_S * 0.3))
        monkeypatch.setattr(ex._NavWatch, "hold", later(hold, ex.QUIET_S * 3))
    (tmp_path / "index.html").write_text(CLOCKED, encoding="utf-8")
    uri = (tmp_path / "index.html").as_uri()
    ep = explore_page(explorer, uri, str(tmp_path), VIEW, "light", ExploreSettings(2, 0))
    assert [s.blocked for s in sorted(ep.steps, key=lambda s: s.action.name)] == [True, False]
    times = [float(next(e["name"] for e in f.elements if e["name"].startswith("T+"))[2:]) for f in ep.frames]
    moved = {s.action.name: b - a for s, a, b in zip(ep.steps, times, times[1:], strict=False)}
    assert moved["Away"] == moved["Plain"] > 0, moved
