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
        super().__post_init__()  # the label settings' checks (OcrLabelSettings)
        if self.annotator not in ANNOTATORS:
            raise ValueError(f"AnnotateConfig.annotator {self.annotator!r} is not one of {ANNOTATORS}")

    def producer(self) -> OcrProducer:
        """The label producer of this config (unloaded: its heavy imports happen in ``load()``)."""
        return OcrProducer(**self.label_settings())
