"""``DaskRunner``: Beam's DaskRunner with its translation fixed, so a job gives on a Dask cluster what it gives on the
default runner.

Beam 2.78's ``apache_beam.runners.dask.dask_runner.DaskRunner`` translates a pipeline into Dask bags, but
(each shown by ``tests/stages/runners/test_dask.py``):

1. every output of a multi-output ParDo receives *all* its outputs: ``TaggedOutput`` records land in the main output
   (and main records in every tagged one), so ``.with_outputs(DEAD_LETTER, main="good")`` mixes dead letters
   into the good records;
2. what ``finish_bundle`` emits (``BatchElements``' last batch, ``RunVlm``'s drained completions) is mixed into
   every output as in 1. (Beam 2.77 dropped it);
3. only the last transform's branch is computed: every other sink (here: all tables but one) never runs;
4. a side input is recomputed inside every task that reads it, its whole upstream again, side effects included;
5. ``Reshuffle`` is a no-op and ``Create``'s single partition is never split: no fan-out, one worker does everything;
6. no metrics (``result.metrics()`` raises), so no per-stage counts nor accounting;
7. the client it opens is never closed.

This runner keeps the stock options (``--dask_client_address``, ``--dask_npartitions`` …) and its ``Create``,
``GroupByKey`` and ``Flatten`` overrides, and translates the rest itself:

* a ParDo runs one bundle per Dask partition (``start_bundle`` → ``process`` … → ``finish_bundle``, whose outputs
  are kept) on a set-up DoFn that the worker process reuses across bundles, as Beam's workers do; a multi-output
  ParDo yields ``(tag, value)`` pairs and each output PCollection selects its own tag;
* side inputs are graph dependencies: computed once, handed to every task that reads them as a value;
* every sink is computed in one ``client.compute`` call, so a shared upstream runs once (Dask fuses chains of
  single-output ParDos into one task, as Beam's fusion would);
* ``Reshuffle`` / ``ReshufflePerKey`` split their input into ``--dask_fan_out`` partitions (default: twice the
  cluster's worker threads; per key, one key's elements stay together) whose first ParDo the scheduler hands to
  whichever workers have free threads; a ``GroupByKey`` keeps its input's partition count;
* ``CombinePerKey`` (counts, ``CombineGlobally``) is lifted: partial combines where the data is, then a tree of
  merges into one partition, instead of a full shuffle;
* each bundle sends its metrics (counters, distributions, string sets) to the scheduler as an event keyed by its task
  before the task's result leaves; the driver keeps one report per (task, step), so a task Dask re-runs after losing
  a worker is counted once.

Only what the screenmill jobs use is supported: global windows, bounded sources (``Read`` reads a source in one
task), no state or timers; anything else raises ``NotImplementedError`` when the pipeline is translated, never
silently. What runs inside the tasks is :mod:`screenmill.stages.runners.dask_tasks`.
:func:`screenmill.stages.runners.resolve_runner` maps ``--runner=DaskRunner`` (or the stock class path) to this class.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import re
import threading
import uuid
from collections import defaultdict
from typing import Any, NamedTuple

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.internal import pickler
from apache_beam.metrics.cells import DistributionData, DistributionResult
from apache_beam.metrics.execution import MetricKey, MetricResult
from apache_beam.metrics.metric import MetricResults
from apache_beam.metrics.metricbase import MetricName
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.pipeline import PipelineVisitor, PTransformOverride
from apache_beam.runners.dask.overrides import (
    _Create,
    _Flatten,
    _GroupAlsoByWindow,
    _GroupByKeyOnly,
    _Read,
    _Reshuffle,
    dask_overrides,
)
from apache_beam.runners.direct.direct_runner import BundleBasedDirectRunner
from apache_beam.runners.runner import PipelineResult, PipelineState
from apache_beam.transforms import userstate
from apache_beam.transforms.util import ReshufflePerKey
from apache_beam.transforms.window import GlobalWindows
from screenmill.stages.runners import RUNNER
from screenmill.stages.runners.dask_tasks import (
    combine_extract,
    combine_merge,
    combine_partial,
    concat_parts,
    gbk_key,
    gbk_values,
    read_source,
    row_count,
    run_bundle,
    run_piece,
    select_tag,
    take_piece,
)

try:  # Beam's DaskRunner module imports dask: screenmill's `dask` extra
    from apache_beam.runners.dask import dask_runner as _stock
except ImportError:
    _stock = None

INSTALL_HINT = "the Dask runner needs dask and distributed: pip install 'screenmill[dask]'"
_HAS_TASK_SPEC = _stock is not None and importlib.util.find_spec("dask._task_spec") is not None
_log = logging.getLogger("screenmill.dask")


class FanOutOptions(PipelineOptions):
    @classmethod
    def _add_argparse_args(cls, parser):
        parser.add_argument(
            "--dask_fan_out",
            type=int,
            default=None,
            help="partitions a Reshuffle splits its input into (default: 2 x the worker threads)",
        )


class _FanOut(NamedTuple):
    """A reshuffle's output before it is split: ``source`` (a bag) into ``n`` partitions."""

    source: Any
    n: int
    by_key: bool

    def pieces(self, name: str, func, *args, dependencies=()):
        """``func(piece, index, count, by_key, *args)`` for each of the ``n`` pieces, as a bag whose tasks the
        scheduler hands to whichever workers have a free thread.

        Dask places a task next to its input, so the pieces of one partition would all run on the worker that holds
        it (and only work stealing, if at all, would move them). Marked as data producers, the tasks are "root-ish":
        the scheduler queues them and gives each to the next worker with a free thread, which is what a reshuffle is
        for. ``args`` may hold ``TaskRef`` s to ``dependencies``.
        """
        import dask.bag as db
        from dask._task_spec import Task, TaskRef
        from dask.highlevelgraph import HighLevelGraph

        k, n, source = self.source.npartitions, self.n, self.source
        layer = {
            (name, j): Task(
                (name, j),
                func,
                TaskRef((source.name, j % k)),
                j // k,
                len(range(j % k, n, k)),
                self.by_key,
                *args,
                _data_producer=True,
            )
            for j in range(n)
        }
        graph = HighLevelGraph.from_collections(name, layer, dependencies=[source, *dependencies])
        return db.Bag(graph, name, n)

    def split(self):
        """The pieces as a plain bag (what a consumer other than a ParDo reads)."""
        from dask.base import tokenize

        if not _HAS_TASK_SPEC:  # another dask: a plain split, placement left to work stealing
            return self.source.repartition(npartitions=self.n)
        return self.pieces(f"beam-reshuffle-{tokenize(self.source, self.n, self.by_key)}", take_piece)


