"""The labelling stage (:class:`stages.label.stage.LabelScreenshots`) and what it runs: the OCR config
(:mod:`stages.label.ocr`), the vLLM request expansion and model DoFn (:mod:`stages.label.vlm`) and its work-unit
builders (:mod:`stages.label.units`)."""

from stages.label.stage import LabelScreenshots

__all__ = ["LabelScreenshots"]
