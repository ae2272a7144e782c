"""The OCR label producer: :class:`screenmill.annotators.ocr.OcrAnnotator` text elements → click grounding labels.

No ambiguous instruction: text that appears once on a screenshot is named bare (``click "Save"``); text that repeats
(compared case-insensitively, whitespace collapsed, a trailing comma, full stop or semicolon ignored: the prose's
punctuation after a link, "GHashTable," and "GHashTable.", which are the link "GHashTable" to a reader) is named by
its place among the repeats in reading order (top to bottom, then left to right; boxes whose vertical centres fall in
one another's line are one line), worded as the DOM producer words positions without its role noun (OCR has none):
``click the second "Edit"``. A text repeated more
often than there are ordinals (:data:`screenmill.annotators.dom.labels.ORDINALS`, ten) gets no label, counting, for a
text that repeats, also the times it is painted as words of another element's text (:func:`painted_inside`: a type name
in lines of code, "gboolean g_hash_table_insert", whose cells the OCR may have joined, so that its own count of the
repeats falls short of the page's and the places it names are not the ones a reader counts). An instruction that
would still name two elements (a literal text equal to a positional phrase) is given to none of them.

No glyph noise: an element that is an icon read as text gives no label (:func:`is_glyph_noise`): a text with no
letter or digit ("≡", "»", "+"), or a lone glyph (at most two characters, one letter, not a number: "Q", "b", "三",
"X.") read with confidence below :attr:`OcrProducer.glyph_min_confidence`, in a square box (an icon's cell; a
letter of running text is narrower than it is tall) or beside another lone glyph on its line (a toolbar: "B" "I"
"U"), or of a script no other text of the screenshot is in ("田" on an English page, :func:`glyph_noise`).

Scripts the models cannot read (:mod:`screenmill.annotators.scripts`: the shipped models read Latin and Chinese): a
reading that is a wrong-script reading (:func:`screenmill.annotators.scripts.is_wrong_script_reading`: "HOBOCTИ" for
"Новости") gives no label, and each screenshot's count of them and of text lines detected but read as nothing (Korean,
Japanese kana) is reported in the stage's counters (``wrong_script_readings`` / ``screenshots_wrong_script``,
``unread_text_lines`` / ``screenshots_unread_text``), so such text is reported, not silently missed.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from screenmill.annotators.dom.labels import MAX_INSTRUCTION_NAME, ORDINALS
from screenmill.annotators.outputs import Count
from screenmill.annotators.producer import ScreenshotProducer
from screenmill.annotators.scripts import is_wrong_script_reading, letter_scripts
from screenmill.schemas.labels import LabelBuilder, LabelProvenance
from screenmill.schemas.records import GroundingLabel, Screenshot

#: The OCR recipe's version: 2 = repeated text is named by position (1 named every repeat bare, ambiguously);
#: 3 = glyph icons read as text give no label (:func:`is_glyph_noise`); 4 = a text longer than
#: :data:`screenmill.annotators.dom.labels.MAX_INSTRUCTION_NAME` (a paragraph's joined lines) gives no label; 5 = a
#: wrong-script reading gives no label (:func:`screenmill.annotators.scripts.is_wrong_script_reading`); 6 = the
#: annotator joins the pieces of one element's line ("Feb" | "15, 2025",
#: :func:`screenmill.annotators.ocr_group.join_pieces`, annotator ``2025.1-group2``), so the elements named differ; 7 =
#: it also joins a menu item and its shortcut, an amount and its unit, a numbered title's pieces and lines and a
#: display heading's words, and no longer two single words by a lower-case start (annotator ``2025.1-group3``); 8 = the
#: annotator's colour split leaves the punctuation at a word's ends out of its colour and also compares hues, so inline
#: links come apart from their prose (annotator ``2025.1-group3-colour2``); 9 = the annotator reads each line crop
#: alone, small ones scaled up with cubic interpolation, so prose keeps its word spaces, and splits a row of bracketed
#: items ("[Contents][Index]") into its items, so the elements named differ (annotator ``2025.1-rec-alone``); 10 = the
#: annotator tells a text's colour by its words (not the punctuation at its ends, not against a narrow crop's own ink),
#: leaves underlines out of the ink it splits at, and joins a list item's lines by its bullet (annotator
#: ``2025.1-marker``); 11 = the annotator reads two detected boxes of one row as one line where the detector missed the
#: ink between them ("Mar" | "2025" without "01,": :func:`screenmill.annotators.ocr._bridge_missed_ink`, annotator
#: ``2025.1-bridge``); 12 = it joins the pieces of a row set in heading type (1.2x the median line height) up to a line
#: height apart ("Core" | "Interface API", :data:`screenmill.annotators.ocr_group.HEADING_RATIO`), and no longer takes
#: a space read between two punctuation marks for a word space ("- -maxdepth" | "VALUE"; annotator ``2025.1-heading``);
#: 13 = it keeps two pieces of a row apart where glyph ink of another colour lies between them (the black "][" of
#: "[Contents][index]": :func:`screenmill.annotators.ocr.other_ink_between`, annotator ``2025.1-between``); 14 = it
#: joins an inline link wrapped from the end of one line of prose to the start of the next ("Get in" | "touch with me",
#: rule 7 of :mod:`screenmill.annotators.ocr_group`, annotator ``2025.1-inline``); 15 = the annotator's colour split
#: also starts a piece at a word opened by punctuation darker than the word and of another hue (the black bracket of
#: "org (archives)"), the grouping no longer joins a line of code ending a statement to the line below ("pctxt =
#: ...(_obj=ctx)" | "ctxt = ...", :func:`screenmill.annotators.ocr_group.ends_code_statement`), and joins a month and
#: its day whatever their shades (annotator ``2025.1-lead``); 16 = it joins inline code on a chip to the prose around
#: it ("Every method returns a" | "Promise unless ...", rule 4 of :func:`screenmill.annotators.ocr_group.join_pieces`,
#: annotator ``2025.1-chip``); 17 = it joins a tab's name and the count in its badge ("Issues" | "37"), and an inline
#: link wrapped in a numbered item to its next line, which hangs after the number (annotator ``2025.1-badge``); 18 = it
#: joins a chapter's bare number to its title ("1 Measuring" | "Program") and two overlapping boxes of one row
#: (annotator ``2025.1-chapter``); 19 = it no longer joins a comment line of code to the code below it ("// Creates a
#: Buffer." | "const buf = ...", annotator ``2025.1-comment``); 20 = inline code on a chip joins its prose by the
#: text's cues (the prose leads into the chip or runs on after it) instead of a gap limit (annotator
#: ``2025.1-leadin``); 21 = text across a vertical rule (a panel's border) no longer keeps a line from ending its row,
#: so a side bar's wrapped item beside another panel joins (:func:`screenmill.annotators.ocr.rule_between`, annotator
#: ``2025.1-rule``); 22 = two texts whose glyph colours differ only in shade join up to
#: :data:`screenmill.annotators.ocr_group.MAX_SHADE_DISTANCE` apart ("twice" | "in a row", "Continue with" | "Google";
#: annotator ``2025.1-shade``); 24 (23 was withdrawn) = the pieces of a line of prose over
#: :data:`screenmill.annotators.dom.labels.MAX_INSTRUCTION_NAME` characters, cut at its wide spaces, are joined into
#: the line and so give no label, as the DOM labels give it none
#: (:func:`screenmill.annotators.ocr_group.join_long_lines`, annotator ``2025.1-longline``); 25 = the end of an
#: underline between two words splits them, and keeps two pieces apart, however close their colours (a grey underlined
#: link in black prose: "The project is" | "hosted on GitHub" | ". You can report",
#: :func:`screenmill.annotators.ocr.underline_ends_between`, annotator ``2025.1-underline``); 26 = the underline is
#: told by its own long run (the skips a browser leaves at descenders bridged, not a descender touching its rows), and
#: also splits two words whose space is too narrow to split at ("Gitter" | "channel."), and a colour mixed toward white
#: or black is a shade of it (a saturated blue's short piece: "run-time library" | "documentation",
#: :func:`screenmill.annotators.ocr_group._shades`; annotator ``2025.1-underline2``); 27 = the underline's skips at a
#: descender are bridged up to half a line height, where the descender shows just below it and the underline runs on on
#: both its sides, so a link's word is no longer cut at its "g" ("Perl XSLT binding" | "ngs", recipe 26's fault;
#: :func:`screenmill.annotators.ocr._long_runs`); a piece's crop is padded no further than a pixel short of the next
#: piece of its line, so a narrow split reads none of its neighbour's glyphs ("processing of !", "Gitter!"); and an
#: underline is part of the style that tells an inline link wrapped in prose (rule 7 of
#: :mod:`screenmill.annotators.ocr_group`: "modular" | "version", one underlined grey link in black prose; annotator
#: ``2025.1-pad2``); 28 = text cut by the screenshot's left or right edge gives no label (:data:`EDGE_CUT`); 29 = a
#: paragraph's line of prose that ends a sentence where it had to wrap joins the next line, whatever its case (rule 5
#: of :mod:`screenmill.annotators.ocr_group`, :data:`screenmill.annotators.ocr_group.PROSE_WORDS`; annotator
#: ``2025.1-sentence``); 30 = a word of up to three letters in a line of prose too long to name reads paler than the
#: prose (its few thin strokes) and no longer cuts it ("... if not, write" | "to" | "the Free Software Foundation ...",
#: :data:`screenmill.annotators.ocr_group.FAINT_WORD`; annotator ``2025.1-faint``); 31 = a line of syntax-highlighted
#: code, its tokens in three colours or more, is one element, not a label per token ("format_decimal(" | "12345," |
#: "locale='", :func:`screenmill.annotators.ocr_group.join_code_rows`), and a side bar's wrapped link whose second line
#: stands closer than its list's regular pitch joins it without a text cue ("API Reference for the attr" | "Namespace",
#: rule 8 of :mod:`screenmill.annotators.ocr_group`; annotator ``2025.1-code``); 32 = a dotted underline
#: (``border-bottom: dotted``, an ``<abbr>``) is painted over before a line is read and split, so its dots are no full
#: stops between the words ("Basic.Concepts...Creating") nor ink in its word spaces
#: (:func:`screenmill.annotators.ocr._dotted_rule`, annotator ``2025.1-dots``); 33 = loosely set prose joins its lines
#: up to :data:`screenmill.annotators.ocr_group.LOOSE_LINE_GAP` line heights apart where that step is the screenshot's
#: own line pitch and no text stands further right on either row (a phone's paragraphs at a 1.5 line height,
#: :func:`screenmill.annotators.ocr_group._on_pitch`; annotator ``2025.1-pitch``); 34 = a code line after a console's
#: prompt (">>>") joins in two colours, and a code line's tokens up to 2.5 line heights apart (an operator the
#: recogniser dropped: "sc" | "SomeClass(", annotator ``2025.1-prompt``); 35 = a Python console's prompt read alone in
#: a lower box leads the code line after it, whose tokens may then be plain words (">>>" | "from" | "attrs" | "import",
#: annotator ``2025.1-console``); 36 = rule 7 reads an underline as part of the style only where it can be told on both
#: pieces (a link word too short to show one, in bare prose of its colour, is no lesser part of its lines; recipe 27
#: let the prose's known state count against it; annotator ``2025.1-style``); 37 = the colour split cuts between two
#: words only where their cores' colours differ too (a thin word's paler edges are no colour: "particular column" |
#: "in" | "which the", :data:`screenmill.annotators.ocr.CORE_SHARE`), and the ink between two pieces is told from the
#: row's background by its top and bottom rows (large bold type covers over half its band: "Reference" | "Manual";
#: annotator ``2025.1-cores``); 38 = a line set in a monospace font (its glyph centres on one pitch's grid,
#: :func:`screenmill.annotators.ocr._monospace_pitch`) splits only at a run of blank cells and keeps its " | " and
#: brackets (a synopsis: "[ ORDER BY expression [ ASC | DESC ] ..."), and beside a lone narrow glyph only hues split (a
#: "|" set off the pixel grid reads pale; annotator ``2025.1-mono``); 39 = a list marker, dash or separator left alone
#: at a piece's end is dropped from it ("- decompresses files", "· Type:", "Docs /"), and the CJK and fullwidth marks
#: the recogniser reads for ASCII ones in Latin text are made ASCII ("count丨ALL }］" → "count|ALL }]"; annotator
#: ``2025.1-marks``); 40 = an underscore, a short rule below the line's central band between two words' ink, is ink to
#: the gap split, so an identifier is one piece ("idn2_to_ascii_4i", not "idn2 to ascii" | "4i";
#: :func:`screenmill.annotators.ocr._underscores`, annotator ``2025.1-underscore``); 41 = two lines or pieces are one
#: font size down to a height ratio of 0.7 (0.75 before: a detector box reaching up to the line above kept a wrapped
#: link apart, "Reporting bugs" | "and getting help"; :data:`screenmill.annotators.ocr_group.MIN_HEIGHT_RATIO`,
#: annotator ``2025.1-height``); 42 = boxes drawn tight to bold
#: capitals: a stem that fills the line's central band is ink ("DESCRI" | "P" | "ION" was "DESCRIPTION"), the
#: background of a crop whose ink is most of it comes from around it ("GNU" read white), and a box with no
#: descending glyph counts a descender taller when sizes are compared ("GNU" | "Coding"); and a side bar's pitch is
#: measured between the boxes' middles (annotator ``2025.1-stems``); 43 = a repeated text painted more than ten times
#: counting its words inside other elements' texts gets no label (:func:`painted_inside`); 44 = a lone glyph of a
#: script no other text of the screenshot is in is glyph noise ("田" for an icon on an English page,
#: :func:`glyph_noise`); 45 = repeats are found ignoring a trailing comma, full stop or semicolon ("GHashTable,");
#: 46 = an underscore is also looked for in the free rows under a line's box, which a box drawn tight to capitals
#: leaves out ("GCRY_MD_FLAG_HMAC" was "GCRY MD" | "FLAG HMAC"; :func:`screenmill.annotators.ocr._underscores`,
#: annotator ``2025.1-low-underscores``); 47 = a paragraph's lines joined by the grouping go apart again where a link
#: of another colour stands in them, as the DOM labels such a paragraph line by line (rule 9 of
#: :mod:`screenmill.annotators.ocr_group`); 48 = also where the link stands in the paragraph's line just above or below
#: them, which the paragraph wrapped into; 49 = an inline link wrapped in prose joins where it is most of its two lines
#: but not of the text around them ("the <a>Locale Data Markup Language" | "specification</a> (LDML).", rule 7 of
#: :mod:`screenmill.annotators.ocr_group`); 50 = an ellipsis is part of a text when repeats are found ("Open..." and
#: "Open" are two texts, as the DOM counts them); 51 = a piece whose colour cannot be told is no prose beside a wrapped
#: link (recipe 49's test; no dev label changed); 52 = a comma darker than the link before it and of another hue ends
#: the link, though it is a sliver of a long word of narrow monospace glyphs, and keeps it apart from the next link
#: when pieces are joined ("maps:next/1," | "maps:filter/2" on grey chips;
#: :func:`screenmill.annotators.ocr.mark_after`, annotator ``2025.1-prose-comma``); 53 = two underlined links side by
#: side stay apart where the gap between them is bare ("Babel 2.18.0" | "previous"), and a line hanging under a list
#: item's hanging line is part of the item too ("Default" | "Extraction" | "Methods"); 54 = rule 9's wrap test measures
#: where the row ends for the paragraph's line below the joined lines too, as it did for the line above (it took the
#: joined lines' last box, short of the row's end where more text follows; no dev label changed); 55 = a breadcrumb's
#: guillemets read as CJK double angle brackets ("》") are guillemets, a spaced ">" in a text that holds "»" or "›"
#: separates too (a guillemet read as ">"), and a spaced separator left in the gap between two pieces keeps them apart
#: whatever its colour (:func:`screenmill.annotators.ocr.glyph_between`: "3.11.2 Documentation" | "The Python Standard
#: Library" read like a section number and its title; annotator ``2025.1-crumbs``); a code line of two colours is one
#: where a piece opens a bracket the next goes on inside ("print(" | "'Zero'"); 56 = a console's prompt starts its code
#: line, with a space after it however close the next token ("vvv" | "if"), and a number of one or two characters read
#: with less confidence than :data:`NUMBER_MIN_CONFIDENCE` is glyph noise (a bracket read as "1", a logo read as "2");
#: 57 = a link wrapped in prose: a mark of another colour ending its last line is the prose's ("the Expat home" |
#: "page."), two underlined lines (a dotted underline counts) continue each other whatever their words ("Locale Data
#: Markup" | "Language specification") unless the first ends with a comma, and the second line neither has a list
#: marker of its own nor a first word that had room at the first line's end; 58 = ... and words set right between prose
#: of another colour continue each other with no text cue ("see the <a>API" | "documentation</a> and ask"); 59 =
#: loosely set prose joins at its line pitch within 5 % of it, not 3 % (a box's top follows its line's ascenders: at
#: 3x, steps of 70-76 px at a 72 px pitch); 60 = a line that starts in mid-text (a comma, a semicolon, a closing
#: bracket, "[,") continues the line above ("fs.readFile(path" | "[, options])"); 61 = a dotted underline, painted over
#: before a line is read, still tells the splitting where a link starts ("Previous:" | "Welcome to Click" in Sphinx's
#: Alabaster side bar, one grey; annotator ``2025.1-dotted-links``); 62 = a thin row of ink under nearly all of a
#: line's text is its underline for the grouping, though descenders break it into short runs ("https://git-" |
#: "scm.com/downloads") or the word is too short for a run; 63 = a wrapped line with no
#: descending glyph is of its line's size once counted a descender taller ("This value means that an out-of-memory" |
#: "condition occurred.", 40 px under 60); 64 = a lone sans-serif "I" (a bare stem on the baseline) is a letter, not a
#: bar: "How do I convert" no longer reads as "How do" | "convert", nor "shell" as "shel"; a number read with "o" for
#: its zeros is made digits ("7.1o" → "7.10"; annotator ``2025.1-sans-i-zeros``); 65 = a line of prose ending in no
#: mark continues into a line that ends a sentence ("... Vern Paxson, Will" | "Estes and John Millaway."), and an
#: underlined link inset between prose joins across its wrap even where links are most of the text around it (a texinfo
#: node header on a phone: "Previous: R Data" | "Import/Export, Up: ..."); 66 = whether a wrapped line's first word
#: had room at the end of the line above is judged by its glyphs' advance widths where the line is words of prose
#: ("3.1.2 Options That are" | "Common for All Utilities.": two wide "m"s did not fit); 67 = an underlined link the
#: prose leads into joins its second line when that is its line's first text, with nothing left of it ("Up:
#: <a>Automated" | "Option Processing</a> [Contents]"); 68 = a full stop read after a piece that ends with a letter's
#: ink is dropped (the end of a link's underline under a "g": "Reporting."; annotator ``2025.1-no-stop``), an underline
#: skipped round a descender still counts where the rows above it are blank ("Bugs" at 3x), and a link's underline is
#: looked for without the prose's mark read at its end ("Bugs,"); 69 = a link wrapped in prose joins though its second
#: line reaches past where its first starts, short of its end ("<a>GNU Free" | "Documentation License</a>." on a
#: phone), and the ones of a dotted number read as "l" are made ones ("3.2.l6" → "3.2.16"; annotator
#: ``2025.1-digit-l``); 70 = a link wrapped in a table's cell joins where another column's link stands on its first
#: row and nothing of that column on its next (a texinfo index on a phone: "Available" | "ciphers"), and an
#: underlined link with the prose's colon after it ends its line ("abbreviations for months:" | "action, sieve:");
#: 71 = inline code on a chip joins the prose round it though its glyphs read a little paler and warmer ("wish to" |
#: "require()" in npm's docs); 72 = a lone "." read from the end of an underlined link's underline at a line's end
#: ("Reporting." | "Bugs," in a texinfo header on a phone) no longer keeps the link from joining its next line, and
#: the joined text drops it; 73 = a date wrapped after its month joins ("19 September" | "2022, of ..."), and in a
#: texinfo header on a phone a link titled with a spaced dash ("string-tr! - convert" | "characters") or ending in
#: code type ("Configuring" | "comsatd") joins across its wrap, while a bracketed item starting the next line
#: ("MPFR Basics" | "[Index]") stays apart; 74 = a line's first word had room after the line above only with the
#: space before it ("of" | "a global pointer ..."), and prose stopping mid-sentence in lower case runs on into an
#: acronym ("allows one to use" | "MPFR in two ways:"); 75 = the annotator splits a row of bracketed links read with
#: its first "[" lost or a "]" read as "l" ("Contents][Index]", "[Contentsl[lndex]") into its links, and reads a
#: console's prompt read as "vvv" as ">>>", keeping it alone for the code after it (annotator ``2025.1-brackets``);
#: 76 = a row split at its separators whose tokens did not fall on its ink's words ("Go |" read "GoI") places its
#: parts by their characters (annotator ``2025.1-bars``), two lines that open with the same word are rows of a column
#: ("gboolean (*GEqualFunc)" | "gboolean (*GEqualFuncFull)"), and a title's version tag joins it ("Workspaces" |
#: "@11.19.1"); 77 = the screenshot's line pitch is measured between lines' middles, not their tops (a box's top
#: follows its line's ascenders: "Additional resources about date/time string" | "formats can be found below:" stand
#: 79 px apart top to top on a 72 px pitch, 71.5 middle to middle); 78 = rule 9 finds the link on the line below or
#: above loosely set prose too (a phone's "... Lemburg in his" | "<a>mx.DateTime</a> extension": the paragraph is its
#: lines, not two thirds of it), and an acronym that ends a sentence continues prose stopped mid-way ("prompt you to
#: enter" | "SQL. Type in SQL statements"); 79 = rule 7 takes a node's name with digits for words ("Previous:
#: <a>unnamed-" | "faq-80</a>, Up:"), and the annotator places every part of a separator row, one whose snapped ends
#: would cross included (annotator ``2025.1-bars2``); 80 = a line that opens with a field's name and its colon is a
#: field of its own ("... 12:29:04 PST." | "Date: Thu, 02 Mar 2000 23:00:46 PST"), unless the line above ends with
#: a hyphen; 81 = a comma counts as no descending glyph when two lines' sizes are compared ("stable, since ..." 42 px
#: under "... is just as" 62), a line of prose ending on a determiner or preposition goes on ("... Foundation; with
#: no" | "Invariant Sections"), and a numbered item's next line hangs under its text, after the number ("3. The first
#: name prefixed with one dash is" | "used otherwise."); 82 = inline code on a chip joins the prose round it up to
#: :data:`screenmill.annotators.ocr_group.CHIP_SHADE_DISTANCE` apart ("A" | "package" | "is:", a short code word's
#: glyphs 99 apart), and loose prose under a line with no descending glyph is measured from where its descenders would
#: end ("... a timezone-naive" | "datetime is returned."); 83 = rule 8 without a regular pitch: a table's wrapped cell
#: joins where its step is shorter than the rows' around it and the page repeats it (a texinfo index on a phone,
#: "Assignment" | "functions:"); 84 = a row with fewer runs of ink than tokens places its parts by characters over the
#: ink's span, as recipe 76 does, snapping to a word's edge only when one is near (annotator ``2025.1-bars3``); 85 =
#: an element read with less confidence than :attr:`screenmill.annotators.ocr.OcrConfig.label_min_confidence` (0.8)
#: gives no label.
RECIPE_VERSION = "85"
#: Text whose box comes this close (px) to the screenshot's left or right edge is cut by it (a page wider than the
#: viewport: "Joe Wres" of "Joe Wreschnig"); a label would name a cut word, so it gives none (the DOM truth leaves text
#: cut by the top or bottom edge out of recall the same way).
EDGE_CUT = 2.0
#: A lone glyph's box is square (an icon's cell) when its width / height lies in this range.
GLYPH_SQUARE_ASPECT = (0.8, 1.25)
#: A number of one or two characters read with less confidence than this is glyph noise too: a bracket or a bar read
#: as "1" in a synopsis ("[ WHERE condition ]"), a logo's shape read as "2". On the truth set's dev parts every such
#: label (12) named nothing; the 37 that named their element were read at 0.9 or more.
NUMBER_MIN_CONFIDENCE = 0.75
#: Lone glyphs on one line closer than this many line heights apart are a toolbar of icons.
GLYPH_TOOLBAR_GAP = 6.0
_QUOTES = "\"'“‘«「"


@dataclasses.dataclass(frozen=True)
class OcrProducer(ScreenshotProducer):
    """Text elements of a screenshot → one unambiguous ``click "<text>"`` label each (``click the second "<text>"``
    for a repeated text), in original pixels (stage ``annotate``).

    Attributes:
        run_id / config_hash: stamped on every label.
        annotator_options: keyword arguments of :class:`screenmill.annotators.ocr.OcrConfig` (e.g. thresholds).
        instruction_template: how an element's text becomes the instruction (contains ``{text}``); a repeated
            text's instruction is derived from it by :func:`positional_template`.
        recipe / recipe_version: recorded on each label.
        min_element_chars: elements with less visible text are skipped.
        drop_glyphs: skip elements that are icons read as text (:func:`is_glyph_noise`).
        glyph_min_confidence: a lone glyph read with less confidence than this is an icon.
        drop_wrong_script: skip wrong-script readings (:func:`screenmill.annotators.scripts.is_wrong_script_reading`).
        max_batch_size: upper bound of a batch of screenshots handed to one DoFn call.
    """

    run_id: str
    config_hash: str
    annotator_options: tuple[tuple[str, Any], ...] = ()
    instruction_template: str = 'click "{text}"'
    recipe: str = "ocr-text-click"
    recipe_version: str = RECIPE_VERSION
    min_element_chars: int = 1
    drop_glyphs: bool = True
    glyph_min_confidence: float = 0.9
    drop_wrong_script: bool = True
    max_batch_size: int = 8

    stage = "annotate"
    step = "Annotate"

    @property
    def install_hint(self) -> str:
        from screenmill.annotators.ocr import _INSTALL_HINT

        return _INSTALL_HINT

    @property
    def name(self) -> str:
        from screenmill.annotators.ocr import OcrAnnotator

        return OcrAnnotator.NAME

    @property
    def version(self) -> str:
        from screenmill.annotators.ocr import OcrAnnotator

        return OcrAnnotator.VERSION

    def process_key(self) -> Hashable:
        return ("ocr", self.annotator_options)

    def load(self):
        """A loaded :class:`screenmill.annotators.ocr.OcrAnnotator` (RuntimeError with the install hint when RapidOCR
        is missing)."""
        from screenmill.annotators.ocr import OcrAnnotator

        annotator = OcrAnnotator(self.ocr_config)
        annotator.load()
        return annotator

    @functools.cached_property
    def ocr_config(self):
        """The annotator's settings, :class:`screenmill.annotators.ocr.OcrConfig` of ``annotator_options``: built and
        checked once (ValueError for a value out of range, TypeError for an option it does not have)."""
        from screenmill.annotators.ocr import OcrConfig

        return OcrConfig(**dict(self.annotator_options))

    def produce(self, model, shot: Screenshot, pixels) -> Iterable[GroundingLabel | Count]:
        """The labels of one screenshot, and the counts of its text the models could not read (see the module
        docstring)."""
        result = model.read(pixels)
        yield from elements_to_labels(shot, result.elements, model, self)
        wrong = sum(is_wrong_script_reading(e.text) for e in result.elements) if self.drop_wrong_script else 0
        for name, per_shot, n in (
            ("wrong_script_readings", "screenshots_wrong_script", wrong),
            ("unread_text_lines", "screenshots_unread_text", len(result.unread)),
        ):
            if n:
                yield Count(name, n)
                yield Count(per_shot)


def positional_template(template: str) -> str:
    """The instruction template of a repeated text: ``the {ordinal} `` put before ``{text}`` and its opening quote.

    ``click "{text}"`` → ``click the {ordinal} "{text}"``; ``tap {text}`` → ``tap the {ordinal} {text}``.
    """
    at = template.index("{text}")
    if at and template[at - 1] in _QUOTES:
        at -= 1
    return template[:at] + "the {ordinal} " + template[at:]


def is_lone_glyph(text: str) -> bool:
    """At most two characters other than whitespace, exactly one of them a letter, none a digit ("Q", "三", "X.")."""
    chars = "".join(text.split())
    return len(chars) <= 2 and sum(c.isalpha() for c in chars) == 1 and not any(c.isdigit() for c in chars)


def is_glyph_noise(
    text: str, box: Sequence[float], confidence: float, min_confidence: float = 0.9, in_toolbar: bool = False
) -> bool:
    """Whether an OCR element is an icon read as text rather than text a person would name.

    Args:
        text: the recognised text.
        box: its ``(x0, y0, x1, y1)``.
        confidence: the recognition confidence in ``[0, 1]``.
        min_confidence: a lone glyph read with less confidence is an icon.
        in_toolbar: another lone glyph sits beside it on its line (:func:`glyph_noise`).

    Returns:
        True for a text without a letter or digit, for a lone glyph (:func:`is_lone_glyph`) read with
        confidence below ``min_confidence``, in a square box (width / height within :data:`GLYPH_SQUARE_ASPECT`)
        or in a toolbar, and for a number of one or two characters ("1", "42", "x2") read with confidence below
        :data:`NUMBER_MIN_CONFIDENCE`. Longer numbers and words of two letters or more ("OK", "Go") never are.
    """
    if not any(c.isalnum() for c in text):
        return True
    chars = "".join(text.split())
    if len(chars) <= 2 and any(c.isdigit() for c in chars):
        return confidence < NUMBER_MIN_CONFIDENCE
    if not is_lone_glyph(text):
        return False
    w, h = box[2] - box[0], box[3] - box[1]
    square = h > 0 and GLYPH_SQUARE_ASPECT[0] <= w / h <= GLYPH_SQUARE_ASPECT[1]
    return confidence < min_confidence or square or in_toolbar


def glyph_noise(
    texts: Sequence[str], boxes: Sequence[Sequence[float]], confidences: Sequence[float], min_confidence: float = 0.9
) -> set[int]:
    """Indices of the elements that are glyph noise (:func:`is_glyph_noise`).

    A lone glyph is *in a toolbar* when another lone glyph lies on its line (its vertical centre within the other's
    vertical extent) less than :data:`GLYPH_TOOLBAR_GAP` line heights away horizontally: a row of one-letter
    elements is a row of icons ("B", "I", "U"), a one-letter word of running text is not read as its own element.
    A lone glyph whose letter is of a script no other text of the screenshot is written in is an icon too, whatever
    its confidence: the recogniser reads icons as Chinese characters ("田" for a plus-in-a-square on an English page).
    """
    lone = [i for i, t in enumerate(texts) if is_lone_glyph(t)]
    alone = set(lone)
    written = set().union(*(letter_scripts(t) for i, t in enumerate(texts) if i not in alone))
    # with no other text on the screenshot nothing tells its script
    foreign = {i for i in lone if written and not set(letter_scripts(texts[i])) <= written}
    toolbar = set()
    for i in lone:
        a = boxes[i]
        for j in lone:
            b = boxes[j]
            if i == j or not b[1] <= (a[1] + a[3]) / 2 <= b[3]:
                continue
            gap = max(b[0] - a[2], a[0] - b[2], 0.0)
            if gap < GLYPH_TOOLBAR_GAP * max(a[3] - a[1], b[3] - b[1]):
                toolbar.add(i)
                break
    return {
        i
        for i, (t, b, c) in enumerate(zip(texts, boxes, confidences, strict=True))
        if i in foreign or is_glyph_noise(t, b, c, min_confidence, in_toolbar=i in toolbar)
    }


def reading_order(boxes: Sequence[Sequence[float]]) -> list[int]:
    """Indices of ``boxes`` (x0, y0, x1, y1) top to bottom, then left to right.

    A box whose vertical centre lies within the vertical extent of a line's first box belongs to that line, so a
    pixel of jitter between two words of one row does not reorder them.
    """
    lines: list[tuple[float, float, list[int]]] = []
    for i in sorted(range(len(boxes)), key=lambda i: (boxes[i][1] + boxes[i][3]) / 2):
        centre = (boxes[i][1] + boxes[i][3]) / 2
        if lines and lines[-1][0] <= centre <= lines[-1][1]:
            lines[-1][2].append(i)
        else:
            lines.append((boxes[i][1], boxes[i][3], [i]))
    return [i for _, _, members in lines for i in sorted(members, key=lambda i: boxes[i][0])]


def repeat_key(text: str) -> str:
    """What a text is compared as to find its repeats (see the module docstring): trailing commas, full stops and
    semicolons dropped (the prose's, after a link: "GHashTable,"), but not an ellipsis ("Open..." is a menu item that
    opens a dialog, not "Open")."""
    key = " ".join(text.split()).casefold()
    return key if key.endswith(("...", "…")) else key.rstrip(",.;")


def painted_inside(texts: Sequence[str], members: Sequence[int]) -> int:
    """How often the text of ``members`` (indices into ``texts``, all one text) is painted inside the other texts:
    as whole words (not as part of a longer word), compared as repeats are (:func:`repeat_key`).

    Args:
        texts: every element's text on one screenshot.
        members: the indices of the elements whose text it is (at least one).

    Returns:
        The count of its occurrences in the texts of the elements not in ``members``.
    """
    words = repeat_key(texts[members[0]])
    pattern = re.compile(r"(?<!\w)" + re.escape(words) + r"(?!\w)")
    own = set(members)
    return sum(len(pattern.findall(" ".join(t.split()).casefold())) for i, t in enumerate(texts) if i not in own)


def _instructions(texts: list[str], boxes: list[tuple[float, ...]], template: str) -> list[str | None]:
    """One instruction per element (None: no label), bare for a unique text, positional for a repeat."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, text in enumerate(texts):
        groups[repeat_key(text)].append(i)
    positional = positional_template(template)
    out: list[str | None] = [None] * len(texts)
    for members in groups.values():
        if len(members) == 1:
            out[members[0]] = template.format(text=texts[members[0]])
        elif len(members) + painted_inside(texts, members) <= len(ORDINALS):
            ranked = reading_order([boxes[i] for i in members])
            for rank, k in enumerate(ranked):
                i = members[k]
                out[i] = positional.format(ordinal=ORDINALS[rank], text=texts[i])
    owners: dict[str, int] = defaultdict(int)
    for instruction in out:
        if instruction is not None:
            owners[instruction.casefold()] += 1
    return [None if x is None or owners[x.casefold()] > 1 else x for x in out]


