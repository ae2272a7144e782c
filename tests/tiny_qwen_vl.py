"""A tiny random-weight Qwen2.5-VL (the real architecture, a few thousand parameters) and its processor, built here:
no hub, no download. The tokenizer is a byte-level BPE made in place (256 byte tokens + the Qwen special tokens);
the chat template renders an image part as ``<|vision_start|><|image_pad|><|vision_end|>`` as Qwen's does; the
config takes ``image_token_id`` etc. from that tokenizer, ``mrope_section`` sums to half the head dim and the vision
tower's ``out_hidden_size`` is the text hidden size.

``Qwen2_5_VLProcessor`` wants a video processor, and every video processor needs torchvision (none here for CPU
torch): :class:`ImageOnlyProcessor` is the processor without one; images go through ``Qwen2VLImageProcessorPil``
(PIL only). ``max_pixels`` is small so the test stays fast; the training export's coordinates do not depend on it.
"""

from __future__ import annotations

SPECIAL = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]

CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def tokenizer():
    """A byte-level BPE tokenizer with Qwen's special tokens and chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL[1:],
    )
    tok.add_special_tokens({"additional_special_tokens": SPECIAL[1:]})
    tok.chat_template = CHAT_TEMPLATE
    return tok


def processor(max_pixels: int = 28 * 28 * 16):
    """The Qwen2.5-VL processor without a video processor, on the tiny tokenizer."""
    from transformers import Qwen2_5_VLProcessor
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    class ImageOnlyProcessor(Qwen2_5_VLProcessor):
        def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kwargs):
            super().__init__(image_processor, tokenizer, None, chat_template=chat_template, **kwargs)

    images = Qwen2VLImageProcessorPil(min_pixels=28 * 28, max_pixels=max_pixels)
    tok = tokenizer()
    return ImageOnlyProcessor(image_processor=images, tokenizer=tok, chat_template=CHAT_TEMPLATE)


def model(tok):
    """A random-weight Qwen2.5-VL for ``tok``: 2 text layers of width 32, 1 vision block, float32."""
    import torch
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIAL}
    hidden, heads = 32, 2  # head dim 16: mrope_section sums to 8
    config = Qwen2_5_VLConfig(
        text_config={
            "vocab_size": len(tok),
            "hidden_size": hidden,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": heads,
            "num_key_value_heads": 1,
            "max_position_embeddings": 4096,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]},
            "bos_token_id": ids["<|endoftext|>"],
            "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
        },
        vision_config={
            "depth": 1,
            "hidden_size": hidden,
            "intermediate_size": 64,
            "num_heads": heads,
            "out_hidden_size": hidden,
            "fullatt_block_indexes": [0],
            "window_size": 56,
        },
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    torch.manual_seed(0)
    return Qwen2_5_VLForConditionalGeneration(config).to(torch.float32)
