"""Incremental daily runs and crash safety of `screenmill run`: the `_done` index, staged commits, kill -9 + rerun."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from screenmill.pipelines.run import run
from screenmill.schemas.tables import read_shards

from tests.conftest import png_bytes, ui_image

ROOT = Path(__file__).resolve().parents[2]
KEYS = {
    "screenshots": ("screenshot_id", "episode_id", "step_index"),
    "grounding": ("label_id",),
    "_done": ("screenshot_id", "episode_id", "step_index", "config_hash"),
    "_dead_letter/ingest": ("input_id", "reason"),
}


def _add_images(folder: Path, seeds, size=(480, 300)) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for seed in seeds:
        (folder / f"shot_{seed:03d}.png").write_bytes(png_bytes(ui_image(*size, seed=seed)))


def _keys(out: Path, table: str) -> Counter:
    rows = read_shards(str(out), table).to_pylist()
    return Counter(tuple(r[c] for c in KEYS[table]) for r in rows)


def _args(inp: Path, out: Path, *extra: str, dt: str = "2026-11-23") -> list[str]:
    return ["--input", str(inp), "--output", str(out), "--dt", dt, "--quiet", *extra]


def test_two_daily_runs_over_a_growing_folder_process_only_the_new_screenshots(tmp_path):
    inp, out = tmp_path / "in", tmp_path / "out"
    _add_images(inp, range(3))
    (inp / "broken.png").write_bytes(png_bytes(ui_image(seed=50))[:300])  # truncated: rejected after hashing
    day1 = run(_args(inp, out, "--annotator", "none", dt="2026-11-22"))
    _add_images(inp, range(3, 5))
    day2 = run(_args(inp, out, "--annotator", "none", dt="2026-11-23"))

    assert day1["counts"]["ingest"]["forwarded"] == 3
    assert day2["counts"]["ingest"]["skipped_done"] == 4  # 3 screenshots + the rejected file, all done on day 1
    assert day2["counts"]["ingest"]["forwarded"] == 2
    shots = read_shards(str(out), "screenshots").to_pylist()
    assert sorted(Path(s["source_uri"]).name for s in shots if s["run_id"] == day2["run_id"]) == [
        "shot_003.png",
        "shot_004.png",
    ]
    assert max(_keys(out, "screenshots").values()) == 1 and len(shots) == 5
    assert sorted(p.name for p in (out / "screenshots").iterdir()) == ["dt=2026-11-22", "dt=2026-11-23"]
    done = read_shards(str(out), "_done").to_pylist()
    assert Counter(d["outcome"] for d in done) == {"labelled": 5, "rejected": 1}
    dead = read_shards(str(out), "_dead_letter/ingest").to_pylist()
    assert [(d["reason"], d["run_id"]) for d in dead] == [("truncated", day1["run_id"])]  # not rejected twice


@pytest.mark.slow  # three runs, two of them with real OCR
def test_a_recipe_change_redoes_what_it_must_and_nothing_else(tmp_path):
    pytest.importorskip("rapidocr_onnxruntime")
    inp, out = tmp_path / "in", tmp_path / "out"
    _add_images(inp, range(2))
    first = run(_args(inp, out))
    same = run(_args(inp, out, "--ocr-threads", "1", "--num-shards", "2"))  # execution-only settings
    changed = run(_args(inp, out, "--instruction-template", "tap {text}"))

    assert first["counts"]["annotate"]["total"] == 2
    assert same["config_hash"] == first["config_hash"] and same["counts"]["ingest"]["skipped_done"] == 2
    assert "annotate" not in same["counts"] or same["counts"]["annotate"]["total"] == 0
    assert changed["config_hash"] != first["config_hash"] and changed["counts"]["annotate"]["total"] == 2
    labels = read_shards(str(out), "grounding").to_pylist()
    by_run = Counter(label["run_id"] for label in labels)
    assert set(by_run) == {first["run_id"], changed["run_id"]} and by_run[first["run_id"]] == by_run[changed["run_id"]]
    assert all(lb["instruction"].startswith("tap ") for lb in labels if lb["run_id"] == changed["run_id"])
    assert max(Counter(label["label_id"] for label in labels).values()) == 1
    assert len(read_shards(str(out), "screenshots")) == 2  # a redo adds labels, not a second screenshot row
    assert Counter(d["config_hash"] for d in read_shards(str(out), "_done").to_pylist()) == {
        first["config_hash"]: 2,
        changed["config_hash"]: 2,
    }


def _crash_inputs(inp: Path) -> None:
    _add_images(inp, range(5))
    (inp / "copy_of_0.png").write_bytes((inp / "shot_000.png").read_bytes())  # duplicate bytes
    (inp / "broken.png").write_bytes(png_bytes(ui_image(seed=60))[:300])


def _start(inp: Path, out: Path, failpoint: str | None = None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "SCREENMILL_FAILPOINT"}
    if failpoint:
        env["SCREENMILL_FAILPOINT"] = failpoint
    cmd = [sys.executable, "-m", "screenmill.pipelines.cli", "run", *_args(inp, out, "--num-shards", "3")]
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory):
    pytest.importorskip("rapidocr_onnxruntime")
    inp, out = tmp_path_factory.mktemp("crash") / "in", tmp_path_factory.mktemp("clean") / "out"
    _crash_inputs(inp)
    run(_args(inp, out, "--num-shards", "3"))
    return inp, {table: _keys(out, table) for table in KEYS}


@pytest.mark.slow  # per kill point: `screenmill run` in a subprocess (OCR), killed, then run again here
@pytest.mark.parametrize(
    "failpoint",
    ["write:grounding", "write:_done", "commit:before_marker", "commit:after_first_move", "timed"],
)
def test_a_run_killed_at_any_point_then_rerun_ends_with_exactly_the_rows_of_a_clean_run(
    clean_run, tmp_path, failpoint
):
    inp, expected = clean_run
    out = tmp_path / "out"
    if failpoint == "timed":  # kill -9 from outside, as soon as the run has started writing its shards
        proc = _start(inp, out)
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if list((out / "_staging").rglob("part-*.parquet")) if (out / "_staging").exists() else []:
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.05)
        proc.wait(timeout=60)
    else:
        proc = _start(inp, out, failpoint)
        proc.wait(timeout=180)
        assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()[-2000:]
    if failpoint != "timed":  # killed before the commit, or inside it: no manifest in place yet
        assert not list((out / "_runs").glob("*.json")) if (out / "_runs").exists() else True

    resumed = run(_args(inp, out, "--num-shards", "3"))
    for table, keys in expected.items():
        got = _keys(out, table)
        assert got == keys, f"{table}: rows differ from a clean run after a kill at {failpoint}"
    assert not (out / "_staging").exists()
    if failpoint.startswith("commit:after"):
        assert resumed["recovered"][0]["action"] == "rolled_forward"
    elif failpoint != "timed":
        assert resumed["recovered"][0]["action"] == "discarded"
