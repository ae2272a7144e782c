"""How two texts compare in the evaluation: normalised (Unicode NFKC, casefold, whitespace collapsed,
non-alphanumerics stripped at both ends), then ``difflib.SequenceMatcher.ratio()`` against a threshold
(``min_ratio``, 0.8: small OCR slips pass, "Home" does not match "Home Products"). Pure functions, used by the
matching (:mod:`screenmill.annotators.evaluate.matching`).
"""

from __future__ import annotations

import difflib
import unicodedata


def normalize_text(text: str) -> str:
    """NFKC, casefold, collapse whitespace, strip non-alphanumeric characters at both ends."""
    t = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    i, j = 0, len(t)
    while i < j and not t[i].isalnum():
        i += 1
    while j > i and not t[j - 1].isalnum():
        j -= 1
    return t[i:j]


def text_similarity(a: str, b: str) -> float:
    """difflib ratio of the normalised texts (1.0 = equal after normalisation; 0.0 when either is empty)."""
    na, nb = normalize_text(a), normalize_text(b)
    if not na or not nb:
        return 0.0
    if na == nb:
        return 1.0
    return difflib.SequenceMatcher(None, na, nb, autojunk=False).ratio()


def names_part_of(text: str, line: str, min_ratio: float = 0.8) -> bool:
    """Whether ``text`` names a run of whole words of ``line``: some run of as many words (or one more or fewer, for
    a space read or lost) is similar to it (normalised, difflib ratio ≥ ``min_ratio``). Single-character texts
    never do."""
    words = normalize_text(text).split()
    if not words or len("".join(words)) < 2:
        return False
    have = normalize_text(line).split()
    want = " ".join(words)
    for n in {max(1, len(words) - 1), len(words), len(words) + 1}:
        for k in range(0, max(0, len(have) - n) + 1):
            if ratio_at_least(want, " ".join(have[k : k + n]), min_ratio) >= min_ratio:
                return True
    return False


def ratio_at_least(a: str, b: str, min_ratio: float) -> float:
    """difflib's ratio of two normalised texts (1.0 when equal), or 0.0 as soon as its cheap upper bounds show it
    is under ``min_ratio``."""
    if a == b:
        return 1.0
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if sm.real_quick_ratio() < min_ratio or sm.quick_ratio() < min_ratio:
        return 0.0
    return sm.ratio()
