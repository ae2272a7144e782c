"""The bench's machine line: what the CPU does with the engine's dtype (annotators/vllm/bench.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from screenmill.annotators.vllm import bench

CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8480+
flags\t\t: fpu sse avx2 fma avx512f avx512_bf16 amx_tile amx_bf16

processor\t: 1
model name\t: something else
flags\t\t: fpu
"""


def test_cpu_flags_reads_the_first_processor():
    model, flags = bench.cpu_flags(CPUINFO)
    assert model == "Intel(R) Xeon(R) Platinum 8480+"
    assert {"avx2", "avx512_bf16", "amx_bf16"} <= flags
    assert "fpu" in flags and len(flags) == 8


def test_cpu_flags_of_an_unreadable_text():
    assert bench.cpu_flags("") == ("unknown", set())


def test_machine_profile_measures_both_dtypes_and_says_whether_bf16_is_native():
    pytest.importorskip("torch")
    m = bench.machine_profile(size=64, seconds=0.05)
    assert m["gflops_fp32"] > 0 and m["gflops_bf16"] > 0
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        _, flags = bench.cpu_flags(cpuinfo.read_text())
        assert m["native_bf16"] == bool(flags & set(bench.NATIVE_BF16_FLAGS))
    line = bench.describe_machine(m)
    assert line.startswith("machine: ") and "bf16/fp32" in line
    assert ("native bf16 yes" in line) == m["native_bf16"]