def _optimize(dsk, keys, **kwargs):
    """Dask's bag optimization, keeping the data-producer marks that its ``lazify`` pass drops when it rebuilds a
    task (without them the fan-out tasks would all run next to their input, on one worker)."""
    from dask._task_spec import Task, convert_legacy_graph
    from dask.bag.core import optimize

    producers = {k for k, t in convert_legacy_graph(dsk).items() if getattr(t, "data_producer", False)}
    out = optimize(dsk, keys, **kwargs)
    for key in producers & out.keys():
        task = out[key]
        if isinstance(task, Task) and not task.data_producer:
            out[key] = Task(task.key, task.func, *task.args, _data_producer=True, **task.kwargs)
    return out


def _keeping_producers(bag):
    """``bag`` as a Bag whose graph optimization keeps data-producer marks (see :func:`_optimize`)."""
    if not _HAS_TASK_SPEC:
        return bag
    import dask.bag as db

    class _Bag(db.Bag):
        __dask_optimize__ = staticmethod(_optimize)

    return _Bag(bag.dask, bag.name, bag.npartitions)


class _CombinePerKey(beam.PTransform):
    """Stands in for ``beam.CombinePerKey``: a lifted combine (partial combines per partition, then a tree merge)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def expand(self, pcoll):
        return pvalue.PCollection.from_(pcoll)


class _CombinePerKeyOverride(PTransformOverride):
    def matches(self, applied) -> bool:
        return applied.transform.__class__ == beam.CombinePerKey and not applied.transform.side_inputs

    def get_replacement_transform_for_applied_ptransform(self, applied):
        from apache_beam.transforms.combiners import curry_combine_fn

        t = applied.transform
        return _CombinePerKey(curry_combine_fn(t.fn, t.args, t.kwargs))


def _combine(bag, fn, token: str):
    """``CombinePerKey(fn)`` lifted: partial combines where the data is, a tree of merges, one output partition
    (every key's result in one task: right for the few keys of a count, and for the one-record-per-screenshot
    combines a reshuffle follows)."""
    import dask.bag as db

    spec = pickler.dumps(fn)
    merged = bag.reduction(
        functools.partial(combine_partial, spec=spec),
        functools.partial(combine_merge, spec=spec),
        split_every=8,
        out_type=db.Bag,
        name=f"{token}-combine",
    )
    return merged.map_partitions(combine_extract, spec, token=f"{token}-extract")


class _ReshufflePerKey(beam.PTransform):
    """Stands in for ``beam.ReshufflePerKey`` (a GroupByKey and an ungroup elsewhere): a per-key fan-out here."""

    def expand(self, pcoll):
        return pvalue.PCollection.from_(pcoll)


class _ReshufflePerKeyOverride(PTransformOverride):
    def matches(self, applied) -> bool:
        return applied.transform.__class__ == ReshufflePerKey

    def get_replacement_transform_for_applied_ptransform(self, applied):
        return _ReshufflePerKey()


def _windowfn(pcoll):
    try:
        return pcoll.windowing.windowfn
    except AttributeError:  # produced straight from the pipeline's root (a Read): global windows
        return GlobalWindows()


def _token(label: str) -> str:
    """A readable Dask key prefix for a transform (its tasks show up under it in the dashboard and in logs)."""
    return "beam-" + re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("_")[:80]


# ---------------------------------------------------------------------------------------------------------------
# Translation.


class _Translator(PipelineVisitor):
    """Beam leaf transforms → Dask bags, one bag per PCollection."""

    def __init__(self, bag_kwargs: dict, fan_out: int, topic: str):
        self.bag_kwargs = bag_kwargs
        self.fan_out = fan_out
        self.topic = topic
        self.bags: dict[pvalue.PCollection, Any] = {}
        self.consumed: set[pvalue.PCollection] = set()
        self.fanouts: dict[pvalue.PCollection, _FanOut] = {}
        self._side_cache: dict[pvalue.PCollection, Any] = {}

    def visit_transform(self, node) -> None:
        import dask.bag as db

        transform = node.transform
        inputs = [i for i in node.inputs if isinstance(i, pvalue.PCollection)]
        self.consumed.update(inputs)
        self.consumed.update(si.pvalue for si in node.side_inputs)
        in_bags = [self.bags[p] for p in inputs]
        token = _token(node.full_label)
        if isinstance(transform, _Create):
            bag = db.from_sequence(list(transform.values), **(self.bag_kwargs or {"partition_size": 128}))
        elif isinstance(transform, _Read):
            bag = db.from_sequence([transform.source], npartitions=1).map_partitions(read_source, token=token)
        elif isinstance(transform, _Flatten):
            bag = db.concat(in_bags) if in_bags else db.from_sequence([])
        elif isinstance(transform, (_Reshuffle, _ReshufflePerKey)):
            (bag,) = in_bags
            if bag.npartitions < self.fan_out:
                fan = _FanOut(bag, self.fan_out, isinstance(transform, _ReshufflePerKey))
                bag = fan.split()
                self.fanouts[node.outputs[None]] = fan
        elif isinstance(transform, _GroupByKeyOnly):
            windowfn = _windowfn(inputs[0])
            if not isinstance(windowfn, GlobalWindows):
                raise NotImplementedError(f"{RUNNER}: {node.full_label}: only global windows, not {windowfn}")
            (bag,) = in_bags  # as many partitions as its input: the fan-out comes from Reshuffle
            bag = bag.groupby(gbk_key, shuffle="tasks").map(gbk_values)
        elif isinstance(transform, _CombinePerKey):
            (bag,) = in_bags
            bag = _combine(bag, transform.fn, token)
        elif isinstance(transform, _GroupAlsoByWindow):
            (bag,) = in_bags  # global windows only: the groups are final
        elif isinstance(transform, beam.ParDo):
            self._pardo(node, inputs[0], token)
            return
        else:
            raise NotImplementedError(f"{RUNNER}: no translation for {type(transform).__name__} ({node.full_label})")
        (out,) = node.outputs.values()
        self.bags[out] = bag

    def _side_value(self, pcoll):
        """A side input as one Dask value (a list), computed once however many tasks read it."""
        import dask

        if pcoll not in self._side_cache:
            self._side_cache[pcoll] = dask.delayed(concat_parts, pure=True)(
                self.bags[pcoll].to_delayed(optimize_graph=False)
            )
        return self._side_cache[pcoll]

    def _pardo(self, node, pcoll, token: str) -> None:
        transform = node.transform
        if userstate.is_stateful_dofn(transform.fn):
            raise NotImplementedError(f"{RUNNER}: {node.full_label}: state and timers are not supported")
        side_specs = [(type(si), si._view_options()) for si in node.side_inputs]
        spec = pickler.dumps((transform.fn, transform.args, transform.kwargs, side_specs))
        sides = [self._side_value(si.pvalue) for si in node.side_inputs]
        tagged = len(node.outputs) > 1
        bundle = (spec, node.full_label, self.topic, tagged)
        fan = self.fanouts.get(pcoll)
        if fan is not None and _HAS_TASK_SPEC:  # right after a reshuffle: each bundle cuts its own piece
            from dask._task_spec import TaskRef
            from dask.base import tokenize

            name = f"{token}-{tokenize(fan.source, fan.n, spec, *sides)}"
            refs = [TaskRef(side.key) for side in sides]
            out = fan.pieces(name, run_piece, *bundle, *refs, dependencies=sides)
        else:
            out = self.bags[pcoll].map_partitions(run_bundle, *bundle, *sides, token=token)
        if not tagged:
            (pcoll_out,) = node.outputs.values()
            self.bags[pcoll_out] = out
            return
        for tag, pcoll_out in node.outputs.items():
            self.bags[pcoll_out] = out.map_partitions(select_tag, tag, token=f"{token}-out-{tag}")

    def sinks(self) -> list:
        """Each unconsumed PCollection reduced to its row count: computing these runs the whole pipeline."""
        return [bag.map_partitions(row_count) for pcoll, bag in self.bags.items() if pcoll not in self.consumed]


class _Totals(NamedTuple):
    """A run's metrics by (step, namespace, name): counters summed, distributions merged, string sets joined."""

    counters: dict[tuple[str, str, str], int]
    distributions: dict[tuple[str, str, str], DistributionData]
    string_sets: dict[tuple[str, str, str], set[str]]


