"""Coordinate systems that producers answer in, and exact conversion to and from original-image pixels.

Systems (:data:`SYSTEMS`); boxes are 4 numbers, points 2:

``pixel``          original-image pixels; box ``x0, y0, x1, y1``, point ``x, y``.
``pixel_resized``  pixels of the image resized to ``ref_size`` = (ref_width, ref_height); box/point as ``pixel``.
``norm_1000``      0–1000 across the image (1000 = full width/height); box/point as ``pixel``.
``norm_1``         0–1 across the image.
``xywh_pixel``     original pixels; box ``x, y, w, h``; point ``x, y``.
``ls_percent``     Label Studio: box ``x, y, width, height`` in percent (0–100) of the image; point ``x, y`` percent.

Exactness. ``*_to_pixels`` starts from the plain formula (e.g. ``v * W / 1000``), ``*_from_pixels`` from its
inverse; each then searches the result's roundings to 1..17 significant digits and its nearest ``math.nextafter``
neighbours for the first value (shortest decimal first, then nearest) that the other direction maps back exactly.
Guarantees, in float equality:

* native → pixels → native returns the input for natives with a short decimal form: ints such as a model's
  ``537``, ``0.25``, LS percents such as ``23.4567`` (up to ~14 significant digits; in the ``x, y, w, h``
  systems the sum ``x + w`` must fit in ~15 digits too, else ``w``'s last digits are not in the box at all);
* pixels → native → pixels returns the input for short-decimal pixels (every integer and half pixel, ``123.25``,
  …) and for every pixel value this module produced (``ls_percent``: from boxes inside the image); with
  ``pixel``, for all floats. With the ``x, y, w, h`` systems this holds for boxes with ``0 <= x0 <= x1`` and
  ``0 <= y0 <= y1`` — for those, ``xywh_pixel`` is exact for all floats — and ``xywh_pixel`` integer boxes in any
  corner order;
* whatever a pixel value is, one conversion makes it a fixed point: ``from(to(from(p))) == from(p)``.

Not every full-precision pixel float can survive: where the scaled native grid is coarser than the pixel grid
(e.g. pixels 983–1024 ↔ norm_1000 512–533 for a 1920 px wide image: half as many floats) two pixels must share one
native value, and ``x + w`` cannot express every end when ``w``'s float grid is coarser than the end's (negative
start or size). Those come back within a few ulps of the box's largest coordinate on that axis.
"""

from __future__ import annotations

import itertools
import math
import numbers
import operator
from collections.abc import Callable, Iterator, Sequence

SYSTEMS = ("pixel", "pixel_resized", "norm_1000", "norm_1", "xywh_pixel", "ls_percent")

_TOL_ULPS = 8  # how far (in ulps of the plain result) a returned value may be from the plain formula's result
_STEPS = 6  # nextafter neighbours tried on each side of the plain result

Box = tuple[float, float, float, float]
Point = tuple[float, float]


# ------------------------------------------------------------------------------------------------ exact search


def _roundings(x: float, tol: float) -> Iterator[float]:
    """``x`` rounded to 1, 2, … significant digits where that may lie within ``tol`` of ``x``, then ``x`` itself.

    Reads the 17-digit form of ``x`` instead of formatting every length: a rounding that close drops only zeros
    (rounding down) or nines (rounding up) above the scale of ``tol``.
    """
    if x == 0 or not 1e-290 < abs(x) < 1e290:  # nothing shorter to prefer / keep the arithmetic below finite
        yield x
        return
    mantissa, _, exponent = f"{x:.16e}".partition("e")
    digits = mantissa.lstrip("-").replace(".", "")
    # tol in units of the 17th digit, widened by 2 ulps: decimal digits and binary values differ by up to an ulp
    units = (tol + 2 * math.ulp(x)) / 10.0 ** (int(exponent) - 16)
    fine = max(1, 17 - len(str(int(units))))  # from here on the dropped digits are below tol's scale: check each
    head = digits[:fine]
    lengths = {max(1, len(head.rstrip("0"))), max(1, len(head.rstrip("9")))}
    lengths.update(range(fine, 17))
    previous = None
    for d in sorted(lengths):
        tail = int(digits[d:])
        if min(tail, 10 ** (17 - d) - tail) > units:
            continue
        candidate = float(f"{x:.{d - 1}e}")
        if candidate == x:
            break
        if candidate != previous:
            yield candidate
            previous = candidate
    yield x


