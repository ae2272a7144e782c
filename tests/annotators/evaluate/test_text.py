"""screenmill.annotators.evaluate.text: how texts compare (and point-in-box)."""

from __future__ import annotations

from screenmill.annotators.evaluate.matching import point_in_box
from screenmill.annotators.evaluate.text import normalize_text, text_similarity


def test_normalize_and_similarity():
    assert normalize_text("  Forgot   PASSWORD? ") == "forgot password"
    assert normalize_text("« Back") == "back"
    assert normalize_text("$1,240.00") == "1,240.00"
    assert normalize_text("...") == ""
    assert text_similarity("Sign in", "SIGN IN") == 1.0
    assert text_similarity("Settings", "Settinqs") >= 0.8  # one OCR slip
    assert text_similarity("Home", "Home Products") < 0.8  # a merged line does not count
    assert text_similarity("", "x") == 0.0
    assert point_in_box((10, 10), (10, 10, 20, 20)) and point_in_box((20, 20), (10, 10, 20, 20))
    assert not point_in_box((20.01, 15), (10, 10, 20, 20))
