"""`screenmill run --pages … --explore K`: explored episodes as screenshots, DOM labels and `actions` rows; the episode
is the unit of done (real Chromium, real Beam, real Parquet)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections import defaultdict
from pathlib import Path

import pytest
from screenmill.pipelines.run import run
from screenmill.schemas.records import ActionStep
from screenmill.schemas.tables import read_shards

from tests.annotators.dom.conftest import browser_missing
from tests.annotators.dom.sites import make_site

pytestmark = pytest.mark.slow  # runs that click through pages step by step in a real headless Chromium


@pytest.fixture(autouse=True)
def _browser():
    why = browser_missing()
    if why:
        pytest.skip(why)


def _args(out: Path, site: Path, *extra: str) -> list[str]:
    return ["--output", str(out), "--annotator", "none", "--dt", "2026-11-25", "--quiet", "--render-timeout", "5",
            "--pages", str(site), "--viewports", "800x600", *extra]  # fmt: skip


def _episodes(out: Path) -> dict[str, list[dict]]:
    by = defaultdict(list)
    for s in read_shards(str(out), "screenshots").to_pylist():
        by[s["episode_id"]].append(s)
    return {e: sorted(frames, key=lambda s: s["step_index"]) for e, frames in by.items()}


def test_pages_explore_into_episodes_with_actions_labels_and_replayable_frames(tmp_path):
    site, out = make_site(tmp_path), tmp_path / "out"
    m = run(_args(out, site, "--explore", "5"))
    counts = m["counts"]["render"]
    assert counts["episodes"] == 2 and counts["steps"] == 10 and counts["screens"] == 12

    episodes = _episodes(out)
    assert None not in episodes and len(episodes) == 2
    actions = [ActionStep.from_row(r) for r in read_shards(str(out), "actions").to_pylist()]
    labelled = {r["screenshot_id"] for r in read_shards(str(out), "grounding").to_pylist()}
    for eid, frames in episodes.items():
        assert [f["step_index"] for f in frames] == list(range(6))
        assert {f["page_uri"] for f in frames} == {frames[0]["page_uri"]}
        for f in frames:
            assert hashlib.sha256(Path(f["source_uri"]).read_bytes()).hexdigest() == f["screenshot_id"]
        assert {f["screenshot_id"] for f in frames} <= labelled  # every frame has its DOM labels
        assert [f["recorded_action"] is None for f in frames] == [False] * 5 + [True]  # the action taken on it
        mine = sorted((a for a in actions if a.episode_id == eid), key=lambda a: a.step)
        assert [a.step for a in mine] == list(range(5))
        assert [a.screenshot_id for a in mine] == [f["screenshot_id"] for f in frames[:5]]
        for a, f in zip(mine, frames, strict=False):
            args, rec = json.loads(a.action_args), json.loads(f["recorded_action"])
            assert (a.source, a.annotator, a.action_type) == ("recorded", "dom", rec["action"])
            assert args.pop("instruction").startswith(("click ", "type ", "choose ", "scroll ", "go back"))
            assert {k: v for k, v in rec.items() if k != "action"} == args
            if "x" in args:
                assert 0 <= args["x"] <= f["width"] and 0 <= args["y"] <= f["height"]

    # the episode's recorded actions, acted out in a fresh browser by `screenmill replay`, give the frames in the table
    from screenmill.pipelines.cli import main as cli

    index = next(fs for fs in episodes.values() if fs[0]["page_uri"].endswith("/index.html"))
    assert cli(["replay", str(out), "--root", str(site), "--episode", index[0]["episode_id"]]) == 0
    report = json.loads((out / "_replay" / "replay.json").read_text())["episodes"]
    assert [e["got"] for e in report] == [[f["screenshot_id"] for f in index]] and report[0]["error"] is None

    # the episode is the unit of done: the same seed is skipped, another seed is another episode
    again_run = run(_args(out, site, "--explore", "5"))
    assert again_run["counts"]["render"]["skipped_done"] == 2 and "episodes" not in again_run["counts"]["render"]
    assert len(read_shards(str(out), "actions")) == 10
    run(_args(out, site, "--explore", "5", "--explore-seed", "1"))
    assert len(_episodes(out)) == 4 and len(read_shards(str(out), "actions")) == 20

    # `screenmill inspect` draws each episode as strips: a step's frame with its action on it, beside the next frame
    from PIL import Image
    from screenmill.pipelines.inspect import main as inspect_main

    assert inspect_main([str(out), "--out", str(tmp_path / "gallery")]) == 0
    strips = sorted((tmp_path / "gallery").glob("episode-*.png"))
    assert len(strips) == 4 * 6
    first = Image.open(strips[0])
    assert first.height == 360 and first.width > 2 * 360 * 800 / 600  # two 800x600 frames side by side
    page = (tmp_path / "gallery" / "index.html").read_text()
    assert page.count("<h2>episode ") == 4


def test_explore_and_several_screens_do_not_go_together(tmp_path):
    site, out = make_site(tmp_path), tmp_path / "out"
    with pytest.raises(SystemExit, match="--screens"):
        run(_args(out, site, "--explore", "3", "--screens", "2"))


def test_explored_episodes_export_and_load_with_datasets_like_recorded_ones(tmp_path, monkeypatch):
    """`--explore 3` then `screenmill export --local-dir`: the `steps` and `actions` configs load with `datasets`
    (local files only), every step in order with its image and its recorded action."""
    datasets = pytest.importorskip("datasets")
    pytest.importorskip("huggingface_hub")
    from screenmill.pipelines.export import main as export_main

    for var in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):
        monkeypatch.setenv(var, "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    site, out, local = make_site(tmp_path), tmp_path / "out", tmp_path / "repo"
    run(_args(out, site, "--explore", "3"))
    assert export_main([str(out), "--local-dir", str(local), "--test-fraction", "0.5", "--seed", "s"]) == 0
    report = json.loads(next((out / "_export").glob("export-*.json")).read_text())
    assert report["dead_letters"] == []

    def load(config):
        loaded = datasets.load_dataset(str(local), config, cache_dir=str(tmp_path / "hf_cache"))
        return [row for split in loaded for row in loaded[split]]

    episodes = _episodes(out)
    shots = {r["screenshot_id"]: r for r in load("screenshots")}
    steps, actions = defaultdict(list), defaultdict(list)
    for row in load("steps"):
        steps[row["episode_id"]].append(row)
    for row in load("actions"):
        actions[row["episode_id"]].append(row)
    assert set(steps) == set(actions) == set(episodes) and len(episodes) == 2
    for eid, frames in episodes.items():
        got = sorted(steps[eid], key=lambda r: r["step_index"])
        assert [r["step_index"] for r in got] == list(range(4))
        assert [r["screenshot_id"] for r in got] == [f["screenshot_id"] for f in frames]
        assert [r["recorded_action"] for r in got] == [f["recorded_action"] for f in frames]
        for r, f in zip(got, frames, strict=True):  # the step: its page and render; its image: the rendered frame
            assert (r["page_uri"], r["page_sha256"], r["render"]) == (f["page_uri"], f["page_sha256"], f["render"])
            assert r["render"]["viewport_width"] == 800 and r["page_uri"].startswith("file://")
            shot = shots[f["screenshot_id"]]
            assert hashlib.sha256(shot["image"].tobytes()).digest() == _pixels(f["source_uri"])
            assert shot["image"].size == (shot["width"], shot["height"]) == (800, 600)
        acts = sorted(actions[eid], key=lambda a: a["step"])
        assert [a["step"] for a in acts] == list(range(3))
        assert [a["screenshot_id"] for a in acts] == [r["screenshot_id"] for r in got[:3]]
        for a, r in zip(acts, got, strict=False):
            assert (a["source"], a["annotator"]) == ("recorded", "dom")
            assert a["action_type"] == json.loads(r["recorded_action"])["action"]
            assert json.loads(a["action_args"])["instruction"]


def _pixels(path: str) -> bytes:
    from PIL import Image

    with Image.open(path) as im:
        return hashlib.sha256(im.tobytes()).digest()


def test_two_explore_runs_of_the_samples_give_the_same_tables(tmp_path, samples_dir):
    """The CI check of determinism: `screenmill run --explore 2 --pages samples/pages` twice, into two trees that
    infra/compare_trees.py finds the same, table for table (the frames' hashes, labels, actions, done)."""
    spec = importlib.util.spec_from_file_location("compare_trees", samples_dir.parent / "infra" / "compare_trees.py")
    compare_trees = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compare_trees)
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        m = run(_args(out, samples_dir / "pages", "--explore", "2"))
        assert m["counts"]["render"]["episodes"] == 3 and m["counts"]["render"]["steps"] == 6
    assert compare_trees.main([str(o) for o in outs]) == 0
