"""The grouping's rules for lines that wrap: one line of an element into the next (:data:`WRAP_RULES`, a table
evaluated in order), inline links wrapped in prose (rule 7), links wrapped in a table's cell (rule 10), a paragraph
with a link inside (rule 9) and the column's pitch (rule 8); docs/ocr-grouping.md."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence

from screenmill.annotators.ocr_features import (
    _BRACKET_ITEM,
    _FIELD,
    _LIST_MARKER,
    _PROSE_MARKS,
    _advances,
    _ends_in_colour,
    _first_word,
    _had_to_wrap,
    _hangs,
    _item_text_start,
    _line_below,
    _line_run,
    _near_step,
    _same_colour,
    _same_lead,
    _same_row,
    _same_size,
    _similar_heights,
    _steps_of_size,
    _stray_stop,
    _words_only,
    continues,
    ends_code_statement,
)
from screenmill.annotators.ocr_thresholds import active as _t


def _around_a_link(chain: Sequence[int], elements, boxes, heights, centres, colours) -> bool:
    """Rule 9 of docs/ocr-grouping.md: whether the joined lines ``chain`` are prose with a link inside. Some row of
    theirs, or the line just above or below them that the paragraph wrapped into ("... By using" | "<a>cancel/1</a>,
    the returned ..."), holds, within a word space's reach (``link_gap`` line heights from piece to piece), a piece
    of another colour with at least two letters or digits (a link; not an icon read as one glyph); those rows hold at
    least ``2 *`` ``prose_words`` words (not a link's lead-in: "Next:" | "Working with" | "Message Catalogs"); and
    the chain's colour is the greater part of the text of its size from ``link_context`` lines above it to as many
    below, over its width (the paragraph's prose, not a link wrapped in it: "See" | "the Timer Module" | "section in
    the Efficiency Guide"). The line above or below may stand up to ``loose_line_gap`` line heights off, as
    loosely set prose's next line does (a phone's "... M.-A. Lemburg in his" | "<a>mx.DateTime</a> extension.")."""
    words = sum(len(elements[k].text.split()) for k in chain)
    link = False
    h = sum(heights[k] for k in chain) / len(chain)
    x0, x1 = min(boxes[k][0] for k in chain), max(boxes[k][2] for k in chain)
    top, bottom = boxes[chain[0]][1], boxes[chain[-1]][3]
    rows = list(chain)

    def wrapped(a: int, b: int) -> bool:  # line b's first word had no room at the end of line a: one paragraph
        text = elements[b].text  # (a link in another colour wraps whole: its spaces are often unbreakable)
        advance = (boxes[b][2] - boxes[b][0]) / max(1, len(text))
        first = advance * len(text.split()[0] if text.split() else text)
        if not _same_colour(colours[b], colours[chain[0]]):
            first = boxes[b][2] - boxes[b][0]
        return boxes[a][2] + advance + first > max(x1, boxes[a][2], boxes[b][2]) - _t().fit_tolerance * h

    for q in range(len(boxes)):  # the paragraph's lines just above and below (a link may have ended or started them)
        if q in chain or abs(boxes[q][0] - x0) > 0.5 * h or not _similar_heights(heights[q], h):
            continue
        if _t().min_line_gap * h <= boxes[q][1] - bottom <= _t().loose_line_gap * h and wrapped(
            _line_run(chain[-1], boxes, heights, centres, _t().link_gap)[-1], q
        ):
            rows.append(q)
        elif _t().min_line_gap * h <= top - boxes[q][3] <= _t().loose_line_gap * h and wrapped(
            _line_run(q, boxes, heights, centres, _t().link_gap)[-1], chain[0]
        ):
            rows.append(q)
    seen: set[int] = set()
    for k in rows:
        for q in _line_run(k, boxes, heights, centres, _t().link_gap):
            if q in chain or q in seen:
                continue
            seen.add(q)
            words += len(elements[q].text.split())
            prose = colours[k] if k in chain else colours[chain[0]]
            if not _same_colour(colours[q], prose) and colours[q] is not None:
                link = link or sum(c.isalnum() for c in elements[q].text) >= 2
    if not link or words < 2 * _t().prose_words:
        return False
    return _most_text_around(chain, boxes, heights, centres, colours)


def _most_text_around(members: Sequence[int], boxes, heights, centres, colours) -> bool:
    """Whether the colour of the lines ``members`` (one element's, top to bottom) is that of most text of their size
    from ``link_context`` lines above them to as many below, over their width (summed box widths, theirs
    included): the prose of their paragraph, not a link in it."""
    h = sum(heights[k] for k in members) / len(members)
    x0, x1 = min(boxes[k][0] for k in members), max(boxes[k][2] for k in members)
    y0, y1 = boxes[members[0]][1] - _t().link_context * h, boxes[members[-1]][3] + _t().link_context * h
    width = {True: 0.0, False: 0.0}
    for q in range(len(boxes)):
        b = boxes[q]
        if colours[q] is None or not (y0 <= centres[q] <= y1 and b[0] < x1 and b[2] > x0):
            continue
        if q in members or _similar_heights(heights[q], h):
            width[q in members or _same_colour(colours[q], colours[members[0]])] += b[2] - b[0]
    return width[True] >= width[False]


def _inline_wraps(elements, boxes, heights, centres, colours, is_under=None, mark=None) -> list[tuple[int, int]]:
    """Rule 7 of docs/ocr-grouping.md: an inline link wrapped from the end of one line of prose to the start of the
    next ("... <a>Get in" | "touch with me</a> ..."): pairs (i, j) of the last piece of a line and the first piece of
    the line below, starting where that line starts, of one size and style, whose text continues, set in a style that
    is the lesser part of the two lines or, beside prose of another colour, of the text around them (the prose around
    it is the greater). The style is the colour, and where ``is_under`` can tell (index → bool | None,
    :func:`_link_underlines`) whether a piece is underlined: two underlined pieces are one link wrapped whatever their
    words (a lower-case single word after another, "modular" | "version", continues, and so does a capitalised line),
    and the prose beside an underlined link is of another style however close its colour. ``mark`` (index →
    :func:`group_lines`'s ``mark``): a B with a list marker starts an item of its own."""
    if is_under is None:
        is_under = _link_underlines(elements, boxes, None)

    def same_style(k: int, i: int, end: bool = False) -> bool:  # end: k ends i's text (its closing marks aside)
        return (_ends_in_colour(colours[i], colours[k]) if end else _same_colour(colours[k], colours[i])) and (
            None in (is_under(k), is_under(i)) or is_under(k) == is_under(i)
        )

    pairs = []
    for i in range(len(boxes)):
        here = _line_run(i, boxes, heights, centres)
        if here[-1] != i or len(here) < 2:
            continue
        a, h = boxes[i], heights[i]
        starts = [boxes[here[0]][0]]
        hanging = _item_text_start(elements[here[0]].text, boxes[here[0]])
        if hanging is not None:  # a numbered item's next line hangs under its text, after the number
            starts.append(hanging)
        below = [
            j
            for j in range(len(boxes))
            if centres[j] > centres[i]
            and _t().min_line_gap * h <= boxes[j][1] - a[3] <= _t().max_line_gap * h
            and min(abs(boxes[j][0] - x) for x in starts) <= 0.5 * h
            and boxes[j][2] < a[2]
        ]
        if len(below) != 1:
            continue
        j = below[0]
        there = _line_run(j, boxes, heights, centres)
        if there[0] != j or not _same_size(i, j, elements, heights):
            continue
        if _BRACKET_ITEM.match(elements[j].text):  # "[Index]": an item of its own, its brackets the prose's
            continue
        if ends_code_statement(elements[i].text, elements[j].text):
            continue
        if not same_style(j, i, end=True):
            continue
        if mark is not None and mark(j) is True:  # B starts a list item of its own
            continue
        if not _had_to_wrap(i, j, elements, boxes, heights, boxes[j][0], boxes[j][0]):
            continue
        # one underline's two lines, unless the prose's comma ends A: "sqlite3_prepare()," | "sqlite3_step()"
        link = is_under(i) is True and is_under(j) is True and not elements[i].text.rstrip().endswith((",", ";"))
        # words after prose of another colour just before A on its row (led in), and just after B on its own (inset:
        # the link runs between them)
        led_in = (
            _words_only(elements[i].text, digits=True)
            and _words_only(elements[j].text, digits=True)
            and (
                not elements[i].text.rstrip().endswith(tuple(_PROSE_MARKS))
                or _stray_stop(elements[i].text, is_under(i))
            )
            and not same_style(here[-2], i)
            and boxes[i][0] - boxes[here[-2]][2] <= _t().link_gap * h
        )
        inset = (
            led_in
            and len(there) > 1
            and not same_style(there[1], i)
            and boxes[there[1]][0] - boxes[j][2] <= _t().link_gap * h
        )
        if _LIST_MARKER.match(elements[j].text) or not (
            link or inset or continues(elements[i].text, elements[j].text)
        ):
            continue
        width = {True: 0.0, False: 0.0}
        for k in {*here, *there}:
            width[same_style(k, i)] += boxes[k][2] - boxes[k][0]
        prose = any(  # text of another colour beside them: not a row of tags
            colours[k] is not None and not _same_colour(colours[k], colours[i]) for k in {*here, *there}
        )
        if (
            (link and (inset or (led_in and mark is not None and mark(j) is False)))  # nothing left of B: no "["
            or width[True] < width[False]
            or (prose and not _most_text_around([i, j], boxes, heights, centres, colours))
        ):
            pairs.append((i, j))
    return pairs


def _cell_wraps(
    elements, boxes, heights, centres, colours, is_under=None, mark=None, joined: set[int] = frozenset()
) -> list[tuple[int, int]]:
    """Rule 10 of docs/ocr-grouping.md: a link wrapped in a table's cell (a texinfo index on a phone: "Available" |
    "ciphers" beside "3DES:"). Pairs (i, j) of an underlined line and the underlined line just below it, starting
    where it starts, of one size and colour, that had to wrap (rule 4), where another column (``cell_gap`` away)
    has a link on A's row (on its cell's first row, for a third line) and no text on B's: B's row belongs to A's. A
    link beside the page's bare prose (a side bar's) is no table's, and a column with text on both rows (two one-line
    rows) says nothing. ``is_under``: index → whether the line is underlined (:func:`_link_underlines`); None: never
    asked, no pairs. ``joined``: lines already joined to a line above by the other rules (a link's second line in a
    texinfo header, "Up: <a>Automated" | "Option Processing</a>"), whose row is no cell's first."""
    if is_under is None:
        return []
    n = len(boxes)

    def same_row(i: int, k: int) -> bool:
        return _same_row(i, k, centres, heights)

    def beside(k: int, j: int) -> bool:  # text on line j's row within column k's span
        x0, x1 = boxes[k][0], boxes[k][2]
        return any(m != j and same_row(j, m) and boxes[m][0] < x1 and boxes[m][2] > x0 for m in range(n))

    pairs = []
    partner: dict[int, int] = {}  # a line joined to the one above: the other column's text on its cell's first row
    for i in sorted(range(n), key=lambda k: boxes[k][1]):
        j = _line_below(i, boxes, heights, centres)
        if j is None or (i in joined and i not in partner):
            continue
        a, b, h = boxes[i], boxes[j], (heights[i] + heights[j]) / 2
        if abs(b[0] - a[0]) > 0.5 * h or not _similar_heights(heights[i], heights[j]):
            continue
        if not _ends_in_colour(colours[i], colours[j]) or (mark is not None and mark(j) is True):
            continue
        first, second = elements[i].text.rstrip(), elements[j].text.rstrip()
        if first.endswith(tuple(_PROSE_MARKS)) or _LIST_MARKER.match(second):
            continue

        others = [  # another column's text on A's row (on its cell's first row), none on B's: the geometry first
            k
            for k in ([partner[i]] if i in partner else range(n))
            if k not in (i, j)
            and (i in partner or same_row(i, k))
            and min(abs(boxes[k][0] - a[2]), abs(a[0] - boxes[k][2])) >= _t().cell_gap * h
            and not beside(k, j)
        ]
        if not others or not _had_to_wrap(i, j, elements, boxes, heights, min(a[0], b[0]), max(a[0], b[0])):
            continue
        if not (is_under(i) is True and is_under(j) is True):
            continue
        # a table of links (an index): not a side bar's link beside the page's bare prose
        k = next((k for k in others if is_under(k) is True), None)
        if k is not None:
            pairs.append((i, j))
            partner[j] = k
    return pairs


def _link_underlines(elements, boxes, underlined) -> Callable[[int], bool | None]:
    """Index → whether line ``k``'s words are underlined (``underlined``: box → True / False / None, or None: never
    asked, all None), its box taken without the prose's marks read at its end (:func:`_without_end_mark`: "Bugs,"),
    each line asked once."""
    under: dict[int, bool | None] = {}

    def is_under(k: int) -> bool | None:
        if k not in under:
            under[k] = underlined(_without_end_mark(boxes[k], elements[k].text)) if underlined is not None else None
        return under[k]

    return is_under


def _without_end_mark(box: tuple[float, ...], text: str) -> tuple[float, ...]:
    """``box`` without the share of its width (by advance widths, :data:`_GLYPH_WIDTHS`) of the prose's marks that
    end ``text`` (:data:`_PROSE_MARKS`): a link's "Bugs," read with the prose's comma after it."""
    mark = text[len(text.rstrip(_PROSE_MARKS)) :]
    if not mark or len(mark) == len(text):
        return box
    return (box[0], box[1], box[2] - (box[2] - box[0]) * _advances(mark) / _advances(text), box[3])


@dataclasses.dataclass(frozen=True, slots=True)
class WrapRule:
    """One row of :data:`WRAP_RULES`: where ``holds`` (a condition over a :class:`LinePair`'s named features) is
    true, line A's join to line B below it is ``joins``."""

    name: str
    holds: Callable[[LinePair], bool]
    joins: bool


class LinePair:
    """The named features of line ``i`` (A) above line ``j`` (B) that :data:`WRAP_RULES` tests, each computed when
    a rule first asks for it (``mark``: what stands left of a line, rule 6; ``item_text``: whether a line is a list
    item's text; ``steps``: the screenshot's aligned line pairs, :func:`_tighter_than_pitch`)."""

    def __init__(self, i, j, elements, boxes, heights, colours, display, mark, item_text, steps) -> None:
        self.i, self.j, self.elements, self.boxes, self.heights, self.colours = i, j, elements, boxes, heights, colours
        self.display, self._mark, self._item_text, self.steps = display, mark, item_text, steps
        self.a, self.b, self.h = boxes[i], boxes[j], (heights[i] + heights[j]) / 2
        self.above, self.below = elements[i].text, elements[j].text
        self.left = (self.b[0] - self.a[0]) / self.h  # B's left edge from A's, in line heights

    same_size = functools.cached_property(lambda p: _same_size(p.i, p.j, p.elements, p.heights))
    same_colour = functools.cached_property(lambda p: _ends_in_colour(p.colours[p.i], p.colours[p.j]))
    left_aligned = functools.cached_property(lambda p: abs(p.left) <= _t().align_slack)
    aligned = functools.cached_property(  # left-aligned, centred, further left, or hanging after an item's number
        lambda p: (
            p.left_aligned
            or abs((p.b[0] + p.b[2]) - (p.a[0] + p.a[2])) / 2 / p.h <= _t().align_slack
            or p.left < 0
            or _hangs(p.above, p.a, p.b, p.h)
        )
    )
    fits_own_width = functools.cached_property(lambda p: p.b[2] - p.a[2] - _first_word(p.below, p.b, space=True) >= 0)
    had_to_wrap = functools.cached_property(
        lambda p: _had_to_wrap(p.i, p.j, p.elements, p.boxes, p.heights, min(p.a[0], p.b[0]), max(p.a[0], p.b[0]))
    )
    mark_below = functools.cached_property(lambda p: p._mark(p.j))
    item_text_above = functools.cached_property(lambda p: p._item_text(p.i))
    ends_code = functools.cached_property(lambda p: ends_code_statement(p.above, p.below))
    same_lead = functools.cached_property(lambda p: _same_lead(p.above, p.below))
    field_below = functools.cached_property(
        lambda p: bool(_FIELD.match(p.below)) and not p.above.rstrip().endswith("-")
    )
    text_continues = functools.cached_property(
        lambda p: continues(p.above, p.below, display=p.i in p.display and p.j in p.display)
    )
    tighter_than_pitch = functools.cached_property(
        lambda p: (
            not _LIST_MARKER.match(p.below) and _tighter_than_pitch(p.i, p.j, p.boxes, p.heights, p.colours, p.steps)
        )
    )


#: Rules 1, 2, 4, 5 and 6 (docs/ocr-grouping.md) for line A above line B, in order: the first that holds decides;
#: none: they stay apart.
WRAP_RULES = (
    WrapRule("another font size", lambda p: not p.same_size, False),
    WrapRule("another colour", lambda p: not p.same_colour, False),
    WrapRule("not aligned", lambda p: not p.aligned, False),
    WrapRule("B's first word had room after A on B's own width", lambda p: p.fits_own_width, False),
    WrapRule("B's first word had room in the column", lambda p: not p.had_to_wrap, False),
    WrapRule("B starts a list item of its own", lambda p: p.mark_below is True, False),
    WrapRule(
        "B hangs under A's item text", lambda p: p.left_aligned and p.item_text_above and p.mark_below is False, True
    ),
    WrapRule("A ends a statement of code", lambda p: p.ends_code, False),
    WrapRule("rows of a column: one lead word", lambda p: p.same_lead, False),
    WrapRule("B is a field of its own", lambda p: p.field_below, False),
    WrapRule("the text continues", lambda p: p.text_continues, True),
    WrapRule("closer than the column's pitch", lambda p: p.tighter_than_pitch, True),
)


def wrap_verdict(pair: LinePair, rules: Sequence[WrapRule] = WRAP_RULES) -> WrapRule | None:
    """The first rule of ``rules`` that holds for ``pair`` (it decides), or None (the lines stay apart)."""
    return next((r for r in rules if r.holds(pair)), None)


def _wraps(*args) -> bool:
    """Whether line ``i`` wraps on into line ``j`` below it (:data:`WRAP_RULES`; the arguments: :class:`LinePair`)."""
    rule = wrap_verdict(LinePair(*args))
    return rule is not None and rule.joins


def _tighter_than_pitch(i: int, j: int, boxes, heights, colours, pairs: Sequence[tuple[float, float]] = ()) -> bool:
    """Whether line ``j`` follows line ``i`` closer than the lines of their column follow each other (rule 8 of the
    module docstring). The column's lines start where ``i`` starts and have its size and colour, within
    ``column_reach`` line heights; its steps are from one's middle to the next's (a box's top jitters with its
    words' ascenders) with no other text between them (a nested item). At least ``pitch_lines`` steps besides
    ``i`` to ``j``, all within ``pitch_spread`` line heights of each other (a regular pitch), and ``i`` to ``j``
    at least ``pitch_margin`` line heights shorter than the shortest of them ("API Reference for the attr" |
    "Namespace" in a side bar whose links stand 1.6 line heights apart, its wrapped line 0.9). With no regular pitch
    (a table whose cells wrap), ``i`` to ``j`` at least that much shorter than both the step from the column's line
    above ``i`` and the step to its line below ``j``, with no text at all between those rows (a letter heading), and
    another aligned pair of ``pairs`` (the screenshot's (line height, middle-to-middle step) of aligned line pairs, as
    :func:`_on_pitch` takes them) of their size at that step too (within ``pitch_slack``)."""
    a, h = boxes[i], (heights[i] + heights[j]) / 2
    column = sorted(
        (
            k
            for k in range(len(boxes))
            if abs(boxes[k][0] - a[0]) <= 0.5 * h
            and abs(boxes[k][1] - a[1]) <= _t().column_reach * h
            and _similar_heights(heights[k], h)
            and _same_colour(colours[k], colours[i])
        ),
        key=lambda k: boxes[k][1],
    )

    def between(p, q):  # other text between two lines of the column, over its width (a nested item)
        x0, x1 = a[0] - 0.5 * h, max(boxes[p][2], boxes[q][2])
        return any(
            boxes[p][3] <= (boxes[k][1] + boxes[k][3]) / 2 <= boxes[q][1] and boxes[k][0] < x1 and boxes[k][2] > x0
            for k in range(len(boxes))
            if k not in (p, q)
        )

    def middle(k: int) -> float:  # a box's top jitters with its word's ascenders; its middle far less
        return (boxes[k][1] + boxes[k][3]) / 2

    steps = [
        middle(q) - middle(p)
        for p, q in zip(column, column[1:], strict=False)
        if (p, q) != (i, j) and not between(p, q)
    ]
    step = middle(j) - middle(i)
    if len(steps) >= _t().pitch_lines and max(steps) - min(steps) <= _t().pitch_spread * h:
        return step <= min(steps) - _t().pitch_margin * h
    if i not in column or j not in column or column.index(j) != column.index(i) + 1:
        return False
    at = column.index(i)
    if at == 0 or at + 2 >= len(column):
        return False
    p, q = column[at - 1], column[at + 2]
    if any(
        boxes[p][3] <= middle(k) <= boxes[i][1] or boxes[j][3] <= middle(k) <= boxes[q][1]
        for k in range(len(boxes))
        if k not in (p, i, j, q)
    ):
        return False
    if sum(_near_step(t, step) for t in _steps_of_size(pairs, h)) < 2:  # the short step recurs: a wrap pitch
        return False
    return step <= min(middle(i) - middle(p), middle(q) - middle(j)) - _t().pitch_margin * h
