"""A tiny random-weight Idefics3 (SmolVLM's architecture) model folder that vLLM loads on CPU as it is.

Holotron's architecture needs ``torchvision`` in vLLM (there is no CPU build of it for torch 2.13), so on CPU the
Holotron tests run with a test-only stand-in (``tests/tiny_holotron.py``). vLLM's Idefics3 code imports no
torchvision (transformers falls back to its Pillow image processor), so this model shows ``screenmill run
--annotator vllm --model DIR`` working on a local model dir through the product path alone: the CLI, in a process of
its own, no stand-in. ``python -m tests.tiny_idefics3 DIR`` writes one for trying the CLI by hand.

The folder: ``config.json`` (``Idefics3ForConditionalGeneration``: a 2-layer Llama, 128 wide, head_dim 32; a 2-layer
SigLIP-style vision tower on 64 px tiles of 16 px patches, pixel shuffle 2 → 4 image tokens per tile),
``preprocessor_config.json`` / ``processor_config.json`` (images scaled to a longest edge of 256 px and split into
64 px tiles plus a global image), ``generation_config.json`` and a byte-level BPE tokenizer trained here with
Idefics3's ``<image>``, ``<fake_token_around_image>``, ``<global-img>`` and ``<end_of_utterance>`` and a chat template
that puts ``<image>`` where the image goes. No weights: load it with ``load_format="dummy"``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.tiny_holotron import _corpus, train_bpe

TILE_PX = 64
PATCH_PX = 16
SCALE_FACTOR = 2
IMAGE_SEQ_LEN = (TILE_PX // PATCH_PX) ** 2 // SCALE_FACTOR**2
LONGEST_EDGE = 4 * TILE_PX
BOS, EOS, PAD = "<|im_start|>", "<end_of_utterance>", "<|endoftext|>"
IMAGE, FAKE, GLOBAL = "<image>", "<fake_token_around_image>", "<global-img>"
SPECIAL_TOKENS = [PAD, BOS, EOS, FAKE, IMAGE, GLOBAL]
CHAT_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{ message['role'] | capitalize }}:"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'image' %}<image>{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}"
    "{% endif %}<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}"
)


def train_tokenizer(vocab_size: int = 500):
    """A byte-level BPE tokenizer trained on the in-code corpus, with Idefics3's special tokens and chat template.

    Returns:
        A ``transformers.PreTrainedTokenizerFast``.
    """
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(
        tokenizer_object=train_bpe(SPECIAL_TOKENS, [*_corpus(), "<row_1_col_1>\n<row_2_col_3>"], vocab_size),
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        additional_special_tokens=[FAKE, IMAGE, GLOBAL],
        chat_template=CHAT_TEMPLATE,
        clean_up_tokenization_spaces=False,
        model_max_length=4096,
    )


def build_tiny_idefics3(dest: Path) -> Path:
    """Write the tiny Idefics3 model folder (see the module docstring) to ``dest`` (created if missing).

    Returns:
        ``dest``.
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    tokenizer = train_tokenizer()
    tokenizer.save_pretrained(dest)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    vocab_size = -(-len(tokenizer) // 64) * 64
    text = {
        "model_type": "llama",
        "vocab_size": vocab_size,
        "hidden_size": 128,
        "intermediate_size": 256,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,  # head_dim 32: CPU attention rejects 16
        "num_key_value_heads": 2,
        "hidden_act": "silu",
        "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-5,
        "rope_theta": 100000.0,
        "tie_word_embeddings": True,
        "bos_token_id": ids[BOS],
        "eos_token_id": ids[EOS],
        "pad_token_id": ids[PAD],
    }
    vision = {
        "model_type": "idefics3_vision",
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_channels": 3,
        "image_size": TILE_PX,
        "patch_size": PATCH_PX,
        "hidden_act": "gelu_pytorch_tanh",
        "layer_norm_eps": 1e-6,
    }
    config = {
        "architectures": ["Idefics3ForConditionalGeneration"],
        "model_type": "idefics3",
        "text_config": text,
        "vision_config": vision,
        "image_token_id": ids[IMAGE],
        "scale_factor": SCALE_FACTOR,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "vocab_size": vocab_size,
        "pad_token_id": ids[PAD],
    }
    preprocessor = {
        "image_processor_type": "Idefics3ImageProcessor",
        "processor_class": "Idefics3Processor",
        "do_convert_rgb": True,
        "do_resize": True,
        "size": {"longest_edge": LONGEST_EDGE},
        "do_image_splitting": True,
        "max_image_size": {"longest_edge": TILE_PX},
        "do_rescale": True,
        "rescale_factor": 1 / 255,
        "do_normalize": True,
        "image_mean": [0.5, 0.5, 0.5],
        "image_std": [0.5, 0.5, 0.5],
        "do_pad": True,
        "resample": 1,
    }
    generation = {"bos_token_id": ids[BOS], "eos_token_id": [ids[EOS]], "pad_token_id": ids[PAD]}
    files = {
        "config.json": config,
        "preprocessor_config.json": preprocessor,
        "processor_config.json": {"image_seq_len": IMAGE_SEQ_LEN, "processor_class": "Idefics3Processor"},
        "generation_config.json": generation,
    }
    for name, content in files.items():
        (dest / name).write_text(json.dumps(content, indent=2) + "\n")
    return dest


def tiny_cli_args(model_dir: Path) -> list[str]:
    """``screenmill run`` options that run this model on CPU (random weights, a small KV cache)."""
    return [
        "--model", str(model_dir), "--load-format", "dummy", "--max-model-len", "2048", "--kv-cache-gib", "1",
        "--max-num-seqs", "8", "--enforce-eager",
    ]  # fmt: skip


def bench_vllm_on_tiny_idefics3(tmp_path: Path, monkeypatch, args: list[str]) -> dict:
    """``screenmill bench vllm ARGS`` through its own entry point on a fresh tiny Idefics3 under ``tmp_path``, the
    engine in-process and the hub offline (``monkeypatch`` sets both); returns the report it wrote (``--json``)."""
    from screenmill.pipelines.bench_vllm import main as bench_vllm

    for name, value in (("VLLM_ENABLE_V1_MULTIPROCESSING", "0"), ("HF_HUB_OFFLINE", "1")):
        monkeypatch.setenv(name, value)
    model = build_tiny_idefics3(tmp_path / "Idefics3-tiny")
    out = tmp_path / "bench.json"
    assert bench_vllm([*args, "--json", str(out), *tiny_cli_args(model)]) == 0
    return json.loads(out.read_text())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m tests.tiny_idefics3 DIR")
    print(build_tiny_idefics3(Path(sys.argv[1])))
