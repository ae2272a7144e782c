"""What the OCR reads of colours on a screenshot: glyph colours of a text, backdrops, list markers, ink of
another colour or a separator between two pieces (docs/ocr-grouping.md)."""

from __future__ import annotations

import numpy as np
from screenmill.annotators.ocr_config import OcrConfig
from screenmill.annotators.ocr_ink import _band_margin, _crop, _ink_columns, _runs, _without_punctuation
from screenmill.annotators.ocr_thresholds import active as _t


def _hues_differ(a: np.ndarray | None, b: np.ndarray | None, config: OcrConfig) -> bool:
    """Whether two glyph colours differ in hue by more than ``config.chroma_split`` (:func:`_chroma`); False where
    either is unknown."""
    if a is None or b is None or config.chroma_split <= 0:
        return False
    return float(np.linalg.norm(_chroma(a) - _chroma(b))) > config.chroma_split


def _darker_other_hue(mark: np.ndarray | None, word: np.ndarray | None, bg: np.ndarray, config: OcrConfig) -> bool:
    """Punctuation of colour ``mark`` at a word's end or start is the text around it, not the word's (``word``):
    their hues differ (:func:`_hues_differ`) and the mark stands out more from the background ``bg``. A thin mark of
    the word's own colour reads paler, never darker; False where either colour is unknown."""
    if mark is None or word is None or not _hues_differ(mark, word, config):
        return False
    return float(np.linalg.norm(mark - bg)) > float(np.linalg.norm(word - bg))


def _colours_differ(a: np.ndarray | None, b: np.ndarray | None, config: OcrConfig) -> bool:
    """Two glyph colours (RGB) are of another style: both known, and further apart than ``config.color_split`` or
    their hues (:func:`_chroma`) further than ``config.chroma_split`` (a threshold of 0 is off)."""
    if a is None or b is None:
        return False
    return 0 < config.color_split < float(np.linalg.norm(a - b)) or _hues_differ(a, b, config)


def _ink_runs(crop: np.ndarray, ink_contrast: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]] | None:
    """A text crop's ink runs ``[start, end)`` (:func:`_ink_columns`), and those runs without the punctuation at the
    text's ends (:func:`_without_punctuation`); None where the crop holds no ink."""
    ink = _ink_columns(crop, ink_contrast)
    cols = np.flatnonzero(ink)
    if cols.size == 0:
        return None
    runs = _runs(ink[cols[0] : cols[-1] + 1], int(cols[0]))
    return runs, _without_punctuation(runs, crop.shape[0])


def text_colours(image: np.ndarray, box: tuple[float, float, float, float], config: OcrConfig) -> np.ndarray | None:
    """The glyph colours of the text in ``box`` of ``image``, for telling whether two texts share a style: a
    ``(2, 3)`` RGB array, the colour of its words, then the colour of all its ink. They differ only where punctuation
    at the text's ends (:func:`_without_punctuation`) is of another colour (:func:`_colours_differ`) than its words:
    "intro)" is a link's colour and a black bracket's, whose stronger contrast alone decides its ink's colour. Two
    texts match where both colours do, so "(see the" | "intro)" stay apart, and so do the link "Tutorial," and the
    link "Tutorial2" after its plain comma. None when a glyph colour cannot be told (see :func:`_glyph_color`)."""
    crop = _crop(image, box)
    if crop.shape[0] < 2 or crop.shape[1] < 2:
        return None
    bg = _background(image, box, crop, config.ink_contrast)
    whole = _glyph_color(crop, bg)
    if whole is None:
        return None
    words = whole
    found = _ink_runs(crop, config.ink_contrast)
    if found:
        runs, inside = found
        if len(inside) < len(runs):
            core = _glyph_color(crop[:, inside[0][0] : inside[-1][1]], bg)
            if _colours_differ(core, whole, config):
                words = core
    return np.stack([words, whole])


