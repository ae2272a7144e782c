"""What runs inside a Dask task for :class:`screenmill.stages.runners.dask.DaskRunner`: ParDo bundles and lifted
combines.

A task gets a pickled DoFn (or CombineFn) spec and its input partition. :func:`run_bundle` runs one bundle
(``start_bundle`` → ``process`` … → ``finish_bundle``, whose outputs are kept) on a DoFn the worker process sets up
once and reuses across bundles, as Beam's workers do, and reports the bundle's counters to the scheduler as an event
keyed by its task before the task's result leaves; :func:`run_piece` first cuts its own piece of a reshuffled
partition. The ``combine_*`` functions are the partial / merge / extract steps of a lifted ``CombinePerKey``. The
translation that builds the graph from these is in :mod:`screenmill.stages.runners.dask`.
"""

from __future__ import annotations

import hashlib
import logging
import pickle
import threading
import zlib
from collections import OrderedDict, defaultdict
from typing import Any

import apache_beam as beam
from apache_beam.internal import pickler
from apache_beam.metrics.execution import MetricsContainer
from apache_beam.runners.common import DoFnContext, DoFnInvoker, DoFnSignature, Receiver, _OutputHandler
from apache_beam.runners.worker import statesampler
from apache_beam.transforms.sideinputs import SideInputMap
from apache_beam.transforms.window import GlobalWindow, GlobalWindows
from apache_beam.utils.counters import CounterFactory
from apache_beam.utils.windowed_value import WindowedValue

_log = logging.getLogger("screenmill.dask")


class _Collect(Receiver):
    def __init__(self, tag, sink: list):
        self._tag = tag
        self._sink = sink

    def receive(self, windowed_value: WindowedValue) -> None:
        self._sink.append((self._tag, windowed_value.value))


class _TaggedCollect(dict):
    def __init__(self, sink: list):
        super().__init__()
        self._sink = sink

    def __missing__(self, tag):
        receiver = self[tag] = _Collect(tag, self._sink)
        return receiver


def _windowed(value) -> WindowedValue:
    return WindowedValue(value, 0, (GlobalWindow(),))


def run_bundle(items, spec: bytes, label: str, topic: str, tagged: bool, *side_values) -> list:
    """One bundle of a ParDo: the main output's values, or with ``tagged`` a ``(tag, value)`` pair for every output;
    ``finish_bundle``'s outputs included. Counters go to ``topic``."""
    key, loaded, ready = _DOFNS.take(spec)
    fn, args, kwargs, side_specs = loaded
    outputs: list[tuple[Any, Any]] = []
    receivers = _TaggedCollect(outputs)
    handler = _OutputHandler(
        window_fn=GlobalWindows(),
        main_receivers=receivers[None],
        tagged_receivers=receivers,
        per_element_output_counter=None,
        output_batch_converter=None,
        process_yields_batches=False,
        process_batch_yields_elements=False,
    )
    side_inputs = [
        SideInputMap(view_class, view_options, [_windowed(v) for v in values])
        for (view_class, view_options), values in zip(side_specs, side_values, strict=True)
    ]
    container = MetricsContainer(label)
    sampler = statesampler.StateSampler(label, CounterFactory())
    previous = statesampler.get_current_tracker()
    statesampler.set_current_tracker(sampler)
    finished = False
    try:
        with sampler.scoped_state(label, "process", metrics_container=container):
            invoker = DoFnInvoker.create_invoker(
                DoFnSignature(fn),
                handler,
                context=DoFnContext(label, state=None),
                side_inputs=side_inputs,
                input_args=args,
                input_kwargs=kwargs,
                user_state_context=None,
                bundle_finalizer_param=beam.DoFn.BundleFinalizerParam(),
            )
            if not ready:
                invoker.invoke_setup()
            invoker.invoke_start_bundle()
            for item in items:
                invoker.invoke_process(_windowed(item))
            invoker.invoke_finish_bundle()
            finished = True
    finally:
        statesampler.set_current_tracker(previous)
        if finished:
            _DOFNS.give_back(key, loaded)
        else:
            _teardown(fn)  # a DoFn that failed a bundle is not reused
    _report_counters(topic, label, container)
    return outputs if tagged else [value for _, value in outputs]


def _teardown(fn) -> None:
    try:
        fn.teardown()
    except Exception:  # noqa: BLE001 - teardown is best effort, as on every Beam runner
        _log.warning("teardown of %r failed", fn, exc_info=True)


