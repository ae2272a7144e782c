"""Element-level grouping of OCR text: the pieces of one line and the lines of one wrapped link, button or heading
become one element.

**Pieces of one line** (:func:`join_pieces`). The detector (or the annotator's own gap split) sometimes cuts one
element's line into pieces at a word space: a date in a table cell ("Feb" | "15," | "2025"), a heading ("The" |
"libxml" | "nodes"), a section link ("5.9." | "Implementation Details"). Neighbouring elements on a row (cells, a
link list, a menu) stand as close as the words of one element, so geometry alone cannot tell (on the truth set's dev
split a purely geometric join loses more than it wins). A piece A is joined with the piece B right after it on its
row only when all of:

1. **Geometry.** Same font size (heights within 25 %), vertical centres within :data:`ROW_CENTRE` line heights, and B
   starts at most :data:`MAX_PIECE_GAP` line heights after A ends (a slight overlap of two detections included).
2. **Same style.** Glyph colours within :data:`MAX_COLOUR_DISTANCE`, or :data:`MAX_SHADE_DISTANCE` where they differ
   only in shade (a short word's few glyphs read paler or darker than a long piece's), so an inline link split from
   the prose around it by colour stays split; and no glyph ink of another colour between them (``split_between``:
   the black "][" of "[Contents][index]", two links whatever case the second is read in), nor the end of an underline
   (a grey underlined link in black prose, a shade apart: "The project is" | "hosted on GitHub"; or the bare gap
   between two underlined links, "Babel 2.18.0" | "previous": a link's underline runs under its spaces), nor a mark of
   another colour ending A (the prose's black comma after a blue link set as code, "maps:next/1," | "maps:filter/2":
   a sliver too small to change A's colour, :func:`screenmill.annotators.ocr.mark_after`), nor a spaced separator of
   any colour (a breadcrumb's grey "»" between grey links, :func:`screenmill.annotators.ocr.glyph_between`). A month
   and the number after it ("Feb" | "15, 2025") join whatever their colours.
3. **The text continues** (:func:`continues_on_row`): A ends with a comma or a hyphen, B starts with a lower-case
   letter (and not like a list item), A is a month name and B starts with a digit ("Feb" | "15,"), A is a section
   number, alone or with the start of its title, and B starts with a letter ("5.9." | "Implementation", "1.2.4
   Command" | "Info", a chapter's bare number: "1 Measuring" | "Program"), or the two boxes overlap (the detector
   cut one line in two: "Resource" | "Use"; a row's items never overlap). Unlike a wrapped line, a function word
   ending A does not count: on a row it ends many a nav item ("Log in" | "Newsletters"). Pieces set in heading type
   (:data:`HEADING_RATIO` times the screenshot's median line height: a page title or a bold section title, whose wide
   word spaces the detector or the gap split cuts at) join with no text cue when at most :data:`HEADING_PIECE_GAP`
   line heights apart, unless B starts with a number (a row of counts set large: "4 Branches" | "27 Tags").
4. **Or inline code on a chip** (when the caller can see backgrounds: ``backdrop``,
:func:`screenmill.annotators.ocr.backdrop`)
   stands in for rule 3. The gap split cuts at a chip's padding, and code often starts in upper case ("Every method
   returns a" | "Promise unless a callback is given."), so no text cue joins. A and B join when the background changes
   between them (:data:`CHIP_CONTRAST`) and either a chip opens B after prose that leads into it (A's last word in
   lower case, a function word or a colon: "returns a" | "Promise") and the text goes on on the page past the chip
   (the chip ends inside B or before the piece after B), or a chip closes at A's end and the prose after it runs on
   (B starts in lower case or with punctuation: "Promise" | "unless a callback"), the chip having opened inside A or
   after the piece before A. A count on a chip joins the name before it (a tab's badge: "Issues" | "37", one link).
   The chip's monospace glyphs may read paler and warmer than the prose round them ("wish to" | "require()" in npm's
   docs, 67 apart summed): on a chip, pieces join up to :data:`CHIP_SHADE_DISTANCE` apart whatever the hue (rule 2's
   shade test aside); a blue link on a chip is much further off.
   A button at a row's end has no text after it, and a menu bar's highlighted item sits among capitalised items
   ("File" | "Edit" | "View"), so neither joins.

5. **Or a line of syntax-highlighted code** (:func:`join_code_rows`, before the rules above). A highlighter paints a
   code line's tokens in several colours ("format_decimal(" | "12345," | "locale='" | "de_DE'"), and the colour split
   cuts the line at each change, so every token would name a fragment that cuts a word. A row's run of pieces (rule 1,
   in one font, up to :data:`CODE_PIECE_GAP` line heights apart: a comma or an operator the recogniser dropped) joins
   when it is painted in :data:`CODE_COLOURS` colours or more (a line of text with a link is two; after a console's
   prompt, ">>>", two; a prompt read alone in a lower box leads its line), reads as code, and its pieces are tokens
   (few words each, most of them holding a digit, an underscore or punctuation). A space goes where two pieces stand a
   character's advance apart: "format_decimal(12345, locale='de_DE'".

Two pieces join whatever their colour, and B may be set down to :data:`MIN_SHORTCUT_HEIGHT` of A's height: a menu
item and its keyboard shortcut ("Cut" | "Ctrl+X", up to :data:`MAX_SHORTCUT_GAP` line heights to the right: the DOM's
menu item holds both, and its row is what is clicked), and an amount and its unit ("$0" | "/ month"). A title in
heading type and a release's version on a tag after it, at most :data:`HEADING_PIECE_GAP` line heights on, join
whatever the tag's colour ("Workspaces" | "@11.19.1": npm's page title holds both).

The joined piece's text is the pieces' texts joined by a space, its box their union, its click point the box centre.

PP-OCR's detector finds text *lines*; a link, button or heading that wraps onto two lines ("Main call" | "to
action", "Add to" | "cart") comes out as fragments, and no fragment names the element. :func:`group_lines` joins a
line A to the line B just below it when the layout says B continues A, and only then:

1. **Geometry.** B starts within half a line height below A's bottom (line spacing, not a paragraph or list-item gap),
   the two have the same font size (the smaller line height at least :data:`MIN_HEIGHT_RATIO` of the larger, as it is
   or once a line with no descending glyph counts a descender taller, :func:`_sizes`: a paragraph's last line
   "condition occurred." 40 px high under "This value means that an out-of-memory", 60; a comma reaches down far less
   than a "g" and counts as no descending glyph), and B starts where A's block does: left-aligned (left edges within
   half a line height), centred (centres within half a line height), further left (a wrapped inline link continues at
   the container's left edge) or, under a numbered item, where its text starts after the number (a hanging indent,
   :func:`_hangs`: "3. The first name prefixed with one dash is" | "used otherwise."). Prose set with a loose line
   height (a phone's 1.5: 0.55 line heights between the detector's boxes; from a line with no descending glyph, its
   descender's depth more) may stand up to :data:`LOOSE_LINE_GAP` apart where that step is the screenshot's own line
   pitch (:func:`_on_pitch`: the step most pairs of aligned lines of that size share) and no text stands further right
   on either row (a table's rows stand at an even pitch too).
2. **Same style.** The glyph colours of the two lines differ by at most :data:`MAX_COLOUR_DISTANCE` (summed RGB; in
   shade alone, :data:`MAX_SHADE_DISTANCE`), so a blue link does not absorb the grey text under it. A mark of another
   colour ending B is the prose's after the element ended (:func:`_ends_in_colour`: "the Expat home" | "page."); one
   ending A ends the element on A's line.
3. **Ends of lines.** A is the last text on its line and B the first on its own (no other text within
   :data:`ROW_CLEARANCE` line heights), as a wrap leaves them. Text across a vertical rule (a panel's border:
   ``ruled``, :func:`screenmill.annotators.ocr.rule_between`) is another column's and does not count.
4. **It had to wrap.** B's first word, with the space before it ("of" | "a global ..." where B reaches past A by less
   than a space and an "a"), would not have fitted after A: neither before B's own right edge nor before the right edge
   of the column A and B sit in (the widest line in a few line heights above and below that starts where they start,
   less a :data:`FIT_TOLERANCE`). A list of short links has room to spare after each item. The word is as wide as its
   share of B's width: by its glyphs' advance widths where B is words of prose (:data:`_GLYPH_WIDTHS`: "Common", two
   wide "m"s, did not fit after "3.1.2 Options That are"), never less than by its count of characters (a monospace
   font's share).
5. **The text continues.** B starts with a lower-case letter (unless A and B are single words: a list of names,
   "Contributions" | "libexslt", a file tree's ".github" | "docs"), or A ends with a hyphen or a function word ("for",
   "the", "and"…; or, when A is prose of :data:`PROSE_WORDS` words or more, a determiner or preposition no sentence
   ends on, :data:`_OPEN_WORDS`: "... Foundation; with no" | "Invariant Sections"), or A ends with a month and B starts
   with a year (a date wrapped: "last updated 19 September" | "2022, of The GNU ..."), or A is prose stopping
   mid-sentence on a lower-case word and B starts with an acronym ("allows one to use" | "MPFR in two ways:"), or A
   starts with a section number ("3.5.1. Interpreter" | "Name": the next item would start with its own), or both are
   set in display type (a title's words), or A is a line of prose (:data:`PROSE_WORDS` words or more) that ends a
   sentence and B has two words or more (the paragraph goes on with its next sentence, "... unless told." | "Callbacks
   run once ..."), or A is such a line ending in no mark (".", "?", "!", ":", ";") and B ends a sentence (it runs on
   across the wrap: "... Vern Paxson, Will" | "Estes and John Millaway."), or B starts in mid-text, with a comma, a
   semicolon, a closing bracket or an optional argument's "[," (a wrapped signature: "fs.readFile(path" | "[, options],
   callback)"); and B does not start like a list item ("2.3.", "•", "a)") or with A's own first word (rows of a column,
   "gboolean (*GEqualFunc)" | "gboolean (*GEqualFuncFull)"; a function word, or two lines of prose, aside:
   :func:`_same_lead`), or with a field's name and its colon unless A ends with a hyphen (a mail's quoted headers, "...
   12:29:04 PST." | "Date: Thu, 02 Mar 2000": :data:`_FIELD`) and A does not end a statement of code
   (:func:`ends_code_statement`: a code block's lines are left-aligned and start in lower case like wrapped text,
   "pctxt = xpathParserContext(_obj=ctx)" | "ctxt = pctxt.context()"). This is what tells a wrapped link from a tight
   list of links whose geometry is the same (a table of contents in a narrow side bar).
6. **List markers** (when the caller can see them: ``marked``, :func:`screenmill.annotators.ocr.list_marker_left`). The
detector
   leaves a bullet out of its line, but the ink left of a line still shows it. A line with a bullet of its own
   starts a list item, so it continues nothing, whatever its text ("a tutorial for libxslt" | "xsltproc user
   manual"); a line with nothing left of it, hanging under the text of a line that has a bullet, is that item's
   next line, whatever its text ("The programming" | "API"), once rules 1-4 hold; and so is a line hanging under
   such a next line (a narrow side bar's "Default" | "Extraction" | "Methods").
7. **Inline links wrapped in prose** (:func:`_inline_wraps`). A link inside a paragraph wraps from the end of one line
   to the start of the next, where rule 1 does not look ("Questions? Please <a>Get in" | "touch with me</a> for
   more."). The last piece A of a line of text (pieces of its row closer than :data:`INLINE_RUN_GAP` line heights) and
   the one piece B of the line below that starts where A's line starts (or, in a numbered item, where its text starts
   after the number: "6. take one of the points <a>Get in" | "touch with me</a>") and ends before A ends join when they
   have one size and colour, the text continues (rule 5), A does not end a statement of code
   (:func:`ends_code_statement`), and their colour is the lesser part of the two lines' width: the prose around the
   link is the greater. Where the link is most of its two lines ("are based on the <a>Locale Data Markup Language" |
   "specification</a> (LDML)."), its colour is still the lesser part of the text around them (of their size, from
   :data:`LINK_CONTEXT` lines above to as many below, :func:`_most_text_around`), if the two rows hold text of another
   colour at all (a row of tags in one colour holds no prose). Prose wrapped beside inline code of another colour is
   the greater part, and stays apart. Where the caller can see underlines (``underlined``,
   :func:`screenmill.annotators.ocr.underlined`), they are part of the style: a grey underlined link in black prose
   reads a shade apart, and two underlined lines continue each other whatever their words ("There is a <a>modular" |
   "version</a> with", "based on the <a>Locale Data Markup" | "Language specification</a> (LDML)"; a dotted underline
   counts), unless A ends with the prose's comma (two links of a list). Words set between prose of another colour
   continue each other too (no text cue: "see the <a>API" | "documentation</a> and ask"): prose runs up to A within
   :data:`LINK_GAP` line heights and on after B as close, A ends with no mark of the prose ("," ";" ":" "."; a lone "."
   after an underlined link's last letter is its underline's end misread, :func:`_stray_stop`, and is dropped), and
   both are words (:func:`_words_only`; code tokens so set are often two links of a list: "attrs.field" | "attr.ib").
   Underlined and so inset, a link joins even where links are most of the text around it (a texinfo node's header on a
   phone: "Next: <a>Introduction</a>, Previous: <a>R Data" | "Import/Export</a>, Up: ..."), and so does one the prose
   leads into whose second line is its line's first text, with nothing left of it ("Up: <a>Automated" | "Option
   Processing</a> [<a>Contents</a>]"; a "[" the splitting left out stands left of "Contents"). A spaced dash between
   the words is prose's punctuation ("Previous: <a>string-tr! - convert" | "characters</a>, Up: ..."), and B may be
   set in code type with no descender, a shorter box ("Up: <a>Configuring" | "<code>comsatd</code></a>": sizes as in
   rule 1). B with a list marker of its own starts an item, a bracketed item ("[Index]" under "Up: <a>MPFR
   Basics</a>") is a link of its own, and B whose first word had room at A's line's end (rule 4, in the column where B
   starts) did not wrap from it.

8. **Closer than the column's pitch** (:func:`_tighter_than_pitch`). Where rule 5 finds no text cue, B still continues
   A when it follows A closer than the lines of their column (same start, size and colour) follow each other, and
   those stand at a regular pitch: a side bar whose links stand 1.6 line heights apart and whose wrapped link's second
   line stands 0.9 below its first ("API Reference for the attr" | "Namespace"). Where the column has no regular
   pitch (a table whose cells wrap: each wrapped cell adds a short step, as a texinfo index on a phone, "Assignment" |
   "functions:" beside "Assignment" | "Functions"), B still continues A when it follows A closer than both A follows
   the column's line above it and B's line below follows B, by a step the screenshot repeats (each wrapped cell has
   it; a lone short step in a side bar is a group's), with no other text at all between those rows (an index's
   letter heading parts its groups). A list at an even pitch says nothing, and a line that starts like a list
   item starts one.

9. **A paragraph with a link inside is its lines** (:func:`_around_a_link`). The DOM labels no owner of text with a
   control inside (the words around an inline link are a fragment): they give its visual lines, cut at the link. So
   lines joined by rules 1-6 go apart again where a row of theirs, or the paragraph's line just above or below them
   (one the paragraph wrapped into: the next line's first word, or its link as a whole, had no room at the end of the
   line before), holds a piece of another colour within a word space (a link), the rows hold a paragraph's words (not a
   link's lead-in, "Next:" | "Working with" | "Message Catalogs"), and the joined lines' colour is that of most text
   around them (the prose; a link wrapped in it stays joined: "See" | "the Timer Module" | "section in the Efficiency
   Guide"). A paragraph's joined lines left short of :data:`screenmill.annotators.wording.MAX_INSTRUCTION_NAME` by
   its links ("This function will return an error if" | "path does not exist ... according to" | "OpenOptions::open")
   named nothing the DOM labels.

10. **A link wrapped in a table's cell** (:func:`_cell_wraps`, when ``underlined`` can tell). A texinfo index on a
    phone wraps its section links in their cells ("Available" | "ciphers" beside the entry "3DES:"): two underlined
    lines, B just below A where A starts, of one size and colour, B's first word with no room after A (rule 4), join
    when another column's link stands on A's row and nothing of that column on B's (the column's next row starts
    below B), whatever their words; a third line goes on by the same column. And an underlined link with the
    prose's colon after it ends its line's entry ("abbreviations for months:" | "action, sieve:"): rules 1-8 do not
    join it to the line below.

The joined element's text is the lines' texts joined by a space (none after a hyphen that ends a word: the web wraps a
compound at its hyphen, "Byte-" | "Compilation"), its box the union of the lines, its click point the first line's
centre (like the DOM labels: the first line of a wrapped link is where a person clicks), its confidence the lowest of
its lines'.

Measured on the truth set's dev split (``infra/truthset``, 62 screenshots at 1280x800 and 390x844@3m, DOM truth):
of the adjacent line pairs the rule joins, 59 were one DOM element, 21 two (mostly a lower-case product name under a
link: "Contributions" | "libexslt"); geometry alone (rules 1-4) joins 85 right and 261 wrong. See
``infra/truthset/BASELINE.md`` for the recall and precision it gives.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

import numpy as np

#: Largest gap between A's bottom and B's top, in line heights (negative gaps: detector boxes overlap).
MAX_LINE_GAP = 0.5
#: ... or up to this many at the screenshot's own line pitch (:func:`_on_pitch`): prose set with a loose line height
#: (1.5 on a phone: 0.55 line heights between the detector's boxes), where a gap this wide can also be a paragraph's
#: on a page set tighter. The pitch is the step (middle to middle, within :data:`PITCH_SLACK` of it or 2 px) most
#: pairs of aligned lines of one size (heights within :data:`PITCH_HEIGHTS`) share, at least :data:`PITCH_PAIRS` of
#: them. A box's top follows its line's ascenders, its bottom its descenders, its middle far less: at 3x, prose 72 px
#: apart shows top steps of 67-79 px and middle steps of 70-76 (5 % takes 75, not a list item's 84).
LOOSE_LINE_GAP = 0.7
PITCH_SLACK = 0.05
PITCH_HEIGHTS = 0.8
PITCH_PAIRS = 3
MIN_LINE_GAP = -0.35
#: Smallest ratio of the two line heights (same font size). The detector's box of a line can reach up to the line above
#: it or leave out a descender's row: "Reporting bugs" 31 px over text whose next line's box is 23 (0.74).
MIN_HEIGHT_RATIO = 0.7
#: A box with no descending glyph (:func:`_sizes`) counts this many times its height when sizes are compared. A comma
#: or a semicolon reaches below the baseline far less than a "g" and is no such glyph: "stable, since it doesn't
#: constitute a rewrite." 42 px under "which will never go away - and is just as" 62.
DESCENDER_ALLOWANCE = 1.25
_DESCENDS = re.compile(r"[gjpqyQ()\[\]{}|@$]")
#: Largest summed RGB distance between the two lines' glyph colours.
MAX_COLOUR_DISTANCE = 60.0
#: ... or, where they differ only in shade (their R, G and B differences within :data:`SHADE_SPREAD` of each other, or
#: one mixed toward white or black: a short word's few glyphs read paler or darker than a long one's),
#: within this much.
MAX_SHADE_DISTANCE = 90.0
#: Inline code on a chip (rule 4 of :func:`join_pieces`) joins the prose round it up to this far apart (summed RGB),
#: whatever the hue: a short code word's few thin monospace glyphs read paler still ("A" | "package" | "is:" in npm's
#: docs, 99 apart); a blue link on a chip is over 200 off.
CHIP_SHADE_DISTANCE = 120.0
SHADE_SPREAD = 10.0
#: No other text this many line heights to the right of A on its line, or to the left of B on its own.
ROW_CLEARANCE = 1.5
#: Pieces of one row closer than this many line heights are one line of text (rule 7: a side bar's link is not).
INLINE_RUN_GAP = 2.0
#: Rule 9: a link this many line heights or less from the prose beside it stands in its line (a word space); a table's
#: next column stands further off.
LINK_GAP = 0.8
#: ... and the paragraph's prose is the colour most of the text this many lines above and below is set in.
LINK_CONTEXT = 2.5
#: How far (line heights) A plus B's first word may fall short of the column's right edge and still count as full.
FIT_TOLERANCE = 0.3
#: How far above and below (line heights) lines are looked at to find the column's right edge.
COLUMN_REACH = 6.0
#: Words a line does not end on unless the sentence goes on (lower-case, as compared).
FUNCTION_WORDS = frozenset("a an the of to and or for with in on at by from as into your our its is are be &".split())
#: Words a line of prose (:data:`PROSE_WORDS` or more) does not end on unless the sentence goes on, as written: the
#: determiners and prepositions :data:`FUNCTION_WORDS` leaves out ("... Foundation; with no" | "Invariant Sections").
#: Only prose: "Say no" is a button's label.
_OPEN_WORDS = frozenset(
    "no not that than this these those which whose their his her each every any some via onto without within between"
    " through".split()
)
#: Rule 8: a line follows the one above closer than its column's shortest step by this many line heights, over at least
#: this many other steps, all within this many line heights of each other.
PITCH_MARGIN = 0.3
PITCH_LINES = 2
PITCH_SPREAD = 0.35
#: Largest gap between two pieces of one line, in line heights (B may also overlap A by up to MIN_PIECE_GAP).
MAX_PIECE_GAP = 1.0
MIN_PIECE_GAP = -0.35
#: Largest distance between the vertical centres of two pieces of one line, in line heights.
ROW_CENTRE = 0.3
#: Display type (a page title, a hero heading): this many times the screenshot's median line height or more. A
#: detector box holds the descenders or not: a title's line without any ("Resource Use") measures 1.6× the median
#: where its line with them ("Measuring Program") measures 2×, so 1.75 cut one title in two.
DISPLAY_RATIO = 1.5
#: Heading type on a row: pieces at least this many times the screenshot's median line height ("Core" | "Interface
#: API", a bold section title at 1.1-1.3× the body's, cut where a wide bold space or a letter's slanted side made its
#: word gaps look uneven) ...
HEADING_RATIO = 1.2
#: ... join with no text cue when at most this many line heights apart (a word space of bold heading type measured
#: up to 0.9; the gaps between nav items and table cells are wider).
HEADING_PIECE_GAP = 1.0
#: Largest gap between a menu item and its keyboard shortcut, in line heights.
MAX_SHORTCUT_GAP = 20.0
#: A shortcut is often set smaller and paler than its item: its height may be down to this share of the item's.
MIN_SHORTCUT_HEIGHT = 0.5
#: Two backgrounds differ (a chip of inline code on the page) when a channel is this far apart (0-255): GitHub's
#: ``#eff1f3`` on white is 16.
CHIP_CONTRAST = 8.0
#: Rule 10: another column's text stands at least this many line heights from the wrapped link (a table's column gap,
#: not the spaces between a header's links).
CELL_GAP = 2.5
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
#: A code line's pieces are tokens of at most this many words, a string or a comment excepted.
CODE_TOKEN_WORDS = 3
#: A highlighter's colours: a code line is painted in at least this many (a line of text and its link are two); two
#: after a console's prompt (:data:`_PROMPT`).
CODE_COLOURS = 3
#: A code line is set in one font: its pieces' heights are within this ratio.
CODE_HEIGHT_RATIO = 0.85
#: A code line's pieces may stand this many line heights apart (a comma and a space, or an operator, the recogniser
#: dropped between two tokens: "1.2345" | "locale=", "sc" | "SomeClass(") ...
CODE_PIECE_GAP = 2.5
#: ... and a space stands between two where their gap is a character's advance or more (a token's box is its ink:
#: "format_decimal(" | "12345," stand half an advance apart).
CODE_SPACE = 1.0
#: A token of code: it holds a digit, an underscore or punctuation (a plain word is prose's as much as code's).
_CODE_TOKEN = re.compile(r"[\d_()\[\]{}=.,:;'\"<>+*/%-]")
#: A code line's string or comment, which may hold many words.
_QUOTED = re.compile(r"^\s*(['\"“‘]|#|//)")
_OPENING = "\"'“‘«("
_CLOSING = "\"'”’»)"
#: A line that starts in the middle of a text: with a comma, a semicolon or a closing bracket, or an optional
#: argument's "[," (a signature wrapped: "fs.readFile(path" | "[, options], callback)").
_MID_TEXT = re.compile(r"^\s*([,;)\]}]|\[,)")
#: A piece of a long line of prose this short reads paler than the prose around it (:func:`join_long_lines`).
FAINT_WORD = 3
#: A line of at least this many words ending a sentence is prose: the next line of its paragraph continues it, whatever
#: its case (a new sentence), where it had to wrap.
PROSE_WORDS = 5


def continues(first: str, second: str, display: bool = False, single_words: bool = False) -> bool:
    """True when the text ``second`` reads as the continuation of ``first`` (rule 5 of the module docstring);
    ``display``: both lines are set in display type (a heading's title-case words continue it); ``single_words``: a
    lower-case single word continues a single word too (the two lines are known to be one link's)."""
    words = first.split()
    if words and _MONTH.match(words[-1]) and _YEAR.match(second):  # a date wraps: "19 September" | "2022, of ..."
        return True
    if _LIST_MARKER.match(second):
        return False
    if display or _NUMBERED.match(first) or first.endswith("-") or (words and words[-1].casefold() in FUNCTION_WORDS):
        return True
    if len(words) >= PROSE_WORDS and words[-1] in _OPEN_WORDS:  # "... Foundation; with no" | "Invariant Sections"
        return True
    # A lower-case start alone does not join two single words: in a list of names ("Contributions" | "libexslt", a
    # file tree's ".github" | "docs", an API's "assert.fail()" | "assert.ok()") each is an item of its own.
    lone = len(words) == 1 and len(second.split()) == 1 and not single_words
    if second.lstrip(_OPENING)[:1].islower() and not lone:
        return True
    if _MID_TEXT.match(second):  # nothing starts with a comma or a closing bracket: "fs.read(fd" | "[, buffer])"
        return True
    if len(words) >= PROSE_WORDS and words[-1].isalpha() and words[-1].islower() and _ACRONYM.match(second):
        return True
    # a sentence of prose ended and the paragraph goes on with the next one, which had to wrap (rule 4)
    if len(words) >= PROSE_WORDS and first.rstrip(_CLOSING)[-1:] in ".?!" and len(second.split()) >= 2:
        return True
    # a sentence of prose runs on across the wrap and ends on the next line, whatever that starts with ("... Vern
    # Paxson, Will" | "Estes and John Millaway."): a list's items rarely end with a full stop
    ends = first.rstrip(_CLOSING)[-1:], second.rstrip(_CLOSING)[-1:]
    return len(words) >= PROSE_WORDS and ends[0] not in ".?!:;" and ends[1] in ".?!"


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


def _display_sized(heights: Sequence[float], ratio: float = DISPLAY_RATIO) -> set[int]:
    """The elements set in display type: at least ``ratio`` (:data:`DISPLAY_RATIO`) times the screenshot's median
    line height."""
    if len(heights) < 3:
        return set()
    median = float(np.median(heights))
    return {i for i, h in enumerate(heights) if h >= ratio * median}


def join_pieces(
    elements: Sequence,
    colour_of: Callable[[tuple[float, float, float, float]], np.ndarray | None],
    make: Callable[..., object],
    split_between: Callable[[tuple, tuple], bool] | None = None,
    backdrop: Callable[[tuple, str], np.ndarray | None] | None = None,
    decide: Callable[..., bool] | None = None,
) -> list:
    """Join the pieces of one element's line (see "Pieces of one line" in the module docstring).

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
            on(i, "left", b) or on(_piece_before(i, boxes, heights, MAX_PIECE_GAP), "right", b)
        )  # a chip that opened in i or after the piece before it closes at i's end, then the prose goes on

    heading = _display_sized(heights, HEADING_RATIO)
    sizes = _sizes(elements, heights)
    following: dict[int, int] = {}
    preceding: dict[int, int] = {}

    def rule(i: int, j: int) -> bool:  # rules 1-4 for piece i and the piece j right after it
        gap = (boxes[j][0] - boxes[i][2]) / ((heights[i] + heights[j]) / 2)
        code = inline_code(i, j)
        # a title's version on a tag of its own colour: the title's element holds it ("Workspaces" | "@11.19.1")
        if i in heading and gap <= HEADING_PIECE_GAP and bool(_VERSION_TAG.match(elements[j].text.strip())):
            return True
        if not (
            continues_on_row(elements[i].text, elements[j].text)
            or (i in heading and j in heading and gap <= HEADING_PIECE_GAP and not _starts_a_count(elements[j].text))
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
        i = _piece_before(j, boxes, heights, MAX_SHORTCUT_GAP if shortcut else MAX_PIECE_GAP)
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
    A row's run of pieces (each following the one before, at most :data:`CODE_PIECE_GAP` line heights apart, heights
    within :data:`CODE_HEIGHT_RATIO`: one font) is one line of code when it is painted in :data:`CODE_COLOURS`
    colours or more (two after a console's prompt, :data:`_PROMPT`, or where a piece but the last ends by opening a
    bracket: a call whose argument is the next piece, "print(" | "'Zero'"), its text reads as code
    (:data:`_CODE_ROW`: an assignment, a call, a brace, a console prompt, a keyword that starts a statement), and its
    pieces are tokens (at most :data:`CODE_TOKEN_WORDS` words each, a string or a comment excepted, and most holding a
    digit, an underscore or punctuation, :data:`_CODE_TOKEN`): prose with an inline link has pieces of many words or
    plain words. The line's text puts a space only where the gap between two pieces is a character's advance or more
    (:data:`CODE_SPACE`, the advance read from the pieces' widths): "format_decimal(12345, locale='de_DE')", and after
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
    for run in _row_runs(boxes, heights, CODE_PIECE_GAP, CODE_HEIGHT_RATIO, prompts):
        pieces = [elements[k].text for k in run]
        if len(run) < 2 or any(len(t.split()) > CODE_TOKEN_WORDS and not _QUOTED.match(t) for t in pieces):
            continue  # prose: pieces of many words
        if run[0] not in prompts and 2 * sum(bool(_CODE_TOKEN.search(t)) for t in pieces) < len(run):
            continue  # prose with links: most pieces are plain words (after a prompt: "from attrs import define")
        advance = sum(boxes[k][2] - boxes[k][0] for k in run) / max(1, sum(len(t) for t in pieces))
        text = pieces[0]
        for p, q in zip(run, run[1:], strict=False):  # a prompt is followed by a space however close ("vvv" | "if")
            spaced = boxes[q][0] - boxes[p][2] >= CODE_SPACE * advance or p in prompts
            text += (" " if spaced else "") + elements[q].text
        # after a console's prompt, or where a piece opens a bracket that the next goes on inside (a call's
        # argument: "print(" | "'Zero'"), a link is no likelier than a token
        opens = any(elements[k].text.rstrip()[-1:] in "([{" for k in run[:-1])
        least = 2 if _PROMPT.match(text) or opens else CODE_COLOURS
        if not _CODE_ROW.search(text) or _colour_count([colour_of(boxes[k]) for k in run]) < least:
            continue  # not code; or a line of text, or a signature, with a link of another colour
        following.update(zip(run, run[1:], strict=False))
        texts[run[0]] = text
    return _merge(elements, boxes, following, make, " ".join, centre=True, texts=texts)


def _row_runs(
    boxes, heights, max_gap: float = MAX_PIECE_GAP, height_ratio: float = 0.0, lead: frozenset[int] = frozenset()
) -> list[list[int]]:
    """Every row's runs of pieces, left to right, each piece following the one before (:func:`_piece_after`, at most
    ``max_gap`` line heights on; heights within ``height_ratio`` of each other, except after a piece in ``lead``: a
    console's prompt, whose glyphs make a lower box, and which starts its run: what stands left of it is another
    column's); a piece in no run is a run alone."""
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
    :data:`MIN_SHORTCUT_HEIGHT` of it and no larger, centres within :data:`ROW_CENTRE` line heights), at most
    ``max_gap`` line heights away."""
    b = boxes[j]
    best = None
    for i, a in enumerate(boxes):
        if i == j or a[2] > (b[0] + b[2]) / 2:
            continue
        if not MIN_SHORTCUT_HEIGHT * heights[i] <= heights[j] <= heights[i] / MIN_HEIGHT_RATIO:
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
    px), so its height counts :data:`DESCENDER_ALLOWANCE` times."""
    return [
        h * (1.0 if _DESCENDS.search(e.text) else DESCENDER_ALLOWANCE) for e, h in zip(elements, heights, strict=True)
    ]


def _same_size(i: int, j: int, elements, heights) -> bool:
    """Lines ``i`` and ``j`` are set in one font size (rule 1 of :func:`group_lines`): their heights are similar as
    they are, or once a line with no descending glyph counts a descender taller (:func:`_sizes`: a paragraph's last
    line "condition occurred." under "This value means that an out-of-memory"; a link's second line in code type,
    "comsatd" under "Configuring")."""
    a, b = _sizes([elements[i], elements[j]], [heights[i], heights[j]])
    return _similar_heights(heights[i], heights[j]) or _similar_heights(a, b)


def _similar_heights(a: float, b: float, ratio: float = MIN_HEIGHT_RATIO) -> bool:
    """Same font size: the smaller height at least ``ratio`` (:data:`MIN_HEIGHT_RATIO`) of the larger."""
    return min(a, b) / max(a, b) >= ratio


def _same_backdrop(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Two background colours are one (both known, no channel :data:`CHIP_CONTRAST` or more apart)."""
    if a is None or b is None:
        return False
    return float(np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)).max()) < CHIP_CONTRAST


def _same_colour(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Same style: both glyph colours known and within :data:`MAX_COLOUR_DISTANCE` (summed RGB), or within
    :data:`MAX_SHADE_DISTANCE` where one is a shade of the other (:func:`_shades`); colours given as several stacked
    RGB rows (``colour_of``'s) must match row by row."""
    if a is None or b is None:
        return False
    a2, b2, d = _colour_distances(a, b)
    return bool(np.all((d <= MAX_COLOUR_DISTANCE) | (_shades(a2, b2) & (d <= MAX_SHADE_DISTANCE))))


def _near_colour(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Both glyph colours known and within :data:`CHIP_SHADE_DISTANCE` (summed RGB), row by row, whatever the
    hue: inline code's thinner monospace glyphs on a chip read a little paler and warmer than the prose round them."""
    return a is not None and b is not None and bool(np.all(_colour_distances(a, b)[2] <= CHIP_SHADE_DISTANCE))


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
    read paler or darker than a long piece's: lighter or darker alike in R, G and B (within :data:`SHADE_SPREAD`), or
    one mixed toward white or black (a saturated blue's anti-aliased glyphs, (0, 0, 238) read as (39, 39, 240): its
    red and green rise, its blue cannot), no channel more than half of :data:`SHADE_SPREAD` off that mix."""
    diff = b - a
    out = np.ptp(diff, axis=-1) <= SHADE_SPREAD
    for x, y in ((a, b), (b, a)):
        for target in (255.0, 0.0):
            axis = target - x
            t = ((y - x) * axis).sum(axis=-1) / np.maximum((axis * axis).sum(axis=-1), 1e-9)
            t = np.clip(t, 0.0, 1.0)[:, None]
            out |= np.abs(y - x - t * axis).max(axis=-1) <= SHADE_SPREAD / 2
    return out


def _piece_after(
    i: int, boxes, heights, max_gap: float = MAX_PIECE_GAP, any_height: bool = False, sizes=None
) -> int | None:
    """The nearest piece starting right after piece ``i`` on its row (rule 1 of :func:`join_pieces`; at most
    ``max_gap`` line heights after it; ``any_height``: of any size, measured in the larger line height; ``sizes``:
    the heights compared for the size, :func:`_sizes`, else ``heights``)."""
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
    """Box ``b`` goes on along box ``a``'s row: vertical centres within :data:`ROW_CENTRE` line heights ``h``, and
    ``b`` starts from :data:`MIN_PIECE_GAP` (a slight overlap) to ``max_gap`` line heights after ``a`` ends."""
    return abs((a[1] + a[3]) - (b[1] + b[3])) / 2 <= ROW_CENTRE * h and MIN_PIECE_GAP * h <= b[0] - a[2] <= max_gap * h


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


def group_lines(
    elements: Sequence,
    colour_of: Callable[[tuple[float, float, float, float]], np.ndarray | None],
    make: Callable[..., object],
    marked: Callable[[tuple[float, float, float, float]], bool | None] | None = None,
    ruled: Callable[[tuple, tuple], bool] | None = None,
    underlined: Callable[[tuple[float, float, float, float]], bool | None] | None = None,
    decide: Callable[..., bool] | None = None,
) -> list:
    """Join the wrapped lines of one element (see the module docstring).

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
            if gap / heights[i] >= ROW_CLEARANCE:
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

    below = [_line_below(i, boxes, heights, centres, LOOSE_LINE_GAP) for i in range(n)]
    steps: list[tuple[float, float]] = []  # (line height, step in px to the line below) of aligned line pairs
    for i, j in enumerate(below):
        if (
            j is not None
            and abs(boxes[j][0] - boxes[i][0]) <= 0.5 * heights[i]
            and _similar_heights(heights[i], heights[j], PITCH_HEIGHTS)
        ):
            steps.append((heights[i], centres[j] - centres[i]))

    # a line with no descending glyph ends at its baseline: at the pitch, the line below may stand a descender further
    # off than LOOSE_LINE_GAP from its box ("If a time zone is omitted, a timezone-naive" | "datetime is returned.")
    sizes = _sizes(elements, heights)
    deep = [(b[0], b[1], b[2], b[3] + sz - h) for b, sz, h in zip(boxes, sizes, heights, strict=True)]
    for i in range(n):
        if below[i] is None:
            j = _line_below(i, deep, sizes, centres, LOOSE_LINE_GAP)
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
        if boxes[j][1] - boxes[i][3] > MAX_LINE_GAP * h and not (
            _on_pitch(i, j, centres, heights, steps) and not text_right_of(i) and not text_right_of(j)
        ):
            return False  # a loose gap: only at the screenshot's own line pitch, with no text further right (a table)
        if not _wraps(i, j, elements, boxes, heights, colours, display, mark, item_text, steps):
            return False
        if link_then_colon(i):
            return False
        return not (clearance(i, +1) < ROW_CLEARANCE or clearance(j, -1) < ROW_CLEARANCE)

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


def _stray_stop(text: str, under: bool | None) -> bool:
    """Whether an underlined link's line ends in a lone "." read from its underline's end after a letter ("Reporting."
    for "Reporting" at the end of a texinfo header's row, its link wrapping on: "Previous: <a>Reporting" | "Bugs</a>,
    Up: ..."): no full stop ends a link that goes on."""
    return under is True and END_STOP.search(text.rstrip()) is not None


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
    before (rule 1 of :func:`join_pieces`: same size, at most :data:`MAX_PIECE_GAP` line heights apart); the prose is
    the colour of its longest piece (or, for a word of up to :data:`FAINT_WORD` letters, a shade of it however far: its
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


def _faint_word(text: str, colour: np.ndarray | None, prose: np.ndarray | None) -> bool:
    """A word of at most :data:`FAINT_WORD` characters whose glyph colour is a shade of ``prose``'s however far (its
    few thin strokes read paler than a long piece's: "to" at 63 in prose read at 28)."""
    if len(text.strip()) > FAINT_WORD or colour is None or prose is None:
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


def _line_run(i: int, boxes, heights, centres, gap: float = INLINE_RUN_GAP) -> list[int]:
    """The pieces of piece ``i``'s line of text, left to right: those on its row reached from it through gaps under
    ``gap`` line heights (a side bar or a second column further off is another line)."""
    row = sorted((k for k in range(len(boxes)) if _same_row(i, k, centres, heights)), key=lambda k: boxes[k][0])
    at = row.index(i)
    lo = hi = at
    while lo > 0 and boxes[row[lo]][0] - boxes[row[lo - 1]][2] < gap * heights[i]:
        lo -= 1
    while hi + 1 < len(row) and boxes[row[hi + 1]][0] - boxes[row[hi]][2] < gap * heights[i]:
        hi += 1
    return row[lo : hi + 1]


def _around_a_link(chain: Sequence[int], elements, boxes, heights, centres, colours) -> bool:
    """Rule 9 of the module docstring: whether the joined lines ``chain`` are prose with a link inside. Some row of
    theirs, or the line just above or below them that the paragraph wrapped into ("... By using" | "<a>cancel/1</a>,
    the returned ..."), holds, within a word space's reach (:data:`LINK_GAP` line heights from piece to piece), a piece
    of another colour with at least two letters or digits (a link; not an icon read as one glyph); those rows hold at
    least ``2 *`` :data:`PROSE_WORDS` words (not a link's lead-in: "Next:" | "Working with" | "Message Catalogs"); and
    the chain's colour is the greater part of the text of its size from :data:`LINK_CONTEXT` lines above it to as many
    below, over its width (the paragraph's prose, not a link wrapped in it: "See" | "the Timer Module" | "section in
    the Efficiency Guide"). The line above or below may stand up to :data:`LOOSE_LINE_GAP` line heights off, as
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
        return boxes[a][2] + advance + first > max(x1, boxes[a][2], boxes[b][2]) - FIT_TOLERANCE * h

    for q in range(len(boxes)):  # the paragraph's lines just above and below (a link may have ended or started them)
        if q in chain or abs(boxes[q][0] - x0) > 0.5 * h or not _similar_heights(heights[q], h):
            continue
        if MIN_LINE_GAP * h <= boxes[q][1] - bottom <= LOOSE_LINE_GAP * h and wrapped(
            _line_run(chain[-1], boxes, heights, centres, LINK_GAP)[-1], q
        ):
            rows.append(q)
        elif MIN_LINE_GAP * h <= top - boxes[q][3] <= LOOSE_LINE_GAP * h and wrapped(
            _line_run(q, boxes, heights, centres, LINK_GAP)[-1], chain[0]
        ):
            rows.append(q)
    seen: set[int] = set()
    for k in rows:
        for q in _line_run(k, boxes, heights, centres, LINK_GAP):
            if q in chain or q in seen:
                continue
            seen.add(q)
            words += len(elements[q].text.split())
            prose = colours[k] if k in chain else colours[chain[0]]
            if not _same_colour(colours[q], prose) and colours[q] is not None:
                link = link or sum(c.isalnum() for c in elements[q].text) >= 2
    if not link or words < 2 * PROSE_WORDS:
        return False
    return _most_text_around(chain, boxes, heights, centres, colours)


def _most_text_around(members: Sequence[int], boxes, heights, centres, colours) -> bool:
    """Whether the colour of the lines ``members`` (one element's, top to bottom) is that of most text of their size
    from :data:`LINK_CONTEXT` lines above them to as many below, over their width (summed box widths, theirs
    included): the prose of their paragraph, not a link in it."""
    h = sum(heights[k] for k in members) / len(members)
    x0, x1 = min(boxes[k][0] for k in members), max(boxes[k][2] for k in members)
    y0, y1 = boxes[members[0]][1] - LINK_CONTEXT * h, boxes[members[-1]][3] + LINK_CONTEXT * h
    width = {True: 0.0, False: 0.0}
    for q in range(len(boxes)):
        b = boxes[q]
        if colours[q] is None or not (y0 <= centres[q] <= y1 and b[0] < x1 and b[2] > x0):
            continue
        if q in members or _similar_heights(heights[q], h):
            width[q in members or _same_colour(colours[q], colours[members[0]])] += b[2] - b[0]
    return width[True] >= width[False]


def _inline_wraps(elements, boxes, heights, centres, colours, is_under=None, mark=None) -> list[tuple[int, int]]:
    """Rule 7 of the module docstring: an inline link wrapped from the end of one line of prose to the start of the
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
            and MIN_LINE_GAP * h <= boxes[j][1] - a[3] <= MAX_LINE_GAP * h
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
            and boxes[i][0] - boxes[here[-2]][2] <= LINK_GAP * h
        )
        inset = (
            led_in
            and len(there) > 1
            and not same_style(there[1], i)
            and boxes[there[1]][0] - boxes[j][2] <= LINK_GAP * h
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
    """Rule 10 of the module docstring: a link wrapped in a table's cell (a texinfo index on a phone: "Available" |
    "ciphers" beside "3DES:"). Pairs (i, j) of an underlined line and the underlined line just below it, starting
    where it starts, of one size and colour, that had to wrap (rule 4), where another column (:data:`CELL_GAP` away)
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
            and min(abs(boxes[k][0] - a[2]), abs(a[0] - boxes[k][2])) >= CELL_GAP * h
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


def _on_pitch(i: int, j: int, centres, heights, steps: list[tuple[float, float]]) -> bool:
    """Whether line ``j`` stands below line ``i`` at the screenshot's line pitch for their size: the step (middle to
    middle, in px) the most aligned line pairs of that size (heights within :data:`PITCH_HEIGHTS`) share, within
    :data:`PITCH_SLACK` of it, held by at least :data:`PITCH_PAIRS` of them (``i`` to ``j`` among them). A paragraph's
    or an item's gap adds its margin to the pitch."""
    step, same = centres[j] - centres[i], _steps_of_size(steps, heights[i])
    if len(same) < PITCH_PAIRS:
        return False
    count, pitch = max((sum(_near_step(t, s) for t in same), -s) for s in same)
    return count >= PITCH_PAIRS and _near_step(step, -pitch)


def _steps_of_size(steps: Sequence[tuple[float, float]], h: float) -> list[float]:
    """The steps of ``steps`` ((line height, middle-to-middle step) of aligned line pairs) whose lines are of height
    ``h``'s size (within :data:`PITCH_HEIGHTS`)."""
    return [s for hk, s in steps if _similar_heights(hk, h, PITCH_HEIGHTS)]


def _near_step(a: float, b: float) -> bool:
    """Whether step ``a`` is step ``b`` within :data:`PITCH_SLACK` of it (2 px at least)."""
    return abs(a - b) <= max(2.0, PITCH_SLACK * b)


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


def _line_below(i: int, boxes, heights, centres, max_gap: float = MAX_LINE_GAP) -> int | None:
    """The nearest line starting just below line ``i`` (at most ``max_gap`` line heights) and overlapping it
    horizontally (or centred under it)."""
    a = boxes[i]
    best = None
    for j, b in enumerate(boxes):
        if j == i or centres[j] <= centres[i]:
            continue
        h = (heights[i] + heights[j]) / 2
        if not MIN_LINE_GAP * h <= b[1] - a[3] <= max_gap * h:
            continue
        if b[0] > a[2] or (b[2] < a[0] and abs((a[0] + a[2]) - (b[0] + b[2])) / 2 > 2 * h):
            continue
        if best is None or b[1] < boxes[best][1]:
            best = j
    return best


def _wraps(
    i: int,
    j: int,
    elements,
    boxes,
    heights,
    colours,
    display: set[int],
    mark: Callable[[int], bool | None],
    item_text: Callable[[int], bool],
    steps: Sequence[tuple[float, float]] = (),
) -> bool:
    """Rules 1, 2, 4, 5 and 6 of the module docstring for line ``i`` above line ``j``; ``mark``: what stands left of
    a line (rule 6), ``item_text``: whether a line is a list item's text (its marked line or one hanging under it)."""
    a, b = boxes[i], boxes[j]
    h = (heights[i] + heights[j]) / 2
    if not _same_size(i, j, elements, heights):
        return False
    if not _ends_in_colour(colours[i], colours[j]):
        return False
    left, centre = (b[0] - a[0]) / h, ((b[0] + b[2]) - (a[0] + a[2])) / 2 / h
    if not (abs(left) <= 0.5 or abs(centre) <= 0.5 or left < 0 or _hangs(elements[i].text, a, b, h)):
        return False
    text = elements[j].text
    if b[2] - a[2] - _first_word(text, b, space=True) >= 0:  # B's first word had room after A on B's own width
        return False
    if not _had_to_wrap(i, j, elements, boxes, heights, min(a[0], b[0]), max(a[0], b[0])):
        return False
    if mark(j) is True:  # B starts a list item of its own
        return False
    if abs(left) <= 0.5 and item_text(i) and mark(j) is False:  # B hangs under A's item text: its next line
        return True
    if ends_code_statement(elements[i].text, text):
        return False
    if _same_lead(elements[i].text, text):  # rows of a column: "gboolean (*GEqualFunc)" | "gboolean ..."
        return False
    if _FIELD.match(text) and not elements[i].text.rstrip().endswith("-"):  # "PST." | "Date: Thu, 02 Mar 2000"
        return False
    return continues(elements[i].text, text, display=i in display and j in display) or (
        not _LIST_MARKER.match(text) and _tighter_than_pitch(i, j, boxes, heights, colours, steps)
    )


#: Advance widths of a proportional sans-serif font's ASCII glyphs, in hundredths of an em (DejaVu Sans, Chromium's
#: sans-serif here; Helvetica's and Arial's are alike): an "m" is three times an "i", so a word's share of its line's
#: width is its glyphs' share of the line's advances. A glyph not listed counts :data:`GLYPH_WIDTH_DEFAULT` (a CJK
#: glyph is about an em).
_GLYPH_WIDTHS = {
    **dict.fromkeys("il.,:;'|!", 30), **dict.fromkeys("fjtI-/()[]\\J", 36), **dict.fromkeys("r", 41),
    **dict.fromkeys("szc?", 54), **dict.fromkeys("kvxyFLTY*_`", 58),
    **dict.fromkeys("abdeghnopquEPS0123456789{}$", 63), **dict.fromkeys("ABCKRVXZ", 68),
    **dict.fromkeys("DGHNOQU&", 76), **dict.fromkeys("wM#+<=>^~%", 84), **dict.fromkeys("mW@", 98), " ": 32,
}  # fmt: skip
GLYPH_WIDTH_DEFAULT = 60


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
    """Whether a line's words read as prose: :data:`PROSE_WORDS` of them or more, nearly all plain words."""
    plain = sum(1 for w in words if w.strip(_EDGE_PUNCTUATION).isalpha())
    return len(words) >= PROSE_WORDS and plain >= 0.8 * len(words)


def _advances(text: str) -> float:
    """The summed advance widths of ``text``'s glyphs (:data:`_GLYPH_WIDTHS`)."""
    return float(sum(_GLYPH_WIDTHS.get(c, 100 if ord(c) > 0x2E7F else GLYPH_WIDTH_DEFAULT) for c in text))


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
    """Rule 4 of the module docstring: the first word of line ``j`` would not have fitted after line ``i``'s end, in
    the column they sit in: the widest line of their size within :data:`COLUMN_REACH` line heights above and below
    that starts between ``lo`` and ``hi`` (less half a line height, more half of one), less :data:`FIT_TOLERANCE`."""
    a, b = boxes[i], boxes[j]
    h = (heights[i] + heights[j]) / 2
    text = elements[j].text
    column = [
        boxes[k][2]
        for k in range(len(boxes))
        if lo - 0.5 * h <= boxes[k][0] <= hi + 0.5 * h
        and a[1] - COLUMN_REACH * h <= boxes[k][1] <= b[3] + COLUMN_REACH * h
        and _similar_heights(heights[k], h)
    ]
    right_edge = max([*column, a[2], b[2]])
    return a[2] + _first_word(text, b, space=True) - right_edge >= -FIT_TOLERANCE * h


def _tighter_than_pitch(i: int, j: int, boxes, heights, colours, pairs: Sequence[tuple[float, float]] = ()) -> bool:
    """Whether line ``j`` follows line ``i`` closer than the lines of their column follow each other (rule 8 of the
    module docstring). The column's lines start where ``i`` starts and have its size and colour, within
    :data:`COLUMN_REACH` line heights; its steps are from one's middle to the next's (a box's top jitters with its
    words' ascenders) with no other text between them (a nested item). At least :data:`PITCH_LINES` steps besides
    ``i`` to ``j``, all within :data:`PITCH_SPREAD` line heights of each other (a regular pitch), and ``i`` to ``j``
    at least :data:`PITCH_MARGIN` line heights shorter than the shortest of them ("API Reference for the attr" |
    "Namespace" in a side bar whose links stand 1.6 line heights apart, its wrapped line 0.9). With no regular pitch
    (a table whose cells wrap), ``i`` to ``j`` at least that much shorter than both the step from the column's line
    above ``i`` and the step to its line below ``j``, with no text at all between those rows (a letter heading), and
    another aligned pair of ``pairs`` (the screenshot's (line height, middle-to-middle step) of aligned line pairs, as
    :func:`_on_pitch` takes them) of their size at that step too (within :data:`PITCH_SLACK`)."""
    a, h = boxes[i], (heights[i] + heights[j]) / 2
    column = sorted(
        (
            k
            for k in range(len(boxes))
            if abs(boxes[k][0] - a[0]) <= 0.5 * h
            and abs(boxes[k][1] - a[1]) <= COLUMN_REACH * h
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
    if len(steps) >= PITCH_LINES and max(steps) - min(steps) <= PITCH_SPREAD * h:
        return step <= min(steps) - PITCH_MARGIN * h
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
    return step <= min(middle(i) - middle(p), middle(q) - middle(j)) - PITCH_MARGIN * h
