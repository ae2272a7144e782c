"""kill -9: runs killed at failpoints inside the writes and the commit, and by a timed SIGKILL from outside, then
rerun; rows lost and duplicated against a clean run must both be 0.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from screenmill.pipelines.selftest.audit import DT, ROOT, run_quietly
from screenmill.pipelines.selftest.images import encode, ui
from screenmill.schemas.tables import PART_GLOB, dead_letter_table, staging_root, table

FAILPOINTS = ("write:screenshots", "write:_done", "commit:before_marker", "commit:after_first_move", "timed")
#: The tables whose rows are counted, each by its catalogue key.
KILL_TABLES = ("screenshots", "grounding", "_done", dead_letter_table("ingest"))


@dataclasses.dataclass
class KillResult:
    points: dict[str, dict[str, int | str]] = dataclasses.field(default_factory=dict)

    @property
    def lost(self) -> int:
        return sum(int(p.get("lost", 0)) for p in self.points.values())

    @property
    def duplicated(self) -> int:
        return sum(int(p.get("duplicated", 0)) for p in self.points.values())

    @property
    def ok(self) -> bool:
        return self.lost == 0 and self.duplicated == 0 and all(p.get("killed") for p in self.points.values())


def crash_inputs(folder: Path) -> None:
    """Five screenshots, a duplicate and a truncated file: every table of a run gets rows."""
    folder.mkdir(parents=True, exist_ok=True)
    for seed in range(5):
        (folder / f"shot_{seed:03d}.png").write_bytes(encode(ui(60 + seed, 480, 300), "PNG"))
    (folder / "copy_of_0.png").write_bytes((folder / "shot_000.png").read_bytes())
    (folder / "broken.png").write_bytes(encode(ui(70), "PNG")[:300])


def table_keys(out: Path) -> dict[str, Counter]:
    """Row keys per table, counted (a key seen twice is a duplicated row)."""
    return {
        name: Counter(tuple(r[c] for c in table(name).key) for r in table(name).read(str(out)).to_pylist())
        for name in KILL_TABLES
    }


def run_args(inp: Path, out: Path, annotator: str) -> list[str]:
    return [
        "--input",
        str(inp),
        "--output",
        str(out),
        "--dt",
        DT,
        "--quiet",
        "--annotator",
        annotator,
        "--num-shards",
        "3",
    ]


def start_run(inp: Path, out: Path, annotator: str, failpoint: str | None = None) -> subprocess.Popen:
    """``screenmill run`` in a child process, with ``SCREENMILL_FAILPOINT`` set when given."""
    from screenmill.stages.store.failpoint import FAILPOINT_ENV

    child_env = {k: v for k, v in os.environ.items() if k != FAILPOINT_ENV}
    if failpoint:
        child_env[FAILPOINT_ENV] = failpoint
    cmd = [sys.executable, "-m", "screenmill.pipelines.cli", "run", *run_args(inp, out, annotator)]
    return subprocess.Popen(cmd, cwd=ROOT, env=child_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def kill_at(inp: Path, out: Path, annotator: str, point: str, timeout_s: float = 300) -> bool:
    """Run and SIGKILL it at ``point`` (a failpoint name, or ``timed``: once it has started writing shards)."""
    if point != "timed":
        proc = start_run(inp, out, annotator, point)
        proc.wait(timeout=timeout_s)
        return proc.returncode == -signal.SIGKILL
    proc = start_run(inp, out, annotator)
    deadline, killed = time.monotonic() + timeout_s, False
    while proc.poll() is None and time.monotonic() < deadline:
        staging = Path(staging_root(str(out)))
        if staging.exists() and any(staging.rglob(PART_GLOB)):
            proc.send_signal(signal.SIGKILL)
            killed = True
            break
        time.sleep(0.02)
    proc.wait(timeout=60)
    return killed


def run_kill9(base: Path, points: tuple[str, ...] = FAILPOINTS, annotator: str = "none") -> KillResult:
    """Kill a run at each point, rerun it, and count rows lost / duplicated against a clean run."""
    inp = base / "in"
    crash_inputs(inp)
    run_quietly(run_args(inp, base / "clean", annotator))
    expected = table_keys(base / "clean")
    res = KillResult()
    for point in points:
        out = base / ("killed_" + point.replace(":", "_"))
        killed = kill_at(inp, out, annotator, point)
        run_quietly(run_args(inp, out, annotator))
        got = table_keys(out)
        lost = sum((expected[t] - got[t]).total() for t in expected)
        duplicated = sum((got[t] - expected[t]).total() for t in expected)
        res.points[point] = {"killed": killed, "lost": lost, "duplicated": duplicated}
    return res
