"""Grouping OCR lines into elements: the rules pinned on small synthetic cases, and one drawn end to end."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw
from screenmill.annotators.ocr import OcrAnnotator, TextElement, group_elements
from screenmill.annotators.ocr_colour import _glyph_color, list_marker_left
from screenmill.annotators.ocr_config import OcrConfig
from screenmill.annotators.ocr_features import continues, ends_code_statement
from screenmill.annotators.ocr_group import group_lines
from screenmill.annotators.ocr_ink import _crop

from tests.annotators.test_ocr import _dejavu, _font

GREY, BLUE = (60, 60, 60), (20, 80, 220)
H = 20  # line height of the synthetic lines, px
ADV = 10  # glyph advance, px


def _page(lines: list[tuple], size=(900, 400)):
    """Lines as ink blocks: (text, x0, y0, colour[, height]) → elements (box from the text length, glyph advance
    half the height) and the image."""
    im = np.full((size[1], size[0], 3), 250, dtype=np.uint8)
    els = []
    for text, x0, y0, colour, *height in lines:
        h = height[0] if height else H
        box = (x0, y0, x0 + ADV * h / H * len(text), y0 + h)
        x, y, x1, y1 = (int(v) for v in box)
        im[y + 2 * h // 5 : y1 - 2 * h // 5, x:x1:2] = colour  # glyph strokes: a minority of the box's pixels
        els.append(TextElement(text, box, ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), 0.95))
    return els, im


def _group(els, im):
    return group_lines(els, lambda box: _glyph_color(_crop(im, box)), TextElement)


def _texts(els):
    return [e.text for e in els]


def test_a_wrapped_link_becomes_one_element_clicked_on_its_first_line():
    els, im = _page([("Reporting bugs", 40, 40, BLUE), ("and getting help", 40, 62, BLUE)])
    (joined,) = _group(els, im)
    assert joined.text == "Reporting bugs and getting help"
    assert joined.box == (40, 40, 40 + ADV * 16, 82)
    assert joined.point == els[0].point  # the first line, where a person clicks
    assert joined.confidence == 0.95


def test_a_wrapped_link_whose_first_box_the_detector_drew_taller_still_joins():
    """The detector's box of a line can reach up to the line above it: "Reporting bugs" drawn 31 px high over text
    23 px high, its next line "and getting help" 23 px: one font size (``min_height_ratio``: 0.74 apart)."""
    els, im = _page([("Reporting bugs", 40, 48, BLUE, 23), ("and getting help", 40, 70, BLUE, 23)])
    first = els[0]
    taller = TextElement(first.text, (first.box[0], first.box[1] - 8, first.box[2], first.box[3]), first.point, 0.95)
    (joined,) = _group([taller, els[1]], im)
    assert joined.text == "Reporting bugs and getting help"


def test_a_wrapped_link_beside_a_panel_border_joins_though_the_next_panel_is_near():
    """A side bar's wrapped list item ("• The programming" | "API") ends its line, but the next panel's text on the
    same row stands a line height off, which rule 3 takes for more text on the line. A vertical rule between them (the
    panel's border, taller than the text) puts that text in another column; without the rule the item stays two
    lines."""
    from screenmill.annotators.ocr_colour import list_marker_left
    from screenmill.annotators.ocr_config import OcrConfig
    from screenmill.annotators.ocr_ink import rule_between

    lines = [("The programming", 40, 60, BLUE), ("API", 40, 82, BLUE), ("Daniel Veillard", 215, 60, BLUE)]
    els, im = _page(lines, size=(900, 160))
    im[67:73, 24:30] = (20, 20, 20)  # the item's bullet

    def group(ruled=None):
        marked = lambda box: list_marker_left(im, box, OcrConfig())  # noqa: E731
        return _texts(group_lines(els, lambda box: _glyph_color(_crop(im, box)), TextElement, marked, ruled))

    assert group() == ["The programming", "API", "Daniel Veillard"]
    im[20:140, 200:203] = (120, 100, 80)  # the border between the side bar and the next panel
    assert group(lambda a, b: rule_between(im, a, b, OcrConfig())) == ["The programming API", "Daniel Veillard"]


def test_a_two_word_button_wrapped_and_centred_becomes_one_element():
    els, im = _page([("Add to", 100, 100, GREY), ("cart", 110, 121, GREY)])
    assert _texts(_group(els, im)) == ["Add to cart"]


def test_an_inline_link_wrapped_in_a_numbered_item_joins_where_the_items_text_hangs():
    """ "6. take one of the points <a>Get in" | "touch with me</a> for more.": the item's next line starts under its
    text, after the number, not where the line (its number) starts."""
    item = [("6. take one of the points", 40, 40, GREY), ("Get in", 300, 40, BLUE), ("touch with me", 70, 62, BLUE),
            ("for more.", 206, 62, GREY)]  # fmt: skip
    els, im = _page(item, size=(900, 100))
    assert "Get in touch with me" in _texts(_group(els, im))
    plain = [("take one of the points", 40, 40, GREY), ("Get in", 270, 40, BLUE), ("touch with me", 70, 62, BLUE),
             ("for more.", 206, 62, GREY)]  # fmt: skip
    els, im = _page(plain, size=(900, 100))
    assert "Get in touch with me" not in _texts(_group(els, im))  # no number: the next line is no hanging text


def test_lines_of_code_stay_apart_and_prose_ending_in_a_parenthesis_still_joins():
    """A code block's lines look like wrapped text (left-aligned, lower-case starts, the first line the widest): a
    line ending a statement (")", "*/" with code on both lines) starts no continuation. Prose ending with ")" does."""
    code = ["pctxt = libxslt.xpathParserContext(_obj=ctx)", "ctxt = pctxt.context()",
            "/* allocate deflate state */", "strm.zalloc = Z_NULL;",
            "// Creates a zero-filled Buffer of length 10.", "const buf1 = Buffer.alloc(10);"]  # fmt: skip
    prose = ["returns the size of the buffer (in bytes)", "and the count of its items"]
    lines = [(t, 40, 40 + 21 * i, GREY) for i, t in enumerate(code[:2])]
    lines += [(t, 40, 120 + 21 * i, GREY) for i, t in enumerate(code[2:4])]
    lines += [(t, 40, 200 + 21 * i, GREY) for i, t in enumerate(code[4:])]
    lines += [(t, 40, 280 + 21 * i, GREY) for i, t in enumerate(prose)]
    els, im = _page(lines, size=(900, 340))
    assert _texts(_group(els, im)) == [*code, " ".join(prose)]
    assert not ends_code_statement("// Creates a zero-filled Buffer of length", "// 10 bytes")  # a comment goes on
    assert ends_code_statement("strm.zfree = Z_NULL;", "prose")  # a statement's ";" ends it whatever follows
    assert not ends_code_statement("the size (in bytes)", "is returned")


def test_an_inline_link_wrapped_to_the_next_line_of_prose_becomes_one_element():
    """ "Questions? Please <a>Get in touch with me</a> for more.": the link ends one line of prose and starts the next,
    where that line starts, in a colour that is the lesser part of the two lines. A side bar's link on the next row
    (not where the prose line starts), prose wrapped beside inline code of another colour (the prose is the greater
    part) and a statement of code ending in ";" stay apart."""
    link = [("Questions? Please", 40, 40, GREY), ("Get in", 216, 40, BLUE), ("touch with me", 40, 62, BLUE),
            ("for more.", 176, 62, GREY)]  # fmt: skip
    side = [("Questions? Please", 240, 110, GREY), ("Get in", 416, 110, BLUE), ("Downloads", 40, 132, BLUE)]
    prose = [("see the", 40, 180, GREY), ("code", 116, 180, BLUE), ("and the rest of", 162, 180, GREY),
             ("prose", 40, 202, GREY), ("more", 96, 202, BLUE)]  # fmt: skip
    code = [("display_hex(SIZE,", 40, 250, GREY), ("digest);", 216, 250, BLUE), ("return 0", 40, 272, BLUE),
            ("EXIT_SUCCESS;", 126, 272, GREY)]  # fmt: skip
    els, im = _page([*link, *side, *prose, *code], size=(900, 320))
    texts = _texts(_group(els, im))
    assert "Get in touch with me" in texts, texts
    assert texts.count("Get in") == 1 and "Downloads" in texts  # the side bar's link is in another column
    assert "and the rest of" in texts and "prose" in texts
    assert "digest);" in texts and "return 0" in texts


def test_a_link_wrapped_in_prose_joins_though_it_is_most_of_its_two_lines_and_a_row_of_tags_does_not():
    """Rule 7 tells the link from the prose by the text around it too: "are based on the rules of the <a>Locale Data
    Markup Language" | "specification</a> (LDML)." is mostly link on its two rows, but the paragraph above is prose.
    Two rows of tags in the link's colour under a grey description ("ledger tools" | "bookkeeping app") have no prose
    beside them (a piece whose colour cannot be told is none) and stay apart."""
    para = [("patterns Babel supports for number formatting are", 40, 40, GREY),
            ("are based on the rules of the", 40, 62, GREY), ("Locale Data Markup Language", 336, 62, BLUE),
            ("specification", 40, 84, BLUE), ("(LDML).", 176, 84, GREY)]  # fmt: skip
    tags = [("A ledger for small teams that keeps the books in plain text files", 40, 170, GREY),
            ("accounting", 40, 200, BLUE), ("finance", 146, 200, BLUE), ("ledger tools", 229, 200, BLUE),
            ("bookkeeping app", 40, 222, BLUE), ("self-hosted", 196, 222, BLUE),
            ("12 stars", 312, 222, (250, 250, 250))]  # fmt: skip  # a piece whose colour cannot be told: no prose
    els, im = _page([*para, *tags], size=(900, 260))
    texts = _texts(_group(els, im))
    assert "Locale Data Markup Language specification" in texts, texts
    assert "ledger tools" in texts and "bookkeeping app" in texts, texts


def test_a_grey_underlined_link_wrapped_in_black_prose_joins_by_its_underline():
    """underscore.js: "There is a <a>modular" | "version</a> with clickable import references": the link's grey reads a
    shade from the prose's black (the same colour to rule 2), so by colour the link is no lesser part of its lines,
    and two single lower-case words do not continue each other (a list of names). Both lines underlined, the prose
    bare: one link wrapped. Without the underlines they stay apart."""
    from screenmill.annotators.ocr_ink import underlined

    black, grey = (45, 45, 45), (75, 75, 75)  # 90 apart summed, a shade: one colour to rule 2
    rows = [("There is a", 40, 40, black), ("modular", 150, 40, grey), ("version", 40, 62, grey),
            ("with clickable import references", 120, 62, black)]  # fmt: skip
    config = OcrConfig()
    for lined in (True, False):
        els, im = _page(rows, size=(900, 120))
        if lined:
            for e in els[1:3]:  # under the link's two lines, low in their boxes
                im[int(e.box[3]) - 3, int(e.box[0]) : int(e.box[2])] = grey
        grouped = group_lines(els, lambda box, im=im: _glyph_color(_crop(im, box)), TextElement, None, None,
                              lambda box, im=im: underlined(im, box, config))  # fmt: skip
        assert ("modular version" in _texts(grouped)) is lined, _texts(grouped)


def test_a_paragraph_goes_on_with_its_next_sentence_where_the_line_had_to_wrap():
    """ "Every method returns a promise unless told." | "Callbacks run once the work is done.": a line of prose (five
    words or more) ended a sentence where it had to wrap, and the paragraph goes on with the next, capitalised. A
    shorter line ending a sentence (a heading, a list's item: "Installation notes for developers.") does not."""
    prose = [("Every method returns a promise unless told.", 40, 40, GREY),
             ("Callbacks run once the work is done.", 40, 62, GREY)]  # fmt: skip
    short = [("Installation notes for developers.", 40, 140, GREY), ("Callbacks run once done.", 40, 162, GREY)]
    els, im = _page([*prose, *short], size=(900, 220))
    texts = _texts(_group(els, im))
    assert "Every method returns a promise unless told. Callbacks run once the work is done." in texts, texts
    assert "Installation notes for developers." in texts and "Callbacks run once done." in texts, texts


def test_a_paragraphs_last_line_without_descenders_joins_though_its_box_is_a_descender_shorter():
    """ "This value means that an out-of-memory" | "condition occurred.": the detector's box of a last line with no
    descending glyph is 40 px high under the line's 60 (0.67, below ``min_height_ratio``); counted a descender taller
    it is of the same size. A last line as short whose words do descend is of a smaller font and stays apart."""
    first = "This value means that an out-of-memory"
    bare = [(first, 40, 40, GREY, 30), ("condition occurred.", 40, 72, GREY, 20)]
    descends = [(first, 40, 140, GREY, 30), ("conditions apply, guys.", 40, 172, GREY, 20)]
    els, im = _page([*bare, *descends], size=(900, 220))
    texts = _texts(_group(els, im))
    assert "This value means that an out-of-memory condition occurred." in texts, texts
    assert "conditions apply, guys." in texts, texts


def test_a_paragraph_with_a_link_inside_is_its_lines_and_a_link_wrapped_in_prose_still_joins():
    """Rule 9: "Note that the function <a>read_to_string</a> with" | "fewer imports and less code ...": the DOM
    labels a paragraph with a link inside line by line, cut at the link, so its lines stay apart; without the link's
    colour they join. A link wrapped in prose ("See" | "the Timer Module" | "section in ...") is not the prose around
    it and still joins, and so does a short link after its lead-in ("Next:" | "Working with" | "Message Catalogs"),
    and a table's cell beside a link in the next column ("DirBuilder" | "A builder used to ...")."""
    for colour in (BLUE, GREY):
        para = [("Note that the function", 40, 40, GREY), ("read_to_string", 266, 40, colour), ("with", 412, 40, GREY),
                ("fewer imports and less code for it to read.", 40, 62, GREY)]  # fmt: skip
        els, im = _page(para, size=(900, 120))
        assert ("with fewer imports and less code for it to read." in _texts(_group(els, im))) is (colour == GREY)
    wrapped = [("been improved in the latest release, making it", 40, 40, GREY),
               ("more efficient and less busy. See", 40, 62, GREY), ("the Timer Module", 376, 62, BLUE),
               ("section in the Efficiency Guide of the manual.", 40, 84, BLUE)]  # fmt: skip
    lead = [
        ("Documentation overview", 40, 256, BLUE),
        ("Previous: Date and Time", 40, 278, BLUE),
        ("Next:", 40, 300, GREY),
        ("Working with", 96, 300, BLUE),
        ("Message Catalogs", 40, 322, BLUE),
    ]
    els, im = _page([*wrapped, *lead], size=(900, 360))
    texts = _texts(_group(els, im))
    assert "the Timer Module section in the Efficiency Guide of the manual." in texts, texts
    assert "Working with Message Catalogs" in texts, texts
    table = [("DirBuilder", 40, 40, BLUE), ("A builder used to create directories in", 170, 40, GREY),
             ("various manners.", 170, 62, GREY)]  # fmt: skip
    els, im = _page(table, size=(900, 120))  # a table's next column stands further off than a word space
    assert "A builder used to create directories in various manners." in _texts(_group(els, im))


def test_a_paragraph_whose_next_line_starts_with_a_link_is_its_lines_and_a_title_above_a_byline_still_joins():
    """Rule 9 looks at the paragraph's next line too: "... See" | "<a>Section 34.15</a>, the returned reference ...":
    the link ended the joined lines, so their own rows hold none, but the paragraph has one (its first word would
    have fitted, the link as a whole did not: its space does not break). A short last line
    ("Harbor city votes to rebuild its old" | "tram line") did not wrap into the row below it (a byline with a link),
    which is another element: the title stays joined."""
    para = [("Successful evaluations of the timer functions", 40, 40, GREY),
            ("give return values with a ref. See", 40, 62, GREY), ("Section 34.15", 40, 84, BLUE),
            (", the returned reference can be used later.", 176, 84, GREY)]  # fmt: skip
    title = [("Harbor city votes to rebuild its old", 40, 240, GREY), ("tram line", 40, 262, GREY),
             ("World", 40, 284, BLUE), ("news from the harbour city today", 96, 284, GREY)]  # fmt: skip
    els, im = _page([*para, *title], size=(900, 330))
    texts = _texts(_group(els, im))
    assert "Successful evaluations of the timer functions" in texts, texts
    assert "give return values with a ref. See" in texts, texts
    assert "Harbor city votes to rebuild its old tram line" in texts, texts


def test_a_loosely_set_paragraph_whose_next_line_starts_with_a_link_is_its_lines_too():
    """dateutil on a phone: "It is based on the specification of the" | "excellent work done by M.-A. Lemburg in his"
    | "<a>mx.DateTime</a> extension. However, notice": the link's line stands a loose gap (0.55 line heights) below,
    at the screenshot's line pitch. Rule 9 looks for it that far too, so the two lines stay lines, each of which is
    named whole, not two thirds of the paragraph."""
    lines = [("It is based on the specification of the", 40, 40, GREY),
             ("excellent work done by him in", 40, 71, GREY), ("mx.DateTime", 40, 102, BLUE),
             ("extension. However, notice that", 176, 102, GREY),
             ("The module provides powerful", 40, 200, GREY), ("extensions to the standard module", 40, 231, GREY),
             ("and goes on with more of its text", 40, 262, GREY)]  # fmt: skip
    els, im = _page(lines, size=(900, 330))
    texts = _texts(_group(els, im))
    assert "It is based on the specification of the" in texts, texts
    assert "excellent work done by him in" in texts, texts
    assert "The module provides powerful extensions to the standard module and goes on with more of its text" in texts


def test_rule_9_measures_where_the_row_ends_above_a_line_the_paragraph_wrapped_into():
    """Rule 9's wrap test measures the end of the row the paragraph wrapped from, whether that row is above the joined
    lines or is their last: "give return values with a ref." ends its box at 340 px, but the row runs on ("See also
    the notes"), so the link starting the next line ("Section 34.15") had no room there and the paragraph has a link
    inside: its lines stay apart."""
    para = [("Successful evaluations of the timer functions", 40, 40, GREY),
            ("give return values with a ref.", 40, 62, GREY), ("See also the notes", 346, 62, GREY),
            ("Section 34.15", 40, 84, BLUE), (", the returned reference is kept.", 176, 84, GREY)]  # fmt: skip
    els, im = _page(para, size=(900, 130))
    texts = _texts(_group(els, im))
    assert "Successful evaluations of the timer functions" in texts, texts


def test_an_index_entry_ends_at_the_colon_after_its_link_and_prose_ending_in_a_colon_goes_on():
    """A texinfo index's entries, each an underlined link and the prose's colon: "abbreviations for months:" |
    "action, sieve:" are two entries though the second starts in lower case. The same lines bare are a sentence of
    prose running on past its colon."""
    rows = [("abbreviations for months:", 40, 40, BLUE), ("action, sieve:", 40, 62, BLUE),
            ("authentication:", 40, 84, BLUE)]  # fmt: skip
    assert sorted(_underlined_group(rows, range(len(rows)), size=(600, 140))) == sorted(r[0] for r in rows)
    assert "abbreviations for months: action, sieve:" in " ".join(_underlined_group(rows, (), size=(600, 140)))


def test_a_link_wrapped_in_an_index_cell_joins_where_the_other_columns_next_row_is_below_it():
    """A texinfo index on a phone: the section link "Available" | "ciphers" wraps in its cell beside the entry
    "3DES:", the next entry's row below. Two single words do not continue each other by their text (a list of
    names): the table's rows tell, as the entry column has nothing on the second line's row, and a third line goes
    on the same way. A link list with nothing beside it, or with the page's bare prose beside it, and a table whose
    other column has text on both rows, stay apart."""
    rows = [("3DES:", 40, 40, BLUE), ("Available", 300, 40, BLUE), ("ciphers", 300, 62, BLUE),
            ("AES:", 40, 90, BLUE), ("General", 300, 90, BLUE), ("cipher", 300, 112, BLUE),
            ("functions", 300, 134, BLUE), ("Arcfour:", 40, 162, BLUE), ("Available", 300, 162, BLUE)]  # fmt: skip
    texts = _underlined_group(rows, range(len(rows)), size=(600, 200))
    assert sorted(texts) == sorted(["3DES:", "Available ciphers", "AES:", "General cipher functions", "Arcfour:",
                                    "Available"]), texts  # fmt: skip
    side = [("Contributions", 300, 40, BLUE), ("libexslt", 300, 62, BLUE)]
    beside = [("The library reads the", 40, 40, GREY), ("Contributions", 300, 40, BLUE), ("libexslt", 300, 62, BLUE)]
    both = [("Comparison", 40, 40, BLUE), ("Available", 300, 40, BLUE), ("functions", 40, 62, BLUE),
            ("ciphers", 300, 62, BLUE)]  # fmt: skip
    for case in (side, beside, both):
        lined = [k for k, r in enumerate(case) if r[3] == BLUE]
        assert len(_underlined_group(case, lined, size=(600, 120))) == len(case), case


def test_a_tight_list_of_links_stays_apart():
    # same left edge, no gap, same colour: the geometry of a wrap; the text says each line starts anew
    rows = ["Home", "Introduction", "Documentation", "How to help", "Downloads"]
    els, im = _page([(t, 40, 40 + i * 21, BLUE) for i, t in enumerate(rows)])
    assert _texts(_group(els, im)) == rows


def test_a_line_in_another_colour_stays_apart():
    els, im = _page([("Read the guide for", 40, 40, BLUE), ("details and examples", 40, 61, GREY)])
    assert len(_group(els, im)) == 2


def test_a_short_line_in_a_wide_column_had_room_so_it_did_not_wrap():
    # the column is as wide as its longest line: "and" would have fitted after "Open the"
    els, im = _page(
        [
            ("A much longer line that sets the column width", 40, 20, GREY),
            ("Open the", 40, 41, GREY),
            ("and close", 40, 62, GREY),
        ]
    )
    assert len(_group(els, im)) == 3


def test_whether_the_next_lines_first_word_had_room_is_judged_by_its_glyphs_widths():
    """A table of contents on a phone: "3.1.2 Options That are" | "Common for All Utilities." wrapped because "Common"
    (two wide "m"s) did not fit, though six average glyphs would have (rule 4): words of prose are measured by their
    glyphs' advance widths (``_GLYPH_WIDTHS``). A first word of narrow glyphs ("little") is still measured at the
    line's own advance per character, and had room: that line did not wrap."""
    widest = ("3.1.1 Basic Notions About Those", 40, 18, BLUE)  # the column's right edge, 310 px from its left
    for second, joined in (("Common for All Utilities.", True), ("little for All Utilities.", False)):
        els, im = _page([widest, ("3.1.2 Options That are", 40, 40, BLUE), (second, 40, 62, BLUE)], size=(600, 120))
        texts = _texts(_group(els, im))
        assert (f"3.1.2 Options That are {second}" in texts) == joined, texts


def test_a_list_marker_starts_a_new_element():
    els, im = _page([("2.2. Getting started with", 40, 40, BLUE), ("2.3. The commentary", 40, 61, BLUE)])
    assert len(_group(els, im)) == 2


def _bulleted(items: list[list[str]], x0: int = 60, size=(600, 300)):
    """A bulleted list: each item a list of lines, the first after a bullet (a 6-px square), the others hanging
    under its text; returns the elements and the image."""
    rows, bullets, y = [], [], 30
    for lines in items:
        bullets.append(y)
        for line in lines:
            rows.append((line, x0, y, BLUE))
            y += H + 1
    els, im = _page(rows, size)
    for y in bullets:
        im[y + 7 : y + 13, x0 - 16 : x0 - 10] = BLUE
    return els, im


def _group_marked(els, im):
    return group_lines(els, lambda box: _glyph_color(_crop(im, box)), TextElement,
                       lambda box: list_marker_left(im, box, OcrConfig()))  # fmt: skip


def test_a_list_items_next_line_hangs_under_its_text_and_a_bullet_starts_the_next_item():
    """The detector leaves bullets out of its lines: the bullet left of a line tells a list item's first line, and a
    line hanging under it with nothing to its left is the item's next line, whatever its text ("The programming" |
    "API"); a line with its own bullet is an item of its own, whatever its text ("a tutorial for libxslt" |
    "xsltproc user manual")."""
    els, im = _bulleted([["Documentation"], ["The programming", "API"], ["Reporting bugs", "and getting help"]])
    assert [list_marker_left(im, e.box, OcrConfig()) for e in els] == [True, True, False, True, False]
    wrapped = "Reporting bugs and getting help"
    assert _texts(_group_marked(els, im)) == ["Documentation", "The programming API", wrapped]
    assert _texts(_group(els, im)) == ["Documentation", "The programming", "API", wrapped]
    els, im = _bulleted([["a tutorial for libxslt"], ["xsltproc user manual"]])
    assert _texts(_group_marked(els, im)) == ["a tutorial for libxslt", "xsltproc user manual"]
    assert _texts(_group(els, im)) == ["a tutorial for libxslt xsltproc user manual"]  # without the bullets: wrong


def test_a_list_items_third_line_hangs_under_its_second():
    """A narrow side bar wraps an item over three lines, each a capitalised word ("Default" | "Extraction" |
    "Methods"): the third line hangs under the second, which hangs under the bulleted first, so all three are one
    item; the next bullet still starts an item of its own."""
    els, im = _bulleted([["Format"], ["Default", "Extraction", "Methods"], ["Referencing", "Extraction", "Methods"]])
    assert _texts(_group_marked(els, im)) == ["Format", "Default Extraction Methods", "Referencing Extraction Methods"]


def test_only_a_lone_small_blob_with_room_before_it_is_a_list_marker():
    els, im = _page([("Replace matching value", 20, 40, GREY), ("Replace all", 250, 40, GREY)], (600, 120))
    assert list_marker_left(im, els[1].box, OcrConfig()) is None  # the previous column's last letter
    assert list_marker_left(im, els[0].box, OcrConfig()) is False  # nothing: the image's edge
    im[40 + 2 : 40 + 18, 250 - 16 : 250 - 10] = GREY  # a bar as high as the line: no bullet
    assert list_marker_left(im, (250, 40, 300, 60), OcrConfig()) is None
    for box in ((2, 40, 50, 60), (250, 130, 300, 150)):  # at the image's left edge, below it
        assert list_marker_left(im, box, OcrConfig()) is None


def test_a_paragraph_gap_or_a_bigger_font_stays_apart():
    gap, im = _page([("Sign in with", 40, 40, GREY), ("the company account", 40, 40 + H + 15, GREY)])
    assert len(_group(gap, im)) == 2
    els, im = _page([("Sign in with", 40, 40, GREY), ("the company account", 40, 61, GREY)])
    big = [els[0], TextElement(els[1].text, (40, 61, 230, 61 + 2 * H), els[1].point, 0.9)]
    assert len(_group(big, im)) == 2


def test_text_beside_either_line_stays_apart():
    # a table: "Save to" has a neighbour on its row, so it is a cell, not the start of a wrapped element
    els, im = _page([("Save to", 40, 40, GREY), ("Cancel", 135, 40, GREY), ("the drive", 40, 61, GREY)])
    assert len(_group(els, im)) == 3
    els, im = _page([("Save to", 100, 40, GREY), ("Path", 40, 61, GREY), ("the drive", 100, 61, GREY)])
    assert len(_group(els, im)) == 3  # a form: "the drive" has its label beside it
    els, im = _page([("Save to", 40, 40, GREY), ("the drive", 40, 61, GREY)])
    assert len(_group(els, im)) == 1  # the same lines alone do join


def test_a_compound_wrapped_at_its_hyphen_joins_without_a_space_and_chains_run_on():
    els, im = _page([("Modules Byte-", 40, 40, BLUE), ("Compilation of", 40, 61, BLUE), ("the sources", 40, 82, BLUE)])
    assert _texts(_group(els, im)) == ["Modules Byte-Compilation of the sources"]


def test_rows_of_a_column_that_start_with_one_word_stay_apart_and_prose_lines_that_do_still_join():
    """GLib's table of return types and names, "gboolean (*GEqualFunc)" | "gboolean (*GEqualFuncFull)": geometry and
    a lower-case start say wrap, but two lines opening with the same word are rows of a column. A function word
    ("the ...", "the ...") or two lines of prose ("memory and their objects. However, the MPFR" | "memory design is
    ...") may start alike in one paragraph, and still join."""
    els, im = _page([("gboolean (*GEqualFunc)", 40, 40, BLUE), ("gboolean (*GEqualFuncFull)", 40, 61, BLUE)])
    assert _texts(_group(els, im)) == ["gboolean (*GEqualFunc)", "gboolean (*GEqualFuncFull)"]
    for first, second in [
        ("the command prompt, optionally followed by", "the name of the file that holds the data"),
        ("memory and their objects. However, the MPFR", "memory design is not well suited for such a"),
    ]:
        els, im = _page([(first, 40, 40, GREY), (second, 40, 61, GREY)])
        assert _texts(_group(els, im)) == [f"{first} {second}"]


def test_a_line_that_starts_with_a_fields_name_is_a_field_of_its_own():
    """A mail's headers quoted in flex's FAQ: "In-reply-to: Your message of Thu, 02 Mar 2000 12:29:04 PST." | "Date:
    Thu, 02 Mar 2000 23:00:46 PST". The first ends a sentence and the second goes on in words, as a paragraph's next
    sentence would; but a line that opens with a field's name and its colon is a field of its own. After a hyphen the
    word was cut, and the line still joins."""
    rows = [("In-reply-to: Your message of Thu, 02 Mar 2000 12:29:04 PST.", 40, 40, GREY),
            ("Date: Thu, 02 Mar 2000 23:00:46 PST", 40, 61, GREY)]  # fmt: skip
    els, im = _page(rows, size=(900, 120))
    assert _texts(_group(els, im)) == [rows[0][0], rows[1][0]]
    rows = [("Send the patch to the maintainers of the Reply-", 40, 40, GREY), ("To: header in it", 40, 61, GREY)]
    els, im = _page(rows, size=(900, 120))
    assert _texts(_group(els, im)) == ["Send the patch to the maintainers of the Reply-To: header in it"]


def test_a_line_whose_only_descending_glyph_is_a_comma_counts_a_descender_taller():
    """attrs' "which will never go away - and is just as" (its box 62 px, its "g" and "y" reaching down) over
    "stable, since it doesn't constitute a rewrite." (42 px): a comma reaches below the baseline far less than a "g",
    so the second box is a descender short of its size, as one with no descending glyph is, and the two lines are one
    font size (0.68 as drawn, 0.85 counted) and join."""
    rows = [("which will never go away and is just as", 40, 40, GREY, 31),
            ("stable, since it does not constitute a rewrite.", 40, 80, GREY, 21)]  # fmt: skip
    els, im = _page(rows, size=(900, 140))
    assert _texts(_group(els, im)) == [f"{rows[0][0]} {rows[1][0]}"]
    rows[1] = ("stable (since it does not constitute a rewrite).", 40, 80, GREY, 21)  # brackets do reach down
    els, im = _page(rows, size=(900, 140))
    assert _texts(_group(els, im)) == [rows[0][0], rows[1][0]]


def test_loose_prose_under_a_line_with_no_descender_joins_at_the_pitch():
    """dateutil's "If a time zone is omitted, a timezone-naive" | "datetime is returned." on a phone, set at the page's
    loose pitch: the first line has no descending glyph, so its box ends at the baseline and the next line stands a
    descender further off than ``loose_line_gap`` from it. Measured from where its
    descenders would end, the step is the page's pitch (another column's lines, 34 px middle to middle), and the two
    join; further off than the pitch, they stay apart."""
    column = [(f"Lorem ipsum quisque dolor sit {k}", 500, 40 + 34 * k, GREY) for k in range(4)]
    first, second = "If a time zone is omitted, a timezone-naive", "datetime is returned."
    els, im = _page([*column, (first, 40, 200, GREY, 16), (second, 40, 234, GREY)], size=(900, 300))
    assert f"{first} {second}" in _texts(_group(els, im))
    els, im = _page([*column, (first, 40, 200, GREY, 16), (second, 40, 240, GREY)], size=(900, 300))
    assert {first, second} <= set(_texts(_group(els, im)))


def test_a_numbered_items_line_wraps_under_its_text_not_its_number():
    """Click's "3. The first name prefixed with one dash is" | "used otherwise.": the item's next line starts under
    its text, a number's width right of the line above (a hanging indent), and the two join. A line so indented under
    a line with no number is no such wrap (a nested block, a definition)."""
    first = "3. The first name prefixed with one dash is"
    indent = ADV * len("3. ")
    els, im = _page([(first, 40, 40, GREY), ("used otherwise.", 40 + indent, 61, GREY)], size=(900, 120))
    assert _texts(_group(els, im)) == [f"{first} used otherwise."]
    els, im = _page([(first[3:], 40, 40, GREY), ("used otherwise.", 40 + indent, 61, GREY)], size=(900, 120))
    assert _texts(_group(els, im)) == [first[3:], "used otherwise."]


def test_a_short_first_word_needs_a_space_too_to_have_had_room():
    """AutoGen's "This name is used in the construction of" | "a global pointer of type tOptDesc const*. It": the
    second line reaches 15 px past the first, more than its first word "a" is wide but less than a space and the
    word; the word had no room, so the line wrapped, and the two join."""
    els, im = _page([("This name is used in the construction of", 40, 40, GREY),
                     ("a global pointer of type tOptDesc const.", 40, 62, GREY)], size=(700, 120))  # fmt: skip
    b = els[1]
    els[1] = TextElement(b.text, (b.box[0], b.box[1], b.box[2] + 15, b.box[3]), b.point, b.confidence)
    (joined,) = _group(els, im)
    assert joined.text == "This name is used in the construction of a global pointer of type tOptDesc const."
    wide = TextElement(b.text, (b.box[0], b.box[1], b.box[2] + 35, b.box[3]), b.point, b.confidence)
    assert len(_group([els[0], wide], im)) == 2  # a space and "a" fitted after the first line: it did not wrap


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("Reporting bugs", "and getting help", True),
        ("Sign up for", "Newsletter", True),
        ("Byte-", "Compilation", True),
        ("Home", "Introduction", False),
        ("Notes for", "2. Installing", False),
        ("Read", "• bullets", False),
        ("Contributions", "libexslt", False),  # two single words: items of a list of names
        ("Getting started", "guide", True),
        ("3.5.1. Interpreter", "Name", True),  # a numbered item wraps its title under its number
        ("3.5.1. Interpreter", "3.5.2. Location", False),
        ("fs.readFile(path", "[, options], callback)", True),  # nothing starts with a comma or a closing bracket
        ("Class: Buffer", ") Options", True),
        ("Class: Buffer", "[Links]", False),  # an item in brackets may start one
        # a sentence of prose that runs on and ends on the next line, whatever its first word
        ("This manual was written by Vern Paxson, Will", "Estes and John Millaway.", True),
        ("Getting started with the new toolkit", "Installing on Windows", False),  # items of a list: no full stop
        ("Every method returns a promise unless told:", "Callbacks run once done.", False),  # a colon: a list follows
        ("Install the toolkit", "Run the tests.", False),  # too short to be prose
        # a date wraps after its month: the year goes on the line ("last updated 19 September" | "2022, of ...")
        ("This is Edition 5.2, last updated 19 September", "2022, of The GNU Bash Reference Manual, for", True),
        ("Released in September", "2. Installing", False),  # a numbered item is no year
        ("Releases", "2022 in review", False),
        # a sentence that stops mid-way in lower case runs on into an acronym ("allows one to use" | "MPFR in two")
        ("The following interface allows one to use", "MPFR in two ways:", True),
        ("banner message then prompt you to enter", "SQL. Type in SQL statements", True),  # the sentence ends in it
        ("Running commands in the context of workspaces", "Ignoring missing scripts", False),
        ("Running commands in the context of workspaces", "API: the commands", False),  # a label, not the sentence
        # a sentence of prose does not end on a determiner: "... the Free Software Foundation; with no" | "Invariant"
        ("published by the Free Software Foundation; with no", "Invariant Sections, with no Front-Cover Texts,", True),
        ("Both of them read the whole of this", "Chapter 2 first", True),
        ("Say no", "Next", False),  # a short line: a button's label, not prose
    ],
)
def test_continues(first, second, expected):
    assert continues(first, second) is expected


