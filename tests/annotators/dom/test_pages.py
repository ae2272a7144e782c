"""Every DOM label of the pipeline, checked independently (issue 16's bar): the tricky pages of ``pages/`` and the
samples are rendered by ``screenmill run --pages`` at desktop and mobile sizes, light and dark, two screens down;
then :mod:`tests.annotators.dom.verify` (its own browser and code) loads each page again at every screenshot's
recorded settings and asks ``document.elementFromPoint`` what every label's click point hits. Precision must be 1.0
(every row), and every element a page marks ``data-expect`` must be labelled, none marked ``data-expect-not``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from screenmill.pipelines.run import run
from screenmill.schemas.tables import read_shards

from tests.annotators.dom.conftest import browser_missing

pytestmark = pytest.mark.slow  # every sample page rendered and its DOM labels checked in a real Chromium
HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parents[2] / "samples" / "pages"
NOT_PAGES = {"loop.html", "iframe_child.html"}  # a page that never settles; a frame's content (checked in iframe)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    why = browser_missing()
    if why:
        pytest.skip(why)
    root = tmp_path_factory.mktemp("dom")
    site = root / "site"
    shutil.copytree(HERE / "pages", site)
    for page in SAMPLES.glob("*.html"):
        shutil.copy(page, site / f"sample_{page.name}")
    out = root / "out"
    manifest = run(["--pages", str(site), "--output", str(out), "--annotator", "none", "--quiet", "--dt", "2026-11-25",
                    "--viewports", "1280x800,390x844@3m", "--color-schemes", "light,dark", "--screens", "2",
                    "--render-timeout", "5"])  # fmt: skip
    shots = read_shards(str(out), "screenshots").to_pylist()
    labels = read_shards(str(out), "grounding").to_pylist()
    return site, manifest, shots, labels


def test_the_pages_render_and_the_looping_one_is_a_dead_letter(rendered):
    site, manifest, shots, labels = rendered
    pages = {Path(s["page_uri"]).name for s in shots}
    assert pages == {p.name for p in site.glob("*.html")} - {"loop.html"}
    assert manifest["counts"]["render"]["dropped_render_timeout"] == 4  # loop.html under each of 4 settings
    assert manifest["counts"]["render"]["blocked_requests"] > 0  # remote.html's fetches
    blocked = {Path(s["page_uri"]).name for s in shots if s["render"]["blocked_requests"]}
    assert blocked == {"remote.html"}  # counted per page, on its screenshots' rows
    assert len(labels) > 20 * len(shots) / 2


def test_every_label_clicks_its_own_element(rendered):
    from tests.annotators.dom.verify import check_labels, open_browser

    _, _, shots, labels = rendered
    by_shot: dict[str, list[dict]] = {}
    for label in labels:
        by_shot.setdefault(label["screenshot_id"], []).append(label)
    problems = []
    with open_browser() as browser:
        for shot in shots:
            problems += check_labels(browser, shot, by_shot.get(shot["screenshot_id"], []))
    assert problems == [], f"{len(problems)} of {len(labels)} labels are wrong:\n" + "\n".join(problems[:20])


def test_every_visible_interactive_element_is_labelled(rendered):
    from tests.annotators.dom.verify import check_expected, open_browser, page_settings

    site, _, shots, labels = rendered
    problems = []
    with open_browser() as browser:
        for page in sorted(site.glob("*.html")):
            if page.name in NOT_PAGES:
                continue
            want = page_settings(page)
            w, h = want["viewport"]
            # light, top of the page; where the page has no dark style both schemes give the same bytes and ingest
            # keeps one screenshot of the two (the dark one's settings): the same pixels and labels
            tops = [
                s for s in shots
                if Path(s["page_uri"]).name == page.name and s["render"]["scroll_y"] == 0
                and (s["render"]["viewport_width"], s["render"]["viewport_height"],
                     s["render"]["device_scale_factor"]) == (w, h, want["scale"])
            ]  # fmt: skip
            shot = min(tops, key=lambda s: s["render"]["color_scheme"] != "light", default=None)
            if shot is None:
                problems.append(f"{page.name}: no screenshot at {want}, light, top of the page")
                continue
            mine = [r for r in labels if r["screenshot_id"] == shot["screenshot_id"]]
            problems += [f"{page.name}: {p}" for p in check_expected(browser, shot["page_uri"], mine, **want)]
    assert problems == [], "\n".join(problems)
