"""The page render's settings (:mod:`screenmill.annotators.dom.page`); rendering itself is tested with the browser
(``test_browser.py``)."""

from __future__ import annotations

import pytest
from screenmill.annotators.dom.page import Viewport


@pytest.mark.parametrize(
    "spec, want",
    [
        ("1280x800", Viewport(1280, 800)),
        ("390x844@3m", Viewport(390, 844, 3.0, True)),
        ("800x600@2", Viewport(800, 600, 2.0)),
    ],
)
def test_viewport_specs(spec, want):
    assert Viewport.parse(spec) == want and Viewport.parse(want.spec) == want


@pytest.mark.parametrize("spec", ["1280", "1280x800@", "10x10", "1280x800@9", "axb"])
def test_bad_viewport_specs_say_why(spec):
    with pytest.raises(ValueError, match="viewport|scale"):
        Viewport.parse(spec)
