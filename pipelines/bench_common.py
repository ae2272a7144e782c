"""What the benchmarks share (``bench cpu``, ``bench render``, ``bench explore``, ``bench desktop``): the repository
root, the 10x/1x ratios of a two-size benchmark (:func:`scale_ratios`) and a run of ``screenmill run`` in a fresh
process with its whole process tree sampled (:func:`run_sampled`, :class:`TreeSampler`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def scale_ratios(results: dict, target: str, json_path: str | None, large: str = "10x") -> dict:
    """The 10x/1x ratios of a two-size benchmark (``results["1x"]``, ``results[large]`` with ``per_cpu_s`` and
    ``peak_rss_mib``; ``large`` another multiple of n, ``"2x"``, for a quick run): printed in one line with
    ``target``, and written with the results to ``json_path`` if set.

    Where both sizes also have ``screenshots`` and ``cpu_s`` (the whole run's CPU, start-up included), a second line
    gives the steady state: the 9n screenshots the large run adds over the CPU they add (what a long batch job
    runs at: its start-up, paid once, is amortised away) and the start-up that leaves (the small run's CPU less its
    screenshots at the steady rate). ``steady_per_cpu_s`` / ``startup_cpu_s`` in the ratios; absent when the large
    run added no CPU or screenshots."""
    name, small, big = large, results["1x"], results[large]
    throughput, memory = f"throughput_{name}_over_1x", f"peak_memory_{name}_over_1x"
    ratios = {
        throughput: big["per_cpu_s"] / small["per_cpu_s"] if small["per_cpu_s"] else float("nan"),
        memory: big["peak_rss_mib"] / small["peak_rss_mib"],
        "cores": os.cpu_count(),
    }
    print(
        f"ratio {name}/1x: throughput {ratios[throughput]:.2f}, peak memory {ratios[memory]:.2f} (flat = 1.0); "
        f"{target}"
    )
    if all(k in r for r in (small, big) for k in ("screenshots", "cpu_s")):
        added_shots, added_cpu = big["screenshots"] - small["screenshots"], big["cpu_s"] - small["cpu_s"]
        if added_shots > 0 and added_cpu > 0:
            ratios["steady_per_cpu_s"] = added_shots / added_cpu
            ratios["startup_cpu_s"] = small["cpu_s"] - small["screenshots"] / ratios["steady_per_cpu_s"]
            print(
                f"steady state ({name} less 1x): {ratios['steady_per_cpu_s']:.2f} screenshots per cpu-s; "
                f"start-up {ratios['startup_cpu_s']:.1f} cpu-s a run"
            )
    if json_path:
        Path(json_path).write_text(json.dumps({"results": results, "ratios": ratios}, indent=2))
    return ratios


#: A desktop session's programs (:mod:`screenmill.annotators.desktop.session`) → their kind in :func:`process_kind`.
SESSION_KINDS = {
    "Xvfb": "xvfb",
    "dbus-daemon": "dbus",
    "at-spi-bus-launcher": "atspi",
    "at-spi2-registryd": "atspi",
    "unshare": "session",
    "setpriv": "session",
}


def process_kind(proc, root_pid: int) -> str:
    """What a sampled process is: ``job`` (the root), ``driver`` (playwright's node), Chromium's ``browser`` or the
    ``--type`` of its child (``renderer``, ``gpu-process``, ``utility``, ``zygote``), a desktop session's ``agent``
    or program (:data:`SESSION_KINDS`), else ``other`` (the apps a desktop session runs, among others)."""
    if proc.pid == root_pid:
        return "job"
    try:
        argv = proc.cmdline()
    except Exception:  # noqa: BLE001 - gone or unreadable
        return "other"
    if argv and Path(argv[0]).name == "node":
        return "driver"
    if argv and Path(argv[0]).name in SESSION_KINDS:
        return SESSION_KINDS[Path(argv[0]).name]
    if any(Path(a).name == "agent.py" for a in argv[1:3]):
        return "agent"
    kind = next((a.split("=", 1)[1] for a in argv if a.startswith("--type=")), None)
    if kind:
        return kind
    return "browser" if argv and "chrom" in Path(argv[0]).name else "other"


class TreeSampler:
    """Samples a process and all its descendants: peak summed RSS, and CPU time summed over every process seen (in
    all and by :func:`process_kind`)."""

    def __init__(self, pid: int, every_s: float = 0.2):
        import psutil  # vLLM's dependency, so in every screenmill environment

        self._root = psutil.Process(pid)
        self._psutil = psutil
        self._every = every_s
        self.peak_rss = 0
        self._cpu: dict[int, float] = {}
        self._kind: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def cpu_s(self) -> float:
        return sum(self._cpu.values())

    @property
    def cpu_s_by_kind(self) -> dict[str, float]:
        by: dict[str, float] = {}
        for pid, cpu in self._cpu.items():
            by[self._kind[pid]] = by.get(self._kind[pid], 0.0) + cpu
        return dict(sorted(by.items(), key=lambda kv: -kv[1]))

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                procs = [self._root, *self._root.children(recursive=True)]
            except self._psutil.Error:
                return
            rss = 0
            for p in procs:
                try:
                    rss += p.memory_info().rss
                    t = p.cpu_times()
                    self._cpu[p.pid] = max(self._cpu.get(p.pid, 0.0), t.user + t.system)
                    # Until a process is known it is asked again: Debian's /usr/bin/chromium is a sh script that
                    # execs the browser under the same pid, so a sample before the exec sees 'sh' ('other').
                    if self._kind.get(p.pid, "other") == "other":
                        self._kind[p.pid] = process_kind(p, self._root.pid)
                except self._psutil.Error:
                    continue
            self.peak_rss = max(self.peak_rss, rss)
            self._stop.wait(self._every)


def run_sampled(run_argv: list[str], bench: str) -> tuple[str, float, TreeSampler]:
    """Run ``screenmill run *run_argv`` in a fresh process with its whole tree sampled; (stdout, wall seconds,
    sampler).

    Raises:
        SystemExit: the run failed (``bench`` names the benchmark; the end of the run's stderr is in the message).
    """
    cmd = [sys.executable, "-m", "screenmill.pipelines.cli", "run", *run_argv]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with TreeSampler(proc.pid) as sampler:
        stdout, stderr = proc.communicate()
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"bench {bench}: run failed\n{stderr[-3000:]}")
    return stdout, wall, sampler


def check_run_options(prog: str, run_argv: list[str]) -> None:
    """Check the options a benchmark hands to ``screenmill run`` with run's own parser (its messages named ``prog``),
    so that a bad one ends the benchmark before any input is made or run started.

    Raises:
        screenmill.pipelines.argcheck.UsageError: a bad option (its one line is on stderr).
    """
    if run_argv:
        from screenmill.pipelines.options import run_parser

        run_parser(prog, "").parse_known_args(["--output", "mem://not-written", *run_argv])
