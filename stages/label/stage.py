"""``LabelScreenshots``: tiled screenshots → grounding labels / action steps from any label producer, + dead letters
and retryable :class:`screenmill.stages.done.LabelFailure` records.

The producer (:class:`screenmill.annotators.producer.LabelProducer`, from ``config.producer()``) decides what the stage
is called (its ``stage``: ``annotate`` for OCR, ``infer`` for vLLM: dead letters ``_dead_letter/<stage>``, counters
``screenmill.<stage>``) and how its work is cut: the stage hands it what it was given
(:class:`screenmill.annotators.producer.LabelInputs`) and expands the transform it gets back
(:meth:`~screenmill.annotators.producer.LabelProducer.label_transform`), the same way for every producer. A
screenshot-at-a-time producer (OCR, DOM, test producers) gets its base's transform
(:class:`screenmill.annotators.screenshot.AnnotateScreenshots`: each distinct image labelled once, in batches); the
vLLM producer its own (:mod:`screenmill.annotators.vllm.expand`: work units per recipe kind, fanned out to a
continuously fed engine).

Outputs (:class:`screenmill.stages.base.StageOutputs`): ``good`` (labels), ``dead_letter``, ``failures`` (a
:class:`screenmill.stages.done.LabelFailure` per failure whose reason is :data:`screenmill.stages.done.RETRYABLE`:
``MarkDone`` holds the file's occurrences back) and, for producers that make them (``makes_actions``), ``actions``.
"""

from __future__ import annotations

from typing import Any, Protocol

import apache_beam as beam
from screenmill.annotators.producer import LabelInputs, LabelProducer
from screenmill.schemas.images import ImageLimits
from screenmill.stages.base import Stage


class LabelConfig(Protocol):
    """What the stage needs of a labelling config (:class:`screenmill.stages.label.ocr.AnnotateConfig`,
    :class:`screenmill.stages.label.vlm.VlmConfig`, a test's)."""

    run_id: str
    limits: ImageLimits

    def producer(self) -> LabelProducer: ...


class LabelScreenshots(Stage):
    """Screenshots (with repeats) → labels (``good``), ``dead_letter``, ``failures`` (+ ``actions``), from the
    producer of ``config`` (see the module docstring).

    Args:
        config: a labelling config (:class:`LabelConfig`).
        resource_hints: Beam resource hints (``min_ram``, ``accelerator`` …) for the producing ParDo only: the
            grouping and batching around it keep the pipeline's defaults.
        duplicates: ingest's ``aliases`` output, for producers that use it (vLLM localize recipes).
        feeding: the vLLM engine's feeding policy, for producers that use it (None: its default).
        skipped: ingest's ``skipped`` output (files skipped as done), for producers that use it (vLLM localize
            recipes: the instructions about them are not labelled again, nor dead-lettered).
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
        self._producer = config.producer()
        self._inputs = LabelInputs(config, dict(resource_hints or {}), duplicates, skipped, feeding)

    def expand(self, shots):
        # expanded here, not applied as a step of its own: its steps are this stage's (their names are stable)
        return self._producer.label_transform(self._inputs).expand(shots)
