"""The export's settings (:class:`ExportConfig`; :class:`TrainingConfig` for ``--format``), apart from the exporters
so that ``screenmill export`` can read its defaults and check its command line without importing Beam or pyarrow
(:mod:`screenmill.stages.export.hub` and :mod:`screenmill.stages.export.training` do the work)."""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Any

from screenmill.annotators.targets import TARGETS

SPLIT_UNIT = "episode_id, else screenshot_id"

_REPO_RE = re.compile(r"[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}")
_LICENSE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+-]*")


@dataclasses.dataclass(frozen=True)
class ExportConfig:
    """What to export, where to, and how to split.

    Attributes:
        output: the screenmill output root to read (local path or any Beam FileSystems URI).
        repo_id: ``ORG/NAME`` of the Hub dataset repository; required unless ``local_dir`` is set.
        local_dir: write the repository into this local folder instead of uploading (``repo_id`` then only names
            the dataset in the card).
        dt: export only this date partition of the tables (``YYYY-MM-DD``); ``None`` reads them all.
        test_fraction: share of episodes / loose screenshots in the ``test`` split, in ``[0, 1)``.
        seed: salt of the split hash; the repository keeps the first export's value and refuses another.
        license: the card's license id (``other``, ``cc-by-4.0``…).
        private: create the Hub repository private (an existing repository keeps its visibility).
        pretty_name: the card's title; defaults to the repository name.
        max_file_rows: rows per Parquet file at most.
        max_file_bytes: image bytes per ``screenshots`` file at most (one image may exceed it alone).

    Raises:
        ValueError: a field is out of range or malformed (message names the field).
    """

    output: str
    repo_id: str | None = None
    local_dir: str | None = None
    dt: str | None = None
    test_fraction: float = 0.1
    seed: str = ""
    license: str = "other"
    private: bool = True
    pretty_name: str | None = None
    max_file_rows: int = 100_000
    max_file_bytes: int = 256 * 2**20

    def __post_init__(self):
        if not self.output:
            raise ValueError("ExportConfig.output must be set")
        if self.repo_id is None and not self.local_dir:
            raise ValueError("ExportConfig needs repo_id (upload) or local_dir")
        if self.repo_id is not None and (
            not _REPO_RE.fullmatch(self.repo_id) or ".." in self.repo_id or "--" in self.repo_id
        ):
            raise ValueError(f"ExportConfig.repo_id {self.repo_id!r} must look like ORG/NAME")
        if self.dt is not None and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", self.dt):
            raise ValueError(f"ExportConfig.dt {self.dt!r} must be YYYY-MM-DD")
        if not 0.0 <= self.test_fraction < 1.0:
            raise ValueError(f"ExportConfig.test_fraction must be in [0, 1), got {self.test_fraction}")
        if not _LICENSE_RE.fullmatch(self.license):
            raise ValueError(f"ExportConfig.license {self.license!r} must be a license id like 'cc-by-4.0'")
        if self.max_file_rows < 1 or self.max_file_bytes < 1:
            raise ValueError("ExportConfig.max_file_rows and max_file_bytes must be >= 1")

    @property
    def split_settings(self) -> dict[str, Any]:
        """What decides the splits; stored in the repository so every later export splits the same way."""
        return {"unit": SPLIT_UNIT, "test_fraction": self.test_fraction, "seed": self.seed}

    @property
    def name(self) -> str:
        """The dataset's name in the card: the repository id, else the local folder's name."""
        return self.repo_id or os.path.basename(os.path.abspath(self.local_dir or "dataset"))


FORMATS = ("trl", "llamafactory", "swift")  # the trainer row formats: screenmill.stages.export.trainers
TASKS = ("grounding", "navigation")
PER = ("instruction", "image")


