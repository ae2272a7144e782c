"""The model stage's accounting in Beam Metrics: its engine's :class:`screenmill.annotators.vllm.accounting.Ledger`
reported at every bundle's end, and read back from a finished pipeline into the run manifest's ``accounting`` section.

Namespace ``screenmill.accounting.<stage>``: a counter per sum of :data:`screenmill.annotators.vllm.accounting.SUMS`, a
distribution per maximum or minimum (``MAXES``, ``MINS`` there; one update per bundle, of which the manifest reads
the max or the min) and the string set ``engines`` (the engines that reported). They are Beam Metrics, so every
runner sums them across workers (:class:`screenmill.stages.runners.dask.DaskRunner` among them).
"""

from __future__ import annotations

from collections import defaultdict

from apache_beam.metrics import Metrics
from apache_beam.metrics.metric import MetricResults
from screenmill.annotators.vllm.accounting import MAXES, MINS, SUMS, summarize
from screenmill.stages.base import METRICS_PREFIX

ACCOUNTING_PREFIX = METRICS_PREFIX + "accounting."
ENGINES = "engines"


class AccountingMetrics:
    """The Beam metrics of one stage's accounting; create inside a DoFn, :meth:`report` on its thread."""

    def __init__(self, stage: str):
        namespace = ACCOUNTING_PREFIX + stage
        self._sums = {name: Metrics.counter(namespace, name) for name in SUMS}
        self._extremes = {name: Metrics.distribution(namespace, name) for name in (*MAXES, *MINS)}
        self._engines = Metrics.string_set(namespace, ENGINES)

    def report(self, raw: dict[str, int], engine_id: str) -> None:
        """Add a :meth:`Ledger.take` of the engine ``engine_id``."""
        if not any(raw.values()):
            return
        for name, counter in self._sums.items():
            if raw.get(name):
                counter.inc(raw[name])
        for name, distribution in self._extremes.items():
            if name in raw:
                distribution.update(raw[name])
        self._engines.add(engine_id)


def read_accounting(result, run_wall_s: float | None = None) -> dict[str, dict]:
    """``{stage: section}`` (:func:`screenmill.annotators.vllm.accounting.summarize`) from a finished pipeline's
    metrics, for every stage that reported some."""
    query = result.metrics().query()
    raw: dict[str, dict] = defaultdict(dict)
    engines: dict[str, set] = defaultdict(set)
    for kind in (MetricResults.COUNTERS, MetricResults.DISTRIBUTIONS, MetricResults.STRINGSETS):
        for metric in query.get(kind, []):
            ns, name = metric.key.metric.namespace, metric.key.metric.name
            if not ns.startswith(ACCOUNTING_PREFIX):
                continue
            stage = ns[len(ACCOUNTING_PREFIX) :]
            value = metric.committed if metric.committed is not None else metric.attempted
            if kind == MetricResults.COUNTERS:
                raw[stage][name] = raw[stage].get(name, 0) + int(value or 0)
            elif kind == MetricResults.STRINGSETS:
                engines[stage] |= set(value or ())
            elif value is not None and value.count:  # a distribution: its max (or min), over every step
                pick, extreme = (max, value.max) if name in MAXES else (min, value.min)
                raw[stage][name] = pick(raw[stage][name], extreme) if name in raw[stage] else extreme
    out = {}
    for stage, totals in raw.items():
        section = summarize(totals, len(engines[stage]), run_wall_s)
        if section is not None:
            out[stage] = section
    return out