def test_drawn_wrapped_link_and_list_end_to_end(annotator):
    """Real OCR on drawn text: the wrapped link is one element, the list items stay one each."""
    font = _font(18)
    im = Image.new("RGB", (700, 260), (255, 255, 255))
    d = ImageDraw.Draw(im)
    d.text((30, 30), "Reporting bugs", font=font, fill=BLUE)
    d.text((30, 52), "and getting help", font=font, fill=BLUE)
    for i, word in enumerate(("Downloads", "Mailing lists", "Contributions")):
        d.text((400, 30 + 22 * i), word, font=font, fill=BLUE)
    texts = {e.text.replace(" ", "") for e in annotator.annotate(np.asarray(im))}  # the drawn font's spaces are narrow
    assert "Reportingbugsandgettinghelp" in texts
    assert {"Downloads", "Mailinglists", "Contributions"} <= texts


def test_drawn_bulleted_list_end_to_end(annotator):
    """Real OCR on a drawn bulleted list in a narrow column: the detector leaves the bullets out of its lines, and the
    line hanging under an item's text is that item's; a line's box starts at its first glyph, though the gap after a
    capital's stem ("T|he") cuts it off as a word of its own (its colour is told against the line's background)."""
    font = _dejavu(16)
    im = Image.new("RGB", (400, 140), (255, 255, 255))
    d = ImageDraw.Draw(im)
    y = 20
    for lines in (["Documentation"], ["The programming", "API"], ["How to help"]):
        d.ellipse((22, y + 7, 28, y + 13), fill=BLUE)
        for line in lines:
            d.text((40, y), line, font=font, fill=BLUE)
            y += 20
    els = annotator.annotate(np.asarray(im))
    assert _texts(els) == ["Documentation", "The programming API", "How to help"]
    left = d.textbbox((40, 40), "The", font=font)[0]
    assert abs(els[1].box[0] - left) <= 2, (els[1].box, left)


