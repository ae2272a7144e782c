"""The referring expressions beyond the text (issue 49 part 3): the pages of ``recipe_pages/`` (a table with rows of
Edit buttons and two identical rows, a form with labels above fields and a pair of fields under one heading, a side
bar of icon buttons, a top bar, a dialog, coloured, gradient and large buttons, icon-only buttons) are rendered by
``screenmill run --dom-recipes text,relational,visual,icon`` at desktop and mobile sizes; then
:mod:`tests.annotators.dom.referring` (its own code, only the instruction and the reloaded page) resolves every new
label's expression and checks that its click point hits the one element it names."""

from __future__ import annotations

import shutil
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from screenmill.annotators.relations import colour_names
from screenmill.annotators.wording import DOM_RECIPE_FAMILIES, DOM_RECIPES
from screenmill.pipelines.run import run
from screenmill.schemas.tables import read_shards

from tests.annotators.dom.conftest import browser_missing

HERE = Path(__file__).resolve().parent
NEW = [r for family, rs in DOM_RECIPE_FAMILIES.items() if family != "text" for r in rs]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    why = browser_missing()
    if why:
        pytest.skip(why)
    root = tmp_path_factory.mktemp("relations")
    site = root / "site"
    shutil.copytree(HERE / "recipe_pages", site)
    out = root / "out"
    manifest = run(["--pages", str(site), "--output", str(out), "--annotator", "none", "--quiet", "--dt", "2026-11-25",
                    "--viewports", "1280x800,390x844@3m", "--render-timeout", "5",
                    "--dom-recipes", "text,relational,visual,icon"])  # fmt: skip
    shots = read_shards(str(out), "screenshots").to_pylist()
    labels = read_shards(str(out), "grounding").to_pylist()
    return manifest, shots, labels


@pytest.fixture(scope="module")
def verdicts(rendered):
    """Every new label's verdict from the independent checker: ``(recipe, instruction, page, verdict)``."""
    from tests.annotators.dom.referring import resolve
    from tests.annotators.dom.verify import _loaded, open_browser

    _, shots, labels = rendered
    by_shot = defaultdict(list)
    for label in labels:
        if label["recipe"] in NEW:
            by_shot[label["screenshot_id"]].append(label)
    out = []
    with open_browser() as browser:
        for shot in shots:
            render = shot["render"]
            scale = float(render["device_scale_factor"]) * float(render.get("page_scale") or 1.0)
            with _loaded(browser, shot["page_uri"], render) as page:
                for label in by_shot[shot["screenshot_id"]]:
                    verdict = resolve(page, label["instruction"], label["click_x"] / scale, label["click_y"] / scale)
                    out.append((label["recipe"], label["instruction"], Path(shot["page_uri"]).name, verdict))
    return out


@pytest.mark.slow  # a whole run of real Chromium renders, checked in another browser
def test_every_new_expression_names_one_element_and_its_point_hits_it(verdicts):
    per_recipe = defaultdict(Counter)
    for recipe, _, _, verdict in verdicts:
        per_recipe[recipe][verdict] += 1
    assert set(per_recipe) == set(NEW), f"recipes without labels: {set(NEW) - set(per_recipe)}"
    wrong = [v for v in verdicts if v[3] != "hit"]
    for recipe, counts in per_recipe.items():
        precision = counts["hit"] / sum(counts.values())
        assert precision >= 0.99 and counts["ambiguous"] == 0, (recipe, dict(counts), wrong)
    assert not wrong  # on these pages every one hits


@pytest.mark.slow  # a whole run of real Chromium renders, checked in another browser
def test_what_two_elements_could_fit_is_not_written(rendered):
    _, _, labels = rendered
    said = Counter((label["screenshot_id"], label["instruction"].casefold()) for label in labels)
    assert max(said.values()) == 1  # no instruction twice on a screenshot
    new = {label["instruction"] for label in labels if label["recipe"] in NEW}
    assert 'click the "Edit" button in the row of "Alice Smith"' in new
    assert not [i for i in new if "Carol White" in i]  # two identical rows: no row of "Carol White"
    assert 'click the field below "Email"' in new
    assert not [i for i in new if "Full name" in i]  # two fields side by side under it
    assert "click the green button" in new
    assert "click the blue button" not in new  # two blue ones
    assert "click the red button" not in new  # the orange-red gradient might be called red
    assert 'click the "Save" button in the dialog' in new and "click the large button" in new
    assert 'click the icon to the left of "Settings"' in new and "click the search icon" in new
    assert 'click the icon to the left of "Favourites"' in new  # an image and a text of one list item


@pytest.mark.slow  # a whole run of real Chromium renders, checked in another browser
def test_the_manifest_counts_labels_per_recipe(rendered):
    manifest, _, labels = rendered
    render = manifest["counts"]["render"]
    rows = Counter(label["recipe"] for label in labels)
    assert {r: render.get(f"labels_{r}", 0) for r in rows} == dict(rows)
    assert set(rows) >= set(NEW) | {"dom-text", "dom-role"}


def test_the_default_writes_only_the_text_recipes(host, tmp_path):
    from screenmill.annotators.dom.labels import choose_instructions
    from screenmill.annotators.dom.page import Viewport

    page = HERE / "recipe_pages" / "users.html"
    elements = host.render(page.as_uri(), str(page.parent), Viewport(1280, 800), "light", 1).screens[0].elements
    default = choose_instructions(elements)
    everything = choose_instructions(elements, frozenset(r for rs in DOM_RECIPE_FAMILIES.values() for r in rs))
    assert {c.recipe for c in default} <= set(DOM_RECIPES)
    assert [c for c in everything if c.recipe in DOM_RECIPES] == default  # the new ones take nothing away


@pytest.mark.parametrize(
    ("rgba", "name", "possible"),
    [
        ((22, 163, 74, 1), "green", {"green"}),
        ((37, 99, 235, 1), "blue", {"blue"}),
        ((234, 88, 12, 1), None, {"red", "orange"}),  # hue 21: near red
        ((239, 239, 239, 1), None, set()),  # the default button's grey
        ((5, 5, 5, 1), "black", {"black"}),
        ((37, 99, 235, 0.5), None, set()),  # translucent: what shows is not its colour
    ],
)
def test_colours_are_named_only_where_clear(rgba, name, possible):
    assert colour_names(list(rgba)) == (name, possible)


@pytest.mark.slow  # a whole run of real Chromium renders, checked in another browser
def test_the_checker_itself_tells_ambiguous_and_wrong_expressions(rendered):
    from tests.annotators.dom.referring import resolve
    from tests.annotators.dom.verify import DESKTOP, _loaded, open_browser

    render = {"viewport_width": DESKTOP["viewport"][0], "viewport_height": DESKTOP["viewport"][1]}
    pages = HERE / "recipe_pages"
    with open_browser() as browser:
        with _loaded(browser, (pages / "users.html").as_uri(), render) as page:
            assert resolve(page, 'click the "Edit" button in the row of "Carol White"', 0, 0) == "ambiguous"
            assert resolve(page, 'click the "Edit" button in the row of "Nobody"', 0, 0) == "none"
            assert resolve(page, 'click the "Edit" button in the row of "Alice Smith"', 5, 5) == "miss"
        with _loaded(browser, (pages / "dialog.html").as_uri(), render) as page:
            assert resolve(page, "click the blue button", 0, 0) == "ambiguous"
            assert resolve(page, 'click the "Save" button in the top bar', 0, 0) == "none"
        with _loaded(browser, (pages / "settings.html").as_uri(), render) as page:
            assert resolve(page, 'click the field below "Full name"', 0, 0) == "ambiguous"