def elements_to_labels(shot: Screenshot, elements, annotator, config: OcrProducer) -> list[GroundingLabel]:
    """Turn OCR text elements into grounding labels in original pixels, boxes clamped to the image.

    Instructions are unambiguous on the screenshot (see the module docstring): repeated texts are named by position,
    or not at all beyond the tenth repeat. Label ids are stable (the instruction is part of the id).

    Args:
        shot: the screenshot (its id and size are stamped on every label).
        elements: :class:`screenmill.annotators.ocr.TextElement` s in the screenshot's pixels.
        annotator: the annotator (its ``NAME`` / ``VERSION`` are the provenance).
        config: the producer (recipe, templates, ``min_element_chars``, the glyph rule, provenance).

    Returns:
        The labels, top to bottom then left to right (by rounded box corner, then text); elements with too little text
        or more than :data:`screenmill.annotators.dom.labels.MAX_INSTRUCTION_NAME` characters (a paragraph: no one
        quotes it whole in an instruction, and the DOM labels draw the same line), glyph icons (:func:`is_glyph_noise`,
        unless ``config.drop_glyphs`` is off), wrong-script readings (unless ``config.drop_wrong_script`` is off), no
        area inside the image, text cut by its left or right edge (:data:`EDGE_CUT`), a text repeated more than ten
        times, or one read with less confidence than the annotator's ``label_min_confidence``
        (:class:`screenmill.annotators.ocr. OcrConfig`, from ``config.annotator_options``; after the repeats are
        counted: its text is on the screenshot all the same) give none.

    Raises:
        ValueError: ``config.annotator_options`` is no valid :class:`screenmill.annotators.ocr.OcrConfig`.
    """
    floor = config.ocr_config.label_min_confidence
    w, h = shot.width, shot.height
    ordered = sorted(elements, key=lambda e: (round(e.box[1]), round(e.box[0]), e.text))
    provenance = LabelProvenance(
        annotator.NAME, annotator.VERSION, config.recipe, config.recipe_version, config.config_hash, config.run_id
    )
    build = LabelBuilder(shot, provenance, "pixel")
    kept = []
    for el in ordered:
        text = " ".join(el.text.split())
        if not config.min_element_chars <= len(text) <= MAX_INSTRUCTION_NAME:
            continue
        x0, y0, x1, y1 = (min(max(v, 0.0), lim) for v, lim in zip(el.box, (w, h, w, h), strict=True))
        if x1 <= x0 or y1 <= y0 or x0 <= EDGE_CUT or x1 >= w - EDGE_CUT:  # no area, or cut by the left or right edge
            continue
        kept.append((el, text, (x0, y0, x1, y1)))
    if config.drop_wrong_script:
        kept = [k for k in kept if not is_wrong_script_reading(k[1])]
    if config.drop_glyphs:
        noise = glyph_noise([t for _, t, _ in kept], [b for _, _, b in kept], [e.confidence for e, _, _ in kept],
                            config.glyph_min_confidence)  # fmt: skip
        kept = [k for i, k in enumerate(kept) if i not in noise]
    instructions = _instructions([t for _, t, _ in kept], [b for _, _, b in kept], config.instruction_template)
    labels = []
    for (el, text, box), instruction in zip(kept, instructions, strict=True):
        if instruction is None or el.confidence < floor:
            continue
        px = min(max(el.point[0], box[0]), box[2])
        py = min(max(el.point[1], box[1]), box[3])
        labels.append(
            build.add(
                instruction,
                box,
                (px, py),
                element_text=text,
                role="text",
                native_box=el.box,
                native_point=el.point,
                confidence=el.confidence,
            )
        )
    return labels
