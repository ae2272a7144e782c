"""How instructions are worded, for every producer that writes them (DOM, OCR, accessibility).

One home for what a reader of the labels counts on being the same whoever wrote a label:

* the label-recipe names of the DOM, accessibility and OCR producers (:data:`DOM_RECIPES`, :data:`A11Y_OF`,
  :data:`OCR_TEXT_CLICK`): the ``recipe``
  column of their rows, each a kind of label (the vLLM producer's recipes are prompts,
  :mod:`screenmill.annotators.recipes`);
* reading order (:func:`reading_order`): which of the repeats of a name is "the second";
* ordinals (:data:`ORDINALS`: ten, so a name repeated more often gets no positional label), role nouns
  (:data:`ROLE_NOUNS`: ``button``, ``link``, ``text field``, ...) and the longest name an instruction quotes
  (:data:`MAX_INSTRUCTION_NAME`);
* clean names (:func:`printable`): what every name and text an instruction may quote goes through first (icon-font
  glyphs of the Private Use Area, control and format characters, unassigned code points out; whitespace collapsed);
* the phrasings: :func:`click` (``click "Save"``, ``click the "Pricing" link``, ``click the second "Edit" button``),
  the placeholder phrasing (:data:`PLACEHOLDER_INSTRUCTION`) and the positional form of an instruction template
  (:func:`positional_template`: ``click "{text}"`` → ``click the {ordinal} "{text}"``).

Two differences between the producers are kept on purpose, and named here so that they are not taken for
accidents (making them one would change labels the tables hold):

* rows of reading order: the DOM ranks boxes by :attr:`Rows.BANDS` (the layout's exact top edges, in bands of
  :data:`ROW_BAND` CSS px), the OCR by :attr:`Rows.LINES` (a detector's boxes of one line differ in top and height
  by their glyphs, so a line is the boxes whose vertical centres fall in its first box). On boxes whose rows are
  further apart than a band, whose tops within a row agree to the band and whose heights within a row are alike,
  both give the same order; a row whose tops straddle a band's edge, a band holding two lines, or a row of a box
  over twice another's height is where they part (``tests/annotators/test_wording.py`` shows each);
* quoting: :func:`click` quotes a name with :func:`quoted` (its own double quotes made single), the OCR's instruction
  template takes the text read as it is.
"""

from __future__ import annotations

import enum
import unicodedata
from collections.abc import Sequence

#: The DOM producer's label recipes (:mod:`screenmill.annotators.dom.labels`): by visible text, by accessible name,
#: by role + name, a form field by label or placeholder, by place among repeats of a shown text or role + name, and by
#: place among repeats of an accessible name the element does not show.
DOM_TEXT = "dom-text"
DOM_NAME = "dom-name"
DOM_ROLE = "dom-role"
DOM_FIELD = "dom-field"
DOM_POSITION = "dom-position"
DOM_NAME_POSITION = "dom-name-position"
#: Every DOM recipe, in the order an element's labels are written.
DOM_RECIPES = (DOM_TEXT, DOM_NAME, DOM_ROLE, DOM_FIELD, DOM_POSITION, DOM_NAME_POSITION)
#: The accessibility producer's recipes (:mod:`screenmill.annotators.desktop.a11y`): the DOM recipes' rules over an
#: app's accessibles, one name each (``a11y-text``, ``a11y-role``, ...).
A11Y_OF = {r: "a11y-" + r.removeprefix("dom-") for r in DOM_RECIPES}
#: The OCR producer's one recipe (:mod:`screenmill.annotators.ocr_producer`): a text read, clicked.
OCR_TEXT_CLICK = "ocr-text-click"
#: The instruction template of a text that is clicked (the OCR producer's default; ``{text}`` is the text read).
CLICK_TEMPLATE = 'click "{text}"'

#: The ordinals a repeated name is ranked by; a name repeated more often than this gets no positional label.
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
#: The longest name (characters) an instruction quotes: longer text (a paragraph) is not named by its words.
MAX_INSTRUCTION_NAME = 120
#: The noun an instruction calls an element of an ARIA role by (``click the "Pricing" link``).
ROLE_NOUNS = {
    "button": "button",
    "link": "link",
    "textbox": "text field",
    "searchbox": "search box",
    "combobox": "drop-down",
    "listbox": "list",
    "checkbox": "checkbox",
    "radio": "radio button",
    "switch": "switch",
    "tab": "tab",
    "menuitem": "menu item",
    "menuitemcheckbox": "menu item",
    "menuitemradio": "menu item",
    "option": "option",
    "slider": "slider",
    "spinbutton": "number field",
    "treeitem": "tree item",
    "gridcell": "cell",  # the accessibility labels' table cells (a DOM <td> is a text: no noun)
    "image": "image",
    "img": "image",
    "heading": "heading",
}
#: How a field's placeholder label begins: the placeholder is the text painted inside an empty field, its label is
#: painted beside it (an element of its own), so an evaluation takes this one as the field's visible text.
PLACEHOLDER_INSTRUCTION = "click the field with placeholder"
#: The opening quotes :func:`positional_template` puts the ordinal before.
_QUOTES = "\"'“‘«「"
#: The Unicode categories :func:`printable` removes: control, format, surrogate, private use (the Private Use Area
#: U+E000-F8FF and planes 15/16, where icon fonts put their glyphs: Font Awesome's U+F002 "search"), unassigned.
_UNPRINTABLE = frozenset(("Cc", "Cf", "Cs", "Co", "Cn"))
#: Format characters a script needs to be written right, which :func:`printable` keeps: the zero-width non-joiner
#: and joiner (Persian, Indic scripts, emoji sequences).
KEPT_FORMAT = frozenset({"\u200c", "\u200d"})
#: The height (px of the boxes given) of a band of :attr:`Rows.BANDS`.
ROW_BAND = 8