def list_marker_left(image: np.ndarray, box: tuple[float, float, float, float], config: OcrConfig) -> bool | None:
    """What stands just left of the line in ``box`` (from ``marker_reach`` to ``marker_gap`` line heights
    before its start): True for a list marker (a bullet: a lone small blob of ink, at most ``marker_size`` line
    heights each way, in the middle of the line's height), False for nothing (blank), None for any other ink. The
    detector leaves bullets out of the line, so the text cannot tell a list item's first line from its next one; the
    ink can."""
    x0, y0, x1, y1 = box
    h = y1 - y0
    if h < 6:
        return None
    reach = x0 - _t().marker_reach * h
    lo, hi = int(round(max(0.0, reach - _t().marker_clear * h))), int(round(x0 - _t().marker_gap * h))
    top, bottom = int(round(y0 + 0.1 * h)), int(round(y1 - 0.05 * h))
    region = image[max(0, top) : max(0, bottom), lo : max(0, hi)].astype(np.int16)
    if region.shape[0] < 3 or region.shape[1] < 3:  # too small to tell, or a box at (or beyond) the image's edge
        return None
    bg = np.median(region.reshape(-1, 3), axis=0).astype(np.int16)
    ink = np.abs(region - bg).max(axis=-1) >= config.ink_contrast
    runs = _runs(ink.any(axis=0), lo)
    near = [r for r in runs if r[1] > reach]
    if not near:
        return False
    if len(near) != 1:
        return None
    s, e = near[0]
    rows = np.flatnonzero(ink[:, s - lo : e - lo].any(axis=1))
    width, height = e - s, rows[-1] - rows[0] + 1
    centre = top + (rows[0] + rows[-1]) / 2
    left_end = runs[-2][1] if len(runs) > 1 else (lo if lo > 0 else -np.inf)  # the image's edge is blank enough
    marker = (
        0.1 * h <= width <= _t().marker_size * h
        and 0.1 * h <= height <= _t().marker_size * h
        and y0 + 0.3 * h <= centre <= y0 + 0.8 * h
        and s >= reach
        and s - left_end >= _t().marker_clear * h
    )
    return True if marker else None


