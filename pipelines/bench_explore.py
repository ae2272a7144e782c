"""``screenmill bench explore``: explored episodes and steps per CPU-second, steps per episode and no-op share.

Runs ``screenmill run --pages DIR --explore K --explore-seed S --annotator none`` once per seed, each in a fresh
process whose whole tree (the job, playwright's driver, Chromium's processes) is sampled as in ``bench render``
(:class:`screenmill.pipelines.bench_common.TreeSampler`): CPU time summed over every process, peak summed RSS. From the
run's ``screenshots`` table: episodes, steps (frames with a recorded action), steps per episode, no-op steps (a
recorded action with ``noop``), blocked navigations. Episodes per CPU-second is the per-core figure. The default pages
are ``samples/pages``; any folder of ``*.html`` (a site) works.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from screenmill.pipelines import argcheck as check
from screenmill.pipelines.bench_common import ROOT, check_run_options, run_sampled


def episode_figures(out: Path) -> dict:
    """Episodes, steps, no-op and blocked steps of the explored episodes in the run output ``out``."""
    from screenmill.schemas.tables import read_shards

    rows = read_shards(str(out), "screenshots").to_pylist()
    episodes = {r["episode_id"] for r in rows if r["episode_id"]}
    actions = [json.loads(r["recorded_action"]) for r in rows if r["episode_id"] and r["recorded_action"]]
    return {
        "episodes": len(episodes),
        "steps": len(actions),
        "noop": sum(bool(a.get("noop")) for a in actions),
        "blocked": sum(bool(a.get("blocked")) for a in actions),
    }


def measure(pages: Path, out: Path, steps: int, seed: int, extra: list[str]) -> dict:
    """Explore ``pages`` with ``seed`` in a fresh process; its figures.

    Raises:
        SystemExit: the run failed (its stderr's end is in the message).
    """
    run_argv = ["--pages", str(pages), "--output", str(out), "--quiet", "--annotator", "none",
                "--explore", str(steps), "--explore-seed", str(seed), *extra]  # fmt: skip
    _, wall, sampler = run_sampled(run_argv, "explore")
    return {"seed": seed, **episode_figures(out), "wall_s": wall, "cpu_s": sampler.cpu_s,
            "peak_rss_mib": sampler.peak_rss / 2**20}  # fmt: skip


@check.returns_code
def main(argv: list[str] | None = None) -> int:
    p = check.ArgumentParser(prog="screenmill bench explore", description=__doc__.splitlines()[0])
    p.add_argument(
        "--pages", type=check.pages, default=str(ROOT / "samples" / "pages"), help="folder of *.html pages (a site)"
    )
    p.add_argument("--steps", type=check.int_range(1, 100), default=8, help="K, actions per episode")
    p.add_argument("--seeds", type=check.int_list, default="0,1,2", help="comma-separated seeds, one run each")
    p.add_argument("--json", type=check.output_file_in_dir, default=None, help="also write the results here")
    args, extra = p.parse_known_args(argv)
    check_run_options(p.prog, extra)
    extra = extra or ["--viewports", "1280x800"]
    seeds = args.seeds
    with tempfile.TemporaryDirectory(prefix="screenmill-bench-explore-") as tmp:
        results = [measure(Path(args.pages), Path(tmp) / f"out_{s}", args.steps, s, extra) for s in seeds]
    print(f"{'seed':>4} {'episodes':>8} {'steps':>6} {'no-op':>6} {'blocked':>7} {'wall s':>7} {'cpu s':>7} "
          f"{'peak MiB':>9}")  # fmt: skip
    for r in results:
        print(f"{r['seed']:>4} {r['episodes']:>8} {r['steps']:>6} {r['noop']:>6} {r['blocked']:>7} "
              f"{r['wall_s']:>7.1f} {r['cpu_s']:>7.1f} {r['peak_rss_mib']:>9.0f}")  # fmt: skip
    total = {k: sum(r[k] for r in results) for k in ("episodes", "steps", "noop", "cpu_s", "wall_s")}
    summary = {
        "episodes_per_cpu_s": total["episodes"] / total["cpu_s"] if total["cpu_s"] else 0.0,
        "steps_per_cpu_s": total["steps"] / total["cpu_s"] if total["cpu_s"] else 0.0,
        "steps_per_episode": total["steps"] / total["episodes"] if total["episodes"] else 0.0,
        "noop_share": total["noop"] / total["steps"] if total["steps"] else 0.0,
    }
    print(
        f"all: {total['episodes']} episodes, {total['steps']} steps, {summary['steps_per_episode']:.1f} steps per "
        f"episode, no-op share {summary['noop_share']:.2f}; per CPU-second: {summary['episodes_per_cpu_s']:.2f} "
        f"episodes, {summary['steps_per_cpu_s']:.2f} steps"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results, "summary": summary}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
