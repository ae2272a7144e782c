"""The training export on the repository's samples: every target's answers convert back with the card's formula into
their boxes, ``datasets`` decodes every local export, increments add only new rows, the checks hold bad rows back,
reviews and filters apply, and the LLaMA-Factory / ms-swift rows have their documented shape."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from PIL import Image
from screenmill.pipelines.export import main as export_main
from screenmill.schemas.coords import box_iou, point_in_box, smart_resize
from screenmill.stages.export.checks import ImageGroups
from screenmill.stages.export.training import TrainingConfig, export_training_local

from tests.conftest import png_bytes, ui_image
from tests.stages.export.sample_root import (
    TRUTH,
    episode_rows,
    label_row,
    sample_root,
    shot_row,
    truth_rows,
    write_root,
)

datasets = pytest.importorskip("datasets")
yaml = pytest.importorskip("yaml")
TARGETS = ("qwen2.5-vl", "qwen3-vl", "holo2", "ui-tars-1.5", "showui", "norm1000", "norm1", "pixel")


@pytest.fixture(scope="module")
def samples_out(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("samples") / "out"
    return out, sample_root(out, limit=3, per_image=6)


def _cfg(out: Path, dest: Path, **kw) -> TrainingConfig:
    return TrainingConfig(
        str(out), **{"fmt": "trl", "target": "qwen2.5-vl", "test_fraction": 0.5, **kw}, local_dir=str(dest)
    )


def _rows(dest: Path, cache: str) -> list[dict]:
    loaded = datasets.load_dataset(str(dest), cache_dir=cache)
    return [row for split in loaded for row in loaded[split]]


def _card(dest: Path) -> dict:
    return yaml.safe_load((dest / "README.md").read_text().split("---\n")[1])


def _back(conv: dict, values: list[float], w: int, h: int) -> list[float]:
    """The card's formula, from the card's own numbers: target values → original pixels."""
    if conv["system"] == "pixel_resized":
        rh, rw = smart_resize(h, w, conv["factor"], conv["min_pixels"], conv["max_pixels"])
        sx, sy = w / rw, h / rh
    else:
        sx, sy = {"norm_1000": (w / 1000, h / 1000), "norm_1": (w, h), "pixel": (1, 1)}[conv["system"]]
    return [v * (sx if i % 2 == 0 else sy) for i, v in enumerate(values)]


def _answer(row: dict) -> str:
    content = row["messages"][1]["content"]
    return content if isinstance(content, str) else content[-1]["text"]


def _expected_boxes(tables: dict) -> dict[str, tuple]:
    """label id → the box the export must answer for (the reviewer's fix where there is one)."""
    boxes = {r["label_id"]: (r["x0"], r["y0"], r["x1"], r["y1"]) for r in tables["grounding"]}
    for r in tables["reviewed"]:
        if r["verdict"] == "fix":
            boxes[r["label_id"]] = (r["x0"], r["y0"], r["x1"], r["y1"])
    return boxes


@pytest.mark.parametrize("target", TARGETS)
def test_every_exported_answer_converts_back_into_its_box(samples_out, tmp_path, offline, target):
    out, tables = samples_out
    dest = tmp_path / target
    result = export_training_local(_cfg(out, dest, target=target))
    conv = _card(dest)["screenmill"]["convention"]
    assert conv["target"] == target and conv["clamp"] and conv["rounding"] and conv["to_original_pixels"]
    rows = _rows(dest, offline)
    shots = {s["screenshot_id"]: s for s in tables["screenshots"]}
    boxes = _expected_boxes(tables)
    rejected = {r["label_id"] for r in tables["reviewed"] if r["verdict"] == "reject"}
    assert len(rows) == sum(result.new_rows.values()) == len(tables["grounding"]) - 1 - len(result.dead_letters)
    for row in rows:
        (label,) = row["label_ids"]
        assert label not in rejected
        shot = shots[row["screenshot_id"]]
        w, h = shot["width"], shot["height"]
        assert row["images"][0].size == (w, h)  # decoded by datasets
        numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", _answer(row).split("bbox_2d")[-1])]
        box = boxes[label]
        if conv["geometry"] == "box":
            assert box_iou(_back(conv, numbers[:4], w, h), box) >= 0.9
        else:
            assert point_in_box(_back(conv, numbers[-2:], w, h), box), (target, _answer(row), box)
    # whatever was held back was held back by the rounding check (the sample truth boxes are inside their images)
    assert {d.reason for d in result.dead_letters} <= {"rounding_leaves_box", "one_colour_box"}


def test_reviews_apply_and_filters_keep_only_what_was_asked(samples_out, tmp_path, offline):
    out, tables = samples_out
    reviewed = {r["label_id"]: r["verdict"] for r in tables["reviewed"]}
    result = export_training_local(_cfg(out, tmp_path / "all", target="pixel"))
    assert result.dropped == {"rejected": 1}
    verdicts = {row["label_ids"][0]: row["review"][0] for row in _rows(tmp_path / "all", offline)}
    assert {v for k, v in verdicts.items() if k in reviewed} == {"accept", "fix"}
    assert set(verdicts.values()) == {"accept", "fix", "unreviewed"}
    none = export_training_local(_cfg(out, tmp_path / "none", target="pixel", annotators=("dom", "ocr")))
    assert none.new_rows == {} and none.dropped["filtered"] == len(tables["grounding"])
    sure = export_training_local(_cfg(out, tmp_path / "sure", target="pixel", min_confidence=1.0, recipes=("x",)))
    assert sure.new_rows == {}
    small = export_training_local(_cfg(out, tmp_path / "small", target="pixel", max_file_bytes=1))  # a file a row
    assert len(list((tmp_path / "small" / "data").rglob("*.parquet"))) == sum(small.new_rows.values()) == len(verdicts)
    assert len(_rows(tmp_path / "small", offline)) == len(verdicts)


def test_per_image_rows_hold_every_instruction_and_a_second_export_adds_only_new_rows(tmp_path, offline):
    shots, labels = truth_rows(limit=2)
    out = write_root(tmp_path / "out", {"screenshots": shots, "grounding": labels})
    dest = tmp_path / "repo"
    first = export_training_local(_cfg(out, dest, target="qwen3-vl", per="image", fmt="llamafactory"))
    assert sum(first.new_rows.values()) == 2
    before = {p: p.read_bytes() for p in (dest / "data").rglob("*.parquet")}
    rows = _rows(dest, offline)
    assert sorted(len(r["label_ids"]) for r in rows) == sorted(
        sum(1 for lb in labels if lb["screenshot_id"] == s["screenshot_id"]) for s in shots
    )
    for row in rows:  # one <image> per image, in the first user turn; turns alternate user / assistant
        assert row["messages"][0]["content"].count("<image>") == len(row["images"]) == 1
        assert [m["role"] for m in row["messages"]] == ["user", "assistant"] * len(row["label_ids"])
    # day 2: one new label on an exported screenshot, one new screenshot
    more_shots, more_labels = truth_rows(limit=3)
    extra = label_row(shots[0], "the new one", (10, 10, 60, 40), run_id="20261123T080000Z-bbbbbb")
    day2 = [s for s in more_shots if s not in shots]
    write_root(out, {"screenshots": day2, "grounding": [extra] + [lb for lb in more_labels if lb not in labels]},
               day="2026-11-23", run_id="20261123T080000Z-bbbbbb")  # fmt: skip
    second = export_training_local(_cfg(out, dest, target="qwen3-vl", per="image", fmt="llamafactory"))
    assert sum(second.new_rows.values()) == 2
    assert {p: p.read_bytes() for p in before} == before  # earlier files untouched
    rows2 = _rows(dest, offline)
    assert len(rows2) == 4
    assert sorted(lb for r in rows2 for lb in r["label_ids"]) == sorted(
        lb["label_id"] for lb in labels + [extra] + [lb for lb in more_labels if lb not in labels]
    )  # every label exactly once
    # the features of LLaMA-Factory's own multimodal demo dataset (BUAADreamer/mllm_demo: its dataset card)
    feats = datasets.load_dataset(str(dest), cache_dir=offline)["train" if first.new_rows.get("train") else "test"]
    plain = {"role": datasets.Value("string"), "content": datasets.Value("string")}
    assert feats.features["messages"] == datasets.List(plain)
    assert feats.features["images"] == datasets.List(datasets.Image())
    info = json.loads((dest / "dataset_info.json").read_text())
    for entry in info.values():  # LLaMA-Factory's sharegpt + OpenAI-style tags (its data/README)
        assert entry["formatting"] == "sharegpt" and (dest / entry["file_name"]).is_dir()
        assert entry["columns"] == {"messages": "messages", "images": "images"}
        assert entry["tags"]["role_tag"] == "role" and entry["tags"]["user_tag"] == "user"
    third = export_training_local(_cfg(out, dest, target="qwen3-vl", per="image", fmt="llamafactory"))
    assert not third.changed


def test_swift_rows_ground_boxes_through_objects(samples_out, tmp_path, offline):
    out, tables = samples_out
    dest = tmp_path / "swift"
    export_training_local(_cfg(out, dest, fmt="swift", target="qwen2.5-vl", per="image"))
    boxes = _expected_boxes(tables)
    for row in _rows(dest, offline):
        obj = row["objects"]
        text = "".join(m["content"] for m in row["messages"])
        assert obj["bbox_type"] == "real"  # ms-swift: original pixels; it rescales for the model itself
        assert text.count("<ref-object>") == len(obj["ref"]) == len(obj["bbox"]) == text.count("<bbox>")
        assert text.count("<image>") == len(row["images"]) and set(obj["image_id"]) == {0}
        assert [tuple(b) for b in obj["bbox"]] == [boxes[lb] for lb in row["label_ids"]]
    export_training_local(_cfg(out, tmp_path / "swift-point", fmt="swift", target="holo2"))
    assert all(r["objects"] is None for r in _rows(tmp_path / "swift-point", offline))


def test_checks_hold_back_bad_rows_and_count_them(tmp_path, offline):
    images = tmp_path / "images"
    images.mkdir()
    paths = []
    for seed in range(4):
        paths.append(images / f"ui_{seed}.png")
        paths[-1].write_bytes(png_bytes(ui_image(640, 400, seed=seed)))
    shots = [shot_row(p) for p in paths]
    good = label_row(shots[0], "Sign in", (20, 100, 140, 140))
    outside = label_row(shots[0], "far", (600, 380, 700, 460))
    flat = label_row(shots[0], "nothing", (300, 200, 340, 240))
    tiny = label_row(shots[0], "the W", (14, 12, 17, 22))  # showui's 2 decimals: a step is 6.4 x 4 px
    missing = label_row(shots[2], "Cancel", (170, 100, 290, 140))
    changed = label_row(shots[3], "Help", (320, 100, 440, 140))
    out = write_root(
        tmp_path / "out", {"screenshots": shots, "grounding": [good, outside, flat, tiny, missing, changed]}
    )
    paths[2].unlink()
    paths[3].write_bytes(paths[3].read_bytes() + b"\0")
    result = export_training_local(_cfg(out, tmp_path / "repo", target="showui"))
    reasons = {d.input_id: d.reason for d in result.dead_letters}
    assert reasons == {
        outside["label_id"]: "box_outside_image",
        flat["label_id"]: "one_colour_box",
        tiny["label_id"]: "rounding_leaves_box",
        missing["label_id"]: "missing_image",
        changed["label_id"]: "changed_since_run",
    }
    assert sum(result.new_rows.values()) == 1
    assert "held_box_outside_image=1" in result.summary() and "rows/s" in result.summary()


def test_the_split_follows_the_image_group(tmp_path, offline):
    """Twins (a sample screenshot and its JPEG copy: other bytes, phash within 4 bits) always share a split."""
    images = tmp_path / "images"
    images.mkdir()
    shots, labels = [], []
    for png in sorted(TRUTH.glob("*.png")):
        jpg = images / f"{png.stem}.jpg"
        Image.open(png).convert("RGB").save(jpg, "JPEG", quality=85)
        for path in (png, jpg):
            shots.append(shot_row(path))
            labels.append(label_row(shots[-1], "top left", (0, 0, 200, 60)))
    out = write_root(tmp_path / "out", {"screenshots": shots, "grounding": labels})
    dest = tmp_path / "repo"
    export_training_local(_cfg(out, dest, target="pixel"))
    loaded = datasets.load_dataset(str(dest), cache_dir=offline)
    split = {r["screenshot_id"]: s for s in loaded for r in loaded[s]}
    assert set(split.values()) == {"train", "test"}
    for png, jpg in zip(shots[::2], shots[1::2], strict=True):
        assert split[png["screenshot_id"]] == split[jpg["screenshot_id"]]


def test_groups_that_earlier_exports_split_are_held_back():
    groups = ImageGroups(4)
    groups.add("a", 0b0)
    groups.add("b", 0b1111_0000)  # 4 bits from a: one group
    groups.add("c", 0b1111_1111_0000_0000)  # far from both
    splits, leaks = groups.splits({"a": "train", "b": "test"}, lambda root: "train")
    assert leaks == {"a"} and splits["c"] == "train"
    splits, leaks = groups.splits({"a": "test"}, lambda root: "train")
    assert not leaks and splits["b"] == "test"


def test_navigation_rows_carry_the_history_and_keep_repeated_screens(tmp_path, offline):
    shots, actions = episode_rows()
    # the same screen again as step 5 (the episode came back to it): it must stay a separate image
    again = dict(shots[1], step_index=5)
    shots.append(again)
    actions.append(dict(actions[0], step=5, label_id="again", screenshot_id=again["screenshot_id"]))
    out = write_root(tmp_path / "out", {"screenshots": shots, "actions": actions})
    dest = tmp_path / "nav"
    result = export_training_local(_cfg(out, dest, target="ui-tars-1.5", task="navigation", history=3))
    assert sum(result.new_rows.values()) == len(actions) == 3
    rows = {r["step"]: r for r in _rows(dest, offline)}
    by_step = {s["step_index"]: s["screenshot_id"] for s in shots}
    for step, row in rows.items():
        earlier = [by_step[s] for s in sorted(by_step) if step - 3 <= s < step]
        assert len(row["images"]) == len(earlier) + 1  # history + the current screen
        text = row["messages"][0]["content"][-1]["text"]
        assert "In open word, display gridlines" in text
        assert re.fullmatch(r"Thought: .*\nAction: click\(point='<point>\d+ \d+</point>'\)", _answer(row))
    last = rows[5]
    assert "click(point=" in last["messages"][0]["content"][-1]["text"]  # the step-1 and step-3 clicks
    sizes = [im.size for im in last["images"]]
    assert len(sizes) == 4 and last["screenshot_id"] == again["screenshot_id"]


def test_the_command_refuses_bad_settings_with_one_line(samples_out, tmp_path, capsys):
    out, _ = samples_out
    dest = tmp_path / "bad"
    assert export_main([str(out), "--format", "trl", "--local-dir", str(dest)]) == 2
    assert "--target" in capsys.readouterr().err
    assert export_main([str(out), "--format", "trl", "--target", "x", "--local-dir", str(dest)]) == 2
    assert "qwen2.5-vl" in capsys.readouterr().err  # the choices are named
    code = export_main([str(out), "--format", "trl", "--target", "holo2", "--task", "navigation", "--per", "image",
                        "--local-dir", str(dest)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--per image" in err
    assert not dest.exists()
    shutil.rmtree(tmp_path / "ok", ignore_errors=True)
    assert export_main([str(out), "--format", "trl", "--target", "holo2", "--local-dir", str(tmp_path / "ok")]) == 0
    assert (tmp_path / "ok" / "README.md").exists() and list((out / "_export").glob("training-*.json"))


def test_upload_commits_what_the_local_export_writes_and_only_new_rows(samples_out, tmp_path, monkeypatch, capsys):
    from screenmill.pipelines.selftest.fixtures import FakeHub

    out, _ = samples_out
    monkeypatch.setenv("HF_TOKEN", "hf_test_token_value")
    args = [str(out), "--format", "trl", "--target", "holo2", "--repo", "org/train", "--test-fraction", "0.5"]
    with FakeHub(files={".gitattributes": b"*.parquet filter=lfs\n"}) as hub:
        assert export_main(args) == 0
        local = tmp_path / "local"
        export_training_local(_cfg(out, local, target="holo2", repo_id="org/train"))
        expected = sorted(str(p.relative_to(local)) for p in local.rglob("*") if p.is_file())
        assert sorted(hub.commits[0]) == expected
        assert all(hub.files[p] == (local / p).read_bytes() for p in expected)
        assert export_main(args) == 0  # nothing new: no second commit
        assert len(hub.commits) == 1
    assert "nothing new" in capsys.readouterr().out


def test_a_hub_export_and_a_training_export_never_share_a_repository(samples_out, tmp_path, capsys):
    out, _ = samples_out
    hub_dir, train_dir = tmp_path / "hub", tmp_path / "train"
    assert export_main([str(out), "--local-dir", str(hub_dir)]) == 0
    assert export_main([str(out), "--format", "trl", "--target", "pixel", "--local-dir", str(hub_dir)]) == 2
    assert "holds a Hub export" in capsys.readouterr().err
    assert export_main([str(out), "--format", "trl", "--target", "pixel", "--local-dir", str(train_dir)]) == 0
    assert export_main([str(out), "--local-dir", str(train_dir)]) == 2
    assert "not a screenmill export" in capsys.readouterr().err


def test_a_recorded_key_press_is_said_by_targets_with_a_key_action_and_held_by_the_others(tmp_path, offline):
    """An explored step that pressed Escape (the app explorer's ``press_key`` row, ``{"type": "key", "key":
    "Escape"}``) becomes UI-TARS' hotkey; a grammar without keys (ShowUI: Enter only) holds it back as
    ``action_not_in_grammar`` and exports the other steps."""
    shots, actions = episode_rows()
    key = {"blocked": False, "instruction": "press Escape", "key": "Escape", "noop": False, "type": "key"}
    actions[-1] = dict(actions[-1], action_type="press_key", action_args=json.dumps(key), label_id="escape")
    out = write_root(tmp_path / "out", {"screenshots": shots, "actions": actions})
    result = export_training_local(_cfg(out, tmp_path / "uitars", target="ui-tars-1.5", task="navigation"))
    assert sum(result.new_rows.values()) == len(actions) and not result.dead_letters
    last = max(a["step"] for a in actions)
    rows = {r["step"]: r for r in _rows(tmp_path / "uitars", offline)}
    assert _answer(rows[last]).endswith("Action: hotkey(key='escape')")
    held = export_training_local(_cfg(out, tmp_path / "showui", target="showui", task="navigation"))
    assert [d.reason for d in held.dead_letters] == ["action_not_in_grammar"]
    assert sum(held.new_rows.values()) == len(actions) - 1
