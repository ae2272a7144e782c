"""A tiny, random-weight stand-in for Holotron-12B that vLLM can run on CPU, built from scratch in a temp folder.

Holotron-12B has the architecture of nvidia/Nemotron-Nano-12B-v2-VL: ``NemotronH_Nano_VL_V2`` in vLLM
(``vllm/model_executor/models/nano_nemotron_vl.py``), i.e. a hybrid Mamba-2/attention ``nemotron_h`` language model,
a RADIO ViT vision encoder, a pixel-shuffle + MLP projector, and InternVL-style dynamic tiling (512 px tiles plus a
thumbnail in the real model). :func:`build_tiny_holotron` writes a model folder of that same architecture, shrunk so
that it loads and runs in seconds on a laptop CPU:

* ``config.json``: ``architectures: ["NemotronH_Nano_VL_V2"]``, the real model's top-level keys
  (``llm_config``, ``vision_config``, ``force_image_size``, ``patch_size``, ``downsample_ratio``, ``ps_version``,
  ``template``, ``image_tag_type``, ``img_context_token``, ``projector_hidden_size``, ``vit_hidden_size``,
  ``norm_mean``/``norm_std``, ``use_thumbnail``, ...), and an ``auto_map`` to a local ``configuration.py`` (loaded
  with ``trust_remote_code``);
* LM: ``nemotron_h``, hidden 128, layers ``"M-*-M-"`` (Mamba-2, MLP, attention, MLP, Mamba-2, MLP);
* vision: RADIO ``vit_small_patch16_224`` (the smallest ViT vLLM's RADIO knows: 384 wide, 12 blocks), 64 px tiles,
  so one tile is (64 / 16) ** 2 = 16 patches, pixel-shuffled (``downsample_ratio`` 0.5) down to **4 LM tokens**;
* ``modeling.py``: the same model for transformers (remote code, like the real model's), used by the benchmark's
  transformers baseline;
* a byte-level BPE tokenizer trained here on a small in-code corpus, with the special tokens vLLM looks up
  (``<img>``, ``</img>``, ``<image>``, ``<video>``) and a ChatML-style chat template.

There are no weights in the folder: vLLM fills them in with ``load_format="dummy"``. Everything here is for tests.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import json
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# What a tile costs: (TILE_PX / PATCH_PX) ** 2 patches, pixel-shuffled by DOWNSAMPLE_RATIO in each direction.
TILE_PX = 64
PATCH_PX = 16
DOWNSAMPLE_RATIO = 0.5
TOKENS_PER_TILE = int((TILE_PX // PATCH_PX) ** 2 * DOWNSAMPLE_RATIO**2)
MAX_TILES = 12  # vLLM's default for this model (DEFAULT_NUM_TILES); passed explicitly in tiny_llm_kwargs
HIDDEN = 128
VIT_MODEL = "vit_small_patch16_224"
VIT_HIDDEN = 384  # vit_small_patch16_224 in vllm.transformers_utils.configs.radio.VIT_TIMM_DIM_BY_NAME
CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]

IMG_START, IMG_END, IMG_CONTEXT, VIDEO_CONTEXT = "<img>", "</img>", "<image>", "<video>"
IM_START, IM_END = "<|im_start|>", "<|im_end|>"
# Order fixes the ids: <unk>=0, <s>=1, </s>=2 like nemotron_h's defaults, then the chat and media tokens.
SPECIAL_TOKENS = ["<unk>", "<s>", "</s>", IM_START, IM_END, IMG_START, IMG_END, IMG_CONTEXT, VIDEO_CONTEXT]

CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{ '<|im_start|>' + message['role'] + '\\n' }}"
    "{%- if message['content'] is string -%}{{ message['content'] }}"
    "{%- else -%}{%- for part in message['content'] -%}"
    "{%- if part['type'] == 'image' -%}{{ '<image>' }}"
    "{%- elif part['type'] == 'text' -%}{{ part['text'] }}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}"
    "{{ '<|im_end|>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\\n' }}{%- endif -%}"
)

# The configuration class the model folder ships (loaded by transformers with trust_remote_code, like the real
# model's configuration.py). It builds ``text_config`` (transformers' own NemotronHConfig) from ``llm_config`` and a
# plain PretrainedConfig ``vision_config`` carrying RADIO's ``args``; vLLM reads everything else as plain attributes.
CONFIGURATION_PY = '''\
"""A tiny NemotronH_Nano_VL_V2 (Nemotron-Nano-12B-v2-VL architecture) config, from tests/tiny_holotron.py."""

from transformers import AutoConfig, PretrainedConfig


class NemotronH_Nano_VL_V2_Config(PretrainedConfig):
    model_type = "NemotronH_Nano_VL_V2"
    is_composition = True

    def __init__(
        self,
        vision_config=None,
        llm_config=None,
        force_image_size=512,
        patch_size=16,
        downsample_ratio=0.5,
        template=None,
        ps_version="v2",
        image_tag_type="internvl",
        projector_hidden_size=4096,
        vit_hidden_size=1280,
        video_pruning_rate=0.0,
        img_context_token="<image>",
        video_context_token="<video>",
        norm_mean=(0.48145466, 0.4578275, 0.40821073),
        norm_std=(0.26862954, 0.26130258, 0.27577711),
        use_thumbnail=True,
        **kwargs,
    ):
        text_config = kwargs.pop("text_config", None)  # to_dict() round trips write text_config, not llm_config
        super().__init__(**kwargs)
        llm = llm_config if llm_config is not None else text_config
        if isinstance(llm, PretrainedConfig):
            self.text_config = llm
        else:
            llm = dict(llm or {})
            llm.pop("model_type", None)
            self.text_config = AutoConfig.for_model("nemotron_h", **llm)
        if isinstance(vision_config, PretrainedConfig):
            self.vision_config = vision_config
        else:
            self.vision_config = PretrainedConfig(**dict(vision_config or {"args": {}}))
        self.force_image_size = force_image_size
        self.patch_size = patch_size
        self.downsample_ratio = downsample_ratio
        self.template = template
        self.ps_version = ps_version
        self.image_tag_type = image_tag_type
        self.projector_hidden_size = projector_hidden_size
        self.vit_hidden_size = vit_hidden_size
        self.video_pruning_rate = video_pruning_rate
        self.img_context_token = img_context_token
        self.video_context_token = video_context_token
        self.norm_mean = list(norm_mean)
        self.norm_std = list(norm_std)
        self.use_thumbnail = use_thumbnail
'''

# The model's transformers code, shipped in the folder as remote code like the real model's ``modeling.py``, so that
# ``AutoModel.from_pretrained(dir, trust_remote_code=True)`` (the model card's way, and ``screenmill bench vllm``'s
# transformers baseline) builds it. Same shapes as what vLLM builds from this config: a ViT of RADIO's
# vit_small_patch16_224 size (patch 16, 384 wide, 12 pre-norm blocks of 6 heads, MLP x4, class + register tokens
# dropped before the projector), InternVL pixel shuffle, the RMSNorm -> Linear -> ReLU^2 -> Linear projector
# (``mlp1``), and transformers' own NemotronH language model. Weights are random (``from_config``).
MODELING_PY = """\
\"\"\"A tiny NemotronH_Nano_VL_V2 for transformers (random weights), from tests/tiny_holotron.py.\"\"\"