# ---------------------------------------------------------------------- pieces of one line (join_pieces)
def _join_pieces(els, im):
    from screenmill.annotators.ocr_group import join_pieces

    return join_pieces(els, lambda box: _glyph_color(_crop(im, box)), TextElement)


def test_a_date_cut_at_its_spaces_becomes_one_element_clicked_at_its_centre():
    # "Feb" | "15," | "2025": the detector cut a table cell's date; the second piece slightly overlaps the first
    els, im = _page([("Feb", 100, 40, GREY), ("15,", 128, 40, GREY), ("2025", 165, 40, GREY)])
    (joined,) = _join_pieces(els, im)
    assert joined.text == "Feb 15, 2025"
    assert joined.box == (100, 40, 165 + ADV * 4, 60)
    assert joined.point == ((100 + 205) / 2, 50)
    # a short month's few glyphs read paler than its day's: a date joins whatever their colours
    els, im = _page([("Feb", 100, 100, (75, 84, 95)), ("15, 2025", 136, 100, (39, 49, 60))])
    assert _texts(_join_pieces(els, im)) == ["Feb 15, 2025"]


def _chip(im, x0, x1, y0, y1, colour=(232, 234, 237)):
    """Paint a chip of inline code (a tinted box) under the ink already drawn in ``im``'s region."""
    region = im[y0:y1, x0:x1]
    region[(region == 250).all(axis=-1)] = colour


