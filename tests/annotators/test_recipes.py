"""Prompt recipes: prompts carry the schema, answers parse to original pixels, bad answers get their reason."""

from __future__ import annotations

import json

import pytest
from screenmill.annotators.recipes import ACTION_TYPES, RECIPES, AnswerRejected, Frame, get_recipe, task_frames

FRAME = Frame(width=1920, height=1080, resized_width=2048, resized_height=1024)


def test_registry_has_the_recipes_with_schemas():
    assert set(RECIPES) == {
        "holo2-localize",
        "holo15-localize",
        "navigate-step",
        "propose-elements",
        "explain-step",
        "synthesize-task",
        "describe-element",
    }
    for recipe in RECIPES.values():
        assert recipe.version
        assert json.loads(recipe.schema_text) == recipe.answer_schema
    assert set(ACTION_TYPES) == {
        "click_element",
        "write_element_abs",
        "scroll",
        "go_back",
        "refresh",
        "goto",
        "wait",
        "restart",
        "answer",
    }


def test_localize_prompt_names_schema_and_target():
    recipe = get_recipe("holo2-localize")
    text = recipe.prompt(instruction='click "Sign in"')
    assert text.startswith("Localize an element on the GUI image")
    assert text.endswith('Your target is: click "Sign in"')
    assert recipe.schema_text in text
    with pytest.raises(KeyError):
        recipe.prompt()


def test_holo2_answer_is_norm_1000_of_the_original_image():
    (t,) = get_recipe("holo2-localize").answer('{"x": 500, "y": 250}', FRAME, {"instruction": "open menu"})
    assert t.point == (960.0, 270.0)
    assert t.box == (960.0, 270.0, 960.0, 270.0)
    assert t.native_point == (500, 250) and t.instruction == "open menu"


def test_holo15_answer_is_pixels_of_the_resized_image():
    answer = json.dumps({"action": "click_absolute", "x": 1024, "y": 512})
    (t,) = get_recipe("holo15-localize").answer(answer, FRAME, {"instruction": "x"})
    assert t.point == (960.0, 540.0)
    huge = json.dumps({"action": "click_absolute", "x": 10**400, "y": 10})
    with pytest.raises(AnswerRejected) as err:
        get_recipe("holo15-localize").answer(huge, FRAME)
    assert err.value.reason == "coords_out_of_bounds"
    too_far = json.dumps({"action": "click_absolute", "x": 2049, "y": 10})
    with pytest.raises(AnswerRejected) as err:
        get_recipe("holo15-localize").answer(too_far, FRAME)
    assert err.value.reason == "coords_out_of_bounds"


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "model_output_not_json"),
        ('{"x": 1, "y": ', "model_output_not_json"),
        ("not json at all", "model_output_not_json"),
        ('{"x": "500", "y": 1}', "model_output_schema"),
        ('{"x": 1001, "y": 1}', "model_output_schema"),
        ('{"x": 1}', "model_output_schema"),
        ('{"x": 1, "y": 2, "z": 3}', "model_output_schema"),
        ("[1, 2]", "model_output_schema"),
        ('{"x": NaN, "y": 1}', "model_output_schema"),
        ('{"x": 1.5, "y": 1}', "model_output_schema"),
    ],
)
def test_bad_localize_answers_have_their_reason(text, reason):
    with pytest.raises(AnswerRejected) as err:
        get_recipe("holo2-localize").answer(text, FRAME)
    assert err.value.reason == reason


