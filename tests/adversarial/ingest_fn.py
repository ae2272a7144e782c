"""Drive ingest's DoFn directly (no pipeline): fast enough for property tests, same code as a run."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
from apache_beam.io.filesystem import FileMetadata
from apache_beam.pvalue import TaggedOutput
from screenmill.stages.ingest import EPISODE_MANIFEST, IngestConfig, _IngestFile


def listing(root: Path) -> list[str]:
    """What Beam's local listing yields under ``root``: files (symlinks followed for files, not for folders)."""
    found = []
    for here, _, names in os.walk(root):
        found += [os.path.join(here, n) for n in names]
    return sorted(found)


def ingest(root: Path, paths: list[str] | None = None) -> tuple[list, _IngestFile]:
    """Every output of ``_IngestFile.process`` over the files under ``root`` (or ``paths``), in order."""
    fn = _IngestFile(IngestConfig(pattern=str(root), run_id="run-prop"))
    fn.setup()
    paths = listing(root) if paths is None else paths
    episode_dirs = [os.path.dirname(p) for p in paths if os.path.basename(p) == EPISODE_MANIFEST]
    outputs = []
    for path in paths:
        try:
            size = os.path.getsize(path)
        except OSError:
            continue  # Beam's listing skips what it cannot measure
        outputs += list(fn.process(FileMetadata(path, size), episode_dirs, {}))
    return outputs, fn


def assert_storable(outputs: list) -> None:
    """Every record converts to its table's explicit Arrow schema (what the writer does; a lone surrogate, an int
    over int32 or a wrong type fails here)."""
    for out in outputs:
        record = out.value if isinstance(out, TaggedOutput) else out
        pa.Table.from_pylist([record.to_row()], schema=type(record).SCHEMA)
