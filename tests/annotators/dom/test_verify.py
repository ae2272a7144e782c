"""The independent DOM-label checker can pass and fail without the labeller; the test pages' marks hold.

Labels are built here by hand: the centre of each marked element's first box (its first line when it wraps), read
with plain playwright queries, named by its accessible name or text.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.annotators.dom import verify

PAGES = Path(__file__).resolve().parent / "pages"
SAMPLE_PAGES = Path(__file__).resolve().parents[3] / "samples" / "pages"
# Every marked page (the tricky ones here, the samples of the README's main job), by a name that finds its file.
# loop.html never settles (its script loops forever): the renderer dead-letters it (test_pages.py); asking this
# checker's browser about it can hang the whole run on a slow machine, so it is not among the pages checked here
MARKED = {p.name: p for p in sorted(PAGES.glob("*.html")) if p.name not in ("iframe_child.html", "loop.html")}
MARKED.update({f"samples/{p.name}": p for p in sorted(SAMPLE_PAGES.glob("*.html"))})

NAME_JS = """(e) => {
  const norm = (s) => (s === null || s === undefined ? '' : String(s)).replace(/\\s+/g, ' ').trim();
  const names = [e.computedName, e.innerText, e.value, e.getAttribute('placeholder'), e.getAttribute('alt'),
                 e.getAttribute('title'), e.getAttribute('aria-label')].map(norm);
  return names.find((n) => n) || '';
}"""

# Centre of the element's first non-empty client rect, relative to its border box's corner.
FIRST_BOX_JS = """(e) => {
  const b = e.getBoundingClientRect();
  const r = [...e.getClientRects()].find((r) => r.width > 0 && r.height > 0) || b;
  return [r.left - b.left + r.width / 2, r.top - b.top + r.height / 2];
}"""


@pytest.fixture(scope="module")
def browser():
    pytest.importorskip("playwright.sync_api", reason="needs the playwright package (pip install playwright)")
    if not os.access(verify.CHROMIUM, os.X_OK):
        pytest.skip(f"needs {verify.CHROMIUM} (apt-get install chromium; see infra/browser/install.sh)")
    with verify.open_browser() as b:
        yield b


def uri(name: str) -> str:
    return MARKED.get(name, PAGES / name).as_uri()


def render(viewport=(1280, 800), scale=1.0, mobile=False, scheme="light", scroll=(0, 0)) -> dict:
    return {
        "viewport_width": viewport[0],
        "viewport_height": viewport[1],
        "device_scale_factor": float(scale),
        "mobile": mobile,
        "color_scheme": scheme,
        "scroll_x": scroll[0],
        "scroll_y": scroll[1],
    }


def shot_of(name: str, r: dict) -> dict:
    scale = r["device_scale_factor"]
    width, height = round(r["viewport_width"] * scale), round(r["viewport_height"] * scale)
    return {
        "screenshot_id": f"s-{name}",
        "width": width,
        "height": height,
        "page_uri": uri(name),
        "page_sha256": "",
        "render": r,
    }


def hand_labels(browser, name: str, attr: str, r: dict) -> list[dict]:
    """One label per ``[attr]`` element that has a box: its first box's centre, in screenshot pixels."""
    return hand_labels_for(browser, name, [attr], r)[attr]


def hand_labels_for(browser, name: str, attrs: list[str], r: dict) -> dict[str, list[dict]]:
    """``hand_labels`` for several attribute selectors in one page load."""
    with verify._loaded(browser, uri(name), r) as page:  # the same containment (loop.html, remote.html)
        return {attr: _labels(page, name, attr, r) for attr in attrs}


def _labels(page, name: str, attr: str, r: dict) -> list[dict]:
    scale = r["device_scale_factor"]
    labels = []
    for frame in page.frames:
        for loc in frame.locator(f"[{attr}]").all():
            box = loc.bounding_box()  # main-viewport CSS px, also for elements inside frames; None when not rendered
            if not box or box["width"] == 0 or box["height"] == 0:
                continue
            dx, dy = loc.evaluate(FIRST_BOX_JS)
            text = loc.evaluate(NAME_JS)
            labels.append(
                {
                    "label_id": f"{name}:{attr}:{len(labels)}",
                    "instruction": f"click {text!r}",
                    "element_text": text,
                    "role": "",
                    "x0": box["x"] * scale,
                    "y0": box["y"] * scale,
                    "x1": (box["x"] + box["width"]) * scale,
                    "y1": (box["y"] + box["height"]) * scale,
                    "click_x": (box["x"] + dx) * scale,
                    "click_y": (box["y"] + dy) * scale,
                }
            )
    return labels


def label_named(labels: list[dict], text: str) -> dict:
    (found,) = [lab for lab in labels if lab["element_text"] == text]
    return found


def test_hand_made_labels_pass_on_the_form(browser):
    r = render()
    labels = hand_labels(browser, "form.html", "data-expect", r)
    texts = {lab["element_text"] for lab in labels}
    assert {"Full name", "Email address", "Order number", "Topic", "Urgent", "Send ticket", "Search tickets"} <= texts
    assert verify.check_labels(browser, shot_of("form.html", r), labels) == []
    assert verify.check_expected(browser, uri("form.html"), labels) == []


