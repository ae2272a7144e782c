"""smart_resize against transformers' own Qwen2-VL implementation, and quantize's rounding, clamp and round trip."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from screenmill.schemas.coords import point_from_pixels, point_to_pixels, quantize, smart_resize

SIZES = [(768, 1024), (1080, 1920), (2160, 3840), (1688, 780), (30, 30), (12, 2000), (5000, 7000), (844, 390)]


@pytest.mark.parametrize("height,width", SIZES)
@pytest.mark.parametrize("pixels", [(56 * 56, 28 * 28 * 1280), (3136, 12845056), (100 * 28 * 28, 16384 * 28 * 28)])
def test_smart_resize_is_the_processors_formula(height, width, pixels):
    qwen = pytest.importorskip("transformers.models.qwen2_vl.image_processing_pil_qwen2_vl")
    lo, hi = pixels
    expected = qwen.smart_resize(height, width, factor=28, min_pixels=lo, max_pixels=hi)
    got = smart_resize(height, width, 28, lo, hi)
    assert got == tuple(expected)
    assert got[0] % 28 == 0 and got[1] % 28 == 0 and lo <= got[0] * got[1] <= hi


def test_smart_resize_refuses_what_the_processor_refuses():
    with pytest.raises(ValueError, match="aspect ratio"):
        smart_resize(10, 2500)
    with pytest.raises(ValueError, match="min_pixels"):
        smart_resize(100, 100, 28, 1000, 10)
    with pytest.raises(ValueError):
        smart_resize(0, 100)


def test_quantize_rounds_halves_up_and_clamps():
    assert quantize((0.5, 1.5, 2.4999, -3.0), 0, (1000, 1000)) == (1.0, 2.0, 2.0, 0.0)
    assert quantize((1000.6, 12.345), 2, (1000, 20)) == (1000.0, 12.35)
    assert quantize((0.1234, 0.9999), 3, (1, 1)) == (0.123, 1.0)
    with pytest.raises(ValueError):
        quantize((1.0,), -1, (1,))


@settings(max_examples=300, deadline=None)
@given(
    w=st.integers(28, 4000),
    h=st.integers(28, 4000),
    fx=st.floats(0, 1),
    fy=st.floats(0, 1),
    system=st.sampled_from(["norm_1000", "norm_1", "pixel_resized", "pixel"]),
    decimals=st.integers(0, 3),
)
def test_quantized_points_convert_back_within_half_a_unit(w, h, fx, fy, system, decimals):
    """pixels → native → quantize → pixels moves a point by at most half a rounding step of the native grid."""
    ref = smart_resize(h, w)[::-1] if system == "pixel_resized" else None
    scale = {"norm_1000": (w / 1000, h / 1000), "norm_1": (w, h), "pixel": (1, 1)}.get(system)
    scale = scale or (w / ref[0], h / ref[1])
    limits = {"norm_1000": (1000, 1000), "norm_1": (1, 1)}.get(system) or (ref or (w, h))
    point = (fx * w, fy * h)
    native = quantize(point_from_pixels(point, system, w, h, ref), decimals, limits)
    back = point_to_pixels(native, system, w, h, ref)
    step = 10.0**-decimals
    for p, b, s, hi in zip(point, back, scale, limits, strict=True):
        assert abs(p - b) <= step / 2 * s + 1e-9 * max(1.0, hi * s)
