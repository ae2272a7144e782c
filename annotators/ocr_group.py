"""Element-level grouping of OCR text: the pieces of one line and the lines of one wrapped link, button or heading
become one element. The rules (numbered as here) and what each looks at: docs/ocr-grouping.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from screenmill.annotators.ocr_features import (
    _AMOUNT,
    _CODE_ROW,
    _CODE_TOKEN,
    _CONSOLE,
    _COUNT,
    _MONTH,
    _PROMPT,
    _QUOTED,
    _SHORTCUT,
    _VERSION_TAG,
    END_STOP,
    PairView,
    _boxes_and_heights,
    _colour_count,
    _display_sized,
    _faint_word,
    _join,
    _leads_in,
    _line_below,
    _near_colour,
    _on_pitch,
    _piece_after,
    _piece_before,
    _runs_on,
    _same_backdrop,
    _same_colour,
    _same_row,
    _similar_heights,
    _sizes,
    _starts_a_count,
    _stray_stop,
    continues_on_row,
)
from screenmill.annotators.ocr_thresholds import active as _t
from screenmill.annotators.ocr_wraps import _around_a_link, _cell_wraps, _inline_wraps, _link_underlines, _wraps


def join_pieces(
    elements: Sequence,
    colour_of: Callable[[tuple[float, float, float, float]], np.ndarray | None],
    make: Callable[..., object],
    split_between: Callable[[tuple, tuple], bool] | None = None,
    backdrop: Callable[[tuple, str], np.ndarray | None] | None = None,
    decide: Callable[..., bool] | None = None,
) -> list:
    """Join the pieces of one element's line (docs/ocr-grouping.md, "Pieces of one line").

    Args:
        elements / colour_of / make: as for :func:`group_lines`.
        split_between: called with two pieces' boxes (left, right) that would join: True where ink of another colour
            lies between them (:func:`screenmill.annotators.ocr.other_ink_between`) or an underline ends between them
            (:func:`screenmill.annotators.ocr.underline_ends_between`), the left one ends with a mark of another colour
            (:func:`screenmill.annotators.ocr.mark_after`) or a spaced separator stands alone between them
            (:func:`screenmill.annotators.ocr.glyph_between`), which keeps them apart; None: not checked.
        backdrop: called with a piece's box and ``"left"`` or ``"right"``: the background colour at that end
            (:func:`screenmill.annotators.ocr.backdrop`), or None when it cannot be told; None: inline code is not
            looked for.
        decide: called as ``decide("row", i, j, rule, view)`` for every piece ``i`` and the piece ``j`` right after
            it (rules 1-4's candidates), where ``rule`` is the rules' decision and ``view`` a :class:`PairView`: its
            answer joins them or not (:mod:`screenmill.annotators.ocr_learn`'s model, or a recorder of the pairs);
            None: the rules decide.

    Returns:
        The elements, each run of joined pieces replaced by one element at the place of its first piece.
    """
    n = len(elements)
    if n < 2:
        return list(elements)
    boxes, heights = _boxes_and_heights(elements)
    colours: dict[int, np.ndarray | None] = {}

    def colour(i: int) -> np.ndarray | None:
        if i not in colours:
            colours[i] = colour_of(boxes[i])
        return colours[i]

    ends: dict[tuple[int, str], np.ndarray | None] = {}

    def end(k: int, side: str) -> np.ndarray | None:
        if (k, side) not in ends:
            ends[k, side] = backdrop(boxes[k], side) if backdrop is not None else None
        return ends[k, side]

    def on(k: int | None, side: str, page: np.ndarray) -> bool:
        return k is not None and _same_backdrop(end(k, side), page)

    def inline_code(i: int, j: int) -> bool:  # rule 4: a chip of inline code starts at j or ends at i
        a, b = end(i, "right"), end(j, "left")
        if a is None or b is None or _same_backdrop(a, b):
            return False
        if _COUNT.match(elements[j].text.strip()) and _same_backdrop(end(j, "right"), b):  # a count's badge
            return True
        if _leads_in(elements[i].text) and (on(j, "right", a) or on(_piece_after(j, boxes, heights), "left", a)):
            return True  # prose on the page, then a chip opens j and closes in it or before the next piece
        return _runs_on(elements[j].text) and (
            on(i, "left", b) or on(_piece_before(i, boxes, heights, _t().max_piece_gap), "right", b)
        )  # a chip that opened in i or after the piece before it closes at i's end, then the prose goes on

    heading = _display_sized(heights, _t().heading_ratio)
    sizes = _sizes(elements, heights)
    following: dict[int, int] = {}
    preceding: dict[int, int] = {}

    def rule(i: int, j: int) -> bool:  # rules 1-4 for piece i and the piece j right after it
        gap = (boxes[j][0] - boxes[i][2]) / ((heights[i] + heights[j]) / 2)
        code = inline_code(i, j)
        # a title's version on a tag of its own colour: the title's element holds it ("Workspaces" | "@11.19.1")
        if i in heading and gap <= _t().heading_piece_gap and bool(_VERSION_TAG.match(elements[j].text.strip())):
            return True
        if not (
            continues_on_row(elements[i].text, elements[j].text)
            or (
                i in heading
                and j in heading
                and gap <= _t().heading_piece_gap
                and not _starts_a_count(elements[j].text)
            )
            or code
            or gap < 0  # the detector's two boxes of one line overlap
        ):
            return False
        date = bool(_MONTH.match(elements[i].text)) and elements[j].text[:1].isdigit()
        # a short month's glyphs read paler than its day's; a chip's monospace glyphs paler than the prose's
        if not date and not _same_colour(colour(i), colour(j)) and not (code and _near_colour(colour(i), colour(j))):
            return False
        return not (split_between is not None and boxes[j][0] - boxes[i][2] >= 2 and split_between(boxes[i], boxes[j]))

    view = PairView(elements, boxes, heights, colour, {"end": end, "between": split_between, "heading": heading})
    for i in range(n):
        j = _piece_after(i, boxes, heights, sizes=sizes)
        if j is None or j in preceding:
            continue
        if rule(i, j) if decide is None else decide("row", i, j, rule(i, j), view):
            following[i], preceding[j] = j, i
    for j in range(n):  # a menu item's shortcut or a price's unit, set smaller, paler, a shortcut far to the right
        text = elements[j].text.strip()
        shortcut = bool(_SHORTCUT.match(text))
        if j in preceding or not (shortcut or text.startswith("/")):
            continue
        i = _piece_before(j, boxes, heights, _t().max_shortcut_gap if shortcut else _t().max_piece_gap)
        if i is None or i in following:
            continue
        before = elements[i].text.strip()
        if (shortcut and not _SHORTCUT.match(before)) or (not shortcut and _AMOUNT.match(before)):
            following[i], preceding[j] = j, i
    return _merge(elements, boxes, following, make, " ".join, centre=True)


def join_code_rows(
    elements: Sequence,
    colour_of: Callable[[tuple[float, float, float, float]], np.ndarray | None],
    make: Callable[..., object],
) -> list:
    """Join the tokens of a line of syntax-highlighted code into the line (rule 5 of :func:`join_pieces`).

    A highlighter paints a code line's tokens in several colours ("format_decimal(" | "12345," | "locale='" |
    "de_DE'"), and the colour split cuts it at every change, so each token would name a fragment that cuts a word.
    A row's run of pieces (each following the one before, at most ``code_piece_gap`` line heights apart, heights
    within ``code_height_ratio``: one font) is one line of code when it is painted in ``code_colours``
    colours or more (two after a console's prompt, :data:`_PROMPT`, or where a piece but the last ends by opening a
    bracket: a call whose argument is the next piece, "print(" | "'Zero'"), its text reads as code
    (:data:`_CODE_ROW`: an assignment, a call, a brace, a console prompt, a keyword that starts a statement), and its
    pieces are tokens (at most ``code_token_words`` words each, a string or a comment excepted, and most holding a
    digit, an underscore or punctuation, :data:`_CODE_TOKEN`): prose with an inline link has pieces of many words or
    plain words. The line's text puts a space only where the gap between two pieces is a character's advance or more
    (``code_space``, the advance read from the pieces' widths): "format_decimal(12345, locale='de_DE')", and after
    a prompt however close ("vvv" | "if"). A prompt starts a run: what stands left of it on its row is another
    column's (a side bar's last link).

    Args:
        elements / colour_of / make: as for :func:`group_lines`.

    Returns:
        The elements, each code line's pieces replaced by one element (box the union, click point its centre) at the
        place of its first piece; a list of the others unchanged.
    """
    n = len(elements)
    if n < 2:
        return list(elements)
    boxes, heights = _boxes_and_heights(elements)
    following: dict[int, int] = {}
    texts: dict[int, str] = {}
    prompts = frozenset(k for k in range(n) if _CONSOLE.match(elements[k].text))
    # one font: a link set smaller after a signature ("[source]") is no token of it; a prompt starts its line (what
    # stands left of it is another column's: a side bar's last link)
    for run in _row_runs(boxes, heights, _t().code_piece_gap, _t().code_height_ratio, prompts):
        pieces = [elements[k].text for k in run]
        if len(run) < 2 or any(len(t.split()) > _t().code_token_words and not _QUOTED.match(t) for t in pieces):
            continue  # prose: pieces of many words
        if run[0] not in prompts and 2 * sum(bool(_CODE_TOKEN.search(t)) for t in pieces) < len(run):
            continue  # prose with links: most pieces are plain words (after a prompt: "from attrs import define")
        advance = sum(boxes[k][2] - boxes[k][0] for k in run) / max(1, sum(len(t) for t in pieces))
        text = pieces[0]
        for p, q in zip(run, run[1:], strict=False):  # a prompt is followed by a space however close ("vvv" | "if")
            spaced = boxes[q][0] - boxes[p][2] >= _t().code_space * advance or p in prompts
            text += (" " if spaced else "") + elements[q].text
        # after a console's prompt, or where a piece opens a bracket that the next goes on inside (a call's
        # argument: "print(" | "'Zero'"), a link is no likelier than a token
        opens = any(elements[k].text.rstrip()[-1:] in "([{" for k in run[:-1])
        least = 2 if _PROMPT.match(text) or opens else _t().code_colours
        if not _CODE_ROW.search(text) or _colour_count([colour_of(boxes[k]) for k in run]) < least:
            continue  # not code; or a line of text, or a signature, with a link of another colour
        following.update(zip(run, run[1:], strict=False))
        texts[run[0]] = text
    return _merge(elements, boxes, following, make, " ".join, centre=True, texts=texts)


def _row_runs(
    boxes, heights, max_gap: float | None = None, height_ratio: float = 0.0, lead: frozenset[int] = frozenset()
) -> list[list[int]]:
    """Every row's runs of pieces, left to right, each piece following the one before (:func:`_piece_after`, at most
    ``max_gap`` line heights on; heights within ``height_ratio`` of each other, except after a piece in ``lead``: a
    console's prompt, whose glyphs make a lower box, and which starts its run: what stands left of it is another
    column's); a piece in no run is a run alone."""
    max_gap = _t().max_piece_gap if max_gap is None else max_gap
    before: dict[int, int] = {}
    for i in range(len(boxes)):
        j = _piece_after(i, boxes, heights, max_gap, any_height=i in lead)
        if j is None or j in lead:
            continue
        if i not in lead and min(heights[i], heights[j]) < height_ratio * max(heights[i], heights[j]):
            continue
        if j not in before or boxes[i][2] > boxes[before[j]][2]:
            before[j] = i  # two pieces ending before j: the nearer one is on its row
    after = {i: j for j, i in before.items()}
    runs = []
    for start in range(len(boxes)):
        if start in before:
            continue
        run = [start]
        while run[-1] in after and after[run[-1]] not in run:
            run.append(after[run[-1]])
        runs.append(run)
    return runs


