"""``LabelScreenshots``: tiled screenshots → grounding labels / action steps from any label producer, + dead letters
and retryable :class:`screenmill.stages.done.LabelFailure` records.

The producer (:class:`screenmill.annotators.producer.LabelProducer`, from ``config.producer()``) decides what the stage
is called (its ``stage``: ``annotate`` for OCR, ``infer`` for vLLM: dead letters ``_dead_letter/<stage>``, counters
``screenmill.<stage>``) and how its work is cut:

* ``expansion = "screenshot"`` (OCR, DOM, test producers): each distinct image (by content id) is labelled once,
  however many times it occurs (repeated episode frames), in batches (``BatchElements``). The producer's model is
  loaded once per worker process (:func:`screenmill.annotators.producer.per_process`). Pixels are re-read from the
  source URI and checked against the content hash (:func:`screenmill.schemas.verified.read_screenshot`), so images
  never travel through the pipeline. Reason codes: ``unreadable``, ``changed_during_run``, any
  :mod:`screenmill.schemas.images` reason, ``annotator_failure`` (the producer raised), and whatever
  :class:`screenmill.annotators.producer.Failed` the producer yields.
* ``expansion = "requests"`` (vLLM): work units per recipe kind, fanned out to a continuously fed engine
  (:mod:`screenmill.stages.label.vlm`, :mod:`screenmill.stages.label.units`).

Outputs (:class:`screenmill.stages.base.StageOutputs`): ``good`` (labels), ``dead_letter``, ``failures`` (a
:class:`screenmill.stages.done.LabelFailure` per failure whose reason is :data:`screenmill.stages.done.RETRYABLE`:
``MarkDone`` holds the file's occurrences back) and, for producers that make them (``makes_actions``), ``actions``.
"""

from __future__ import annotations

from typing import Any, Protocol

import apache_beam as beam
import numpy as np
from screenmill.annotators.producer import Count, Failed, LabelProducer, per_process
from screenmill.schemas.images import ImageLimits, ImageRejected
from screenmill.schemas.records import ActionStep, Screenshot, first_occurrence
from screenmill.schemas.verified import read_screenshot
from screenmill.stages.base import Failure, Stage, StageDoFn, StageOutputs
from screenmill.stages.done import RETRYABLE, LabelFailure

ACTIONS = "actions"
FAILURES = "failures"


class LabelConfig(Protocol):
    """What the stage needs of a labelling config (:class:`screenmill.stages.label.ocr.AnnotateConfig`,
    :class:`screenmill.stages.label.vlm.VlmConfig`, a test's)."""

    run_id: str
    limits: ImageLimits

    def producer(self) -> LabelProducer: ...


def label_failure(shot: Screenshot, failure: Failure) -> list[beam.pvalue.TaggedOutput]:
    """The ``failures`` output of a failure on ``shot`` (none unless its reason is retryable)."""
    if failure.reason not in RETRYABLE:
        return []
    return [beam.pvalue.TaggedOutput(FAILURES, LabelFailure(shot.screenshot_id, failure.payload_ref, failure.reason))]


class _Annotate(StageDoFn):
    """Batches of distinct screenshots → the producer's labels (main), action steps, failures, dead letters."""

    count_inputs = False
    count_forwarded = False

    def __init__(self, producer: LabelProducer, limits: ImageLimits, run_id: str):
        self.stage = producer.stage
        super().__init__(run_id)
        self._producer = producer
        self._limits = limits

    def start(self):
        producer = self._producer
        self._model = per_process(producer.stage, producer.process_key(), producer.load)

    def handle(self, batch: list[Screenshot]):
        c = self.counters
        for shot in batch:
            c.total.inc()
            uri = shot.source_uri
            try:
                pixels = np.asarray(read_screenshot(shot, self._limits))
            except ImageRejected as e:
                yield from self._failed(shot, Failure(uri, e.reason, e.message, uri))
                continue
            except Exception as e:  # noqa: BLE001 - unreadable input is this item's failure only
                yield from self._failed(shot, Failure(uri, "unreadable", f"{type(e).__name__}: {e}", uri))
                continue
            try:
                produced = list(self._producer.produce(self._model, shot, pixels))
            except Exception as e:  # noqa: BLE001 - the producer failing on one image must not end the run
                yield from self._failed(shot, Failure(uri, "annotator_failure", f"{type(e).__name__}: {e}", uri))
                continue
            failed = next((p for p in produced if isinstance(p, Failed)), None)
            if failed is not None:
                yield from self._failed(shot, Failure(uri, failed.reason, failed.error, failed.payload_ref or uri))
                continue
            c.forwarded.inc()
            for record in produced:
                if isinstance(record, Count):
                    c.counter(record.name).inc(record.n)
                    continue
                yield beam.pvalue.TaggedOutput(ACTIONS, record) if isinstance(record, ActionStep) else record

    def _failed(self, shot: Screenshot, failure: Failure):
        yield from label_failure(shot, failure)
        yield failure


class LabelScreenshots(Stage):
    """Screenshots (with repeats) → labels (``good``), ``dead_letter``, ``failures`` (+ ``actions``), from the
    producer of ``config`` (see the module docstring).

    Args:
        config: a labelling config (:class:`LabelConfig`).
        resource_hints: Beam resource hints (``min_ram``, ``accelerator`` …) for the producing ParDo only: the
            grouping and batching around it keep the pipeline's defaults.
        duplicates: ingest's ``aliases`` output, for producers with request expansion (vLLM localize recipes).
        feeding: the vLLM engine's feeding policy (``expansion = "requests"`` only; None: its default).
        skipped: ingest's ``skipped`` output (files skipped as done), for vLLM localize recipes: the instructions
            about them are not labelled again, nor dead-lettered.
    """

    def __init__(
        self,
        config: LabelConfig,
        resource_hints: dict[str, str] | None = None,
        duplicates: beam.PCollection | None = None,
        feeding: Any = None,
        skipped: beam.PCollection | None = None,
    ):
        super().__init__()
        self._config = config
        self._producer = config.producer()
        self._hints = dict(resource_hints or {})
        self._duplicates = duplicates
        self._feeding = feeding
        self._skipped = skipped

    def expand(self, shots):
        producer = self._producer
        if producer.expansion == "requests":
            from screenmill.stages.label.vlm import expand_requests

            return expand_requests(
                shots, self._config, self._hints, self._duplicates, self._feeding, skipped=self._skipped
            )
        batches = (
            shots
            | "ByContent" >> beam.Map(lambda s: (s.screenshot_id, s))
            | "OnePerImage" >> beam.CombinePerKey(first_occurrence)
            | "Values" >> beam.Values()
            | "Spread" >> beam.Reshuffle()
            | "Batch" >> beam.BatchElements(min_batch_size=1, max_batch_size=producer.max_batch_size)
        )
        fn = _Annotate(producer, self._config.limits, self._config.run_id)
        out = self.apply_fn(batches, "Annotate", fn, FAILURES, ACTIONS, resource_hints=self._hints)
        extra = {ACTIONS: out.actions} if producer.makes_actions else {}
        return StageOutputs(out.good, out.dead_letter, failures=out.failures, **extra)
