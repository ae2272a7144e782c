"""``screenmill size``: per-GPU memory sizing of a hybrid Mamba-2/attention VLM → ``max_num_seqs``, token budget.

Reads a Hugging Face ``config.json`` (or a builtin such as ``holotron-12b``) and prints what one GPU holds when vLLM
runs the model: weights, Mamba state, KV cache, vLLM's paged layout, the activation and overhead estimates, and the
``--max-num-seqs`` / ``--max-num-batched-tokens`` to run with. The model is :mod:`screenmill.annotators.vllm.memory`,
the report :mod:`screenmill.annotators.vllm.memory_report`; this module only parses options and prints. Engine options
take ``screenmill run``'s names (:func:`screenmill.pipelines.options.add_engine_options`); ``--tp`` and ``--dtype
bf16|fp16|fp32`` still work.
"""

from __future__ import annotations

import argparse
import json
import sys

from screenmill.annotators.vllm.memory import (
    CUDA_KERNEL_BLOCK,
    GIB,
    GPUS,
    SSM_CACHE_DTYPES,
    gpus_to_size,
    request_profile,
    size_for_gpu,
)
from screenmill.annotators.vllm.memory_report import sizing_json, sizing_report
from screenmill.annotators.vllm.shapes import BUILTIN_CONFIGS, load_config, write_config
from screenmill.pipelines import argcheck as check
from screenmill.pipelines.options import add_engine_options


def _parse_size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"image size must be WIDTHxHEIGHT, got {text!r}") from None
    if w <= 0 or h <= 0:
        raise argparse.ArgumentTypeError(f"image size must be positive, got {text!r}")
    return w, h


def _config(text: str) -> str:
    """A builtin config name, or an existing config.json / model folder."""
    return text if text in BUILTIN_CONFIGS else check.existing_path(text)


def _parser() -> argparse.ArgumentParser:
    p = check.ArgumentParser(
        prog="screenmill size",
        description="GPU memory sizing for a hybrid Mamba-2/attention (NemotronH / Holotron) model config: "
        "max_num_seqs and token budget per GPU. All figures are per GPU (one tensor-parallel rank).",
    )
    p.add_argument(
        "--config",
        required=True,
        type=_config,
        help=f"config.json, a model folder holding one, or a builtin: {', '.join(sorted(BUILTIN_CONFIGS))}",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument("--gpu", choices=(*GPUS, "all"), default="all", help="GPU preset (default: all presets)")
    g.add_argument(
        "--gpu-mem-gib",
        type=check.float_range(0, above=True),
        default=None,
        help="a GPU with this much memory (GiB) instead",
    )
    engine = add_engine_options(
        p,
        names=(
            "dtype",
            "tensor-parallel-size",
            "gpu-memory-utilization",
            "max-model-len",
            "max-num-batched-tokens",
            "kv-cache-gib",
        ),
        dtypes=("bfloat16", "float16", "float32"),
        title="engine (screenmill run's options)",
    )
    hidden = {"type": int, "default": argparse.SUPPRESS, "help": argparse.SUPPRESS}
    engine.add_argument("--tp", dest="tensor_parallel_size", **hidden)  # the older name, still read
    p.add_argument("--kv-cache-dtype", choices=("auto", "fp8"), default="auto", help="attention KV dtype")
    p.add_argument("--mamba-ssm-cache-dtype", choices=SSM_CACHE_DTYPES, default="auto", help="SSM-state dtype")
    r = p.add_argument_group("request length (default: one 1920×1080 screenshot + 160 prompt + 256 answer tokens)")
    r.add_argument(
        "--tokens-per-request", type=check.POSITIVE, default=None, help="average tokens per request, all told"
    )
    r.add_argument("--image-size", type=_parse_size, default=(1920, 1080), help="WIDTHxHEIGHT of a screenshot")
    r.add_argument(
        "--images-per-request", type=check.int_range(1, 4), default=1, help="1; up to 4 for navigate-step with history"
    )
    r.add_argument("--max-tiles", type=check.POSITIVE, default=None, help="tile cap (default: the config's, else 12)")
    r.add_argument("--prompt-tokens", type=check.NON_NEGATIVE, default=160, help="chat template + instruction text")
    r.add_argument(
        "--answer-tokens", type=check.POSITIVE, default=None, help="answer budget (default 256, or the recipe's)"
    )
    r.add_argument(
        "--recipe", type=check.recipe, default=None, help="take --answer-tokens from this recipe's max_tokens"
    )
    e = p.add_argument_group("calibration")
    e.add_argument(
        "--overhead-gib", type=check.float_range(0), default=3.0, help="CUDA context + graph pool + slack (default 3)"
    )
    e.add_argument("--max-num-seqs-cap", type=check.POSITIVE, default=512, help="upper bound for the recommendation")
    e.add_argument(
        "--kernel-block-size", type=check.POSITIVE, default=CUDA_KERNEL_BLOCK, help="attention kernel block (16)"
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of the report")
    p.add_argument(
        "--dump-config",
        type=check.output_file_in_dir,
        default=None,
        help="write the (builtin) config as config.json to this path",
    )
    return p


@check.returns_code
def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        shape = load_config(args.config, max_tiles=args.max_tiles)
    except (FileNotFoundError, ValueError, json.JSONDecodeError) as e:
        print(f"screenmill size: {e}", file=sys.stderr)
        return 2
    if args.dump_config:
        write_config(args.config, args.dump_config)
    answer = args.answer_tokens
    if answer is None and args.recipe:
        from screenmill.annotators.recipes import get_recipe

        answer = get_recipe(args.recipe).max_tokens
    request = request_profile(
        shape,
        tokens_per_request=args.tokens_per_request,
        image_size=args.image_size,
        images_per_request=args.images_per_request,
        prompt_tokens=args.prompt_tokens,
        answer_tokens=256 if answer is None else answer,
    )
    try:
        sizings = [
            size_for_gpu(
                shape,
                gpu=name,
                total_bytes=total,
                request=request,
                dtype=args.dtype,
                utilization=args.gpu_memory_utilization,
                tp=args.tensor_parallel_size,
                max_model_len=args.max_model_len,
                overhead_bytes=int(args.overhead_gib * GIB),
                kv_cache_bytes=None if args.kv_cache_gib is None else int(args.kv_cache_gib * GIB),
                max_num_batched_tokens=args.max_num_batched_tokens,
                kv_cache_dtype=args.kv_cache_dtype,
                mamba_ssm_cache_dtype=args.mamba_ssm_cache_dtype,
                max_num_seqs_cap=args.max_num_seqs_cap,
                kernel_block=args.kernel_block_size,
            )
            for name, total in gpus_to_size(args.gpu, args.gpu_mem_gib)
        ]
    except ValueError as e:
        print(f"screenmill size: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(sizing_json(shape, request, sizings), indent=2))
        return 0
    for s in sizings:
        for w in s.warnings:
            print(f"warning ({s.gpu}): {w}", file=sys.stderr)
    kv, ssm = args.kv_cache_dtype, args.mamba_ssm_cache_dtype
    tp = args.tensor_parallel_size
    print(
        sizing_report(shape, request, sizings, dtype=args.dtype, tp=tp, kv_cache_dtype=kv, mamba_ssm_cache_dtype=ssm)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