@dataclasses.dataclass(frozen=True)
class TrainingConfig:
    """What to export for training, where to, and the thresholds of the checks.

    Attributes:
        output: the screenmill output root.
        fmt: the trainer format (:data:`FORMATS`: :mod:`screenmill.stages.export.trainers`).
        target: the model convention (:data:`screenmill.annotators.targets.TARGETS`).
        task: ``grounding`` or ``navigation``.
        per: ``instruction`` (one label per row) or ``image`` (grounding only: one screenshot per row).
        local_dir, repo_id: where to (one of them; ``repo_id`` alone uploads).
        history: previous screenshots per navigation row (the current one comes on top).
        annotators, recipes: keep only these (None: all); min_confidence: keep labels at least this confident.
        dt: only this date partition of the tables.
        test_fraction, seed: the split (kept for the repository's life).
        max_file_rows, max_file_bytes: rows / image bytes per Parquet file at most (one row may exceed the bytes).
        box_slack: pixels a box may pass its image's edge (``box_outside_image``).
        flat_tolerance: channel range at or under which a box's region is one colour (``one_colour_box``).
        min_iou: least IoU a box target keeps after rounding (``rounding_leaves_box``).
        phash_bits: perceptual hashes within this many bits are one image (the split follows the group).
        license, private, pretty_name: as for the Hub export.

    Raises:
        ValueError: a field is out of range or unknown (the message names it).
    """

    output: str
    fmt: str
    target: str
    task: str = "grounding"
    per: str = "instruction"
    local_dir: str | None = None
    repo_id: str | None = None
    history: int = 3
    annotators: tuple[str, ...] | None = None
    recipes: tuple[str, ...] | None = None
    min_confidence: float | None = None
    dt: str | None = None
    test_fraction: float = 0.1
    seed: str = ""
    max_file_rows: int = 10_000
    max_file_bytes: int = 256 * 2**20
    box_slack: float = 0.5
    flat_tolerance: int = 0
    min_iou: float = 0.9
    phash_bits: int = 4
    license: str = "other"
    private: bool = True
    pretty_name: str | None = None

    def __post_init__(self):
        if not self.output:
            raise ValueError("TrainingConfig.output must be set")
        if self.fmt not in FORMATS:
            raise ValueError(f"--format {self.fmt!r}: expected one of {', '.join(FORMATS)}")
        if self.target not in TARGETS:
            raise ValueError(f"--target {self.target!r}: expected one of {', '.join(TARGETS)}")
        if self.task not in TASKS or self.per not in PER:
            raise ValueError(f"--task must be one of {TASKS} and --per one of {PER}")
        if self.task == "navigation" and self.per == "image":
            raise ValueError("--per image is for --task grounding (navigation rows are steps)")
        if not self.local_dir and not self.repo_id:
            raise ValueError("the training export needs --local-dir or --repo")
        if not 0 <= self.history <= 16:
            raise ValueError(f"--history must be 0..16, got {self.history}")
        if self.min_confidence is not None and not 0.0 <= self.min_confidence <= 1.0:
            raise ValueError(f"--min-confidence must be in [0, 1], got {self.min_confidence}")
        if not 0.0 <= self.test_fraction < 1.0 or self.max_file_rows < 1 or self.max_file_bytes < 1:
            raise ValueError("test_fraction must be in [0, 1), max_file_rows and max_file_bytes >= 1")
        if self.box_slack < 0 or self.flat_tolerance < 0 or not 0 < self.min_iou <= 1 or not 0 <= self.phash_bits:
            raise ValueError("box_slack, flat_tolerance >= 0, min_iou in (0, 1], phash_bits >= 0")

    @property
    def settings(self) -> dict[str, Any]:
        """What every later export into the same repository must repeat."""
        return {
            "format": self.fmt,
            "target": self.target,
            "task": self.task,
            "per": self.per,
            "history": self.history,
            "split": {"unit": "image group", "test_fraction": self.test_fraction, "seed": self.seed},
        }

    @property
    def name(self) -> str:
        return self.repo_id or os.path.basename(os.path.abspath(self.local_dir or "dataset"))