class _Counters(MetricResults):
    def __init__(self, totals: _Totals):
        self._totals = totals

    def _results(self, values: dict, filter, wrap) -> list:  # noqa: A002 - Beam's name
        results = []
        for (step, namespace, name), value in sorted(values.items()):
            key = MetricKey(step, MetricName(namespace, name))
            if self.matches(filter, key):
                results.append(MetricResult(key, wrap(value), wrap(value)))
        return results

    def query(self, filter=None):  # noqa: A002 - Beam's signature
        t = self._totals
        return {
            self.COUNTERS: self._results(t.counters, filter, lambda v: v),
            self.DISTRIBUTIONS: self._results(t.distributions, filter, DistributionResult),
            self.GAUGES: [],
            self.STRINGSETS: self._results(t.string_sets, filter, set),
            self.BOUNDED_TRIES: [],
        }


class _CounterEvents:
    """The driver's side of the metrics: bundles' events, kept once per (task, step), combined at the end."""

    def __init__(self):
        self._lock = threading.Lock()
        self._bundles: dict[tuple[str, str], dict] = {}

    def __call__(self, event) -> None:
        _, msg = event
        with self._lock:
            self._bundles[(msg["task"], msg["step"])] = msg

    def totals(self) -> _Totals:
        totals = _Totals(defaultdict(int), {}, defaultdict(set))
        with self._lock:
            for (_, step), msg in self._bundles.items():
                for namespace, name, value in msg["counters"]:
                    totals.counters[(step, namespace, name)] += value
                for namespace, name, *data in msg.get("distributions", ()):
                    key = (step, namespace, name)
                    d, seen = DistributionData(*data), totals.distributions.get(key)
                    totals.distributions[key] = d if seen is None else seen.combine(d)
                for namespace, name, values in msg.get("string_sets", ()):
                    totals.string_sets[(step, namespace, name)].update(values)
        return _Totals(dict(totals.counters), totals.distributions, dict(totals.string_sets))