def test_propose_elements_boxes_and_centres():
    answer = {
        "elements": [
            {"instruction": "sign in", "text": "Sign in", "role": "button", "box": [100, 200, 300, 400]},
            {"instruction": "open the menu", "text": "", "role": "", "box": [0, 0, 1000, 1000]},
        ]
    }
    targets = get_recipe("propose-elements").answer(json.dumps(answer), FRAME)
    assert targets[0].box == (192.0, 216.0, 576.0, 432.0)
    assert targets[0].point == (384.0, 324.0)
    assert (targets[0].element_text, targets[0].role) == ("Sign in", "button")
    assert targets[1].box == (0.0, 0.0, 1920.0, 1080.0) and targets[1].element_text is None
    reversed_box = {"elements": [{"instruction": "a", "text": "", "role": "", "box": [300, 200, 100, 400]}]}
    with pytest.raises(AnswerRejected) as err:
        get_recipe("propose-elements").answer(json.dumps(reversed_box), FRAME)
    assert err.value.reason == "model_output_schema" and "element 0" in err.value.message
    assert "{max_elements}" not in get_recipe("propose-elements").prompt()


def test_navigate_step_actions():
    recipe = get_recipe("navigate-step")
    click = {
        "note": "",
        "thought": "the button",
        "action": {"action": "click_element", "element": "OK", "x": 500, "y": 500},
    }
    step = recipe.answer(json.dumps(click), FRAME)
    assert step.action_type == "click_element"
    assert (step.action_args["x"], step.action_args["y"]) == (960.0, 540.0)
    assert step.action_args["native_point"] == [500, 500] and step.thought == "the button" and step.note is None
    scroll = recipe.answer(
        json.dumps({"note": "n", "thought": "t", "action": {"action": "scroll", "direction": "down"}}), FRAME
    )
    assert (scroll.action_type, scroll.action_args) == ("scroll", {"direction": "down"})
    for bad in (
        {"note": "", "thought": "", "action": {"action": "fly"}},
        {"note": "", "thought": "", "action": {"action": "scroll", "direction": "sideways"}},
        {"note": "", "thought": "", "action": {"action": "click_element", "element": "OK", "x": 5}},
    ):
        with pytest.raises(AnswerRejected) as err:
            recipe.answer(json.dumps(bad), FRAME)
        assert err.value.reason == "model_output_schema"
    assert "Previous actions: none" in recipe.prompt(task="buy milk")


def test_overrides_and_unknown_names():
    assert get_recipe("holo2-localize", version="2").version == "2"
    assert RECIPES["holo2-localize"].version == "1"
    with pytest.raises(KeyError, match="registered"):
        get_recipe("nope")
    with pytest.raises(ValueError):
        get_recipe("holo2-localize", max_images=5)


def test_explain_step_answers():
    recipe = get_recipe("explain-step")
    prompt = recipe.prompt(action="click_element at x=500, y=20 (0-1000 scale)")
    assert "none stated" in prompt and "click_element at x=500" in prompt
    ex = recipe.answer(json.dumps({"thought": "open  the View tab", "instruction": " click  View "}), FRAME)
    assert (ex.thought, ex.instruction) == ("open the View tab", "click View")
    for bad in ({"thought": "t", "instruction": "   "}, {"thought": "t"}, {"thought": "t", "instruction": ""}):
        with pytest.raises(AnswerRejected) as err:
            recipe.answer(json.dumps(bad), FRAME)
        assert err.value.reason == "model_output_schema"


def test_synthesize_task_sees_first_last_and_evenly_spaced_frames_and_answers_one_task():
    assert [task_frames(n) for n in (1, 2, 4)] == [[0], [0, 1], [0, 1, 2, 3]]
    assert task_frames(9) == [0, 3, 5, 8] and task_frames(8) == [0, 2, 5, 7]
    recipe = get_recipe("synthesize-task")
    assert recipe.kind == "task" and recipe.max_images == 4
    prompt = recipe.prompt(actions='1. click the "Pricing" link\n2. click "Buy"')
    assert '1. click the "Pricing" link\n2. click "Buy"' in prompt and recipe.schema_text in prompt
    got = recipe.answer(json.dumps({"task": "  Buy  a lamp\n"}), FRAME)
    assert got.task == "Buy a lamp"
    for bad, reason in (
        ({"task": " \n "}, "model_output_schema"),
        ({"task": ""}, "model_output_schema"),
        ({"goal": "x"}, "model_output_schema"),
        ({"task": "x", "extra": 1}, "model_output_schema"),
        ({"task": "x" * 301}, "model_output_schema"),
    ):
        with pytest.raises(AnswerRejected) as err:
            recipe.answer(json.dumps(bad), FRAME)
        assert err.value.reason == reason
    with pytest.raises(AnswerRejected) as err:
        recipe.answer('{"task": "unfinished', FRAME)
    assert err.value.reason == "model_output_not_json"


