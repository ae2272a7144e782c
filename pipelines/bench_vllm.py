"""``screenmill bench vllm``: the same requests four ways, side by side on one engine.

(a) ``ceiling`` (one raw ``LLM.generate``), (b) ``pipeline`` (``screenmill run --annotator vllm``), (c) ``naive`` (the
same pipeline fed per batch, as Beam's RunInference does), (d) ``transformers`` (the model card's way); the
measurements and the table are :mod:`screenmill.annotators.vllm.bench`'s, this command parses options and hands them
``screenmill run``'s entry point.

Usage: ``screenmill bench vllm --model PATH_OR_ID [--recipe R] [--n 32] [--per-shot 2] [--pack K] [any `screenmill
run` engine option]``, e.g. ``--load-format dummy`` for random weights (throughput does not depend on weight
values) and ``--max-new-tokens N`` to fix the answer budget; ``--pack K`` adds the pipeline with packed localize
requests and compares labels/s.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from screenmill.annotators.vllm import bench
from screenmill.annotators.vllm.bench import DEFAULT_MODES, MODES, RECIPES
from screenmill.pipelines import argcheck as check
from screenmill.pipelines.bench_common import check_run_options


def main(argv: list[str] | None = None) -> int:
    p = check.ArgumentParser(prog="screenmill bench vllm", description=__doc__.splitlines()[0])
    p.add_argument("--recipe", default="holo2-localize", choices=RECIPES, help="what every request asks")
    p.add_argument("--n", type=check.POSITIVE, default=32, help="screenshots")
    p.add_argument("--per-shot", type=check.POSITIVE, default=2, help="instructions per screenshot (localize recipes)")
    p.add_argument("--naive-batch", type=check.POSITIVE, default=8, help="units per generate() in the naive mode")
    p.add_argument(
        "--modes",
        type=check.among(MODES),
        default=",".join(DEFAULT_MODES),
        help=f"comma-separated subset of {','.join(MODES)}",
    )
    p.add_argument(
        "--pack",
        type=check.POSITIVE,
        default=1,
        help="localize: also the pipeline with --pack K, labels/s packed vs unpacked",
    )
    p.add_argument("--json", type=check.output_file_in_dir, default=None, help="also write the results here")
    args, run_extra = p.parse_known_args(argv)
    check_run_options(p.prog, run_extra)  # before the screens are made
    modes = [m for m in args.modes.split(",") if m]
    if args.pack != 1 and args.recipe == "propose-elements":
        check.fail(p.prog, "--pack: packs localize requests; propose-elements makes one per screenshot")

    from screenmill.pipelines import options
    from screenmill.pipelines import run as run_mod
    from screenmill.schemas.images import ImageLimits

    with tempfile.TemporaryDirectory(prefix="screenmill-bench-vllm-") as tmp:
        folder = Path(tmp) / "screens"
        instructions = bench.make_screens(folder, args.n, args.per_shot)
        localize = ["--instructions", str(instructions)] if args.recipe != "propose-elements" else []
        run_argv = [
            "--input", str(folder), "--output", str(Path(tmp) / "out"), "--quiet", "--annotator", "vllm",
            "--recipe", args.recipe, *localize, "--engine-arg", "disable_log_stats=false", *run_extra,
        ]  # fmt: skip
        run_args, _ = options.run_parser(p.prog, "").parse_known_args(run_argv)  # run's option groups, checks
        try:  # what `screenmill run` refuses up front (a bad option, a missing model dir, no vLLM) ends here too
            vlm_cfg = options.vlm_config(run_args, "bench", ImageLimits())
            vlm_cfg.preflight()
        except (ImportError, FileNotFoundError, ValueError, KeyError) as e:
            check.fail(p.prog, e.args[0] if e.args else e)
        machine = bench.machine_profile()  # before the engine exists: nothing else runs on the cores
        print(bench.describe_machine(machine))
        results = bench.measure(
            vlm_cfg, run_mod.run, run_argv, folder, instructions, Path(tmp), modes, args.naive_batch, args.pack
        )
    ratios = bench.report(results, args.n)
    if args.pack > 1:
        ratios["labels/s packed/unpacked"] = bench.report_pack(results)
    if args.json:
        report = {
            "results": results,
            "ratios": ratios,
            "machine": machine,
            "n": args.n,
            "recipe": args.recipe,
            "per_shot": args.per_shot,
        }
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0