def group_lines(
    elements: Sequence,
    colour_of: Callable[[tuple[float, float, float, float]], np.ndarray | None],
    make: Callable[..., object],
    marked: Callable[[tuple[float, float, float, float]], bool | None] | None = None,
    ruled: Callable[[tuple, tuple], bool] | None = None,
    underlined: Callable[[tuple[float, float, float, float]], bool | None] | None = None,
    decide: Callable[..., bool] | None = None,
) -> list:
    """Join the wrapped lines of one element (docs/ocr-grouping.md).

    Args:
        elements: text elements with ``text``, ``box`` (x0, y0, x1, y1), ``point`` and ``confidence``, in one image's
            pixels (e.g. :class:`screenmill.annotators.ocr.TextElement`).
        colour_of: the glyph colour (RGB array; or several stacked, which must each match) of the text in a box, or
            None when it cannot be told.
        make: builds a joined element from keyword arguments ``text``, ``box``, ``point``, ``confidence``.
        marked: what stands just left of the line in a box (rule 6): True for a list marker (a bullet), False for
            nothing, None for anything else; None (the argument): never asked.
        ruled: called with two boxes of a row (left, right): True where a vertical rule stands between them
            (:func:`screenmill.annotators.ocr.rule_between`), so the right one is in another column and does not count
            against rule 3; None: never asked.
        underlined: whether the text in a box is underlined (:func:`screenmill.annotators.ocr.underlined`: True, False,
        or None
            when it cannot be told), which rule 7 reads as part of the style (a grey underlined link in black prose
            reads a shade apart) and rule 10 as a link's; None: never asked.
        decide: called as ``decide("line", i, j, rule, view)`` for every line ``i`` and the line ``j`` just below it
            (rules 1-6's candidates, top down), where ``rule`` is those rules' decision and ``view`` a
            :class:`PairView`: its answer joins them or not (rules 7-10 still follow); None: the rules decide.

    Returns:
        The elements, each run of joined lines replaced by one element at the place of its first line; an input
        with fewer than two elements is returned as a list unchanged.
    """
    n = len(elements)
    if n < 2:
        return list(elements)
    boxes, heights = _boxes_and_heights(elements)
    centres = [(b[1] + b[3]) / 2 for b in boxes]
    colours = [colour_of(b) for b in boxes]
    display = _display_sized(heights)

    def same_row(i: int, k: int) -> bool:
        return _same_row(i, k, centres, heights)

    def clearance(i: int, side: int) -> float:
        gaps = [
            ((boxes[k][0] - boxes[i][2]) if side > 0 else (boxes[i][0] - boxes[k][2]), k)
            for k in range(n)
            if k != i
            and same_row(i, k)
            and (boxes[k][0] >= boxes[i][2] - 1 if side > 0 else boxes[k][2] <= boxes[i][0] + 1)
        ]
        for gap, k in sorted(gaps):  # the nearest text not across a rule (another column's)
            if gap / heights[i] >= _t().row_clearance:
                break
            if ruled is None or not (ruled(boxes[i], boxes[k]) if side > 0 else ruled(boxes[k], boxes[i])):
                return gap / heights[i]
        return float("inf")

    def text_right_of(i: int) -> bool:  # other text anywhere to the right of line i on its row (a table row)
        return any(k != i and same_row(i, k) and boxes[k][0] >= boxes[i][2] - 1 for k in range(n))

    marks: dict[int, bool | None] = {}

    def mark(i: int) -> bool | None:
        if i not in marks:
            marks[i] = marked(boxes[i]) if marked is not None else None
        return marks[i]

    below = [_line_below(i, boxes, heights, centres, _t().loose_line_gap) for i in range(n)]
    steps: list[tuple[float, float]] = []  # (line height, step in px to the line below) of aligned line pairs
    for i, j in enumerate(below):
        if (
            j is not None
            and abs(boxes[j][0] - boxes[i][0]) <= 0.5 * heights[i]
            and _similar_heights(heights[i], heights[j], _t().pitch_heights)
        ):
            steps.append((heights[i], centres[j] - centres[i]))

    # a line with no descending glyph ends at its baseline: at the pitch, the line below may stand a descender further
    # off than loose_line_gap from its box ("If a time zone is omitted, a timezone-naive" | "datetime is returned.")
    sizes = _sizes(elements, heights)
    deep = [(b[0], b[1], b[2], b[3] + sz - h) for b, sz, h in zip(boxes, sizes, heights, strict=True)]
    for i in range(n):
        if below[i] is None:
            j = _line_below(i, deep, sizes, centres, _t().loose_line_gap)
            if j is not None and _on_pitch(i, j, centres, heights, steps):
                below[i] = j

    is_under = _link_underlines(elements, boxes, underlined) if underlined is not None else None

    def link_then_colon(i: int) -> bool:  # an underlined link, then the prose's colon: an index entry ends
        return is_under is not None and elements[i].text.rstrip().endswith(":") and is_under(i) is True

    following: dict[int, int] = {}
    preceding: dict[int, int] = {}

    def item_text(i: int) -> bool:  # line i is a list item's text: it has a bullet, or hangs under such a line
        return mark(i) is True or (mark(i) is False and i in preceding and item_text(preceding[i]))

    def rule(i: int, j: int) -> bool:  # rules 1-6 for line i and the line j just below it
        h = (heights[i] + heights[j]) / 2
        if boxes[j][1] - boxes[i][3] > _t().max_line_gap * h and not (
            _on_pitch(i, j, centres, heights, steps) and not text_right_of(i) and not text_right_of(j)
        ):
            return False  # a loose gap: only at the screenshot's own line pitch, with no text further right (a table)
        if not _wraps(i, j, elements, boxes, heights, colours, display, mark, item_text, steps):
            return False
        if link_then_colon(i):
            return False
        return not (clearance(i, +1) < _t().row_clearance or clearance(j, -1) < _t().row_clearance)

    cues = {"centres": centres, "display": display, "mark": mark, "item_text": item_text, "steps": steps}
    cues |= {"clearance": clearance, "under": is_under}
    view = PairView(elements, boxes, heights, colours.__getitem__, cues)
    for i in sorted(range(n), key=lambda k: boxes[k][1]):  # top down: a line's own item is known before it
        j = below[i]
        if j is None or j in preceding:
            continue
        if rule(i, j) if decide is None else decide("line", i, j, rule(i, j), view):
            following[i], preceding[j] = j, i
    for chain in _chains(following):
        if _around_a_link(chain, elements, boxes, heights, centres, colours):
            for k in chain[:-1]:
                preceding.pop(following.pop(k))
    shown = list(elements)
    for i, j in _inline_wraps(elements, boxes, heights, centres, colours, is_under, mark):
        if i not in following and j not in preceding:
            following[i], preceding[j] = j, i
            if is_under is not None and _stray_stop(elements[i].text, is_under(i)):  # "Reporting." | "Bugs,"
                e = elements[i]
                shown[i] = make(
                    text=END_STOP.sub("", e.text.rstrip()), box=e.box, point=e.point, confidence=e.confidence
                )
    for i, j in _cell_wraps(elements, boxes, heights, centres, colours, is_under, mark, set(preceding)):
        if i not in following and j not in preceding:
            following[i], preceding[j] = j, i
    return _merge(shown, boxes, following, make, _join, centre=False)


