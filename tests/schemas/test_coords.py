"""Coordinate conversions: exact round trips (float equality, not approximate), known values, errors, box helpers."""

from __future__ import annotations

import math
import random

import pytest
from screenmill.schemas.coords import (
    SYSTEMS,
    box_from_pixels,
    box_iou,
    box_to_pixels,
    clamp_box,
    point_from_pixels,
    point_in_box,
    point_to_pixels,
)

# (width, height) pairs; every width the brief names (1, 7, 1024, 1080, 2340, 3840) and odd heights
SPAN_SYSTEMS = ("xywh_pixel", "ls_percent")
SIZES = [(1, 1), (7, 13), (1024, 768), (1080, 2340), (2340, 1080), (3840, 2160)]


def ref_for(system: str, width: int, height: int) -> tuple[int, int] | None:
    """A resized frame for ``pixel_resized`` (a Qwen-like shrink with odd sides), None for the other systems."""
    return (max(1, width * 2 // 3 + 1), max(1, height * 3 // 4 + 1)) if system == "pixel_resized" else None


def native_extent(system: str, width: int, height: int) -> tuple[float, float]:
    """What 'the full image' is in a system's units."""
    ref = ref_for(system, width, height)
    return {"pixel_resized": ref, "norm_1000": (1000, 1000), "norm_1": (1, 1), "ls_percent": (100, 100)}.get(
        system, (width, height)
    )


def box_round_trip(box, system, width, height):
    ref = ref_for(system, width, height)
    native = box_from_pixels(box, system, width, height, ref)
    return native, box_to_pixels(native, system, width, height, ref)


def point_round_trip(point, system, width, height):
    ref = ref_for(system, width, height)
    native = point_from_pixels(point, system, width, height, ref)
    return native, point_to_pixels(native, system, width, height, ref)


def same(a, b) -> bool:
    """Identical floats, element by element (== plus same type, so 1 == 1.0 would not hide an int)."""
    if len(a) != len(b):
        return False
    return all(type(x) is float and type(y) is float and x == y for x, y in zip(a, b, strict=True))


# ---------------------------------------------------------------------------------------- pixels → native → pixels


@pytest.mark.parametrize("system", SYSTEMS)
@pytest.mark.parametrize("width,height", SIZES)
def test_every_integer_pixel_round_trips(system, width, height):
    ref = ref_for(system, width, height)
    for i in range(max(width, height) + 1):
        x, y = float(i % (width + 1)), float(i % (height + 1))
        box = (x, y, float(width - x), float((i * 7919) % (height + 1)))  # corners in either order
        if system == "ls_percent":  # exact for boxes with w, h >= 0 (see the module doc); xywh_pixel ints: any
            box = (min(box[0], box[2]), min(box[1], box[3]), max(box[0], box[2]), max(box[1], box[3]))
        native, back = box_round_trip(box, system, width, height)
        assert same(back, box), (box, native, back)
        assert same(box_from_pixels(back, system, width, height, ref), native)
        native, back = point_round_trip((x, y), system, width, height)
        assert same(back, (x, y)), ((x, y), native, back)


@pytest.mark.parametrize("system", SYSTEMS)
def test_short_decimal_pixels_round_trip(system):
    rng = random.Random(1)
    for width, height in SIZES:
        for _ in range(150):
            digits = rng.choice([1, 1, 2, 3, 4])
            box = tuple(round(rng.uniform(-0.1, 1.1) * side, digits) for side in (width, height, width, height))
            if system in SPAN_SYSTEMS:  # exact for 0 <= start <= end (see the module doc)
                box = tuple(abs(v) for v in box)
                box = (min(box[0], box[2]), min(box[1], box[3]), max(box[0], box[2]), max(box[1], box[3]))
            _, back = box_round_trip(box, system, width, height)
            assert same(back, box), (width, height, box, back)
            point = box[:2]
            _, back = point_round_trip(point, system, width, height)
            assert same(back, point), (width, height, point, back)


def test_any_float_round_trips_in_pixel_and_in_ordered_xywh():
    rng = random.Random(2)
    for width, height in SIZES:
        for _ in range(300):
            wild = tuple(rng.choice([-1, 1]) * 10 ** rng.uniform(-300, 300) for _ in range(4))
            assert same(box_round_trip(wild, "pixel", width, height)[1], wild)
            assert same(point_round_trip(wild[:2], "pixel", width, height)[1], wild[:2])
            assert same(point_round_trip(wild[:2], "xywh_pixel", width, height)[1], wild[:2])
            xs = sorted(rng.uniform(0, width) for _ in range(2))
            ys = sorted(rng.uniform(0, height) for _ in range(2))
            box = (xs[0], ys[0], xs[1], ys[1])
            assert same(box_round_trip(box, "xywh_pixel", width, height)[1], box), box


@pytest.mark.parametrize("system", SYSTEMS)
def test_any_float_is_a_fixed_point_after_one_conversion_and_comes_back_close(system):
    rng = random.Random(3)
    for width, height in SIZES:
        ref = ref_for(system, width, height)
        for _ in range(120):
            box = tuple(rng.uniform(-0.5, 1.5) * side for side in (width, height, width, height))
            native, back = box_round_trip(box, system, width, height)
            assert same(box_from_pixels(back, system, width, height, ref), native), box
            assert same(box_to_pixels(native, system, width, height, ref), back)
            for axis in (0, 1):  # never more than a few ulps of the axis' largest coordinate
                scale = math.ulp(max(abs(box[axis]), abs(box[axis + 2])))
                assert abs(back[axis] - box[axis]) <= 4 * scale and abs(back[axis + 2] - box[axis + 2]) <= 4 * scale
            point = box[:2]
            native, back = point_round_trip(point, system, width, height)
            assert same(point_from_pixels(back, system, width, height, ref), native)
            assert all(abs(b - p) <= 2 * math.ulp(p) for b, p in zip(back, point, strict=True))


# ---------------------------------------------------------------------------------------- native → pixels → native


def _short_natives(system: str, width: int, height: int, rng: random.Random, n: int):
    """Boxes a producer would plausibly write in ``system``: ints, and decimals with few digits."""
    ext_x, ext_y = native_extent(system, width, height)
    digit_choices = {"norm_1": [1, 2, 3, 4], "ls_percent": [0, 1, 2, 4, 6], "norm_1000": [0, 0, 0, 1]}
    digits = digit_choices.get(system, [0, 0, 1, 2])
    for _ in range(n):
        d = rng.choice(digits)
        x, y = round(rng.uniform(0, ext_x), d), round(rng.uniform(0, ext_y), d)
        if system in ("xywh_pixel", "ls_percent"):  # x, y, w, h
            yield (x, y, round(rng.uniform(0, ext_x - x), d), round(rng.uniform(0, ext_y - y), d))
        else:
            yield (x, y, round(rng.uniform(0, ext_x), d), round(rng.uniform(0, ext_y), d))


@pytest.mark.parametrize("system", SYSTEMS)
def test_short_decimal_natives_round_trip(system):
    rng = random.Random(4)
    for width, height in SIZES:
        ref = ref_for(system, width, height)
        for native in _short_natives(system, width, height, rng, 150):
            native = tuple(float(v) for v in native)
            pixels = box_to_pixels(native, system, width, height, ref)
            assert same(box_from_pixels(pixels, system, width, height, ref), native), (width, height, native, pixels)
            point = native[:2]
            pixels = point_to_pixels(point, system, width, height, ref)
            assert same(point_from_pixels(pixels, system, width, height, ref), point), (width, height, point)


@pytest.mark.parametrize("width,height", SIZES)
def test_every_norm_1000_integer_round_trips(width, height):
    for v in range(1001):
        box = (float(v), float(1000 - v), float((v * 37) % 1001), float(v))
        pixels = box_to_pixels(box, "norm_1000", width, height)
        assert same(box_from_pixels(pixels, "norm_1000", width, height), box), (box, pixels)


def test_integer_natives_as_ints_round_trip():
    # producers hand over ints (a model's "537"); they come back as the equal float
    pixels = box_to_pixels([537, 12, 999, 1000], "norm_1000", 1920, 1080)
    assert box_from_pixels(pixels, "norm_1000", 1920, 1080) == (537.0, 12.0, 999.0, 1000.0)


# ------------------------------------------------------------------------------------------------- known values


@pytest.mark.parametrize(
    "system,values,ref,expected",
    [
        ("pixel", (10, 20, 30, 40), None, (10.0, 20.0, 30.0, 40.0)),
        ("pixel_resized", (100, 50, 480, 270), (960, 540), (200.0, 100.0, 960.0, 540.0)),
        ("norm_1000", (537, 0, 1000, 500), None, (1031.04, 0.0, 1920.0, 540.0)),
        ("norm_1", (0.5, 0.25, 1, 1), None, (960.0, 270.0, 1920.0, 1080.0)),
        ("xywh_pixel", (10, 20, 30, 40), None, (10.0, 20.0, 40.0, 60.0)),
        ("ls_percent", (10, 20, 30, 40), None, (192.0, 216.0, 768.0, 648.0)),
    ],
)
def test_known_boxes(system, values, ref, expected):
    assert box_to_pixels(values, system, 1920, 1080, ref) == expected
    assert box_from_pixels(expected, system, 1920, 1080, ref) == tuple(float(v) for v in values)


@pytest.mark.parametrize(
    "system,values,expected",
    [
        ("pixel", (5, 6), (5.0, 6.0)),
        ("xywh_pixel", (5, 6), (5.0, 6.0)),  # points are plain pixels
        ("norm_1000", (500, 500), (960.0, 540.0)),
        ("norm_1", (0.1, 0.9), (192.0, 972.0)),
        ("ls_percent", (23.4567, 50), (450.36864, 540.0)),
    ],
)
def test_known_points(system, values, expected):
    assert point_to_pixels(values, system, 1920, 1080) == pytest.approx(expected, rel=1e-15)
    pixels = point_to_pixels(values, system, 1920, 1080)
    assert point_from_pixels(pixels, system, 1920, 1080) == tuple(float(v) for v in values)


def test_roundings_shortcut_matches_formatting_every_length():
    from screenmill.schemas.coords import _roundings

    def reference(x, tol):
        out = []
        for digits in range(17):
            c = float(f"{x:.{digits}e}")
            if c == x:
                break
            if abs(c - x) <= tol and c not in out:
                out.append(c)
        return out

    rng = random.Random(6)
    for _ in range(20000):
        kind = rng.random()
        if kind < 0.4:
            x = round(rng.uniform(-5000, 5000), rng.randint(0, 6))
        elif kind < 0.7:
            x = rng.uniform(-5000, 5000)
        else:
            x = rng.choice([-1, 1]) * 10 ** rng.uniform(-30, 30)
        x += rng.randint(-20, 20) * math.ulp(x)
        tol = math.ulp(x) * rng.choice([1, 8, 100, 1e4, 1e8, 1e15])
        got = list(_roundings(x, tol))
        assert got[-1] == x
        assert [c for c in got[:-1] if abs(c - x) <= tol] == reference(x, tol), (x, tol)


def test_plain_float_formulas_are_not_enough():
    # why the search exists: the textbook formulas lose the last bit for some values
    w = 1920
    assert any((x * 1000 / w) * w / 1000 != x for x in (i + 0.1 for i in range(2000)))
    assert any(x0 + (x1 - x0) != x1 for x0, x1 in ((0.1 * i, 0.7 * i + 3.3) for i in range(2000)))


def test_ref_size_is_ignored_by_other_systems():
    assert box_to_pixels((1, 2, 3, 4), "pixel", 10, 10, (5, 5)) == (1.0, 2.0, 3.0, 4.0)


def test_accepts_numpy_and_iterables():
    np = pytest.importorskip("numpy")
    assert box_to_pixels(np.array([100, 200, 300, 400]), "norm_1000", np.int64(1000), 500) == (
        100.0,
        100.0,
        300.0,
        200.0,
    )
    assert point_from_pixels(iter([3.0, 4.0]), "pixel", 10, 10) == (3.0, 4.0)


# ------------------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda: box_to_pixels((0, 0, 1, 1), "norm_100", 10, 10), ValueError, "unknown coordinate system"),
        (lambda: point_from_pixels((0, 0), "NORM_1", 10, 10), ValueError, "unknown coordinate system"),
        (lambda: box_to_pixels((0, 0, 1), "pixel", 10, 10), ValueError, "needs 4 numbers, got 3"),
        (lambda: box_from_pixels((0, 0, 1, 1, 2), "norm_1", 10, 10), ValueError, "needs 4 numbers, got 5"),
        (lambda: point_to_pixels((0, 0, 1), "pixel", 10, 10), ValueError, "needs 2 numbers, got 3"),
        (lambda: point_from_pixels((0,), "ls_percent", 10, 10), ValueError, "needs 2 numbers, got 1"),
        (lambda: box_to_pixels((0, math.nan, 1, 1), "pixel", 10, 10), ValueError, "must be finite"),
        (lambda: box_from_pixels((0, 0, math.inf, 1), "norm_1000", 10, 10), ValueError, "must be finite"),
        (lambda: point_to_pixels((-math.inf, 0), "norm_1", 10, 10), ValueError, "must be finite"),
        (lambda: box_to_pixels((0, 0, 1, 1), "pixel_resized", 10, 10), ValueError, "needs ref_size"),
        (lambda: box_to_pixels((0, 0, 1, 1), "pixel_resized", 10, 10, (0, 5)), ValueError, "ref_size width"),
        (lambda: point_to_pixels((0, 0), "pixel_resized", 10, 10, (5,)), ValueError, "ref_size must be"),
        (lambda: box_to_pixels((0, 0, 1, 1), "pixel", 0, 10), ValueError, "width must be > 0"),
        (lambda: box_to_pixels((0, 0, 1, 1), "pixel", 10, -3), ValueError, "height must be > 0"),
        (lambda: box_to_pixels((0, 0, 1, 1), "pixel", 10.5, 10), TypeError, "width must be an integer"),
        (lambda: box_to_pixels(("0", 0, 1, 1), "pixel", 10, 10), TypeError, "real numbers"),
        (lambda: box_to_pixels((True, 0, 1, 1), "pixel", 10, 10), TypeError, "real numbers"),
        (lambda: box_to_pixels("0011", "pixel", 10, 10), TypeError, "sequence of 4 numbers"),
        (lambda: point_to_pixels(5, "pixel", 10, 10), TypeError, "sequence of 2 numbers"),
        (lambda: point_from_pixels((1e306, 0), "norm_1000", 7, 7), ValueError, "overflows"),
        (lambda: point_to_pixels((1e306, 0), "norm_1", 7000, 7), ValueError, "overflows"),
    ],
)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ------------------------------------------------------------------------------------------------- box helpers


