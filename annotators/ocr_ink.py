"""What the OCR reads of ink on a screenshot: runs of ink, monospace pitch, dotted rules, stems, underscores,
underlines, vertical rules and the detector's missed ink between two boxes (docs/ocr-grouping.md)."""

from __future__ import annotations

import numpy as np
from screenmill.annotators.ocr_config import OcrConfig
from screenmill.annotators.ocr_thresholds import active as _t


def _crop(image: np.ndarray, box: tuple[float, float, float, float]) -> np.ndarray:
    """The pixels of ``image`` inside ``box`` (x0, y0, x1, y1), rounded to whole pixels."""
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    return image[max(0, y0) : max(0, y1), max(0, x0) : max(0, x1)]


def _runs(mask: np.ndarray, offset: int) -> list[tuple[int, int]]:
    """[start, end) runs of True in a 1-D boolean array, shifted by ``offset``."""
    m = np.concatenate([[False], mask, [False]]).astype(np.int8)
    d = np.diff(m)
    starts = np.flatnonzero(d == 1)
    ends = np.flatnonzero(d == -1)
    return [(int(s) + offset, int(e) + offset) for s, e in zip(starts, ends, strict=True)]


def _monospace_pitch(runs: list[tuple[int, int]], nchars: int, width: int) -> float | None:
    """The cell width of a line set in a monospace font, or None for proportional text (or too few glyphs to tell).

    Args:
        runs: the line's ink runs [start, end) (one per glyph, or per touching glyphs).
        nchars: the recognised text's length, spaces included (one cell each).
        width: the span of the line's ink.

    Returns:
        The pitch, in pixels, whose grid the run centres fit best, where their median distance from it is at most
        ``mono_residual`` cells and ``mono_snap`` px; None otherwise.
    """
    if len(runs) < _t().mono_runs or nchars < _t().mono_runs or width <= 0:
        return None
    centres = np.array([(s + e) / 2 for s, e in runs], dtype=np.float64)
    guess = width / nchars
    pitches = np.linspace((1 - _t().mono_search) * guess, (1 + _t().mono_search) * guess, 121)
    pitches = pitches[pitches >= 2]
    if not pitches.size:
        return None
    phase = np.exp(2j * np.pi * centres[None, :] / pitches[:, None])  # each centre's phase on each pitch's grid
    mean = phase.mean(axis=1)
    size = np.abs(mean)
    unit = np.where(size >= 1e-9, mean / np.maximum(size, 1e-9), 1.0)
    off = np.median(np.abs(np.angle(phase * np.conj(unit)[:, None])), axis=1) / (2 * np.pi)
    off[size < 1e-9] = np.inf
    k = int(np.argmin(off))
    pitch = float(pitches[k])
    return pitch if off[k] <= _t().mono_residual + _t().mono_snap / pitch else None


def _dotted_rule(crop: np.ndarray, ink_contrast: int) -> np.ndarray:
    """The pixels of a dotted underline in a line crop (boolean, the crop's shape; all False without one): see
    ``dot_width``. The recogniser reads its dots as full stops between the words ("Basic.Concepts...Creating"),
    and the gap split sees them as ink in every word space."""
    h, w = crop.shape[:2]
    out = np.zeros((h, w), dtype=bool)
    if h < 6 or w < _t().underline_run * h:
        return out
    bg = np.median(crop.reshape(-1, 3), axis=0)
    zone = int(h * (1 - _t().underline_zone))
    ink = np.zeros((h, w), dtype=bool)  # the underline's zone and the row above it only
    ink[zone - 1 :] = _ink_mask(crop[zone - 1 :], bg, ink_contrast)
    widest = max(1, round(_t().dot_width * h))
    rows = np.zeros((h, w), dtype=bool)
    rises = np.count_nonzero(ink[zone:, 1:] & ~ink[zone:, :-1], axis=1) + ink[zone:, 0]
    for r in zone + np.flatnonzero(rises >= _t().dot_count):  # a row of fewer runs holds no dotted rule
        dots = [(s, e) for s, e in _runs(ink[r], 0) if e - s <= widest]
        if len(dots) < _t().dot_count:
            continue
        steps = np.diff([s for s, _ in dots])
        pitch = float(np.median(steps))
        chain = [dots[0]]
        for (s, e), step in zip(dots[1:], steps, strict=True):
            # a descender or a glyph's foot may take a dot's place: a step of two or three pitches goes on
            if pitch >= 2 and min(abs(step - m * pitch) for m in (1, 2, 3)) <= _t().dot_pitch_slack:
                chain.append((s, e))
                continue
            _mark_dots(rows[r], chain, h, pitch)
            chain = [(s, e)]
        _mark_dots(rows[r], chain, h, pitch)
    for top, bottom in _runs(rows.any(axis=1), 0):  # each band of rows holding dots
        cols = rows[top:bottom].any(axis=0)
        if bottom - top > max(1, round(_t().underline_rows * h)):
            continue
        if any(0 <= edge < h and ink[edge, cols].mean() > 0.2 for edge in (top - 1, bottom)):
            continue  # ink just above or below: glyphs, not a rule
        out[top:bottom] = rows[top:bottom]
    return out


