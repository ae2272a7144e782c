"""``screenmill size``: per-GPU memory sizing of a hybrid Mamba-2/attention VLM → ``max_num_seqs``, token budget.

Reads any Hugging Face ``config.json`` of a NemotronH-style model (plain ``nemotron_h``, or the nested
``NemotronH_Nano_VL_V2`` layout: ``llm_config`` / ``text_config`` + ``vision_config``) and models what one GPU holds
when vLLM (v1 engine) runs it:

``weights``
    Parameters counted from the config, layer by layer, the way vLLM builds the model: embeddings and LM head (vocab
    padded to a multiple of 64), each Mamba-2 layer (``in_proj`` → z, x, B, C, dt; ``conv1d`` + bias; ``A``, ``D``,
    ``dt_bias``; the gated RMSNorm; ``out_proj``), each attention layer (q/k/v/o with GQA), each MLP layer (up/down,
    squared ReLU, no gate), the norms; the RADIO ViT (patch embedder, position table, class/register tokens, blocks
    with layer scales) and the pixel-shuffle MLP projector when the config has a RADIO ``vision_config``. Exact for
    these architectures (``tests/pipelines/test_size.py`` checks the counts against vLLM's own modules built on the
    meta device); other vision encoders are not modelled and are reported as such.
``Mamba state``
    Constant per sequence and per Mamba layer: conv state ``(conv_kernel - 1) × (d_inner + 2·n_groups·d_state)`` in
    the model dtype plus SSM state ``n_heads × head_dim × d_state`` in the SSM-cache dtype. vLLM resolves
    ``mamba_ssm_cache_dtype=auto`` for NemotronH to the config's ``mamba_ssm_cache_dtype``, else **float32**
    (``NemotronHForCausalLMConfig`` in ``vllm/model_executor/models/config.py``).
``KV cache``
    Per token and attention layer: ``2 × n_kv_heads × head_dim × bytes`` (only the few ``*`` layers have one).
``paged layout``
    vLLM v1 keeps both in one block pool: the attention block size is raised until one attention page (per layer) is
    at least one Mamba state, the Mamba page is padded to it (``Platform._align_hybrid_block_size``), and layers are
    grouped so every group holds the same number of layers (``_get_kv_cache_groups_uniform_page_size``, padding
    included). A request then takes one block per Mamba group plus ``ceil(tokens / block_size)`` per attention group;
    this is what decides concurrency, and it is a few percent above the unpadded sum.
``headroom`` (estimates, flagged as such)
    Peak activations of vLLM's profiling pass over ``max_num_batched_tokens`` (the widest per-token intermediate of a
    layer + hidden/residual streams; the ViT + projector over the same token budget; fp32 logits of ``max_num_seqs``
    rows), plus a fixed ``--overhead-gib`` for the CUDA context, CUDA-graph pool and allocator slack. The KV pool is
    ``total × gpu_memory_utilization − weights − activations − overhead``, the way vLLM's
    ``Worker.determine_available_memory`` derives it. Calibrate with vLLM's start-up log line
    ``Available KV cache memory: X GiB`` (``--kv-cache-gib X`` then skips the estimate).

Request length = image tokens from the tile plan (:func:`annotators.vllm.tile_plan.plan_tiles`: 256 tokens per 512 px
tile, plus a thumbnail when there is more than one tile) × images + prompt text + answer, or ``--tokens-per-request``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

GIB = 1024**3
MIB = 1024**2

# Total device memory as nvidia-smi reports it (memory.total): H100 SXM 80 GB HBM3 = 81559 MiB, H200 141 GB =
# 143771 MiB. vLLM takes gpu_memory_utilization of the total (torch.cuda.mem_get_info's total).
GPUS: dict[str, tuple[str, int]] = {
    "h100-80gb": ("NVIDIA H100 80GB HBM3", 81559 * MIB),
    "h200-141gb": ("NVIDIA H200 141GB HBM3e", 143771 * MIB),
}
DTYPE_BYTES = {"bf16": 2, "bfloat16": 2, "fp16": 2, "float16": 2, "half": 2, "fp32": 4, "float32": 4, "fp8": 1}
SSM_CACHE_DTYPES = ("auto", "float32", "bfloat16", "float16")
NEMOTRON_H_DEFAULT_SSM_CACHE_DTYPE = "float32"  # vLLM NemotronHForCausalLMConfig.DEFAULT_MAMBA_SSM_CACHE_DTYPE
VOCAB_PADDING = 64  # vLLM DEFAULT_VOCAB_PADDING_SIZE (VocabParallelEmbedding / ParallelLMHead)
# vLLM's CUDA attention backends (FlashAttention, FlashInfer) take kernel blocks in multiples of 16 and the default
# block size is 16 (CacheConfig.DEFAULT_BLOCK_SIZE); the CPU backend uses 32 / 128.
CUDA_KERNEL_BLOCK = 16
DEFAULT_BLOCK_SIZE = 16
# ViT dimensions by timm name: (hidden, layers, heads, mlp) — vLLM's radio VIT_TIMM_DIM_BY_NAME.
VIT_DIMS: dict[str, tuple[int, int, int, int]] = {
    "vit_small_patch16_224": (384, 12, 6, 1536),
    "vit_base_patch16_224": (768, 12, 12, 3072),
    "vit_large_patch16_224": (1024, 24, 16, 4096),
    "vit_huge_patch16_224": (1280, 32, 16, 5120),
}

# Holotron-12B = Nemotron-Nano-12B-v2-VL architecture (NemotronH_Nano_VL_V2). No weights or files can be fetched
# here, so this is the architecture as documented, field by field:
#   LM (NVIDIA-Nemotron-Nano-12B-v2, "nemotron5-hybrid-12b"): hidden 5120, 62 layers with the pattern below (6
#     attention), 40 query / 8 KV heads of 128, MLP 20480 (squared ReLU), 128 Mamba heads × 80, d_state 128,
#     8 groups, vocab 131072, untied embeddings, 131072 positions — NVIDIA Megatron-Bridge
#     NemotronNano12Bv2Provider / NemotronNano12Bv2VLModelProvider
#     (docs.nvidia.com/nemo/megatron-bridge/…/bridge.models.nemotron_vl.nemotron_vl_provider), the Megatron
#     training flags (--num-layers 62 --hidden-size 5120 --ffn-hidden-size 20480 --num-attention-heads 40
#     --num-query-groups 8 --kv-channels 128 --mamba-head-dim 80 --untie-embeddings-and-output-weights
#     --disable-bias-linear) and the HF config values quoted for Nemotron-Nano-12B-v2-Base (chunk_size 128).
#     conv_kernel 4 / use_conv_bias true / use_bias false are the NemotronH defaults every released config keeps.
#     mamba_ssm_cache_dtype is left out: vLLM then uses float32 (its NemotronH default).
#   Vision (C-RADIOv2-H): vit_huge_patch16_224 (1280 wide, 32 blocks, MLP 5120), 512 px tiles of 16 px patches,
#     position table for cpe_max_size 2048 (the RADIO v2.5 / C-RADIO value), pixel shuffle 0.5 → 256 tokens per
#     tile, thumbnail on, ≤ 12 tiles (model card: "12-tile layout … 512 × 512 pixels per tile").
#     vit_hidden_size 1280 / projector_hidden_size 20480 as in the NemotronH Nano VL config family (the published
#     Nemotron Nano Omni config carries the same two values); treat the projector width as ±0.34 GB of weights.
#     Teachers (clip, siglip, dino_v2, sam) only fix 8 class/register tokens: 10 240 parameters either way.
#   Model card total: 12.6 B parameters; this config counts 13.17 B (LM 12.31 B + ViT 0.65 B + projector 0.21 B).
HOLOTRON_12B_CONFIG: dict[str, Any] = {
    "architectures": ["NemotronH_Nano_VL_V2"],
    "model_type": "NemotronH_Nano_VL_V2",
    "llm_config": {
        "architectures": ["NemotronHForCausalLM"],
        "model_type": "nemotron_h",
        "hidden_size": 5120,
        "num_hidden_layers": 62,
        "hybrid_override_pattern": "M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M-",
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "attention_bias": False,
        "intermediate_size": 20480,
        "mlp_hidden_act": "relu2",
        "mlp_bias": False,
        "mamba_num_heads": 128,
        "mamba_head_dim": 80,
        "ssm_state_size": 128,
        "n_groups": 8,
        "conv_kernel": 4,
        "chunk_size": 128,
        "use_conv_bias": True,
        "use_bias": False,
        "mamba_hidden_act": "silu",
        "vocab_size": 131072,
        "tie_word_embeddings": False,
        "max_position_embeddings": 131072,
        "torch_dtype": "bfloat16",
    },
    "vision_config": {
        "model_type": "radio",
        "args": {
            "model": "vit_huge_patch16_224",
            "cpe_max_size": 2048,
            "register_multiple": 8,
            "cls_token_per_teacher": True,
            "teachers": [{"name": "clip"}, {"name": "siglip"}, {"name": "dino_v2"}, {"name": "sam"}],
        },
        "patch_size": 16,
        "preferred_resolution": [512, 512],
        "max_resolution": 2048,
    },
    "force_image_size": 512,
    "patch_size": 16,
    "downsample_ratio": 0.5,
    "ps_version": "v2",
    "use_thumbnail": True,
    "max_dynamic_patch": 12,
    "vit_hidden_size": 1280,
    "projector_hidden_size": 20480,
    "torch_dtype": "bfloat16",
}
BUILTIN_CONFIGS = {"holotron-12b": HOLOTRON_12B_CONFIG}


# --------------------------------------------------------------------------------------------------------------
# Config parsing
# --------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TextShape:
    """The language model's dimensions (NemotronH)."""

    layer_types: tuple[str, ...]  # per layer: "mamba", "attention" or "mlp"
    hidden_size: int
    vocab_size: int
    tie_word_embeddings: bool
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    attention_bias: bool
    intermediate_sizes: tuple[int, ...]  # one per MLP layer, in order
    mlp_bias: bool
    mamba_num_heads: int
    mamba_head_dim: int
    ssm_state_size: int
    n_groups: int
    conv_kernel: int
    use_conv_bias: bool
    mamba_proj_bias: bool
    chunk_size: int
    mamba_ssm_cache_dtype: str | None  # as written in the config (None: absent)
    num_nextn_predict_layers: int = 0

    @property
    def n_mamba(self) -> int:
        return self.layer_types.count("mamba")

    @property
    def n_attention(self) -> int:
        return self.layer_types.count("attention")

    @property
    def n_mlp(self) -> int:
        return self.layer_types.count("mlp")

    @property
    def d_inner(self) -> int:
        return self.mamba_num_heads * self.mamba_head_dim

    @property
    def conv_dim(self) -> int:
        return self.d_inner + 2 * self.n_groups * self.ssm_state_size

    @property
    def in_proj_dim(self) -> int:
        """z, x, B, C, dt: 2·d_inner + 2·n_groups·d_state + n_heads."""
        return 2 * self.d_inner + 2 * self.n_groups * self.ssm_state_size + self.mamba_num_heads


