"""The Dask runner on a real cluster (scheduler + 2 worker processes on 127.0.0.1): Beam 2.78's stock DaskRunner
gets multi-output ParDos and multi-sink pipelines wrong (and 2.77's finish_bundle too);
``screenmill.stages.runners.dask.DaskRunner`` gives what the default runner gives, runs side inputs once, fans out and
returns counters."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue
from screenmill.stages.runners import RUNNER, STOCK_RUNNER, resolve_runner

from tests.dask_cluster import dask_args, local_cluster

pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    with local_cluster() as c:
        yield c


class _Split(beam.DoFn):
    """Even numbers on the main output, odd ones tagged ``odd``, multiples of 5 also tagged ``five``."""

    def process(self, x):
        beam.metrics.Metrics.counter("probe", "seen").inc()
        beam.metrics.Metrics.distribution("probe", "value").update(x)
        beam.metrics.Metrics.string_set("probe", "parity").add("odd" if x % 2 else "even")
        if x % 5 == 0:
            yield beam.pvalue.TaggedOutput("five", x)
        yield beam.pvalue.TaggedOutput("odd", x) if x % 2 else x


class _Buffered(beam.DoFn):
    """Emits nothing from process(): everything comes out of finish_bundle, as RunVlm's drained completions do."""

    def start_bundle(self):
        self._buffer = []

    def process(self, x):
        self._buffer.append(x)

    def finish_bundle(self):
        for x in self._buffer:
            yield beam.pvalue.TaggedOutput("late", WindowedValue(-x, MIN_TIMESTAMP, [GlobalWindow()]))
            yield WindowedValue(x * 10, MIN_TIMESTAMP, [GlobalWindow()])


def _sink(folder: Path, name: str):
    def write(values):
        (folder / f"{name}.json").write_text(json.dumps(sorted(values, key=repr), default=repr))

    return beam.combiners.ToList() | f"Write{name}" >> beam.Map(write)


def _touch(folder: Path):
    def touch(x):
        (folder / f"touch-{x}-{time.monotonic_ns()}").touch()
        return x

    return touch


def _kitchen_sink(p, out: Path, text_file: Path):
    """Every construct the screenmill jobs use, each ending in its own sink."""
    nums = p | "Nums" >> beam.Create(list(range(20))) | "Touch" >> beam.Map(_touch(out))
    split = nums | "Split" >> beam.ParDo(_Split()).with_outputs("odd", "five", main="even")
    split.even | "SinkEven" >> _sink(out, "even")
    split.odd | "SinkOdd" >> _sink(out, "odd")
    split.five | "SinkFive" >> _sink(out, "five")
    late = nums | "Late" >> beam.ParDo(_Buffered()).with_outputs("late", main="main")
    late.main | "SinkFinish" >> _sink(out, "finish")
    late.late | "SinkLate" >> _sink(out, "late")
    total = beam.pvalue.AsSingleton(nums | "Sum" >> beam.CombineGlobally(sum))
    evens = beam.pvalue.AsList(split.even)
    lookup = beam.pvalue.AsDict(nums | "Pairs" >> beam.Map(lambda x: (x, x * x)))
    every = beam.pvalue.AsIter(split.odd)
    sided = nums | "Sides" >> beam.Map(
        lambda x, t, e, d, o: (x, t, len(e), d[x], sum(o)), t=total, e=evens, d=lookup, o=every
    )
    sided | "SinkSides" >> _sink(out, "sides")
    grouped = nums | "Key" >> beam.Map(lambda x: (x % 3, x)) | "Group" >> beam.GroupByKey()
    grouped | "Sorted" >> beam.MapTuple(lambda k, vs: (k, sorted(vs))) | "SinkGroup" >> _sink(out, "group")
    joined = {
        "a": nums | "KA" >> beam.Map(lambda x: (x % 4, x)),
        "b": split.odd | "KB" >> beam.Map(lambda x: (x % 4, x)),
    }
    cogrouped = joined | "Join" >> beam.CoGroupByKey()
    (
        cogrouped
        | "Flat" >> beam.MapTuple(lambda k, g: (k, sorted(g["a"]), sorted(g["b"])))
        | "SinkJoin" >> _sink(out, "join")
    )
    mixed = (split.even, split.odd, p | "Empty" >> beam.Create([])) | "Flatten" >> beam.Flatten()
    mixed | "Reshuffle" >> beam.Reshuffle() | "SinkFlat" >> _sink(out, "flat")
    combined = nums | "KC" >> beam.Map(lambda x: (x % 2, x)) | "CombinePerKey" >> beam.CombinePerKey(max)
    combined | "SinkCombine" >> _sink(out, "combine")
    batches = nums | "Batch" >> beam.BatchElements(min_batch_size=3, max_batch_size=3) | "Sizes" >> beam.Map(sum)
    batches | "Total" >> beam.CombineGlobally(sum) | "SinkBatches" >> _sink(out, "batches")
    p | "Read" >> beam.io.ReadFromText(str(text_file)) | "SinkText" >> _sink(out, "text")


def _run(build, options: list[str]):
    p = beam.Pipeline(options=PipelineOptions(options))
    build(p)
    result = p.run()
    result.wait_until_finish()
    return result


def _read(folder: Path) -> dict[str, object]:
    return {f.stem: json.loads(f.read_text()) for f in sorted(folder.glob("*.json"))}


def _counter(result, name: str) -> int:
    found = [c for c in result.metrics().query()["counters"] if c.key.metric.namespace == "probe"]
    return sum(c.committed for c in found if c.key.metric.name == name)