def test_a_packed_localize_recipe_asks_an_ordered_array_of_exactly_n_answers():
    recipe = get_recipe("holo2-localize")
    packed = recipe.packed(8)
    assert (packed.version, packed.pack) == ("1+pack8", 8)
    assert recipe.packed(1) is recipe
    text = packed.pack_prompt(["click Save", 'open "File"', "close"])
    assert text.endswith('Your targets are:\n1. click Save\n2. open "File"\n3. close')
    schema = packed.pack_schema(3)
    assert (schema["minItems"], schema["maxItems"], schema["items"]) == (3, 3, recipe.answer_schema)
    assert recipe.schema_text in text and text.startswith("Localize elements on the GUI image")
    assert packed.pack_max_tokens(3) == 3 * (recipe.max_tokens + 1) + 2
    # the single-request side of a packed recipe is the recipe's own
    assert packed.prompt(instruction="x") == recipe.prompt(instruction="x")
    for bad_k in (0, 65):
        with pytest.raises(ValueError, match="pack must be 1..64"):
            recipe.packed(bad_k)
    with pytest.raises(ValueError, match="only localize recipes pack"):
        get_recipe("propose-elements").packed(2)


def _fields(*names):
    return [{"instruction": n} for n in names]


def test_every_item_of_a_packed_answer_is_checked_on_its_own():
    recipe = get_recipe("holo15-localize").packed(3)
    items = [{"action": "click_absolute", "x": 1024, "y": 512}, {"action": "click_absolute", "x": 5000, "y": 1},
             {"action": "tap", "x": 1, "y": 1}]  # fmt: skip
    good, outside, wrong = recipe.answer_pack(json.dumps(items), FRAME, _fields("a", "b", "c"))
    (t,) = good
    assert t.point == (960.0, 540.0) and t.instruction == "a"
    assert isinstance(outside, AnswerRejected) and outside.reason == "coords_out_of_bounds"
    assert outside.message.startswith("item 2 of 3:")
    assert isinstance(wrong, AnswerRejected) and wrong.reason == "model_output_schema"


def test_a_truncated_packed_answer_keeps_its_complete_items():
    recipe = get_recipe("holo2-localize").packed(4)
    text = '[{"x": 10, "y": 20},\n {"x":30,"y":40}, {"x": 5'
    first, second, cut, never = recipe.answer_pack(text, FRAME, _fields("a", "b", "c", "d"))
    assert [t.native_point for t in (*first, *second)] == [(10, 20), (30, 40)]
    for i, r in ((3, cut), (4, never)):
        assert isinstance(r, AnswerRejected) and r.reason == "model_output_not_json"
        assert r.message == f"item {i} of 4: the answer ends after 2 complete items"


@pytest.mark.parametrize(
    ("text", "reason", "good"),
    [
        ('{"x": 1, "y": 2}', "model_output_schema", 0),  # not an array
        ('[{"x": 1, "y": 2}]', "model_output_schema", 1),  # fewer items than asked
        ("nonsense", "model_output_not_json", 0),
        ("", "model_output_not_json", 0),
        ('[{"x": 1, "y": 2}, 7]', "model_output_schema", 1),  # an item that is not an answer
    ],
)
def test_packed_answers_that_are_not_a_full_array(text, reason, good):
    results = get_recipe("holo2-localize").packed(2).answer_pack(text, FRAME, _fields("a", "b"))
    assert len(results) == 2
    assert sum(not isinstance(r, AnswerRejected) for r in results) == good
    assert {r.reason for r in results if isinstance(r, AnswerRejected)} == {reason}
