"""The OCR's text mending: recogniser misreadings mended ("3.2.l6", "vvv"), CJK marks made ASCII, rows of
bracketed links, and a split piece's parts placed by their characters (docs/ocr-grouping.md)."""

from __future__ import annotations

import dataclasses
import re
import unicodedata

import numpy as np
from screenmill.annotators.ocr_features import END_STOP
from screenmill.annotators.ocr_thresholds import active as _t
from screenmill.annotators.scripts import script_of

# Check boxes, radio buttons and square icons that the (Chinese + English) recogniser reads as a character.
_BOX_GLYPHS = frozenset("口囗回日目〇○◯□■▢")


#: The marks that separate a row's items when spaced ("Docs / Guide", "Home | About").
_SEPARATOR_MARKS = "/|·•»›"


_SEPARATOR_RE = re.compile(rf"\s+[{_SEPARATOR_MARKS}]\s+")


#: ... and in a breadcrumb ("»" or "›" in it) a spaced ">" too: the recogniser reads some of its "»" as ">"
#: ("Documentation » The Python Tutorial > 4. More Control Flow Tools").
_CRUMB_RE = re.compile(rf"\s+[{_SEPARATOR_MARKS}>]\s+")


#: The marks that are no text of a piece's own (:func:`_keep`): the separators, a breadcrumb's ">" and dashes.
_SEPARATOR_CHARS = _SEPARATOR_MARKS + ">–—"


#: List markers the recogniser reads at a line's start.
_LIST_MARKS = "■▪◦"


#: A list marker, dash or separator that starts a piece, then a space and more text (not a dash: "- -catalogs" is
#: "--catalogs" read with a space; not "/": "/ month" is a price's unit); a separator that ends one.
_LEAD_MARK = re.compile(rf"^[{_SEPARATOR_MARKS.replace('/', '')}{_LIST_MARKS}\-–—]\s+(?=[^\s\-–—])")


_TRAIL_MARK = re.compile(rf"(?<=\S)\s+[{_SEPARATOR_MARKS}]$")


#: A row of two or more bracketed items, side by side: texinfo's "[Contents][Index]", a wiki's "[edit] [history]".
_BRACKETED_RE = re.compile(r"\s*(?:\[[^\[\]]*[^\W_][^\[\]]*\]\s*){2,}")


#: ... read with its first "[" lost ("Contents][Index]") ...
_UNOPENED_ROW = re.compile(r"^\s*(?=[^\W\d_][^\[\]]*\]\[)")


#: ... or with a "]" read as a letter or a bar before the next "[" ("[Contentsl[lndex]").
_BRACKET_AS_LETTER = re.compile(r"(?<=[^\W\d_])[lI1|](?=\[)")


#: A Python console's prompt read as letters ("vvv from datetime import date", "VVV" alone): ">>>".
_PROMPT_AS_VS = re.compile(r"^[vV]{3}(?=\s|$)")


@dataclasses.dataclass(slots=True)
class _Piece:
    """A horizontal span of a detected line, in processed-image pixels (x1 exclusive)."""

    x0: int
    x1: int
    text: str | None = None
    confidence: float = 0.0
    #: the piece is set in a monospace font (:func:`_monospace_pitch`): its " | " and brackets are code, not separators
    mono: bool = False
    #: the piece's last run of ink is a letter's, too wide for a full stop (``full_stop_width``): a "." the
    #: recogniser reads at its end is not there (the end of a link's underline under a "g": "Reporting.")
    letter_end: bool = False


#: A number the recogniser read with letters "o" for some of its zeros ("7.1o", "2oo8.", "1o0"): digits, dots and
#: o's only, at least one digit, standing alone (no letter or digit before or after it); not an octal literal
#: ("0o755", :data:`_OCTAL`).
_DIGIT_O = re.compile(r"(?<![\w.])(?=[\d.oO]*\d)(?=[\d.oO]*[oO])[\d.oO]+(?!\w)")


_OCTAL = re.compile(r"^0[oO][0-7]+$")


#: ... and one read with "l" or "I" for some of its ones, with a dot ("3.2.l6", "2.l", "l.0"): a code name ("l1")
#: has none.
_DIGIT_L = re.compile(r"(?<![\w.])(?=[\d.lI]*\d)(?=[\d.lI]*[lI])(?=[\d.lI]*\.)[\d.lI]+(?!\w)")


_ZEROS, _ONES = str.maketrans("oO", "00"), str.maketrans("lI", "11")


def _clean(text: str) -> str:
    """The recogniser's text, NFC, whitespace collapsed, with the CJK marks it reads for ASCII ones in Latin text
    ("count丨ALL", "［", "（0）") made ASCII (:func:`_ascii_marks`), the zeros of a number read as "o" made zeros
    (:data:`_DIGIT_O`: "7.1o How do I" → "7.10 How do I"), the ones of a dotted number read as "l" ones
    (:data:`_DIGIT_L`: "3.2.l6" → "3.2.16") and a console's prompt read as "vvv" at the start ">>>"
    (:data:`_PROMPT_AS_VS`)."""
    text = _PROMPT_AS_VS.sub(">>>", _ascii_marks(" ".join(unicodedata.normalize("NFC", str(text)).split())))
    text = _DIGIT_O.sub(lambda m: m.group(0) if _OCTAL.match(m.group(0)) else m.group(0).translate(_ZEROS), text)
    return _DIGIT_L.sub(lambda m: m.group(0).translate(_ONES), text)


