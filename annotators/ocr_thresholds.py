"""The OCR's numeric thresholds: one frozen, checked, hashed config (:class:`OcrThresholds`), and the thresholds of the
call in progress (:func:`active`, set by :func:`using` from :class:`screenmill.annotators.ocr_config.OcrConfig`).
Lengths are in line heights unless said otherwise, colour distances summed RGB (0-765), shares 0-1; what each rule does
with them: docs/ocr-grouping.md.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import Iterator


@dataclasses.dataclass(frozen=True, slots=True)
class OcrThresholds:
    """Every numeric threshold of the OCR's reading and grouping, by concern.

    Raises:
        ValueError: (on construction) a threshold that is no number, or out of its range (:data:`_NON_POSITIVE`,
            :data:`_SHARES`, :data:`_COUNTS`; every other must be > 0).
    """

    # --- reading: dotted rules, monospace lines, stems, underscores (ocr_ink)
    dot_width: float = 0.12  #: a dotted underline's dot is at most this wide (and 1 px)
    dot_pitch_slack: int = 1  #: its dots' starts lie within this many px of their median step
    dot_count: int = 6  #: ... and there are at least this many
    dot_bridge: float = 1.0  #: widest blank between two dots of one dotted underline (a descender's place)
    mono_residual: float = 0.035  #: monospace: ink-run centres' median distance from a pitch grid, in cells
    mono_snap: float = 0.15  #: ... with most runs this close to the grid, in cells
    mono_runs: int = 16  #: ... over at least this many runs
    mono_search: float = 0.15  #: the pitch is searched this share either side of width / characters
    mono_split_cells: float = 2.5  #: in a monospace line a gap splits it from this many cells on
    stem_reach: float = 0.25  #: a solid column this near a glyph's other ink is its stem
    stem_base: float = 0.04  #: a lone stem ending this near the baseline ...
    stem_height: float = 0.5  #: ... and at least this tall is a letter ("I")
    underscore_run: float = 1.2  #: an underscore is a rule below the central band at most this long
    underscore_touch: float = 0.2  #: ... coming this close to the words it joins
    underscore_depth: float = 0.3  #: rows under a line's box searched for an underscore
    # --- reading: underlines, full stops, list markers, backdrops, colours (ocr_ink, ocr_colour)
    underline_zone: float = 0.4  #: an underline lies in this lower share of a line crop ...
    underline_run: float = 1.5  #: ... with a run at least this long ...
    underline_rows: float = 0.15  #: ... and at most this thick
    underlined_share: float = 0.6  #: an underline covering this share of a gap and its words' ends makes one link
    underline_skip: float = 0.1  #: an underline's gaps up to this wide skip a glyph's ink ...
    underline_descender_skip: float = 0.5  #: ... and up to this wide where a descender passes under it
    bare_share: float = 0.3  #: a word underlined under less than this share of it is bare
    underline_cover: float = 0.85  #: share of a text's span a row must be ink under to be its underline
    skip_ink_reach: float = 0.4  #: a descender's skip: ink this near below the row ...
    skip_ink_share: float = 0.25  #: ... over at least this share of the skip
    full_stop_width: float = 0.25  #: an ink run at least this wide ends with a letter, not a full stop ...
    stop_edge: float = 0.06  #: ... judged over its last columns this wide
    marker_reach: float = 1.5  #: a list marker is looked for from this far left of a line's start ...
    marker_gap: float = 0.3  #: ... to this far left of it
    marker_clear: float = 0.5  #: a list marker has blank space at least this wide left of it
    marker_size: float = 0.55  #: a list marker is at most this wide and high
    backdrop_margin: float = 0.25  #: a crop is grown this much above and below to find its background
    core_share: float = 0.85  #: a word's core colour: pixels at least this share of the most distinct one's distance
    far_share: float = 0.6  #: a glyph colour: pixels at least this share of the most distinct one's distance
    punctuation_width: float = 0.4  #: an ink run this narrow at a word's end is punctuation (no say in its colour)
    # --- reading: boxes bridged, ink between pieces, parts placed by characters (ocr_detect, ocr_colour, ocr_text)
    bridge_gap: float = 2.0  #: two boxes of one row with missed ink between join up to this many row heights apart
    bridge_row: float = 0.7  #: ... sharing this share of the lower box's height ...
    bridge_height: float = 1.5  #: ... with heights at most this many times apart ...
    bridge_contrast: float = 0.5  #: ... and the gap's ink at least this share of the words' contrast
    other_ink: float = 60.0  #: gap ink this far (RGB) off the background-to-text line is another colour's
    separator_gap: float = 0.7  #: a gap this wide or more can hold a spaced separator
    word_gap: float = 0.18  #: two ink runs this far apart are two words
    snap_chars: float = 3.0  #: a part placed by characters snaps to a word's edge within this many advances
    part_width_factor: float = 2.0  #: a part fits its ink within this factor of its characters' share
    glyph_blob_contrast: int = 12  #: the glyphs' height (the detector's scale): ink this far off its neighbourhood ...
    glyph_blob_window: int = 25  #: ... the mean of this many px square (odd) ...
    glyph_blob_min: int = 4  #: ... in blobs at least this many px high ...
    glyph_blob_max: int = 120  #: ... and at most this many ...
    glyph_blob_narrow: float = 0.15  #: ... at least this many times as wide as high ...
    glyph_blob_wide: float = 1.5  #: ... at most this many ...
    glyph_blob_fill: float = 0.15  #: ... filling at least this share of their box ...
    glyph_blob_quantile: float = 0.75  #: ... the glyphs' height is this quantile of the blobs' heights
    # --- grouping: lines below lines (ocr_group, ocr_wraps)
    max_line_gap: float = 0.5  #: largest gap from A's bottom to B's top
    loose_line_gap: float = 0.7  #: ... or this, at the screenshot's own line pitch (loose prose)
    min_line_gap: float = -0.35  #: B may overlap A by up to this
    pitch_slack: float = 0.05  #: steps within this share (or 2 px) of each other are one pitch
    pitch_heights: float = 0.8  #: lines whose heights are this close are of one size for the pitch
    pitch_pairs: int = 3  #: a pitch is a step at least this many aligned line pairs share
    pitch_margin: float = 0.3  #: rule 8: a wrap's step is this much shorter than its column's ...
    pitch_lines: int = 2  #: ... over at least this many other steps ...
    pitch_spread: float = 0.35  #: ... all within this of each other
    align_slack: float = 0.5  #: two lines' left edges or centres this close are aligned
    min_height_ratio: float = 0.7  #: smallest ratio of two lines' heights of one font size
    descender_allowance: float = 1.25  #: a box with no descending glyph counts this many times its height
    row_clearance: float = 1.5  #: no other text this far right of A on its row, or left of B on its own
    inline_run_gap: float = 2.0  #: pieces of one row closer than this are one line of text
    link_gap: float = 0.8  #: rule 9: a link this near the prose beside it stands in its line
    link_context: float = 2.5  #: ... the prose's colour is that of most text this many lines above and below
    fit_tolerance: float = 0.3  #: A plus B's first word may fall this short of the column's edge and count as full
    column_reach: float = 6.0  #: how far above and below lines are looked at for a column's right edge
    cell_gap: float = 2.5  #: rule 10: another column's text stands at least this far from a wrapped link
    display_ratio: float = 1.5  #: display type: this many times the screenshot's median line height
    prose_words: int = 5  #: a line of at least this many words is prose
    faint_word: int = 3  #: a piece of a long line of prose this short (characters) reads paler
    glyph_width_default: int = 60  #: advance of a glyph with no listed width, hundredths of an em
    # --- grouping: style (colours, backdrops; ocr_features)
    max_colour_distance: float = 60.0  #: largest distance between two texts' glyph colours ...
    max_shade_distance: float = 90.0  #: ... or this where they differ only in shade ...
    shade_spread: float = 10.0  #: ... (their R, G, B differences within this of each other)
    chip_shade_distance: float = 120.0  #: inline code on a chip joins prose this far apart, whatever the hue
    chip_contrast: float = 8.0  #: two backgrounds differ when a channel is this far apart (0-255)
    # --- grouping: pieces of one row (ocr_group)
    max_piece_gap: float = 1.0  #: largest gap between two pieces of one line
    min_piece_gap: float = -0.35  #: B may overlap A by up to this
    row_centre: float = 0.3  #: largest distance between two pieces' vertical centres
    heading_ratio: float = 1.2  #: heading type on a row: this many times the median line height ...
    heading_piece_gap: float = 1.0  #: ... joins with no text cue up to this far apart
    max_shortcut_gap: float = 20.0  #: largest gap between a menu item and its keyboard shortcut
    min_shortcut_height: float = 0.5  #: a shortcut's height may be down to this share of its item's
    code_token_words: int = 3  #: a code line's pieces are tokens of at most this many words
    code_colours: int = 3  #: a code line is painted in at least this many colours
    code_height_ratio: float = 0.85  #: a code line's pieces' heights are within this ratio
    code_piece_gap: float = 2.5  #: a code line's pieces may stand this far apart ...
    code_space: float = 1.0  #: ... with a space between two a character's advance or more apart

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise ValueError(f"OcrThresholds.{f.name} must be a number, got {v!r}")
            if f.name in _COUNTS and not (isinstance(v, int) and v >= 1):
                raise ValueError(f"OcrThresholds.{f.name} must be an int >= 1, got {v!r}")
            if f.name in _NON_POSITIVE and not v <= 0:
                raise ValueError(f"OcrThresholds.{f.name} must be <= 0, got {v!r}")
            if f.name in _SHARES and not 0 < v <= 1:
                raise ValueError(f"OcrThresholds.{f.name} must be in (0, 1], got {v!r}")
            if f.name not in _NON_POSITIVE and not v > 0:
                raise ValueError(f"OcrThresholds.{f.name} must be > 0, got {v!r}")
        if self.glyph_blob_window % 2 == 0 or self.glyph_blob_min > self.glyph_blob_max:
            raise ValueError("OcrThresholds: glyph_blob_window must be odd and glyph_blob_min <= glyph_blob_max")
        if self.glyph_blob_narrow > self.glyph_blob_wide:
            raise ValueError("OcrThresholds: glyph_blob_narrow must be <= glyph_blob_wide")


#: Overlaps: the thresholds that are <= 0.
_NON_POSITIVE = frozenset({"min_line_gap", "min_piece_gap"})
#: Shares of a whole: in (0, 1].
_SHARES = frozenset(
    {
        "underline_zone",
        "underlined_share",
        "bare_share",
        "underline_cover",
        "skip_ink_share",
        "core_share",
        "far_share",
        "bridge_row",
        "bridge_contrast",
        "pitch_heights",
        "min_height_ratio",
        "min_shortcut_height",
        "code_height_ratio",
        "mono_residual",
        "mono_snap",
        "mono_search",
        "glyph_blob_quantile",
        "glyph_blob_fill",
    }
)
#: Counts: ints >= 1.
_COUNTS = frozenset(
    {"dot_pitch_slack", "dot_count", "mono_runs", "pitch_pairs", "pitch_lines", "prose_words", "faint_word"}
    | {"code_token_words", "code_colours", "glyph_width_default"}
    | {"glyph_blob_contrast", "glyph_blob_window", "glyph_blob_min", "glyph_blob_max"}
)

#: The defaults.
DEFAULT = OcrThresholds()
_ACTIVE: contextvars.ContextVar[OcrThresholds] = contextvars.ContextVar("ocr_thresholds", default=DEFAULT)  # noqa: B039 - frozen


def active() -> OcrThresholds:
    """The thresholds of the OCR call in progress in this thread (the defaults outside :func:`using`)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def using(thresholds: OcrThresholds) -> Iterator[OcrThresholds]:
    """Makes ``thresholds`` the :func:`active` ones for the ``with`` block (this thread / context only)."""
    token = _ACTIVE.set(thresholds)
    try:
        yield thresholds
    finally:
        _ACTIVE.reset(token)