def test_a_chapter_title_with_a_bare_number_joins_along_its_row_and_down_its_lines():
    """Texinfo's "1 Measuring Program Resource Use" at 390 px: the detector cut both lines ("1 Measuring" | "Program",
    "Resource" | "Use", the second pair's boxes overlapping), none at heading size among the page's large type. A
    bare chapter number and overlapping boxes join; a count before a word in lower case does not."""
    title = [("1 Measuring", 40, 40, GREY), ("Program", 165, 40, GREY), ("Resource", 40, 62, GREY),
             ("Use", 118, 62, GREY)]  # fmt: skip
    els, im = _page(title)
    assert _texts(_group(_join_pieces(els, im), im)) == ["1 Measuring Program Resource Use"]
    els, im = _page([("12 comments", 40, 140, GREY), ("Share", 165, 140, GREY)])
    assert _texts(_join_pieces(els, im)) == ["12 comments", "Share"]


def test_inline_code_on_a_chip_joins_the_prose_around_it_and_a_highlighted_menu_item_does_not():
    """ "Every method returns a <code>Promise</code> unless a callback is given.": the gap split cuts at the chip's
    padding, and "Promise" starts in upper case, so no text cue joins; the chip does (rule 4): the background changes
    between the two pieces and the text goes on on the page past the chip. A menu bar's highlighted item
    ("File" | "Edit" | "View": capitalised items, none leading into the next) and a button at a row's end (no text
    after it) stay apart."""
    from screenmill.annotators.ocr_colour import backdrop
    from screenmill.annotators.ocr_group import join_pieces

    rows = [("Every method returns a", 40, 40, GREY), ("Promise unless a callback is given.", 272, 40, GREY),
            ("The", 40, 100, GREY), ("documents", 82, 100, GREY), ("module reads it", 184, 100, GREY),
            ("File", 40, 160, GREY), ("Edit", 92, 160, GREY), ("View", 144, 160, GREY),
            ("Have an account?", 40, 220, GREY), ("Sign in", 212, 220, GREY),
            ("Issues", 40, 280, GREY), ("37", 112, 280, GREY), ("Pull requests", 170, 280, GREY)]  # fmt: skip
    els, im = _page(rows, size=(900, 320))
    _chip(im, 268, 346, 38, 62)  # "Promise", inside its piece
    _chip(im, 78, 176, 98, 122)  # the whole of "documents"
    _chip(im, 87, 137, 158, 182)  # the highlighted "Edit" of a menu bar, as close to its neighbours as code
    _chip(im, 208, 286, 218, 242)  # a button at the row's end
    _chip(im, 108, 136, 278, 302)  # a tab's count in its badge: the tab's name and count are one link

    def joined(under):
        return _texts(join_pieces(els, lambda box: _glyph_color(_crop(im, box)), TextElement, None, under))

    texts = joined(lambda box, side: backdrop(im, box, side))
    assert "Every method returns a Promise unless a callback is given." in texts, texts
    assert "The documents module reads it" in texts, texts
    assert {"File", "Edit", "View", "Have an account?", "Sign in", "Issues 37", "Pull requests"} <= set(texts), texts
    assert "Every method returns a" in joined(None)  # the chip is the only cue


def test_inline_code_on_a_chip_in_paler_warmer_glyphs_still_joins_and_a_link_on_a_chip_does_not():
    """npm's docs: "If you wish to <code>require()</code> a package, then install it locally.": the chip's monospace
    glyphs read (70, 71, 65) beside the prose's (42, 46, 51), 67 apart summed and no shade of it; a short code word's
    few glyphs read paler still ("A <code>package</code> is:", (75, 76, 71) beside (36, 41, 46), 99 apart). On its chip
    the code joins up to ``chip_shade_distance``; without the chip, or a blue link
    on a chip, it stays apart."""
    from screenmill.annotators.ocr_colour import backdrop
    from screenmill.annotators.ocr_group import join_pieces

    prose, code, short = (42, 46, 51), (70, 71, 65), (80, 82, 76)  # short: 99 from the prose, summed
    cases = ((code, True, 1), (code, False, 3), (short, True, 1), (short, False, 3), (BLUE, True, 3))
    for colour, chip, expected in cases:
        rows = [("If you wish to", 40, 40, prose), ("require()", 190, 40, colour),
                ("a package, then install it locally.", 290, 40, prose)]  # fmt: skip
        els, im = _page(rows, size=(700, 80))
        if chip:
            _chip(im, 186, 284, 38, 62)
        got = join_pieces(
            els,
            lambda box, im=im: _glyph_color(_crop(im, box)),
            TextElement,
            None,
            lambda b, s, im=im: backdrop(im, b, s),
        )
        assert len(got) == expected, (colour, chip, _texts(got))


def test_pieces_whose_text_continues_join_and_a_row_of_links_stays_apart():
    links = [("Log in", 40, 100, BLUE), ("Camping", 110, 100, BLUE), ("Climbing", 190, 100, BLUE)]  # "in" ends it
    section = [("5.9.", 40, 160, BLUE), ("Implementation Details", 85, 160, BLUE)]
    els, im = _page([("The", 40, 40, GREY), ("libxml", 80, 40, GREY), ("nodes", 150, 40, GREY), *links, *section])
    assert _texts(_join_pieces(els, im)) == ["The libxml nodes", "Log in", "Camping", "Climbing",
                                             "5.9. Implementation Details"]  # fmt: skip


