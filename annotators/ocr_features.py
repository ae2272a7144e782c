"""The named features the OCR grouping's rules (:mod:`screenmill.annotators.ocr_group`,
:mod:`screenmill.annotators.ocr_wraps`) and the learned join (:mod:`screenmill.annotators.ocr_model`) share: text cues
(does a line read on into the next?), sizes, colours, alignment, line pitch, glyph widths (docs/ocr-grouping.md)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

import numpy as np
from screenmill.annotators.ocr_thresholds import active as _t

_DESCENDS = re.compile(r"[gjpqyQ()\[\]{}|@$]")


#: Words a line does not end on unless the sentence goes on (lower-case, as compared).
FUNCTION_WORDS = frozenset("a an the of to and or for with in on at by from as into your our its is are be &".split())


#: Words a line of prose (``prose_words`` or more) does not end on unless the sentence goes on, as written: the
#: determiners and prepositions :data:`FUNCTION_WORDS` leaves out ("... Foundation; with no" | "Invariant Sections").
#: Only prose: "Say no" is a button's label.
_OPEN_WORDS = frozenset(
    "no not that than this these those which whose their his her each every any some via onto without within between"
    " through".split()
)


_MONTH = re.compile(r"^(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?$", re.IGNORECASE)


#: An acronym starting a line, no label's ("MPFR in two ways:", "SQL. Type in SQL statements", not "API:" nor a line
#: that is only "API.").
_ACRONYM = re.compile(r"^[A-Z][A-Z0-9]+\b(?!:)(?!\.$)")


#: A year starting a line (a date wrapped after its month: "last updated 19 September" | "2022, of The GNU ...").
_YEAR = re.compile(r"^\d{4}\b")


_SECTION = re.compile(r"^\d+(\.\d+)*\.$|^\d+(\.\d+)+$")


#: A numbered item's start: a dotted section number then a word ("3.5.1. Interpreter", "1.2.4 Command", "2. Setup"),
#: or a chapter's bare number then a capitalised word (texinfo's "1 Measuring Program Resource Use").
_NUMBERED = re.compile(r"^(\d+\.(\d+\.)*\d*|\d+(\.\d+)+)\s+\S|^\d{1,2}\s+[A-Z][a-z]")


#: A keyboard shortcut as a menu shows it beside its item: modifiers then a key ("Ctrl+X", "Ctrl+Shift+V", "⌘C").
_SHORTCUT = re.compile(
    r"^((ctrl|control|shift|alt|option|opt|cmd|command|meta|super|win|fn)\s*[+-]\s*|[⌘⌥⇧⌃]\s*)+"
    r"([a-z0-9]|f\d{1,2}|del|delete|enter|return|tab|esc|space|backspace|home|end|pgup|pgdn|ins|insert|up|down|left"
    r"|right|[\[\]\\/;',.=`+-])$",
    re.IGNORECASE,
)


#: A currency amount ("$24", "€ 9.99") and the unit after it ("/ month").
_AMOUNT = re.compile(r"^[$€£¥₹]\s?\d[\d.,]*$")


_LIST_MARKER = re.compile(r"^(\d+(\.\d+)*\.?|[•·▪◦*]|\(?[a-zA-Z0-9]\))\s*\S")


#: What reads as code rather than prose: an assignment, a call (a name and its parenthesis), a comment, a brace,
#: a member or scope access.
_CODE = re.compile(r"[=;{}]|\w[([]|/\*|\*/|->|::")


#: A list item's number or letter and the space after it, at the start of its first line ("6. take one of").
_ITEM_MARKER = re.compile(r"^(\d+(\.\d+)*\.|\(?[a-zA-Z0-9]\))\s+(?=\S)")


#: A field's name starting a line ("Date: Thu, 02 Mar", "Subject: flex"): the line is a field of its own.
_FIELD = re.compile(r"^[A-Z][A-Za-z]*(-[A-Za-z]+)*:\s+\S")


#: A release's version on a tag after a title ("Workspaces" | "@11.19.1", "Babel" | "v2.18.0"): dotted numbers.
_VERSION_TAG = re.compile(r"^[@vV]?\d+(\.\d+){1,3}([-+][\w.]+)?$")


#: A count in a badge after a tab or link's name ("Issues" | "37", "Inbox" | "1.2k").
_COUNT = re.compile(r"^\d[\d,.]*[kKmM+]?$")


#: Punctuation that may stand at a word's ends in prose (:func:`_words_only`).
_EDGE_PUNCTUATION = "\"'()[]{}.,;:!?"


#: A spaced dash between words of prose ("string-tr! - convert characters").
_DASHES = frozenset("-–—")


#: A bracketed item alone ("[Index]" of a texinfo header's "[Contents][Index]").
_BRACKET_ITEM = re.compile(r"^\[[^\[\]]+\]$")


#: The prose's marks that end a link's text where they are read with it ("Bugs,": :func:`_inline_wraps`).
_PROSE_MARKS = ",;:."


#: A full stop read right after a letter at the end of a text: the end of a link's underline misread (the reading drops
#: it where the piece ends with a letter's ink, :func:`screenmill.annotators.ocr._no_stop`; the grouping where an
#: underlined link wraps on, :func:`_stray_stop`).
END_STOP = re.compile(r"(?<=[^\W\d_])\.$")


#: A line of code that is a comment ("// Creates a Buffer of length 10.", "# the default").
_COMMENT = re.compile(r"^\s*(//|#)\s")


#: A Python console's prompts (">>>" is often read "vvv") ...
_CONSOLE_PROMPTS = r">>>|\.\.\.|[vV]{3}"


#: ... one read alone (its low glyphs make a lower box than the code after it) ...
_CONSOLE = re.compile(rf"^({_CONSOLE_PROMPTS})$")


#: ... and a console's or a shell's prompt starting a line.
_PROMPT = re.compile(rf"^({_CONSOLE_PROMPTS}|\$|%)\s")


#: A line of code: an assignment, a call, a brace, a console or shell prompt, a keyword that starts a statement.
_CODE_ROW = re.compile(
    rf"[=;{{}}]|\w[([]|->|::|{_PROMPT.pattern}|^(import|from|def|class|return|const|let|var|function|if|for)\s"
)


#: A token of code: it holds a digit, an underscore or punctuation (a plain word is prose's as much as code's).
_CODE_TOKEN = re.compile(r"[\d_()\[\]{}=.,:;'\"<>+*/%-]")


#: A code line's string or comment, which may hold many words.
_QUOTED = re.compile(r"^\s*(['\"“‘]|#|//)")


_OPENING = "\"'“‘«("


_CLOSING = "\"'”’»)"


#: A line that starts in the middle of a text: with a comma, a semicolon or a closing bracket, or an optional
#: argument's "[," (a signature wrapped: "fs.readFile(path" | "[, options], callback)").
_MID_TEXT = re.compile(r"^\s*([,;)\]}]|\[,)")


def continues(first: str, second: str, display: bool = False, single_words: bool = False) -> bool:
    """True when the text ``second`` reads as the continuation of ``first`` (rule 5, docs/ocr-grouping.md);
    ``display``: both lines are set in display type (a heading's title-case words continue it); ``single_words``: a
    lower-case single word continues a single word too (the two lines are known to be one link's)."""
    words = first.split()
    if words and _MONTH.match(words[-1]) and _YEAR.match(second):  # a date wraps: "19 September" | "2022, of ..."
        return True
    if _LIST_MARKER.match(second):
        return False
    if display or _NUMBERED.match(first) or first.endswith("-") or (words and words[-1].casefold() in FUNCTION_WORDS):
        return True
    if len(words) >= _t().prose_words and words[-1] in _OPEN_WORDS:  # "... Foundation; with no" | "Invariant Sections"
        return True
    # A lower-case start alone does not join two single words: in a list of names ("Contributions" | "libexslt", a
    # file tree's ".github" | "docs", an API's "assert.fail()" | "assert.ok()") each is an item of its own.
    lone = len(words) == 1 and len(second.split()) == 1 and not single_words
    if second.lstrip(_OPENING)[:1].islower() and not lone:
        return True
    if _MID_TEXT.match(second):  # nothing starts with a comma or a closing bracket: "fs.read(fd" | "[, buffer])"
        return True
    if len(words) >= _t().prose_words and words[-1].isalpha() and words[-1].islower() and _ACRONYM.match(second):
        return True
    # a sentence of prose ended and the paragraph goes on with the next one, which had to wrap (rule 4)
    if len(words) >= _t().prose_words and first.rstrip(_CLOSING)[-1:] in ".?!" and len(second.split()) >= 2:
        return True
    # a sentence of prose runs on across the wrap and ends on the next line, whatever that starts with ("... Vern
    # Paxson, Will" | "Estes and John Millaway."): a list's items rarely end with a full stop
    ends = first.rstrip(_CLOSING)[-1:], second.rstrip(_CLOSING)[-1:]
    return len(words) >= _t().prose_words and ends[0] not in ".?!:;" and ends[1] in ".?!"


def ends_code_statement(first: str, second: str) -> bool:
    """True when the line ``first`` ends a statement of code, so the line ``second`` below starts another: ``first``
    ends with ``;``, ``{`` or ``}``, or it is a comment (``//`` or ``#`` then a space) and ``second`` is not, or it
    ends with ``)``, ``]`` or ``*/`` and both lines read as code (:data:`_CODE`: an assignment, a call or index, a
    comment, a brace). A wrapped line of prose ending with ``)`` ("the size (in bytes)" | "is returned") goes on in
    no code, so it still joins."""
    end = first.rstrip()
    if end.endswith((";", "{", "}")):
        return True
    comment = _COMMENT.match(first)
    if comment and not second.lstrip().startswith(comment.group(1)):  # a comment line, then code
        return True
    return end.endswith((")", "]", "*/")) and bool(_CODE.search(first)) and bool(_CODE.search(second))


def _leads_in(text: str) -> bool:
    """Whether a piece of prose ends as a sentence that goes on into what follows: its last word is in lower case, a
    function word ("A", "the") or ends with a colon ("Class:"). A menu bar's or a tab row's items are capitalised."""
    words = text.split()
    return bool(words) and (words[-1][:1].islower() or words[-1].casefold() in FUNCTION_WORDS or words[-1][-1] == ":")


def _runs_on(text: str) -> bool:
    """Whether a piece of prose starts as the rest of a sentence: in lower case, or with punctuation (", Python's")."""
    first = text.lstrip()[:1]
    return first.islower() or first in ",.;:)"


def continues_on_row(first: str, second: str) -> bool:
    """True when the piece ``second`` reads as the continuation of the piece ``first`` on one line (rule 3 of
    :func:`join_pieces`)."""
    if _MONTH.match(first) and second[:1].isdigit():
        return True
    if (_SECTION.match(first) or _NUMBERED.match(first)) and second[:1].isalpha():
        return True
    if first.endswith((",", "-")):
        return True
    return not _LIST_MARKER.match(second) and second.lstrip(_OPENING)[:1].islower()


def _display_sized(heights: Sequence[float], ratio: float | None = None) -> set[int]:
    """The elements set in display type: at least ``ratio`` (``display_ratio``) times the screenshot's median
    line height."""
    ratio = _t().display_ratio if ratio is None else ratio
    if len(heights) < 3:
        return set()
    median = float(np.median(heights))
    return {i for i, h in enumerate(heights) if h >= ratio * median}


def _colour_count(colours: Sequence[np.ndarray | None]) -> int:
    """How many distinct glyph colours (:func:`_same_colour` apart) the known ``colours`` hold."""
    distinct: list[np.ndarray] = []
    for c in colours:
        if c is not None and not any(_same_colour(c, d) for d in distinct):
            distinct.append(c)
    return len(distinct)


def _starts_a_count(text: str) -> bool:
    """Whether a piece starts with a number: the next item of a row of counts ("4 Branches" | "27 Tags"), not the
    next word of a heading."""
    return text.lstrip()[:1].isdigit()


def _piece_before(j: int, boxes, heights, max_gap: float) -> int | None:
    """The nearest piece ending before piece ``j`` starts on its row (``j`` set no smaller than
    ``min_shortcut_height`` of it and no larger, centres within ``row_centre`` line heights), at most
    ``max_gap`` line heights away."""
    b = boxes[j]
    best = None
    for i, a in enumerate(boxes):
        if i == j or a[2] > (b[0] + b[2]) / 2:
            continue
        if not _t().min_shortcut_height * heights[i] <= heights[j] <= heights[i] / _t().min_height_ratio:
            continue
        if not _follows_on_row(a, b, heights[i], max_gap):
            continue
        if best is None or a[2] > boxes[best][2]:
            best = i
    return best


def _boxes_and_heights(elements: Sequence) -> tuple[list[tuple[float, ...]], list[float]]:
    """The elements' boxes as float tuples and their heights (never 0: they divide)."""
    boxes = [tuple(float(v) for v in e.box) for e in elements]
    return boxes, [max(b[3] - b[1], 1e-6) for b in boxes]


def _sizes(elements: Sequence, heights: Sequence[float]) -> list[float]:
    """The heights to compare for two pieces' font size: a text with no glyph that descends below the baseline
    ("GNU", "Standards") has a box about a descender shorter than one of its size with one ("Coding": 69 against 105
    px), so its height counts ``descender_allowance`` times."""
    return [
        h * (1.0 if _DESCENDS.search(e.text) else _t().descender_allowance)
        for e, h in zip(elements, heights, strict=True)
    ]


def _same_size(i: int, j: int, elements, heights) -> bool:
    """Lines ``i`` and ``j`` are set in one font size (rule 1 of :func:`group_lines`): their heights are similar as
    they are, or once a line with no descending glyph counts a descender taller (:func:`_sizes`: a paragraph's last
    line "condition occurred." under "This value means that an out-of-memory"; a link's second line in code type,
    "comsatd" under "Configuring")."""
    a, b = _sizes([elements[i], elements[j]], [heights[i], heights[j]])
    return _similar_heights(heights[i], heights[j]) or _similar_heights(a, b)


def _similar_heights(a: float, b: float, ratio: float | None = None) -> bool:
    """Same font size: the smaller height at least ``ratio`` (``min_height_ratio``) of the larger."""
    ratio = _t().min_height_ratio if ratio is None else ratio
    return min(a, b) / max(a, b) >= ratio


def _same_backdrop(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Two background colours are one (both known, no channel ``chip_contrast`` or more apart)."""
    if a is None or b is None:
        return False
    return float(np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)).max()) < _t().chip_contrast


def _same_colour(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Same style: both glyph colours known and within ``max_colour_distance`` (summed RGB), or within
    ``max_shade_distance`` where one is a shade of the other (:func:`_shades`); colours given as several stacked
    RGB rows (``colour_of``'s) must match row by row."""
    if a is None or b is None:
        return False
    a2, b2, d = _colour_distances(a, b)
    return bool(np.all((d <= _t().max_colour_distance) | (_shades(a2, b2) & (d <= _t().max_shade_distance))))


def _near_colour(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Both glyph colours known and within ``chip_shade_distance`` (summed RGB), row by row, whatever the
    hue: inline code's thinner monospace glyphs on a chip read a little paler and warmer than the prose round them."""
    return a is not None and b is not None and bool(np.all(_colour_distances(a, b)[2] <= _t().chip_shade_distance))


def _colour_distances(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The colours as stacked RGB rows (float) and their summed RGB distances, row by row."""
    a2 = np.atleast_2d(np.asarray(a, dtype=np.float64))
    b2 = np.atleast_2d(np.asarray(b, dtype=np.float64))
    return a2, b2, np.abs(b2 - a2).sum(axis=-1)


def _ends_in_colour(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Whether line ``b`` can end the text that line ``a`` starts, by colour: ``a``'s colours (its words' and all its
    ink's, :func:`_same_colour`) match ``b``'s words' colour (its first row). A mark of another colour at ``b``'s end
    is the prose's, after the element ends there: the black full stop after a blue link wrapped from the line above,
    "the Expat home" | "page.". One at ``a``'s end still keeps the two apart: the element ended on ``a``'s line."""
    return _same_colour(a, b) or (b is not None and _same_colour(a, np.atleast_2d(np.asarray(b))[:1]))


def _shades(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per row of two ``(n, 3)`` RGB arrays: whether one colour is a shade of the other, as a short word's few glyphs
    read paler or darker than a long piece's: lighter or darker alike in R, G and B (within ``shade_spread``), or
    one mixed toward white or black (a saturated blue's anti-aliased glyphs, (0, 0, 238) read as (39, 39, 240): its
    red and green rise, its blue cannot), no channel more than half of ``shade_spread`` off that mix."""
    diff = b - a
    out = np.ptp(diff, axis=-1) <= _t().shade_spread
    for x, y in ((a, b), (b, a)):
        for target in (255.0, 0.0):
            axis = target - x
            t = ((y - x) * axis).sum(axis=-1) / np.maximum((axis * axis).sum(axis=-1), 1e-9)
            t = np.clip(t, 0.0, 1.0)[:, None]
            out |= np.abs(y - x - t * axis).max(axis=-1) <= _t().shade_spread / 2
    return out


def _piece_after(
    i: int, boxes, heights, max_gap: float | None = None, any_height: bool = False, sizes=None
) -> int | None:
    """The nearest piece starting right after piece ``i`` on its row (rule 1 of :func:`join_pieces`; at most
    ``max_gap`` line heights after it; ``any_height``: of any size, measured in the larger line height; ``sizes``:
    the heights compared for the size, :func:`_sizes`, else ``heights``)."""
    max_gap = _t().max_piece_gap if max_gap is None else max_gap
    a = boxes[i]
    sizes = heights if sizes is None else sizes
    best = None
    for j, b in enumerate(boxes):
        if j == i or b[0] < (a[0] + a[2]) / 2:
            continue
        if not any_height and not _similar_heights(sizes[i], sizes[j]):
            continue
        h = max(heights[i], heights[j]) if any_height else (heights[i] + heights[j]) / 2
        if not _follows_on_row(a, b, h, max_gap):
            continue
        if best is None or b[0] < boxes[best][0]:
            best = j
    return best


def _follows_on_row(a: tuple[float, ...], b: tuple[float, ...], h: float, max_gap: float) -> bool:
    """Box ``b`` goes on along box ``a``'s row: vertical centres within ``row_centre`` line heights ``h``, and
    ``b`` starts from ``min_piece_gap`` (a slight overlap) to ``max_gap`` line heights after ``a`` ends."""
    return (
        abs((a[1] + a[3]) - (b[1] + b[3])) / 2 <= _t().row_centre * h
        and _t().min_piece_gap * h <= b[0] - a[2] <= max_gap * h
    )


def _join(texts: Sequence[str]) -> str:
    """Lines joined by a space; after a hyphen ending a word, without one (a compound wrapped at its hyphen)."""
    out = ""
    for t in texts:
        out = out + t if out.endswith("-") and out[-2:-1].isalpha() else (f"{out} {t}" if out else t)
    return out


@dataclasses.dataclass(frozen=True, slots=True)
class PairView:
    """What a ``decide`` callback of :func:`join_pieces` or :func:`group_lines` sees of one screenshot's pieces: the
    elements, their boxes and heights (as the rules use them), ``colour(k)``: piece ``k``'s glyph colour (or None),
    and the other cues the rules read, by name (row pairs: ``end``, ``between``, ``heading``; line pairs:
    ``centres``, ``display``, ``mark``, ``item_text``, ``steps``, ``clearance``, ``under``)."""

    elements: Sequence
    boxes: list
    heights: list
    colour: Callable[[int], np.ndarray | None]
    cues: dict


def _stray_stop(text: str, under: bool | None) -> bool:
    """Whether an underlined link's line ends in a lone "." read from its underline's end after a letter ("Reporting."
    for "Reporting" at the end of a texinfo header's row, its link wrapping on: "Previous: <a>Reporting" | "Bugs</a>,
    Up: ..."): no full stop ends a link that goes on."""
    return under is True and END_STOP.search(text.rstrip()) is not None


def _faint_word(text: str, colour: np.ndarray | None, prose: np.ndarray | None) -> bool:
    """A word of at most ``faint_word`` characters whose glyph colour is a shade of ``prose``'s however far (its
    few thin strokes read paler than a long piece's: "to" at 63 in prose read at 28)."""
    if len(text.strip()) > _t().faint_word or colour is None or prose is None:
        return False
    a = np.atleast_2d(np.asarray(prose, dtype=np.float64))
    b = np.atleast_2d(np.asarray(colour, dtype=np.float64))
    return bool(np.all(_shades(a, b)))


def _same_row(i: int, k: int, centres, heights) -> bool:
    """Whether line ``k``'s vertical centre lies within half of line ``i``'s height of ``i``'s."""
    return abs(centres[i] - centres[k]) < 0.5 * heights[i]


def _words_only(text: str, digits: bool = False) -> bool:
    """Whether ``text`` is words of prose: each token, its surrounding punctuation aside, letters (a hyphen, an
    apostrophe or a slash inside: "Import/Export") - no code ("attrs.field", "(0)"), no number; ``digits``: a token
    may hold digits too where it holds a letter (a node's name, "faq-80")."""
    tokens = [t.strip(_EDGE_PUNCTUATION) for t in text.split() if t not in _DASHES]

    def word(t: str) -> bool:
        bare = t.replace("-", "").replace("'", "").replace("/", "")
        return bare.isalpha() or (digits and bare.isalnum() and any(c.isalpha() for c in bare))

    return bool(tokens) and all(t and word(t) for t in tokens)


def _line_run(i: int, boxes, heights, centres, gap: float | None = None) -> list[int]:
    """The pieces of piece ``i``'s line of text, left to right: those on its row reached from it through gaps under
    ``gap`` line heights (a side bar or a second column further off is another line)."""
    gap = _t().inline_run_gap if gap is None else gap
    row = sorted((k for k in range(len(boxes)) if _same_row(i, k, centres, heights)), key=lambda k: boxes[k][0])
    at = row.index(i)
    lo = hi = at
    while lo > 0 and boxes[row[lo]][0] - boxes[row[lo - 1]][2] < gap * heights[i]:
        lo -= 1
    while hi + 1 < len(row) and boxes[row[hi + 1]][0] - boxes[row[hi]][2] < gap * heights[i]:
        hi += 1
    return row[lo : hi + 1]


def _on_pitch(i: int, j: int, centres, heights, steps: list[tuple[float, float]]) -> bool:
    """Whether line ``j`` stands below line ``i`` at the screenshot's line pitch for their size: the step (middle to
    middle, in px) the most aligned line pairs of that size (heights within ``pitch_heights``) share, within
    ``pitch_slack`` of it, held by at least ``pitch_pairs`` of them (``i`` to ``j`` among them). A paragraph's
    or an item's gap adds its margin to the pitch."""
    step, same = centres[j] - centres[i], _steps_of_size(steps, heights[i])
    if len(same) < _t().pitch_pairs:
        return False
    count, pitch = max((sum(_near_step(t, s) for t in same), -s) for s in same)
    return count >= _t().pitch_pairs and _near_step(step, -pitch)


def _steps_of_size(steps: Sequence[tuple[float, float]], h: float) -> list[float]:
    """The steps of ``steps`` ((line height, middle-to-middle step) of aligned line pairs) whose lines are of height
    ``h``'s size (within ``pitch_heights``)."""
    return [s for hk, s in steps if _similar_heights(hk, h, _t().pitch_heights)]


def _near_step(a: float, b: float) -> bool:
    """Whether step ``a`` is step ``b`` within ``pitch_slack`` of it (2 px at least)."""
    return abs(a - b) <= max(2.0, _t().pitch_slack * b)


def _item_text_start(text: str, box) -> float | None:
    """Where a numbered item's text starts on its first line (``text`` in ``box``), after its number and the space
    (:data:`_ITEM_MARKER`, at the line's advance per character); None for a line that starts no such item."""
    marker = _ITEM_MARKER.match(text)
    return box[0] + (box[2] - box[0]) / len(text) * marker.end() if marker else None


def _hangs(text: str, a, b, h: float) -> bool:
    """Whether line ``b`` starts under the text of line ``a``'s numbered item (``text``), after its number ("3. The
    first name prefixed with one dash is" | "used otherwise."): a hanging indent, within half a line height ``h``."""
    start = _item_text_start(text, a)
    return start is not None and abs(b[0] - start) <= 0.5 * h


def _line_below(i: int, boxes, heights, centres, max_gap: float | None = None) -> int | None:
    """The nearest line starting just below line ``i`` (at most ``max_gap`` line heights) and overlapping it
    horizontally (or centred under it)."""
    max_gap = _t().max_line_gap if max_gap is None else max_gap
    a = boxes[i]
    best = None
    for j, b in enumerate(boxes):
        if j == i or centres[j] <= centres[i]:
            continue
        h = (heights[i] + heights[j]) / 2
        if not _t().min_line_gap * h <= b[1] - a[3] <= max_gap * h:
            continue
        if b[0] > a[2] or (b[2] < a[0] and abs((a[0] + a[2]) - (b[0] + b[2])) / 2 > 2 * h):
            continue
        if best is None or b[1] < boxes[best][1]:
            best = j
    return best


#: Advance widths of a proportional sans-serif font's ASCII glyphs, in hundredths of an em (DejaVu Sans, Chromium's
#: sans-serif here; Helvetica's and Arial's are alike): an "m" is three times an "i", so a word's share of its line's
#: width is its glyphs' share of the line's advances. A glyph not listed counts ``glyph_width_default`` (a CJK
#: glyph is about an em).
_GLYPH_WIDTHS = {
    **dict.fromkeys("il.,:;'|!", 30), **dict.fromkeys("fjtI-/()[]\\J", 36), **dict.fromkeys("r", 41),
    **dict.fromkeys("szc?", 54), **dict.fromkeys("kvxyFLTY*_`", 58),
    **dict.fromkeys("abdeghnopquEPS0123456789{}$", 63), **dict.fromkeys("ABCKRVXZ", 68),
    **dict.fromkeys("DGHNOQU&", 76), **dict.fromkeys("wM#+<=>^~%", 84), **dict.fromkeys("mW@", 98), " ": 32,
}  # fmt: skip


def _same_lead(first: str, second: str) -> bool:
    """Whether two lines start with the same word of three characters or more, each with more words after it: the
    rows of a column (a table's return types, "gboolean (*GEqualFunc)" | "gboolean (*GEqualFuncFull)"), not one
    text wrapped (a function word aside, two sentences may well start "The"; and two lines of prose may start alike:
    "memory and their objects. However," | "memory design is not ...")."""
    a, b = first.split(), second.split()
    if len(a) < 2 or len(b) < 2 or a[0] != b[0] or len(a[0]) < 3 or a[0].casefold() in FUNCTION_WORDS:
        return False
    return not (_wordy(a) and _wordy(b))


def _wordy(words: list[str]) -> bool:
    """Whether a line's words read as prose: ``prose_words`` of them or more, nearly all plain words."""
    plain = sum(1 for w in words if w.strip(_EDGE_PUNCTUATION).isalpha())
    return len(words) >= _t().prose_words and plain >= 0.8 * len(words)


def _advances(text: str) -> float:
    """The summed advance widths of ``text``'s glyphs (:data:`_GLYPH_WIDTHS`)."""
    return float(sum(_GLYPH_WIDTHS.get(c, 100 if ord(c) > 0x2E7F else _t().glyph_width_default) for c in text))


def _first_word(text: str, box: tuple[float, ...], space: bool = False) -> float:
    """How wide the first word of a line's ``text`` is (with the space before it, ``space``): its share of the line's
    width (its ``box``) by its count of characters, or, where the line is words of prose (:func:`_words_only`) and
    its glyphs' advance widths (:data:`_GLYPH_WIDTHS`) give more, by those ("Common" is wider than six average
    glyphs; "little" is not measured narrower)."""
    words = text.split()
    word = (" " if space else "") + (words[0] if words else text)
    share = len(word) / max(1, len(text))  # at the line's own advance per character, as in a monospace font
    if _words_only(text):  # words of prose: set in a proportional font, by its glyphs' widths
        share = max(share, _advances(word) / max(1.0, _advances(text)))
    return (box[2] - box[0]) * share


def _had_to_wrap(i: int, j: int, elements, boxes, heights, lo: float, hi: float) -> bool:
    """Rule 4 of docs/ocr-grouping.md: the first word of line ``j`` would not have fitted after line ``i``'s end, in
    the column they sit in: the widest line of their size within ``column_reach`` line heights above and below
    that starts between ``lo`` and ``hi`` (less half a line height, more half of one), less ``fit_tolerance``."""
    a, b = boxes[i], boxes[j]
    h = (heights[i] + heights[j]) / 2
    text = elements[j].text
    column = [
        boxes[k][2]
        for k in range(len(boxes))
        if lo - 0.5 * h <= boxes[k][0] <= hi + 0.5 * h
        and a[1] - _t().column_reach * h <= boxes[k][1] <= b[3] + _t().column_reach * h
        and _similar_heights(heights[k], h)
    ]
    right_edge = max([*column, a[2], b[2]])
    return a[2] + _first_word(text, b, space=True) - right_edge >= -_t().fit_tolerance * h
