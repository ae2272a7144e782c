"""The packaged OCR grouping model at run time: its trees as plain arrays, its version as a checked config field."""

from __future__ import annotations

import numpy as np
import pytest
from screenmill.annotators import ocr_model
from screenmill.annotators.ocr_config import OcrConfig


def test_the_tree_model_follows_its_nodes():
    spec = {
        "offset": 0.5,
        "rate": 0.1,
        "trees": [{"left": [1, -1, -1], "right": [2, -1, -1], "feature": [0, -2, -2], "threshold": [0.5, 0, 0],
                   "value": [0.0, -2.0, 3.0]}],
    }  # fmt: skip
    raw = ocr_model.TreeModel(spec).raw(np.array([[0.0], [1.0]]))
    assert raw == pytest.approx([0.5 - 0.2, 0.5 + 0.3])


def test_the_packaged_model_is_a_config_option_whose_version_is_checked():
    version = ocr_model.packaged_version()
    assert version.startswith("gb1-")
    assert OcrConfig(grouping="model", grouping_model=version).grouping == "model"
    with pytest.raises(ValueError, match="is not the packaged model"):
        OcrConfig(grouping="model", grouping_model="gb1-000000000000")
    with pytest.raises(ValueError, match="grouping must be"):
        OcrConfig(grouping="learned")