def test_pieces_of_one_ink_read_in_two_shades_join_and_two_hues_as_far_apart_do_not():
    """A short word's few glyphs read paler or darker than a long piece's (26 RGB a channel here, 78 summed): pieces
    that differ only in shade join up to ``max_shade_distance``; a grey and a slate
    blue as far apart, in hue, stay apart. A colour mixed toward white (or black) is a shade of it too."""
    els, im = _page([("twice", 40, 40, (38, 42, 47)), ("in a row writes it", 100, 40, (64, 68, 73))])
    assert _texts(_join_pieces(els, im)) == ["twice in a row writes it"]
    els, im = _page([("twice", 40, 40, (60, 60, 60)), ("in a row writes it", 100, 40, (60, 75, 110))])
    assert _texts(_join_pieces(els, im)) == ["twice", "in a row writes it"]
    # a saturated blue's short piece reads mixed toward white, (0, 0, 238) as (39, 39, 240): its red and green rise,
    # its blue cannot (GCC's "run-time library" | "documentation", one link wrapped); an orange as far off does not
    from screenmill.annotators.ocr_features import _same_colour

    assert _same_colour(np.array([39.0, 39.0, 240.0]), np.array([0.0, 0.0, 238.0]))
    assert _same_colour(np.array([[0.0, 0.0, 238.0]] * 2), np.array([[39.0, 39.0, 240.0]] * 2))  # stacked rows
    assert _same_colour(np.array([200.0, 30.0, 30.0]), np.array([150.0, 22.0, 22.0]))  # a red mixed toward black
    assert not _same_colour(np.array([39.0, 0.0, 238.0]), np.array([0.0, 39.0, 238.0]))  # as far off in hue


def test_pieces_stay_apart_in_another_colour_size_row_or_beyond_the_gap():
    # an inline link the colour split cut from its prose; a small "/ month" after a big price; a far piece
    els, im = _page([("Read about the", 40, 40, GREY), ("accessibility", 190, 40, BLUE)])
    assert _texts(_join_pieces(els, im)) == ["Read about the", "accessibility"]
    els, im = _page([("Feb", 40, 100, GREY), ("15, 2025", 40 + 30 + 2 * H, 100, GREY)])  # 2 line heights apart
    assert _texts(_join_pieces(els, im)) == ["Feb", "15, 2025"]
    els, im = _page([("Feb", 40, 160, GREY), ("15, 2025", 75, 175, GREY)])  # the next row down
    assert _texts(_join_pieces(els, im)) == ["Feb", "15, 2025"]
    els, im = _page([("$0", 40, 220, GREY)])
    small = TextElement("per month", (65, 228, 155, 240), (110, 234), 0.95)
    im[230:238, 65:155:2] = GREY
    assert _texts(_join_pieces([*els, small], im)) == ["$0", "per month"]  # 12 px vs 20 px high: another size


def test_a_menu_items_keyboard_shortcut_joins_it_however_far_right_small_or_pale():
    pale = (150, 150, 150)
    els, im = _page([("Cut", 40, 40, GREY), ("Paste without formatting", 40, 70, GREY), ("Ctrl+C", 320, 100, GREY)])
    cut_key = TextElement("Ctrl+X", (330, 44, 372, 58), (351, 51), 0.9)  # 14 px high: set smaller
    paste_key = TextElement("Ctrl+Shift+V", (330, 74, 414, 88), (372, 81), 0.9)
    for e in (cut_key, paste_key):
        x0, y0, x1, y1 = (int(v) for v in e.box)
        im[y0 + 5 : y1 - 5, x0:x1:2] = pale
    joined = _join_pieces([els[0], cut_key, els[1], paste_key, els[2]], im)
    assert _texts(joined) == ["Cut Ctrl+X", "Paste without formatting Ctrl+Shift+V", "Ctrl+C"]  # nothing before it
    assert joined[0].box == (40, 40, 372, 60) and joined[0].point == (206, 50)  # the menu item's row, clicked mid-row
    els, im = _page([("Ctrl+C", 40, 40, GREY), ("Ctrl+V", 120, 40, GREY)])  # two shortcuts are not an item
    assert _texts(_join_pieces(els, im)) == ["Ctrl+C", "Ctrl+V"]


def test_a_price_and_its_unit_join_and_a_numbered_title_goes_on_along_its_row():
    els, im = _page([("$24", 40, 40, GREY), ("/ user / month", 80, 40, GREY), ("1.2.4 Command", 40, 100, BLUE),
                     ("Info", 185, 100, BLUE), ("Home", 40, 160, BLUE), ("Info", 95, 160, BLUE)])  # fmt: skip
    assert _texts(_join_pieces(els, im)) == ["$24 / user / month", "1.2.4 Command Info", "Home", "Info"]
    els, im = _page([("$0", 40, 220, GREY, 30), ("Home", 40, 300, BLUE)])  # a big price, its unit small and pale
    unit = TextElement("/ month", (75, 228, 131, 248), (103, 238), 0.95)
    im[236:240, 75:131:2] = (140, 140, 150)
    assert _texts(_join_pieces([els[0], unit, els[1]], im)) == ["$0 / month", "Home"]
    assert _texts(_join_pieces([TextElement("Docs", (40, 228, 80, 248), (60, 238), 0.9), unit], im)) == [
        "Docs",
        "/ month",
    ]  # a unit follows an amount, not a word


def test_words_of_a_bold_section_title_join_on_their_row():
    """A section title at 1.3x the body's size ("Core" | "Interface API", cut at a word space that looked wide beside
    the narrower one before "API") is one heading; pieces of that size further apart than a line height (a row of
    larger nav items), a row of counts set as large ("4 Branches" | "27 Tags") and the same words at the body's size
    stay apart."""
    body = [(t, 40, 200 + i * 21, GREY) for i, t in enumerate(["Home", "Introduction", "Downloads", "News"] * 2)]
    title = [("Core", 40, 40, GREY, 26), ("Interface API", 40 + 13 * 4 + 23, 40, GREY, 26)]  # 23 px: 0.9 line
    nav = [("Products", 40, 100, GREY, 26), ("Pricing", 40 + 13 * 8 + 40, 100, GREY, 26)]  # 40 px: 1.5 lines
    counts = [("4 Branches", 40, 150, GREY, 26), ("27 Tags", 40 + 13 * 10 + 20, 150, GREY, 26)]  # a row of counts
    els, im = _page([*title, *nav, *counts, *body], size=(900, 420))
    assert _texts(_join_pieces(els, im))[:5] == ["Core Interface API", "Products", "Pricing", "4 Branches", "27 Tags"]
    els, im = _page([("Core", 40, 40, GREY), ("Interface API", 40 + 10 * 4 + 18, 40, GREY), *body], size=(900, 420))
    assert _texts(_join_pieces(els, im))[:2] == ["Core", "Interface API"]


def test_a_titles_version_tag_joins_it_whatever_its_colour_and_a_version_in_body_type_does_not():
    """npm's page titles carry the release on a grey tag, "Workspaces" | "@11.19.1": one heading in the DOM, the tag
    in another colour. A version joins a title in heading type up to a line height after it; in body type ("Babel" |
    "2.18.0" in a table), or further off, it stays apart."""
    body = [(t, 40, 200 + i * 21, GREY) for i, t in enumerate(["Home", "Introduction", "Downloads", "News"] * 2)]
    title = [("Workspaces", 40, 40, GREY, 26), ("@11.19.1", 40 + 13 * 10 + 20, 40, BLUE, 26)]
    far = [("Scripts", 40, 100, GREY, 26), ("v2.18.0", 40 + 13 * 7 + 40, 100, BLUE, 26)]  # 40 px: 1.5 lines
    els, im = _page([*title, *far, *body], size=(900, 420))
    assert _texts(_join_pieces(els, im))[:3] == ["Workspaces @11.19.1", "Scripts", "v2.18.0"]
    els, im = _page([("Babel", 40, 40, GREY), ("2.18.0", 40 + 10 * 5 + 10, 40, BLUE), *body], size=(900, 420))
    assert _texts(_join_pieces(els, im))[:2] == ["Babel", "2.18.0"]


def test_pieces_with_ink_of_another_colour_between_them_stay_apart():
    """The links "[Contents][index]", cut apart by the bracket split (the second read with a lower-case start), stay
    apart: the black "][" lies between them. The same pieces with a blank gap, or with a pale blue underscore between
    them (the blue blended with the background, as an anti-aliased stroke is: "nettle_hash"), join."""
    from screenmill.annotators.ocr_colour import other_ink_between
    from screenmill.annotators.ocr_group import join_pieces

    rows = [("Contents", 40, 40), ("index", 135, 40), ("Contents", 40, 100), ("index", 135, 100), ("nettle", 40, 160),
            ("hash abstraction", 115, 160)]  # fmt: skip
    els, im = _page([(*row, BLUE) for row in rows])
    im[48:55, 124:126] = (0, 0, 0)  # "]["
    im[48:55, 129:131] = (0, 0, 0)
    im[172:174, 102:113] = (135, 165, 235)  # a pale blue underscore, halfway from the blue to the background
    between = lambda a, b: other_ink_between(im, a, b)  # noqa: E731
    joined = join_pieces(els, lambda box: _glyph_color(_crop(im, box)), TextElement, between)
    assert _texts(joined) == ["Contents", "index", "Contents index", "nettle hash abstraction"]
    assert _texts(_join_pieces(els, im)) == ["Contents index", "Contents index", "nettle hash abstraction"]


def test_drawn_bracketed_links_stay_apart_end_to_end(annotator):
    """Real OCR on a texinfo page's navigation row: "[Contents][index]" gives two links, whatever the case it is read
    in."""
    font = _dejavu(16)
    im = Image.new("RGB", (500, 80), (255, 255, 255))
    d = ImageDraw.Draw(im)
    x = 20.0
    for part, colour in (("Up: ", "black"), ("Top", BLUE), ("   [", "black"), ("Contents", BLUE), ("][", "black"),
                         ("index", BLUE), ("]", "black")):  # fmt: skip
        d.text((x, 30), part, font=font, fill=colour)
        w = d.textlength(part, font=font)
        if colour == BLUE:
            d.line((x, 47, x + w, 47), fill=colour, width=1)  # underlined
        x += w
    texts = [e.text.strip("[]") for e in annotator.annotate(np.asarray(im))]
    assert "Contents" in texts and "index" in texts, texts


def test_grouping_cached_ungrouped_elements_gives_what_read_gives(annotator):
    """``group_elements`` on an ungrouped read (the cache ``infra/truthset/regroup.py`` scores) is ``read``'s grouping:
    a mended rule measured from the cache is the rule the pipeline runs."""
    font = _dejavu(16)
    im = Image.new("RGB", (520, 120), (255, 255, 255))
    d = ImageDraw.Draw(im)
    d.text((20, 20), "Up: ", font=font, fill="black")
    d.text((20 + d.textlength("Up: ", font=font), 20), "Reporting bugs and", font=font, fill=BLUE)
    d.text((20, 40), "getting help", font=font, fill=BLUE)  # a wrapped link: grouping joins it
    d.text((20, 80), "Feb", font=font, fill="black")
    d.text((20 + d.textlength("Feb    ", font=font), 80), "15, 2025", font=font, fill="black")
    pixels = np.asarray(im)
    ungrouped = OcrAnnotator(OcrConfig(group_lines=False))
    ungrouped._engine, ungrouped._cv2 = annotator._engine, annotator._cv2  # the loaded sessions, shared
    cached = ungrouped.read(pixels).elements
    grouped = group_elements(pixels, list(cached), annotator.config)
    read = annotator.read(pixels).elements
    assert sorted(grouped, key=lambda e: e.box) == sorted(read, key=lambda e: e.box)
    assert len(read) < len(cached)  # the grouping did join something, so the equality says something


