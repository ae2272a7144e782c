"""The stage contract: counters, failures → dead letters and outputs, the same way for every stage.

A stage is a :class:`Stage` (a ``beam.PTransform``) whose ``expand`` returns :class:`StageOutputs`: ``good``
records, ``dead_letter`` records (:class:`screenmill.schemas.records.DeadLetter`) and any named extra outputs. Its
per-element work is a :class:`StageDoFn` whose subclasses implement :meth:`StageDoFn.handle`, a generator that yields

* good records (main output, counted as ``forwarded``),
* ``beam.pvalue.TaggedOutput(tag, value)`` for a named extra output (not counted),
* :class:`Failure` for an input that cannot go on: the base counts it as ``dropped_<reason>`` and emits its
  :class:`DeadLetter` row on the dead-letter output.

An exception raised by ``handle`` fails the run (a bug), unless the DoFn sets :attr:`StageDoFn.error_reason`: then
it dead-letters the element under that reason (``"<ExceptionType>: <message>"``), after whatever ``handle`` yielded
before it.

Counters live in the Beam Metrics namespace ``screenmill.<stage>``: ``total`` (inputs seen), ``forwarded`` (outputs
passed on) and ``dropped_<reason>`` (inputs dead-lettered, by reason code). The run manifest and the end-of-run summary
read them back from the pipeline result.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Iterable, Iterator

import apache_beam as beam
from apache_beam.metrics import Metrics
from screenmill.schemas.records import DeadLetter, utcnow

DEAD_LETTER = "dead_letter"
METRICS_PREFIX = "screenmill."
MAX_ERROR_CHARS = 4000


PROGRESS_EVERY_S = 10.0
_log = logging.getLogger("screenmill.progress")


def show_progress(enabled: bool) -> None:
    """Send the ``screenmill`` loggers (progress lines among them) to stderr at INFO, or keep them to warnings.

    Beam's import already configured the root logger (so ``basicConfig`` would do nothing): the ``screenmill`` logger
    gets a handler of its own instead.
    """
    log = logging.getLogger("screenmill")
    log.setLevel(logging.INFO if enabled else logging.WARNING)
    if enabled and not any(getattr(h, "_screenmill", False) for h in log.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        handler._screenmill = True
        log.addHandler(handler)
        log.propagate = False


class _Counter:
    """A Beam counter that also keeps this worker's running count (for the progress line)."""

    def __init__(self, owner: StageCounters, name: str):
        self._owner = owner
        self._metric = Metrics.counter(owner.namespace, name)
        self.value = 0

    def inc(self, n: int = 1) -> None:
        self._metric.inc(n)
        self.value += n
        self._owner.maybe_report()

    def dec(self, n: int = 1) -> None:
        self.inc(-n)


class StageCounters:
    """Beam counters for one stage; create inside a DoFn (``__init__`` or ``setup``), use anywhere after.

    Also the progress display: every worker logs one line per stage at most every ``PROGRESS_EVERY_S`` seconds
    (logger ``screenmill.progress``, INFO) with its running in / out / dead-letter counts and rate.
    """

    def __init__(self, stage: str):
        self.stage = stage
        self.namespace = METRICS_PREFIX + stage
        self.total = _Counter(self, "total")
        self.forwarded = _Counter(self, "forwarded")
        self._named: dict[str, object] = {}
        self.dropped_count = 0
        self._started = self._last_report = time.monotonic()

    def counter(self, name: str):
        """Any other counter of the stage (``screenmill.<stage>/<name>``), made once."""
        metric = self._named.get(name)
        if metric is None:
            metric = self._named[name] = Metrics.counter(self.namespace, name)
        return metric

    def dropped(self, reason: str, n: int = 1) -> None:
        self.counter(f"dropped_{reason}").inc(n)
        self.dropped_count += n
        self.maybe_report()

    def maybe_report(self) -> None:
        now = time.monotonic()
        if now - self._last_report < PROGRESS_EVERY_S:
            return
        self._last_report = now
        rate = self.total.value / max(now - self._started, 1e-9)
        _log.info(
            "[%s] %d in, %d out, %d dead-lettered (%.1f/s on this worker)",
            self.stage,
            self.total.value,
            self.forwarded.value,
            self.dropped_count,
            rate,
        )


def dead_letter_row(stage: str, input_id: str, reason: str, error: str, payload_ref: str, run_id: str) -> DeadLetter:
    """The :class:`DeadLetter` row of one failure (``error`` cut to :data:`MAX_ERROR_CHARS`)."""
    text = error if len(error) <= MAX_ERROR_CHARS else error[: MAX_ERROR_CHARS - 20] + " …[truncated]"
    return DeadLetter(
        input_id=input_id,
        stage=stage,
        reason=reason,
        error=text,
        payload_ref=payload_ref,
        run_id=run_id,
        time=utcnow(),
    )


def dead_letter(
    counters: StageCounters, input_id: str, reason: str, error: str, payload_ref: str, run_id: str
) -> beam.pvalue.TaggedOutput:
    """Count a rejected input and wrap its :class:`DeadLetter` for the dead-letter output of the stage.

    For DoFns not (yet) on :class:`StageDoFn`, which yield :class:`Failure` instead.
    """
    counters.dropped(reason)
    record = dead_letter_row(counters.stage, input_id, reason, error, payload_ref, run_id)
    return beam.pvalue.TaggedOutput(DEAD_LETTER, record)


