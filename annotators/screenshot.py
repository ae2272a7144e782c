"""The label transform of screenshot-at-a-time producers (:class:`AnnotateScreenshots`, from
:meth:`screenmill.annotators.producer.ScreenshotProducer.label_transform`: OCR, DOM, test producers).

Each distinct image (by content id) is labelled once, however many times it occurs (repeated episode frames), in
batches (``BatchElements``, up to the producer's ``max_batch_size``). The producer's model is loaded once per worker
process (:func:`screenmill.annotators.process.per_process`). Pixels are re-read from the source URI and checked against
the content hash (:func:`screenmill.schemas.verified.read_screenshot`), so images never travel through the pipeline.
Reason codes: ``unreadable``, ``changed_during_run``, any :mod:`screenmill.schemas.images` reason,
``annotator_failure`` (the producer raised), and whatever :class:`screenmill.annotators.outputs.Failed` the producer
yields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import apache_beam as beam
import numpy as np
from screenmill.annotators.outputs import ACTIONS, FAILURES, Count, Failed
from screenmill.annotators.process import per_process
from screenmill.schemas.images import ImageLimits, ImageRejected
from screenmill.schemas.records import ActionStep, Screenshot, first_occurrence
from screenmill.schemas.verified import read_screenshot
from screenmill.stages.base import Failure, Stage, StageDoFn, StageOutputs
from screenmill.stages.done import label_failure

if TYPE_CHECKING:
    from screenmill.annotators.producer import ScreenshotProducer


class _Annotate(StageDoFn):
    """Batches of distinct screenshots → the producer's labels (main), action steps, failures, dead letters."""

    count_inputs = False
    count_forwarded = False

    def __init__(self, producer: ScreenshotProducer, limits: ImageLimits, run_id: str):
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


class AnnotateScreenshots(Stage):
    """Screenshots (with repeats) → a screenshot producer's labels (``good``), ``dead_letter``, ``failures`` (+
    ``actions`` if it ``makes_actions``); see the module docstring.

    Steps: ``ByContent``, ``OnePerImage``, ``Values``, ``Spread`` (a reshuffle), ``Batch``, ``Annotate`` (the
    producer's ParDo, the only one with the resource hints).

    Args:
        producer: the producer.
        limits: image limits used when pixels are decoded.
        run_id: the run's id (on dead letters).
        resource_hints: Beam resource hints for the ``Annotate`` ParDo only.
    """

    def __init__(
        self,
        producer: ScreenshotProducer,
        limits: ImageLimits,
        run_id: str,
        resource_hints: dict[str, str] | None = None,
    ):
        super().__init__()
        self._producer = producer
        self._limits = limits
        self._run_id = run_id
        self._hints = dict(resource_hints or {})

    def expand(self, shots):
        producer = self._producer
        batches = (
            shots
            | "ByContent" >> beam.Map(lambda s: (s.screenshot_id, s))
            | "OnePerImage" >> beam.CombinePerKey(first_occurrence)
            | "Values" >> beam.Values()
            | "Spread" >> beam.Reshuffle()
            | "Batch" >> beam.BatchElements(min_batch_size=1, max_batch_size=producer.max_batch_size)
        )
        fn = _Annotate(producer, self._limits, self._run_id)
        out = self.apply_fn(batches, "Annotate", fn, FAILURES, ACTIONS, resource_hints=self._hints)
        extra = {ACTIONS: out.actions} if producer.makes_actions else {}
        return StageOutputs(out.good, out.dead_letter, failures=out.failures, **extra)