def test_clamp_box():
    assert clamp_box((-5, 10, 30, 2000), 100, 50) == (0.0, 10.0, 30.0, 50.0)
    assert clamp_box((30, 40, 10, 20), 100, 50) == (10.0, 20.0, 30.0, 40.0)  # corners reordered
    assert clamp_box((150, 60, 120, 70), 100, 50) == (100.0, 50.0, 100.0, 50.0)  # outside: empty on the edge
    with pytest.raises(ValueError, match="finite"):
        clamp_box((0, 0, math.nan, 1), 10, 10)
    with pytest.raises(ValueError, match="width must be > 0"):
        clamp_box((0, 0, 1, 1), 0, 10)


def test_box_iou():
    assert box_iou((0, 0, 10, 10), (0, 0, 10, 10)) == 1.0
    assert box_iou((0, 0, 10, 10), (5, 0, 15, 10)) == pytest.approx(50 / 150)
    assert box_iou((0, 0, 10, 10), (10, 0, 20, 10)) == 0.0  # touching edges
    assert box_iou((0, 0, 10, 10), (20, 20, 30, 30)) == 0.0
    assert box_iou((10, 10, 0, 0), (0, 0, 10, 10)) == 1.0  # corner order does not matter
    assert box_iou((0, 0, 0, 0), (0, 0, 0, 0)) == 0.0  # empty boxes
    assert box_iou((0, 0, 4, 4), (1, 1, 2, 2)) == pytest.approx(1 / 16)
    with pytest.raises(ValueError, match="needs 4 numbers"):
        box_iou((0, 0, 1), (0, 0, 1, 1))


def test_point_in_box():
    box = (10, 20, 30, 40)
    assert point_in_box((10, 20), box) and point_in_box((30, 40), box) and point_in_box((15.5, 39.9), box)
    assert not point_in_box((9.999, 25), box) and not point_in_box((15, 40.001), box)
    assert point_in_box((15, 25), (30, 40, 10, 20))  # corner order does not matter
    with pytest.raises(ValueError, match="finite"):
        point_in_box((math.nan, 1), box)


def test_converted_click_point_stays_in_converted_box():
    # a model's norm_1000 box and click, converted separately, keep their containment
    box = box_to_pixels((100, 200, 300, 400), "norm_1000", 1366, 768)
    for point in [(100, 200), (300, 400), (200, 300)]:
        assert point_in_box(point_to_pixels(point, "norm_1000", 1366, 768), box)
