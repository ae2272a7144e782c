"""The vLLM label transform's model DoFn without an engine: image ids, answers → rows, packed answers."""

from __future__ import annotations

import dataclasses

from screenmill.annotators.vllm.engine import Completion
from screenmill.annotators.vllm.expand import _frame, _RunEngine
from screenmill.annotators.vllm.units import Work
from screenmill.schemas.records import GroundingLabel
from screenmill.stages.label.vlm import VlmConfig

from tests.stages.label.test_vlm import ENGINE, _shot


def test_frame_uses_the_tile_grid():
    f = _frame(_shot())
    assert (f.width, f.height, f.resized_width, f.resized_height) == (1920, 1080, 2048, 1024)


def test_image_ids_name_the_exact_pixels_sent():
    """The id vLLM keys its encoder cache on: the content hash, plus the grid size when the image is pre-resized
    (the same screenshot sent at two sizes must not share an encoding)."""
    shot = _shot(sha="b" * 64)
    plain = _RunEngine(VlmConfig(run_id="r", config_hash="h", engine=ENGINE))
    resized = _RunEngine(VlmConfig(run_id="r", config_hash="h", engine=ENGINE, pre_resize=True))
    assert plain._image_id(shot) == "b" * 64
    assert resized._image_id(shot) == "b" * 64 + "@2048x1024"
    assert resized._image_id(_shot(sha="c" * 64)) != resized._image_id(shot)


def _engine_dofn(**kw) -> _RunEngine:
    """The model DoFn of a localize config, set up as far as answers → rows go (no engine)."""
    from collections import deque

    from screenmill.stages.base import StageCounters

    fn = _RunEngine(VlmConfig(run_id="r", config_hash="h", engine=ENGINE, instructions="i", **kw))
    fn.counters = StageCounters("infer")
    fn._recipe, fn._version, fn._retries = fn._config.get_recipe(), "v", deque()
    return fn


def _packed(fn: _RunEngine, text: str, finish_reason: str = "stop", error: str | None = None):
    """(the packed unit of instructions a, b, c on one screenshot, the rows its answer ``text`` becomes)."""
    shot = _shot()
    units = tuple(Work(f"{shot.screenshot_id}#{t}", shot, fields=(("instruction", t),)) for t in "abc")
    work = Work(f"{shot.screenshot_id}#pack=0", shot, pack=units)
    return work, list(fn._finish_pack(work, Completion("k", text, 10, 5, finish_reason, error)))


def test_a_packed_answer_gives_a_label_per_good_item_and_queues_the_rest_alone():
    fn = _engine_dofn(recipe="holo2-localize", pack=3)
    work, labels = _packed(fn, '[{"x": 500, "y": 500}, {"x": 1, "y": 1}, {"x": 3')
    assert [lb.instruction for lb in labels] == ["a", "b"]
    assert {lb.recipe_version for lb in labels} == {"1+pack3"}
    assert fn.counters.forwarded.value == 2
    single = _engine_dofn(recipe="holo2-localize")
    answer = single._recipe.answer('{"x": 500, "y": 500}', _frame(work.shot), {"instruction": "a"})
    (alone,) = single._labels(work.pack[0], answer, Completion("k", "", 1, 1, "stop"))
    same = {f.name for f in dataclasses.fields(GroundingLabel)} - {"label_id", "recipe_version", "confidence"}
    assert {f: getattr(labels[0], f) for f in same} == {f: getattr(alone, f) for f in same}
    ((unit, note),) = fn._retries
    assert unit is work.pack[2] and note.startswith("model_output_not_json: item 3 of 3")

    fn = _engine_dofn(recipe="holo2-localize", pack=3)
    work, rows = _packed(fn, "", error="prompt too long")
    assert rows == [] and [u for u, _ in fn._retries] == list(work.pack)  # a refused packed request: each alone
    assert all(n == "engine_failure: prompt too long" for _, n in fn._retries)
    fn = _engine_dofn(recipe="holo2-localize", pack=3)
    _packed(fn, '[{"x": 1, "y": 2}', finish_reason="length")
    assert "the packed answer hit max_tokens=101" in fn._retries[0][1]
