"""The detector's boxes: the image it reads (faint text's contrast raised), the strips a tall image is read in, two
boxes of one line mended where the detector missed ink between them, axis-aligned boxes, and boxes contained in others
dropped (docs/ocr-grouping.md, docs/ocr.md)."""

from __future__ import annotations

import numpy as np
from screenmill.annotators.ocr_ink import _contrast, _ink_columns
from screenmill.annotators.ocr_thresholds import active as _t


def _strips(height: int, size: int, overlap: int) -> list[tuple[int, int, int]]:
    """(top, core start, core end) of each horizontal strip; the cores tile [0, height) exactly."""
    if height <= size:
        return [(0, 0, height)]
    tops = list(range(0, height - size, size - overlap)) + [height - size]
    out = []
    for i, top in enumerate(tops):
        core0 = 0 if i == 0 else out[-1][2]
        core1 = height if i == len(tops) - 1 else (top + size + tops[i + 1]) // 2
        out.append((top, core0, core1))
    return out


def detector_input(bgr: np.ndarray, target: float, max_gain: float, window: int) -> np.ndarray:
    """The image the text detector reads: faint text's contrast raised, the rest of the image as it is.

    Each pixel's difference from the mean colour of its ``window`` x ``window`` neighbourhood is multiplied by
    ``target / (s + 1)``, clipped to [1, ``max_gain``], where ``s`` is the neighbourhood's grey standard deviation:
    where text already stands out (``s`` of ``target - 1`` or more: dark text on white) the pixels stay as they are;
    small or pale text on a coloured band (a grey footer link on a dark bar, a caption at 60 % opacity), which
    PP-OCR's detector finds no box for, is stretched up to ``max_gain`` times. Only the detector reads it: the lines
    are read and split from the screenshot's own pixels.

    Args:
        bgr: the strip, ``uint8`` (H, W, 3) in any channel order.
        target: the neighbourhood contrast (grey standard deviation, 0-255) stretched up to.
        max_gain: the largest stretch; 1 returns ``bgr`` itself.
        window: the neighbourhood's side in pixels (odd).

    Returns:
        A ``uint8`` array of ``bgr``'s shape (``bgr`` itself when ``max_gain`` is 1).
    """
    if max_gain <= 1.0:
        return bgr
    import cv2

    img = bgr.astype(np.float32)
    grey = img.mean(axis=2)
    mean = cv2.blur(grey, (window, window))
    sd = np.sqrt(np.maximum(cv2.blur(grey * grey, (window, window)) - mean * mean, 0.0))
    gain = np.clip(target / (sd + 1.0), 1.0, max_gain)[:, :, None]
    local = cv2.blur(img, (window, window))
    return np.clip(np.rint(local + gain * (img - local)), 0, 255).astype(np.uint8)


def detect(engine, bgr: np.ndarray, cfg) -> list:
    """The text lines RapidOCR's detector finds in one strip, reading :func:`detector_input` scaled by
    ``cfg.det_scale``.

    Args:
        engine: the loaded ``RapidOCR`` engine. bgr: the strip, BGR ``uint8``.
        cfg: the :class:`screenmill.annotators.ocr_config.OcrConfig` (its ``det_*`` settings).

    Returns:
        The detected quads (each (4, 2) corners in the strip's pixels, whatever the scale); empty when none is found.
    """
    h, w = bgr.shape[:2]
    scale = detector_scale(bgr, cfg)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    if size != (w, h):
        import cv2

        bgr = cv2.resize(bgr, size, interpolation=cv2.INTER_CUBIC if scale > 1 else cv2.INTER_AREA)
    quads, _ = engine(
        detector_input(bgr, cfg.det_faint_target, cfg.det_faint_gain, cfg.det_faint_window),
        use_det=True,
        use_cls=False,
        use_rec=False,
        box_thresh=cfg.det_box_thresh,
        unclip_ratio=cfg.det_unclip_ratio,
    )
    if size == (w, h) or not quads:
        return quads or []
    back = np.float32([w / size[0], h / size[1]])
    return [np.asarray(q, dtype=np.float32) * back for q in quads]