class DaskRunnerResult(PipelineResult):
    """The running job: ``wait_until_finish`` waits for every sink, sums the counters and closes the client."""

    def __init__(self, client, futures, topic: str, events: _CounterEvents):
        super().__init__(PipelineState.RUNNING)
        self.client = client
        self.futures = futures
        self._topic = topic
        self._events = events
        self._totals = _Totals({}, {}, {})

    def wait_until_finish(self, duration=None) -> str:
        if self._state != PipelineState.RUNNING:
            return self._state
        import dask.distributed as ddist

        try:
            ddist.wait(self.futures, timeout=None if duration is None else duration / 1000)
        except ddist.TimeoutError:
            return self._state
        try:
            self.client.gather(self.futures)  # raises the first task error, if any
            self._totals = self._events.totals()
            self._state = PipelineState.DONE
        except BaseException:
            self._state = PipelineState.FAILED
            raise
        finally:
            self._close()
        return self._state

    def _close(self) -> None:
        try:
            self.client.unsubscribe_topic(self._topic)
        finally:
            self.client.close()

    def cancel(self) -> str:
        self.client.cancel(self.futures)
        self._close()
        self._state = PipelineState.CANCELLED
        return self._state

    def metrics(self) -> MetricResults:
        return _Counters(self._totals)