def _neighbours(x: float) -> Iterator[float]:
    up = down = x
    for _ in range(_STEPS):
        up, down = math.nextafter(up, math.inf), math.nextafter(down, -math.inf)
        yield up
        yield down


def _solve(center: float, tol: float, ok: Callable[[float], bool]) -> float | None:
    """The preferred float within ``tol`` of ``center`` that satisfies ``ok``: shortest decimal first, then nearest."""
    for candidate in itertools.chain(_roundings(center, tol), _neighbours(center)):
        if abs(candidate - center) <= tol and ok(candidate):
            return candidate
    return None


def _finite(value: float, what: str) -> float:
    if not math.isfinite(value):
        raise ValueError(f"{what} overflows the float range")
    return value


class _Codec:
    """Exact conversion of one number between native (``v``) and pixel (``p``) units.

    Subclasses give the plain formulas ``fwd`` (v → p) and ``inv`` (p → v) and the search tolerances. On top:

    * ``from_px(p)``: the preferred native ``c`` near ``inv(p)`` with ``fwd(c) == p``. When no native maps to ``p``
      (the native grid is coarser there, or float ties skip it), a *spare* native: one whose own image ``fwd(c)``
      prefers another native, so ``c`` is free to stand for ``p``; failing that, ``inv(p)``.
    * ``to_px(v)``: the preferred pixel ``q`` near ``fwd(v)`` with ``from_px(q) == v``, else ``fwd(v)``.

    "Preferred" is the order of :func:`_solve`: shortest decimal first, then nearest. So a short pixel always wins
    back its native, even when another (long) pixel maps to the same native.
    """

    __slots__ = ()

    def fwd(self, v: float) -> float:
        raise NotImplementedError

    def inv(self, p: float) -> float:
        raise NotImplementedError

    def tol_native(self, c: float) -> float:
        raise NotImplementedError

    def tol_pixel(self, q: float) -> float:
        raise NotImplementedError

    def identity(self) -> bool:
        return False

    def to_px(self, v: float) -> float:
        if self.identity():
            return v
        q0 = _finite(self.fwd(v), "pixel value")
        spare: list[bool] = []  # whether v is a spare, computed at most once

        def maps_back(q: float) -> bool:
            c0 = self.inv(q)
            if not (math.isfinite(c0) and abs(c0 - v) <= self.tol_native(c0)):
                return False  # cheap: from_px(q) always lies within tolerance of inv(q)
            hit = self._hit(q, c0)
            if hit is not None:
                return hit == v
            if c0 != v:
                if not spare:
                    spare.append(self._is_spare(v))
                if not spare[0]:
                    return False  # from_px(q) is a spare or c0, and v is neither
            return self._fallback(q, c0) == v

        hit = _solve(q0, self.tol_pixel(q0), maps_back)
        return q0 if hit is None else hit

    def from_px(self, p: float) -> float:
        if self.identity():
            return p
        c0 = _finite(self.inv(p), "native value")
        hit = self._hit(p, c0)
        return self._fallback(p, c0) if hit is None else hit

    def _fallback(self, p: float, c0: float) -> float:
        spare = self._spare(p, c0)
        return c0 if spare is None else spare

    def _hit(self, p: float, c0: float) -> float | None:
        return _solve(c0, self.tol_native(c0), lambda c: self.fwd(c) == p)

    def _is_spare(self, c: float) -> bool:
        q = self.fwd(c)
        if not math.isfinite(q) or not math.isfinite(self.inv(q)):
            return False
        owner = self._hit(q, self.inv(q))
        return owner is not None and owner != c

    def _spare(self, p: float, c0: float) -> float | None:
        # Skipped pixels alternate with reached ones, each reached one having a spare; taking the spare of the pixel
        # just above (else just below) gives neighbouring skipped pixels different spares.
        near = (c0, *_neighbours(c0))
        for side in (math.inf, -math.inf):
            target = math.nextafter(p, side)
            for c in near:
                if self.fwd(c) == target and self._is_spare(c):
                    return c
        return None


class _Scale(_Codec):
    """One axis of a scaled system: ``pixel = native * num / den`` (``num/den`` reduced; equal means identity)."""

    __slots__ = ("num", "den")

    def __init__(self, num: int, den: int):
        g = math.gcd(num, den)
        self.num, self.den = num // g, den // g

    def identity(self) -> bool:
        return self.num == self.den

    def fwd(self, v: float) -> float:
        return v * self.num / self.den

    def inv(self, p: float) -> float:
        return p * self.den / self.num

    def tol_native(self, c: float) -> float:
        return _TOL_ULPS * math.ulp(c)

    def tol_pixel(self, q: float) -> float:
        return _TOL_ULPS * math.ulp(q)


