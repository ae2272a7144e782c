"""The daily loop end to end on real runs: run (day 1) → export → run (day 2, more inputs) → export → convert."""

from __future__ import annotations

import json

import pytest
from screenmill.pipelines.convert import main as convert
from screenmill.pipelines.export import main as export
from screenmill.pipelines.run import run
from screenmill.schemas.tables import read_shards

from tests.conftest import png_bytes, ui_image

pytest.importorskip("datasets")
pytest.importorskip("rapidocr_onnxruntime")


def _images(folder, seeds):
    folder.mkdir(parents=True, exist_ok=True)
    for seed in seeds:
        (folder / f"ui_{seed}.png").write_bytes(png_bytes(ui_image(560, 360, seed=seed)))


@pytest.mark.slow  # two OCR runs, two exports and datasets loading the result
def test_two_days_of_runs_export_incrementally_and_load_with_datasets(tmp_path, monkeypatch):
    import datasets

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    inp, out, repo = tmp_path / "in", tmp_path / "out", tmp_path / "repo"
    _images(inp, range(2))
    run(["--input", str(inp), "--output", str(out), "--dt", "2026-11-22", "--quiet"])
    assert export([str(out), "--local-dir", str(repo), "--seed", "s", "--test-fraction", "0.5"]) == 0
    day1_files = {p.relative_to(repo): p.read_bytes() for p in (repo / "data").rglob("*.parquet")}

    _images(inp, range(2, 4))
    day2 = run(["--input", str(inp), "--output", str(out), "--dt", "2026-11-23", "--quiet"])
    assert day2["counts"]["ingest"]["skipped_done"] == 2 and day2["counts"]["annotate"]["total"] == 2
    assert export([str(out), "--local-dir", str(repo), "--seed", "s", "--test-fraction", "0.5"]) == 0
    day2_files = {p.relative_to(repo): p.read_bytes() for p in (repo / "data").rglob("*.parquet")}
    assert {k: day2_files[k] for k in day1_files} == day1_files  # yesterday's files untouched
    assert len(day2_files) > len(day1_files)

    labels = read_shards(str(out), "grounding")
    shots = read_shards(str(out), "screenshots")

    def load(name):  # a cache of this test's own: datasets reads HF_HOME at import, and its cache key is the path
        cache = str(tmp_path / "datasets-cache")
        splits = datasets.get_dataset_split_names(str(repo), name, cache_dir=cache)
        return datasets.concatenate_datasets(
            [datasets.load_dataset(str(repo), name, split=s, cache_dir=cache) for s in splits]
        )

    loaded = {name: load(name) for name in ("screenshots", "grounding")}
    assert sorted(loaded["grounding"]["label_id"]) == sorted(labels.column("label_id").to_pylist())
    assert sorted(loaded["screenshots"]["screenshot_id"]) == sorted(shots.column("screenshot_id").to_pylist())
    first = loaded["screenshots"][0]
    assert first["image"].size == (first["width"], first["height"]) == (560, 360)
    assert "configs:" in (repo / "README.md").read_text()

    dest = tmp_path / "screenspot"
    assert convert([str(out), "--to", "screenspot", "--dest", str(dest), "--split", "daily"]) == 0
    records = json.loads(next(dest.glob("*.json")).read_text())
    assert len(records) == labels.num_rows
    assert {r["img_filename"] for r in records} == {f"{s}.png" for s in shots.column("screenshot_id").to_pylist()}


def test_run_refuses_screenshots_that_match_the_benchmark_list(samples_dir, tmp_path):
    from PIL import Image

    names = ["omniparser__excel.png", "showui__web_forum.jpg", "omniparser__windows.jpg"]
    inp, bench, out = tmp_path / "in", tmp_path / "bench", tmp_path / "out"
    inp.mkdir()
    bench.mkdir()
    for name in names:
        (inp / name).write_bytes((samples_dir / "screens" / name).read_bytes())
    with Image.open(inp / names[1]) as im:  # the benchmark holds a re-encoded, downscaled copy of one input
        im.convert("RGB").resize((im.width // 2, im.height // 2)).save(bench / "leaked.jpg", quality=70)
    args = ["--input", str(inp), "--output", str(out), "--annotator", "none"]
    manifest = run(args + ["--benchmark-images", str(bench)])
    assert manifest["counts"]["guard"]["dropped_benchmark_leak"] == 1
    dead = read_shards(str(out), "_dead_letter/guard").to_pylist()
    assert [d["input_id"].rsplit("/", 1)[-1] for d in dead] == [names[1]] and "leaked.jpg" in dead[0]["error"]
    kept = sorted(s["source_uri"].rsplit("/", 1)[-1] for s in read_shards(str(out), "screenshots").to_pylist())
    assert kept == sorted([names[0], names[2]])
    with pytest.raises(SystemExit, match="benchmark"):
        run(["--input", str(inp), "--output", str(out), "--benchmark-images", str(tmp_path / "nope")])