def _mark_dots(row: np.ndarray, chain: list[tuple[int, int]], h: int, pitch: float) -> None:
    """Mark a chain of dots (``[start, end)`` runs) on ``row`` when it is a dotted rule: ``dot_count`` dots or
    more over ``underline_run`` line heights, most of them one ``pitch`` from the one before (a few two or three,
    where a descender took a dot's place)."""
    if len(chain) < _t().dot_count or chain[-1][1] - chain[0][0] < _t().underline_run * h:
        return
    steps = np.diff([s for s, _ in chain])
    if np.mean(np.abs(steps - pitch) <= _t().dot_pitch_slack) < 0.8:
        return
    for s, e in chain:
        row[s:e] = True


def _erase_dotted_rules(
    rgb: np.ndarray, bgr: np.ndarray, boxes: list[tuple[int, int, int, int]], ink_contrast: int
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray | None]]:
    """The strip with the dotted underlines of its line ``boxes`` (:func:`_dotted_rule`) painted over in their
    line's background colour (copies; the inputs unchanged and returned as they are where there is none), and per
    box, the columns its dotted underline ran under (:func:`_dotted_columns`; None without one)."""
    out = None
    spans: list[np.ndarray | None] = []
    for x0, y0, x1, y1 in boxes:
        crop = rgb[y0:y1, x0:x1]
        dots = _dotted_rule(crop, ink_contrast)
        if not dots.any():
            spans.append(None)
            continue
        spans.append(_dotted_columns(dots))
        if out is None:
            out = rgb.copy()
        bg = np.median(crop.reshape(-1, 3), axis=0).astype(rgb.dtype)
        out[y0:y1, x0:x1][dots] = bg
    if out is None:
        return rgb, bgr, spans
    return out, np.ascontiguousarray(out[:, :, ::-1]), spans


def _dotted_columns(dots: np.ndarray) -> np.ndarray:
    """Per column of a line crop, whether its dotted underline (``dots``, :func:`_dotted_rule`'s pixels) runs under
    it: each chain of dots from its first to its last, the blanks between dots (up to ``dot_bridge`` line
    heights) filled."""
    cols = dots.any(axis=0)
    out = cols.copy()
    bridge = max(2, round(_t().dot_bridge * dots.shape[0]))
    on = np.flatnonzero(cols)
    for a, b in zip(on[:-1], on[1:], strict=True):
        if 1 < b - a <= bridge + 1:
            out[a:b] = True
    return out


def _baseline(far: np.ndarray, runs: list[tuple[int, int]]) -> int | None:
    """The row most of a line crop's glyphs (``runs`` of ink columns of the mask ``far``) end on: the median of their
    lowest inked rows (a descender is the exception), or None with fewer than three glyphs."""
    ends = [int(np.flatnonzero(far[:, s:e].any(axis=1))[-1]) for s, e in runs if far[:, s:e].any()]
    return int(np.median(ends)) if len(ends) >= 3 else None