def detector_scale(bgr: np.ndarray, cfg) -> float:
    """The scale the detector reads a strip at: ``cfg.det_scale``, or with ``cfg.det_text_height`` set, the one that
    brings the strip's glyphs to that height.

    PP-OCR's detector finds small text best at about 1.5 times a desktop screenshot's size, and reads the large text of
    a phone screenshot at 3x as well from fewer pixels (docs/ocr.md, "The detector's scale"); a screenshot does not
    say its pixel ratio, its glyphs do. Their height is measured on the glyph-shaped blobs (connected components of
    ink darker or lighter than the neighbourhood: :func:`glyph_height`); the scale is
    ``det_text_height / glyph height``, clipped to ``cfg.det_scale_range`` and to ``cfg.det_max_pixels`` pixels read
    (0: no cap; the detector's CPU grows with its pixels). A strip with no glyph found is read at ``cfg.det_scale``.

    Args:
        bgr: the strip, ``uint8`` (H, W, 3).
        cfg: the :class:`screenmill.annotators.ocr_config.OcrConfig`.

    Returns:
        The scale, > 0.
    """
    if cfg.det_text_height <= 0:
        return cfg.det_scale
    glyph = glyph_height(bgr)
    if not glyph:
        return cfg.det_scale
    lo, hi = cfg.det_scale_range
    scale = min(max(cfg.det_text_height / glyph, lo), hi)
    if cfg.det_max_pixels:
        h, w = bgr.shape[:2]
        scale = min(scale, (cfg.det_max_pixels / (w * h)) ** 0.5)
    return scale


def glyph_height(bgr: np.ndarray) -> float:
    """The height in pixels of an image's glyphs (0 when none is found): the :attr:`OcrThresholds.glyph_blob_quantile`
    quantile of the heights of its glyph-shaped blobs (the upper quartile: letters with ascenders, not the x-height,
    which anti-aliased small text merges into taller blobs), ink at least
    :attr:`OcrThresholds.glyph_blob_contrast` darker or lighter than the mean of its ``glyph_blob_window`` px
    neighbourhood, in connected blobs whose size and shape a glyph has (``glyph_blob_min`` to ``glyph_blob_max`` px
    high, ``glyph_blob_narrow`` to ``glyph_blob_wide`` times as wide as high, filling ``glyph_blob_fill`` of their
    box). About 20 ms for a 1280x800 screenshot; on the
    screenshots of ``samples/screens`` the detector's median box is 1.3-2.0 times as high."""
    import cv2

    t = _t()
    grey = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    heights = []
    for kind, c in ((cv2.THRESH_BINARY_INV, t.glyph_blob_contrast), (cv2.THRESH_BINARY, -t.glyph_blob_contrast)):
        ink = cv2.adaptiveThreshold(grey, 255, cv2.ADAPTIVE_THRESH_MEAN_C, kind, t.glyph_blob_window, c)
        _n, _labels, stats, _c = cv2.connectedComponentsWithStats(ink, connectivity=8)
        w, h, area = stats[1:, 2], stats[1:, 3], stats[1:, 4]
        heights.append(
            h[
                (h >= t.glyph_blob_min)
                & (h <= t.glyph_blob_max)
                & (w <= t.glyph_blob_wide * h)
                & (w >= t.glyph_blob_narrow * h)
                & (area >= t.glyph_blob_fill * w * h)
            ]
        )
    found = np.concatenate(heights)
    return float(np.quantile(found, t.glyph_blob_quantile)) if found.size else 0.0


def _drop_contained(elements: list) -> list:
    """Drop an element lying mostly (>= 80 % of its area) inside a longer-text element (duplicate detections)."""
    keep = []
    for i, e in enumerate(elements):
        area = max(1e-6, (e.box[2] - e.box[0]) * (e.box[3] - e.box[1]))
        dup = False
        for j, o in enumerate(elements):
            if i == j or len(o.text) < len(e.text) or (len(o.text) == len(e.text) and j > i):
                continue
            iw = min(e.box[2], o.box[2]) - max(e.box[0], o.box[0])
            ih = min(e.box[3], o.box[3]) - max(e.box[1], o.box[1])
            if iw > 0 and ih > 0 and iw * ih >= 0.8 * area:
                dup = True
                break
        if not dup:
            keep.append(e)
    return keep


