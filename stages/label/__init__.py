"""The labelling stage (:class:`screenmill.stages.label.stage.LabelScreenshots`) and what it runs: the OCR config
(:mod:`screenmill.stages.label.ocr`), the vLLM request expansion and model DoFn (:mod:`screenmill.stages.label.vlm`)
and its work-unit builders (:mod:`screenmill.stages.label.units`)."""

from screenmill.stages.label.stage import LabelScreenshots

__all__ = ["LabelScreenshots"]
