"""Scripts of text and the OCR models' coverage (:mod:`screenmill.annotators.scripts`), and how eval reports them."""

from __future__ import annotations

import pytest
from screenmill.annotators.evaluate.matching import Prediction, evaluate
from screenmill.annotators.evaluate.reports import format_table, format_unreadable, to_dict, unreadable_by_script
from screenmill.annotators.evaluate.truth import TruthRecord
from screenmill.annotators.scripts import (
    OCR_SCRIPTS,
    is_mixed_script,
    is_wrong_script_reading,
    letter_scripts,
    script_of,
    unreadable_scripts,
)


@pytest.mark.parametrize(
    "ch, want",
    [("a", "latin"), ("é", "latin"), ("Ａ", "latin"), ("И", "cyrillic"), ("α", "greek"), ("ب", "arabic"),
     ("ש", "hebrew"), ("登", "han"), ("の", "kana"), ("カ", "kana"), ("ｶ", "kana"), ("한", "hangul"), ("1", None),
     (" ", None), ("%", None)],
)  # fmt: skip
def test_script_of_each_letter(ch, want):
    assert script_of(ch) == want


def test_letter_counts_and_unreadable_scripts():
    assert letter_scripts("Sign in 登录 2025!") == {"latin": 6, "han": 2}
    assert letter_scripts("5µm") == {"greek": 1, "latin": 1}  # NFKC: the micro sign is Greek mu
    assert unreadable_scripts("Sign in 登录") == set()
    assert unreadable_scripts("Войти / Login / تسجيل") == {"cyrillic", "arabic"}
    assert unreadable_scripts("ようこそ 東京") == {"kana"}


@pytest.mark.parametrize(
    "text, mixed",
    [
        ("HOBOCTИ", True),  # "Новости" read by the Chinese + English models (measured)
        ("NEα", True),  # "Νέα"
        ("Kα入αθt", True),  # "Καλάθι"
        ("Kop3UHa", False),  # "Корзина": a pure look-alike reading, not detectable from the text
        ("Python教程", False),  # Chinese UIs write Latin into Han text without spaces
        ("5G手机 Windows10 C++", False),
        ("Crème brûlée", False),
        ("ようこそ東京", False),  # kana and kanji are one writing system
    ],
)
def test_mixed_script_words_are_wrong_script_readings(text, mixed):
    assert is_mixed_script(text) is mixed
    assert is_wrong_script_reading(text) is (mixed or bool(unreadable_scripts(text)))


def test_the_shipped_recogniser_dictionary_covers_only_latin_and_han():
    """What OCR_SCRIPTS claims, checked on the model's own output dictionary (its ONNX metadata)."""
    pytest.importorskip("rapidocr_onnxruntime", reason="the OCR annotator is not installed")
    import importlib.resources

    import onnxruntime as ort

    model = importlib.resources.files("rapidocr_onnxruntime") / "models" / "ch_PP-OCRv4_rec_infer.onnx"
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    chars = set(session.get_modelmeta().custom_metadata_map["character"].splitlines())
    by_script = letter_scripts("".join(c for c in chars if len(c) == 1))
    assert set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") <= chars
    assert by_script["han"] > 6000
    for script in ("arabic", "hebrew", "hangul", "thai", "devanagari"):
        assert by_script.get(script, 0) <= 2, (script, by_script.get(script))  # 2 Hangul jamo, no syllable
    for script in ("cyrillic", "greek", "kana"):
        assert by_script[script] <= 10  # a few letters: not an alphabet (Cyrillic has 66, Greek 48, kana ~170)
    assert not any("\uac00" <= c <= "\ud7a3" for c in chars)  # no Hangul syllable at all
    assert {s for s, n in by_script.items() if n >= 26} == OCR_SCRIPTS


def test_evaluation_reports_truth_in_scripts_the_models_cannot_read():
    truth = [
        TruthRecord("a", "Sign in", (0, 0, 100, 20)),
        TruthRecord("a", "تسجيل الدخول", (0, 40, 100, 60)),
        TruthRecord("a", "Войти", (0, 80, 100, 100)),
        TruthRecord("b", "Новости", (0, 0, 100, 20)),
        TruthRecord("c", "Home", (0, 0, 100, 20)),
    ]
    report = evaluate(truth, [Prediction("a", "Sign in", (50, 10))])
    assert unreadable_by_script(report) == {
        "arabic": {"elements": 1, "screenshots": 1},
        "cyrillic": {"elements": 2, "screenshots": 2},
    }
    assert [s.unreadable_scripts for s in report.images] == [(("arabic", 1), ("cyrillic", 1)), (("cyrillic", 1),), ()]
    assert "arabic 1 elements on 1 screenshots; cyrillic 2 elements on 2 screenshots" in format_table(report)
    assert to_dict(report)["unreadable_scripts"]["cyrillic"] == {"elements": 2, "screenshots": 2}
    assert format_unreadable(evaluate(truth[4:], [])).endswith(": none")
