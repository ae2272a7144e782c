"""Where a detected line is cut into element pieces: its candidate cuts, their features, who decides them.

The reader (:meth:`screenmill.annotators.ocr.OcrAnnotator._split_line`) splits each detected line at wide gaps, at
changes of glyph colour and at an underline's ends (the rules). Every word boundary of the line is a candidate cut:
:class:`CutView` holds the line's words and the rules' decision at each boundary, :func:`cut_features` the numbers a
classifier reads there (gap widths in line heights, glyph advances and the line's other word spaces, colour and hue
distances of the two words, an underline's ends, the backdrop either side, the words' sizes, the line's text where
its tokens fall on its words). A ``cut`` callback (:func:`rules_cut`, a recorder, the packaged model of
:mod:`screenmill.annotators.ocr_model`) returns a decision per boundary and :func:`recut` rebuilds the pieces from
them. :func:`cut_label` says from DOM truth whether a boundary separates two elements.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

import numpy as np
from screenmill.annotators.ocr_colour import _chroma, word_colours
from screenmill.annotators.ocr_config import OcrConfig
from screenmill.annotators.ocr_ink import _ink_height, _share, _underline_edge
from screenmill.annotators.ocr_text import _Piece

#: A feature a cue cannot tell (a colour not read, no other word space): the trees split it off from every value.
UNKNOWN = -1.0
#: Ratios capped here: beyond, "far" is all that counts.
CAP = 10.0
CUT_FEATURES = (
    "rule", "gap_h", "gap_advance", "gap_rel", "gap_rel_max", "mono", "gap_pitch", "words", "position",
    "colour_distance", "core_distance", "hue_distance", "punct_end", "punct_start", "underline_edge", "under_i",
    "under_j", "width_i", "width_j", "ink_i", "ink_j", "ink_ratio", "backdrop_change", "gap_backdrop", "height",
    "tokens_match", "digit_i", "digit_j", "upper_j", "lower_j", "ends_punct_i", "mark_i", "mark_j",
)  # fmt: skip

Cut = Callable[["CutView"], list[bool]]
_MARK = re.compile(r"^[^\w\s]+$")


@dataclasses.dataclass(slots=True)
class CutView:
    """One detected line as its cut decision sees it (columns relative to ``crop``).

    Attributes:
        crop: the line's RGB pixels. text: the line as recognised. runs: its ink runs ``[s, e)``. words: its words'
            ink spans, left to right. rule: per boundary (between ``words[k]`` and ``words[k + 1]``), whether the
            rules cut there.
        h: the crop's height. advance: the line's mean glyph advance. pitch: its monospace cell, or None.
        under_rows / under_cols / underline: the line's underline rows, the columns an underline lies under, the
            columns under an underline's own long run (:mod:`screenmill.annotators.ocr_ink`).
        box: the line's box in the screenshot's pixels (x0, y0, x1, y1), where the reader knows it.
    """

    crop: np.ndarray
    text: str
    runs: list[tuple[int, int]]
    words: list[tuple[int, int]]
    rule: list[bool]
    h: int
    advance: float
    pitch: float | None
    under_rows: np.ndarray
    under_cols: np.ndarray
    underline: np.ndarray
    box: tuple[float, float, float, float] | None = None


def _cap(v: float) -> float:
    return float(min(max(v, -CAP), CAP))


def line_words(runs: Sequence[tuple[int, int]], bounds: set[int]) -> list[tuple[int, int]]:
    """The words of a line: its ink runs ``[s, e)`` joined except across the gaps ``bounds`` (after run ``i``)."""
    words, start = [], runs[0][0]
    for i in range(len(runs) - 1):
        if i in bounds:
            words.append((start, runs[i][1]))
            start = runs[i + 1][0]
    words.append((start, runs[-1][1]))
    return words


def rule_cuts(words: Sequence[tuple[int, int]], pieces: Sequence[_Piece]) -> list[bool]:
    """Per boundary of ``words``, whether the rules' ``pieces`` (crop columns) end a piece there."""
    ends = {p.x1 for p in pieces[:-1]}
    return [words[k][1] in ends for k in range(len(words) - 1)]


