"""``infra/truthset``: the page collector's manifest and split, and the glyph-effect measurement."""

from __future__ import annotations

import importlib.util
import json
import pickle
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"truthset_{name}", ROOT / "infra" / "truthset" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_collect_copies_pages_and_assets_and_splits_by_site(tmp_path):
    collect = _load("collect")
    site_root = tmp_path / "src"
    (site_root / "css").mkdir(parents=True)
    (site_root / "a.html").write_text("<h1>A</h1>")
    (site_root / "b.html").write_text("<h1>B</h1>")
    (site_root / "other.html").write_text("not chosen")
    (site_root / "css" / "s.css").write_text("h1{}")
    sites = (
        collect.Site("alpha", site_root, ("a.html", "b.html", "gone.html"), "deb:x", "MIT"),
        collect.Site("screenmill-truthset", site_root, ("a.html",), "screenmill", "Apache-2.0"),
    )
    out = tmp_path / "out"
    records = collect.collect(out, sites)
    assert [r["path"] for r in records] == ["alpha/a.html", "alpha/b.html", "screenmill-truthset/a.html"]
    assert (out / "alpha" / "css" / "s.css").is_file() and not (out / "alpha" / "other.html").exists()
    assert [json.loads(line) for line in (out / "pages.jsonl").read_text().splitlines()] == records
    assert len({r["split"] for r in records if r["site"] == "alpha"}) == 1  # a site never straddles the splits
    assert records[-1]["split"] == "dev"  # tuned on: pinned to dev
    assert collect.split_of("alpha") == collect.split_of("alpha") in ("dev", "test")
    assert {collect.split_of(s.name) for s in collect.SITES} == {"dev", "test"}
    assert {collect.split_of(s) for s in collect.DEV_SITES} == {"dev"}  # added to grow dev: never test
    assert collect.DEV_SITES <= {
        s.name for s in collect.SITES + collect.DEB_DEV_SITES + collect.MDBOOK_SITES + collect.sphinx_sites(tmp_path)
    }
    assert {s.name for s in collect.DEB_DEV_SITES + collect.MDBOOK_SITES} <= collect.DEV_SITES  # grow dev: pinned


def test_collect_mends_a_page_with_its_sites_fix_and_mdbook_gets_its_side_bar_script(tmp_path):
    """A site's ``fix`` rewrites each page as it is copied: Debian's mdBook pages get upstream mdBook's inline script
    that hides the side bar below 1080 px (without it the side bar is marked hidden and painted all the same), put
    after the page's ``default_theme`` script; a page without that script is refused, not copied half-mended."""
    collect = _load("collect")
    root = tmp_path / "book"
    root.mkdir()
    head = '<html class="sidebar-visible no-js light"><body>\n<script>\n    var default_theme = "light";\n</script>\n'
    (root / "ch1.html").write_text(head + '<nav id="sidebar">Contents</nav></body></html>')
    (root / "plain.html").write_text("<h1>No mdBook</h1>")
    site = collect.Site("book", root, ("ch1.html",), "deb:x", "MIT", collect.mdbook_scripts)
    collect.collect(tmp_path / "out", (site,))
    page = (tmp_path / "out" / "book" / "ch1.html").read_text()
    assert (
        page.index("default_theme") < page.index("document.body.clientWidth >= 1080") < page.index('<nav id="sidebar"')
    )
    assert page.replace(collect._MDBOOK_SCRIPTS, "") == (root / "ch1.html").read_text()
    with pytest.raises(ValueError, match="default_theme"):
        collect.collect(
            tmp_path / "out2", (collect.Site("plain", root, ("plain.html",), "deb:x", "MIT", collect.mdbook_scripts),)
        )


def test_collect_takes_the_sphinx_builds_as_dev_sites(tmp_path, capsys):
    """``--sphinx DIR`` (build_sphinx.sh's output) adds the Sphinx-built sites, pinned to dev; a build that is missing
    is skipped with a note, as any missing page is."""
    collect = _load("collect")
    built = tmp_path / "sphinx" / "click-html"
    (built / "_static").mkdir(parents=True)
    (built / "quickstart.html").write_text("<h1>Quickstart</h1>")
    (built / "_static" / "theme.css").write_text("h1{}")
    out = tmp_path / "out"
    assert collect.main([str(out), "--sphinx", str(tmp_path / "sphinx")]) == 0
    records = [json.loads(line) for line in (out / "pages.jsonl").read_text().splitlines()]
    click = [r for r in records if r["site"] == "click-docs"]
    assert [r["path"] for r in click] == ["click-docs/quickstart.html"] and click[0]["split"] == "dev"
    assert (out / "click-docs" / "_static" / "theme.css").is_file()
    assert not any(r["site"] in ("attrs-docs", "dateutil-docs", "babel-docs") for r in records)
    assert "attrs-html/overview.html missing, skipped" in capsys.readouterr().err