def join_long_lines(
    elements: Sequence,
    colour_of: Callable[[tuple[float, float, float, float]], np.ndarray | None],
    make: Callable[..., object],
    max_chars: int,
) -> list:
    """Join the pieces of a line of prose longer than ``max_chars`` characters into one element: the line.

    The detector and the gap split cut a long line of prose into pieces at wide word spaces (justified text, a
    command's synopsis: "THIS SOFTWARE IS PROVIDED BY" | "THE AUTHOR \"AS IS\" AND ..."), and each piece would name a
    fragment of the line. The DOM labels give such a line no label at all (``max_text_chars``: no one quotes it whole
    in an instruction), so its pieces are joined back into the line they are, which then gives no label either
    (:func:`screenmill.annotators.ocr_producer.elements_to_labels`). A row's run is its pieces each following the one
    before (rule 1 of :func:`join_pieces`: same size, at most ``max_piece_gap`` line heights apart); the prose is
    the colour of its longest piece (or, for a word of up to ``faint_word`` letters, a shade of it however far: its
    few thin strokes read paler), and pieces of another colour (a link, as the DOM cuts its lines at links) cut the run
    into segments. Only a segment of prose over ``max_chars`` characters is joined: a shorter one is a line the DOM
    labels too, and a link keeps its own label.

    Args:
        elements: text elements with ``text``, ``box``, ``point`` and ``confidence`` (after :func:`group_lines`: a
            wrapped element spans two rows and is in no run).
        colour_of: the glyph colour of the text in a box, or None when it cannot be told (such a piece cuts a run).
        make: builds a joined element from keyword arguments ``text``, ``box``, ``point``, ``confidence``.
        max_chars: the longest line of prose left in pieces.

    Returns:
        The elements, each joined segment replaced by one element (box the union, click point its centre) at the place
        of its first piece; a list of the others unchanged.
    """
    n = len(elements)
    if n < 2:
        return list(elements)
    boxes, heights = _boxes_and_heights(elements)
    following: dict[int, int] = {}
    for run in _row_runs(boxes, heights):
        if len(run) < 2 or len(_join([elements[k].text for k in run])) <= max_chars:
            continue
        colours = [colour_of(boxes[k]) for k in run]
        prose = colours[max(range(len(run)), key=lambda q: len(elements[run[q]].text))]
        segment: list[int] = []
        for q in range(len(run) + 1):
            if q < len(run) and (
                _same_colour(colours[q], prose) or _faint_word(elements[run[q]].text, colours[q], prose)
            ):
                segment.append(run[q])
                continue
            if len(segment) > 1 and len(_join([elements[k].text for k in segment])) > max_chars:
                following.update(zip(segment, segment[1:], strict=False))
            segment = []
    return _merge(elements, boxes, following, make, _join, centre=True)