def test_a_numbered_item_wrapped_under_its_number_joins_and_the_next_number_starts_anew():
    toc = ["3.5.1. Interpreter", "Name", "3.5.2. Interpreter", "Location", "3.6. Module Path"]
    els, im = _page([(t, 40, 40 + i * 21, BLUE) for i, t in enumerate(toc)])
    assert _texts(_group(els, im)) == ["3.5.1. Interpreter Name", "3.5.2. Interpreter Location", "3.6. Module Path"]


def test_words_of_a_display_heading_join_along_the_row_and_down_its_lines():
    # a page title at three times the body's size: title-case words the detector cut at their wide spaces
    body = [(t, 40, 300 + i * 21, GREY) for i, t in enumerate(["Home", "Introduction", "Downloads", "News"])]
    title = [("Measuring", 40, 40, GREY, 60), ("Program", 340, 40, GREY, 60), ("Resource Use", 110, 105, GREY, 60)]
    els, im = _page([*title, *body], size=(900, 420))
    assert _texts(_group(_join_pieces(els, im), im)) == ["Measuring Program Resource Use", *(b[0] for b in body)]
    # a title's line without descenders ("Resource" | "Use") has a lower box than its line with them: 1.6x the body's
    body = [(t, 40, 200 + i * 21, GREY) for i, t in enumerate(["Home", "Introduction", "Downloads", "News"] * 2)]
    title = [("Measuring", 40, 40, GREY, 40), ("Program", 240, 40, GREY, 40), ("Resource", 60, 84, GREY, 32),
             ("Use", 200, 84, GREY, 32)]  # fmt: skip
    els, im = _page([*title, *body], size=(900, 420))
    assert _texts(_join_pieces(els, im))[:2] == ["Measuring Program", "Resource Use"]
    # the same words at the body's size stay apart: a row and a list of links
    els, im = _page([("Measuring", 40, 40, GREY), ("Program", 140, 40, GREY), ("Resource Use", 40, 61, GREY)])
    assert _texts(_group(_join_pieces(els, im), im)) == ["Measuring", "Program", "Resource Use"]


# ---------------------------------------------------------------------- a line too long to name (join_long_lines)
def _join_long(els, im, max_chars=120):
    from screenmill.annotators.ocr_group import join_long_lines

    return join_long_lines(els, lambda box: _glyph_color(_crop(im, box)), TextElement, max_chars)


def test_pieces_of_a_line_of_prose_too_long_to_name_become_the_line_and_a_link_keeps_the_lines_the_dom_draws():
    """A licence's justified line read in pieces at its wide spaces ("THIS SOFTWARE IS PROVIDED BY" | ...): each
    piece names a fragment of a line the DOM labels give no label (over 120 characters). Its pieces become the line,
    which gives no label either. A link of another colour cuts a long row into lines the DOM does label ("Libxslt is
    the" | link | "..."): those stay, and so does a row of short cells."""
    a, b, c = (
        "THIS SOFTWARE IS PROVIDED BY",
        "THE AUTHOR AS IS AND ANY EXPRESS OR IMPLIED WARRANTIES",
        "INCLUDING BUT NOT LIMITED TO THE IMPLIED WARRANTIES",
    )
    x1, x2 = 20 + ADV * len(a) + 8, 20 + ADV * (len(a) + len(b)) + 16
    els, im = _page([(a, 20, 40, GREY), (b, x1, 40, GREY), (c, x2, 40, GREY)], size=(1600, 200))
    (line,) = _join_long(els, im)
    assert line.text == f"{a} {b} {c}" and len(line.text) > 120
    assert line.box == (20, 40, x2 + ADV * len(c), 60)
    assert line.point == ((20 + x2 + ADV * len(c)) / 2, 50)
    # the middle piece a link: two lines of prose under 120 characters, each the DOM's, and the link
    els, im = _page([(a, 20, 40, GREY), (b, x1, 40, BLUE), (c, x2, 40, GREY)], size=(1600, 200))
    assert _texts(_join_long(els, im)) == [a, b, c]
    # a row no longer than the limit (a table's cells, a nav bar) is left as it is
    els, im = _page([(a, 20, 40, GREY), (b, x1, 40, GREY), (c, x2, 40, GREY)], size=(1600, 200))
    assert _texts(_join_long(els, im, max_chars=len(line.text))) == [a, b, c]
    # a word of two letters reads paler than the prose around it (its few thin strokes), further than a shade's limit
    d, e = (
        "YOU SHOULD HAVE RECEIVED A COPY OF THE LICENCE ALONG WITH THIS DOCUMENT IF NOT WRITE",
        "THE FREE SOFTWARE FOUNDATION INCORPORATED",
    )
    xd = 20 + ADV * len(d) + 8
    faint = [(d, 20, 40, (28, 28, 28)), ("to", xd, 40, (70, 70, 70)), (e, xd + ADV * 2 + 8, 40, (28, 28, 28))]
    els, im = _page(faint, size=(1600, 200))
    assert _texts(_join_long(els, im)) == [f"{d} to {e}"]
    els, im = _page([faint[0], (faint[1][0], xd, 40, BLUE), faint[2]], size=(1600, 200))
    assert _texts(_join_long(els, im)) == [d, "to", e]  # a short link of another hue still cuts the line
    els, im = _page([(a, 20, 40, GREY), (b, x1, 40, GREY), (c, x2, 40, GREY)], size=(1600, 200))
    # the joined line gives no label; its pieces each gave one
    from screenmill.annotators.ocr_producer import OcrProducer, elements_to_labels

    from tests.annotators.test_ocr_producer import _shot

    producer = OcrProducer(run_id="r", config_hash="h")
    assert len(elements_to_labels(_shot(1600, 200), els, OcrAnnotator, producer)) == 3
    assert elements_to_labels(_shot(1600, 200), _join_long(els, im), OcrAnnotator, producer) == []


# ---------------------------------------------------------------------- syntax-highlighted code (join_code_rows)
RED, GREEN = (200, 30, 30), (20, 140, 40)


def _code(pieces, y=40, size=(900, 120)):
    """One row of pieces (text, x0, colour[, height]) → join_code_rows' texts."""
    from screenmill.annotators.ocr_group import join_code_rows

    els, im = _page([(t, x, y, c, *h) for t, x, c, *h in pieces], size=size)
    return _texts(join_code_rows(els, lambda box: _glyph_color(_crop(im, box)), TextElement))


def test_a_highlighted_code_line_is_one_element_spaced_where_its_gaps_are():
    # ">>> format(1.5, locale='en')": the prompt, a name, a number, a keyword argument, a string, four colours; a
    # token's box is its ink, so "format(" | "1.5," stand apart by less than a glyph's advance (ADV) and take no space
    row = [(">>>", 40, GREY), ("format(", 80, BLUE), ("1.5,", 154, GREEN), ("locale=", 204, BLUE), ("'en')", 274, RED)]
    assert _code(row) == [">>> format(1.5, locale='en')"]


def test_a_call_whose_argument_is_the_next_piece_is_one_code_line_in_two_colours():
    # "... print('Zero')": the continuation prompt holds no letter and is no piece; the name and its string are two
    # colours, but "print(" opens a bracket the next piece goes on inside, as a call's argument does
    assert _code([("print(", 40, BLUE), ("'Zero')", 104, RED)]) == ["print('Zero')"]
    assert _code([("print", 40, BLUE), ("'Zero'", 104, RED)]) == ["print", "'Zero'"]  # no bracket: two tokens


def test_a_line_of_text_with_a_link_is_no_code_line():
    # two colours (text and its link): an API signature with a link to its return type, prose with an inline link
    assert _code([("parse(x=None,", 40, GREY), ("Command", 180, BLUE)]) == ["parse(x=None,", "Command"]
    # three colours, code-like pieces, but of many words: prose
    row = [("Call the format() function,", 40, GREY), ("x=1,", 320, BLUE), ("to set it,", 370, GREY), ("y", 480, RED)]
    assert _code(row) == ["Call the format() function,", "x=1,", "to set it,", "y"]
    # three colours, tokens of few words, but most of them plain words
    row = [("See", 40, GREY), ("x=1", 90, BLUE), ("and", 130, GREY), ("Locale", 170, RED)]
    assert _code(row) == ["See", "x=1", "and", "Locale"]


def test_a_smaller_link_after_a_code_line_is_no_token_of_it():
    row = [("parse(", 40, BLUE), ("info=None,", 104, GREEN), ("**kw)", 214, RED), ("[source]", 274, GREY, 16)]
    assert _code(row) == ["parse(info=None, **kw)", "[source]"]


def test_a_wrapped_side_bar_link_closer_than_the_lists_pitch_is_one_element():
    """Title-case words give no text cue ("API Reference for the attr" | "Namespace"), but the side bar's links stand
    at a regular pitch of 1.6 line heights and the wrapped line 0.9 below its first (rule 8). In a list at an even
    pitch the same two lines are two items."""
    items = [
        "Initialization",
        "Comparison",
        "Hashing",
        "API Reference for the attr",
        "Namespace",
        "Extending",
        "Glossary",
    ]

    def side_bar(steps):
        ys = [40 + sum(steps[:k]) for k in range(len(items))]
        return _texts(_group(*_page([(t, 40, y, BLUE) for t, y in zip(items, ys, strict=True)], size=(600, 300))))

    assert side_bar([32, 32, 32, 18, 32, 32]) == [*items[:3], "API Reference for the attr Namespace", *items[5:]]
    assert side_bar([22] * 6) == items
    assert side_bar([32, 40, 24, 18, 32, 32]) == items  # no regular pitch: groups, separators between

    # the detector's boxes are 16 to 25 px high about text at a regular pitch: their tops jitter by a third of a line,
    # their middles do not (the "API Reference for the attr" side bar as read)
    heights = [16, 25, 16, 22, 21, 25, 16]
    middles = [40 + 32 * k - 14 * (k > 3) for k in range(len(items))]
    lines = [(t, 40, m - hk / 2, BLUE, hk) for t, m, hk in zip(items, middles, heights, strict=True)]
    joined = [*items[:3], "API Reference for the attr Namespace", *items[5:]]
    assert _texts(_group(*_page(lines, size=(600, 300)))) == joined