def backdrop(image: np.ndarray, box: tuple[float, float, float, float], side: str) -> np.ndarray | None:
    """The background colour at one end of a text's box: the commonest colour of the box's ``side`` (``"left"`` or
    ``"right"``) half a line height wide (or the box's width, if narrower), where the page (or a chip of inline code
    the text starts or ends on) shows between the glyph strokes, whose anti-aliased shades each cover few pixels.
    None when that strip is under two pixels either way."""
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    w = max(2, min((y1 - y0) // 2, x1 - x0))
    lo, hi = (x0, x0 + w) if side == "left" else (x1 - w, x1)
    strip = image[max(0, y0) : max(0, y1), max(0, lo) : max(0, hi)]
    if strip.shape[0] < 2 or strip.shape[1] < 2:
        return None
    colours, counts = np.unique(strip.reshape(-1, 3), axis=0, return_counts=True)
    return colours[int(np.argmax(counts))].astype(float)


def _background(image: np.ndarray, box: tuple[float, float, float, float], crop: np.ndarray, ink_contrast: int):
    """The background colour of the text in ``box`` of ``image`` (``crop``: its pixels): the median of the crop's
    pixels, unless the median of its outermost rows and columns differs from it by ``ink_contrast`` or more; then the
    median of the crop grown by ``backdrop_margin`` line heights above and below. Bold capitals in a box the
    detector drew tight to them ("GNU" in a heading) cover most of their crop, whose median is then their ink; the
    edges alone are no answer either (a link's underline runs along the bottom one)."""
    median = np.median(crop.reshape(-1, 3), axis=0)
    if crop.shape[0] < 3 or crop.shape[1] < 3:
        return median
    edges = np.concatenate([crop[0], crop[-1], crop[1:-1, 0], crop[1:-1, -1]])
    if float(np.abs(np.median(edges, axis=0) - median).max()) < ink_contrast:
        return median
    m = _t().backdrop_margin * (box[3] - box[1])
    grown = _crop(image, (box[0], box[1] - m, box[2], box[3] + m))
    return np.median(grown.reshape(-1, 3), axis=0)


def _glyph_color(
    crop: np.ndarray, background: np.ndarray | None = None, share: float | None = None
) -> np.ndarray | None:
    """Median colour of the glyph cores in a word crop: its pixels at least ``share`` times as far from the background
    colour as its most distinct pixel (:func:`_far_colour`; None or where fewer than 3 pixels are that far:
    ``far_share``).
    ``background``: that of the line around the word (a narrow crop, a capital's stem cut off its word by the gap
    after it, the "T" of "The", is mostly ink, and its median would make the ink the background), else the crop's
    median colour."""
    return _glyph_colors(crop, background, (share,))[0]


def _glyph_colors(
    crop: np.ndarray, background: np.ndarray | None, shares: tuple[float | None, ...]
) -> list[np.ndarray | None]:
    """:func:`_glyph_color` at each of ``shares``, the crop's pixel distances computed once."""
    px = crop.reshape(-1, 3).astype(np.float32)
    if px.shape[0] < 4:
        return [None] * len(shares)
    bg = np.median(px, axis=0) if background is None else np.asarray(background, dtype=np.float32)
    d = np.linalg.norm(px - bg, axis=1)
    reach = d.max()
    out = []
    for share in shares:
        if share is None or (d >= share * reach).sum() < 3:
            share = _t().far_share
        out.append(_far_colour(px, d, reach, share))
    return out


def _far_colour(px: np.ndarray, d: np.ndarray, reach: float, share: float | None = None) -> np.ndarray | None:
    """Median colour of the pixels ``px`` (N, 3) whose distance from the background, ``d``, is at least ``share``
    times ``reach`` (the most distinct pixel's distance, of these pixels or of a wider crop's); None where ``reach`` is
    under 40 (no ink) or fewer than 3 pixels are that far."""
    share = _t().far_share if share is None else share
    far = d >= share * reach
    if reach < 40 or far.sum() < 3:
        return None
    return np.median(px[far], axis=0)


def _chroma(rgb: np.ndarray) -> np.ndarray:
    """The two opponent-colour axes of an RGB colour, red-green and yellow-blue (0, 0 for any grey)."""
    r, g, b = (float(v) for v in rgb)
    return np.array([r - g, (r + g) / 2 - b])


def other_ink_between(
    image: np.ndarray, a: tuple[float, float, float, float], b: tuple[float, float, float, float]
) -> bool:
    """Whether the gap between two boxes of one row (``a`` left of ``b``) holds glyph ink of another colour than the
    glyphs of ``a``: the black "][" between the blue links of "[Contents][Index]".

    Args:
        image: the screenshot (H, W, 3) RGB.
        a / b: the two pieces' boxes (x0, y0, x1, y1) in its pixels.

    Returns:
        True where the gap's central band has pixels at least ``far_share`` times as far from the row's
        background as the row's most distinct pixel and their median colour lies ``other_ink`` or more off the
        line from the background to ``a``'s glyph colour; False for a blank gap, faint ink, or boxes too small to
        tell.
    """
    top, bottom = max(a[1], b[1]), min(a[3], b[3])
    m = 0.15 * (bottom - top)
    row = _crop(image, (a[0], top + m, b[2], bottom - m))
    gap = _crop(image, (a[2] + 1, top + m, b[0] - 1, bottom - m))
    if row.shape[0] < 2 or gap.shape[0] < 2 or gap.shape[1] < 1:
        return False
    px = row.reshape(-1, 3).astype(np.float32)
    # the background from the row's top and bottom pixel rows: in the central band of large bold type the glyphs
    # cover over half the pixels, and the band's median would be a grey that makes the blank gap "other ink"
    full = _crop(image, (a[0], top, b[2], bottom))
    bg = np.median(np.concatenate([full[0], full[-1]]).astype(np.float32), axis=0)
    dmax = float(np.linalg.norm(px - bg, axis=1).max())
    g = gap.reshape(-1, 3).astype(np.float32)
    between = _far_colour(g, np.linalg.norm(g - bg, axis=1), dmax)
    ink = _glyph_color(_crop(image, (a[0], top + m, a[2], bottom - m)), bg)
    if between is None or ink is None:
        return False
    off, axis = between - bg, ink - bg
    t = float(off @ axis) / max(1e-6, float(axis @ axis))
    return float(np.linalg.norm(off - max(0.0, t) * axis)) >= _t().other_ink


def glyph_between(
    image: np.ndarray, a: tuple[float, float, float, float], b: tuple[float, float, float, float], config: OcrConfig
) -> bool:
    """Whether the gap between two boxes of one row (``a`` left of ``b``) holds a separator the splitting took out of
    a piece's text, whatever its colour: a glyph standing alone, blank columns on both its sides, in a gap at least
    ``separator_gap`` line heights wide (two word spaces and the mark: the grey "»" between two grey links of a
    breadcrumb, "3.11.2 Documentation » The Python Standard Library", which reads like a section number and its
    title).

    Args:
        image: the screenshot (H, W, 3) RGB.
        a / b: the two pieces' boxes (x0, y0, x1, y1) in its pixels; their boxes are their ink's.
        config: the annotator's settings (``ink_contrast``).

    Returns:
        True as above, the ink read over the rows the two boxes share less :func:`_band_margin` (:func:`_ink_columns`
        over that whole height: a bar "|" counts); False for a blank or narrower gap.
    """
    top, bottom = max(a[1], b[1]), min(a[3], b[3])
    h = bottom - top
    if h < 4 or b[0] - a[2] < _t().separator_gap * h:
        return False
    m = _band_margin(int(h))
    gap = _crop(image, (a[2] + 1, top + m, b[0] - 1, bottom - m))
    if gap.shape[0] < 2 or gap.shape[1] < 3:
        return False
    bg = np.median(_crop(image, (a[0], top, b[2], bottom)).reshape(-1, 3), axis=0)
    ink = _ink_columns(gap, config.ink_contrast, np.zeros(gap.shape[0], dtype=bool), band=False, bg=bg)
    return bool(ink[1:-1].any() and not ink[0] and not ink[-1])


def mark_after(image: np.ndarray, box: tuple[float, float, float, float], config: OcrConfig) -> bool:
    """Whether the text in ``box`` ends with a mark of the prose around it: its last ink run is punctuation
    (``punctuation_width`` line heights or narrower, :func:`_without_punctuation`) darker than its words and of
    another hue (:func:`_darker_other_hue`), the black comma after a blue link ("maps:next/1," | "maps:filter/2").
    The text does not run on into the next piece across it, though the comma says the text continues.

    Args:
        image: the screenshot (H, W, 3) RGB.
        box: the piece's box (x0, y0, x1, y1) in its pixels.
        config: the annotator's settings (``ink_contrast``, ``chroma_split``).

    Returns:
        True as above; False where the text has no such mark, its words' colour cannot be told, or the box is too
        small to tell.
    """
    crop = _crop(image, box)
    found = _ink_runs(crop, config.ink_contrast) if crop.shape[0] >= 2 and crop.shape[1] >= 2 else None
    if found is None:
        return False
    runs, inside = found
    if len(inside) == len(runs) or inside[-1] == runs[-1]:
        return False
    bg = _background(image, box, crop, config.ink_contrast)
    words = _glyph_color(crop[:, inside[0][0] : inside[-1][1]], bg)
    return _darker_other_hue(_glyph_color(crop[:, runs[-1][0] : runs[-1][1]], bg), words, bg, config)


def word_colours(
    crop: np.ndarray, words: list[tuple[int, int]], runs: list[tuple[int, int]], bg: np.ndarray, config: OcrConfig
) -> tuple[list, list, list[bool], list[bool]]:
    """Per word (``[s, e)`` columns of a line ``crop`` whose ink runs are ``runs``, against the backdrop ``bg``):
    its usual glyph colour and its cores' colour, both without the narrow runs at its ends
    (:func:`_without_punctuation`); whether punctuation of another colour ends it (that colour differs from the
    word's, or the last mark alone is darker and of another hue: :func:`_darker_other_hue`); whether punctuation
    darker and of another hue starts it. The cues of the colour split (docs/ocr-grouping.md, "Colour split")."""
    h = crop.shape[0]
    colours, cores, ends, starts = [], [], [], []
    for s, e in words:
        whole = [(r0, r1) for r0, r1 in runs if s <= r0 and r1 <= e]
        inside = _without_punctuation(whole, h)
        core = crop[:, inside[0][0] : inside[-1][1]] if inside else crop[:, s:e]
        usual, core_colour = _glyph_colors(core, bg, (None, _t().core_share))
        colours.append(usual)
        cores.append(core_colour)
        trailing = len(inside) < len(whole) and inside[-1][1] < e
        ends.append(
            trailing
            and (
                _colours_differ(_glyph_color(crop[:, s:e], bg), usual, config)
                or _darker_other_hue(_glyph_color(crop[:, whole[-1][0] : e], bg), usual, bg, config)
            )
        )
        opened = len(inside) < len(whole) and inside[0][0] > s
        lead = _glyph_color(crop[:, s : inside[0][0]], bg) if opened else None
        starts.append(_darker_other_hue(lead, usual, bg, config))
    return colours, cores, ends, starts