class _DoFnPool:
    """A worker process's set-up DoFns, reused across bundles as Beam's own workers reuse them.

    A bundle takes an idle instance of its ParDo (or unpickles and sets up a new one), and gives it back when the
    bundle succeeds; one instance serves one bundle at a time, so concurrent bundles (worker threads) get instances
    of their own. What a DoFn holds in ``setup()`` (an OCR model through ``shared.Shared``, a benchmark index)
    therefore lives across bundles instead of being rebuilt per partition. The least recently used ParDos beyond
    ``max_pardos`` (earlier runs' ones) are torn down.
    """

    def __init__(self, max_pardos: int = 256):
        self._lock = threading.Lock()
        self._idle: OrderedDict[bytes, list] = OrderedDict()
        self._max = max_pardos

    def take(self, spec: bytes) -> tuple[bytes, tuple, bool]:
        """``(key, (fn, args, kwargs, side_specs), already set up)`` for a bundle of the ParDo ``spec``."""
        key = hashlib.blake2b(spec, digest_size=16).digest()
        with self._lock:
            idle = self._idle.get(key)
            if idle:
                self._idle.move_to_end(key)
                return key, idle.pop(), True
        return key, pickler.loads(spec), False

    def give_back(self, key: bytes, loaded: tuple) -> None:
        evicted = []
        with self._lock:
            self._idle.setdefault(key, []).append(loaded)
            self._idle.move_to_end(key)
            while len(self._idle) > self._max:
                evicted.extend(self._idle.popitem(last=False)[1])
        for fn, *_ in evicted:
            _teardown(fn)


_DOFNS = _DoFnPool()


def _report_counters(topic: str, label: str, container: MetricsContainer) -> None:
    """Send a bundle's metrics (counters, distributions, string sets) to the scheduler as an event of ``topic``, keyed
    by the running task.

    The event leaves before the task's result does, so a task the scheduler counts as finished has reported its
    metrics; a task Dask runs again (its worker died) reports again under the same key, which the driver keeps once.
    """
    cumulative = container.get_cumulative()
    counters = [[k.metric.namespace, k.metric.name, v] for k, v in cumulative.counters.items() if v]
    distributions = [
        [k.metric.namespace, k.metric.name, d.sum, d.count, d.min, d.max]
        for k, d in cumulative.distributions.items()
        if d.count
    ]
    string_sets = [
        [k.metric.namespace, k.metric.name, sorted(v.string_set)] for k, v in cumulative.string_sets.items() if v
    ]
    if not (counters or distributions or string_sets):
        return
    from distributed import get_worker

    worker = get_worker()
    task = worker.get_current_task()
    msg = {"counters": counters, "distributions": distributions, "string_sets": string_sets}
    worker.log_event(topic, {"task": repr(task), "step": label, **msg})


def select_tag(tagged, tag) -> list:
    return [value for t, value in tagged if t == tag]


def row_count(items) -> list[int]:
    return [sum(1 for _ in items)]


def concat_parts(parts) -> list:
    return [v for part in parts for v in part]


def gbk_key(item):
    return item[0]


def gbk_values(item):
    key, pairs = item
    return key, [v.value if isinstance(v, WindowedValue) else v for _, v in pairs]


def read_source(sources) -> list:
    out = []
    for source in sources:
        out.extend(source.read(source.get_range_tracker(None, None)))
    return out


def _key_hash(key) -> int:
    return zlib.crc32(key.encode() if isinstance(key, str) else pickle.dumps(key, protocol=4))


def take_piece(part, index: int, count: int, by_key: bool) -> list:
    """Piece ``index`` of ``count`` of a partition: every ``count``-th element, or for a per-key reshuffle the
    elements whose key hashes to ``index`` (so one key's elements stay together)."""
    if by_key:
        return [kv for kv in part if _key_hash(kv[0]) % count == index]
    return list(part)[index::count]


def run_piece(part, index: int, count: int, by_key: bool, *bundle_args):
    return run_bundle(take_piece(part, index, count, by_key), *bundle_args)


def _with_fn(spec: bytes, work):
    fn = pickler.loads(spec)
    fn.setup()
    try:
        return work(fn)
    finally:
        fn.teardown()


def combine_partial(part, spec: bytes) -> list:
    """A partition's ``(key, accumulator)`` pairs."""

    def work(fn):
        accumulators: dict = {}
        for key, value in part:
            acc = accumulators[key] if key in accumulators else fn.create_accumulator()
            accumulators[key] = fn.add_input(acc, value)
        return list(accumulators.items())

    return _with_fn(spec, work)


def combine_merge(parts, spec: bytes) -> list:
    """Several partitions' ``(key, accumulator)`` pairs merged into one list."""

    def work(fn):
        grouped: dict = defaultdict(list)
        for part in parts:
            for key, acc in part:
                grouped[key].append(acc)
        return [(key, fn.merge_accumulators(accs)) for key, accs in grouped.items()]

    return _with_fn(spec, work)


def combine_extract(part, spec: bytes) -> list:
    return _with_fn(spec, lambda fn: [(key, fn.extract_output(acc)) for key, acc in part])
