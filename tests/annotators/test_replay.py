"""Replay's reading of an output's episodes (pure): frames by step, their recorded actions, what counts as a match.
The replays themselves run real sessions: tests/stages/test_render_apps.py (apps), tests/stages/test_explore.py
(pages)."""

from __future__ import annotations

import json

import pytest
from screenmill.annotators.replay import Replayed, episodes, recorded_actions, replay_episode


def _frame(eid, step, action=None, sid=None):
    return {
        "episode_id": eid,
        "step_index": step,
        "screenshot_id": sid or f"{eid}-{step}",
        "page_uri": "app:calc",
        "recorded_action": json.dumps(action) if action is not None else None,
    }


def test_episodes_group_frames_by_step_and_leave_plain_screenshots_out():
    click = {"type": "click", "x": 1, "y": 2}
    rows = [_frame("b", 1), _frame("a", 1), _frame("a", 0, click), {"episode_id": None, "step_index": None}]
    rows.append(_frame("a", 0, click, sid="other"))  # a second occurrence of a step: the first is kept
    got = episodes(rows)
    assert list(got) == ["a", "b"] and [f["step_index"] for f in got["a"]] == [0, 1]
    assert got["a"][0]["screenshot_id"] == "a-0"
    assert recorded_actions(got["a"]) == [click]


@pytest.mark.parametrize(
    "frames, why",
    [
        ([_frame("a", 0, {"type": "click"}), _frame("a", 2)], "not 0..1"),
        ([_frame("a", 0), _frame("a", 1)], "step 0 has no explored recorded action"),
        ([_frame("a", 0, {"action": "click_element"}), _frame("a", 1)], "step 0 has no explored"),
    ],
)
def test_an_episode_that_cannot_be_replayed_says_why(frames, why):
    with pytest.raises(ValueError, match=why):
        recorded_actions(frames)
    got = replay_episode(frames)  # an error, no session started
    assert got.error and why.split()[-1] in got.error and not got.ok


def test_a_replay_matches_only_when_every_frame_hashes_the_same():
    assert Replayed("e", "app:x", ["a", "b", "c"], ["a", "b", "c"]).ok
    assert Replayed("e", "app:x", ["a", "b", "c"], ["a", "x", "c"]).mismatched == [1]
    assert Replayed("e", "app:x", ["a", "b", "c"], ["a"]).mismatched == [1, 2]  # frames not reached
    assert Replayed("e", "app:x", ["a"], ["a", "b"]).mismatched == [1]
    assert not Replayed("e", "app:x", ["a"], ["a"], "app_timeout: hung").ok
