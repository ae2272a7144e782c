"""The GPU memory model of a hybrid Mamba-2/attention VLM under vLLM: what one GPU holds → ``max_num_seqs``, token
budget (the model behind ``screenmill size``, :mod:`screenmill.pipelines.size`).

Takes the shape of a NemotronH-style model (:func:`screenmill.annotators.vllm.shapes.load_config` reads it from any
Hugging Face ``config.json``: plain ``nemotron_h``, or the nested ``NemotronH_Nano_VL_V2`` layout) and models what one
GPU holds when vLLM (v1 engine) runs it:

``weights``
    Parameters counted from the config, layer by layer, the way vLLM builds the model: embeddings and LM head (vocab
    padded to a multiple of 64), each Mamba-2 layer (``in_proj`` → z, x, B, C, dt; ``conv1d`` + bias; ``A``, ``D``,
    ``dt_bias``; the gated RMSNorm; ``out_proj``), each attention layer (q/k/v/o with GQA), each MLP layer (up/down,
    squared ReLU, no gate), the norms; the RADIO ViT (patch embedder, position table, class/register tokens, blocks
    with layer scales) and the pixel-shuffle MLP projector when the config has a RADIO ``vision_config``. Exact for
    these architectures (``tests/annotators/vllm/test_memory.py`` checks the counts against vLLM's own modules built
    on the meta device); other vision encoders are not modelled and are reported as such.
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

Request length = image tokens from the tile plan (:func:`screenmill.annotators.vllm.tile_plan.plan_tiles`: 256 tokens
per 512 px tile, plus a thumbnail when there is more than one tile) × images + prompt text + answer, or
``--tokens-per-request``.
"""

from __future__ import annotations

import dataclasses
import math

from screenmill.annotators.vllm.shapes import ImageTokens, ModelShape, TextShape, VisionShape

GIB = 1024**3
MIB = 1024**2

# Total device memory as nvidia-smi reports it (memory.total): H100 SXM 80 GB HBM3 = 81559 MiB, H200 141 GB =
# 143771 MiB. vLLM takes gpu_memory_utilization of the total (torch.cuda.mem_get_info's total).
GPUS: dict[str, tuple[str, int]] = {
    "h100-80gb": ("NVIDIA H100 80GB HBM3", 81559 * MIB),
    "h200-141gb": ("NVIDIA H200 141GB HBM3e", 143771 * MIB),
}


def gpus_to_size(preset: str, mem_gib: float | None = None) -> list[tuple[str, int]]:
    """``(GPU name, total bytes)`` to size for: a GPU of ``mem_gib`` GiB when given, else the preset (``all``: every
    preset in :data:`GPUS`)."""
    if mem_gib:
        return [(f"{mem_gib:g} GiB GPU", int(mem_gib * GIB))]
    return [GPUS[preset]] if preset != "all" else list(GPUS.values())


# The short names of model dtypes (what the report prints), and vLLM's names for them.
DTYPE_ALIASES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
DTYPE_BYTES = {"bf16": 2, "bfloat16": 2, "fp16": 2, "float16": 2, "half": 2, "fp32": 4, "float32": 4, "fp8": 1}
SSM_CACHE_DTYPES = ("auto", "float32", "bfloat16", "float16")
NEMOTRON_H_DEFAULT_SSM_CACHE_DTYPE = "float32"  # vLLM NemotronHForCausalLMConfig.DEFAULT_MAMBA_SSM_CACHE_DTYPE
VOCAB_PADDING = 64  # vLLM DEFAULT_VOCAB_PADDING_SIZE (VocabParallelEmbedding / ParallelLMHead)
# vLLM's CUDA attention backends (FlashAttention, FlashInfer) take kernel blocks in multiples of 16 and the default
# block size is 16 (CacheConfig.DEFAULT_BLOCK_SIZE); the CPU backend uses 32 / 128.
CUDA_KERNEL_BLOCK = 16
DEFAULT_BLOCK_SIZE = 16


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
    from screenmill.annotators.vllm.tile_plan import plan_tiles

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
