"""The OCR label producer: :class:`annotators.ocr.OcrAnnotator` text elements → click grounding labels."""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Iterable
from typing import Any

from annotators.producer import LabelProducer
from schemas.labels import LabelBuilder, LabelProvenance
from schemas.records import GroundingLabel, Screenshot


@dataclasses.dataclass(frozen=True)
class OcrProducer(LabelProducer):
    """Text elements of a screenshot → one ``click "<text>"`` label each, in original pixels (stage ``annotate``).

    Attributes:
        run_id / config_hash: stamped on every label.
        annotator_options: keyword arguments of :class:`annotators.ocr.OcrConfig` (e.g. thresholds).
        instruction_template: how an element's text becomes the instruction (contains ``{text}``).
        recipe / recipe_version: recorded on each label.
        min_element_chars: elements with less visible text are skipped.
        max_batch_size: upper bound of a batch of screenshots handed to one DoFn call.
    """

    run_id: str
    config_hash: str
    annotator_options: tuple[tuple[str, Any], ...] = ()
    instruction_template: str = 'click "{text}"'
    recipe: str = "ocr-text-click"
    recipe_version: str = "1"
    min_element_chars: int = 1
    max_batch_size: int = 8

    stage = "annotate"
    step = "Annotate"
    expansion = "screenshot"

    @property
    def install_hint(self) -> str:
        from annotators.ocr import _INSTALL_HINT

        return _INSTALL_HINT

    @property
    def name(self) -> str:
        from annotators.ocr import OcrAnnotator

        return OcrAnnotator.NAME

    @property
    def version(self) -> str:
        from annotators.ocr import OcrAnnotator

        return OcrAnnotator.VERSION

    def process_key(self) -> Hashable:
        return ("ocr", self.annotator_options)

    def load(self):
        """A loaded :class:`annotators.ocr.OcrAnnotator` (RuntimeError with the install hint when RapidOCR is
        missing)."""
        from annotators.ocr import OcrAnnotator, OcrConfig

        annotator = OcrAnnotator(OcrConfig(**dict(self.annotator_options)))
        annotator.load()
        return annotator

    def produce(self, model, shot: Screenshot, pixels) -> Iterable[GroundingLabel]:
        return elements_to_labels(shot, model.annotate(pixels), model, self)


def elements_to_labels(shot: Screenshot, elements, annotator, config: OcrProducer) -> list[GroundingLabel]:
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
