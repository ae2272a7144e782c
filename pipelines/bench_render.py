"""``screenmill bench render``: rendered screenshots per second per core and peak memory, at n and 10·n pages.

Pages are copies of ``samples/pages/*.html``, each made unique by a small visible stamp (so every screenshot is new
work, not a duplicate). Each size runs ``screenmill run --pages DIR --annotator none`` (one viewport, DOM labels,
PNG written, Parquet committed) in a fresh process; the mean size of the PNGs written is reported too (the
screenshot encoding trades file size for CPU). The whole process tree (the job, playwright's driver, Chromium's
browser, GPU and renderer processes) is sampled every 0.2 s: peak memory is the largest sum of their RSS, CPU time
the sum of their CPU times. Screenshots per CPU second is the per-core figure. The browser is replaced every
``--browser-recycle`` pages (default 50), which is what keeps memory flat.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from screenmill.pipelines import argcheck as check
from screenmill.pipelines.bench_common import ROOT, check_run_options, run_sampled, scale_ratios

STAMP = '<p style="position:fixed;right:4px;bottom:2px;margin:0;font:11px sans-serif;color:#555">copy {i}</p>'


def make_pages(source: Path, folder: Path, n: int) -> int:
    """Write ``n`` unique pages into ``folder`` from the ``*.html`` of ``source``; returns the number written."""
    bases = sorted(source.glob("*.html"))
    if not bases:
        raise SystemExit(f"bench render: no *.html in {source}")
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        html = bases[i % len(bases)].read_text(encoding="utf-8")
        cut = html.lower().rfind("</body>")
        cut = len(html) if cut < 0 else cut
        (folder / f"page_{i:05d}.html").write_text(html[:cut] + STAMP.format(i=i) + html[cut:], encoding="utf-8")
    return n


def measure(pages: Path, out: Path, extra: list[str]) -> dict:
    """Run the job on ``pages`` in a fresh process; its figures."""
    run_argv = ["--pages", str(pages), "--output", str(out), "--annotator", "none", "--quiet", *extra]
    stdout, wall, sampler = run_sampled(run_argv, "render")
    manifest = json.loads(Path(stdout.strip().splitlines()[-1]).read_text())
    shots = manifest["counts"]["render"].get("screens", 0)
    png_bytes = [f.stat().st_size for f in (out / "images").glob("*.png")]
    return {
        "pages": manifest["counts"]["render"].get("total", 0),
        "screenshots": shots,
        "dom_labels": manifest["tables"].get("grounding", {}).get("rows", 0),
        "wall_s": wall,
        "pipeline_s": manifest["wall_seconds"],
        "cpu_s": sampler.cpu_s,
        "per_s": shots / manifest["wall_seconds"],
        "per_cpu_s": shots / sampler.cpu_s if sampler.cpu_s else 0.0,
        "peak_rss_mib": sampler.peak_rss / 2**20,
        "png_kib": sum(png_bytes) / len(png_bytes) / 1024 if png_bytes else 0.0,  # the mean file written
        "cpu_ms_per_shot": {k: 1000 * v / shots for k, v in sampler.cpu_s_by_kind.items()} if shots else {},
    }


@check.returns_code
def main(argv: list[str] | None = None) -> int:
    p = check.ArgumentParser(prog="screenmill bench render", description=__doc__.splitlines()[0])
    p.add_argument("--n", type=check.POSITIVE, default=20, help="pages in the small run (the large one is 10x)")
    p.add_argument(
        "--pages", type=check.pages, default=str(ROOT / "samples" / "pages"), help="folder of *.html to copy"
    )
    p.add_argument("--json", type=check.output_file_in_dir, default=None, help="also write the results here")
    args, extra = p.parse_known_args(argv)
    check_run_options(p.prog, extra)
    extra = extra or ["--viewports", "1280x800"]
    results = {}
    with tempfile.TemporaryDirectory(prefix="screenmill-bench-render-") as tmp:
        for label, n in (("1x", args.n), ("10x", args.n * 10)):
            folder = Path(tmp) / f"pages_{label}"
            make_pages(Path(args.pages), folder, n)
            results[label] = measure(folder, Path(tmp) / f"out_{label}", extra)
    print(f"{'size':<5} {'pages':>6} {'shots':>6} {'labels':>7} {'wall s':>8} {'cpu s':>7} {'shots/s':>8} "
          f"{'shots/cpu-s':>12} {'peak MiB':>9} {'PNG KiB':>8}")  # fmt: skip
    for label, r in results.items():
        print(
            f"{label:<5} {r['pages']:>6} {r['screenshots']:>6} {r['dom_labels']:>7} {r['wall_s']:>8.1f} "
            f"{r['cpu_s']:>7.1f} {r['per_s']:>8.2f} {r['per_cpu_s']:>12.2f} {r['peak_rss_mib']:>9.0f} "
            f"{r['png_kib']:>8.1f}"
        )
    split = ", ".join(f"{k} {v:.0f}" for k, v in results["10x"]["cpu_ms_per_shot"].items())
    print(f"CPU ms per screenshot at 10x by process: {split}")
    scale_ratios(results, "target >= 3 screenshots per cpu-s at 1280x800", args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