def _bridge_missed_ink(quads: list[np.ndarray], rgb: np.ndarray, ink_contrast: int) -> list[np.ndarray]:
    """Join detected upright boxes of one row across a gap of ink the detector found no text in.

    Args:
        quads: the detector's boxes, each a (4, 2) array of corners in ``rgb``'s pixels.
        rgb: the strip the boxes were detected in.
        ink_contrast: as :attr:`OcrConfig.ink_contrast`.

    Returns:
        The boxes with each run of bridged neighbours replaced by one upright rectangle spanning them (in order of
        their left edges); rotated boxes and boxes with a blank gap (or a vertical rule: ink running above and below
        the row, a table's cell border) between them as given.
    """
    H, W = rgb.shape[:2]
    upright, out = [], []
    for q in quads:
        if _is_axis_aligned(q):
            x0, y0, x1, y1 = _pixel_box(q, W, H)
            if x1 - x0 >= 2 and y1 - y0 >= 2:
                upright.append([x0, y0, x1, y1, q])
                continue
        out.append(q)
    upright.sort(key=lambda b: b[0])

    def bridged(a: list, b: list) -> bool:
        ha, hb = a[3] - a[1], b[3] - b[1]
        h = min(ha, hb)
        overlap = min(a[3], b[3]) - max(a[1], b[1])
        gap = b[0] - a[2]
        if (
            overlap < _t().bridge_row * h
            or max(ha, hb) > _t().bridge_height * h
            or not -0.3 * h <= gap <= _t().bridge_gap * h
        ):
            return False
        top, bottom = max(a[1], b[1]), min(a[3], b[3])
        x0, x1 = a[2] + 1, b[0] - 1
        if x1 - x0 < 1:
            return False
        # ink of the words' own contrast: not a pill's or a button's pale edge between two tags ("accounting" |
        # "finance"), which would glue them into one line the gap split could no longer cut
        text = min(_contrast(rgb[a[1] : a[3], a[0] : a[2]]), _contrast(rgb[b[1] : b[3], b[0] : b[2]]))
        cols = np.flatnonzero(
            _ink_columns(rgb[top:bottom, x0:x1], max(ink_contrast, int(_t().bridge_contrast * text)))
        )
        if cols.size == 0:
            return False
        # a vertical rule crosses the row: ink at the same columns half a row above and below it
        above = rgb[max(0, top - h // 2) : max(0, top - h // 2) + 1, x0:x1][:, cols]
        below = rgb[min(H - 1, bottom + h // 2) : min(H - 1, bottom + h // 2) + 1, x0:x1][:, cols]
        row = np.median(rgb[top:bottom, x0:x1].reshape(-1, 3), axis=0)

        def inked(px: np.ndarray) -> bool:
            return px.size > 0 and bool((np.abs(px.astype(np.int16) - row).max(axis=-1) >= ink_contrast).any())

        return not (inked(above) and inked(below))

    used = [False] * len(upright)
    for i, a in enumerate(upright):
        if used[i]:
            continue
        used[i] = True
        box = a
        joined = False
        while True:
            nxt = next(
                (j for j in range(len(upright)) if not used[j] and bridged(box, upright[j])),
                None,
            )
            if nxt is None:
                break
            b = upright[nxt]
            used[nxt] = True
            box = [box[0], min(box[1], b[1]), max(box[2], b[2]), max(box[3], b[3]), None]
            joined = True
        if joined:
            x0, y0, x1, y1 = (float(v) for v in box[:4])
            out.append(np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float32))
        else:
            out.append(a[4])
    return out


def _pixel_box(q: np.ndarray, width: int, height: int) -> tuple[int, int, int, int]:
    """The whole pixels (x0, y0, x1, y1) a detected quad covers, clipped to a ``width`` x ``height`` image."""
    x0, y0 = np.floor(q.min(axis=0)).astype(int)
    x1, y1 = np.ceil(q.max(axis=0)).astype(int)
    return max(0, int(x0)), max(0, int(y0)), min(width, int(x1)), min(height, int(y1))


def _is_axis_aligned(q: np.ndarray) -> bool:
    """True when the detected quad is (nearly) an upright rectangle."""
    dx, dy = q[1] - q[0]
    return abs(dy) <= max(2.0, 0.06 * abs(dx))
