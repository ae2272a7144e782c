"""The export's settings (:class:`ExportConfig`), apart from the exporter so that ``screenmill export`` can read its
defaults and check its command line without importing Beam or pyarrow (:mod:`screenmill.stages.export.hub` does the
work)."""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Any

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
