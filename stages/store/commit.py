"""Run transactions: everything a run writes becomes visible at once, or not at all.

A run writes every shard (all tables, the ``_done`` index and its manifest) under ``OUT/_staging/<run_id>/``, a
folder every reader ignores. :func:`commit_run` then writes ``_staging/<run_id>/_COMMIT`` (temp name + rename: the
commit point) listing the run's files, and moves each one to its final place (``OUT/<table>/dt=…/``,
``OUT/_runs/<run_id>.json``), refreshing each touched partition's ``_SUCCESS`` marker. :func:`recover`, called when a
run starts, finishes what a killed run left: a staging folder with ``_COMMIT`` is rolled forward (moves are
idempotent), one without is deleted, so its screenshots are simply done again, and never twice, because their
``_done`` rows were in the same uncommitted folder. One writer per output tree at a time. Every path and marker name
comes from the table catalogue (:mod:`screenmill.schemas.tables`).
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from screenmill.schemas.keys import is_run_id
from screenmill.schemas.tables import (
    COMMIT_MARKER,
    STAGING,
    is_part,
    manifest_rel,
    parse_part,
    staging_dir,
    success_path,
)
from screenmill.stages.store.failpoint import failpoint

_log = logging.getLogger("screenmill.commit")


def _files_under(root: str) -> list[str]:
    """Every file below ``root`` as a path relative to it (hidden temp files excluded)."""
    base = root.rstrip("/") + "/"
    found = FileSystems.match([FileSystems.join(root, "**")])[0].metadata_list
    rel = [m.path[len(base) :] for m in found if m.path.startswith(base)]
    return sorted(r for r in rel if not any(part.startswith(".") for part in r.split("/")))


def _write_atomic(path: str, data: bytes) -> None:
    directory, name = path.rsplit("/", 1)
    tmp = FileSystems.join(directory, f".{name}.tmp")
    with FileSystems.create(tmp) as f:
        f.write(data)
    if FileSystems.exists(path):
        FileSystems.delete([path])
    FileSystems.rename([tmp], [path])


def _read_json(path: str) -> Any:
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        return json.loads(f.read().decode("utf-8"))


def commit_run(output: str, run_id: str, manifest: dict[str, Any]) -> dict[str, Any]:
    """Make run ``run_id``'s staged files and its ``manifest`` visible, atomically as a set.

    Args:
        output: the output root.
        run_id: the run whose ``_staging/<run_id>/`` folder holds its complete shards.
        manifest: the run manifest; written as ``_runs/<run_id>.json`` in the same commit.

    Returns:
        ``{"files": n, "partitions": [...]}``: what was moved into place.

    Raises:
        OSError (or the filesystem's own error): the filesystem failed; a later :func:`recover` finishes the commit
        if the ``_COMMIT`` marker was written, or discards the run if not.
    """
    stage = staging_dir(output, run_id)
    _write_atomic(
        FileSystems.join(stage, manifest_rel(run_id)),
        json.dumps(manifest, indent=2, sort_keys=True, default=str).encode("utf-8"),
    )
    files = [r for r in _files_under(stage) if r != COMMIT_MARKER]
    failpoint("commit:before_marker")
    _write_atomic(FileSystems.join(stage, COMMIT_MARKER), json.dumps({"run_id": run_id, "files": files}).encode())
    return roll_forward(output, run_id)


def roll_forward(output: str, run_id: str) -> dict[str, Any]:
    """Finish a committed run: move each listed file into place (idempotent), refresh ``_SUCCESS``, drop staging."""
    stage = staging_dir(output, run_id)
    files = _read_json(FileSystems.join(stage, COMMIT_MARKER))["files"]
    partitions = set()
    for i, rel in enumerate(files):
        if i == 1:
            failpoint("commit:after_first_move")
        staged, final = FileSystems.join(stage, rel), FileSystems.join(output, rel)
        if FileSystems.exists(staged):
            if FileSystems.exists(final):  # a copy-based rename (object stores) died half way: same bytes
                FileSystems.delete([final])
            _ensure_parent(final)
            FileSystems.rename([staged], [final])
        if is_part(rel):
            partitions.add(rel.rsplit("/", 1)[0])
    for partition in sorted(partitions):
        _write_success(FileSystems.join(output, partition))
    FileSystems.delete([stage])
    _remove_if_empty(FileSystems.join(output, STAGING))
    return {"files": len(files), "partitions": sorted(partitions)}


def _remove_if_empty(directory: str) -> None:
    if FileSystems.get_scheme(directory) in (None, "file"):
        try:
            os.rmdir(directory)
        except OSError:
            pass  # not empty (another run's staging) or already gone


def _ensure_parent(path: str) -> None:
    parent = path.rsplit("/", 1)[0]
    if FileSystems.get_scheme(parent) in (None, "file"):
        os.makedirs(parent, exist_ok=True)


def _write_success(partition: str) -> None:
    parts = [r for r in _files_under(partition) if "/" not in r and is_part(r)]
    body = {"parts": parts, "runs": sorted({p.run_id for r in parts if (p := parse_part(r)) and p.run_id})}
    _write_atomic(success_path(partition), json.dumps(body, indent=1).encode("utf-8"))


def recover(output: str) -> list[dict[str, str]]:
    """Finish or discard what killed runs left under ``OUT/_staging/``; call before reading the ``_done`` index.

    Returns:
        One ``{"run_id", "action"}`` per staging folder found: ``rolled_forward`` (it had committed) or
        ``discarded`` (it had not; its work is redone by the next run).
    """
    root = FileSystems.join(output, STAGING)
    if not FileSystems.exists(root):
        return []
    runs = sorted({rel.split("/", 1)[0] for rel in _files_under(root)} | _subdirs(root))
    done = []
    for run_id in runs:
        if not is_run_id(run_id):
            continue
        stage = staging_dir(output, run_id)
        if FileSystems.exists(FileSystems.join(stage, COMMIT_MARKER)):
            roll_forward(output, run_id)
            action = "rolled_forward"
        else:
            FileSystems.delete([stage])
            _remove_if_empty(root)
            action = "discarded"
        _log.warning("recovered run %s left by a killed run: %s", run_id, action)
        done.append({"run_id": run_id, "action": action})
    return done


def _subdirs(root: str) -> set[str]:
    if FileSystems.get_scheme(root) in (None, "file") and os.path.isdir(root):
        return {d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))}
    return set()