def test_a_wrong_point_is_a_problem(browser):
    r = render()
    labels = hand_labels(browser, "form.html", "data-expect", r)
    name, topic = label_named(labels, "Full name"), label_named(labels, "Topic")
    wrong = dict(name, label_id="wrong", click_x=topic["click_x"], click_y=topic["click_y"])
    wrong.update(x0=0, y0=0, x1=1280, y1=800)  # inside its (too big) box: only the element hit is wrong
    outside_box = dict(name, label_id="outside-box", click_x=name["x1"] + 5)
    outside_shot = dict(name, label_id="outside-shot", click_x=1400, x1=1500)
    nowhere = dict(name, label_id="blank", click_x=1200, click_y=780, x1=1280, y1=800)
    problems = verify.check_labels(browser, shot_of("form.html", r), [name, wrong, outside_box, outside_shot, nowhere])
    assert len(problems) == 4, problems
    assert [p.split(" ")[1] for p in problems] == ["wrong", "outside-box", "outside-shot", "blank"]
    assert "<select#topic>" in problems[0] and "'Full name'" in problems[0]


def test_check_expected_finds_a_missing_label_and_a_forbidden_one(browser):
    r = render()
    labels = hand_labels(browser, "form.html", "data-expect", r)
    missing = [lab for lab in labels if lab["element_text"] != "Order number"]
    (problem,) = verify.check_expected(browser, uri("form.html"), missing)
    assert "no label hits <input> 'Order number'" in problem
    forbidden = hand_labels(browser, "form.html", "data-expect-not", r)
    assert [lab["element_text"] for lab in forbidden] == ["Delete draft"]
    (problem,) = verify.check_expected(browser, uri("form.html"), labels + forbidden)
    assert "'Delete draft', marked data-expect-not" in problem


@pytest.mark.slow  # one page of the marked set per case, rendered in the module's Chromium
@pytest.mark.parametrize("name", sorted(MARKED))
def test_every_page_marks_hold(browser, name):
    """Centre points of the page's data-expect elements hit them (frames included); hittable data-expect-not
    elements (opacity:0, aria-hidden, disabled) are flagged when a label points at them."""
    settings = verify.page_settings(MARKED[name])
    r = render(settings["viewport"], settings["scale"], settings["mobile"])
    marks = hand_labels_for(browser, name, ["data-expect", "data-expect-not"], r)
    expect, forbidden = marks["data-expect"], marks["data-expect-not"]
    assert expect, f"{name} marks nothing"
    assert verify.check_labels(browser, shot_of(name, r), expect) == []
    problems = verify.check_expected(browser, uri(name), expect + forbidden, **settings)
    assert all("marked data-expect-not" in p for p in problems), problems  # every data-expect element is hit
    if name in {"hidden.html", "form.html", "iframe.html", "icons.html", "samples/dashboard.html"}:
        assert problems, f"{name} has hittable data-expect-not elements: a label on one must be a problem"


def test_render_settings_are_honoured(browser):
    """Scroll (sticky header covers content), dark scheme (an extra button) and mobile scale 3 change the verdict."""
    scrolled = render(scroll=(0, 800))
    covered = hand_labels(browser, "sticky.html", "class=block", scrolled)
    by_text = {lab["element_text"]: lab for lab in covered}
    under, partly = by_text["Covered by the header"], by_text["Partly under the header"]
    partly_low = dict(partly, click_y=partly["y1"] - 6)  # the strip below the 64px header
    problems = verify.check_labels(browser, shot_of("sticky.html", scrolled), [under, partly_low])
    assert len(problems) == 1 and "Covered by the header" in problems[0] and "not an element named" in problems[0]

    dark, light = render(scheme="dark"), render()
    (dim,) = [lab for lab in hand_labels(browser, "dark.html", "data-expect-not", dark) if lab["element_text"]]
    assert verify.check_labels(browser, shot_of("dark.html", dark), [dim]) == []
    assert len(verify.check_labels(browser, shot_of("dark.html", light), [dim])) == 1

    settings = verify.page_settings(PAGES / "mobile.html")
    assert settings == {"viewport": (390, 844), "scale": 3.0, "mobile": True}
    mobile = render(settings["viewport"], settings["scale"], settings["mobile"])
    tabs = hand_labels(browser, "mobile.html", "data-expect", mobile)
    basket = label_named(tabs, "Basket")
    assert basket["click_y"] > 844 * 2  # screenshot pixels: the tab bar is at the bottom of a 2532 px tall shot
    assert verify.check_labels(browser, shot_of("mobile.html", mobile), [basket]) == []
    desktop_point = dict(basket, click_x=basket["click_x"] / 3, click_y=basket["click_y"] / 3, x0=0, y0=0)
    assert len(verify.check_labels(browser, shot_of("mobile.html", mobile), [desktop_point])) == 1
