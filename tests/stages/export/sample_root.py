"""An output root made of the repository's samples: the ``samples/truth`` screenshots with their truth boxes as
``grounding`` rows, the ``samples/episodes`` ScreenAgent episode with its recorded actions as ``actions`` rows, and a
few reviews (accept, fix, reject). Real images, real Parquet shards, one run manifest."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image
from screenmill.annotators.recorded import ui_actions
from screenmill.schemas.keys import stable_id
from screenmill.schemas.records import ActionStep, GroundingLabel, ReviewedLabel, Screenshot

from tests.conftest import SAMPLES

RUN = "20261122T080000Z-aaaaaa"
WHEN_RUN = dt.datetime(2026, 11, 22, 8, 0, tzinfo=dt.UTC)
DAY = "2026-11-22"
TRUTH = SAMPLES / "truth"
EPISODE = SAMPLES / "episodes" / "screenagent_task002"
RECORDS = {"screenshots": Screenshot, "grounding": GroundingLabel, "actions": ActionStep, "reviewed": ReviewedLabel}


def shot_row(path: Path, run_id: str = RUN, episode=None, step=None, task=None, action=None) -> dict:
    data = path.read_bytes()
    with Image.open(path) as im:
        w, h, fmt, mode = im.width, im.height, im.format, im.mode
    sid = hashlib.sha256(data).hexdigest()
    return Screenshot(
        sid, str(path), w, h, fmt, mode, 1, len(data), WHEN_RUN, run_id, episode, step, None, task, action
    ).to_row()


def label_row(shot: dict, instruction: str, box, run_id: str = RUN, annotator: str = "truth", n: int = 0) -> dict:
    x0, y0, x1, y1 = box
    label_id = GroundingLabel.make_id(shot["screenshot_id"], annotator, "1", instruction, n)
    w, h = shot["width"], shot["height"]
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return GroundingLabel(
        label_id, shot["screenshot_id"], w, h, instruction, instruction, None, x0, y0, x1, y1, cx, cy,
        "pixel", None, None, w, h, 1.0, annotator, "1", "screenspot-truth", "1", "cfg", run_id,
    ).to_row()  # fmt: skip


def review_row(label: dict, verdict: str, n: int, box=None) -> dict:
    fix = list(box) if box else [None] * 4
    click = [(fix[0] + fix[2]) / 2, (fix[1] + fix[3]) / 2] if box else [None, None]
    return ReviewedLabel(
        label["label_id"], label["screenshot_id"], verdict, None, *fix, *click, "rev", 2.0, n, n, WHEN_RUN, "rv"
    ).to_row()


def truth_rows(limit: int | None = None, per_image: int | None = None) -> tuple[list[dict], list[dict]]:
    """Screenshots and grounding rows of ``samples/truth`` (``limit`` images, ``per_image`` labels each, at most)."""
    shots, labels, seen = {}, [], {}
    for line in (TRUTH / "truth.jsonl").read_text().splitlines():
        t = json.loads(line)
        name = t["img_filename"]
        if name not in shots:
            if limit is not None and len(shots) >= limit:
                continue
            shots[name] = shot_row(TRUTH / name)
        if (
            per_image is not None
            and sum(1 for lb in labels if lb["screenshot_id"] == shots[name]["screenshot_id"]) >= per_image
        ):
            continue
        x, y, w, h = t["bbox"]
        n = seen.get((name, t["instruction"]), 0)
        seen[(name, t["instruction"])] = n + 1
        labels.append(label_row(shots[name], t["instruction"], (x, y, x + w, y + h), n=n))
    return list(shots.values()), labels


def episode_rows(run_id: str = RUN) -> tuple[list[dict], list[dict]]:
    """Screenshots (steps) and recorded ``actions`` rows of the sample ScreenAgent episode."""
    meta = json.loads((EPISODE / "episode.json").read_text())
    shots, actions = [], []
    for line in (EPISODE / "steps.jsonl").read_text().splitlines():
        step = json.loads(line)
        recorded = json.dumps(step["actions"])
        row = shot_row(
            EPISODE / step["screenshot"], run_id, meta["episode_id"], step["step"], meta["task_en"], recorded
        )
        shots.append(row)
        for a in ui_actions(recorded):
            args = json.dumps(a.args)
            label_id = stable_id(meta["episode_id"], step["step"], a.action_type, args)
            actions.append(
                ActionStep(
                    meta["episode_id"],
                    step["step"],
                    label_id,
                    row["screenshot_id"],
                    a.action_type,
                    args,
                    "open the menu",
                    "recorded",
                    "recorded",
                    "1",
                    "1",
                    run_id,
                ).to_row()  # fmt: skip
            )
    return shots, actions


def write_root(out: Path, tables: dict[str, list[dict]], day: str = DAY, run_id: str = RUN) -> Path:
    """Write ``tables`` as one day's shards of ``out`` plus a run manifest; returns ``out``."""
    for table, rows in tables.items():
        folder = out / table / f"dt={day}"
        folder.mkdir(parents=True, exist_ok=True)
        schema = RECORDS[table].SCHEMA
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / f"part-{run_id}-00000-of-00001.parquet")
    (out / "_runs").mkdir(parents=True, exist_ok=True)
    manifest = {"run_id": run_id, "dt": day, "input": str(SAMPLES), "output": str(out), "annotator": "none"}
    (out / "_runs" / f"{run_id}.json").write_text(json.dumps(manifest))
    return out


def sample_root(out: Path, limit: int | None = None, per_image: int | None = None) -> dict:
    """The whole sample root (truth + episode + reviews); returns its rows by table."""
    shots, labels = truth_rows(limit, per_image)
    steps, actions = episode_rows()
    x0, y0, x1, y1 = labels[1]["x0"], labels[1]["y0"], labels[1]["x1"], labels[1]["y1"]
    reviews = [
        review_row(labels[0], "accept", 1),
        review_row(labels[1], "fix", 2, (x0 + 1, y0 + 1, x1 - 1, y1 - 1)),
        review_row(labels[2], "reject", 3),
    ]
    tables = {"screenshots": shots + steps, "grounding": labels, "actions": actions, "reviewed": reviews}
    write_root(out, tables)
    return tables
