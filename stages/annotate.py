"""``AnnotateScreenshots``: distinct screenshots → grounding labels from a CPU annotator (OCR), + dead letters.

Each distinct image (by content id) is annotated once, however many times it occurs (repeated episode frames).
The annotator is created once per worker process (``apache_beam.utils.shared``) in ``setup()`` and fed batches
(``BatchElements``). Pixels are re-read from the source URI and checked against the content hash, so images never
travel through the pipeline.

Reason codes: ``unreadable``, ``changed_during_run`` (the bytes no longer match the hash), any
:mod:`schemas.images` reason (pixels that do not decode), ``annotator_failure``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import apache_beam as beam
import numpy as np
from apache_beam.utils import shared

from schemas.images import ImageLimits, ImageRejected
from schemas.labels import LabelBuilder, LabelProvenance
from schemas.records import GroundingLabel, Screenshot, first_occurrence
from schemas.verified import read_screenshot
from stages.common import DEAD_LETTER, StageCounters, StageOutputs, dead_letter

STAGE = "annotate"
ANNOTATORS = ("ocr",)


@dataclasses.dataclass(frozen=True)
class AnnotateConfig:
    """Which annotator runs and how its answers become labels.

    Attributes:
        run_id: the run's id.
        config_hash: hash of everything that determines the output (stamped on every label).
        annotator: ``ocr`` (the CPU default).
        annotator_options: keyword arguments for the annotator's config (e.g. OCR thresholds).
        instruction_template: how an element's text becomes the instruction.
        recipe: recipe name recorded on each label; ``recipe_version`` its version.
        limits: image limits used when the pixels are decoded.
        max_batch_size: upper bound of a batch handed to the annotator.
        min_element_chars: elements with less visible text than this are skipped (counted, not labelled).
    """

    run_id: str
    config_hash: str
    annotator: str = "ocr"
    annotator_options: tuple[tuple[str, Any], ...] = ()
    instruction_template: str = 'click "{text}"'
    recipe: str = "ocr-text-click"
    recipe_version: str = "1"
    limits: ImageLimits = ImageLimits()
    max_batch_size: int = 8
    min_element_chars: int = 1

    def __post_init__(self):
        if not self.run_id or not self.config_hash:
            raise ValueError("AnnotateConfig: run_id and config_hash must be set")
        if self.annotator not in ANNOTATORS:
            raise ValueError(f"AnnotateConfig.annotator {self.annotator!r} is not one of {ANNOTATORS}")
        if "{text}" not in self.instruction_template:
            raise ValueError("AnnotateConfig.instruction_template must contain '{text}'")
        if self.max_batch_size <= 0 or self.min_element_chars <= 0:
            raise ValueError("AnnotateConfig: max_batch_size and min_element_chars must be > 0")

    def build_annotator(self):
        """A fresh, unloaded annotator for this config (its heavy imports happen in ``load()``)."""
        from annotators.ocr import OcrAnnotator, OcrConfig

        return OcrAnnotator(OcrConfig(**dict(self.annotator_options)))


def elements_to_labels(shot: Screenshot, elements, annotator, config: AnnotateConfig) -> list[GroundingLabel]:
    """Turn OCR text elements into grounding labels in original pixels, boxes clamped to the image.

    Label ids are stable: identical instructions on one image are told apart by their reading order.
    """
    w, h = shot.width, shot.height
    ordered = sorted(elements, key=lambda e: (round(e.box[1]), round(e.box[0]), e.text))
    provenance = LabelProvenance(
        annotator.NAME, annotator.VERSION, config.recipe, config.recipe_version, config.config_hash, config.run_id
    )
    build = LabelBuilder(shot, provenance, "pixel")
    labels = []
    for el in ordered:
        text = " ".join(el.text.split())
        if len(text) < config.min_element_chars:
            continue
        x0, y0, x1, y1 = (min(max(v, 0.0), lim) for v, lim in zip(el.box, (w, h, w, h), strict=True))
        if x1 <= x0 or y1 <= y0:
            continue
        px = min(max(el.point[0], x0), x1)
        py = min(max(el.point[1], y0), y1)
        instruction = config.instruction_template.format(text=text)
        labels.append(
            build.add(
                instruction,
                (x0, y0, x1, y1),
                (px, py),
                element_text=text,
                role="text",
                native_box=el.box,
                native_point=el.point,
                confidence=el.confidence,
            )
        )
    return labels


class _Holder:
    """A weak-referenceable box for the shared per-process annotator."""

    def __init__(self, annotator):
        self.annotator = annotator


class _Annotate(beam.DoFn):
    def __init__(self, config: AnnotateConfig, shared_handle: shared.Shared):
        self._config = config
        self._shared = shared_handle

    def setup(self):
        self._counters = StageCounters(STAGE)

        def load():
            annotator = self._config.build_annotator()
            annotator.load()
            return _Holder(annotator)

        self._holder = self._shared.acquire(load, tag=repr(self._config.annotator_options) + self._config.annotator)

    def process(self, batch: list[Screenshot]):
        c = self._counters
        annotator = self._holder.annotator
        run_id = self._config.run_id
        for shot in batch:
            c.total.inc()
            uri = shot.source_uri
            try:
                image = np.asarray(read_screenshot(shot, self._config.limits))
            except ImageRejected as e:
                yield dead_letter(c, uri, e.reason, e.message, uri, run_id)
                continue
            except Exception as e:  # noqa: BLE001 - unreadable input is this item's failure only
                yield dead_letter(c, uri, "unreadable", f"{type(e).__name__}: {e}", uri, run_id)
                continue
            try:
                elements = annotator.annotate(image)
            except Exception as e:  # noqa: BLE001 - the annotator failing on one image must not end the run
                yield dead_letter(c, uri, "annotator_failure", f"{type(e).__name__}: {e}", uri, run_id)
                continue
            c.forwarded.inc()
            yield from elements_to_labels(shot, elements, annotator, self._config)


class AnnotateScreenshots(beam.PTransform):
    """Screenshots (with repeats) → :class:`GroundingLabel` records + dead letters (stage ``annotate``).

    Args:
        config: the annotator and how its answers become labels.
        resource_hints: Beam resource hints (``min_ram``, ``accelerator`` …) for the annotating ParDo only: the
            grouping and batching around it keep the pipeline's defaults.
    """

    def __init__(self, config: AnnotateConfig, resource_hints: dict[str, str] | None = None):
        super().__init__()
        self._config = config
        self._hints = dict(resource_hints or {})

    def expand(self, shots):
        annotate = beam.ParDo(_Annotate(self._config, shared.Shared()))
        if self._hints:
            annotate = annotate.with_resource_hints(**self._hints)
        out = (
            shots
            | "ByContent" >> beam.Map(lambda s: (s.screenshot_id, s))
            | "OnePerImage" >> beam.CombinePerKey(first_occurrence)
            | "Values" >> beam.Values()
            | "Spread" >> beam.Reshuffle()
            | "Batch" >> beam.BatchElements(min_batch_size=1, max_batch_size=self._config.max_batch_size)
            | "Annotate" >> annotate.with_outputs(DEAD_LETTER, main="good")
        )
        return StageOutputs(out.good, out.dead_letter)
