"""The vLLM labelling stage's work units: instruction parsing and joining, episode step units, history text."""

from __future__ import annotations

import pytest
from screenmill.annotators.vllm.units import _EpisodeSteps, _history_text, _parse_instruction
from screenmill.stages.label.vlm import VlmConfig

from tests.stages.label.test_vlm import ENGINE, _shot


def test_instruction_lines():
    assert _parse_instruction('{"image": "a/b/login.png", "instruction": "  click   Sign in "}', "f") == (
        "login.png",
        "click Sign in",
    )
    assert _parse_instruction('{"img_filename": "x.png", "instruction": "go"}', "f") == ("x.png", "go")
    for bad in ("{", '{"image": "x.png"}', '{"image": "", "instruction": "a"}', '{"image": "x", "instruction": " "}'):
        with pytest.raises(ValueError, match="bad instruction line"):
            _parse_instruction(bad, "f")


def test_episode_steps_carry_task_history_and_previous_frames():
    shots = [_shot(step=i, episode="e", task="buy milk", action=f'[{{"a":{i}}}]', sha=f"{i}" * 64) for i in range(5)]
    units = list(_EpisodeSteps(VlmConfig(run_id="r", config_hash="h", engine=ENGINE, history=3)).process(
        ("e", list(reversed(shots)))
    ))  # fmt: skip
    assert [u.shot.step_index for u in units] == [0, 1, 2, 3, 4]
    assert [len(u.history) for u in units] == [0, 1, 2, 3, 3]
    assert [s.step_index for s in units[4].history] == [1, 2, 3]
    fields = dict(units[2].fields)
    assert fields["task"] == "buy milk"
    assert fields["history"] == 'step 0: [{"a":0}]; step 1: [{"a":1}]'
    assert dict(units[0].fields)["history"] == "none"


def test_episode_without_task_is_dead_lettered():
    fn = _EpisodeSteps(VlmConfig(run_id="r", config_hash="h", engine=ENGINE))
    fn.setup()
    out = list(fn.process(("e", [_shot(step=0, episode="e"), _shot(step=1, episode="e")])))
    assert [o.value.reason for o in out] == ["episode_without_task"] * 2
    assert out[1].value.input_id == "e#step=1"


def test_history_text_is_bounded():
    shots = [_shot(step=i, episode="e", action="x" * 500) for i in range(10)]
    text = _history_text(shots)
    assert len(text) <= 1201 and text.startswith("…")
    assert _history_text([_shot(step=0, episode="e")]) == "none"


def test_repeated_instruction_lines_are_labelled_once_and_each_repeat_is_dead_lettered():
    from apache_beam.pvalue import TaggedOutput
    from screenmill.annotators.vllm.units import _JoinInstructions, _OneRequestPerInstruction

    cfg = VlmConfig(run_id="r", config_hash="h", engine=ENGINE, recipe="holo2-localize", instructions="i.jsonl")
    join, once = _JoinInstructions(cfg), _OneRequestPerInstruction(cfg)
    join.setup()
    once.setup()
    shot = _shot()
    by_name = ["click Save", "open the menu", "click Save"]
    by_id = ["click Save"]  # the same screenshot named by its content id on another line
    units = [*join.process(("0.png", {"shots": [shot], "instructions": by_name}))]
    units += join.process((shot.screenshot_id, {"shots": [shot], "instructions": by_id}))
    assert len(units) == 4 and not any(isinstance(u, TaggedOutput) for u in units)
    groups: dict[str, list] = {}
    for u in units:
        groups.setdefault(u.key, []).append(u)
    out = [o for key, group in sorted(groups.items()) for o in once.process((key, group))]
    work = [o for o in out if not isinstance(o, TaggedOutput)]
    dead = [o.value for o in out if isinstance(o, TaggedOutput)]
    assert sorted(w.fields for w in work) == [(("instruction", "click Save"),), (("instruction", "open the menu"),)]
    assert [d.reason for d in dead] == ["duplicate_instruction"] * 2
    assert len({d.input_id for d in dead}) == 2 and all("click Save" in d.input_id for d in dead)
    assert len(work) + len(dead) == len(by_name) + len(by_id)
    orphans = list(join.process(("gone.png", {"shots": [], "instructions": ["a", "a"]})))
    assert sorted(o.value.reason for o in orphans) == ["duplicate_instruction", "instruction_without_image"]


def test_a_task_recipe_makes_one_unit_per_episode_with_four_frames_and_the_action_list():
    explored = [
        '{"action":"click_element","type":"click","x":10,"y":20,"role":"link","name":"Pricing","noop":false,'
        '"blocked":false}',
        '{"action":"write_element_abs","type":"type","x":5,"y":5,"content":"Lyon","role":"textbox","name":"City",'
        '"noop":true,"blocked":false}',
        '{"action":"click_element","x":100,"y":50}',  # a recorded action in the generic format: described
    ] + [None] * 5
    shots = [_shot(step=i, episode="e", action=a, sha=f"{i}" * 64) for i, a in enumerate(explored)]
    fn = _EpisodeSteps(VlmConfig(run_id="r", config_hash="h", engine=ENGINE, recipe="synthesize-task"))
    fn.setup()
    (unit,) = list(fn.process(("e", list(reversed(shots)))))
    assert unit.key == "e#task" and unit.shot.step_index == 7
    assert [s.step_index for s in unit.history] == [0, 2, 5]
    lines = dict(unit.fields)["actions"].split("\n")
    assert lines[:2] == ['1. click the "Pricing" link', '2. type "Lyon" into the "City" field (nothing changed)']
    assert lines[2].startswith("3. click_element at x=") and len(lines) == 3

    bad = [_shot(step=0, episode="b", action="{not json"), _shot(step=1, episode="b")]
    out = list(fn.process(("b", bad)))
    assert [o.value.reason for o in out] == ["bad_recorded_action"] and out[0].value.input_id == "b#step=0"


def test_packs_hold_up_to_k_of_a_screenshots_instructions_in_order():
    from screenmill.annotators.vllm.units import Work, _packs

    shot = _shot()
    units = [Work(f"{shot.screenshot_id}#{t}", shot, fields=(("instruction", t),)) for t in "edcba"]
    packs = list(_packs((shot.screenshot_id, units), 2))
    assert [w.key for w in packs] == [f"{shot.screenshot_id}#pack={i}" for i in range(3)]
    assert [[dict(u.fields)["instruction"] for u in w.pack] for w in packs] == [["a", "b"], ["c", "d"], ["e"]]
    assert all(w.shot is shot and not w.fields for w in packs)


def test_instructions_about_a_file_skipped_as_done_are_counted_not_dead_lettered():
    from screenmill.annotators.vllm.units import _JoinInstructions

    cfg = VlmConfig(run_id="r", config_hash="h", engine=ENGINE, recipe="holo2-localize", instructions="i.jsonl")
    join = _JoinInstructions(cfg)
    join.setup()
    assert list(join.process(("0.png", {"shots": [], "instructions": ["a", "b"], "done": [True]}))) == []
    (orphan,) = join.process(("gone.png", {"shots": [], "instructions": ["a"], "done": []}))
    assert orphan.value.reason == "instruction_without_image"