class _Offset(_Codec):
    """A length measured from ``start``: ``end = start + length`` (native = length, "pixel" = end, same unit)."""

    __slots__ = ("start",)

    def __init__(self, start: float):
        self.start = start

    def fwd(self, v: float) -> float:
        return self.start + v

    def inv(self, p: float) -> float:
        return p - self.start

    def tol_native(self, c: float) -> float:
        # solutions spread over an ulp of the end, which can be far coarser than the length's own ulp
        return _TOL_ULPS * max(math.ulp(c), math.ulp(self.start), math.ulp(self.start + c))

    def tol_pixel(self, q: float) -> float:
        return _TOL_ULPS * max(math.ulp(q), math.ulp(self.start))


_IDENTITY = _Scale(1, 1)


def _span_to_px(scale: _Scale, start: float, length: float) -> tuple[float, float]:
    """(start, length) in native units → (start, end) pixels."""
    return scale.to_px(start), scale.to_px(_Offset(start).to_px(length))


def _span_from_px(scale: _Scale, a: float, b: float) -> tuple[float, float]:
    """(start, end) pixels → (start, length) native: the preferred length for which :func:`_span_to_px` gives b."""
    start, end = scale.from_px(a), scale.from_px(b)
    offset = _Offset(start)
    l0 = _finite(offset.from_px(end), "box size")
    tol = offset.tol_native(l0)

    def reaches(target: float) -> Callable[[float], bool]:
        # cheap necessary condition first: the end a length produces must be within a few ulps of `end`
        return lambda length: abs(start + length - end) <= 4 * tol and scale.to_px(offset.to_px(length)) == target

    hit = _solve(l0, tol, reaches(b))
    if hit is None:  # no length reaches b exactly: take the preferred length for the end that l0 reaches instead,
        hit = _solve(l0, tol, reaches(scale.to_px(offset.to_px(l0))))  # so that converting again is a no-op
    return start, (l0 if hit is None else hit)


# -------------------------------------------------------------------------------------------------- validation


