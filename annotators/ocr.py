"""CPU OCR annotator: element-level text boxes and click points from a UI screenshot (RapidOCR / PP-OCRv4 ONNX).

Detected text lines are split into elements (gaps, colours, separators) and the pieces of one element grouped again
(:mod:`screenmill.annotators.ocr_group`); how and why: docs/ocr-grouping.md.
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from screenmill.annotators.ocr_colour import (
    _colours_differ,
    _hues_differ,
    backdrop,
    glyph_between,
    list_marker_left,
    mark_after,
    other_ink_between,
    text_colours,
    word_colours,
)
from screenmill.annotators.ocr_config import _INSTALL_HINT, OcrConfig
from screenmill.annotators.ocr_cut import Cut, cut_line
from screenmill.annotators.ocr_detect import (
    _bridge_missed_ink,
    _drop_contained,
    _is_axis_aligned,
    _pixel_box,
    _strips,
    detect,
)
from screenmill.annotators.ocr_group import group_lines, join_code_rows, join_long_lines, join_pieces
from screenmill.annotators.ocr_ink import (
    _erase_dotted_rules,
    _free_rows_below,
    _ink_columns,
    _ink_height,
    _monospace_pitch,
    _runs,
    _share,
    _underline,
    _underline_edge,
    _underline_rule,
    _underscores,
    rule_between,
    underline_ends_between,
    underlined,
)
from screenmill.annotators.ocr_text import (
    _CRUMB_RE,
    _LEAD_MARK,
    _SEPARATOR_RE,
    _TRAIL_MARK,
    _bracketed,
    _by_characters,
    _clean,
    _fits,
    _keep,
    _no_stop,
    _Piece,
)
from screenmill.annotators.ocr_thresholds import active as _t
from screenmill.annotators.ocr_thresholds import using
from screenmill.annotators.wording import MAX_INSTRUCTION_NAME, Rows, reading_order


@dataclasses.dataclass(frozen=True, slots=True)
class TextElement:
    """One text element found in a screenshot.

    Attributes:
        text: the recognised text, whitespace-collapsed and stripped.
        box: ``(x0, y0, x1, y1)`` in pixels of the image passed to :meth:`OcrAnnotator.annotate`.
        point: the click point ``(x, y)``, the centre of ``box``.
        confidence: recognition confidence in ``[0, 1]``.
    """

    text: str
    box: tuple[float, float, float, float]
    point: tuple[float, float]
    confidence: float


@dataclasses.dataclass(frozen=True, slots=True)
class OcrResult:
    """What :meth:`OcrAnnotator.read` found in one screenshot.

    Attributes:
        elements: the text elements (what :meth:`OcrAnnotator.annotate` returns).
        unread: boxes ``(x0, y0, x1, y1)`` of text lines the detector found and the recogniser read as nothing: text
            in a script the models cannot read (Korean, Japanese kana; :mod:`screenmill.annotators.scripts`), reported
            instead of silently missed.
    """

    elements: list[TextElement]
    unread: list[tuple[float, float, float, float]]


class OcrAnnotator:
    """Text elements with click points from UI screenshots, on CPU.

    Construction is cheap; the ONNX sessions are built on the first :meth:`load` (or :meth:`annotate`) call, once
    per instance (thread-safe). An instance is meant to be reused for many images (e.g. one per Beam worker).

    Args:
        config: the settings; see :class:`OcrConfig`.
        cut: who decides where a detected line is cut into pieces (:mod:`screenmill.annotators.ocr_cut`); None: the
            rules as they are. A training tool passes a recorder.
    """

    NAME = "ocr-rapidocr"
    VERSION = "2025.2-textscale"

    def __init__(self, config: OcrConfig = OcrConfig(), cut: Cut | None = None) -> None:  # noqa: B008 - frozen
        if not isinstance(config, OcrConfig):
            raise TypeError(f"config must be an OcrConfig, got {type(config).__name__}")
        self.config, self.cut = config, cut
        self._engine: Any = None
        self._cv2: Any = None
        self._lock = threading.Lock()

    def load(self) -> None:
        """Import RapidOCR and build the engine (detector and recogniser sessions) once.

        Raises:
            RuntimeError: rapidocr-onnxruntime (or one of its dependencies) is not installed; the message says how
                to install it.
        """
        if self._engine is not None:
            return
        with self._lock:
            if self._engine is not None:
                return
            try:
                import cv2
                from rapidocr_onnxruntime import RapidOCR
            except ImportError as e:
                raise RuntimeError(f"{_INSTALL_HINT} ({e})") from e
            cfg = self.config
            intra = cfg.intra_op_threads or min(4, os.cpu_count() or 1)
            self._cv2 = cv2
            self._engine = RapidOCR(
                use_cls=False,  # UI text is upright; the angle classifier only costs time
                intra_op_num_threads=intra,
                inter_op_num_threads=cfg.inter_op_threads or 1,
                # we scale ourselves (and the detector's input by det_scale); keep RapidOCR from doing it again
                max_side_len=round(max(cfg.max_side, 64) * max(1.0, cfg.det_scale, *cfg.det_scale_range)) + 1,
                print_verbose=False,
            )
            # The detector normalises the image with float64 mean and std (then casts it to float32): in float32 it
            # takes a sixth of the time (0.09 -> 0.015 s for a 1280x800 screenshot).
            det = self._engine.text_det
            det.mean = np.asarray(det.mean, dtype=np.float32)
            det.std = np.asarray(det.std, dtype=np.float32)

    def annotate(self, image: np.ndarray) -> list[TextElement]:
        """Find the text elements of one screenshot.

        Args:
            image: RGB ``uint8`` array of shape ``(H, W, 3)``.

        Returns:
            The elements in reading order (top to bottom, then left to right); empty when no text is found.

        Raises:
            ValueError: ``image`` is not an ``(H, W, 3)`` uint8 array or has a zero side.
            RuntimeError: rapidocr-onnxruntime is not installed (from :meth:`load`).
        """
        return self.read(image).elements

    def read(self, image: np.ndarray) -> OcrResult:
        """Find the text elements of one screenshot, and the detected text lines that could not be read.

        Args:
            image: RGB ``uint8`` array of shape ``(H, W, 3)``.

        Returns:
            The :class:`OcrResult`: elements in reading order (top to bottom, then left to right: their click points
            by :func:`screenmill.annotators.wording.reading_order` in rows of
            :attr:`screenmill.annotators.wording.Rows.BANDS`), unread line boxes top to bottom; both in pixels of
            ``image``.

        Raises:
            ValueError: ``image`` is not an ``(H, W, 3)`` uint8 array or has a zero side.
            RuntimeError: rapidocr-onnxruntime is not installed (from :meth:`load`).
        """
        if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
            desc = f"{image.dtype} {image.shape}" if isinstance(image, np.ndarray) else type(image).__name__
            raise ValueError(f"annotate() needs an RGB uint8 array of shape (H, W, 3), got {desc}")
        h, w = image.shape[:2]
        if h == 0 or w == 0:
            raise ValueError(f"annotate() got an empty image of shape {image.shape}")
        self.load()
        cfg = self.config
        scale = min(1.0, cfg.max_side / w)
        rgb = image
        if scale < 1.0:
            rgb = self._cv2.resize(image, (cfg.max_side, max(1, round(h * scale))), interpolation=self._cv2.INTER_AREA)
        rgb = np.ascontiguousarray(rgb)
        elements: list[TextElement] = []
        unread: list[tuple[float, float, float, float]] = []
        for top, core0, core1 in _strips(rgb.shape[0], cfg.max_side, cfg.strip_overlap):
            strip = rgb[top : top + cfg.max_side]
            with using(cfg.thresholds):
                found, not_read = self._annotate_strip(strip, (top, scale))
            for x0, y0, x1, y1, text, conf in [*found, *((*b, "", 0.0) for b in not_read)]:
                cy = (y0 + y1) / 2 + top
                if not core0 <= cy < core1:
                    continue
                bx = (x0 / scale, (y0 + top) / scale, x1 / scale, (y1 + top) / scale)
                bx = (
                    max(0.0, float(bx[0])),
                    max(0.0, float(bx[1])),
                    min(float(w), float(bx[2])),
                    min(float(h), float(bx[3])),
                )
                if not text:
                    unread.append(bx)
                    continue
                point = ((bx[0] + bx[2]) / 2, (bx[1] + bx[3]) / 2)
                elements.append(TextElement(text=text, box=bx, point=point, confidence=float(conf)))
        elements = _drop_contained(elements)
        if cfg.group_lines:
            elements = group_elements(image, elements, cfg)
        points = [(e.point[0], e.point[1], e.point[0], e.point[1]) for e in elements]  # ordered by their click points
        elements = [elements[i] for i in reading_order(points, Rows.BANDS)]
        return OcrResult(elements, sorted(unread, key=lambda b: (b[1], b[0])))

    def _annotate_strip(
        self, rgb: np.ndarray, origin: tuple[int, float] = (0, 1.0)
    ) -> tuple[list[tuple[int, int, int, int, str, float]], list[tuple[int, int, int, int]]]:
        """Detect, recognise and split the lines of one strip; returns the pieces (x0, y0, x1, y1, text, conf) and
        the boxes of the detected lines read as nothing, in strip px. ``origin``: the strip's top and the image's
        scale, which place a line in the screenshot for a ``cut`` callback."""
        cfg = self.config
        bgr = np.ascontiguousarray(rgb[:, :, ::-1])
        quads = detect(self._engine, bgr, cfg)
        if not quads:
            return [], []
        H, W = rgb.shape[:2]
        boxes = []
        for q in _bridge_missed_ink([np.asarray(quad, dtype=np.float32) for quad in quads], rgb, cfg.ink_contrast):
            x0, y0, x1, y1 = _pixel_box(q, W, H)
            if x1 - x0 >= 2 and y1 - y0 >= 2:
                boxes.append((q, x0, y0, x1, y1))
        rgb, bgr, dotted = _erase_dotted_rules(rgb, bgr, [b[1:] for b in boxes], cfg.ink_contrast)
        lines, crops = [], []
        floors = _free_rows_below([b[1:] for b in boxes], H)
        for q, x0, y0, x1, y1 in boxes:
            if _is_axis_aligned(q):
                crops.append(bgr[y0:y1, x0:x1])
            else:
                crops.extend(self._engine.get_crop_img_list(bgr, [q]))
            lines.append((q, x0, y0, x1, y1))
        out: list[tuple[int, int, int, int, str, float]] = []
        unread: list[tuple[int, int, int, int]] = []
        pending: list[tuple[int, int, tuple[int, int], _Piece]] = []  # (line y0, y1, pads, piece) to recognise
        for k, ((q, x0, y0, x1, y1), (text, conf)) in enumerate(zip(lines, self._recognise(crops), strict=True)):
            line_text = _clean(text)
            if not line_text:
                unread.append((x0, y0, x1, y1))
                continue
            if float(conf) < cfg.line_min_confidence:
                continue
            pieces = None
            if cfg.split_elements and _is_axis_aligned(q):
                below = rgb[y1 : min(floors[k], y1 + int(round(_t().underscore_depth * (y1 - y0)))), x0:x1]
                top, scale = origin
                box = (x0 / scale, (y0 + top) / scale, x1 / scale, (y1 + top) / scale)  # in the screenshot's pixels
                pieces = self._split_line(rgb[y0:y1, x0:x1], line_text, below, dotted[k], box)
            if pieces is None:  # not analysable (rotated, no ink found): keep the line as detected
                if _keep(line_text, float(conf), cfg.min_confidence):
                    out.append((x0, y0, x1, y1, line_text, float(conf)))
                continue
            if len(pieces) == 1:
                p = pieces[0]
                p.x0, p.x1 = p.x0 + x0, p.x1 + x0
                for sub in self._separator_split(rgb[y0:y1], p, _no_stop(line_text, p), float(conf)):
                    if _keep(sub.text, sub.confidence, cfg.min_confidence):
                        out.append((sub.x0, y0, sub.x1, y1, sub.text, sub.confidence))
                continue
            pad = max(2, (y1 - y0) // 4)
            for k, p in enumerate(pieces):
                # padded, but short of the next piece's ink: its glyphs would be read too
                left = pad if k == 0 else max(0, min(pad, p.x0 - pieces[k - 1].x1 - 1))
                right = pad if k == len(pieces) - 1 else max(0, min(pad, pieces[k + 1].x0 - p.x1 - 1))
                pending.append((y0, y1, (left, right), p))
            for p in pieces:
                p.x0 += x0
                p.x1 += x0
        if pending:
            crops = []
            for y0, y1, (left, right), p in pending:
                crops.append(bgr[y0:y1, max(0, p.x0 - left) : min(W, p.x1 + right)])
            for (y0, y1, _pad, p), (text, conf) in zip(pending, self._recognise(crops), strict=True):
                for sub in self._separator_split(rgb[y0:y1], p, _no_stop(_clean(text), p), float(conf)):
                    if _keep(sub.text, sub.confidence, cfg.min_confidence):
                        out.append((sub.x0, y0, sub.x1, y1, sub.text, sub.confidence))
        return out, unread

    def _recognise(self, crops: list[np.ndarray]) -> list[tuple[str, float]]:
        """Read each BGR line crop alone: (text, confidence) per crop.

        Not in batches: RapidOCR pads every crop of a batch to the widest one's width, and PP-OCR's recogniser then
        drops word spaces ("Refusestowritetoanyfileorresource."); alone, a crop is also cheaper to read (no padded
        columns to compute). A crop lower than the recogniser's input is scaled up to it here, with cubic
        interpolation: RapidOCR's linear upscaling blurs the word gaps of small text, which it then reads as
        nothing (on the truth set's dev pages, the two together cut the word spaces lost from 21-33 % to under
        1 %)."""
        rec = self._engine.text_rec
        rec_h = rec.rec_image_shape[1]
        out = []
        for crop in crops:
            h, w = crop.shape[:2]
            if 2 <= h < rec_h:
                crop = self._cv2.resize(
                    crop, (max(1, round(w * rec_h / h)), rec_h), interpolation=self._cv2.INTER_CUBIC
                )
            (res,), _ = rec([np.ascontiguousarray(crop)], False)
            out.append((res[0], float(res[1])))
        return out

    def _split_line(
        self,
        crop: np.ndarray,
        text: str,
        below: np.ndarray | None = None,
        dotted: np.ndarray | None = None,
        box: tuple[float, float, float, float] | None = None,
    ) -> list[_Piece] | None:
        """Split one line crop into element pieces (crop-relative columns); None when it cannot be analysed.
        ``below``: rows of the image under the crop that no other line covers (an underscore may lie there,
        :func:`_underscores`). ``dotted``: per column, whether a dotted underline lay under it before it was painted
        over (:func:`_erase_dotted_rules`): an underline like a solid one, so "Previous:" | "Welcome to Click" split
        where it starts. ``box``: the line in the screenshot's pixels, for a ``cut`` callback."""
        cfg = self.config
        bg = np.median(crop.reshape(-1, 3), axis=0)  # the line's background, for the helpers below
        under_rows, under_cols = _underline(crop, cfg.ink_contrast, bg)
        ink = _ink_columns(crop, cfg.ink_contrast, under_rows, bg=bg)
        if not ink.any():
            return None
        ink |= _underscores(crop, cfg.ink_contrast, under_cols, ink, below, bg)
        if dotted is not None:
            under_cols = under_cols | dotted
        cols = np.flatnonzero(ink)
        a, b = int(cols[0]), int(cols[-1]) + 1
        runs = _runs(ink[a:b], a)  # ink runs [s, e)
        h = crop.shape[0]
        gaps = [runs[i + 1][0] - runs[i][1] for i in range(len(runs) - 1)]
        nchars = max(1, len(text.replace(" ", "")))
        wide = sum(g for g in gaps if g > 0.4 * h)
        advance = max(1.0, ((b - a) - wide) / nchars)
        split_at = max(cfg.split_gap_advances * advance, cfg.split_gap_height * h)
        word_at = max(2.0, 0.5 * advance)
        pitch = _monospace_pitch(runs, len(text), (b - a))
        if pitch is not None:  # code or a terminal: a word space is a whole cell, so only a run of blank cells splits
            split_at = _t().mono_split_cells * pitch
            word_at = max(2.0, 0.5 * pitch)
            runs = _runs(_ink_columns(crop, cfg.ink_contrast, under_rows, band=False, bg=bg)[a:b], a)  # a bar is ink
            gaps = [runs[i + 1][0] - runs[i][1] for i in range(len(runs) - 1)]
        # A gap much wider than the other word spaces of its own line splits too (tight rows of links or tabs,
        # "4 Branches  27 Tags"). The word spaces are the n widest gaps, n = the spaces in the recognised text
        # (letter gaps of monospace or bold text can be as wide as a word space, so width alone cannot tell). A space
        # the recogniser put between two punctuation marks is none: "--maxdepth" read as "- -maxdepth" would make the
        # narrow gap between the dashes a word space, and the real one beside it look wide.
        n_spaces = sum(
            1 for k in range(1, len(text) - 1) if text[k] == " " and (text[k - 1].isalnum() or text[k + 1].isalnum())
        )
        spaces = sorted(enumerate(gaps), key=lambda ig: -ig[1])[:n_spaces]
        splits = set()
        for i, g in enumerate(gaps):
            if g >= split_at:
                splits.add(i)
            elif pitch is None and g >= cfg.relative_gap_advances * advance:
                others = [o for k, o in spaces if k != i]
                if others and g >= cfg.relative_gap * float(np.median(others)):
                    splits.add(i)
        pieces: list[_Piece] = []
        start, bounds = runs[0][0], set(splits)  # bounds: the line's word boundaries (after run i)
        words: list[tuple[int, int]] = []  # words of the current piece
        wstart = runs[0][0]
        rule = _underline_rule(crop, under_rows, under_cols, cfg.ink_contrast, bg)  # the underline itself
        if dotted is not None:
            rule = rule | dotted
        for i, g in enumerate(gaps):
            end = runs[i][1]
            if g >= word_at or (
                _underline_edge(rule, runs[i], runs[i + 1])
                and min(_ink_height(crop, runs[k], under_rows, cfg.ink_contrast, bg) for k in (i, i + 1)) >= 0.3 * h
            ):  # a word space, or an underline's end between two letters (not a full stop or quote after a link)
                words.append((wstart, end))
                wstart = runs[i + 1][0]
                bounds.add(i)
            if i in splits:
                pieces.extend(self._color_split(crop, words, start, end, runs, under_cols, rule))
                start = runs[i + 1][0]
                words = []
        words.append((wstart, runs[-1][1]))
        pieces.extend(self._color_split(crop, words, start, runs[-1][1], runs, under_cols, rule))
        for p in pieces:
            p.mono = pitch is not None
        if self.cut is not None and pieces:
            under = (under_rows, under_cols, rule)
            pieces = cut_line(self.cut, crop, text, runs, bounds, pieces, h, advance, pitch, *under, box)
        if pieces and pitch is None and text.endswith("."):  # a dot close to a letter ("y.") joins its run: low, short
            end = pieces[-1].x1
            edge = (end - max(1, round(_t().stop_edge * h)), end)
            pieces[-1].letter_end = (
                any(e == end and e - s >= _t().full_stop_width * h for s, e in runs)
                and _ink_height(crop, edge, under_rows, cfg.ink_contrast, bg) >= _t().full_stop_width * h
                and not _ink_columns(crop, cfg.ink_contrast, under_rows, band=False, bg=bg)[  # a dot below the band
                    end : end + max(2, round(_t().full_stop_width * h))
                ].any()
            )
        # slivers at a line's ends are fragments of neighbouring glyphs the detector box cut through
        return [p for p in pieces if p.x1 - p.x0 >= max(2.0, 0.15 * h)] or None

    def _color_split(
        self,
        crop: np.ndarray,
        words: list[tuple[int, int]],
        start: int,
        end: int,
        runs: list[tuple[int, int]],
        under_cols: np.ndarray,
        rule: np.ndarray,
    ) -> list[_Piece]:
        """Split a piece (``start``..``end``, crop columns) between adjacent ``words`` whose glyph colours or hues
        differ (``color_split``, ``chroma_split``), where punctuation of another colour ends or starts a word, or where
        an underline starts or ends between two words (``runs``: the line's ink runs; ``under_cols`` / ``rule``: the
        columns under an underline and under its own long run). Every cue, and why: docs/ocr-grouping.md, "Colour
        split"."""
        cfg = self.config
        if (cfg.color_split <= 0 and cfg.chroma_split <= 0) or len(words) < 2:
            return [_Piece(start, end)]

        h = crop.shape[0]

        def covered(a: int, b: int) -> bool:
            return _share(under_cols, a, b) >= _t().underlined_share

        def one_link(i: int) -> bool:  # one underline runs from word i's end, across the gap, under word i + 1's start
            (s1, e1), (s2, e2) = words[i], words[i + 1]
            k = max(1, round(0.5 * h))
            return covered(e1, s2) and covered(max(s1, e1 - k), e1) and covered(s2, min(e2, s2 + k))

        def link_edge(i: int) -> bool:  # an underline starts or ends between words i and i + 1
            return _underline_edge(rule, words[i], words[i + 1])

        bg = np.median(crop[:, start:end].reshape(-1, 3), axis=0)
        colors, cores, ends, starts = word_colours(crop, words, runs, bg, cfg)
        pieces: list[_Piece] = []
        s0 = start
        for i in range(len(words) - 1):
            if min(words[k][1] - words[k][0] for k in (i, i + 1)) >= _t().punctuation_width * h:
                differ = _colours_differ(colors[i], colors[i + 1], cfg) and _colours_differ(
                    cores[i], cores[i + 1], cfg
                )
            else:  # a lone narrow glyph ("|" set off the pixel grid) may have no pixel its stroke covers whole: its
                # coverage makes it paler, never of another hue (the black "*" between two blue links still is)
                differ = _hues_differ(colors[i], colors[i + 1], cfg)
            if (ends[i] or starts[i + 1] or differ or link_edge(i)) and not one_link(i):
                pieces.append(_Piece(s0, words[i][1]))
                s0 = words[i + 1][0]
        pieces.append(_Piece(s0, end))
        return pieces

    def _separator_split(self, line: np.ndarray, p: _Piece, text: str, conf: float) -> list[_Piece]:
        """Split a recognised piece at " / ", " | ", " · " (mapping the parts onto its ink words), and a row of
        bracketed items into the items (:func:`_bracketed`); a monospace piece (code: "[ ASC | DESC ]") is kept
        whole."""
        if p.mono:
            return [_Piece(p.x0, p.x1, text, conf, mono=True)]
        items = _bracketed(text)
        if items:
            w = (p.x1 - p.x0) / len(text)
            return [_Piece(p.x0 + round(w * a), p.x0 + round(w * b), t, conf) for t, a, b in items]
        # a list marker or a separator alone at an end ("- decompresses files", "› rrule", "Docs /") is no part of
        # what the piece names: it goes as a separator does
        lead, trail = bool(_LEAD_MARK.match(text)), bool(_TRAIL_MARK.search(text))
        core = text.split(None, 1)[1] if lead else text
        core = core.rsplit(None, 1)[0] if trail else core
        separator = _CRUMB_RE if re.search(r"\s[»›]\s", core) else _SEPARATOR_RE
        if not (lead or trail or separator.search(core)):
            return [_Piece(p.x0, p.x1, text, conf)]
        parts = [""] * lead + separator.split(core) + [""] * trail
        tokens = text.split()
        crop = line[:, p.x0 : p.x1]
        ink = _ink_columns(crop, self.config.ink_contrast)
        cols = np.flatnonzero(ink)
        if cols.size == 0:
            return [_Piece(p.x0, p.x1, text, conf)]
        runs = _runs(ink[cols[0] : cols[-1] + 1], int(cols[0]))

        def by_characters() -> list[_Piece]:  # the parts at their characters' share of the ink, in the line's pixels
            return [
                _Piece(p.x0 + q.x0, p.x0 + q.x1, q.text, conf)
                for q in _by_characters(text, parts, runs, crop.shape[0])
            ]

        if len(runs) < len(tokens):  # fewer ink words than tokens: no word for each token to fall on
            return by_characters()
        # merge ink runs into as many words as there are tokens, cutting at the widest gaps
        gaps = sorted(range(len(runs) - 1), key=lambda i: runs[i + 1][0] - runs[i][1], reverse=True)
        cuts = sorted(gaps[: len(tokens) - 1])
        words, s = [], runs[0][0]
        for i in cuts:
            words.append((s, runs[i][1]))
            s = runs[i + 1][0]
        words.append((s, runs[-1][1]))
        out: list[_Piece] = []
        k = 0
        for part in parts:
            n = len(part.split())
            if n:
                out.append(_Piece(p.x0 + words[k][0], p.x0 + words[k + n - 1][1], part.strip(), conf))
            k += n + 1  # skip the separator token
        advance = (runs[-1][1] - runs[0][0]) / len(text)
        if not all(_fits(q.x1 - q.x0, len(q.text), advance) for q in out):
            # the tokens did not fall on the ink's words ("Go |" read "GoI": one token for two words): every part
            # was shifted, down to a word on a lone bar; place the parts by their characters instead
            out = by_characters()
        return out


