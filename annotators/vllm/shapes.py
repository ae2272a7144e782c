"""The shape of a hybrid Mamba-2/attention VLM from its Hugging Face ``config.json``: layers, heads, state sizes, the
RADIO vision tower and the image tiling, as :mod:`screenmill.annotators.vllm.memory` needs them.

Reads plain ``nemotron_h`` configs and the nested ``NemotronH_Nano_VL_V2`` layout (``llm_config`` / ``text_config`` +
``vision_config``); ``holotron-12b`` is a builtin (the architecture as documented, field by field). Raises
``FileNotFoundError`` when there is no config and ``ValueError`` for a config that is not a dense NemotronH hybrid.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from typing import Any

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


def read_config(path_or_name: str) -> tuple[dict, str]:
    """(the config dict, where it came from): a builtin by name (a copy), a ``config.json``, or a model folder's."""
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


def write_config(path_or_name: str, path: str) -> None:
    """Write the config :func:`read_config` finds (a builtin too) as a ``config.json`` at ``path``.

    Raises:
        FileNotFoundError: no config at ``path_or_name``.
        OSError: ``path`` cannot be written.
    """
    cfg, _ = read_config(path_or_name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")


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
    cfg, source = read_config(path_or_name)
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