class Rows(enum.Enum):
    """How :func:`reading_order` tells which boxes share a row (read left to right)."""

    #: Top edges in bands of :data:`ROW_BAND` px (``round(y0 / ROW_BAND)``): for boxes a layout placed exactly (the
    #: DOM's, in CSS px) and for points (boxes of no size: the OCR annotator's element order, by click point).
    BANDS = "bands"
    #: Lines: a box whose vertical centre lies within the vertical extent of a line's first box (boxes taken by their
    #: centres, top to bottom) belongs to that line, so a pixel of jitter between two words of one row does not
    #: reorder them: for boxes a text detector drew (the OCR's).
    LINES = "lines"


def reading_order(boxes: Sequence[Sequence[float]], rows: Rows) -> list[int]:
    """The indices of ``boxes`` in reading order: rows top to bottom, each row left to right.

    Args:
        boxes: ``(x0, y0, x1, y1)`` each, in one frame (a point is a box ``(x, y, x, y)``).
        rows: how rows are told (:class:`Rows`); the DOM producer ranks by :attr:`Rows.BANDS`, the OCR producer by
            :attr:`Rows.LINES` (the module docstring says where the two part).

    Returns:
        A permutation of ``range(len(boxes))``; boxes that tie keep their given order.
    """
    if rows is Rows.BANDS:
        return sorted(range(len(boxes)), key=lambda i: (round(boxes[i][1] / ROW_BAND), boxes[i][0]))
    lines: list[tuple[float, float, list[int]]] = []
    for i in sorted(range(len(boxes)), key=lambda i: (boxes[i][1] + boxes[i][3]) / 2):
        centre = (boxes[i][1] + boxes[i][3]) / 2
        if lines and lines[-1][0] <= centre <= lines[-1][1]:
            lines[-1][2].append(i)
        else:
            lines.append((boxes[i][1], boxes[i][3], [i]))
    return [i for _, _, members in lines for i in sorted(members, key=lambda i: boxes[i][0])]


def printable(text: str) -> str:
    """``text`` as an instruction may quote it: whitespace collapsed to single spaces and trimmed, and the code points
    of :data:`_UNPRINTABLE` out: a private-use one (an icon-font glyph, between words: ``"Spam\\uf0b0Inbox"``) as a
    space, the others (a soft hyphen or zero-width space inside a word, a bidi mark, a control) dropped, but
    :data:`KEPT_FORMAT`.

    Chromium's accessible name holds the CSS generated content of icon fonts (``::before { content: "\\f03e" }``), so
    a link reads ``"\\uf03e Photos"`` and a search button ``"\\uf002"``: ``"Photos"`` and ``""`` (an icon without a
    name). Every producer that writes instructions (DOM, OCR, accessibility) cleans its names with this.

    Args:
        text: a name or text as read.

    Returns:
        The cleaned text; ``""`` when nothing printable is left.
    """
    if text.isascii() and text.isprintable() and "  " not in text and text == text.strip():
        return text  # the common case, nothing to drop or collapse
    kept = []
    for ch in text:
        kind = unicodedata.category(ch)
        if ch.isspace() or kind == "Co":
            kept.append(" ")
        elif kind not in _UNPRINTABLE or ch in KEPT_FORMAT:
            kept.append(ch)
    return " ".join("".join(kept).split())


def quoted(name: str) -> str:
    """``name`` in double quotes, its own double quotes made single (``Say "hi"`` → ``"Say 'hi'"``)."""
    return '"' + name.replace('"', "'") + '"'


def nameable(name: str | None) -> bool:
    """Whether an instruction can quote ``name``: not empty, at most :data:`MAX_INSTRUCTION_NAME` characters, a letter
    or digit in it (a name of marks alone, "»", names nothing a reader would say)."""
    return bool(name) and len(name) <= MAX_INSTRUCTION_NAME and any(map(str.isalnum, name))