def _no_stop(text: str, piece: _Piece) -> str:
    """``text`` without a full stop the recogniser read after its last letter where ``piece`` ends with a letter's
    ink, not a dot's (:attr:`_Piece.letter_end`: "Reporting." for a link's "Reporting", its underline ending under
    the "g")."""
    return END_STOP.sub("", text) if piece.letter_end else text


#: CJK marks the recogniser (trained on Chinese and English) reads for ASCII ones: the Han stroke "丨" for "|",
#: lenticular brackets for square ones, the ideographic comma and full stop; and double angle brackets for the
#: guillemets of a breadcrumb ("Python 》 3.11.2 Documentation").
_CJK_MARKS = str.maketrans(
    {"丨": "|", "【": "[", "】": "]", "〔": "[", "〕": "]", "、": ",", "。": ".", "》": "»", "《": "«"}
)


def _ascii_marks(text: str) -> str:
    """``text`` with CJK and fullwidth marks (U+FF01-FF5E) made ASCII where it holds Latin letters or digits and no
    Han or kana letter but the Han stroke "丨" (Chinese text keeps its own punctuation)."""
    if not any(c.isascii() and c.isalnum() for c in text):
        return text
    if any(c != "丨" and script_of(c) in ("han", "kana") for c in text):
        return text
    text = text.translate(_CJK_MARKS)
    return "".join(chr(ord(c) - 0xFEE0) if 0xFF01 <= ord(c) <= 0xFF5E else c for c in text)


def _keep(text: str, conf: float, min_conf: float) -> bool:
    """A piece is kept when confident enough, not only punctuation / separators (but a console's prompt, ">>>", which
    the grouping joins to the code after it: alone it gives no label), and not a box glyph."""
    if conf < min_conf or not text or text.strip() in _BOX_GLYPHS:
        return False
    return text.strip() == ">>>" or any(ch.isalnum() for ch in text.strip(_SEPARATOR_CHARS + " "))


def _bracketed(text: str) -> list[tuple[str, float, float]] | None:
    """The items of a row of bracketed items ("[Contents][Index]": each a link of its own, the brackets around it
    are not), each with the character span ``[start, end)`` of its text in ``text``; None for any other text. A row
    read with its first "[" lost ("Contents][Index]": the span is of the row with it, scaled to ``text``'s length, as
    the box holds its ink) or a "]" read as "l", "I", "1" or "|" before the next "[" ("[Contentsl[lndex]") is such a
    row."""
    row = ("[" if _UNOPENED_ROW.match(text) else "") + text  # its first "[" lost: its ink is still in the box
    if row.lstrip().startswith("["):
        row = _BRACKET_AS_LETTER.sub("]", row)
    if not _BRACKETED_RE.fullmatch(row):
        return None
    scale = len(text) / len(row)  # the row's characters spread over the text's span
    out = []
    for m in re.finditer(r"\[([^\[\]]*)\]", row):
        inner = m.group(1)
        lead = len(inner) - len(inner.lstrip())
        if inner.strip():
            start = m.start(1) + lead
            out.append((inner.strip(), start * scale, (start + len(inner.strip())) * scale))
    return out


def _fits(width: int, nchars: int, advance: float) -> bool:
    """Whether a part of ``nchars`` characters can span ``width`` px where the piece averages ``advance`` px per
    character (``part_width_factor``)."""
    expected = nchars * advance
    return expected / _t().part_width_factor <= width <= expected * _t().part_width_factor


def _by_characters(text: str, parts: list[str], runs: list[tuple[int, int]], height: int) -> list[_Piece]:
    """Place each part of ``text`` (in order, as :func:`_separator_split` cut it) at its characters' share of the
    ink span of ``runs`` (the piece's [start, end) ink runs), its ends moved to the nearest word's start and end
    (runs ``word_gap`` line heights of ``height`` apart) where one is within ``snap_chars`` characters: the
    glyphs of one line are of similar widths, so a part lands on its words even where the recogniser read two of
    them as one token, and where glyphs touch (fewer runs than words) it keeps its share. A part whose snapped ends
    would cross (a short part between two words' edges) keeps its unsnapped share: every part is placed, none
    dropped."""
    a, b = runs[0][0], runs[-1][1]
    scale = (b - a) / max(1, len(text))
    reach = _t().snap_chars * scale  # a word's edge this near its share's: glyphs that touch leave no word to snap to
    words = [list(runs[0])]
    for s, e in runs[1:]:
        if s - words[-1][1] >= _t().word_gap * height:
            words.append([s, e])
        else:
            words[-1][1] = e
    starts = np.array([s for s, _ in words], dtype=np.float64)
    ends = np.array([e for _, e in words], dtype=np.float64)
    out, pos = [], 0
    for part in parts:
        word = part.strip()
        if not word:
            continue
        found = text.find(word, pos)
        c0 = found if found >= 0 else pos  # a part is text's own; were one not found, it goes on from the last
        pos = c0 + len(word)
        lo, hi = a + scale * c0, a + scale * pos
        x0, x1 = int(starts[np.argmin(np.abs(starts - lo))]), int(ends[np.argmin(np.abs(ends - hi))])
        x0, x1 = x0 if abs(x0 - lo) <= reach else int(lo), x1 if abs(x1 - hi) <= reach else int(round(hi))
        if x1 <= x0:
            x0, x1 = int(lo), max(int(lo) + 1, int(round(hi)))
        out.append(_Piece(x0, x1, word))
    return out
