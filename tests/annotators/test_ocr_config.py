"""The OCR's thresholds: one frozen config, checked on construction, part of the config hash, and what the rules read
(a changed threshold changes the grouping of the committed snapshot; the defaults leave it as it is)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from PIL import Image
from screenmill.annotators.ocr import group_elements
from screenmill.annotators.ocr_config import OcrConfig
from screenmill.annotators.ocr_snapshot import DEFAULT_SNAPSHOT, read_snapshot
from screenmill.annotators.ocr_thresholds import _SHARES, OcrThresholds, active, using
from screenmill.schemas.keys import config_hash
from screenmill.stages.label.ocr import AnnotateConfig


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_line_gap", 0.0),
        ("min_line_gap", 0.1),
        ("underline_cover", 1.5),
        ("pitch_pairs", 2.5),
        ("dot_count", True),
    ],
)
def test_a_threshold_out_of_its_range_is_refused_by_name(field, value):
    with pytest.raises(ValueError, match=f"OcrThresholds.{field}"):
        OcrThresholds(**{field: value})


def test_every_threshold_is_part_of_the_config_hash_and_not_an_annotator_option():
    base = AnnotateConfig(run_id="r", config_hash="pending")
    for f in dataclasses.fields(OcrThresholds)[::7]:
        v = getattr(OcrThresholds(), f.name)
        other = v + 2 if isinstance(v, int) else v / 2 if f.name in _SHARES else v * 2  # still in its range
        changed = dataclasses.replace(OcrThresholds(), **{f.name: other})
        assert config_hash(dataclasses.replace(base, thresholds=changed)) != config_hash(base), f.name
    assert base.producer().ocr_config.thresholds == OcrThresholds()
    with pytest.raises(ValueError, match="thresholds"):
        AnnotateConfig(run_id="r", config_hash="x", annotator_options=(("thresholds", OcrThresholds()),))


def test_the_grouping_reads_the_configs_thresholds():
    _, shots = read_snapshot(DEFAULT_SNAPSHOT)

    def grouped(config):
        return sorted((e.text, e.box) for e in group_elements(pixels, list(shot.pieces), config))

    shot = next(s for s in shots if s.id.startswith("e3bbdbdf"))  # a 1280x800 page whose lines join
    pixels = np.asarray(Image.open(shot.image).convert("RGB"))

    default = grouped(OcrConfig())
    tight = OcrConfig(thresholds=OcrThresholds(max_line_gap=0.01, loose_line_gap=0.02, max_piece_gap=0.01))
    assert grouped(tight) != default  # fewer lines and pieces join
    assert len(grouped(tight)) > len(default)
    assert active() == OcrThresholds()  # the call's thresholds do not outlive it
    with using(tight.thresholds):
        assert grouped(OcrConfig()) == default  # the config's own thresholds win inside any outer setting