def click(name: str, noun: str | None = None, rank: int | None = None) -> str:
    """The click instruction of an element by its name, role noun and place among its repeats.

    Args:
        name: its name (quoted with :func:`quoted`).
        noun: its role noun (:data:`ROLE_NOUNS`, or ``field``), or None.
        rank: its place among the repeats in reading order (0 for the first, below ``len(ORDINALS)``), or None.

    Returns:
        ``click "Save"``, ``click the "Pricing" link``, ``click the second "Edit" button``,
        ``click the second "Paid"``.

    Raises:
        IndexError: ``rank`` is beyond the ordinals.
    """
    words = ["click"]
    if noun or rank is not None:
        words.append("the")
    if rank is not None:
        words.append(ORDINALS[rank])
    words.append(quoted(name))
    if noun:
        words.append(noun)
    return " ".join(words)


def press(key: str) -> str:
    """The instruction of a key pressed (an X keysym / Playwright key name): ``press Escape``, ``press Tab``."""
    return f"press {key}"


def placeholder_instruction(placeholder: str) -> str:
    """``click the field with placeholder "you@example.com"`` (:data:`PLACEHOLDER_INSTRUCTION`)."""
    return f"{PLACEHOLDER_INSTRUCTION} {quoted(placeholder)}"


def is_placeholder_label(instruction: str) -> bool:
    """Whether a ``dom-field`` label's instruction names the field by its placeholder (not by its label)."""
    return instruction.startswith(PLACEHOLDER_INSTRUCTION + " ")


def positional_template(template: str) -> str:
    """The instruction template of a repeated text: ``the {ordinal} `` put before ``{text}`` and its opening quote.

    Args:
        template: an instruction template with ``{text}`` in it.

    Returns:
        ``click "{text}"`` → ``click the {ordinal} "{text}"``; ``tap {text}`` → ``tap the {ordinal} {text}``.

    Raises:
        ValueError: ``template`` has no ``{text}``.
    """
    at = template.index("{text}")
    if at and template[at - 1] in _QUOTES:
        at -= 1
    return template[:at] + "the {ordinal} " + template[at:]


# Referring expressions beyond the text (issue 49; :mod:`screenmill.annotators.relations` writes them, each proven
# unique on its screenshot): by place in a table row, below a label, left of a text, in a landmark; by colour, by size;
# an icon by its name's noun.
DOM_ROW = "dom-row"
DOM_BELOW = "dom-below"
DOM_LEFT_OF = "dom-left-of"
DOM_LANDMARK = "dom-landmark"
DOM_COLOUR = "dom-colour"
DOM_SIZE = "dom-size"
DOM_ICON = "dom-icon"
#: The recipe families ``--dom-recipes`` chooses among: ``text`` is :data:`DOM_RECIPES` (the default), the others
#: the expressions above.
DOM_RECIPE_FAMILIES = {
    "text": DOM_RECIPES,
    "relational": (DOM_ROW, DOM_BELOW, DOM_LEFT_OF, DOM_LANDMARK),
    "visual": (DOM_COLOUR, DOM_SIZE),
    "icon": (DOM_ICON,),
}
#: What a region of :func:`in_region` is called: the DOM's landmarks (``top``, ``side``, ``dialog``) and an app's
#: containers (``menubar``, ``toolbar``, ``statusbar``, ``dialog``: :mod:`screenmill.annotators.desktop.a11y`).
REGION_NOUNS = {
    "top": "top bar",
    "side": "side bar",
    "dialog": "dialog",
    "menubar": "menu bar",
    "toolbar": "tool bar",
    "statusbar": "status bar",
}
#: Every accessibility recipe name (:data:`A11Y_OF`'s text recipes and the expressions above: ``a11y-row``, ...) by
#: the DOM recipe whose rules it applies to an app's accessibles.
A11Y_OF_ALL = {r: "a11y-" + r.removeprefix("dom-") for rs in DOM_RECIPE_FAMILIES.values() for r in rs}


def in_row(name: str, noun: str, anchor: str) -> str:
    """``click the "Edit" button in the row of "Alice Smith"``."""
    return f"click the {quoted(name)} {noun} in the row of {quoted(anchor)}"


def below(anchor: str) -> str:
    """``click the field below "Email"``."""
    return f"click the field below {quoted(anchor)}"


def left_of(anchor: str) -> str:
    """``click the icon to the left of "Settings"``."""
    return f"click the icon to the left of {quoted(anchor)}"


def in_region(name: str, noun: str, region: str) -> str:
    """``click the "Search" button in the top bar`` (``region``: a key of :data:`REGION_NOUNS`)."""
    return f"click the {quoted(name)} {noun} in the {REGION_NOUNS[region]}"


def by_colour(colour: str, noun: str) -> str:
    """``click the green button``."""
    return f"click the {colour} {noun}"


def by_size(noun: str) -> str:
    """``click the large button``."""
    return f"click the large {noun}"


def icon(noun: str) -> str:
    """``click the search icon`` (``noun``: the icon's name, lower case)."""
    return f"click the {noun} icon"
