"""Writing systems of text, and which of them the shipped OCR models read.

The OCR annotator (:mod:`screenmill.annotators.ocr`) ships RapidOCR's PP-OCRv4 Chinese + English recogniser; it can
only output the characters of its dictionary (6623: 6280 Han characters, the Latin letters, digits, punctuation, and a
handful of others: 10 Greek letters, 6 Cyrillic, 5 kana, 2 Hangul). Measured on text rendered by Chromium with the
installed fonts (DejaVu Sans, Noto CJK), 20 px sans-serif, lines read by the recogniser:

==============  ============================================================================================
script          what the models return
==============  ============================================================================================
latin           read; diacritics mostly lost ("Crème brûlée" → "Cremebrulee", "Über" → "Uber") at 0.94-0.99
han             read ("欢迎光临", "加入购物车") at 0.99-1.0
cyrillic        Latin look-alikes at 0.75-0.88 ("Новости" → "HOBOCTИ", "Корзина" → "Kop3UHa")
greek           Latin look-alikes at 0.70-0.91 ("Αρχική" → "Apxikn", "Νέα" → "NEα")
arabic          garbage Latin at 0.41-0.76 ("الرئيسية" → "wwJi")
hebrew          garbage Latin and digits at 0.34-0.92 ("הוסף לסל" → "70790")
kana, hangul    nothing (an empty reading): the region is detected and not read; kanji among kana are read
==============  ============================================================================================

So only :data:`OCR_SCRIPTS` are covered; text in any other script is either not read or read as wrong-script
garbage whose confidence is no lower than that of real text. What can be told without knowing the page:

* a *mixed-script word* (:func:`is_mixed_script`: one word with letters of two scripts, "HOBOCTИ", "Kα入αθt") is a
  wrong-script reading: real UI text does not mix alphabets inside a word;
* a detected line read as nothing is text the models cannot read (:class:`screenmill.annotators.ocr.OcrResult`'s
  ``unread``).

A pure look-alike reading ("Kop3UHa") cannot be told from the pixels; on rendered pages the DOM text tells the
script (:func:`unreadable_scripts`), which ``screenmill eval --truth-from-dom`` reports per screenshot.
"""

from __future__ import annotations

import unicodedata
from collections import Counter

#: Scripts the shipped PP-OCRv4 recogniser reads (see the module docstring for the measurements).
OCR_SCRIPTS = frozenset({"latin", "han"})

# The first word of a letter's Unicode name → its script (the scripts a UI is likely to show; others by that word).
_SCRIPT_WORDS = {
    "CJK": "han",
    "IDEOGRAPHIC": "han",
    "HIRAGANA": "kana",
    "KATAKANA": "kana",
    "HALFWIDTH": None,  # HALFWIDTH KATAKANA / HANGUL: decided by the second word
    "FULLWIDTH": None,  # FULLWIDTH LATIN: decided by the second word
}


def script_of(ch: str) -> str | None:
    """The script of one character, lower case (``"latin"``, ``"cyrillic"``, ``"han"``, ``"kana"`` …); None for a
    character that is not a letter (digits, punctuation, symbols, spaces)."""
    if not ch.isalpha():
        return None
    words = unicodedata.name(ch, "").split()
    if not words:
        return "unknown"
    first = words[0]
    if first in _SCRIPT_WORDS:
        mapped = _SCRIPT_WORDS[first]
        if mapped is not None:
            return mapped
        first = words[1] if len(words) > 1 else first
        return {"KATAKANA": "kana", "HIRAGANA": "kana"}.get(first, first.lower())
    return first.lower()


def letter_scripts(text: str) -> Counter:
    """How many letters of ``text`` (NFKC: fullwidth Latin is Latin, the micro sign Greek) are in each script
    (non-letters are not counted)."""
    return Counter(s for s in map(script_of, unicodedata.normalize("NFKC", text)) if s is not None)


def unreadable_scripts(text: str) -> set[str]:
    """The scripts of ``text``'s letters that the OCR models cannot read (not in :data:`OCR_SCRIPTS`)."""
    return set(letter_scripts(text)) - OCR_SCRIPTS


def is_mixed_script(text: str) -> bool:
    """Whether a word of ``text`` (NFKC, split at whitespace) holds letters of two or more alphabets: a wrong-script
    reading ("HOBOCTИ" for "Новости", "NEα" for "Νέα", "Kα入αθt" for "Καλάθι").

    Han and kana are left out of the comparison: Chinese and Japanese UIs write Latin words into their text without
    spaces ("Python教程", "5G手机"). A word of one alphabet with digits and punctuation ("Windows10", "C++") is not
    mixed. A real word that mixes alphabets (a unit such as "μm") is flagged too: the recogniser's dictionary has
    10 Greek letters, so such a reading is as likely a misreading."""
    for word in text.split():
        if len(set(letter_scripts(word)) - {"han", "kana"}) > 1:
            return True
    return False


def is_wrong_script_reading(text: str) -> bool:
    """Whether an OCR reading is text of a script the models cannot read, read as something else: a mixed-script
    word (:func:`is_mixed_script`) or a letter of a script outside :data:`OCR_SCRIPTS` (the recogniser's few Greek,
    Cyrillic, kana and Hangul characters come out of garbage readings, "HOBOCTИ", "Kα入αθt", not of text it reads)."""
    return is_mixed_script(text) or bool(unreadable_scripts(text))