def _ink_mask(pixels: np.ndarray, bg, ink_contrast: int) -> np.ndarray:
    """Per pixel of ``pixels`` (``(..., 3)`` RGB), whether some channel stands at least ``ink_contrast`` off the
    background colour ``bg`` (both taken as integers)."""
    return np.abs(pixels.astype(np.int16) - np.asarray(bg).astype(np.int16)).max(axis=-1) >= ink_contrast


def _band_margin(height: int) -> int:
    """The rows left out above and below a line crop's central band, where :func:`_ink_columns` reads glyph strokes
    (15 %: neighbours' ascenders and descenders, an underscore)."""
    return max(1, int(round(0.15 * height)))


def _ink_columns(
    crop: np.ndarray,
    ink_contrast: int,
    under: np.ndarray | None = None,
    band: bool = True,
    bg: np.ndarray | None = None,
) -> np.ndarray:
    """Boolean per column of a line crop: does a glyph stroke (an intensity range of at least ``ink_contrast``)
    cross its central band (``band``; else its whole height: a bar "|" that spans the band has no range in it)? An
    underline is no glyph stroke (its rows, ``under``, as :func:`_underline` finds them, measured here when not
    given): under a link's trailing space ("<a>archives </a>and") it would join the link's last word to the next
    word, which may be another colour's. ``bg``: the crop's median colour where the caller has it."""
    h = crop.shape[0]
    if bg is None:
        bg = np.median(crop.reshape(-1, 3), axis=0)
    m = _band_margin(h) if band else 0
    rows = np.arange(m, h - m) if h - 2 * m >= 2 else np.arange(h)
    if under is None:
        under = _underline(crop, ink_contrast, bg)[0]
    if under.any() and (~under[rows]).sum() >= 2:
        rows = rows[~under[rows]]
    band = crop[rows].astype(np.int16)
    rng = (band.max(axis=0) - band.min(axis=0)).max(axis=-1)
    ink = rng >= ink_contrast
    # a stem that fills the band (a bold capital's in a box drawn tight to the caps: "DESCRIPTION") has no range in
    # it: it is ink where it stands off the background, reaches no higher or lower than the line's other glyphs (a
    # bracket or a bar "|" reaches past the letters) and stands beside a glyph's ink, within stem_reach line heights,
    # or under a bar or serif that leaves the band ("T"); a lone cell border or " | " between two words stands further
    # off, with nothing reaching out of it
    solid = ~ink & _ink_mask(band, bg, ink_contrast).all(axis=0)
    if solid.any() and ink.any():  # rare: the whole crop's pixels only then
        far = _ink_mask(crop, bg, ink_contrast)
        far[under] = False  # an underline's rows are no glyph's
        reach = max(1, int(round(_t().stem_reach * h)))
        marks = np.flatnonzero(ink)
        inked = np.flatnonzero(far[:, ink].any(axis=1))
        outside = np.ones(h, dtype=bool)
        outside[rows] = False
        arm = far[outside].any(axis=0) & ~far[rows].any(axis=0)  # ink above or below the band only: a bar, a serif
        base = None  # the line's baseline: the row most glyphs end on (descenders are the few)
        for s, e in _runs(solid, 0):
            own = np.flatnonzero(far[:, s:e].any(axis=1))
            if own[0] < inked[0] or own[-1] > inked[-1]:
                continue
            left = marks[marks < s]
            right = marks[marks >= e]
            if (
                (left.size and s - left[-1] <= reach)
                or (right.size and right[0] - e < reach)
                or arm[max(0, s - 2) : s].any()
                or arm[e : e + 2].any()
            ):
                ink[s:e] = True
                continue
            if base is None:
                base = _baseline(far, _runs(ink, 0))
            # a sans-serif "I" standing alone ("How do I convert"): a bare stem as tall as a capital, on the baseline,
            # where a bar "|" descends below it
            if (
                base is not None
                and abs(own[-1] - base) <= _t().stem_base * h
                and own[-1] - own[0] + 1 >= _t().stem_height * h
            ):
                ink[s:e] = True
    return ink