def positive_int(name: str, value) -> int:
    """``value`` as an int > 0, or TypeError / ValueError naming ``name``."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, got a bool")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}") from None
    if number <= 0:
        raise ValueError(f"{name} must be > 0, got {number}")
    return number


def _numbers(values, arity: int, what: str) -> tuple[float, ...]:
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{what} must be a sequence of {arity} numbers, got {type(values).__name__}")
    try:
        values = tuple(values)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of {arity} numbers, got {type(values).__name__}") from None
    if len(values) != arity:
        raise ValueError(f"{what} needs {arity} numbers, got {len(values)}: {list(values)!r}")
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{what} values must be real numbers, got {type(v).__name__} {v!r}")
        f = float(v)
        if not math.isfinite(f):
            raise ValueError(f"{what} values must be finite, got {list(values)!r}")
        out.append(f)
    return tuple(out)


def _axes(system: str, width, height, ref_size) -> tuple[_Scale, _Scale, bool]:
    """(x scale, y scale, box given as start+size) for a system; validates every argument."""
    width, height = positive_int("width", width), positive_int("height", height)
    if system == "pixel":
        return _IDENTITY, _IDENTITY, False
    if system == "xywh_pixel":
        return _IDENTITY, _IDENTITY, True
    if system == "norm_1000":
        return _Scale(width, 1000), _Scale(height, 1000), False
    if system == "norm_1":
        return _Scale(width, 1), _Scale(height, 1), False
    if system == "ls_percent":
        return _Scale(width, 100), _Scale(height, 100), True
    if system == "pixel_resized":
        if ref_size is None:
            raise ValueError("system 'pixel_resized' needs ref_size=(ref_width, ref_height)")
        if isinstance(ref_size, (str, bytes)) or len(ref_size) != 2:
            raise ValueError(f"ref_size must be (ref_width, ref_height), got {ref_size!r}")
        rw, rh = positive_int("ref_size width", ref_size[0]), positive_int("ref_size height", ref_size[1])
        return _Scale(width, rw), _Scale(height, rh), False
    raise ValueError(f"unknown coordinate system {system!r}; expected one of {SYSTEMS}")


# -------------------------------------------------------------------------------------------------- public API


def box_to_pixels(
    values: Sequence[float], system: str, width: int, height: int, ref_size: tuple[int, int] | None = None
) -> Box:
    """A box in ``system`` → original-image pixels ``(x0, y0, x1, y1)``.

    Args:
        values: 4 finite numbers in the system's box layout (``x0, y0, x1, y1`` or ``x, y, w, h``).
        system: one of :data:`SYSTEMS`.
        width: original image width in pixels (> 0).
        height: original image height in pixels (> 0).
        ref_size: ``(ref_width, ref_height)`` of the resized image; required for ``pixel_resized``, ignored
            otherwise.

    Returns:
        ``(x0, y0, x1, y1)`` floats in original pixels. Not clamped or reordered (see :func:`clamp_box`).

    Raises:
        ValueError: unknown system; not 4 values; a value is NaN/inf; a size is <= 0; ``ref_size`` missing or
            malformed for ``pixel_resized``; the result overflows.
        TypeError: a value is not a real number, or a size is not an integer.
    """
    xs, ys, span = _axes(system, width, height, ref_size)
    a, b, c, d = _numbers(values, 4, f"{system} box")
    if span:
        x0, x1 = _span_to_px(xs, a, c)
        y0, y1 = _span_to_px(ys, b, d)
        return x0, y0, x1, y1
    return xs.to_px(a), ys.to_px(b), xs.to_px(c), ys.to_px(d)


def box_from_pixels(
    box: Sequence[float], system: str, width: int, height: int, ref_size: tuple[int, int] | None = None
) -> tuple[float, ...]:
    """Original-image pixels ``(x0, y0, x1, y1)`` → the box in ``system``'s layout (inverse of box_to_pixels).

    Args:
        box: 4 finite numbers, ``x0, y0, x1, y1`` in original pixels.
        system, width, height, ref_size: as for :func:`box_to_pixels`.

    Returns:
        4 floats in the system's box layout.

    Raises:
        ValueError, TypeError: as for :func:`box_to_pixels`.
    """
    xs, ys, span = _axes(system, width, height, ref_size)
    x0, y0, x1, y1 = _numbers(box, 4, "pixel box")
    if span:
        x, w = _span_from_px(xs, x0, x1)
        y, h = _span_from_px(ys, y0, y1)
        return x, y, w, h
    return xs.from_px(x0), ys.from_px(y0), xs.from_px(x1), ys.from_px(y1)


def point_to_pixels(
    values: Sequence[float], system: str, width: int, height: int, ref_size: tuple[int, int] | None = None
) -> Point:
    """A point ``(x, y)`` in ``system`` → original-image pixels ``(x, y)``.

    Args:
        values: 2 finite numbers.
        system, width, height, ref_size: as for :func:`box_to_pixels` (``xywh_pixel`` points are plain pixels).

    Returns:
        ``(x, y)`` floats in original pixels, not clamped.

    Raises:
        ValueError, TypeError: as for :func:`box_to_pixels` (with 2 values instead of 4).
    """
    xs, ys, _ = _axes(system, width, height, ref_size)
    x, y = _numbers(values, 2, f"{system} point")
    return xs.to_px(x), ys.to_px(y)


def point_from_pixels(
    point: Sequence[float], system: str, width: int, height: int, ref_size: tuple[int, int] | None = None
) -> tuple[float, ...]:
    """Original-image pixels ``(x, y)`` → the point in ``system`` (inverse of :func:`point_to_pixels`).

    Args:
        point: 2 finite numbers in original pixels.
        system, width, height, ref_size: as for :func:`box_to_pixels`.

    Returns:
        ``(x, y)`` floats in the system.

    Raises:
        ValueError, TypeError: as for :func:`point_to_pixels`.
    """
    xs, ys, _ = _axes(system, width, height, ref_size)
    x, y = _numbers(point, 2, "pixel point")
    return xs.from_px(x), ys.from_px(y)


def clamp_box(box: Sequence[float], width: int, height: int) -> Box:
    """Order a pixel box's corners and clamp it into the image ``[0, width] × [0, height]``.

    Args:
        box: ``x0, y0, x1, y1`` in original pixels (corners in any order).
        width, height: image size in pixels (> 0).

    Returns:
        ``(x0, y0, x1, y1)`` with ``0 <= x0 <= x1 <= width`` and ``0 <= y0 <= y1 <= height`` (possibly empty).

    Raises:
        ValueError, TypeError: not 4 finite real numbers, or a size is not a positive integer.
    """
    width, height = positive_int("width", width), positive_int("height", height)
    x0, y0, x1, y1 = _numbers(box, 4, "pixel box")

    def clip(v: float, hi: int) -> float:
        return min(max(v, 0.0), float(hi))

    return clip(min(x0, x1), width), clip(min(y0, y1), height), clip(max(x0, x1), width), clip(max(y0, y1), height)


def box_iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two ``x0, y0, x1, y1`` boxes (same frame; corners in any order).

    Args:
        a, b: 4 finite numbers each.

    Returns:
        IoU in ``[0, 1]``; 0.0 when both boxes are empty.

    Raises:
        ValueError, TypeError: not 4 finite real numbers.
    """
    ax0, ay0, ax1, ay1 = _ordered(_numbers(a, 4, "box"))
    bx0, by0, bx1, by1 = _ordered(_numbers(b, 4, "box"))
    iw = max(0.0, min(ax1, bx1) - max(ax0, bx0))
    ih = max(0.0, min(ay1, by1) - max(ay0, by0))
    inter = iw * ih
    union = (ax1 - ax0) * (ay1 - ay0) + (bx1 - bx0) * (by1 - by0) - inter
    return 0.0 if union <= 0.0 else min(1.0, inter / union)