@dataclasses.dataclass(frozen=True)
class VisionShape:
    """A RADIO ViT and the pixel-shuffle MLP projector of NemotronH_Nano_VL_V2."""

    model_name: str
    hidden_size: int
    num_layers: int
    num_heads: int
    mlp_size: int
    patch_size: int
    cpe_max_size: int
    num_cls_tokens: int
    register_multiple: int | None
    qkv_bias: bool
    qk_normalization: bool
    video_temporal_patch_size: int
    downsample_ratio: float
    projector_hidden_size: int
    llm_hidden_size: int
    final_layernorm: bool  # vision_final_layernorm (checkpoints with MTP layers)

    @property
    def num_registers(self) -> int:
        if not self.register_multiple:
            return 0
        return self.register_multiple - (self.num_cls_tokens % self.register_multiple)

    @property
    def shuffle_factor(self) -> int:
        """ViT patches merged into one LM token by the pixel shuffle (4 for downsample_ratio 0.5)."""
        return int(round(1 / self.downsample_ratio)) ** 2


@dataclasses.dataclass(frozen=True)
class ImageTokens:
    """How images become LM tokens: square tiles of ``tile_size`` px, ``tokens_per_tile`` each, optional thumbnail."""

    tile_size: int
    tokens_per_tile: int
    use_thumbnail: bool
    max_tiles: int