def _free_rows_below(boxes: list[tuple[int, int, int, int]], height: int) -> list[int]:
    """Per line box (x0, y0, x1, y1), the first row under it that another box starts on, among the boxes overlapping
    it horizontally whose top lies below its middle (``height`` where none): the rows from its bottom to there are
    free of other detected text."""
    if not boxes:
        return []
    b = np.asarray(boxes, dtype=np.float64)
    middle = (b[:, 1] + b[:, 3]) / 2
    under = (b[None, :, 1] > middle[:, None]) & (b[None, :, 0] < b[:, None, 2]) & (b[None, :, 2] > b[:, None, 0])
    return [int(v) for v in np.where(under, b[None, :, 1], float(height)).min(axis=1)]


def _underscores(
    crop: np.ndarray,
    ink_contrast: int,
    under_cols: np.ndarray,
    ink: np.ndarray,
    below: np.ndarray | None = None,
    bg: np.ndarray | None = None,
) -> np.ndarray:
    """Per column of a line crop, whether an underscore lies there: ink below the central band that
    :func:`_ink_columns` reads (its lowest 15 %, or in ``below``: rows under the crop that no other line's box covers,
    where an underscore of capitals lies outside a box drawn tight to them, "GCRY_MD_FLAG_HMAC"; there only in a run
    no longer than an underscore, not a rule) in a run of columns with no ink in the band, with ink on both sides
    within ``underscore_touch`` line heights or half the run's length (it joins two words: "ascii_4i"; a monospace
    underscore fills its cell and stops short of a narrow letter) and at most ``underscore_run`` line heights long,
    under no underline (``under_cols``). Without it the gap split and the recogniser cut an identifier at its
    underscores ("idn2 to ascii" | "4i"). ``bg``: the crop's median colour where the caller has it."""
    h = crop.shape[0]
    m = _band_margin(h)
    if h - 2 * m < 2:
        return np.zeros_like(ink)
    bg = np.median(crop.reshape(-1, 3), axis=0) if bg is None else bg
    low_ink = _ink_mask(crop[h - m :], bg, ink_contrast).any(axis=0)
    if below is not None and below.shape[0] and below.shape[1] == crop.shape[1]:
        for row in _ink_mask(below, bg, ink_contrast):
            for s, e in _runs(row, 0):
                if e - s <= _t().underscore_run * h:
                    low_ink[s:e] = True
    out = np.zeros_like(ink)
    for s, e in _runs(low_ink & ~ink & ~under_cols, 0):
        touch = max(1, int(round(max(_t().underscore_touch * h, 0.5 * (e - s)))))
        if e - s <= _t().underscore_run * h and ink[max(0, s - touch) : s].any() and ink[e : e + touch].any():
            out[s:e] = True
    return out


