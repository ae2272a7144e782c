"""Identities: stable ids, the unit-of-work key of the ``_done`` index, run ids, and ``config_hash``.

``config_hash`` is the key of incremental runs: a run skips every screenshot occurrence (:func:`item_key`) that the
``_done`` index holds under the run's own hash. Its values must never change for the same settings, or every output
would be labelled again (``tests/schemas/test_keys.py`` pins the default run's).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import re
import secrets
from typing import Any

#: A run's id, ``YYYYmmddTHHMMSSZ-xxxxxx`` (see :func:`new_run_id`).
RUN_ID_RE = r"\d{8}T\d{6}Z-[0-9a-f]{6}"

# Settings that change how fast or where the work runs, never what it produces: not part of the config hash.
EXECUTION_ONLY = frozenset(
    {
        "intra_op_threads",
        "max_batch_size",
        "max_in_flight",
        "decode_threads",
        "render_threads",
        "max_num_seqs",
        "max_num_batched_tokens",
        "gpu_memory_utilization",
        "tensor_parallel_size",
        "kv_cache_memory_bytes",
        "enforce_eager",
        "preflight",
        "max_restarts",
        "max_attempts",
    }
)


# What json.dumps(parts, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str) would build on every
# call, built once (ids are made per label: the encoder's construction was a third of a stable_id).
_ID_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)


def stable_id(*parts: Any) -> str:
    """A stable hex id (sha256, 32 hex chars) of the JSON form of ``parts``; same inputs, same id, any machine."""
    return hashlib.sha256(_ID_JSON.encode(parts).encode("utf-8")).hexdigest()[:32]


def item_key(screenshot_id: str, episode_id: str | None, step_index: int | None) -> str:
    """The identity of one unit of work: the content hash plus, for an episode step, the episode and step."""
    return f"{screenshot_id}|{episode_id or ''}|{'' if step_index is None else step_index}"


def new_run_id(now: _dt.datetime | None = None) -> str:
    """``YYYYmmddTHHMMSSZ-xxxxxx``: sortable by start time, unique across concurrent runs."""
    now = now or _dt.datetime.now(_dt.UTC)
    return now.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def is_run_id(text: str) -> bool:
    """Whether ``text`` is a whole run id (:data:`RUN_ID_RE`)."""
    return re.fullmatch(RUN_ID_RE, text) is not None


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def config_dict(config: Any) -> dict[str, Any]:
    """A JSON-able dict of a config dataclass, without per-run fields (``run_id``, ``config_hash``)."""
    d = _plain(config)
    for key in ("run_id", "config_hash", "pattern"):
        d.pop(key, None)
    return d


def _output_relevant(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _output_relevant(v) for k, v in value.items() if k not in EXECUTION_ONLY}
    if isinstance(value, list):
        pairs = [v for v in value if not (isinstance(v, list) and len(v) == 2 and v[0] in EXECUTION_ONLY)]
        return [_output_relevant(v) for v in pairs]
    return value


def _file_digest(path: str) -> str:
    from apache_beam.io.filesystem import CompressionTypes
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        return hashlib.sha256(f.read()).hexdigest()


def config_hash(*configs: Any) -> str:
    """Hash of everything that determines the output (annotator, model + revision, recipe + version, tiling,
    sampling, limits, the content of an instructions file), not of the run nor of execution-only settings
    (:data:`EXECUTION_ONLY`: threads, batch sizes, memory).

    Raises:
        OSError (or the filesystem's own error): a config names an ``instructions`` file that cannot be read.
    """
    parts = []
    for c in configs:
        d = _output_relevant(config_dict(c))
        if d.get("instructions"):
            d["instructions"] = _file_digest(d["instructions"])
        parts.append(d)
    return stable_id(*parts)