def test_an_index_tables_wrapped_cells_join_where_their_step_is_shorter_than_the_rows_around():
    """A texinfo index on a phone: entries ("Assignment" | "functions:") and their sections ("Assignment" |
    "Functions") wrap in both columns, so a column's steps mix its rows' pitch (36 px here) with its wrapped cells'
    (28): no regular pitch, and no text cue joins two single words. A step shorter than both the step from the row
    above and to the row below, and one the page repeats (each wrapped cell has it), is a wrap. Rows at one even
    step stay apart, and so do rows a letter heading parts."""

    def table(intra: int, heading: bool = False):
        rows, y = [], 40
        for word, wraps in (("Arithmetic", False), ("Assignment", True), ("Comparison", True), ("Conversion", False)):
            if wraps:
                rows += [(word, 40, y, BLUE), ("functions:", 40, y + intra, BLUE)]
                rows += [(word, 340, y, BLUE), ("Functions", 340, y + intra, BLUE)]
                y += intra
            else:
                rows += [(f"{word} functions:", 40, y, BLUE), (f"{word} Functions", 340, y, BLUE)]
            y += 36
        if heading:  # a letter heading between the first two rows, left of the columns
            rows.append(("A", 10, 63, GREY, 12))
        return set(_texts(_group(*_page(rows, size=(700, 300)))))

    joined = {f"{w} {f}" for w in ("Assignment", "Comparison") for f in ("functions:", "Functions")}
    assert joined <= table(28)
    assert not joined & table(36)  # one even step: rows, not wraps
    assert "Assignment functions:" not in table(28, heading=True)


def test_a_numbered_item_closer_than_the_lists_pitch_starts_an_item():
    items = ["1 Overview", "2 Invoking", "3 Conventions", "4 Example", "5 Options", "6 Index"]
    ys = [40 + sum([32, 32, 18, 32, 32][:k]) for k in range(len(items))]
    els, im = _page([(t, 40, y, BLUE) for t, y in zip(items, ys, strict=True)], size=(600, 300))
    assert _texts(_group(els, im)) == items


def test_loosely_set_prose_joins_at_the_screenshots_own_line_pitch():
    """A phone sets prose at a loose line height: 0.55 line heights between the detector's boxes, past rule 1's 0.5.
    Such a gap joins where it is the screenshot's own line pitch (the step most aligned line pairs of that size
    share), and nothing stands further right on either row (a table's rows at an even pitch, "3 days ago")."""

    def read(steps, cells=()):
        lines = [
            ("The module provides powerful", 40, 40),
            ("extensions to the standard module", 40, 40 + steps[0]),
            ("It is based on the specification of", 40, 140),
            ("the excellent work done by him in", 40, 140 + steps[1]),
            ("his own module for dates.", 40, 140 + 2 * steps[1]),
            *cells,
        ]
        els, im = _page([(t, x, y, GREY) for t, x, y in lines], size=(900, 300))
        return _texts(_group(els, im))

    assert read((31, 31)) == [
        "The module provides powerful extensions to the standard module",
        "It is based on the specification of the excellent work done by him in his own module for dates.",
    ]
    # the other paragraph set tighter: 31 px is no line step of this screenshot's
    assert read((31, 26))[:2] == ["The module provides powerful", "extensions to the standard module"]
    # a table's rows: a cell further right on the row
    assert read((31, 31), [("3 days ago", 600, 40)])[:2] == [
        "The module provides powerful",
        "extensions to the standard module",
    ]


def test_a_console_line_joins_in_two_colours_across_a_dropped_operator():
    # after a prompt a line is code whatever its colours count; the recogniser drops a small operator ("==") between
    # two tokens, leaving two line heights between them
    row = [(">>>", 40, RED), ("sc", 80, GREY), ("SomeClass(", 140, GREY), ("1)", 240, RED)]
    assert _code(row) == [">>> sc SomeClass(1)"]
    # without the prompt, two colours are a line of text and its link (where no piece opens a bracket the next goes
    # on inside: that is a call and its argument)
    row = [("x", 40, RED), ("sc", 80, GREY), ("SomeClass(1,", 140, GREY), ("2)", 270, RED)]
    assert _code(row) == ["x", "sc", "SomeClass(1,", "2)"]


def test_a_console_prompt_starts_its_line_however_close_its_statement_and_whatever_stands_left_of_it():
    # ">>> if x < 0:": "if" stands closer to the prompt than a character's advance, and the side bar's last link ends
    # two line heights left of the prompt, within a code line's reach of its tokens
    row = [("JSONDecodeError", 40, GREY), (">>>", 230, RED), ("if", 266, GREEN), ("x<0:", 300, BLUE)]
    assert _code(row) == ["JSONDecodeError", ">>> if x<0:"]


def test_a_console_prompt_read_in_a_lower_box_leads_its_statement_of_plain_words():
    # ">>>" has no ascenders: the detector's box is two thirds of the line's; "from attrs import define, field" is
    # plain words, which after the prompt are code
    row = [
        (">>>", 40, GREY, 13),
        ("from", 80, BLUE),
        ("attrs", 130, GREY),
        ("import", 190, BLUE),
        ("field", 260, GREY),
    ]
    assert _code(row, y=40) == [">>> from attrs import field"]
    # the same words without the prompt: a line of text with links
    assert _code(row[1:]) == ["from", "attrs", "import", "field"]


def test_where_a_links_underline_cannot_be_told_its_style_is_its_colour_alone():
    """Rule 7 reads an underline as part of the style only where it can be told on both pieces: a link word too short
    to show one ("Go" | "to the docs", unknown) in bare prose of its own colour is no lesser part of its lines, so it
    stays apart; told underlined, the two lines are one link."""
    rows = [("Questions? Please read", 40, 40, GREY), ("Go", 270, 40, GREY), ("to the docs", 40, 62, GREY),
            ("for more about it.", 160, 62, GREY)]  # fmt: skip
    els, im = _page(rows, size=(900, 120))
    link = {els[1].box, els[2].box}

    def group(state):
        under = lambda box: state if box in link else False  # noqa: E731 - the prose is bare
        return _texts(group_lines(els, lambda box: _glyph_color(_crop(im, box)), TextElement, None, None, under))

    assert "Go to the docs" in group(True)
    assert "Go" in group(None) and "to the docs" in group(None)


def test_a_capitals_box_without_descenders_is_of_the_size_of_the_words_beside_it():
    """A word with no glyph below the baseline ("GNU") gets a box about a descender shorter than one of its size
    with one ("Coding": 69 against 105 px in a heading), which read as two font sizes; a badge set much smaller
    ("NEW" at half the height) stays apart."""
    body = [("This manual documents", 40, 140, GREY), ("how to write GNU programs", 40, 170, GREY)]
    els, im = _page([("GNU", 40, 48, GREY, 46), ("Coding", 130, 40, GREY, 70), *body], size=(600, 200))
    assert _texts(_join_pieces(els, im))[:1] == ["GNU Coding"]
    els, im = _page([("Coding", 40, 40, GREY, 70), ("NEW", 260, 58, GREY, 34), *body], size=(600, 200))
    assert _texts(_join_pieces(els, im))[:2] == ["Coding", "NEW"]


def _underlined_group(rows, lined, size=(900, 200), colours=None, marks=None):
    """Group ``rows`` (as :func:`_page`) with the pieces at indices ``lined`` underlined (a solid rule low in their
    boxes), ``underlined`` reading the image, ``colours`` (index → stacked RGB rows) standing in for the colour read
    where given, ``marks`` (index → a list marker left of it) for the marker read."""
    from screenmill.annotators.ocr_ink import underlined

    els, im = _page(rows, size=size)
    for k in lined:
        e = els[k]
        im[int(e.box[3]) - 3, int(e.box[0]) : int(e.box[2])] = rows[k][3]
    config = OcrConfig()
    by_box = {e.box: np.asarray(colours[k], dtype=float) for k, e in enumerate(els)} if colours else {}
    marked_at = {els[k].box: v for k, v in (marks or {}).items()}
    return _texts(
        group_lines(
            els,
            lambda box: by_box[box] if colours else _glyph_color(_crop(im, box)),
            TextElement,
            (lambda box: marked_at.get(box, False)) if marks is not None else None,
            None,
            lambda box: underlined(im, box, config),
        )
    )


def test_an_underlined_link_wrapped_in_prose_joins_whatever_its_second_line_starts_with():
    """ "are based on the <a>Locale Data Markup" | "Language specification</a> (LDML).": both lines underlined, in
    prose: one link, though its second line starts capitalised (no text cue). It stays apart where the first ends with
    the prose's comma (two links of a list: "sqlite3_prepare()," | "Sqlite3_step()"), where the second line has a
    list marker of its own (the next item of a list of links), and where the second line's first word had room at
    the end of the first: a line that ends short did not wrap ("... bindings for Tcl" | "Peter Jones maintains")."""
    prose = [("patterns Babel supports for number formatting are based on the", 40, 40, GREY),
             ("patterns Babel supports number formatting based on the", 40, 62, GREY),
             ("Locale Data Markup", 600, 62, BLUE), ("Language specification", 40, 84, BLUE),
             ("(LDML).", 270, 84, GREY)]  # fmt: skip
    assert "Locale Data Markup Language specification" in _underlined_group(prose, (2, 3))
    assert "Locale Data Markup" in _underlined_group(prose, ())  # not underlined: no text cue, apart
    comma = [*prose[:2], ("Locale Data Markup,", 600, 62, BLUE), *prose[3:]]
    assert "Locale Data Markup," in _underlined_group(comma, (2, 3))
    assert "Locale Data Markup" in _underlined_group(prose, (2, 3), marks={3: True})
    short = [prose[0], ("Steve Ball maintains the", 40, 62, GREY), ("bindings for Tcl", 300, 62, BLUE), *prose[3:]]
    assert "bindings for Tcl" in _underlined_group(short, (2, 3))


def test_a_link_wrapped_in_prose_joins_though_the_prose_mark_after_it_is_another_colour():
    """ "... download it from <a>the Expat home" | "page</a>.": the black full stop after the blue link is read with
    its last line, whose ink is then of two colours (words blue, all ink darker). It ends the link: the two lines join.
    A comma of another colour ending the first line ends the link there: they stay apart."""
    blue, mixed = [[49, 115, 222]] * 2, [[49, 115, 222], [40, 40, 40]]
    grey = [[60, 60, 60]] * 2
    rows = [("This is free software. You may download it from", 40, 40, GREY), ("the Expat home", 530, 40, BLUE),
            ("page.", 40, 62, BLUE), ("It is fast.", 100, 62, GREY)]  # fmt: skip
    assert "the Expat home page." in _underlined_group(rows, (), colours=[grey, blue, mixed, grey])
    rows[1:3] = [("the Expat home,", 530, 40, BLUE), ("page", 40, 62, BLUE)]
    assert "the Expat home," in _underlined_group(rows, (), colours=[grey, mixed, blue, grey])
    aligned = [("Reporting bugs and", 40, 40, BLUE), ("getting help.", 40, 62, BLUE)]  # a link's own two lines
    assert _underlined_group(aligned, (), colours=[blue, mixed]) == ["Reporting bugs and getting help."]


def test_a_link_wrapped_in_prose_joins_though_its_second_line_reaches_past_where_its_first_starts():
    """ "A copy of the license is included in <a>GNU Free Documentation" | "License and its own terms</a>.": the
    link's second line ends right of where its first line starts (a phone's narrow column), but before the first
    ends: still one link. A second line reaching past the first's end is a line of its own."""
    rows = [("and with no Back-Cover Texts. A copy of the", 40, 40, GREY), ("license is included in", 40, 62, GREY),
            ("GNU Free Documentation", 265, 62, BLUE), ("License and its own terms.", 40, 84, BLUE)]  # fmt: skip
    assert "GNU Free Documentation License and its own terms." in _underlined_group(rows, (2, 3), marks={})
    rows[2:] = [("GNU Free Docs", 265, 62, BLUE), ("License and all of its own terms and more.", 40, 84, BLUE)]
    # the first line ends at 395, the second at 460
    assert "GNU Free Docs" in _underlined_group(rows, (2, 3), marks={})