@dataclasses.dataclass(frozen=True)
class ModelShape:
    text: TextShape
    vision: VisionShape | None
    image: ImageTokens | None
    source: str
    notes: tuple[str, ...] = ()


def _read_config(path_or_name: str) -> tuple[dict, str]:
    if path_or_name in BUILTIN_CONFIGS:
        return json.loads(json.dumps(BUILTIN_CONFIGS[path_or_name])), f"builtin:{path_or_name}"
    path = os.path.expanduser(path_or_name)
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"no config.json at {path_or_name!r} "
            f"(give a config.json, a model folder, or one of {sorted(BUILTIN_CONFIGS)})"
        )
    with open(path, encoding="utf-8") as f:
        return json.load(f), path


def _layer_types(text: Mapping[str, Any]) -> tuple[str, ...]:
    names = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}
    if isinstance(text.get("hybrid_override_pattern"), str):
        pattern = text["hybrid_override_pattern"]
        unknown = sorted(set(pattern) - set(names))
        if unknown:
            raise ValueError(f"hybrid_override_pattern has unknown layer symbols {unknown} (known: M * - E)")
        types = tuple(names[c] for c in pattern)
    elif isinstance(text.get("layers_block_type"), list):
        types = tuple(str(t) for t in text["layers_block_type"])
        unknown = sorted(set(types) - set(names.values()))
        if unknown:
            raise ValueError(f"layers_block_type has unknown layer kinds {unknown}")
    else:
        raise ValueError(
            "not a hybrid NemotronH config: the text config has neither hybrid_override_pattern nor layers_block_type"
        )
    if "moe" in types:
        raise ValueError("MoE ('E') layers are not modelled by screenmill size (NemotronH dense configs only)")
    n = text.get("num_hidden_layers")
    if n is not None and n != len(types):
        raise ValueError(f"num_hidden_layers={n} but the layer pattern has {len(types)} layers")
    return types


def _need(cfg: Mapping[str, Any], key: str, where: str):
    if key not in cfg or cfg[key] is None:
        raise ValueError(f"{where} has no {key!r}")
    return cfg[key]


