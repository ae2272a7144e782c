"""The feeding policy's parts that need no engine (the engine tests run it: tests/pipelines/test_run_vllm.py)."""

from __future__ import annotations

from concurrent.futures import Future

import pytest
from screenmill.annotators.vllm.accounting import Ledger
from screenmill.annotators.vllm.engine import Completion, EngineInputError, Request
from screenmill.annotators.vllm.feeding import Feeder, when_done
from screenmill.schemas.images import ImageRejected


def testwhen_done_builds_once_every_image_is_decoded():
    """What the engine thread submits when it renders itself: the request is built only after all its images are
    decoded, once, and an image's error becomes the request's (the unit is dead-lettered with it)."""
    first, second = Future(), Future()
    built = []
    out = when_done([first, second], lambda: built.append(first.result() + second.result()) or built[-1])
    first.set_result(1)
    assert not out.done() and built == []
    second.set_result(2)
    assert out.result(timeout=1) == 3 and built == [3]

    bad = Future()
    failed = when_done([bad], lambda: bad.result())
    bad.set_exception(ImageRejected("changed_during_run", "gone"))
    with pytest.raises(ImageRejected):
        failed.result(timeout=1)
    assert when_done([], lambda: "none to wait for").result(timeout=1) == "none to wait for"


class _Engine:
    """A stand-in for VlmEngine: each step finishes the oldest request in flight."""

    max_num_seqs = 2
    computes_here = True  # render_threads default 0: the engine's thread renders at submission

    def __init__(self):
        self.config = type("Config", (), {"max_num_seqs": 2})()
        self.queued: list[str] = []
        self.steps = 0
        self.ledger = Ledger()

    @property
    def in_flight(self):
        return len(self.queued)


class _Holder:
    """A stand-in for SharedEngine, one owner."""

    def __init__(self):
        self.engine = _Engine()
        self.submitted = []

    def submit(self, owner, request):
        if request.text == "refuse":
            raise EngineInputError("prompt too long")
        self.submitted.append(request.key)
        self.engine.queued.append(request.key)

    def poll(self, owner, max_in_flight, min_steps=0):
        done, steps = [], 0
        while self.engine.queued and (len(self.engine.queued) > max_in_flight or steps < min_steps):
            steps += 1
            self.engine.steps += 1
            key = self.engine.queued.pop(0)
            done.append(Completion(key, "{}", 1, 1, "stop"))
        return done


def _unit(feeder, text, image_id, decode):
    key = feeder.new_key()
    images = [feeder.image(image_id, decode)]
    build = lambda pixels: Request(key, text, pixels, {}, 8, (image_id,))  # noqa: E731
    return key, list(feeder.add(key, images, build))


def _fail():
    raise ImageRejected("changed_during_run", "gone")


def test_every_unit_gets_one_outcome_answer_refusal_or_image_error():
    holder = _Holder()
    feeder = Feeder(holder, decode_threads=1)
    decoded, units = [], []
    try:
        units.append(_unit(feeder, "where?", "img-a", lambda: decoded.append("a") or "pixels-a"))
        units.append(_unit(feeder, "and here?", "img-a", lambda: decoded.append("a2") or "pixels-a"))
        units.append(_unit(feeder, "refuse", "img-b", lambda: "pixels-b"))
        units.append(_unit(feeder, "where?", "img-c", _fail))
        outcomes = [o for _, early in units for o in early] + list(feeder.drain())
    finally:
        feeder.close()
    (good, again, refused, broken) = [key for key, _ in units]
    assert sorted(o.key for o in outcomes) == sorted([good, again, refused, broken])  # one each
    outcomes = {o.key: o for o in outcomes}
    assert decoded == ["a"]  # the second unit of one image reuses its decoding
    assert set(outcomes) == {good, again, refused, broken}
    assert outcomes[good].completion.error is None and outcomes[again].completion.text == "{}"
    assert outcomes[refused].completion.error == "prompt too long"
    assert isinstance(outcomes[broken].error, ImageRejected) and outcomes[broken].completion is None
    assert holder.submitted == [good, again] and not holder.engine.queued
    taken = feeder.ledger.take()
    assert taken["images_decoded"] == 3  # a, b and the failing c; a's second unit took a's pixels
    assert taken["stage_start_ms"] <= taken["stage_end_ms"]


def test_the_engine_idle_waiting_for_pixels_is_decodings_time():
    import threading
    import time

    holder = _Holder()
    feeder = Feeder(holder, decode_threads=1)
    slow = threading.Event()
    try:
        _unit(feeder, "where?", "img-slow", lambda: slow.wait(5) and "pixels")
        threading.Timer(0.2, slow.set).start()
        started = time.perf_counter()
        outcomes = list(feeder.drain())  # nothing in flight: the feeder waits for the pixels
        waited_us = (time.perf_counter() - started) * 1e6
    finally:
        feeder.close()
    assert len(outcomes) == 1 and outcomes[0].completion is not None
    taken = feeder.ledger.take()
    assert 0 < taken["wait_decode_us"] <= waited_us and taken["wait_render_us"] < taken["wait_decode_us"]
    assert taken["decode_us"] >= taken["wait_decode_us"] * 0.5  # the decode thread's time covers the wait
    assert taken["inline_render_us"] > 0 and taken["submit_us"] == 0  # the request was not rendered beforehand


def test_a_policy_is_a_subclass_the_per_batch_one_generates_whole_batches():
    from screenmill.annotators.vllm.bench import PerBatchFeeder

    holder = _Holder()
    feeder = PerBatchFeeder(holder, batch=3, decode_threads=1)
    try:
        first = [_unit(feeder, "where?", f"img-{i}", lambda: "pixels") for i in range(2)]
        assert all(outcomes == [] for _, outcomes in first) and holder.submitted == []  # collecting the batch
        key, outcomes = _unit(feeder, "where?", "img-2", lambda: "pixels")
        assert sorted(o.key for o in outcomes) == sorted([first[0][0], first[1][0], key])  # generated to the end
        assert not holder.engine.queued and not feeder.queue
    finally:
        feeder.close()
