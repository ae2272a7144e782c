"""How ``screenmill size`` (:mod:`screenmill.pipelines.size`) shows the GPU memory model of
:mod:`screenmill.annotators.vllm.memory`: the model's shape, the per-GPU table, the recommended ``screenmill run``
options, the JSON figures and the whole report."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from screenmill.annotators.vllm.memory import (
    DTYPE_ALIASES,
    DTYPE_BYTES,
    GIB,
    MIB,
    CacheLayout,
    RequestProfile,
    Sizing,
    count_parameters,
    kv_bytes_per_token,
    mamba_state_bytes,
    mamba_state_shapes,
    max_image_item_tokens,
    resolve_ssm_cache_dtype,
)
from screenmill.annotators.vllm.shapes import ModelShape


def _gib(n: int) -> str:
    return f"{n / GIB:.2f} GiB"


def _mib(n: int) -> str:
    return f"{n / MIB:.2f} MiB"


def _b(n: float) -> str:
    return f"{n / 1e9:.3f} B"


def model_report(shape: ModelShape, *, dtype: str, tp: int, kv_cache_dtype: str, mamba_ssm_cache_dtype: str) -> str:
    """The model's shape, parameters, Mamba state and KV cache per token, as ``screenmill size`` prints them (dtypes
    by their short names: bf16, fp16, fp32)."""
    t, d = shape.text, DTYPE_BYTES[dtype]
    label = next((short for short, name in DTYPE_ALIASES.items() if name == dtype), dtype)
    p = count_parameters(shape)
    ssm_dtype = resolve_ssm_cache_dtype(t, mamba_ssm_cache_dtype)
    kv_b = d if kv_cache_dtype == "auto" else DTYPE_BYTES[kv_cache_dtype]
    conv, ssm = mamba_state_bytes(t, tp=tp, conv_bytes=d, ssm_bytes=DTYPE_BYTES[ssm_dtype]) if t.n_mamba else (0, 0)
    kv = kv_bytes_per_token(t, tp=tp, kv_bytes=kv_b)
    conv_shape, ssm_shape = mamba_state_shapes(t, tp) if t.n_mamba else ((0, 0), (0, 0, 0))
    lines = [
        f"model: {shape.source}",
        f"  layers: {len(t.layer_types)} = {t.n_mamba} Mamba-2 + {t.n_attention} attention + {t.n_mlp} MLP; "
        f"hidden {t.hidden_size}, vocab {t.vocab_size}",
        f"  parameters: {_b(p.total)} = LM {_b(p.language_model)} (embeddings {_b(p.embedding)}, LM head "
        f"{_b(p.lm_head)}, Mamba {_b(p.mamba)}, attention {_b(p.attention)}, MLP {_b(p.mlp)}, norms {_b(p.norms)})"
        + (f" + ViT {_b(p.vision)} + projector {_b(p.projector)}" if shape.vision else ""),
        f"  weights ({label}): {_gib(p.total * d)}" + (f"; per rank at tp={tp}: see the table" if tp > 1 else ""),
        f"  Mamba state per sequence and layer{f' (tp={tp})' if tp > 1 else ''}: conv {conv_shape} {label} = "
        f"{conv:,} B + SSM {ssm_shape} {ssm_dtype} = {ssm:,} B → {conv + ssm:,} B; × {t.n_mamba} layers = "
        f"{_mib((conv + ssm) * t.n_mamba)} per sequence, whatever its length",
        f"  KV cache per token: 2 × {max(1, t.num_key_value_heads // tp)} KV heads × {t.head_dim} × {kv_b} B = "
        f"{kv:,} B per attention layer; × {t.n_attention} layers = {kv * t.n_attention:,} B per token",
    ]
    if shape.image:
        i = shape.image
        lines.append(
            f"  images: {i.tile_size} px tiles, {i.tokens_per_tile} tokens per tile, ≤ {i.max_tiles} tiles"
            + (" + thumbnail" if i.use_thumbnail else "")
            + f" (largest image {max_image_item_tokens(i)} tokens)"
        )
    lines += [f"  note: {n}" for n in shape.notes]
    return "\n".join(lines)


def sizing_json(shape: ModelShape, request: RequestProfile, sizings: Sequence[Sizing]) -> dict:
    """The figures as ``screenmill size --json`` prints them: parameters, the request, one entry per GPU."""
    params = count_parameters(shape)
    return {
        "model": shape.source,
        "parameters": dataclasses.asdict(params) | {"total": params.total},
        "request": dataclasses.asdict(request),
        "gpus": [dataclasses.asdict(s) | {"bytes_per_block": s.layout.bytes_per_block} for s in sizings],
    }


def run_flags(sizing: Sizing, tp: int = 1) -> str:
    """The ``screenmill run`` engine options a sizing recommends."""
    return (
        f"--max-num-seqs {sizing.max_num_seqs} --max-num-batched-tokens {sizing.max_num_batched_tokens} "
        f"--max-model-len {sizing.max_model_len} --gpu-memory-utilization {sizing.utilization:g}"
        + (f" --tensor-parallel-size {tp}" if tp > 1 else "")
    )


def sizing_table(sizings: Sequence[Sizing]) -> str:
    """A Markdown table, one column per GPU."""
    first = sizings[0]
    layout, request = first.layout, first.request
    rows: list[tuple[str, list[str]]] = [
        ("GPU memory (nvidia-smi total)", [_gib(s.total) for s in sizings]),
        ("× gpu_memory_utilization", [f"{s.utilization:g} → {_gib(s.budget)}" for s in sizings]),
        ("− weights", [_gib(s.weights) for s in sizings]),
        ("− activation peak (estimate)", [_gib(s.activations) if not s.kv_pool_given else "—" for s in sizings]),
        (
            "− CUDA context, graphs, slack (estimate)",
            [_gib(s.overhead) if not s.kv_pool_given else "—" for s in sizings],
        ),
        ("= KV/Mamba block pool", [_gib(s.kv_pool) + (" (given)" if s.kv_pool_given else "") for s in sizings]),
        (
            f"block: {s_layout(layout)}",
            [f"{s.num_blocks:,} blocks of {_mib(s.layout.bytes_per_block)}" for s in sizings],
        ),
        (
            f"per request ({request.tokens} tokens), paged",
            [
                f"{s.blocks_per_request} blocks = {_mib(s.blocks_per_request * s.layout.bytes_per_block)}"
                for s in sizings
            ],
        ),
        ("per request, unpadded (Mamba states + KV)", [_mib(s.unpadded_request_bytes) for s in sizings]),
        ("max concurrent requests", [f"{s.max_concurrency:,}" for s in sizings]),
        ("**recommended --max-num-seqs**", [f"**{s.max_num_seqs}**" for s in sizings]),
        ("**recommended --max-num-batched-tokens**", [f"**{s.max_num_batched_tokens}**" for s in sizings]),
        (
            "max_model_len fits",
            [("yes" if s.max_model_len_fits else "**no**") + f" ({s.max_model_len})" for s in sizings],
        ),
    ]
    header = "| | " + " | ".join(s.gpu for s in sizings) + " |"
    sep = "|---|" + "---:|" * len(sizings)
    body = [f"| {name} | " + " | ".join(values) + " |" for name, values in rows]
    return "\n".join([header, sep, *body])


def s_layout(layout: CacheLayout) -> str:
    """One line on the paged layout."""
    if layout.attention_groups and layout.mamba_groups:
        return (
            f"{layout.block_size} tokens, {layout.group_size} layers × {_mib(layout.page)} page "
            f"({layout.mamba_groups} Mamba + {layout.attention_groups} attention groups)"
        )
    return f"{layout.group_size} layers × {_mib(layout.page)} page"


def sizing_report(
    shape: ModelShape,
    request: RequestProfile,
    sizings: Sequence[Sizing],
    *,
    dtype: str,
    tp: int,
    kv_cache_dtype: str,
    mamba_ssm_cache_dtype: str,
) -> str:
    """The text ``screenmill size`` prints: :func:`model_report`, the request, :func:`sizing_table`, the ``screenmill
    run`` options per GPU (:func:`run_flags`) and how to calibrate the estimates."""
    model = model_report(
        shape, dtype=dtype, tp=tp, kv_cache_dtype=kv_cache_dtype, mamba_ssm_cache_dtype=mamba_ssm_cache_dtype
    )
    runs = "".join(f"\n{s.gpu}: screenmill run … --annotator vllm {run_flags(s, tp)}\n" for s in sizings)
    return (
        f"{model}\nrequest: {request.description}\n\n{sizing_table(sizings)}\n{runs}"
        "\nEstimates: activations and overhead. Calibrate: start the engine once, read vLLM's "
        "'Available KV cache memory: X GiB' and rerun with --kv-cache-gib X."
    )