def _chains(following: dict[int, int]) -> list[list[int]]:
    """The chains ``i → following[i] → …`` of two or more, each from its first element."""
    after = set(following.values())
    chains = []
    for i in following:
        if i in after:
            continue
        chain = [i]
        while chain[-1] in following:
            chain.append(following[chain[-1]])
        chains.append(chain)
    return chains


def _merge(
    elements, boxes, following: dict[int, int], make, join: Callable, centre: bool, texts: dict[int, str] | None = None
) -> list:
    """The elements with each chain ``i → following[i] → …`` replaced by one element made at its first one's place:
    text ``texts[i]`` where given, else ``join`` of the texts, box the union, click point the box centre (``centre``)
    or the first one's, confidence the lowest."""
    after = set(following.values())
    chains = {chain[0]: chain for chain in _chains(following)}
    out = []
    for i in range(len(elements)):
        if i in after:
            continue
        chain = chains.get(i)
        if chain is None:
            out.append(elements[i])
            continue
        box = tuple(f(boxes[k][c] for k in chain) for c, f in enumerate((min, min, max, max)))
        out.append(
            make(
                text=texts[i] if texts and i in texts else join([elements[k].text for k in chain]),
                box=box,
                point=((box[0] + box[2]) / 2, (box[1] + box[3]) / 2) if centre else elements[i].point,
                confidence=min(elements[k].confidence for k in chain),
            )
        )
    return out