def point_in_box(point: Sequence[float], box: Sequence[float]) -> bool:
    """Whether ``point`` lies in ``box`` (edges included; corners in any order).

    Args:
        point: ``x, y``; box: ``x0, y0, x1, y1`` — same frame, finite real numbers.

    Returns:
        True when ``x0 <= x <= x1`` and ``y0 <= y <= y1``.

    Raises:
        ValueError, TypeError: wrong arity or non-finite / non-real values.
    """
    x, y = _numbers(point, 2, "point")
    x0, y0, x1, y1 = _ordered(_numbers(box, 4, "box"))
    return x0 <= x <= x1 and y0 <= y <= y1


def _ordered(box: tuple[float, ...]) -> Box:
    x0, y0, x1, y1 = box
    return min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)


# ------------------------------------------------------------------------------------- a target model's frame


def smart_resize(
    height: int, width: int, factor: int = 28, min_pixels: int = 56 * 56, max_pixels: int = 28 * 28 * 1280
) -> tuple[int, int]:
    """The size Qwen2-VL / Qwen2.5-VL / UI-TARS processors resize an image to: ``(height, width)``, each a multiple
    of ``factor``, with ``min_pixels <= h * w <= max_pixels``, the aspect ratio kept as closely as that allows.

    The formula of ``transformers``' ``Qwen2VLImageProcessor`` (what a trainer's processor does; ``qwen_vl_utils``
    differs only for a side under ``factor / 2``): each side rounded to the nearest multiple of ``factor`` (Python's
    ``round``: halves to even); when that exceeds ``max_pixels``, both sides are scaled by
    ``sqrt(h * w / max_pixels)`` and floored to a multiple; when it falls under ``min_pixels``, scaled up by
    ``sqrt(min_pixels / (h * w))`` and ceiled. Height and width are rounded independently, so x and y scale by
    different ratios.

    Raises:
        ValueError, TypeError: a size or parameter is not a positive integer; ``min_pixels > max_pixels``; an aspect
            ratio over 200 (the processors refuse those too).
    """
    height, width = positive_int("height", height), positive_int("width", width)
    factor = positive_int("factor", factor)
    min_pixels, max_pixels = positive_int("min_pixels", min_pixels), positive_int("max_pixels", max_pixels)
    if min_pixels > max_pixels:
        raise ValueError(f"min_pixels {min_pixels} is over max_pixels {max_pixels}")
    if max(height, width) / min(height, width) > 200:
        raise ValueError(f"aspect ratio of {width}x{height} is over 200")
    h_bar = round(height / factor) * factor  # may be 0: the min_pixels branch below lifts it (as transformers does)
    w_bar = round(width / factor) * factor
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def quantize(values: Sequence[float], decimals: int, limits: Sequence[float]) -> tuple[float, ...]:
    """Round each value to ``decimals`` places, halves up (``floor(v * 10**d + 0.5) / 10**d``), then clamp it into
    ``[0, limit]`` (``limits`` cycles, so ``(x_max, y_max)`` serves points and ``x0, y0, x1, y1`` boxes alike).

    Raises:
        ValueError, TypeError: a value is not a finite real number; ``decimals`` is negative.
    """
    if decimals < 0:
        raise ValueError(f"decimals must be >= 0, got {decimals}")
    scale = 10**decimals
    out = []
    for v, hi in zip(_numbers(values, len(values), "value"), itertools.cycle(limits)):
        q = math.floor(v * scale + 0.5) / scale
        out.append(min(max(q, 0.0), float(hi)))
    return tuple(out)
