"""``screenmill bench cpu``: ingest + tile + write throughput and peak memory, at n and 10·n screenshots; then the
OCR annotator's throughput on a few of them (``--ocr-n``).

Inputs are the 1920×1080-class screenshots of ``samples/`` (PNG and JPEG), made unique by byte surgery that keeps
them valid (a PNG ``tEXt`` chunk before ``IEND``, a JPEG ``COM`` segment after ``SOI``) so de-duplication does not
collapse them and nothing is re-encoded. Each size runs ``screenmill run --annotator none`` in a fresh process;
throughput is screenshots per pipeline wall second and per CPU second of the pipeline (≈ per core; interpreter
start-up and imports are reported apart), peak memory is that process's max RSS.
The ratios printed (10n/n) are measured side by side in one invocation. The OCR run (``--annotator ocr``, the CPU
default, same inputs) reports screenshots and labels per pipeline wall second and per CPU second of the pipeline (its
model load included, paid once a run); ``--ocr-n 0`` skips it.
"""

from __future__ import annotations

import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

from screenmill.pipelines import argcheck as check
from screenmill.pipelines.bench_common import check_run_options, scale_ratios

_CLASS = ((1600, 2600), (900, 1500))  # width, height ranges of "1920×1080-class" screenshots


# The measured process: runs the job and reports its own peak RSS (each size in a fresh process).
_CHILD = (
    "import json, resource, sys\n"
    "from screenmill.pipelines.run import run\n"
    "def cpu():\n"
    "    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime\n"
    "before = cpu()\n"
    "m = run(sys.argv[1:])\n"
    "print(json.dumps({'manifest': m['manifest_path'], 'run_cpu_s': cpu() - before, "
    "'maxrss_kib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))\n"
)


def _unique_png(data: bytes, i: int) -> bytes:
    body = b"screenmill-bench\x00" + str(i).encode()
    chunk = struct.pack(">I", len(body)) + b"tEXt" + body + struct.pack(">I", zlib.crc32(b"tEXt" + body))
    return data[:-12] + chunk + data[-12:]


def _unique_jpeg(data: bytes, i: int) -> bytes:
    body = f"screenmill-bench {i}".encode()
    return data[:2] + b"\xff\xfe" + struct.pack(">H", len(body) + 2) + body + data[2:]


def make_inputs(samples: Path, folder: Path, n: int) -> int:
    """Write ``n`` unique, valid 1920×1080-class screenshots into ``folder``; returns the number written."""
    from PIL import Image

    bases = []
    for path in sorted((samples / "screens").iterdir()):
        with Image.open(path) as im:
            w, h = im.size
            fmt = im.format
        if _CLASS[0][0] <= w <= _CLASS[0][1] and _CLASS[1][0] <= h <= _CLASS[1][1] and fmt in ("PNG", "JPEG"):
            bases.append((fmt, path.read_bytes()))
    if not bases:
        raise SystemExit(f"bench: no 1920x1080-class PNG/JPEG in {samples}/screens")
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        fmt, data = bases[i % len(bases)]
        blob = _unique_png(data, i) if fmt == "PNG" else _unique_jpeg(data, i)
        (folder / f"shot_{i:06d}.{'png' if fmt == 'PNG' else 'jpg'}").write_bytes(blob)
    return n


def _measure(folder: Path, out: Path, extra: list[str], annotator: str = "none") -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    cmd = [
        sys.executable,
        "-c",
        _CHILD,
        "--input",
        str(folder),
        "--output",
        str(out),
        "--annotator",
        annotator,
        "--quiet",
        *extra,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"bench: run failed\n{proc.stderr[-3000:]}")
    child = json.loads(proc.stdout.strip().splitlines()[-1])
    manifest = json.loads(Path(child["manifest"]).read_text())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    n = manifest["counts"]["ingest"]["forwarded"]
    return {
        "screenshots": n,
        "labels": manifest["tables"].get("grounding", {}).get("rows", 0),
        "wall_s": wall,
        "pipeline_s": manifest["wall_seconds"],
        "cpu_s": cpu,
        "run_cpu_s": child["run_cpu_s"],
        "per_s": n / manifest["wall_seconds"],
        "per_cpu_s": n / child["run_cpu_s"],
        "per_cpu_s_with_startup": n / cpu,
        "peak_rss_mib": child["maxrss_kib"] / 1024,
    }


@check.returns_code
def main(argv: list[str] | None = None) -> int:
    p = check.ArgumentParser(prog="screenmill bench", description=__doc__.splitlines()[0])
    p.add_argument(
        "what",
        choices=("cpu", "vllm", "render", "explore", "desktop"),
        help="cpu: ingest + tile + write; vllm, render, explore, desktop: see `bench X -h`",
    )
    p.add_argument("--n", type=check.POSITIVE, default=200, help="screenshots in the small run (the large one is 10x)")
    p.add_argument("--samples", type=check.existing_dir, default=str(Path(__file__).resolve().parents[1] / "samples"))
    p.add_argument("--ocr-n", type=check.NON_NEGATIVE, default=8, help="screenshots in the OCR run (0: no OCR run)")
    p.add_argument("--json", type=check.output_file_in_dir, default=None, help="also write the results here")
    argv = list(argv or [])
    if argv[:1] == ["vllm"]:
        from screenmill.pipelines.bench_vllm import main as bench_vllm

        return bench_vllm(argv[1:])
    if argv[:1] == ["render"]:
        from screenmill.pipelines.bench_render import main as bench_render

        return bench_render(argv[1:])
    if argv[:1] == ["explore"]:
        from screenmill.pipelines.bench_explore import main as bench_explore

        return bench_explore(argv[1:])
    if argv[:1] == ["desktop"]:
        from screenmill.pipelines.bench_desktop import main as bench_desktop

        return bench_desktop(argv[1:])
    args, extra = p.parse_known_args(argv)
    check_run_options(p.prog, extra)
    results = {}
    with tempfile.TemporaryDirectory(prefix="screenmill-bench-") as tmp:
        for label, n in (("1x", args.n), ("10x", args.n * 10)):
            folder = Path(tmp) / f"in_{label}"
            make_inputs(Path(args.samples), folder, n)
            results[label] = _measure(folder, Path(tmp) / f"out_{label}", extra)
        if args.ocr_n > 0:
            make_inputs(Path(args.samples), Path(tmp) / "in_ocr", args.ocr_n)
            results["ocr"] = _measure(Path(tmp) / "in_ocr", Path(tmp) / "out_ocr", extra, annotator="ocr")
    print(f"{'size':<5} {'shots':>6} {'wall s':>8} {'cpu s':>7} {'shots/s':>8} {'shots/cpu-s':>12} {'peak MiB':>9}")
    for label, r in results.items():
        print(
            f"{label:<5} {r['screenshots']:>6} {r['wall_s']:>8.2f} {r['cpu_s']:>7.2f} {r['per_s']:>8.1f} "
            f"{r['per_cpu_s']:>12.1f} {r['peak_rss_mib']:>9.0f}"
        )
    if "ocr" in results:
        r = results["ocr"]
        print(
            f"ocr: {r['per_s']:.3f} screenshots/s, {r['per_cpu_s']:.3f} per cpu-s ({os.cpu_count()} cores), "
            f"{r['labels'] / r['pipeline_s']:.1f} labels/s; model load included"
        )
    scale_ratios(results, "target >= 100 shots per cpu-s", args.json)
    return 0