class DaskRunner(_stock.DaskRunner if _stock else BundleBasedDirectRunner):
    """Runs a pipeline on a Dask distributed cluster (``--dask_client_address``, or a local one); see the module."""

    def run_pipeline(self, pipeline, options):
        if _stock is None:
            raise ImportError(INSTALL_HINT)
        import dask.bag as db
        import dask.distributed as ddist

        dask_options = options.view_as(_stock.DaskOptions).get_all_options(drop_default=True, current_only=True)
        bag_kwargs = _stock.DaskOptions._extract_bag_kwargs(dask_options)
        client = ddist.Client(**dask_options)
        try:
            fan_out = options.view_as(FanOutOptions).dask_fan_out
            threads = client.nthreads()
            if not fan_out:
                fan_out = 2 * max(1, sum(threads.values()))
            _log.info("dask: %d workers, %d threads, fan-out %d", len(threads), sum(threads.values()), fan_out)
            pipeline.replace_all([_CombinePerKeyOverride(), *dask_overrides(), _ReshufflePerKeyOverride()])
            topic = f"screenmill-counters-{uuid.uuid4().hex}"
            translator = _Translator(bag_kwargs, fan_out, topic)
            pipeline.visit(translator)
            sinks = translator.sinks()
            rows = db.concat(sinks) if sinks else db.from_sequence([])
            events = _CounterEvents()
            client.subscribe_topic(topic, events)
            futures = client.compute(_keeping_producers(rows))
        except BaseException:
            client.close()
            raise
        return DaskRunnerResult(client, [futures], topic, events)
