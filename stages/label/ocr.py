"""The OCR labelling config: which OCR settings run and how its text elements become labels (stage ``annotate``)."""

from __future__ import annotations

import dataclasses

from screenmill.annotators.ocr_producer import OcrLabelSettings, OcrProducer
from screenmill.schemas.images import ImageLimits

ANNOTATORS = ("ocr",)


@dataclasses.dataclass(frozen=True, kw_only=True)
class AnnotateConfig(OcrLabelSettings):
    """Which annotator runs and how its answers become labels.

    The label settings (``run_id``, ``config_hash``, ``annotator_options``, ``instruction_template``, ``recipe``,
    ``recipe_version``, ``max_batch_size``, ``min_element_chars``, ``drop_glyphs``, ``glyph_min_confidence``) are
    :class:`screenmill.annotators.ocr_producer.OcrLabelSettings`' (one definition, the producer's); ``config_hash`` is
    of all these fields (:func:`screenmill.schemas.keys.config_hash`).

    Attributes:
        annotator: ``ocr`` (the CPU default).
        limits: image limits used when the pixels are decoded.
    """

    annotator: str = "ocr"
    limits: ImageLimits = ImageLimits()

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
        return OcrProducer(**self.label_settings())
