"""Training export: image(s) + conversation per row, in a target model's coordinates and a trainer's format.

``screenmill export OUT --format trl|llamafactory|swift --target T [--task grounding|navigation] [--per
instruction|image] (--local-dir D | --repo ORG/NAME)``. Layout (an upload and ``--local-dir`` alike)::

    README.md                                   the card: configs, features, the coordinate convention exactly
                                                (factor, min/max pixels, rounding, clamp, range) and the formula back
    data/<split>/<batch>-<chunk>.parquet        the rows (:mod:`screenmill.stages.export.trainers`), images inside
    dataset_info.json                           (llamafactory) LLaMA-Factory's entries: ``data/train``, ``data/test``
    _screenmill/training-index.parquet          one row per exported label / action: row key, split, file, phash
    _screenmill/training.json                   the settings (format, target, task, per, split) and the batches

Rows: ``grounding`` ``--per instruction`` one label per row; ``--per image`` one row per screenshot, its labels as
turns (a later export's new labels of that screenshot make a new row); ``navigation`` one row per ``actions`` step
(``step >= 0``) with up to ``history`` previous screenshots of the episode, oldest first, then the current one
(repeats stay: never de-duplicated inside an episode), and the previous steps' actions in the target's grammar.

Reviews apply as in ``screenmill convert --reviewed apply`` (:func:`screenmill.annotators.formats.apply_review`):
corrections of ``fix`` reviews win, ``reject`` ed labels are left out (counted ``dropped_rejected``). Filters:
``annotators``, ``recipes``, ``min_confidence``. Checks before writing: :mod:`screenmill.stages.export.checks`; every
row held back is a dead letter of stage ``export/training``. Incremental: the index names what is exported; a later
export writes only new rows into new files, and refuses other settings (format, target, task, per, history, split).
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import tempfile
import time
from collections import Counter, defaultdict
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from screenmill.annotators.formats import apply_review
from screenmill.annotators.targets import Unspeakable, get_target
from screenmill.schemas import phash as ph
from screenmill.schemas.keys import stable_id
from screenmill.schemas.records import DeadLetter, utcnow
from screenmill.schemas.reviews import latest_reviews
from screenmill.schemas.tables import read_shards
from screenmill.stages.export.checks import (
    ImageGroups,
    Images,
    box_outside,
    one_colour,
    point_outside,
    rounding_error,
)
from screenmill.stages.export.config import TrainingConfig
from screenmill.stages.export.hub import SPLITS, _write_file, split_of
from screenmill.stages.export.repo import STATE_PATH, ExportError, local_files
from screenmill.stages.export.trainers import Sample, Turn, dataset_info, features, render

STAGE = "export/training"
INDEX = "_screenmill/training-index.parquet"
STATE = "_screenmill/training.json"
INFO = "dataset_info.json"
ZSTD = "zstd"
CARD = "README.md"
INDEX_SCHEMA = pa.schema(
    [
        ("key", pa.string()),
        ("unit", pa.string()),
        ("split", pa.string()),
        ("file", pa.string()),
        ("screenshot_id", pa.string()),
        ("phash", pa.string()),
        ("annotator", pa.string()),
        ("review", pa.string()),
    ]
)


@dataclasses.dataclass(frozen=True)
class TrainingResult:
    """What one training export did: files, rows new / in total per split, the rows held back and why, figures."""

    batch: str
    written: list[str]
    new_rows: dict[str, int]
    total_rows: dict[str, int]
    dead_letters: list[DeadLetter]
    dropped: dict[str, int]
    seconds: float
    data_bytes: int
    target: str = ""
    commit_url: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.written)

    def summary(self) -> str:
        """The lines a person reads: rows per split, held back per reason, rows/s and bytes/row."""
        new = sum(self.new_rows.values())
        lines = [f"screenmill export {self.batch} -> {self.target}"]
        lines += [f"  {s:<6} new {self.new_rows.get(s, 0):>7} total {self.total_rows.get(s, 0):>7}" for s in SPLITS]
        held = Counter(d.reason for d in self.dead_letters)
        if held or self.dropped:
            counts = {
                **{f"held_{r}": n for r, n in held.items()},
                **{f"dropped_{r}": n for r, n in self.dropped.items()},
            }
            lines.append("not exported: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
        rate = new / self.seconds if self.seconds > 0 else 0.0
        lines.append(f"{rate:.1f} rows/s, {self.data_bytes // max(new, 1)} bytes/row")
        if not self.changed:
            lines.append("nothing new: the repository is up to date")
        return "\n".join(lines)


def _dead(key: str, stage: str, reason: str, error: str, ref: str) -> DeadLetter:
    """A unit (label or action, its index ``key``) held back: stage ``export/training``, no run id."""
    return DeadLetter(key, stage, reason, error, ref, "", utcnow())


def _load_previous(files: set[str], read) -> tuple[pa.Table, dict[str, Any]]:
    if STATE_PATH in files:
        raise ExportError(f"the destination holds a Hub export ({STATE_PATH}); export for training elsewhere")
    if STATE not in files:
        if any(p.startswith("data/") for p in files):
            raise ExportError(f"the destination has data/ files but no {STATE}: not a screenmill training export")
        return INDEX_SCHEMA.empty_table(), {}
    return pq.read_table(io.BytesIO(read(INDEX)), schema=INDEX_SCHEMA), json.loads(read(STATE))


def build_training(cfg: TrainingConfig, files: set[str], read, dest: str) -> TrainingResult:
    """Write the new rows of ``cfg.output`` under ``dest``, then the index, state, card (and ``dataset_info.json``).

    Args:
        cfg: the settings.
        files, read: the destination's file list and a reader of its files (what earlier exports left).
        dest: the local folder to write into (the repository itself, or a staging folder for an upload).

    Raises:
        ExportError: the destination holds another kind of dataset or was exported with other settings.
        ImportError: ``datasets`` is not installed.
    """
    start = time.perf_counter()
    index, state = _load_previous(files, read)
    if state and state.get("settings") != cfg.settings:
        raise ExportError(f"the destination was exported with {state.get('settings')}; repeat those settings")
    plan = _Plan(cfg, index)
    samples, dead = plan.samples()
    feats = features(cfg.fmt)
    seq = len(state.get("batches", [])) + 1
    batch = f"{seq:05d}-{stable_id(sorted(k for k, _, _, _ in samples))[:8]}"
    new_files, new_index, data_bytes = _write_rows(cfg, dest, batch, samples, feats, plan.images)
    all_files = {**state.get("files", {}), **new_files}
    totals, sizes = Counter(), Counter()
    for f in all_files.values():
        totals[f["split"]] += f["rows"]
        sizes[f["split"]] += f.get("num_bytes", f["size"])
    new_rows = Counter()
    for f in new_files.values():
        new_rows[f["split"]] += f["rows"]
    written: list[str] = []
    if new_files or not state:
        from screenmill.stages.export.card import render_training_card

        target = get_target(cfg.target)
        batches = state.get("batches", []) + ([{"batch": batch, "files": sorted(new_files)}] if new_files else [])
        state = {
            "format": 1,
            "settings": cfg.settings,
            "convention": target.convention(),
            "checks": {k: getattr(cfg, k) for k in ("box_slack", "flat_tolerance", "min_iou", "phash_bits")},
            "name": cfg.name,
            "pretty_name": cfg.pretty_name or cfg.name.split("/")[-1],
            "license": cfg.license,
            "batches": batches,
            "files": all_files,
        }
        table = pa.concat_tables([index, pa.Table.from_pylist(new_index, schema=INDEX_SCHEMA)]).sort_by("key")
        _write_file(dest, INDEX, lambda f: pq.write_table(table, f, compression="zstd"))
        _write_file(dest, STATE, lambda f: f.write(json.dumps(state, indent=1, sort_keys=True).encode()))
        card = render_training_card(state, dict(totals), dict(sizes), feats)
        _write_file(dest, CARD, lambda f: f.write(card.encode("utf-8")))
        written = sorted(new_files) + [CARD, INDEX, STATE]
        if cfg.fmt == "llamafactory":
            info = dataset_info(cfg.name.replace("/", "_"), [s for s in SPLITS if totals.get(s)])
            _write_file(dest, INFO, lambda f: f.write(json.dumps(info, indent=1).encode()))
            written.append(INFO)
    where = cfg.local_dir or f"hf://datasets/{cfg.repo_id}"
    seconds = time.perf_counter() - start
    return TrainingResult(
        batch, written, dict(new_rows), dict(totals), dead, dict(plan.dropped), seconds, data_bytes, where
    )


def _write_rows(cfg, dest, batch, samples, feats, images):
    """``(key, split, sample, index rows)`` → Parquet files per split, cut at ``max_file_rows`` rows or
    ``max_file_bytes`` image bytes; a sample's image ids become their bytes (``images``) only as its file is written.
    Returns (files, index rows, bytes written)."""
    by_split: dict[str, list] = defaultdict(list)
    for item in sorted(samples, key=lambda s: s[0]):
        by_split[item[1]].append(item)
    files, index, total = {}, [], 0

    def flush(split: str, chunk: int, rows: list, part: list) -> None:
        nonlocal total
        path = f"data/{split}/{batch}-{chunk:05d}.parquet"
        table = pa.Table.from_pylist(rows, schema=feats.arrow_schema)
        size = _write_file(dest, path, lambda f: pq.write_table(table, f, row_group_size=100, compression=ZSTD))
        total += size
        files[path] = {"split": split, "rows": table.num_rows, "num_bytes": table.nbytes, "size": size}
        index.extend({**r, "file": path} for _, _, _, entries in part for r in entries)

    for split, items in sorted(by_split.items()):
        chunk, rows, part, held = 0, [], [], 0
        for item in items:
            sample = item[2]
            pics = tuple((images.data(s), images.get(s).name) for s in sample.images)
            rows.append(render(cfg.fmt, dataclasses.replace(sample, images=pics)))
            part.append(item)
            held += sum(len(d) for d, _ in pics)
            if len(rows) >= cfg.max_file_rows or held >= cfg.max_file_bytes:
                flush(split, chunk, rows, part)
                chunk, rows, part, held = chunk + 1, [], [], 0
        if rows:
            flush(split, chunk, rows, part)
    return files, index, total


class _Plan:
    """Which units (labels or actions) are new, which pass the checks, and the samples they make."""

    def __init__(self, cfg: TrainingConfig, index: pa.Table):
        self.cfg, self.target = cfg, get_target(cfg.target)
        self.done = set(index.column("unit").to_pylist())
        self.dropped: Counter[str] = Counter()
        self.shots: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.episodes: dict[str, dict[int, str]] = defaultdict(dict)
        self.tasks: dict[str, str] = {}
        for row in sorted(read_shards(cfg.output, "screenshots", cfg.dt).to_pylist(), key=lambda r: r["run_id"]):
            self.shots[row["screenshot_id"]].append(row)
            if row["episode_id"] and row["step_index"] is not None:
                self.episodes[row["episode_id"]].setdefault(row["step_index"], row["screenshot_id"])
                if row["episode_task"]:
                    self.tasks.setdefault(row["episode_id"], row["episode_task"])
        self.images = Images(self.shots)
        self.groups = ImageGroups(cfg.phash_bits)
        previous: dict[str, str] = {}
        for row in index.select(["screenshot_id", "phash", "split"]).to_pylist():
            if row["screenshot_id"] not in previous:
                previous[row["screenshot_id"]] = row["split"]
                self.groups.add(row["screenshot_id"], ph.from_hex(row["phash"]))
        self.previous = previous
        for steps in self.episodes.values():
            self.groups.link(steps.values())

    def _split_fn(self, root: str) -> str:
        return split_of(root, self.cfg.test_fraction, self.cfg.seed)

    def _keep(self, row: dict[str, Any]) -> bool:
        cfg = self.cfg
        if cfg.annotators is not None and row["annotator"] not in cfg.annotators:
            self.dropped["filtered"] += 1
            return False
        if cfg.recipes is not None and row.get("recipe") not in cfg.recipes:
            self.dropped["filtered"] += 1
            return False
        if cfg.min_confidence is not None and row.get("confidence", 1.0) < cfg.min_confidence:
            self.dropped["filtered"] += 1
            return False
        return True

    def _labels(self) -> list[tuple[dict[str, Any], str]]:
        """New labels that pass the filters and the review, with their review verdict; in label order."""
        rows = read_shards(self.cfg.output, "grounding", self.cfg.dt).to_pylist()
        reviews = latest_reviews(read_shards(self.cfg.output, "reviewed", self.cfg.dt).to_pylist())
        first: dict[str, dict[str, Any]] = {}
        for row in sorted(rows, key=lambda r: r["run_id"]):
            first.setdefault(row["label_id"], row)
        out = []
        for label_id, row in sorted(first.items()):
            if label_id in self.done or not self._keep(row):
                continue
            review = reviews.get(label_id)
            fixed, why = apply_review(row, review, "apply")
            if fixed is None:
                self.dropped[why] += 1
                continue
            out.append((fixed, review["verdict"] if review else "unreviewed"))
        return out

    def samples(self) -> tuple[list, list[DeadLetter]]:
        """``[(row key, split, Sample, index rows)]`` of the rows to write, and the dead letters of the others."""
        units = list(self._label_units(self._labels())) if self.cfg.task == "grounding" else self._actions()
        units.sort(key=lambda u: (u[2][-1] if u[2] else "", u[0]))  # by screenshot: its frame is read once a pass
        for unit in units:  # read every image a unit needs first: the groups need every hash before any split
            for sid in unit[2]:
                image = self.images.get(sid)
                if image is not None and sid not in self.previous:
                    self.groups.add(sid, image.phash)
        splits, leaks = self.groups.splits(self.previous, self._split_fn)
        dead: list[DeadLetter] = []
        good = []
        for key, make, sids, meta in units:
            if not sids:
                dead.append(_dead(key, STAGE, "missing_screenshot", "the step has no screenshot", key))
                continue
            lost = [s for s in sids if s in self.images.lost]
            if lost:
                reason, error = self.images.lost[lost[0]]
                dead.append(_dead(key, STAGE, reason, error, lost[0]))
                continue
            sid = sids[-1]
            if self.groups.root(sid) in leaks:
                dead.append(
                    _dead(key, STAGE, "split_leak", f"screenshot {sid}'s group is in both splits already", sid)
                )
                continue
            try:
                turn = make()
            except _Held as e:
                dead.append(_dead(key, STAGE, e.reason, e.message, sid))
                continue
            good.append((key, splits[sid], sid, sids, turn, meta))
        return self._assemble(good), dead

    def _assemble(self, good: list) -> list:
        out = []
        if self.cfg.per == "image":
            per_shot: dict[str, list] = defaultdict(list)
            for item in good:
                per_shot[item[2]].append(item)
            groups = [items for _, items in sorted(per_shot.items())]
        else:
            groups = [[item] for item in good]
        for items in groups:
            split, sid, sids = items[0][1], items[0][2], items[0][3]
            image = self.images.get(sid)
            metas = [m for *_, m in items]
            provenance = {
                "screenshot_id": sid,
                "label_ids": [m["label_id"] for m in metas],
                "annotator": [m["annotator"] for m in metas],
                "recipe": [m["recipe"] for m in metas],
                "review": [m["review"] for m in metas],
                "episode_id": metas[0].get("episode_id"),
                "step": metas[0].get("step"),
                "target": self.target.name,
            }
            sample = Sample(tuple(sids), tuple(t for *_, t, _ in items), provenance)
            key = items[0][0] if len(items) == 1 else stable_id(sid, [k for k, *_ in items])
            index = [
                {
                    "key": key,
                    "unit": k,
                    "split": split,
                    "screenshot_id": sid,
                    "phash": ph.to_hex(image.phash),
                    "annotator": m["annotator"],
                    "review": m["review"],
                }
                for k, *_, m in items
            ]
            out.append((key, split, sample, index))
        return out

    # -------------------------------------------------------------------------------------------- grounding

    def _grounding_turn(self, label: dict[str, Any]) -> Turn:
        cfg, target = self.cfg, self.target
        frame = self.images.frame(label["screenshot_id"])
        width, height = frame.size
        if (label["image_width"], label["image_height"]) != (width, height):
            raise _Held("box_outside_image", f"label is for a {label['image_width']}x{label['image_height']} image")
        box = (label["x0"], label["y0"], label["x1"], label["y1"])
        point = (label["click_x"], label["click_y"])
        why = box_outside(box, width, height, cfg.box_slack)
        if why:
            raise _Held("box_outside_image", why)
        if one_colour(frame, box, cfg.flat_tolerance):
            raise _Held("one_colour_box", f"box {list(box)} is one colour")
        values, why = rounding_error(target, box, point, width, height, cfg.min_iou)
        if why:
            raise _Held("rounding_leaves_box", why)
        instruction = label["instruction"]
        return Turn(
            target.grounding_prompt(instruction),
            target.grounding_answer(instruction, values),
            ref=instruction,
            bbox=tuple(box) if target.geometry == "box" else None,
            swift_prompt=target.grounding_prompt("<ref-object>"),
        )

    def _label_units(self, labels):
        for label, verdict in labels:
            meta = {
                "label_id": label["label_id"],
                "annotator": label["annotator"],
                "recipe": label["recipe"],
                "review": verdict,
            }
            yield label["label_id"], (lambda lb=label: self._grounding_turn(lb)), [label["screenshot_id"]], meta

    # ------------------------------------------------------------------------------------------- navigation

    def _actions(self) -> list:
        rows = read_shards(self.cfg.output, "actions", self.cfg.dt).to_pylist()
        first: dict[tuple, dict[str, Any]] = {}
        for row in sorted(rows, key=lambda r: r["run_id"]):
            if row["step"] >= 0:
                first.setdefault((row["episode_id"], row["step"], row["label_id"]), row)
        by_step: dict[tuple, dict[int, dict[str, Any]]] = defaultdict(dict)
        for (episode, step, _), row in sorted(first.items()):
            by_step[(episode, row["annotator"])].setdefault(step, row)
        units = []
        for (episode, step, label_id), row in sorted(first.items()):
            key = json.dumps([episode, step, label_id], separators=(",", ":"))
            if key in self.done or not self._keep(row):
                continue
            steps = self.episodes.get(episode, {})
            sid = row["screenshot_id"] or steps.get(step)
            if sid is None:
                units.append((key, None, [], {}))
                continue
            earlier = [steps[s] for s in sorted(steps) if step - self.cfg.history <= s < step]
            history = [r for s, r in sorted(by_step[(episode, row["annotator"])].items()) if s < step]
            meta = {
                "label_id": key,
                "annotator": row["annotator"],
                "recipe": row["source"],
                "review": "unreviewed",
                "episode_id": episode,
                "step": step,
            }
            units.append((key, (lambda r=row, s=sid, h=history: self._step_turn(r, s, h)), earlier + [sid], meta))
        return units

    def _say(self, row: dict[str, Any], sid: str | None) -> str:
        image = self.images.get(sid) if sid else None
        width, height = image.size if image else (1000, 1000)
        return self.target.action(row["action_type"], json.loads(row["action_args"]), width, height, row["thought"])

    def _step_turn(self, row: dict[str, Any], sid: str, history: list[dict[str, Any]]) -> Turn:
        width, height = self.images.get(sid).size
        args = json.loads(row["action_args"])
        if "x" in args and "y" in args:
            why = point_outside((args["x"], args["y"]), width, height, self.cfg.box_slack)
            if why:
                raise _Held("box_outside_image", why)
        try:
            answer = self._say(row, sid)
        except Unspeakable as e:
            raise _Held("action_not_in_grammar", str(e)) from None
        steps = self.episodes.get(row["episode_id"], {})
        said = []
        for h in history:
            try:
                said.append(self._say(h, h["screenshot_id"] or steps.get(h["step"])).replace("\n", " "))
            except Unspeakable:
                said.append(h["action_type"])
        task = self.tasks.get(row["episode_id"], "")
        return Turn(self.target.navigation_prompt(task, said), answer)


class _Held(Exception):
    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason, self.message = reason, message


def export_training_local(cfg: TrainingConfig) -> TrainingResult:
    """Export into ``cfg.local_dir`` (the repository an upload would make, grown in place)."""
    os.makedirs(cfg.local_dir, exist_ok=True)

    def read(path: str) -> bytes:
        with open(os.path.join(cfg.local_dir, *path.split("/")), "rb") as f:
            return f.read()

    return build_training(cfg, set(local_files(cfg.local_dir)), read, cfg.local_dir)


def export_training_hub(cfg: TrainingConfig, repo) -> TrainingResult:
    """Export to the Hub through ``repo`` (:class:`screenmill.stages.export.hub.HubRepo`): one commit, what is new."""
    with tempfile.TemporaryDirectory(prefix="screenmill-training-") as tmp:
        download, staging = os.path.join(tmp, "previous"), os.path.join(tmp, "staging")
        files = set(repo.files(cfg.private))
        result = build_training(cfg, files, lambda path: repo.read(path, download), staging)
        if not result.changed:
            return result
        added = sum(result.new_rows.values())
        url = repo.commit(staging, result.written, f"screenmill export {result.batch}: +{added} {cfg.task} rows")
        return dataclasses.replace(result, commit_url=url)


def write_training_report(output: str, result: TrainingResult) -> str:
    """``OUT/_export/training-<UTC stamp>-<batch>.json``: the result and every dead letter; returns its path."""
    import datetime as _dt

    from apache_beam.io.filesystems import FileSystems
    from screenmill.schemas import tables

    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    path = tables.report_path(output, "export", f"training-{stamp}-{result.batch}.json")
    report = {**dataclasses.asdict(result), "dead_letters": [d.to_json_row() for d in result.dead_letters]}
    report["held_back"] = dict(Counter(d.reason for d in result.dead_letters))
    with FileSystems.create(path) as f:
        f.write(json.dumps(report, indent=2, sort_keys=True, default=str).encode("utf-8"))
    return path