def _probe(result, kind: str, name: str) -> list:
    """The committed values of the ``probe`` metric ``name`` of ``kind`` (``distributions``, ``string_sets``)."""
    found = result.metrics().query()[kind]
    return [m.committed for m in found if m.key.metric.namespace == "probe" and m.key.metric.name == name]


def test_stock_dask_runner_gets_tagged_outputs_finish_bundle_and_sinks_wrong(cluster, tmp_path):
    """Why screenmill never runs on the stock runner (a canary: when Beam fixes these, this test says so)."""

    def case(name, build):
        out = tmp_path / name
        out.mkdir()
        result = _run(lambda p: build(p, out), dask_args(cluster, STOCK_RUNNER))
        result.client.close()  # the stock result never closes its client
        return _read(out)

    def tagged(p, out):
        split = p | beam.Create(list(range(6))) | beam.ParDo(_Split()).with_outputs("odd", "five", main="even")
        split.odd | "SinkOdd" >> _sink(out, "odd")  # the last (and only) sink: the stock runner computes it

    def finish(p, out):
        p | beam.Create([1, 2]) | beam.ParDo(_Buffered()) | "SinkFinish" >> _sink(out, "finish")

    def two_sinks(p, out):
        nums = p | beam.Create([1, 2])
        nums | "First" >> _sink(out, "first")
        nums | "Second" >> _sink(out, "second")

    assert case("tagged", tagged) == {"odd": [0, 0, 1, 2, 3, 4, 5, 5]}, "tagged outputs no longer mixed"
    # Beam 2.78 keeps finish_bundle's outputs on the stock runner (2.77 dropped them), mixed with the tagged ones
    finished = case("finish", finish)
    assert sorted(finished.get("finish", [])) == [-2, -1, 10, 20], f"finish_bundle's outputs now: {finished}"
    assert case("sinks", two_sinks) == {"second": [1, 2]}, "every sink runs now"


def test_fixed_runner_gives_what_the_default_runner_gives(cluster, tmp_path):
    text = tmp_path / "lines.txt"
    text.write_text("alpha\nbeta\ngamma\n")
    direct, dask = tmp_path / "direct", tmp_path / "dask"
    direct.mkdir()
    dask.mkdir()
    want = _run(lambda p: _kitchen_sink(p, direct, text), [])
    got = _run(lambda p: _kitchen_sink(p, dask, text), dask_args(cluster, RUNNER))
    expected = _read(direct)
    assert sorted(expected["odd"]) == list(range(1, 20, 2)) and sorted(expected["five"]) == [0, 5, 10, 15]
    assert sorted(expected["late"]) == list(range(-19, 1)) and expected["text"] == ["alpha", "beta", "gamma"]
    assert _read(dask) == expected
    # a side input (and the upstream it shares with the main path) runs once, not once per task that reads it
    assert len(list(dask.glob("touch-*"))) == len(list(direct.glob("touch-*"))) == 20
    assert _counter(got, "seen") == _counter(want, "seen") == 20
    # distributions and string sets too (the model stage's accounting): merged over bundles, as Beam does
    (value,) = _probe(got, "distributions", "value")
    assert (value.sum, value.count, value.min, value.max) == (190, 20, 0, 19)
    assert _probe(got, "distributions", "value") == _probe(want, "distributions", "value")
    assert _probe(got, "string_sets", "parity") == _probe(want, "string_sets", "parity") == [{"odd", "even"}]
    assert got.state == "DONE"


def _pid_after_work(x):
    time.sleep(0.3)
    return os.getpid()


def test_reshuffle_spreads_work_over_both_workers(cluster, tmp_path):
    def build(p):
        (
            p
            | beam.Create(list(range(8)))
            | beam.Reshuffle()
            | beam.Map(_pid_after_work)
            | beam.Distinct()
            | "SinkPids" >> _sink(tmp_path, "pids")
        )

    _run(build, resolve_runner([*dask_args(cluster), "--dask_fan_out=4"]))  # as screenmill run does
    assert len(_read(tmp_path)["pids"]) == 2


class _CountsSetups(beam.DoFn):
    """Leaves a file per setup() in ``folder``; a worker that reuses its DoFns leaves one per thread."""

    def __init__(self, folder: str):
        self._folder = folder

    def setup(self):
        Path(self._folder, f"setup-{os.getpid()}-{time.monotonic_ns()}").touch()

    def process(self, x):
        yield x


def test_a_worker_sets_a_dofn_up_once_and_reuses_it_across_bundles(cluster, tmp_path):
    def build(p):
        (
            p
            | beam.Create(list(range(16)))
            | beam.Reshuffle()
            | beam.ParDo(_CountsSetups(str(tmp_path)))
            | beam.combiners.Count.Globally()
            | "SinkCount" >> _sink(tmp_path, "count")
        )

    _run(build, [*dask_args(cluster, RUNNER), "--dask_fan_out=8"])  # 8 bundles on 2 one-thread workers
    assert _read(tmp_path)["count"] == [16]
    setups = list(tmp_path.glob("setup-*"))
    assert 1 <= len(setups) <= 2, setups  # at most one per worker process, not one per bundle


def test_unsupported_windowing_fails_at_translation(cluster):
    from apache_beam.transforms.window import FixedWindows

    def build(p):
        p | beam.Create([(1, 1)]) | beam.WindowInto(FixedWindows(10)) | beam.GroupByKey()

    with pytest.raises(NotImplementedError, match="global windows"):
        _run(build, dask_args(cluster, RUNNER))
