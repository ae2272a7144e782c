"""The OCR labelling config: which OCR settings run and how its text elements become labels (stage ``annotate``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from screenmill.annotators.ocr_producer import RECIPE_VERSION, OcrProducer
from screenmill.schemas.images import ImageLimits

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
        drop_glyphs / glyph_min_confidence: the glyph-noise rule
        (:func:`screenmill.annotators.ocr_producer.is_glyph_noise`).
    """

    run_id: str
    config_hash: str
    annotator: str = "ocr"
    annotator_options: tuple[tuple[str, Any], ...] = ()
    instruction_template: str = 'click "{text}"'
    recipe: str = "ocr-text-click"
    recipe_version: str = RECIPE_VERSION
    limits: ImageLimits = ImageLimits()
    max_batch_size: int = 8
    min_element_chars: int = 1
    drop_glyphs: bool = True
    glyph_min_confidence: float = 0.9

    def __post_init__(self):
        if not self.run_id or not self.config_hash:
            raise ValueError("AnnotateConfig: run_id and config_hash must be set")
        if self.annotator not in ANNOTATORS:
            raise ValueError(f"AnnotateConfig.annotator {self.annotator!r} is not one of {ANNOTATORS}")
        if "{text}" not in self.instruction_template:
            raise ValueError("AnnotateConfig.instruction_template must contain '{text}'")
        if self.max_batch_size <= 0 or self.min_element_chars <= 0:
            raise ValueError("AnnotateConfig: max_batch_size and min_element_chars must be > 0")
        try:  # the annotator's options, checked before any screenshot is read (not when a worker loads the model)
            self.producer().ocr_config  # noqa: B018
        except TypeError as e:
            raise ValueError(f"AnnotateConfig.annotator_options: {e}") from e

    def producer(self) -> OcrProducer:
        """The label producer of this config (unloaded: its heavy imports happen in ``load()``)."""
        return OcrProducer(
            run_id=self.run_id,
            config_hash=self.config_hash,
            annotator_options=self.annotator_options,
            instruction_template=self.instruction_template,
            recipe=self.recipe,
            recipe_version=self.recipe_version,
            min_element_chars=self.min_element_chars,
            drop_glyphs=self.drop_glyphs,
            glyph_min_confidence=self.glyph_min_confidence,
            max_batch_size=self.max_batch_size,
        )
