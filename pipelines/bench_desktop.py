"""``screenmill bench desktop``: labelled app screens and explored steps per CPU-second of the whole process tree, and
peak memory, at n and 10·n app settings.

The n app settings cycle through the lines of ``--apps`` (default ``samples/apps.txt``), each a name of its own
(``galculator-3``) so that none is skipped as done. Each size runs ``screenmill run --apps FILE --annotator none`` in a
fresh process (``--displays``, default 1280x800, and any other run option are passed on), and with ``--steps K`` > 0
a second run ``--explore K`` over the same settings. The whole process tree is sampled every 0.2 s as in
``bench render`` (:class:`screenmill.pipelines.bench_common.TreeSampler`): the job and its desktop session, whose
processes run in their own PID namespace as another user (``unshare``, ``setpriv``, ``Xvfb``, the buses, the agent,
the apps) but are descendants of the job all the same, read from ``/proc`` by the root that runs the bench (no
cgroup): CPU time is the sum over every process seen of its last ``utime + stime``, peak memory the largest sum of
their RSS. A process that lives less than a sample (an ``xdotool`` click) or the CPU a process spends after its last
sample is missed; the apps are killed once their screen settled (idle), so that is little.

Figures from the run's manifest (the ``render_apps`` counters): screens captured and labelled (``screens``: the same
app at the same settings gives the same screenshot, which ingest keeps once, so the screenshots written are fewer),
a11y labels written, sessions started, episodes, steps and no-op steps. Screens per CPU-second is the per-core figure;
the steady state (the screens the large run adds over the CPU they add) is printed as ``bench render`` does.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from screenmill.pipelines import argcheck as check
from screenmill.pipelines.bench_common import ROOT, check_run_options, run_sampled, scale_ratios


def make_apps(source: Path, path: Path, n: int) -> int:
    """Write an ``--apps`` file of ``n`` app settings cycling through the apps of ``source``, each named
    ``<name>-<i>``; returns the number written.

    Raises:
        SystemExit: ``source`` has no app line, or a line that does not parse.
    """
    from screenmill.annotators.desktop.apps import parse_app_line

    try:
        apps = [a for a in map(parse_app_line, source.read_text(encoding="utf-8").splitlines()) if a is not None]
    except ValueError as e:
        raise SystemExit(f"bench desktop: {source}: {e}") from None
    if not apps:
        raise SystemExit(f"bench desktop: no app line in {source}")
    lines = []
    for i in range(n):
        app = apps[i % len(apps)]
        line = {"name": f"{app.name}-{i}", "command": list(app.argv), "env": dict(app.env)}
        lines.append(json.dumps(line | ({"display": app.display.spec} if app.display else {})))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return n


def measure(apps: Path, out: Path, steps: int, extra: list[str]) -> dict:
    """Run the apps (explored for ``steps`` actions when > 0) in a fresh process; its figures.

    Raises:
        SystemExit: the run failed (its stderr's end is in the message).
    """
    run_argv = ["--apps", str(apps), "--output", str(out), "--annotator", "none", "--quiet", *extra]
    if steps:
        run_argv += ["--explore", str(steps)]
    stdout, wall, sampler = run_sampled(run_argv, "desktop")
    manifest = json.loads(Path(stdout.strip().splitlines()[-1]).read_text())
    counts = manifest["counts"].get("render_apps", {})
    screens, cpu = counts.get("screens", 0), sampler.cpu_s
    return {
        "apps": counts.get("total", 0),
        "screenshots": screens,  # captured and labelled (the key scale_ratios' steady state reads)
        "written": manifest["tables"].get("screenshots", {}).get("rows", 0),
        "a11y_labels": manifest["tables"].get("grounding", {}).get("rows", 0),
        "sessions": counts.get("sessions", 0),
        "episodes": counts.get("episodes", 0),
        "steps": counts.get("steps", 0),
        "noop_steps": counts.get("noop_steps", 0),
        "dead_letters": sum(v for k, v in counts.items() if k.startswith("dropped_")),
        "wall_s": wall,
        "pipeline_s": manifest["wall_seconds"],
        "cpu_s": cpu,
        "per_cpu_s": screens / cpu if cpu else 0.0,
        "steps_per_cpu_s": counts.get("steps", 0) / cpu if cpu else 0.0,
        "peak_rss_mib": sampler.peak_rss / 2**20,
        "cpu_ms_per_screen": {k: 1000 * v / screens for k, v in sampler.cpu_s_by_kind.items()} if screens else {},
    }


def _print(results: dict[str, dict]) -> None:
    print(f"{'size':<9} {'apps':>5} {'screens':>7} {'steps':>6} {'labels':>7} {'wall s':>7} {'cpu s':>7} "
          f"{'screens/cpu-s':>13} {'steps/cpu-s':>11} {'peak MiB':>9}")  # fmt: skip
    for label, r in results.items():
        print(
            f"{label:<9} {r['apps']:>5} {r['screenshots']:>7} {r['steps']:>6} {r['a11y_labels']:>7} "
            f"{r['wall_s']:>7.1f} {r['cpu_s']:>7.1f} {r['per_cpu_s']:>13.2f} {r['steps_per_cpu_s']:>11.2f} "
            f"{r['peak_rss_mib']:>9.0f}"
        )


@check.returns_code
def main(argv: list[str] | None = None) -> int:
    p = check.ArgumentParser(prog="screenmill bench desktop", description=__doc__.splitlines()[0])
    p.add_argument("--n", type=check.POSITIVE, default=4, help="app settings in the small run (the large one is 10x)")
    p.add_argument(
        "--factor", type=check.int_range(2, 100), default=10, help="the large run's size in multiples of n (10)"
    )
    p.add_argument(
        "--apps", type=check.existing_file, default=str(ROOT / "samples" / "apps.txt"), help="the apps to cycle"
    )
    p.add_argument("--steps", type=check.int_range(0, 100), default=4, help="K, actions per episode (0: no explore)")
    p.add_argument("--json", type=check.output_file_in_dir, default=None, help="also write the results here")
    args, extra = p.parse_known_args(argv)
    check_run_options(p.prog, extra)
    extra = extra or ["--displays", "1280x800"]
    large = f"{args.factor}x"
    screens, explored = {}, {}
    with tempfile.TemporaryDirectory(prefix="screenmill-bench-desktop-") as tmp:
        for label, n in (("1x", args.n), (large, args.n * args.factor)):
            apps = Path(tmp) / f"apps_{label}.txt"
            make_apps(Path(args.apps), apps, n)
            screens[label] = measure(apps, Path(tmp) / f"out_{label}", 0, extra)
            if args.steps:
                explored[label] = measure(apps, Path(tmp) / f"explore_{label}", args.steps, extra)
    _print({**screens, **{f"{k} K={args.steps}": v for k, v in explored.items()}})
    split = ", ".join(f"{k} {v:.0f}" for k, v in screens[large]["cpu_ms_per_screen"].items())
    print(f"CPU ms per screen at {large} by process: {split}")
    ratios = scale_ratios(screens, "labelled screens per cpu-s", None, large=large)
    if args.json:
        body = {"screens": screens, "explore": explored, "ratios": ratios, "steps": args.steps}
        Path(args.json).write_text(json.dumps(body, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
