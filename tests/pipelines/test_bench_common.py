"""What the benchmarks share: the process-tree sampler and the 10x/1x ratios."""

from __future__ import annotations

import json

import pytest
from screenmill.pipelines.bench_common import scale_ratios


def test_a_process_that_execs_into_the_browser_is_counted_as_the_browser(tmp_path):
    """Debian's /usr/bin/chromium is a sh script that execs Chromium under the same pid: a sample taken before the
    exec must not pin that process as 'other' for the rest of the run."""
    import subprocess
    import sys

    from screenmill.pipelines.bench_common import TreeSampler

    chromium = tmp_path / "chromium"  # a stand-in binary: only its name matters to process_kind
    chromium.symlink_to("/bin/sleep")
    wrapper = f"import os, time; time.sleep(0.6); os.execv({str(chromium)!r}, [{str(chromium)!r}, '0.4'])"
    job = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {wrapper!r}], check=True)"
    proc = subprocess.Popen([sys.executable, "-c", job])
    with TreeSampler(proc.pid, every_s=0.05) as sampler:
        assert proc.wait(timeout=30) == 0
    assert set(sampler.cpu_s_by_kind) == {"job", "browser"}


def test_scale_ratios_separate_the_steady_state_from_start_up(tmp_path, capsys):
    # 4 cpu-s of start-up, then 0.3 cpu-s a screenshot: 10 + 200 * 0.3 = 64 cpu-s for 200 screenshots
    small = {"screenshots": 20, "cpu_s": 10.0, "per_cpu_s": 2.0, "peak_rss_mib": 100.0}
    large = {"screenshots": 200, "cpu_s": 64.0, "per_cpu_s": 200 / 64, "peak_rss_mib": 110.0}
    out = tmp_path / "r.json"
    ratios = scale_ratios({"1x": small, "10x": large}, "target", str(out))
    assert ratios["steady_per_cpu_s"] == pytest.approx(1 / 0.3)
    assert ratios["startup_cpu_s"] == pytest.approx(4.0)
    assert ratios["throughput_10x_over_1x"] == pytest.approx(large["per_cpu_s"] / 2.0)
    assert json.loads(out.read_text())["ratios"]["startup_cpu_s"] == pytest.approx(4.0)
    assert (
        "steady state (10x less 1x): 3.33 screenshots per cpu-s; start-up 4.0 cpu-s a run" in capsys.readouterr().out
    )
    # no CPU added (a noisy machine, or no per-size CPU at all): no steady-state figure rather than a wrong one
    flat = {**large, "cpu_s": 10.0}
    assert "steady_per_cpu_s" not in scale_ratios({"1x": small, "10x": flat}, "target", None)
    bare = {k: v for k, v in small.items() if k != "cpu_s"}
    assert "steady_per_cpu_s" not in scale_ratios({"1x": bare, "10x": large}, "target", None)
