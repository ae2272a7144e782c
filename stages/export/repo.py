"""What a screenmill dataset repository holds: its paths, configs and their features, row keys, the export index,
and how an export reads what a repository already has (:func:`load_previous`).

``datasets`` is imported when needed (:func:`import_optional`, with the install hint).
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from screenmill.schemas.records import ActionStep, GroundingLabel, ReviewedLabel, Screenshot

INSTALL_HINT = "datasets / huggingface_hub are not installed: `pip install 'screenmill[hub]'`"
CONFIGS = ("screenshots", "steps", "grounding", "actions", "reviewed")
SPLITS = ("train", "test")
README_PATH = "README.md"
INDEX_PATH = "_screenmill/index.parquet"
STATE_PATH = "_screenmill/state.json"
STATE_FORMAT = 1
SHOT_ONLY = ("source_uri", "episode_id", "step_index", "episode_task", "recorded_action")
# a step is an occurrence: the page it was explored from and how it was shown (scroll) belong to it, not to the bytes
STEP_COLUMNS = (
    "episode_id",
    "step_index",
    "screenshot_id",
    "episode_task",
    "recorded_action",
    "page_uri",
    "page_sha256",
    "render",
    "run_id",
)
KEYS: dict[str, tuple[str, ...]] = {
    "screenshots": ("screenshot_id",),
    "steps": ("episode_id", "step_index"),
    "grounding": ("label_id",),
    "actions": ("episode_id", "step", "label_id"),
    "reviewed": ("label_id", "annotation_id"),
}
INDEX_META = ("screenshot_id", "label_id", "annotator", "annotator_version", "recipe", "recipe_version", "verdict")
INDEX_REVIEW = ("annotation_id", "reviewed_at")  # what the card needs to pick the latest review (schemas.reviews)
INDEX_SCHEMA = pa.schema(
    [pa.field(n, pa.string(), nullable=False) for n in ("config", "key", "split", "file")]
    + [pa.field(n, pa.string()) for n in INDEX_META]
    + [pa.field("annotation_id", pa.int64()), pa.field("reviewed_at", ReviewedLabel.SCHEMA.field("reviewed_at").type)]
)


class ExportError(RuntimeError):
    """Settings or a destination the export refuses (another dataset in the repo, other split settings)."""


def import_optional(name: str):
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise ImportError(f"{INSTALL_HINT} ({e})") from e


def row_key(config: str, row: Mapping[str, Any]) -> str:
    """The key that identifies a row of ``config`` in the index: the id itself, or a JSON list of the key columns."""
    values = [row[c] for c in KEYS[config]]
    return values[0] if len(values) == 1 else json.dumps(values, separators=(",", ":"))


def export_schema(config: str) -> pa.Schema:
    if config == "screenshots":
        fields = [f for f in Screenshot.SCHEMA if f.name not in SHOT_ONLY]
        return pa.schema(
            fields[:1] + [pa.field("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())]))] + fields[1:]
        )
    if config == "steps":
        return pa.schema([Screenshot.SCHEMA.field(n) for n in STEP_COLUMNS + ("schema_version",)])
    return {"grounding": GroundingLabel, "actions": ActionStep, "reviewed": ReviewedLabel}[config].SCHEMA


def export_features(config: str):
    """The ``datasets.Features`` of a config (``image`` is an ``Image`` feature), in column order.

    Raises:
        ImportError: ``datasets`` is not installed (with the install hint).
    """
    datasets = import_optional("datasets")
    plain = datasets.Features.from_arrow_schema(export_schema(config).remove_metadata())
    return datasets.Features({k: datasets.Image() if k == "image" else v for k, v in plain.items()})


@dataclasses.dataclass(frozen=True)
class Previous:
    """What the destination repository already holds: its file paths, the index and the state (empty when new)."""

    files: frozenset[str]
    index: pa.Table
    state: dict[str, Any]


def load_previous(files: Iterable[str], read: Callable[[str], bytes]) -> Previous:
    """Read the index and state of a repository from its file list and a reader of its files.

    Args:
        files: every path in the repository.
        read: returns the bytes of one path of the repository.

    Returns:
        The repository as the next export sees it (an empty index and ``{}`` for a repository screenmill never wrote).
        An index written before the index had ``reviewed_at`` loads with that column null.

    Raises:
        ExportError: the repository has ``data/`` files but no screenmill index (another dataset: refuse to mix),
            or its state has a format this version does not know.
    """
    files = frozenset(files)
    if INDEX_PATH not in files or STATE_PATH not in files:
        if any(p.startswith("data/") for p in files):
            raise ExportError(f"the destination has data/ files but no {INDEX_PATH}: not a screenmill export")
        return Previous(files, INDEX_SCHEMA.empty_table(), {})
    state = json.loads(read(STATE_PATH))
    if state.get("format") != STATE_FORMAT:
        raise ExportError(f"{STATE_PATH} has format {state.get('format')!r}, this screenmill writes {STATE_FORMAT}")
    return Previous(files, pq.read_table(io.BytesIO(read(INDEX_PATH)), schema=INDEX_SCHEMA), state)


def local_files(root: str) -> list[str]:
    """Every file under ``root`` as a repository path (``/``-separated), skipping hidden folders (``.git``, caches)."""
    found = []
    for here, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        rel = os.path.relpath(here, root)
        found += [n if rel == "." else f"{rel.replace(os.sep, '/')}/{n}" for n in names]
    return sorted(found)