def test_install_docs_refuses_to_run_without_root_and_installs_nothing(tmp_path):
    """``install_docs.sh`` needs apt-get, so as a user it says so and calls nothing (``id`` and ``apt-get`` are
    stand-ins on ``PATH``: the second records any call)."""
    import os
    import subprocess

    calls = tmp_path / "apt-calls"
    (tmp_path / "id").write_text("#!/bin/sh\necho 1000\n")
    (tmp_path / "apt-get").write_text(f'#!/bin/sh\necho "$@" >> {calls}\n')
    for tool in ("id", "apt-get"):
        (tmp_path / tool).chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", str(ROOT / "infra/truthset/install_docs.sh")], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 1 and "needs root" in done.stderr, done
    assert not calls.exists()


def test_the_committed_manifest_matches_the_split_rule():
    collect = _load("collect")
    records = [json.loads(x) for x in (ROOT / "infra/truthset/pages.jsonl").read_text().splitlines()]
    assert len(records) >= 40 and len({r["site"] for r in records}) >= 8
    assert all(r["split"] == collect.split_of(r["site"]) and r["licence"] and r["source"] for r in records)


def test_glyph_effect_drops_a_toolbar_of_glyphs_per_screenshot():
    effect = _load("glyph_effect")

    def row(sid, n, text, x, conf=0.99, w=10):
        return {"screenshot_id": sid, "label_id": f"{sid}{n}", "element_text": text, "x0": x, "y0": 0.0,
                "x1": x + w, "y1": 20.0, "confidence": conf}  # fmt: skip

    rows = [row("s1", 1, "B", 0), row("s1", 2, "I", 30), row("s1", 3, "Save", 60, w=50), row("s2", 1, "B", 0)]
    assert [r["label_id"] for r in effect.drop_glyph_rows(rows)] == ["s13", "s21"]


