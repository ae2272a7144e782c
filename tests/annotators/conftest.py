"""Fixtures the annotator tests share."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def annotator():
    """A loaded OCR annotator with the default config, one per test module (rapidocr-onnxruntime is installed by
    infra/setup.sh; a load() that fails is a failure)."""
    pytest.importorskip("rapidocr_onnxruntime")
    from screenmill.annotators.ocr import OcrAnnotator

    ann = OcrAnnotator()
    ann.load()
    return ann
