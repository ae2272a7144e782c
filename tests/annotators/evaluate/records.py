"""Truth records and predictions the evaluation tests build by hand."""

from __future__ import annotations

from screenmill.annotators.evaluate.matching import Prediction
from screenmill.annotators.evaluate.truth import TruthRecord


def T(text, box, image="a.png"):  # noqa: N802 - short helper
    return TruthRecord(image=image, text=text, box=box)


def P(text, point, image="a.png"):  # noqa: N802
    return Prediction(image=image, text=text, point=point)