def test_a_link_of_words_set_between_prose_joins_across_its_wrap_without_a_text_cue():
    """ "For more, see the <a>API" | "documentation</a>. Or ask.": no underline, and no text cue (a single word under
    another), but the prose of another colour runs right up to the link's first line and on right after its second:
    the link is inset in the paragraph across the wrap. Code tokens so set ("attrs.field" | "attr.ib": two links of
    an API list) and a first line ending with the prose's comma stay apart."""
    rows = [("Every part of the library is described in full in the", 40, 40, GREY),
            ("For more on each class and function, see the", 40, 62, GREY), ("API", 490, 62, BLUE),
            ("documentation", 40, 84, BLUE), ("and ask us.", 180, 84, GREY)]  # fmt: skip
    assert "API documentation" in _underlined_group(rows, ())
    for first, second in (("attrs.field", "define"), ("field", "attr.ib")):  # either one code
        code = [
            *rows[:2],
            (first, 490, 62, BLUE),
            (second, 40, 84, BLUE),
            ("and ask us.", 50 + ADV * len(second), 84, GREY),
        ]
        assert first in _underlined_group(code, ()), (first, second)
    comma = [*rows[:2], ("API,", 490, 62, BLUE), *rows[3:]]
    assert "API," in _underlined_group(comma, ())
    apart = [*rows[:4], ("and ask us.", 300, 84, GREY)]  # the prose goes on far off: no link inset
    assert "API" in _underlined_group(apart, ())


def test_an_underlined_link_inset_in_a_row_mostly_of_links_joins_across_its_wrap():
    """A texinfo node's header on a phone: "Next: <a>Introduction</a>, Previous: <a>R Data" | "Import/Export</a>,
    Up: <a>R Data Import/Export</a>". Links are most of the two rows and of the table of contents around them, so
    the wrapped link is no lesser part of its text; but it is underlined on both lines and inset between the prose's
    "Previous:" and ", Up:": one link. Not underlined, the same rows stay apart (the words between two links)."""
    rows = [("Next:", 40, 40, GREY), ("Introduction,", 100, 40, BLUE), ("Previous:", 240, 40, GREY),
            ("R Data", 340, 40, BLUE), ("Import/Export,", 40, 62, BLUE), ("Up:", 190, 62, GREY),
            ("R Data Import/Export", 230, 62, BLUE), ("Concept Index", 40, 84, BLUE)]  # fmt: skip
    texts = _underlined_group(rows, (1, 3, 4, 6, 7), size=(420, 200))
    assert "R Data Import/Export," in texts, texts
    texts = _underlined_group(rows, (), size=(420, 200))
    assert "R Data" in texts and "Import/Export," in texts, texts
    # "Next: <a>AutoOpts Licensing</a>, Up: <a>Automated" | "Option Processing</a>   [<a>Contents</a>]": no prose
    # right after the link's second line, but the prose's "Up:" leads into its first and nothing stands left of the
    # second (the line's first text); a "[" left of it (a bracket the splitting dropped) is another link's
    rows = [("Next:", 40, 40, GREY), ("AutoOpts Licensing,", 100, 40, BLUE), ("Up:", 300, 40, GREY),
            ("Automated", 340, 40, BLUE), ("Option Processing", 40, 62, BLUE), ("Contents", 240, 62, BLUE),
            ("Concept Index", 40, 84, BLUE)]  # fmt: skip
    lined = (1, 3, 4, 5, 6)
    assert "Automated Option Processing" in _underlined_group(rows, lined, size=(460, 200), marks={})
    texts = _underlined_group(rows, lined, size=(460, 200), marks={4: None})
    assert "Automated" in texts and "Option Processing" in texts, texts


def test_a_header_link_titled_with_a_dash_or_ending_in_code_type_joins_but_a_bracketed_item_stays_apart():
    """AutoGen's and Mailutils' node headers on a phone. "Previous: <a>string-tr! - convert" | "characters</a>, Up:
    ...": a spaced dash is prose's punctuation, so the words are still words and the link, inset between "Previous:"
    and ", Up:", joins. "Up: <a>Configuring" | "<code>comsatd</code></a> [Contents]": the link's second line is set in
    code type with no descender, a box 0.69 of the first's, still the same size once the descender counts. And "Up:
    <a>MPFR Basics</a>" | "[<a>Index</a>]": a bracketed item starts the next line; it is a link of its own."""
    rows = [("Next:", 40, 40, GREY), ("Lists,", 100, 40, BLUE), ("Previous:", 170, 40, GREY),
            ("string-tr! - convert", 270, 40, BLUE), ("characters,", 40, 62, BLUE), ("Up:", 160, 62, GREY),
            ("Common Scheme Functions", 200, 62, BLUE)]  # fmt: skip
    texts = _underlined_group(rows, (1, 3, 4, 6), size=(520, 120))
    assert "string-tr! - convert characters," in texts, texts
    rows = [("Next:", 40, 40, GREY), ("Security Settings,", 100, 40, BLUE), ("Up:", 310, 40, GREY),
            ("Configuring", 350, 40, BLUE), ("comsatd", 40, 63, BLUE, 12), ("Contents", 150, 62, BLUE)]  # fmt: skip
    texts = _underlined_group(rows, (1, 3, 4, 5), size=(520, 120), marks={})
    assert "Configuring comsatd" in texts, texts
    rows = [("Previous:", 40, 40, GREY), ("Exceptions,", 140, 40, BLUE), ("Up:", 280, 40, GREY),
            ("MPFR Basics", 320, 40, BLUE), ("[Index]", 40, 62, BLUE)]  # fmt: skip
    texts = _underlined_group(rows, (1, 3, 4), size=(520, 120), marks={})
    assert "MPFR Basics" in texts and "[Index]" in texts, texts
    # flex's FAQ nodes are named with numbers: "Previous: <a>unnamed-" | "faq-80</a>, Up: ..." is one link too
    rows = [("Next:", 40, 40, GREY), ("unnamed-faq-82,", 100, 40, BLUE), ("Previous:", 260, 40, GREY),
            ("unnamed-", 360, 40, BLUE), ("faq-80,", 40, 62, BLUE), ("Up:", 120, 62, GREY),
            ("FAQ.", 160, 62, BLUE)]  # fmt: skip
    texts = _underlined_group(rows, (1, 3, 4, 6), size=(520, 120), marks={})
    assert "unnamed-faq-80," in texts, texts


def test_a_stop_read_from_a_wrapped_links_underline_end_is_dropped_and_the_link_joins():
    """MPFR's header on a phone: "Previous: <a>Reporting" | "Bugs</a>, Up: ...": the underline runs a little past the
    "g" and is read as a full stop, "Reporting.". No full stop ends an underlined link that goes on under the next
    line: the two lines join, without it. A full stop after a bare word at a line's end still ends the sentence."""
    rows = [("Next:", 40, 40, GREY), ("MPFR Interface,", 100, 40, BLUE), ("Previous:", 260, 40, GREY),
            ("Reporting.", 360, 40, BLUE), ("Bugs,", 40, 62, BLUE), ("Up:", 100, 62, GREY),
            ("GNU MPFR", 140, 62, BLUE)]  # fmt: skip
    texts = _underlined_group(rows, (1, 3, 4, 6), size=(520, 120))
    assert "Reporting Bugs," in texts, texts
    bare = [*rows[:3], ("Reporting.", 360, 40, GREY), ("Bugs,", 40, 62, GREY), *rows[5:]]
    texts = _underlined_group(bare, (1, 6), size=(520, 120))
    assert not any("Bugs" in t and "Reporting" in t for t in texts), texts


def test_a_links_second_line_read_with_the_prose_comma_after_it_is_underlined_as_its_words_are():
    """ "Previous: <a>Reporting" | "Bugs</a>, Up: ...": the recogniser reads "Bugs," with the prose's comma, whose
    column has no underline, so the underline ran under too little of the box to count and the two lines' styles
    differed. The comma's share of the box (by advance widths) is left out when the underline is looked for."""
    from screenmill.annotators.ocr_ink import underlined

    rows = [("Next:", 40, 40, GREY), ("MPFR Interface,", 100, 40, BLUE), ("Previous:", 260, 40, GREY),
            ("Reporting", 360, 40, BLUE), ("Bugs,", 40, 62, BLUE), ("Up:", 100, 62, GREY),
            ("GNU MPFR", 140, 62, BLUE)]  # fmt: skip
    els, im = _page(rows, size=(480, 120))
    for k in (1, 3, 6):
        e = els[k]
        im[int(e.box[3]) - 3, int(e.box[0]) : int(e.box[2])] = BLUE
    # "Bugs,": its underline skips the "g"'s descender (ink below it, 63-67) 7 px either side and stops at the comma
    im[79, 40:56] = im[79, 74:82] = BLUE
    im[78:82, 63:68] = BLUE
    config = OcrConfig()
    texts = _texts(
        group_lines(els, lambda box: _glyph_color(_crop(im, box)), TextElement, lambda box: False, None,
                    lambda box: underlined(im, box, config))
    )  # fmt: skip
    assert "Reporting Bugs," in texts, texts


def test_loosely_set_prose_joins_where_its_step_strays_a_few_pixels_from_the_pitch():
    """At 3x a box's top follows its line's ascenders: prose set 72 px apart shows steps of 70 to 76 px. A pair 75 px
    apart (4 % off the 72 px pitch) is still at the pitch: "Virtualenv is probably what you want to use for" |
    "developing Click applications."; 84 px (a list item's margin more) is not."""

    def read(step):
        lines = [("Virtualenv is probably what you want", 40, 40), ("developing Click applications", 40, 40 + step),
                 ("It is based on the specification of", 40, 300), ("the excellent work done by him in", 40, 372),
                 ("his own module for dates that", 40, 444), ("the first one is passing it", 40, 600),
                 ("two date and datetime classes", 40, 672)]  # fmt: skip
        els, im = _page([(t, x, y, GREY, 48) for t, x, y in lines], size=(1300, 760))
        return _texts(_group(els, im))

    assert read(75)[0] == "Virtualenv is probably what you want developing Click applications"
    assert read(84)[0] == "Virtualenv is probably what you want"


def test_the_line_pitch_is_measured_between_middles_which_ascenders_and_descenders_shift_less_than_tops():
    """dateutil on a phone: "Additional resources about date/time string" (a 55 px box, its "A" and "d" reach up) and
    "formats can be found below:" (40 px) stand 79 px apart top to top but 71.5 px middle to middle, where the
    screenshot's lines step 72 px: the pair is at the pitch, and the paragraph joins."""

    def read(first_box):  # the second line's middle 72.5 px below the first's; its top 80 px below the first's
        lines = [("Additional resources about date", 40, 40, first_box), ("formats can be found below", 40, 120, 40),
                 ("It is based on the spec of", 40, 300, 48), ("the excellent work done by him", 40, 372, 48),
                 ("his own module for dates that", 40, 444, 48), ("the first one is passing it", 40, 600, 48),
                 ("two date and datetime classes", 40, 672, 48)]  # fmt: skip
        els, im = _page([(t, x, y, GREY, h) for t, x, y, h in lines], size=(1300, 760))
        return _texts(_group(els, im))

    assert read(55)[0] == "Additional resources about date formats can be found below"