def recut(words: Sequence[tuple[int, int]], cuts: Sequence[bool], mono: bool) -> list[_Piece]:
    """The pieces of a line cut at its boundaries ``cuts`` (one per boundary of ``words``)."""
    pieces, start = [], words[0][0]
    for k, cut in enumerate(cuts):
        if cut:
            pieces.append(_Piece(start, words[k][1], mono=mono))
            start = words[k + 1][0]
    pieces.append(_Piece(start, words[-1][1], mono=mono))
    return pieces


def cut_line(
    cut: Cut,
    crop: np.ndarray,
    text: str,
    runs: Sequence[tuple[int, int]],
    bounds: set[int],
    pieces: list[_Piece],
    h: int,
    advance: float,
    pitch: float | None,
    under_rows: np.ndarray,
    under_cols: np.ndarray,
    underline: np.ndarray,
    box: tuple[float, float, float, float] | None = None,
) -> list[_Piece]:
    """The pieces of one line as ``cut`` decides its boundaries (the rules' ``pieces`` where it changes none).

    Args:
        cut: the decision callback. crop ... underline: as :class:`CutView` holds them; runs: the line's ink runs;
            bounds: the gaps (after run ``i``) that are word boundaries. pieces: the rules' pieces (crop columns).
    """
    words = line_words(runs, bounds)
    if len(words) < 2:
        return pieces
    rule = rule_cuts(words, pieces)
    view = CutView(crop, text, list(runs), words, rule, h, advance, pitch, under_rows, under_cols, underline, box)
    cuts = [bool(c) for c in cut(view)]
    if len(cuts) != len(rule):
        raise ValueError(f"a cut callback gave {len(cuts)} decisions for {len(rule)} boundaries")
    return pieces if cuts == rule else recut(words, cuts, pitch is not None)


def rules_cut(view: CutView) -> list[bool]:
    """The rules' decisions (the ``cut`` callback that changes nothing)."""
    return list(view.rule)


def _tokens(text: str, n: int) -> list[str] | None:
    tokens = text.split()
    return tokens if len(tokens) == n else None