def parse_text_config(text: Mapping[str, Any]) -> TextShape:
    """The NemotronH language model of a (sub-)config dict."""
    types = _layer_types(text)
    where = "text config"
    hidden = int(_need(text, "hidden_size", where))
    heads = int(_need(text, "num_attention_heads", where))
    raw_inter = _need(text, "intermediate_size", where)
    n_mlp = types.count("mlp")
    if isinstance(raw_inter, list):
        inter = tuple(int(v) for v in raw_inter) if len(raw_inter) > 1 else (int(raw_inter[0]),) * n_mlp
        if len(inter) != n_mlp:
            raise ValueError(f"intermediate_size lists {len(inter)} sizes for {n_mlp} MLP layers")
    else:
        inter = (int(raw_inter),) * n_mlp
    return TextShape(
        layer_types=types,
        hidden_size=hidden,
        vocab_size=int(_need(text, "vocab_size", where)),
        tie_word_embeddings=bool(text.get("tie_word_embeddings", False)),
        num_attention_heads=heads,
        num_key_value_heads=int(text.get("num_key_value_heads") or heads),
        head_dim=int(text.get("head_dim") or hidden // heads),
        attention_bias=bool(text.get("attention_bias", False)),
        intermediate_sizes=inter,
        mlp_bias=bool(text.get("mlp_bias", False)),
        mamba_num_heads=int(_need(text, "mamba_num_heads", where)),
        mamba_head_dim=int(_need(text, "mamba_head_dim", where)),
        ssm_state_size=int(_need(text, "ssm_state_size", where)),
        n_groups=int(_need(text, "n_groups", where)),
        conv_kernel=int(text.get("conv_kernel", 4)),
        use_conv_bias=bool(text.get("use_conv_bias", True)),
        mamba_proj_bias=bool(text.get("use_bias", False)),
        chunk_size=int(text.get("chunk_size") or 128),
        mamba_ssm_cache_dtype=text.get("mamba_ssm_cache_dtype"),
        num_nextn_predict_layers=int(text.get("num_nextn_predict_layers") or 0),
    )


def _vision_shape(cfg: Mapping[str, Any], text: TextShape) -> tuple[VisionShape | None, str | None]:
    vision = cfg.get("vision_config")
    if not isinstance(vision, Mapping):
        return None, None
    args = vision.get("args") if isinstance(vision.get("args"), Mapping) else {}
    name = args.get("model")
    if vision.get("model_type") != "radio" and not name:
        return None, f"vision encoder {vision.get('model_type')!r} not modelled: its weights are left out"
    if name not in VIT_DIMS:
        return None, f"RADIO backbone {name!r} not in {sorted(VIT_DIMS)}: vision weights left out"
    hidden, layers, heads, mlp = VIT_DIMS[name]
    teachers = args.get("teachers") or []
    per_teacher = bool(args.get("cls_token_per_teacher", False))
    num_cls = len({t.get("name") for t in teachers}) if per_teacher else 1
    vit_hidden = int(cfg.get("vit_hidden_size") or hidden)
    if vit_hidden != hidden:
        raise ValueError(f"vit_hidden_size={vit_hidden} does not match {name} ({hidden})")
    shape = VisionShape(
        model_name=name,
        hidden_size=hidden,
        num_layers=layers,
        num_heads=heads,
        mlp_size=mlp,
        patch_size=int(vision.get("patch_size") or cfg.get("patch_size") or 16),
        cpe_max_size=int(args.get("cpe_max_size") or 2048),
        num_cls_tokens=max(num_cls, 1),
        register_multiple=args.get("register_multiple"),
        qkv_bias=bool(args.get("qkv_bias", True)),
        qk_normalization=bool(args.get("qk_normalization", False)),
        video_temporal_patch_size=int(vision.get("video_temporal_patch_size") or 1),
        downsample_ratio=float(cfg.get("downsample_ratio") or 0.5),
        projector_hidden_size=int(_need(cfg, "projector_hidden_size", "VL config")),
        llm_hidden_size=text.hidden_size,
        final_layernorm=text.num_nextn_predict_layers > 0,
    )
    return shape, None


def load_config(path_or_name: str, *, max_tiles: int | None = None) -> ModelShape:
    """A model's shape from its ``config.json`` (file, model folder, or a builtin name such as ``holotron-12b``).

    Raises:
        FileNotFoundError: no config there.
        ValueError: not a dense NemotronH hybrid config, or inconsistent.
    """
    cfg, source = _read_config(path_or_name)
    text_cfg = cfg.get("llm_config") or cfg.get("text_config") or cfg
    text = parse_text_config(text_cfg)
    notes = []
    vision, note = _vision_shape(cfg, text)
    if note:
        notes.append(note)
    if cfg.get("sound_config"):
        notes.append("sound encoder not modelled: its weights are left out")
    image = None
    if cfg.get("force_image_size") and cfg.get("patch_size"):
        size, patch = int(cfg["force_image_size"]), int(cfg["patch_size"])
        ratio = float(cfg.get("downsample_ratio") or 0.5)
        image = ImageTokens(
            tile_size=size,
            tokens_per_tile=int((size // patch) ** 2 * ratio**2),  # NemotronH_Nano_VL_V2.num_image_token
            use_thumbnail=bool(cfg.get("use_thumbnail", True)),
            max_tiles=int(max_tiles or cfg.get("max_dynamic_patch") or 12),
        )
    return ModelShape(text=text, vision=vision, image=image, source=source, notes=tuple(notes))


# --------------------------------------------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ParamCount:
    embedding: int
    lm_head: int
    mamba: int
    attention: int
    mlp: int
    norms: int
    vision: int
    projector: int

    @property
    def language_model(self) -> int:
        return self.embedding + self.lm_head + self.mamba + self.attention + self.mlp + self.norms

    @property
    def total(self) -> int:
        return self.language_model + self.vision + self.projector


def padded_vocab(vocab: int, tp: int = 1) -> int:
    """vLLM pads the vocabulary to a multiple of 64 × tp (VocabParallelEmbedding)."""
    step = VOCAB_PADDING * tp
    return -(-vocab // step) * step


def mamba_layer_params(t: TextShape) -> int:
    bias = t.in_proj_dim if t.mamba_proj_bias else 0
    in_proj = t.hidden_size * t.in_proj_dim + bias
    conv = t.conv_dim * t.conv_kernel + (t.conv_dim if t.use_conv_bias else 0)
    heads = 3 * t.mamba_num_heads  # A, D, dt_bias
    norm = t.d_inner  # gated RMSNorm
    out_proj = t.d_inner * t.hidden_size + (t.hidden_size if t.mamba_proj_bias else 0)
    return in_proj + conv + heads + norm + out_proj


def attention_layer_params(t: TextShape) -> int:
    q = t.num_attention_heads * t.head_dim
    kv = t.num_key_value_heads * t.head_dim
    qkv = t.hidden_size * (q + 2 * kv) + ((q + 2 * kv) if t.attention_bias else 0)
    o = q * t.hidden_size + (t.hidden_size if t.attention_bias else 0)
    return qkv + o


def mlp_layer_params(t: TextShape, intermediate: int) -> int:
    bias = (intermediate + t.hidden_size) if t.mlp_bias else 0
    return 2 * t.hidden_size * intermediate + bias


def vision_params(v: VisionShape) -> tuple[int, int]:
    """(ViT, projector) parameters, as vLLM's RadioModel and ``mlp1`` hold them."""
    h, m = v.hidden_size, v.mlp_size
    qkv = 3 * h * h + (3 * h if v.qkv_bias else 0)
    block = qkv + (h * h + h) + (m * h + m) + (h * m + h) + 4 * h + 2 * h  # + norm1/norm2 (w, b) + ls1/ls2
    if v.qk_normalization:
        block += 2 * h
    max_img = int(round(v.cpe_max_size / v.patch_size) * v.patch_size)
    rows = math.ceil(max_img / v.patch_size)
    patch_in = 3 * v.patch_size**2
    embed = patch_in * h  # ViTPatchLinear, no bias
    if v.video_temporal_patch_size > 1:
        embed += patch_in * v.video_temporal_patch_size * h
    vit = v.num_layers * block + embed + rows * rows * h + (v.num_cls_tokens + v.num_registers) * h
    proj_in = h * v.shuffle_factor
    projector = proj_in + proj_in * v.projector_hidden_size + v.projector_hidden_size * v.llm_hidden_size
    if v.final_layernorm:
        projector += 2 * h
    return vit, projector


def count_parameters(shape: ModelShape, tp: int = 1) -> ParamCount:
    """Parameters of the whole model (``tp=1``) or held by one tensor-parallel rank (approximately: sharded layers
    divided by ``tp``; norms and the projector replicated; the ViT counted whole, on the safe side)."""
    t = shape.text
    vocab = padded_vocab(t.vocab_size, tp)
    embedding = vocab * t.hidden_size // tp
    lm_head = 0 if t.tie_word_embeddings else embedding
    mamba = t.n_mamba * mamba_layer_params(t) // tp
    attention = t.n_attention * attention_layer_params(t) // tp
    mlp = sum(mlp_layer_params(t, i) for i in t.intermediate_sizes) // tp
    norms = (len(t.layer_types) + 1) * t.hidden_size  # one RMSNorm per layer + the final norm
    vit, projector = vision_params(shape.vision) if shape.vision else (0, 0)
    return ParamCount(embedding, lm_head, mamba, attention, mlp, norms, vit, projector)


# --------------------------------------------------------------------------------------------------------------
# Mamba state, KV cache, vLLM's paged layout
# --------------------------------------------------------------------------------------------------------------


def resolve_ssm_cache_dtype(text: TextShape, requested: str = "auto") -> str:
    """The SSM-state dtype vLLM uses for NemotronH: the request, else the config's, else float32."""
    if requested != "auto":
        return requested
    return text.mamba_ssm_cache_dtype or NEMOTRON_H_DEFAULT_SSM_CACHE_DTYPE


def mamba_state_shapes(t: TextShape, tp: int = 1) -> tuple[tuple[int, int], tuple[int, int, int]]:
    """(conv state, SSM state) shapes per sequence and Mamba layer on one rank — vLLM's
    ``MambaStateShapeCalculator.mamba2_state_shape`` (conv layout (state_len, dim))."""
    groups = t.n_groups + (0 if t.n_groups % tp == 0 else tp - t.n_groups)
    conv_dim = t.d_inner + 2 * groups * t.ssm_state_size
    if conv_dim % tp or t.mamba_num_heads % tp:
        raise ValueError(f"Mamba dims ({conv_dim} conv channels, {t.mamba_num_heads} heads) do not divide by tp={tp}")
    return (t.conv_kernel - 1, conv_dim // tp), (t.mamba_num_heads // tp, t.mamba_head_dim, t.ssm_state_size)


def mamba_state_bytes(t: TextShape, *, tp: int = 1, conv_bytes: int = 2, ssm_bytes: int = 4) -> tuple[int, int]:
    """(conv, SSM) bytes per sequence and Mamba layer on one rank."""
    conv, ssm = mamba_state_shapes(t, tp)
    return math.prod(conv) * conv_bytes, math.prod(ssm) * ssm_bytes


def kv_bytes_per_token(t: TextShape, *, tp: int = 1, kv_bytes: int = 2) -> int:
    """K + V bytes per token and attention layer on one rank (KV heads replicated when tp > n_kv_heads)."""
    return 2 * max(1, t.num_key_value_heads // tp) * t.head_dim * kv_bytes


@dataclasses.dataclass(frozen=True)
class CacheLayout:
    """vLLM v1's block pool for a hybrid model (prefix caching off, ``mamba_cache_mode="none"``)."""

    block_size: int  # attention tokens per block
    attention_page: int  # bytes per block and attention layer
    mamba_state: int  # unpadded bytes per sequence and Mamba layer (conv + SSM)
    page: int  # bytes per block and layer, every group (the Mamba page padded to it)
    group_size: int  # layers per KV-cache group
    mamba_groups: int
    attention_groups: int

    @property
    def bytes_per_block(self) -> int:
        return self.group_size * self.page

    def blocks_per_request(self, tokens: int) -> int:
        """Blocks one running request holds: one per Mamba group + ceil(tokens / block_size) per attention group."""
        attention = -(-tokens // self.block_size) if self.attention_groups else 0
        return self.mamba_groups + self.attention_groups * attention

    def bytes_per_request(self, tokens: int) -> int:
        return self.blocks_per_request(tokens) * self.bytes_per_block


def aligned_block_size(
    mamba_page: int,
    attention_page_1_token: int,
    *,
    kernel_block: int = CUDA_KERNEL_BLOCK,
    base: int = DEFAULT_BLOCK_SIZE,
) -> int:
    """The attention block size vLLM picks so one attention page ≥ one Mamba state (``_align_hybrid_block_size``)."""
    align = max(kernel_block, base)
    size = align * -(-mamba_page // (align * attention_page_1_token))
    size = kernel_block * -(-size // kernel_block)
    return max(base, size)


def _groups(n_mamba: int, n_attention: int) -> tuple[int, int, int]:
    counts = [n for n in (n_mamba, n_attention) if n]
    if not counts:
        raise ValueError("the model has neither Mamba nor attention layers")
    low, high = min(counts), max(counts)
    size = high if (len(counts) == 1 or high < 1.5 * low) else low
    return size, -(-n_mamba // size), -(-n_attention // size)


def cache_layout(
    t: TextShape,
    *,
    tp: int = 1,
    conv_bytes: int = 2,
    ssm_bytes: int = 4,
    kv_bytes: int = 2,
    kernel_block: int = CUDA_KERNEL_BLOCK,
    base_block: int = DEFAULT_BLOCK_SIZE,
) -> CacheLayout:
    conv, ssm = mamba_state_bytes(t, tp=tp, conv_bytes=conv_bytes, ssm_bytes=ssm_bytes) if t.n_mamba else (0, 0)
    state = conv + ssm
    per_token = kv_bytes_per_token(t, tp=tp, kv_bytes=kv_bytes)
    if t.n_attention and t.n_mamba:
        block = aligned_block_size(state, per_token, kernel_block=kernel_block, base=base_block)
        page = block * per_token
    elif t.n_attention:
        block, page = base_block, base_block * per_token
    else:
        block, page = 0, state
    size, mamba_groups, attention_groups = _groups(t.n_mamba, t.n_attention)
    return CacheLayout(block, block * per_token, state, page, size, mamba_groups, attention_groups)


# --------------------------------------------------------------------------------------------------------------
# Requests, activations, the sizing itself
# --------------------------------------------------------------------------------------------------------------


def image_tokens(image: ImageTokens, width: int, height: int) -> int:
    """LM tokens of one ``width`` × ``height`` image under the engine's tile plan."""
    from annotators.vllm.tile_plan import plan_tiles

    plan = plan_tiles(
        width,
        height,
        tile_size=image.tile_size,
        max_tiles=image.max_tiles,
        thumbnail=image.use_thumbnail,
        tokens_per_tile=image.tokens_per_tile,
    )
    return plan.image_tokens


def max_image_item_tokens(image: ImageTokens) -> int:
    """Tokens of the largest single image: all tiles plus the thumbnail."""
    return (image.max_tiles + (1 if image.use_thumbnail and image.max_tiles > 1 else 0)) * image.tokens_per_tile


def activation_bytes(
    shape: ModelShape, *, batched_tokens: int, max_num_seqs: int, dtype_bytes: int = 2, tp: int = 1
) -> int:
    """Estimated peak of vLLM's profiling pass (``profile_run``): the largest of the LM forward over
    ``batched_tokens`` and the ViT + projector over as many image tokens, plus fp32 logits of ``max_num_seqs`` rows
    (×3: logits, probabilities, sampling scratch). Per token, the hidden/residual streams (3 × hidden) and the
    widest transient of one layer (layers run one after another, their intermediates are freed)."""
    t, d = shape.text, dtype_bytes
    mamba = 0
    if t.n_mamba:
        chunk_states = t.mamba_num_heads * t.mamba_head_dim * t.ssm_state_size * 4 // max(t.chunk_size, 1)
        mamba = (t.in_proj_dim + t.conv_dim + 2 * t.d_inner) * d // tp + chunk_states // tp
    mlp = 2 * max(t.intermediate_sizes, default=0) * d // tp
    q, kv = t.num_attention_heads * t.head_dim, max(1, t.num_key_value_heads // tp) * t.head_dim
    attention = (2 * q // tp + 2 * kv) * d if t.n_attention else 0
    lm = batched_tokens * (3 * t.hidden_size * d + max(mamba, mlp, attention))
    vit = 0
    if shape.vision:
        v = shape.vision
        per_patch = (3 * v.hidden_size + v.mlp_size + 3 * v.hidden_size) * d
        per_token = v.shuffle_factor * per_patch + (v.hidden_size * v.shuffle_factor + v.projector_hidden_size) * d
        vit = batched_tokens * per_token + batched_tokens * t.hidden_size * d  # + the encoder-output cache
    logits = max_num_seqs * padded_vocab(t.vocab_size, tp) // tp * 4 * 3
    return max(lm, vit) + logits


@dataclasses.dataclass(frozen=True)
class RequestProfile:
    """What one request costs in tokens."""

    tokens: int  # prompt (images + text) + answer
    answer_tokens: int
    image_tokens: int
    description: str


def request_profile(
    shape: ModelShape,
    *,
    tokens_per_request: int | None = None,
    image_size: tuple[int, int] = (1920, 1080),
    images_per_request: int = 1,
    prompt_tokens: int = 160,
    answer_tokens: int = 256,
) -> RequestProfile:
    if tokens_per_request:
        return RequestProfile(tokens_per_request, answer_tokens, 0, f"{tokens_per_request} tokens (given)")
    if shape.image is None:
        total = prompt_tokens + answer_tokens
        return RequestProfile(total, answer_tokens, 0, f"{prompt_tokens} prompt + {answer_tokens} answer (no images)")
    per_image = image_tokens(shape.image, *image_size) + 2  # + <img> … </img>
    images = images_per_request * per_image
    total = images + prompt_tokens + answer_tokens
    desc = (
        f"{images_per_request} × {image_size[0]}×{image_size[1]} image ({per_image - 2} image tokens + 2 tags) "
        f"+ {prompt_tokens} prompt + {answer_tokens} answer = {total} tokens"
    )
    return RequestProfile(total, answer_tokens, images, desc)


@dataclasses.dataclass(frozen=True)
class Sizing:
    gpu: str
    total: int
    utilization: float
    budget: int
    weights: int
    activations: int
    overhead: int
    kv_pool: int
    kv_pool_given: bool
    layout: CacheLayout
    request: RequestProfile
    blocks_per_request: int
    num_blocks: int
    max_concurrency: int
    max_num_seqs: int
    max_num_batched_tokens: int
    max_model_len: int
    max_model_len_fits: bool
    unpadded_request_bytes: int  # the same request without paging: Mamba states + KV of its tokens
    warnings: tuple[str, ...]


def _round_down(n: int, step: int) -> int:
    return n if n < step else n - n % step


def _round_up(n: int, step: int) -> int:
    return -(-n // step) * step


def recommend_batched_tokens(shape: ModelShape, request: RequestProfile, max_num_seqs: int) -> int:
    """Decode tokens of a full batch + two prefills per step, at least 8192 and one whole image; ≤ 32768."""
    prefill = request.tokens - request.answer_tokens
    floor = max(8192, max_image_item_tokens(shape.image) if shape.image else 0)
    return min(max(_round_up(max_num_seqs + 2 * prefill, 2048), _round_up(floor, 2048)), 32768)


def size_for_gpu(
    shape: ModelShape,
    *,
    gpu: str,
    total_bytes: int,
    request: RequestProfile,
    dtype: str = "bf16",
    utilization: float = 0.9,
    tp: int = 1,
    max_model_len: int = 16384,
    overhead_bytes: int = 3 * GIB,
    kv_cache_bytes: int | None = None,
    max_num_batched_tokens: int | None = None,
    kv_cache_dtype: str = "auto",
    mamba_ssm_cache_dtype: str = "auto",
    max_num_seqs_cap: int = 512,
    kernel_block: int = CUDA_KERNEL_BLOCK,
) -> Sizing:
    """The KV pool, concurrency and recommended scheduler limits for one GPU (one tensor-parallel rank)."""
    d = DTYPE_BYTES[dtype]
    kv_bytes = d if kv_cache_dtype == "auto" else DTYPE_BYTES[kv_cache_dtype]
    ssm_bytes = DTYPE_BYTES[resolve_ssm_cache_dtype(shape.text, mamba_ssm_cache_dtype)]
    layout = cache_layout(
        shape.text, tp=tp, conv_bytes=d, ssm_bytes=ssm_bytes, kv_bytes=kv_bytes, kernel_block=kernel_block
    )
    params = count_parameters(shape, tp)
    weights = (params.language_model + params.vision + params.projector) * d
    budget = int(total_bytes * utilization)
    per_request = layout.blocks_per_request(request.tokens)
    seqs, warnings = max_num_seqs_cap, []
    for _ in range(8):  # activations depend on the token budget and max_num_seqs; settles in 2-3 rounds
        batched = max_num_batched_tokens or recommend_batched_tokens(shape, request, seqs)
        activations = activation_bytes(shape, batched_tokens=batched, max_num_seqs=seqs, dtype_bytes=d, tp=tp)
        kv_pool = kv_cache_bytes if kv_cache_bytes is not None else budget - weights - activations - overhead_bytes
        num_blocks = max(kv_pool // layout.bytes_per_block, 0)
        concurrency = max(num_blocks - 1, 0) // per_request  # block 0 is vLLM's null block
        new = max(min(_round_down(concurrency, 8), max_num_seqs_cap), 1 if concurrency else 0)
        if new == seqs:
            break
        seqs = new
    if concurrency == 0:
        warnings.append("not even one request fits: the model does not fit this GPU with these settings")
    fits = max(num_blocks - 1, 0) >= layout.blocks_per_request(max_model_len)
    if not fits:
        warnings.append(f"vLLM will refuse to start: one max_model_len={max_model_len} request does not fit the pool")
    if request.tokens > max_model_len:
        warnings.append(f"requests of {request.tokens} tokens exceed max_model_len={max_model_len}")
    return Sizing(
        gpu=gpu,
        total=total_bytes,
        utilization=utilization,
        budget=budget,
        weights=weights,
        activations=activations,
        overhead=overhead_bytes,
        kv_pool=kv_pool,
        kv_pool_given=kv_cache_bytes is not None,
        layout=layout,
        request=request,
        blocks_per_request=per_request,
        num_blocks=num_blocks,
        max_concurrency=concurrency,
        max_num_seqs=seqs,
        max_num_batched_tokens=batched,
        max_model_len=max_model_len,
        max_model_len_fits=fits,
        unpadded_request_bytes=shape.text.n_mamba * layout.mamba_state
        + request.tokens * shape.text.n_attention * layout.attention_page // max(layout.block_size, 1),
        warnings=tuple(warnings),
    )


# --------------------------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------------------------


def _gib(n: int) -> str:
    return f"{n / GIB:.2f} GiB"


def _mib(n: int) -> str:
    return f"{n / MIB:.2f} MiB"


def _b(n: float) -> str:
    return f"{n / 1e9:.3f} B"


def model_report(shape: ModelShape, *, dtype: str, tp: int, kv_cache_dtype: str, mamba_ssm_cache_dtype: str) -> str:
    t, d = shape.text, DTYPE_BYTES[dtype]
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
        f"  weights ({dtype}): {_gib(p.total * d)}" + (f"; per rank at tp={tp}: see the table" if tp > 1 else ""),
        f"  Mamba state per sequence and layer{f' (tp={tp})' if tp > 1 else ''}: conv {conv_shape} {dtype} = "
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


def _parse_size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"image size must be WIDTHxHEIGHT, got {text!r}") from None
    if w <= 0 or h <= 0:
        raise argparse.ArgumentTypeError(f"image size must be positive, got {text!r}")
    return w, h


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="screenmill size",
        description="GPU memory sizing for a hybrid Mamba-2/attention (NemotronH / Holotron) model config: "
        "max_num_seqs and token budget per GPU. All figures are per GPU (one tensor-parallel rank).",
    )
    p.add_argument(
        "--config",
        required=True,
        help=f"config.json, a model folder holding one, or a builtin: {', '.join(sorted(BUILTIN_CONFIGS))}",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument("--gpu", choices=(*GPUS, "all"), default="all", help="GPU preset (default: all presets)")
    g.add_argument("--gpu-mem-gib", type=float, default=None, help="a GPU with this much memory (GiB) instead")
    p.add_argument("--dtype", choices=("bf16", "fp16", "fp32"), default="bf16", help="model dtype (default bf16)")
    p.add_argument("--kv-cache-dtype", choices=("auto", "fp8"), default="auto", help="attention KV dtype")
    p.add_argument("--mamba-ssm-cache-dtype", choices=SSM_CACHE_DTYPES, default="auto", help="SSM-state dtype")
    p.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    p.add_argument("--tp", type=int, default=1, help="tensor-parallel size (GPUs per engine)")
    p.add_argument("--max-model-len", type=int, default=16384, help="the engine's max_model_len (checked to fit)")
    r = p.add_argument_group("request length (default: one 1920×1080 screenshot + 160 prompt + 256 answer tokens)")
    r.add_argument("--tokens-per-request", type=int, default=None, help="average tokens per request, all told")
    r.add_argument("--image-size", type=_parse_size, default=(1920, 1080), help="WIDTHxHEIGHT of a screenshot")
    r.add_argument("--images-per-request", type=int, default=1, help="1; up to 4 for navigate-step with history")
    r.add_argument("--max-tiles", type=int, default=None, help="tile cap (default: the config's, else 12)")
    r.add_argument("--prompt-tokens", type=int, default=160, help="chat template + instruction text")
    r.add_argument("--answer-tokens", type=int, default=None, help="answer budget (default 256, or the recipe's)")
    r.add_argument("--recipe", default=None, help="take --answer-tokens from this recipe's max_tokens")
    e = p.add_argument_group("calibration")
    e.add_argument("--max-num-batched-tokens", type=int, default=None, help="fix the token budget (else recommended)")
    e.add_argument("--overhead-gib", type=float, default=3.0, help="CUDA context + graph pool + slack (default 3)")
    e.add_argument("--kv-cache-gib", type=float, default=None, help="the KV pool vLLM reported (skips estimates)")
    e.add_argument("--max-num-seqs-cap", type=int, default=512, help="upper bound for the recommendation")
    e.add_argument("--kernel-block-size", type=int, default=CUDA_KERNEL_BLOCK, help="attention kernel block (16)")
    p.add_argument("--json", action="store_true", help="print JSON instead of the report")
    p.add_argument("--dump-config", default=None, help="write the (builtin) config as config.json to this path")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        shape = load_config(args.config, max_tiles=args.max_tiles)
    except (FileNotFoundError, ValueError, json.JSONDecodeError) as e:
        print(f"screenmill size: {e}", file=sys.stderr)
        return 2
    if args.dump_config:
        cfg, _ = _read_config(args.config)
        with open(args.dump_config, "w", encoding="utf-8") as f:
            json.dump(cfg, f, indent=2)
            f.write("\n")
    answer = args.answer_tokens
    if answer is None and args.recipe:
        from annotators.recipes import get_recipe

        answer = get_recipe(args.recipe).max_tokens
    request = request_profile(
        shape,
        tokens_per_request=args.tokens_per_request,
        image_size=args.image_size,
        images_per_request=args.images_per_request,
        prompt_tokens=args.prompt_tokens,
        answer_tokens=256 if answer is None else answer,
    )
    if args.gpu_mem_gib:
        gpus = [(f"{args.gpu_mem_gib:g} GiB GPU", int(args.gpu_mem_gib * GIB))]
    else:
        gpus = [GPUS[args.gpu]] if args.gpu != "all" else list(GPUS.values())
    try:
        sizings = [
            size_for_gpu(
                shape,
                gpu=name,
                total_bytes=total,
                request=request,
                dtype=args.dtype,
                utilization=args.gpu_memory_utilization,
                tp=args.tp,
                max_model_len=args.max_model_len,
                overhead_bytes=int(args.overhead_gib * GIB),
                kv_cache_bytes=None if args.kv_cache_gib is None else int(args.kv_cache_gib * GIB),
                max_num_batched_tokens=args.max_num_batched_tokens,
                kv_cache_dtype=args.kv_cache_dtype,
                mamba_ssm_cache_dtype=args.mamba_ssm_cache_dtype,
                max_num_seqs_cap=args.max_num_seqs_cap,
                kernel_block=args.kernel_block_size,
            )
            for name, total in gpus
        ]
    except ValueError as e:
        print(f"screenmill size: {e}", file=sys.stderr)
        return 2
    if args.json:
        out = {
            "model": shape.source,
            "parameters": dataclasses.asdict(count_parameters(shape)) | {"total": count_parameters(shape).total},
            "request": dataclasses.asdict(request),
            "gpus": [dataclasses.asdict(s) | {"bytes_per_block": s.layout.bytes_per_block} for s in sizings],
        }
        print(json.dumps(out, indent=2))
        return 0
    print(
        model_report(
            shape,
            dtype=args.dtype,
            tp=args.tp,
            kv_cache_dtype=args.kv_cache_dtype,
            mamba_ssm_cache_dtype=args.mamba_ssm_cache_dtype,
        )
    )
    print(f"request: {request.description}")
    print()
    print(sizing_table(sizings))
    for s in sizings:
        for w in s.warnings:
            print(f"warning ({s.gpu}): {w}", file=sys.stderr)
        flags = (
            f"--max-num-seqs {s.max_num_seqs} --max-num-batched-tokens {s.max_num_batched_tokens} "
            f"--max-model-len {s.max_model_len} --gpu-memory-utilization {s.utilization:g}"
            + (f" --tensor-parallel-size {args.tp}" if args.tp > 1 else "")
        )
        print(f"\n{s.gpu}: screenmill run … --annotator vllm {flags}")
    print(
        "\nEstimates: activations and overhead. Calibrate: start the engine once, read vLLM's "
        "'Available KV cache memory: X GiB' and rerun with --kv-cache-gib X."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