@pytest.mark.slow  # a page rendered in Chromium and OCR'd by a run, then read again from the cache
def test_regroup_scores_from_its_cache_the_labels_a_run_writes(tmp_path, capsys):
    """``regroup.py dump`` then ``score`` on a rendered page: the labels grouped from the cache are the OCR labels
    ``screenmill run`` writes for the same screenshot, so a grouping change measured from the cache is what a run
    would give; the dev-only listing is refused for the test split."""
    from tests.annotators.dom.conftest import browser_missing

    pytest.importorskip("rapidocr_onnxruntime")
    why = browser_missing()
    if why:
        pytest.skip(why)
    from screenmill.pipelines.run import run
    from screenmill.schemas.records import Screenshot
    from screenmill.schemas.tables import read_shards

    regroup = _load("regroup")
    pages = tmp_path / "pages"
    (pages / "site").mkdir(parents=True)
    shutil.copy(ROOT / "infra" / "truthset" / "pages" / "login.html", pages / "site" / "login.html")
    manifest = pages / "pages.jsonl"
    record = {"path": "site/login.html", "site": "site", "split": "dev", "licence": "Apache-2.0"}
    manifest.write_text(json.dumps(record) + "\n")
    from screenmill.annotators.dom.browser import BrowserHost
    from screenmill.annotators.process import release

    out = tmp_path / "out"
    run(["--pages", str(pages), "--viewports", "800x600", "--annotator", "ocr", "--output", str(out), "--quiet"])
    release("browser", BrowserHost.close)  # the run's browser is this process's: leave none to later tests
    cache = tmp_path / "cache.pkl"
    assert regroup.main(["dump", str(out), str(manifest), str(cache)]) == 0
    capsys.readouterr()
    assert regroup.dump(str(out), str(manifest), str(cache), {"dev"}) == 0  # options None: the same as none given
    assert "1 of 1 screenshots already read" in capsys.readouterr().err
    scaled = tmp_path / "scaled.pkl"
    shutil.copy(cache, scaled)  # read with another option, the cache's elements are not taken for it
    assert regroup.main(["dump", str(out), str(manifest), str(scaled), "--option", "det_text_height=0.0"]) == 0
    assert "0 of 1 screenshots already read" in capsys.readouterr().err
    with open(scaled, "rb") as f:
        assert pickle.load(f)["options"] == {"det_text_height": 0.0}

    shots = [Screenshot.from_row(r) for r in read_shards(str(out), "screenshots").to_pylist()]
    written = [r for r in read_shards(str(out), "grounding").to_pylist() if r["annotator"].startswith("ocr")]
    with open(cache, "rb") as f:
        cached = pickle.load(f)["elements"]
    regrouped = regroup.labels_of(shots, cached)
    assert len(written) >= 5
    key = lambda r: (r["instruction"], round(r["x0"]), round(r["y0"]), round(r["x1"]), round(r["y1"]))  # noqa: E731
    assert sorted(map(key, regrouped)) == sorted(map(key, written))

    capsys.readouterr()
    assert regroup.main(["score", str(out), str(manifest), str(cache), "--split", "dev", "--show", "missed"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("split dev: 1 screenshots, truth ") and "recall" in printed and "missed:" in printed
    # the labels the run wrote, scored as another run's (where a change started): the same figures as the cache's
    assert regroup.main(["written", str(out), str(manifest), str(out), "--split", "dev", "--kinds"]) == 0
    written_out = capsys.readouterr().out.splitlines()
    assert written_out[0] == f"{len(written)} labels on 1 of the split's 1 screenshots"
    assert written_out[1] == printed.splitlines()[0] and "imprecise labels by kind" in "\n".join(written_out)
    with pytest.raises(SystemExit, match="no OCR label"):
        regroup.main(["written", str(out), str(manifest), str(tmp_path / "nothing"), "--split", "dev"])
    with pytest.raises(SystemExit):
        regroup.main(["score", str(out), str(manifest), str(cache), "--split", "test", "--show", "none"])
    with pytest.raises(SystemExit, match="no screenshot of split 'test'"):
        regroup.main(["score", str(out), str(manifest), str(cache), "--split", "test"])
    stale = tmp_path / "stale.pkl"
    with open(stale, "wb") as f:
        pickle.dump({"version": "2024.0-old", "elements": cached}, f)
    with pytest.raises(SystemExit, match="was read by OCR 2024.0-old"):  # grouped by code it was not read with
        regroup.main(["score", str(out), str(manifest), str(stale)])
    assert regroup.main(["score", str(out), str(manifest), str(stale), "--any-version"]) == 0

    # the learned grouping's commands read the same render and cache: its pair table, and its end-to-end scores
    from screenmill.annotators import ocr_learn

    assert ocr_learn.main(["pairs", str(out), str(manifest), str(cache), str(tmp_path / "pairs.parquet")]) == 0
    assert ocr_learn.read_pairs(str(tmp_path / "pairs.parquet"))[0].num_rows > 0
    one = ocr_learn.score_render(str(out), str(manifest), str(cache))
    two = ocr_learn.score_render(str(out), str(manifest), str(cache), more=[(str(out), str(manifest), str(cache))])
    assert set(one) == {("dev", "rules"), ("dev", "model")} and one["dev", "rules"].screenshots == 1
    assert two["dev", "rules"].screenshots == 2 and two["dev", "rules"].recall == one["dev", "rules"].recall
    assert ocr_learn.score_render(str(out), str(manifest), str(cache), splits=["fresh"]) == {}


@pytest.mark.parametrize(
    ("option", "says"),
    [
        ("det_scale", "not NAME=VALUE"),
        ("det_scale=big", "no Python literal"),
        ("det_scale=9.0", "det_scale must be in"),
        ("no_such_option=1", "no_such_option"),
        ("group_lines=True", "reads ungrouped"),
    ],
)
def test_regroup_dump_refuses_a_bad_option_in_one_line_and_writes_nothing(tmp_path, capsys, option, says):
    regroup = _load("regroup")
    cache = tmp_path / "cache.pkl"
    with pytest.raises(SystemExit) as exit_:
        regroup.main(["dump", str(tmp_path / "run"), str(tmp_path / "pages.jsonl"), str(cache), "--option", option])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert says in err[-1] and "Traceback" not in "\n".join(err)
    assert not list(tmp_path.iterdir())


def test_imprecise_labels_are_counted_by_kind():
    from screenmill.annotators.evaluate.matching import Prediction
    from screenmill.annotators.evaluate.truth import LINE, TruthRecord

    regroup = _load("regroup")
    truth = [
        TruthRecord("s", "Reporting bugs and getting help", (42, 3, 200, 40), "link"),
        TruthRecord("s", "Install the package first", (0, 50, 300, 70), "line", LINE),
        TruthRecord("s", "Settings", (0, 80, 100, 100), "button"),
        TruthRecord("s", "Open the settings page", (0, 110, 200, 124), "link"),  # one line
    ]

    def pred(text, x, y):
        return Prediction("s", text, (x, y), (x - 5, y - 5, x + 5, y + 5))

    predictions = [
        pred("Reporting bugs", 50, 10),  # a fragment of the link, which wraps (four times the label's height)
        pred("Open the", 40, 117),  # a fragment of a link on one line
        pred("Install the package first Then run the tests with pytest", 100, 60),  # more than its line
        pred("Saftings", 50, 90),  # misread (a similar text, under 0.8)
        pred("Newsletters", 500, 500),  # in no element
        pred("Typedef", 500, 600),  # in no element, a text that repeats
        pred("Typedef", 500, 620),
        pred("Settings", 50, 92),  # precise: not counted
    ]
    counts = regroup.imprecise_kinds(truth, predictions)
    assert counts == {"a fragment of a link": 2, "more than the line of painted text it lies on": 1,
                      "the text of its element misread": 1, "in no truth element": 3,
                      "(of which one word)": 4, "(in no truth element, named by position)": 2,
                      "(fragments of an element that wraps)": 1,
                      "(wrapped: first line, at the element's left edge)": 1}  # fmt: skip
    lines = regroup.format_kinds(counts).splitlines()
    assert lines[0] == "imprecise labels by kind: 7"
    assert lines[-3] == (
        "  (4 of them are one word; 2 of those in no truth element are a text that repeats, named by its place)"
    )
    assert lines[-2] == "  (1 of the fragments are of an element that wraps onto more lines)"
    assert lines[-1] == "       1  first line, at the element's left edge"