def cut_features(view: CutView, config: OcrConfig) -> np.ndarray:
    """The features (:data:`CUT_FEATURES`, in that order) of every boundary of ``view``: an array ``(n - 1, F)``.

    Args:
        view: the line. config: the reader's config (its ink contrast).
    """
    crop, words, h = view.crop, view.words, max(1, view.h)
    n = len(words)
    bg = np.median(crop.reshape(-1, 3), axis=0)
    gaps = [words[k + 1][0] - words[k][1] for k in range(n - 1)]
    colours, cores, ends, starts = word_colours(crop, words, view.runs, bg, config)
    backs = [np.median(crop[:, s:e].reshape(-1, 3), axis=0).astype(np.float64) for s, e in words]
    inks = [_ink_height(crop, w, view.under_rows, config.ink_contrast, bg) / h for w in words]
    unders = [_share(view.under_cols, s, e) for s, e in words]
    tokens = _tokens(view.text, n)

    def dist(a, b) -> float:
        return UNKNOWN if a is None or b is None else float(np.linalg.norm(np.subtract(a, b, dtype=np.float64)))

    out = np.empty((n - 1, len(CUT_FEATURES)))
    for k in range(n - 1):
        g = gaps[k]
        others = [o for i, o in enumerate(gaps) if i != k]
        f = {
            "rule": float(view.rule[k]),
            "gap_h": _cap(g / h),
            "gap_advance": _cap(g / max(1.0, view.advance)),
            "gap_rel": _cap(g / max(1.0, float(np.median(others)))) if others else UNKNOWN,
            "gap_rel_max": _cap(g / max(1.0, float(max(others)))) if others else UNKNOWN,
            "mono": float(view.pitch is not None),
            "gap_pitch": UNKNOWN if view.pitch is None else _cap(g / view.pitch),
            "words": float(min(n, 50)),
            "position": k / max(1, n - 2),
            "colour_distance": dist(colours[k], colours[k + 1]),
            "core_distance": dist(cores[k], cores[k + 1]),
            "hue_distance": UNKNOWN
            if colours[k] is None or colours[k + 1] is None
            else float(np.linalg.norm(_chroma(colours[k]) - _chroma(colours[k + 1]))),
            "punct_end": float(ends[k]),
            "punct_start": float(starts[k + 1]),
            "underline_edge": float(_underline_edge(view.underline, words[k], words[k + 1])),
            "under_i": unders[k],
            "under_j": unders[k + 1],
            "width_i": _cap((words[k][1] - words[k][0]) / h),
            "width_j": _cap((words[k + 1][1] - words[k + 1][0]) / h),
            "ink_i": inks[k],
            "ink_j": inks[k + 1],
            "ink_ratio": min(inks[k], inks[k + 1]) / max(inks[k], inks[k + 1], 1e-6),
            "backdrop_change": dist(backs[k], backs[k + 1]),
            "gap_backdrop": dist(np.median(crop[:, words[k][1] : words[k + 1][0]].reshape(-1, 3), axis=0), bg)
            if g > 0
            else 0.0,
            "height": float(min(h, 200)),
            "tokens_match": float(tokens is not None),
        }
        if tokens is None:
            f |= dict.fromkeys(CUT_FEATURES[CUT_FEATURES.index("digit_i") :], UNKNOWN)
        else:
            a, b = tokens[k], tokens[k + 1]
            f |= {
                "digit_i": float(a[:1].isdigit()),
                "digit_j": float(b[:1].isdigit()),
                "upper_j": float(b[:1].isupper()),
                "lower_j": float(b[:1].islower()),
                "ends_punct_i": float(a[-1:] in ",.:;!?)"),
                "mark_i": float(bool(_MARK.match(a))),
                "mark_j": float(bool(_MARK.match(b))),
            }
        out[k] = [f[name] for name in CUT_FEATURES]
    return out


def cut_label(
    a: tuple[float, float, float, float], b: tuple[float, float, float, float], truth: Sequence
) -> tuple[bool, bool]:
    """Whether the boundary between two words (boxes in screenshot pixels, ``a`` left of ``b``) separates two elements
    by the DOM truth, and whether the DOM tells.

    An element (no icon, no line of painted text) holding one word's centre and not the other's cuts (a link in prose,
    a tab and its count, two buttons); otherwise a truth record holding both centres (an element or a line) keeps them
    together; two words in disjoint lines cut (the columns of a table set in a code block); a word in no record at all
    is not told.
    """
    from screenmill.annotators.evaluate.matching import point_in_box
    from screenmill.annotators.evaluate.truth import ICON, LINE

    ca = ((a[0] + a[2]) / 2, (a[1] + a[3]) / 2)
    cb = ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)
    shown = [t for t in truth if t.data_type != ICON]
    in_a = {id(t) for t in shown if point_in_box(ca, t.box)}
    in_b = {id(t) for t in shown if point_in_box(cb, t.box)}
    elements = {id(t) for t in shown if t.data_type != LINE}
    if (in_a ^ in_b) & elements:
        return True, True
    if in_a & in_b:
        return False, True
    return bool(in_a and in_b), bool(in_a and in_b)


def word_boxes(view: CutView) -> list[tuple[float, float, float, float]]:
    """The words of ``view`` as boxes in the screenshot's pixels (``view.box`` must be known)."""
    x0, y0, x1, y1 = view.box
    sx = (x1 - x0) / max(1, view.crop.shape[1])
    return [(x0 + s * sx, y0, x0 + e * sx, y1) for s, e in view.words]
