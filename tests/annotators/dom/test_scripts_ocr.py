"""Text in scripts the OCR models cannot read, on pages rendered by the real Chromium: reported, never a label."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image
from screenmill.annotators.dom.page import Viewport
from screenmill.annotators.outputs import Count
from screenmill.annotators.scripts import OCR_SCRIPTS, is_mixed_script, letter_scripts, unreadable_scripts
from screenmill.schemas.records import GroundingLabel

from tests.annotators.dom.test_browser import page
from tests.annotators.test_ocr_producer import _shot

LINES = ["Sign in", "登录", "로그인 하기", "Новости", "Войти в систему", "Νέα", "Sign up"]


def test_unreadable_scripts_are_counted_and_wrong_script_readings_give_no_label(host, tmp_path):
    pytest.importorskip("rapidocr_onnxruntime", reason="the OCR annotator is not installed")
    from screenmill.annotators.ocr_producer import OcrProducer

    body = "".join(f'<p style="font:20px sans-serif;margin:16px">{t}</p>' for t in LINES)
    got = host.render(page(tmp_path, "s.html", body, '<meta charset="utf-8">'), str(tmp_path), Viewport(420, 480),
                      "light", 1)  # fmt: skip
    dom_text = " ".join(e["name"] for e in got.screens[0].elements)
    assert unreadable_scripts(dom_text) == {"hangul", "cyrillic", "greek"}  # what the DOM says the page shows
    image = np.asarray(Image.open(io.BytesIO(got.screens[0].png)).convert("RGB"))
    producer = OcrProducer(run_id="r", config_hash="h")
    out = list(producer.produce(producer.load(), _shot(image.shape[1], image.shape[0]), image))
    labels = [x for x in out if isinstance(x, GroundingLabel)]
    counts = {c.name: c.n for c in out if isinstance(c, Count)}
    texts = {lb.element_text for lb in labels}
    assert {"Sign in", "登录", "Sign up"} <= texts, texts  # the scripts the models read are labelled
    for t in texts:  # no label carries a letter the models cannot read, or a word mixing alphabets
        assert set(letter_scripts(t)) <= OCR_SCRIPTS and not is_mixed_script(t), t
    assert counts.get("unread_text_lines", 0) >= 1 and counts["screenshots_unread_text"] == 1  # the Korean line
    assert counts.get("wrong_script_readings", 0) >= 1 and counts["screenshots_wrong_script"] == 1  # "HOBOCTИ"
