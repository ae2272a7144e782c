"""``screenmill bench vllm`` on CPU with the tiny random-weight Holotron: ``python -m tests.bench_tiny_vllm [--n 32]``.

CPU machines have no torchvision build, so the model only loads with the test-only shim of
``tests/tiny_holotron.py``; that is why this entry point lives in ``tests/`` and not in the product. On a GPU host
with vLLM installed, run ``screenmill bench vllm --model ... --load-format dummy`` directly
(``infra/RUNBOOK-gpu-bench.md``).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from screenmill.pipelines.bench_vllm import main as bench_vllm

    from tests.tiny_holotron import (
        build_tiny_holotron,
        install_torchvision_shim,
        tiny_run_args,
        torch_compile_disabled,
    )

    with tempfile.TemporaryDirectory(prefix="tiny-holotron-") as tmp:
        model_dir = build_tiny_holotron(Path(tmp) / "Holotron-tiny")
        install_torchvision_shim()
        with torch_compile_disabled():
            return bench_vllm([*tiny_run_args(model_dir), *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