@dataclasses.dataclass(frozen=True, slots=True)
class Failure:
    """An input a stage cannot pass on (or, with ``flag``, passes on but records).

    Attributes:
        input_id: what failed, as the dead-letter table keys it (usually the file URI).
        reason: a stable reason code (``dropped_<reason>`` counter, ``reason`` column).
        error: a human-readable explanation (cut to :data:`MAX_ERROR_CHARS` in the row).
        payload_ref: where the input (or the rejected payload, e.g. a model's answer) can be found.
        flag: not a drop: the row is written but counted under this counter name instead of ``dropped_<reason>``
            (the stage forwards the input too).
    """

    input_id: str
    reason: str
    error: str
    payload_ref: str
    flag: str | None = None


class StageDoFn(beam.DoFn):
    """Base of a stage's DoFns: subclasses set :attr:`stage` and implement :meth:`handle`.

    Attributes:
        stage: the stage's name: Beam Metrics namespace ``screenmill.<stage>`` and the ``stage`` of its dead letters.
        count_inputs / count_forwarded: see below.
        error_reason: set, an exception out of :meth:`handle` is this element's failure under this reason (its
            :meth:`input_ref` as input id and payload reference); None, it fails the run.

    Counting: by default every element is one input (``total``) and every good record one ``forwarded``; a DoFn
    whose elements hold several inputs (a file with many steps, a group of labels) sets :attr:`count_inputs` /
    :attr:`count_forwarded` to False and counts on :attr:`counters` itself. Failures are always counted here.

    Args:
        run_id: the run's id, stamped on dead-letter rows.
    """

    stage: str = ""
    count_inputs: bool = True
    count_forwarded: bool = True
    error_reason: str | None = None

    def __init__(self, run_id: str):
        super().__init__()
        if not self.stage:
            raise TypeError(f"{type(self).__name__} must set StageDoFn.stage")
        self.run_id = run_id

    def setup(self):
        self.counters = StageCounters(self.stage)
        self.start()

    def start(self) -> None:
        """Per-DoFn-instance set-up after the counters exist (models, clients, extra counters)."""

    def handle(self, element, *side_inputs) -> Iterable:
        """One element → good records, ``TaggedOutput`` extras and :class:`Failure` s."""
        raise NotImplementedError

    def input_ref(self, element) -> str:
        """What a dead letter calls ``element`` when :meth:`handle` raises (default: its ``source_uri``)."""
        return element.source_uri

    def process(self, element):
        yield from self.emit(element)

    def emit(self, element, *side_inputs) -> Iterator:
        """Run :meth:`handle` on one element and turn what it yields into the DoFn's outputs (DoFns with side
        inputs call this from their own ``process(element, side…)``)."""
        if self.count_inputs:
            self.counters.total.inc()
        try:
            for out in self.handle(element, *side_inputs):
                if isinstance(out, Failure):
                    yield beam.pvalue.TaggedOutput(DEAD_LETTER, self.dead_letter(out))
                elif isinstance(out, beam.pvalue.TaggedOutput):
                    yield out
                else:
                    if self.count_forwarded:
                        self.counters.forwarded.inc()
                    yield out
        except Exception as e:
            if self.error_reason is None:
                raise
            ref = self.input_ref(element)
            failure = Failure(ref, self.error_reason, f"{type(e).__name__}: {e}", ref)
            yield beam.pvalue.TaggedOutput(DEAD_LETTER, self.dead_letter(failure))

    def dead_letter(self, failure: Failure) -> DeadLetter:
        """Count ``failure`` (``dropped_<reason>``, or its flag counter) and build its dead-letter row."""
        if failure.flag is None:
            self.counters.dropped(failure.reason)
        else:
            self.counters.counter(failure.flag).inc()
        return dead_letter_row(
            self.stage, failure.input_id, failure.reason, failure.error, failure.payload_ref, self.run_id
        )


class StageOutputs(tuple):
    """What every stage's ``expand`` returns: ``good`` records, ``dead_letter`` records and named extra outputs.

    A tuple (``good``, ``dead_letter``, extras… in the order given) whose members are also attributes, so Beam sees
    every PCollection of it as an output of the stage: ``out.good``, ``out.dead_letter``, ``out.done`` ….
    """

    def __new__(cls, good: beam.PCollection, dead_letter: beam.PCollection, **extra: beam.PCollection):
        out = super().__new__(cls, (good, dead_letter, *extra.values()))
        out._fields = ("good", "dead_letter", *extra)
        out.__dict__.update(zip(out._fields, out, strict=True))
        return out

    def __repr__(self) -> str:
        return f"StageOutputs({', '.join(self._fields)})"


class Stage(beam.PTransform):
    """Base of a stage's PTransform: :meth:`apply_fn` runs a :class:`StageDoFn` with the stage's outputs."""

    def apply_fn(
        self,
        pcoll: beam.PCollection,
        label: str,
        fn: StageDoFn,
        *extra: str,
        resource_hints: dict[str, str] | None = None,
        **side_inputs,
    ) -> StageOutputs:
        """``pcoll | label >> ParDo(fn, **side_inputs)`` with outputs ``good``, ``dead_letter`` and ``extra`` tags."""
        par_do = beam.ParDo(fn, **side_inputs)
        if resource_hints:
            par_do = par_do.with_resource_hints(**resource_hints)
        out = pcoll | label >> par_do.with_outputs(DEAD_LETTER, *extra, main="good")
        return StageOutputs(out.good, out.dead_letter, **{tag: out[tag] for tag in extra})