def group_elements(
    image: np.ndarray, elements: list[TextElement], config: OcrConfig, decide: Callable[..., bool] | None = None
) -> list[TextElement]:
    """Join the pieces of one element's line and the wrapped lines of one element
    (:mod:`screenmill.annotators.ocr_group`), with the colour, list-marker and ink-between cues read from the
    screenshot, then the pieces of a line of prose too long to name
    (:func:`screenmill.annotators.ocr_group.join_long_lines`: it gives no label, as the DOM labels give it none).

    The grouping step of :meth:`OcrAnnotator.read` (when ``config.group_lines``), kept apart so that a cache of the
    ungrouped elements (``OcrConfig(group_lines=False)``) can be grouped again by the same code
    (``infra/truthset/regroup.py``).

    Args:
        image: the RGB ``uint8`` screenshot the elements' boxes are in.
        elements: the ungrouped elements, in pixels of ``image``.
        config: the annotator's settings (its colour thresholds; ``grouping="model"``: the join decisions of the
            packaged model, :mod:`screenmill.annotators.ocr_model`, replace the rules').
        decide: the join decisions of neighbouring pieces (the ``decide`` of
            :func:`~screenmill.annotators.ocr_group.join_pieces` and of
            :func:`~screenmill.annotators.ocr_group.group_lines`), overriding ``config.grouping``; None: as
            ``config.grouping`` says.

    Returns:
        The grouped elements, in no particular order.
    """
    if decide is None and config.grouping == "model":
        from screenmill.annotators.ocr_model import packaged_decide

        decide = packaged_decide()
    colour_of = lambda box: text_colours(image, box, config)  # noqa: E731
    marked = lambda box: list_marker_left(image, box, config)  # noqa: E731
    between = lambda a, b: (  # noqa: E731
        other_ink_between(image, a, b)
        or underline_ends_between(image, a, b, config)
        or mark_after(image, a, config)
        or glyph_between(image, a, b, config)
    )
    under = lambda box, side: backdrop(image, box, side)  # noqa: E731
    ruled = lambda a, b: rule_between(image, a, b, config)  # noqa: E731
    under_of = lambda box: underlined(image, box, config)  # noqa: E731
    with using(config.thresholds):
        code = join_code_rows(elements, colour_of, TextElement)
        pieces = join_pieces(code, colour_of, TextElement, between, under, decide)
        grouped = group_lines(pieces, colour_of, TextElement, marked, ruled, under_of, decide)
        return join_long_lines(grouped, colour_of, TextElement, MAX_INSTRUCTION_NAME)
