"""Dask vs the default runner, side by side in one invocation: ``python -m screenmill.pipelines.bench_dask``.

Runs the same ``screenmill run`` on ``samples/`` (or ``--input``) with the default runner (Beam's in-process
FnApiRunner, one process), the FnApiRunner with ``--direct_num_workers=W --direct_running_mode=multi_processing``,
and the Dask runner against a local Dask cluster of W worker processes (scheduler and workers on 127.0.0.1, started
here and timed apart, the workers' imports done before timing, as on a long-lived cluster). Each variant writes to
a fresh output folder; wall time is ``run()``'s (graph build, pipeline, commit). The outputs of every variant are
compared row for row (run ids and timestamps left out), so a figure is never reported for a run that computed
something else. OCR runs give each worker process ``--ocr-threads`` threads (default: cores / W; the Dask workers'
OMP/MKL/OpenBLAS thread counts too, which Dask would pin to 1) and the one-process default runner the annotator's
default.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _rows(out: Path) -> dict[str, list[str]]:
    import pyarrow as pa
    from screenmill.schemas.tables import committed_tables, read_shards

    tables = {}
    for name in committed_tables(str(out)):
        data = read_shards(str(out), name)
        volatile = {f.name for f in data.schema if f.name == "run_id" or pa.types.is_timestamp(f.type)}
        tables[name] = sorted(
            json.dumps({k: v for k, v in r.items() if k not in volatile}, sort_keys=True, default=str)
            for r in data.to_pylist()
        )
    return tables


def _warm_up() -> None:
    import importlib

    modules = ("apache_beam", "pyarrow.parquet", "screenmill.stages.runners.dask", "screenmill.stages.label")
    for module in (*modules, "screenmill.pipelines.run"):
        importlib.import_module(module)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m screenmill.pipelines.bench_dask", description=__doc__.splitlines()[0])
    p.add_argument("--input", default=str(ROOT / "samples"), help="screenshots (default: samples/)")
    p.add_argument("--annotators", default="none,ocr", help="comma-separated: none, ocr")
    p.add_argument("--workers", type=int, default=2, help="Dask worker processes / FnApiRunner workers (W)")
    p.add_argument("--ocr-threads", type=int, default=None, help="onnxruntime threads per worker process")
    p.add_argument("--repeat", type=int, default=1, help="runs per variant (the median is reported)")
    p.add_argument("--variants", default="fnapi-1proc,fnapi-mp,dask", help="comma-separated subset to run")
    p.add_argument("--json", default=None, help="also write the figures here")
    args = p.parse_args(argv)

    import distributed
    from screenmill.pipelines.run import run

    logging.getLogger("distributed").setLevel(logging.ERROR)
    cores = os.cpu_count() or 1
    per_worker = args.ocr_threads or max(1, cores // args.workers)
    started = time.monotonic()
    threads_env = {k: str(per_worker) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    cluster = distributed.LocalCluster(
        n_workers=args.workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=logging.ERROR,
        env=threads_env,  # Dask's nanny would pin these to 1: give each worker process its share of the cores
    )
    with distributed.Client(cluster) as client:  # workers import what a run needs once, as on a long-lived cluster
        client.run(_warm_up)
    cluster_s = time.monotonic() - started
    dask_args = ["--runner=DaskRunner", f"--dask_client_address={cluster.scheduler_address}"]
    mp_args = [f"--direct_num_workers={args.workers}", "--direct_running_mode=multi_processing"]
    chosen = set(args.variants.split(","))
    variants = {
        name: extra
        for key, name, extra in (
            ("fnapi-1proc", "fnapi-1proc", []),
            ("fnapi-mp", f"fnapi-{args.workers}proc", mp_args),
            ("dask", f"dask-{args.workers}workers", dask_args),
        )
        if key in chosen
    }
    results = []
    try:
        with tempfile.TemporaryDirectory(prefix="screenmill-bench-dask-") as tmp:
            for annotator in [a for a in args.annotators.split(",") if a]:
                reference = None
                for variant, extra in variants.items():
                    ocr = []
                    if annotator == "ocr" and variant != "fnapi-1proc":
                        ocr = ["--ocr-threads", str(per_worker)]
                    times, manifest = [], None
                    for i in range(args.repeat):
                        out = Path(tmp) / f"{annotator}-{variant}-{i}"
                        t0 = time.monotonic()
                        manifest = run(
                            ["--input", args.input, "--output", str(out), "--annotator", annotator, "--quiet"]
                            + ocr
                            + extra
                        )
                        times.append(time.monotonic() - t0)
                        rows = _rows(out)
                        reference = rows if reference is None else reference
                        if rows != reference:
                            raise SystemExit(f"bench: {variant} wrote other rows than the first variant")
                    wall = statistics.median(times)
                    shots = manifest["counts"].get("ingest", {}).get("total", 0)
                    labels = manifest["tables"].get("grounding", {}).get("rows", 0)
                    results.append(
                        {
                            "annotator": annotator,
                            "variant": variant,
                            "wall_s": round(wall, 2),
                            "inputs": shots,
                            "inputs_per_s": round(shots / wall, 2),
                            "labels": labels,
                            "runs": [round(t, 2) for t in times],
                        }
                    )
                    print(json.dumps(results[-1]), flush=True)
    finally:
        cluster.close()
    print(f"\n{'annotator':<9} {'variant':<16} {'wall s':>7} {'inputs/s':>9} {'labels':>7}")
    for r in results:
        print(f"{r['annotator']:<9} {r['variant']:<16} {r['wall_s']:>7} {r['inputs_per_s']:>9} {r['labels']:>7}")
    print(
        f"({cores} cores; Dask cluster start + worker imports {cluster_s:.1f} s, not included; "
        f"OCR threads per worker: {per_worker}; every variant wrote the same rows)"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"cores": cores, "cluster_start_s": cluster_s, "results": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
