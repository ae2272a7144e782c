"""The labelling stage (:class:`screenmill.stages.label.stage.LabelScreenshots`: it expands the label transform of
whatever producer its config names) and the labelling configs: OCR (:mod:`screenmill.stages.label.ocr`), vLLM
(:mod:`screenmill.stages.label.vlm`); the vLLM stage's time accounting (:mod:`screenmill.stages.label.accounting`).
The producers and their transforms are in :mod:`screenmill.annotators`."""

from screenmill.stages.label.stage import LabelScreenshots

__all__ = ["LabelScreenshots"]