import torch
from torch import nn
from transformers import GenerationMixin, NemotronHForCausalLM, PreTrainedModel

from .configuration import NemotronH_Nano_VL_V2_Config


class _LanguageModel(NemotronHForCausalLM):
    \"\"\"transformers' NemotronH, able to start generation from ``inputs_embeds`` (image embeddings spliced in).\"\"\"

    def prepare_inputs_for_generation(self, input_ids, inputs_embeds=None, **kwargs):
        return super().prepare_inputs_for_generation(input_ids, inputs_embeds=inputs_embeds, **kwargs)


class _Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(width, eps=1e-6)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(width, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        y = self.norm1(x)
        x = x + self.attn(y, y, y, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class _TinyRadio(nn.Module):
    \"\"\"vit_small_patch16_224-sized ViT with RADIO's class + register prefix (padded to a multiple of 8).\"\"\"

    def __init__(self, width, patch, image, blocks=12, heads=6, prefix=8):
        super().__init__()
        self.prefix = prefix
        self.patch_embed = nn.Conv2d(3, width, patch, patch)
        self.prefix_tokens = nn.Parameter(torch.zeros(1, prefix, width))
        self.pos_embed = nn.Parameter(torch.zeros(1, (image // patch) ** 2, width))
        self.blocks = nn.ModuleList(_Block(width, heads) for _ in range(blocks))
        self.norm = nn.LayerNorm(width, eps=1e-6)

    def forward(self, pixel_values):
        x = self.patch_embed(pixel_values).flatten(2).transpose(1, 2) + self.pos_embed
        x = torch.cat([self.prefix_tokens.expand(x.shape[0], -1, -1), x], dim=1)
        for block in self.blocks:
            x = block(x)
        return self.norm(x)[:, self.prefix :]


class _ReLUSquared(nn.Module):
    def forward(self, x):
        return torch.relu(x).square()


class NemotronH_Nano_VL_V2(PreTrainedModel, GenerationMixin):
    config_class = NemotronH_Nano_VL_V2_Config
    base_model_prefix = ""
    main_input_name = "input_ids"
    _supports_cache_class = True

    def __init__(self, config):
        super().__init__(config)
        vit, llm = config.vit_hidden_size, config.text_config.hidden_size
        self.downsample_ratio = config.downsample_ratio
        self.vision_model = _TinyRadio(vit, config.patch_size, config.force_image_size)
        shuffled = vit * int(round(1 / config.downsample_ratio)) ** 2
        self.mlp1 = nn.Sequential(
            nn.RMSNorm(shuffled, eps=1e-5),
            nn.Linear(shuffled, config.projector_hidden_size, bias=False),
            _ReLUSquared(),
            nn.Linear(config.projector_hidden_size, llm, bias=False),
        )
        self.language_model = _LanguageModel(config.text_config)
        self.img_context_token_id = None  # set by the caller from the tokenizer, as in InternVL-style cards
        self.post_init()

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, nn.Conv2d)):
            nn.init.normal_(module.weight, std=0.02)

    def pixel_shuffle(self, x, scale_factor=0.5):
        n, h, w, c = x.size()
        r = int(1 / scale_factor)
        x = x.view(n, h // r, r, w // r, r, c).permute(0, 1, 3, 2, 4, 5)
        return x.reshape(n, h // r, w // r, c * r * r)

    def extract_feature(self, pixel_values):
        x = self.vision_model(pixel_values)
        side = int(x.shape[1] ** 0.5)
        x = self.pixel_shuffle(x.reshape(x.shape[0], side, side, -1), self.downsample_ratio)
        return self.mlp1(x.reshape(x.shape[0], -1, x.shape[-1]))

    @torch.no_grad()
    def generate(self, pixel_values=None, input_ids=None, attention_mask=None, **generate_kwargs):
        embeds = self.language_model.get_input_embeddings()(input_ids)
        if pixel_values is not None:
            vision = self.extract_feature(pixel_values.to(embeds.dtype)).reshape(-1, embeds.shape[-1])
            mask = input_ids == self.img_context_token_id
            if int(mask.sum()) != vision.shape[0]:
                raise ValueError(f"{int(mask.sum())} image tokens for {vision.shape[0]} vision embeddings")
            embeds = embeds.masked_scatter(mask.unsqueeze(-1), vision.to(embeds.dtype))
        return self.language_model.generate(inputs_embeds=embeds, attention_mask=attention_mask, **generate_kwargs)
"""

# A small corpus for the tokenizer: English about screens and clicks, JSON with the punctuation and digits a
# grounding answer uses, and the frame captions vLLM tokenizes for videos.
_WORDS = (
    "the a an of to in on at for with and or is are was be this that it click tap press type scroll select open "
    "close button link menu icon field text box window dialog page tab list item image screen screenshot point "
    "where which what find locate return answer coordinates position center left right top bottom x y width height "
    "Sign in Cancel Help Save Search Settings Home Back Next Submit OK Yes No user assistant system Frame sampled "
    "seconds and frame"
).split()


def _corpus() -> list[str]:
    lines = [" ".join(_WORDS[i : i + 12]) for i in range(0, len(_WORDS), 12)]
    lines += [w.capitalize() + "." for w in _WORDS]
    for i in range(0, 1001, 7):
        x, y = i, (i * 37) % 1001
        lines.append(f'{{"x":{x},"y":{y}}}')
        lines.append(f'{{"x": {x}, "y": {y}, "label": "{_WORDS[i % len(_WORDS)]}"}}')
        lines.append(f"[{x}, {y}, {x + 10}, {y + 20}] {x / 100:.2f} {-y}")
    lines += [f"Frame {i + 1} sampled at {i * 0.5:.2f} seconds: " for i in range(32)]
    lines.append('{"a": [1, 2.5, -3e4, true, false, null], "b": {"c": "d\\n\\t\\"e\\""}}')
    lines.append("0123456789 ,:;{}[]\"'.-+_/\\()!?#@%&*=<>|`~^$")
    return lines


def train_bpe(special_tokens: list[str], corpus: list[str], vocab_size: int) -> Any:
    """A byte-level BPE ``tokenizers.Tokenizer`` trained on ``corpus``, ``special_tokens`` first in its vocabulary."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=special_tokens,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer=trainer)
    return tok


def train_tokenizer(vocab_size: int = 500) -> Any:
    """Train a byte-level BPE tokenizer on the in-code corpus and wrap it as a transformers fast tokenizer.

    Args:
        vocab_size: Target vocabulary size, special tokens and the 256 byte symbols included.

    Returns:
        A ``transformers.PreTrainedTokenizerFast`` with the special tokens and chat template set.
    """
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(
        tokenizer_object=train_bpe(SPECIAL_TOKENS, _corpus(), vocab_size),
        unk_token="<unk>",
        bos_token="<s>",
        eos_token=IM_END,
        pad_token="</s>",
        additional_special_tokens=[IM_START, IMG_START, IMG_END, IMG_CONTEXT, VIDEO_CONTEXT],
        chat_template=CHAT_TEMPLATE,
        clean_up_tokenization_spaces=False,
        model_max_length=4096,
    )


def tiny_holotron_config(vocab_size: int, *, head_dim: int = 32, eos_token_id: int, pad_token_id: int) -> dict:
    """The ``config.json`` contents of the tiny model.

    Args:
        vocab_size: LM vocabulary (the tokenizer's size, rounded up like the real model pads its vocabulary).
        head_dim: Attention head size; vLLM's CPU attention takes 32, 64, 80, 96, 112, 128, ..., not 16.
        eos_token_id: Id of the end-of-turn token.
        pad_token_id: Id of the padding token.

    Returns:
        The config as a JSON-ready dict.
    """
    num_heads = HIDDEN // head_dim
    llm_config = {
        "architectures": ["NemotronHForCausalLM"],
        "model_type": "nemotron_h",
        "vocab_size": vocab_size,
        "hidden_size": HIDDEN,
        "hybrid_override_pattern": "M-*-M-",  # M: Mamba-2, -: MLP, *: attention (the real 12B: 62 of these)
        "num_attention_heads": num_heads,
        "num_key_value_heads": max(1, num_heads // 2),
        "head_dim": head_dim,
        "attention_bias": False,
        "intermediate_size": 4 * HIDDEN,
        "mlp_hidden_act": "relu2",
        "mlp_bias": False,
        "mamba_num_heads": 8,
        "mamba_head_dim": 2 * HIDDEN // 8,
        "ssm_state_size": 16,
        "n_groups": 2,
        "conv_kernel": 4,
        "chunk_size": 128,
        "use_conv_bias": True,
        "use_bias": False,
        "mamba_hidden_act": "silu",
        "mamba_ssm_cache_dtype": "float32",
        "layer_norm_epsilon": 1e-5,
        "residual_in_fp32": False,
        "rescale_prenorm_residual": True,
        "max_position_embeddings": 4096,
        "tie_word_embeddings": False,
        "num_logits_to_keep": 1,
        "bos_token_id": 1,
        "eos_token_id": eos_token_id,
        "pad_token_id": pad_token_id,
        "torch_dtype": "bfloat16",
    }
    vision_config = {
        "model_type": "radio",
        "args": {
            "model": VIT_MODEL,
            "cpe_max_size": 256,
            "register_multiple": 8,
            "cls_token_per_teacher": True,
            "teachers": [{"name": "siglip2-g", "use_summary": True}, {"name": "dino_v2_g", "use_summary": True}],
        },
        "patch_size": PATCH_PX,
        "preferred_resolution": [TILE_PX, TILE_PX],
        "max_resolution": 256,
        "version": "radio_v2.5-s",
    }
    return {
        "architectures": ["NemotronH_Nano_VL_V2"],
        "auto_map": {
            "AutoConfig": "configuration.NemotronH_Nano_VL_V2_Config",
            "AutoModel": "modeling.NemotronH_Nano_VL_V2",
        },
        "model_type": "NemotronH_Nano_VL_V2",
        "llm_config": llm_config,
        "vision_config": vision_config,
        "force_image_size": TILE_PX,
        "patch_size": PATCH_PX,
        "downsample_ratio": DOWNSAMPLE_RATIO,
        "ps_version": "v2",
        "template": "nemotron-h",
        "image_tag_type": "internvl",
        "img_context_token": IMG_CONTEXT,
        "video_context_token": VIDEO_CONTEXT,
        "projector_hidden_size": 2 * HIDDEN,
        "vit_hidden_size": VIT_HIDDEN,
        "norm_mean": CLIP_MEAN,
        "norm_std": CLIP_STD,
        "use_thumbnail": True,
        "min_dynamic_patch": 1,  # informational: vLLM takes the tile cap from mm_processor_kwargs["max_num_tiles"]
        "max_dynamic_patch": MAX_TILES,
        "video_pruning_rate": 0.0,
        "eos_token_id": eos_token_id,
        "torch_dtype": "bfloat16",
    }


def build_tiny_holotron(dest: Path, *, head_dim: int = 32) -> Path:
    """Write a tiny random-weight Holotron (``NemotronH_Nano_VL_V2``) model folder for vLLM.

    The folder holds ``config.json``, ``configuration.py`` and ``modeling.py`` (its ``auto_map`` targets: the config,
    and the transformers model the benchmark's baseline builds), ``generation_config.json`` and the tokenizer files;
    no weights (use ``load_format="dummy"``, see :func:`tiny_llm_kwargs`).

    Args:
        dest: Folder to write (created if missing).
        head_dim: Attention head size, 32 or 64 (CPU attention rejects 16). The LM is 128 wide, so 4 or 2 heads.

    Returns:
        ``dest``.
    """
    if HIDDEN % head_dim:
        raise ValueError(f"head_dim {head_dim} must divide the hidden size {HIDDEN}")
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    tokenizer = train_tokenizer()
    tokenizer.save_pretrained(dest)
    vocab_size = -(-len(tokenizer) // 64) * 64  # padded like the real model's vocabulary
    eos_id = tokenizer.convert_tokens_to_ids(IM_END)
    pad_id = tokenizer.convert_tokens_to_ids("</s>")
    config = tiny_holotron_config(vocab_size, head_dim=head_dim, eos_token_id=eos_id, pad_token_id=pad_id)
    (dest / "configuration.py").write_text(CONFIGURATION_PY)
    (dest / "modeling.py").write_text(MODELING_PY)
    (dest / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    generation = {"bos_token_id": 1, "eos_token_id": [eos_id], "pad_token_id": pad_id}
    (dest / "generation_config.json").write_text(json.dumps(generation, indent=2) + "\n")
    return dest


class _TorchvisionShimTransforms(types.ModuleType):
    """``torchvision.transforms`` stand-in: importable, but any attribute lookup fails loudly."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"torchvision.transforms.{name}: torchvision is not installed; this is the test-only shim from "
            "tests/tiny_holotron.py, which only makes `import torchvision.transforms` succeed"
        )


def install_torchvision_shim() -> None:
    """TEST-ONLY: make ``import torchvision.transforms`` succeed without torchvision, and let vLLM use the model.

    vLLM's ``nano_nemotron_vl`` imports ``vllm.transformers_utils.processors.internvl``, which runs
    ``import torchvision.transforms as T`` at module level but uses ``T`` only in InternVL helpers this model never
    calls. There is no CPU build of torchvision to install here, so this puts empty ``torchvision`` and
    ``torchvision.transforms`` modules in ``sys.modules``; touching any attribute of them raises ``AttributeError``.
    It is a test fixture, never something to ship: with a real torchvision installed it does nothing.

    Order matters: transformers first records whether torchvision is installed (``is_torchvision_available()``,
    cached), *then* the shim goes in, so transformers keeps treating torchvision as absent (no torchvision-backed
    "fast" image processors).

    The shim lives in this process only, so two more things keep the model in this process:

    * ``VLLM_ENABLE_V1_MULTIPROCESSING=0`` (set here if unset) runs the engine core in-process instead of in a
      spawned child (and starts faster);
    * vLLM inspects a lazily registered architecture in a ``python -m vllm.model_executor.models.registry``
      subprocess when its model-info cache is cold; that subprocess would not have the shim. So the model class is
      imported here and registered in-process with ``ModelRegistry.register_model`` (same class, same name).

    Idempotent. Call it before creating ``vllm.LLM``; importing vLLM before it is fine.
    """
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    install_torchvision_modules()
    from vllm import ModelRegistry
    from vllm.model_executor.models.nano_nemotron_vl import NemotronH_Nano_VL_V2

    ModelRegistry.register_model("NemotronH_Nano_VL_V2", NemotronH_Nano_VL_V2)


def install_torchvision_modules() -> None:
    """The module half of :func:`install_torchvision_shim`: empty ``torchvision`` modules, nothing of vLLM imported.

    ``tests/standin_site/sitecustomize.py`` calls this (lazily, when ``vllm.transformers_utils`` is first imported)
    in every process, where the model registration is not needed: vLLM's registry subprocess gets the stand-in too.
    Idempotent; with a real torchvision installed it does nothing.
    """
    try:
        import torchvision  # noqa: F401  (a real one, or the shim already installed)
    except ImportError:
        from transformers.utils import import_utils

        import_utils.is_torchvision_available()  # cache "not installed" before the shim appears
        import_utils.is_torchvision_v2_available()
        package = types.ModuleType("torchvision")
        package.__spec__ = importlib.machinery.ModuleSpec("torchvision", None, is_package=True)
        package.__path__ = []  # a package with no submodules on disk: `from torchvision.ops import x` still fails
        package.__doc__ = "Test-only torchvision shim from tests/tiny_holotron.py (torchvision is not installed)."
        package.__test_shim__ = True
        transforms = _TorchvisionShimTransforms("torchvision.transforms")
        transforms.__spec__ = importlib.machinery.ModuleSpec("torchvision.transforms", None)
        transforms.__test_shim__ = True
        package.transforms = transforms
        sys.modules["torchvision"] = package
        sys.modules["torchvision.transforms"] = transforms


def remove_torchvision_shim() -> None:
    """Take the :func:`install_torchvision_shim` modules out of ``sys.modules`` again (a real torchvision stays).

    Call it when the engine is gone, so later tests that probe for torchvision do not find the stand-in. vLLM
    modules imported meanwhile keep their reference to it, which is harmless: they never use it for this model.
    """
    for name in ("torchvision.transforms", "torchvision"):
        if getattr(sys.modules.get(name), "__test_shim__", False):
            del sys.modules[name]


#: The environment of an engine on the tiny model in the test's own process: the engine core in-process (where the
#: torchvision shim is), a 1 GiB KV cache (GiB; on CPU this wins over ``kv_cache_memory_bytes``), no hub.
IN_PROCESS_ENGINE_ENV = {"VLLM_ENABLE_V1_MULTIPROCESSING": "0", "VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1"}


@contextlib.contextmanager
def in_process_engine() -> Iterator[None]:
    """Inside the block: :data:`IN_PROCESS_ENGINE_ENV` set and the torchvision shim installed; both undone after.

    Yields:
        Nothing.
    """
    saved = {k: os.environ.get(k) for k in IN_PROCESS_ENGINE_ENV}
    os.environ.update(IN_PROCESS_ENGINE_ENV)
    install_torchvision_shim()
    try:
        yield
    finally:
        remove_torchvision_shim()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def torch_compile_disabled() -> Iterator[None]:
    """Run ``torch.compile``-decorated functions eagerly inside the block (test speed only).

    vLLM's NemotronH_Nano_VL_V2 image preprocessing (``_bicubic_resize_and_normalize`` in
    ``vllm/transformers_utils/processors/nano_nemotron_vl.py``) is ``@torch.compile(dynamic=True)`` with the
    inductor backend on CPU. Its first call, in the engine's multi-modal warmup, compiles C++ for ~25 s on two cores;
    eager mode gives the same pixels in milliseconds. This is ``torch.compiler.set_stance("force_eager")`` for the
    block (the LM itself is not compiled anyway with ``enforce_eager=True``); create the engine *and* generate inside
    it.

    Yields:
        Nothing.
    """
    import torch

    with torch.compiler.set_stance("force_eager"):
        yield


def tiny_llm_kwargs(model_dir: Path) -> dict:
    """Keyword arguments for ``vllm.LLM`` that run the tiny model on CPU.

    Args:
        model_dir: A folder written by :func:`build_tiny_holotron`.

    Returns:
        The kwargs; see the comments for why each one is there.
    """
    return {
        "model": str(model_dir),
        "load_format": "dummy",  # no weights in the folder: random ones
        "trust_remote_code": True,  # config.json's auto_map -> configuration.py
        "dtype": "bfloat16",  # the projector casts ViT features to bf16: float32 fails there
        "enforce_eager": True,  # no torch.compile of the LM: starts in seconds
        # Off: left on (the default), vLLM puts this hybrid model's Mamba state in its "align" prefix-cache mode
        "enable_prefix_caching": False,
        "kv_cache_memory_bytes": 256 * 1024**2,  # explicit; note VLLM_CPU_KVCACHE_SPACE (GiB), if set, wins on CPU
        "max_model_len": 1024,
        "max_num_seqs": 4,
        "max_num_batched_tokens": 1024,
        "limit_mm_per_prompt": {"image": 4, "video": 0},
        "mm_processor_kwargs": {"max_num_tiles": MAX_TILES},
        "mm_processor_cache_gb": 0,
        "structured_outputs_config": {"backend": "guidance", "disable_any_whitespace": True},
        "seed": 0,
    }


def tiny_run_args(model_dir: Path) -> list[str]:
    """``screenmill run`` engine options that run the tiny model on CPU (the CLI twin of :func:`tiny_llm_kwargs`)."""
    return [
        "--model", str(model_dir), "--load-format", "dummy",
        "--tile-size", str(TILE_PX), "--tokens-per-tile", str(TOKENS_PER_TILE), "--max-tiles", str(MAX_TILES),
        "--max-model-len", "1024", "--max-num-seqs", "4", "--max-num-batched-tokens", "1024",
        "--enforce-eager", "--engine-arg", 'limit_mm_per_prompt={"image": 4, "video": 0}',
    ]  # fmt: skip
