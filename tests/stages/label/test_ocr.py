"""The OCR labelling config (:mod:`screenmill.stages.label.ocr`): the producer's settings, defined once."""

from __future__ import annotations

import dataclasses

import pytest
from screenmill.annotators.ocr_producer import OcrLabelSettings, OcrProducer
from screenmill.stages.label.ocr import AnnotateConfig


def test_the_config_is_the_producers_settings_plus_what_the_stage_needs():
    own = {f.name for f in dataclasses.fields(AnnotateConfig)} - {f.name for f in dataclasses.fields(OcrLabelSettings)}
    assert own == {"annotator", "limits"}
    cfg = AnnotateConfig(run_id="r", config_hash="h", instruction_template="tap {text}", min_element_chars=2)
    producer = cfg.producer()
    assert isinstance(producer, OcrProducer)
    assert producer.label_settings() == cfg.label_settings()
    assert producer.instruction_template == "tap {text}" and producer.min_element_chars == 2
    assert producer.drop_wrong_script  # the producer's own setting keeps its default


def test_bad_settings_are_refused_when_the_config_is_built():
    with pytest.raises(ValueError, match="must contain"):
        AnnotateConfig(run_id="r", config_hash="h", instruction_template="click")
    with pytest.raises(ValueError, match="annotator_options"):
        AnnotateConfig(run_id="r", config_hash="h", annotator_options=(("no_such_option", 1),))
    with pytest.raises(ValueError, match="run_id and config_hash"):
        AnnotateConfig(run_id="", config_hash="h")