def _underline(crop: np.ndarray, ink_contrast: int, bg: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The underline of a line crop: per row, whether it is part of one (a thin long rule low in the crop, see
    ``underline_run``; rows of a thick band, a border or a table rule that fills the crop, are not), and per
    column, whether ink lies on those rows (all False without an underline). ``bg``: the crop's median colour where
    the caller has it."""
    h, w = crop.shape[:2]
    none = np.zeros(h, dtype=bool), np.zeros(w, dtype=bool)
    if h < 6 or w < _t().underline_run * h:
        return none
    if bg is None:
        bg = np.median(crop.reshape(-1, 3), axis=0)
    ink = _ink_mask(crop, bg, ink_contrast)
    rows = np.zeros(h, dtype=bool)
    for r in range(int(h * (1 - _t().underline_zone)), h):
        runs = _runs(ink[r], 0)
        rows[r] = bool(runs) and max(e - s for s, e in runs) >= _t().underline_run * h
    if not rows.any() or rows.sum() > max(1, round(_t().underline_rows * h)):
        return none
    return rows, ink[rows].any(axis=0)


def _ink_height(
    crop: np.ndarray, span: tuple[int, int], skip_rows: np.ndarray, ink_contrast: int, bg: np.ndarray | None = None
) -> int:
    """How many rows of ``crop``'s columns ``span`` (``[start, end)``) hold ink, from the first to the last, leaving
    out ``skip_rows`` (an underline's): a letter's x-height or more, a full stop's or a quote's few rows. ``bg``: the
    crop's median colour where the caller has it."""
    bg = np.median(crop.reshape(-1, 3), axis=0) if bg is None else bg
    rows = np.flatnonzero(_ink_mask(crop[:, span[0] : span[1]], bg, ink_contrast).any(axis=1) & ~skip_rows)
    return int(rows[-1] - rows[0] + 1) if rows.size else 0


def _underline_rule(
    crop: np.ndarray, under_rows: np.ndarray, under_cols: np.ndarray, ink_contrast: int, bg: np.ndarray | None = None
) -> np.ndarray:
    """Per column of a line crop, whether the underline's own long run (``underline_run`` line heights) lies under
    it: ``under_cols`` (:func:`_underline`) without a glyph's ink that merely touches the underline's rows, its skips
    at glyphs and descenders bridged (:func:`_long_runs`; a descender is ink on the two rows just below the
    underline). All False without an underline. ``bg``: the crop's median colour where the caller has it."""
    h = crop.shape[0]
    rows = np.flatnonzero(under_rows)
    if rows.size == 0:
        return np.zeros_like(under_cols)
    band = crop[rows[-1] + 1 : rows[-1] + 3]
    bg = np.median(crop.reshape(-1, 3), axis=0) if bg is None else bg
    descends = _ink_mask(band, bg, ink_contrast).any(axis=0) if band.shape[0] else None
    return _long_runs(
        under_cols,
        _t().underline_run * h,
        max(1, round(_t().underline_skip * h)),
        descends,
        round(_t().underline_descender_skip * h),
    )


def _long_runs(
    mask: np.ndarray, length: float, bridge: int, descends: np.ndarray | None = None, skip: int = 0
) -> np.ndarray:
    """``mask`` with only its runs of True at least ``length`` long left True, gaps of at most ``bridge`` closed first.

    A browser's underline skips a glyph's ink by a pixel or two on each side ("page"), and a descender's by more
    ("bindings": 7 px at a 34 px line). Where ``descends`` (per column: a descender passes just under the underline)
    marks a narrow run (at most ``skip`` wide: the descender crossing the underline's rows), the gaps of at most
    ``skip`` on both its sides close too, but only when runs lie on both sides: a bare word's descender before a link
    ("designed by <a>Marc</a>") has underline on one side only and stays apart.
    """
    out = np.zeros_like(mask)
    runs = _runs(mask, 0)
    joined = [False] * max(0, len(runs) - 1)  # joined[k]: runs k and k + 1 are one
    for k in range(len(runs) - 1):
        joined[k] = runs[k + 1][0] - runs[k][1] <= bridge
    if descends is not None:
        for k in range(1, len(runs) - 1):
            s, e = runs[k]
            if e - s <= skip and descends[s:e].any() and s - runs[k - 1][1] <= skip and runs[k + 1][0] - e <= skip:
                joined[k - 1] = joined[k] = True
    start = 0
    for k in range(len(runs)):
        if k == len(runs) - 1 or not joined[k]:
            s, e = runs[start][0], runs[k][1]
            if e - s >= length:
                out[s:e] = True
            start = k + 1
    return out


def _share(mask: np.ndarray, x0: int, x1: int) -> float:
    """The share of columns ``[x0, x1)`` that ``mask`` marks (an underline under them); 0 for no column."""
    return float(mask[x0:x1].mean()) if x1 > x0 else 0.0


def _underline_edge(rule: np.ndarray, a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether an underline (``rule``: per column, under an underline's long run) starts or ends between the ink spans
    ``a`` and ``b`` (``[start, end)``, ``a`` left of ``b``; False otherwise): the gap between them is not under it, and
    one of them is (at least ``underlined_share`` of its columns) while the other is bare (under
    ``bare_share``)."""
    (s1, e1), (s2, e2) = a, b
    if s2 < e1 or _share(rule, e1, s2) >= _t().underlined_share:  # out of order, or one underline across the gap
        return False
    sa, sb = _share(rule, s1, e1), _share(rule, s2, e2)
    return (sa >= _t().underlined_share and sb < _t().bare_share) or (
        sb >= _t().underlined_share and sa < _t().bare_share
    )


def _without_punctuation(runs: list[tuple[int, int]], height: int) -> list[tuple[int, int]]:
    """A word's ink runs ``[start, end)`` without the narrow ones at its ends (``punctuation_width`` line heights:
    a full stop, a comma, a bracket, a quote), as long as at least a line height of its ink is left."""
    inside = list(runs)
    for end_at in (-1, 0):  # a full stop, a comma or a closing bracket; an opening bracket or quote
        while (
            len(inside) > 1
            and inside[end_at][1] - inside[end_at][0] <= _t().punctuation_width * height
            and (inside[-2][1] - inside[0][0] if end_at == -1 else inside[-1][1] - inside[1][0]) >= height
        ):
            inside.pop(end_at)
    return inside


def underlined(image: np.ndarray, box: tuple[float, float, float, float], config: OcrConfig) -> bool | None:
    """Whether the text in ``box`` is underlined: True where an underline's long run (:func:`_underline_rule`) lies
    under at least ``underlined_share`` of its ink's span, False where under less than ``bare_share`` (or the
    crop has no underline), None in between or for a box too small to tell. A dotted underline (:func:`_dotted_rule`:
    Sphinx's links, "translation" | "project") counts as running from its first dot to its last, and a thin row of ink
    under nearly all of the text (:func:`_broken_underline`) as an underline too: one broken where descenders cross it
    ("https://git-"), or under a word too short to show a run ``underline_run`` line heights long ("In")."""
    crop = _crop(image, box)
    h, w = crop.shape[:2]
    if h < 6 or w < 2:
        return None
    if w < _t().underline_run * h:  # too short for a run, not for a row under all of it
        span = np.flatnonzero(_ink_columns(crop, config.ink_contrast))
        lined = span.size and _broken_underline(crop, int(span[0]), int(span[-1]) + 1, config.ink_contrast)
        return True if lined else None
    rows, cols = _underline(crop, config.ink_contrast)
    dots = np.flatnonzero(_dotted_rule(crop, config.ink_contrast).any(axis=0))
    ink = np.flatnonzero(_ink_columns(crop, config.ink_contrast, rows))
    if ink.size == 0:
        return None
    rule = _underline_rule(crop, rows, cols, config.ink_contrast)
    if dots.size:
        rule[dots[0] : dots[-1] + 1] = True
    share = float(rule[ink[0] : ink[-1] + 1].mean())
    if share < _t().underlined_share and _broken_underline(crop, int(ink[0]), int(ink[-1]) + 1, config.ink_contrast):
        return True
    return True if share >= _t().underlined_share else False if share < _t().bare_share else None


def _broken_underline(crop: np.ndarray, x0: int, x1: int, ink_contrast: int) -> bool:
    """Whether a thin row low in a line crop is ink under nearly all of the text's span ``[x0, x1)``
    (``underline_cover``), the rows above it not: an underline broken where descenders cross it, into runs each
    shorter than ``underline_run`` line heights ("https://git-": runs of 27 and 34 px under a 23 px line), or
    under all of it but the skips round the descenders that cross it, with blank above it ("Bugs" at 3x)."""
    h = crop.shape[0]
    bg = np.median(crop.reshape(-1, 3), axis=0)
    ink = _ink_mask(crop[:, x0:x1], bg, ink_contrast)
    cover = ink.mean(axis=1)
    zone = int(h * (1 - _t().underline_zone))
    for top, bottom in _runs(cover[zone:] >= _t().underline_cover / 2, zone):
        if bottom - top > max(1, round(_t().underline_rows * h)) or (
            top > 0 and cover[top - 1] >= _t().underline_cover
        ):
            continue
        if cover[top:bottom].max() >= _t().underline_cover:
            return True
        if top > 0 and cover[top - 1] >= _t().skip_ink_share:  # ink above it: a row through glyphs, not a rule
            continue
        # a descender that crosses the underline (ink right below it) skips it a little way on either side
        crossed = np.concatenate([[0], np.cumsum(ink[bottom : bottom + 2].any(axis=0))])
        at, reach = np.arange(ink.shape[1]), round(_t().skip_ink_reach * h)
        skip = crossed[np.minimum(at + reach + 1, ink.shape[1])] > crossed[np.maximum(at - reach, 0)]
        if not skip.all() and ink[top:bottom].any(axis=0)[~skip].mean() >= _t().underline_cover:
            return True
    return False


def underline_ends_between(
    image: np.ndarray, a: tuple[float, float, float, float], b: tuple[float, float, float, float], config: OcrConfig
) -> bool:
    """Whether an underline ends between two boxes of one row (``a`` left of ``b``): one is underlined and the other
    bare (:func:`_underline_edge` on the underline's own run across the two, :func:`_underline_rule`), so one is a link
    and the other the prose beside it, however close their colours (a grey link in black prose); or both are
    underlined and the gap between them is not, so they are two links ("Babel 2.18.0" | "previous": a link's
    underline runs under its word spaces).

    Args:
        image: the screenshot (H, W, 3) RGB.
        a / b: the two pieces' boxes (x0, y0, x1, y1) in its pixels.
        config: the annotator's settings (``ink_contrast``).

    Returns:
        True as above; False where the row has no underline (:func:`_underline`: a thin rule low in the row, at least
        ``underline_run`` line heights long), one underline runs across the gap, neither is underlined, or the
        boxes are too small to tell.
    """
    x0 = int(min(a[0], b[0]))
    row = _crop(image, (x0, min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])))
    if row.shape[0] < 2 or row.shape[1] < 2:
        return False
    rows, cols = _underline(row, config.ink_contrast)
    rule = _underline_rule(row, rows, cols, config.ink_contrast)
    span_a = (max(0, int(a[0]) - x0), max(0, int(a[2]) - x0))
    span_b = (max(0, int(b[0]) - x0), max(0, int(b[2]) - x0))
    if span_a[1] <= span_a[0] or span_b[1] <= span_b[0]:
        return False
    if _underline_edge(rule, span_a, span_b):
        return True
    both = min(_share(rule, *span_a), _share(rule, *span_b)) >= _t().underlined_share  # two links, each underlined
    return both and span_b[0] > span_a[1] and _share(rule, span_a[1], span_b[0]) < _t().bare_share


def rule_between(
    image: np.ndarray, a: tuple[float, float, float, float], b: tuple[float, float, float, float], config: OcrConfig
) -> bool:
    """Whether a vertical rule stands between two boxes of one row (``a`` left of ``b``): a column of the gap whose
    pixels all stand ``config.ink_contrast`` or more off the gap's background from half a line height above the two
    boxes to half a line height below them, taller than any glyph (a panel's border, a side bar's edge). Text on the
    other side of it is in another column. False for a gap under one pixel or a row at the image's edge."""
    h = max(a[3] - a[1], b[3] - b[1])
    top, bottom = min(a[1], b[1]) - 0.5 * h, max(a[3], b[3]) + 0.5 * h
    if top < 0 or bottom > image.shape[0]:
        return False
    gap = _crop(image, (a[2] + 1, top, b[0] - 1, bottom)).astype(np.int16)
    if gap.shape[0] < 2 or gap.shape[1] < 1:
        return False
    bg = np.median(gap.reshape(-1, 3), axis=0)
    ink = np.abs(gap - bg).max(axis=-1) >= config.ink_contrast
    return bool(ink.all(axis=0).any())


def _contrast(crop: np.ndarray) -> int:
    """How far a crop's most distinct pixel lies from its median colour (largest channel difference, 0..255)."""
    if crop.size == 0:
        return 0
    px = crop.reshape(-1, 3).astype(np.int16)
    return int(np.abs(px - np.median(px, axis=0).astype(np.int16)).max())
