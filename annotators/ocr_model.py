"""The OCR grouping's learned join decisions at run time: the pair features and the packaged model.

:func:`pair_features` turns a candidate pair of the grouping (:mod:`screenmill.annotators.ocr_group`: a piece and the
piece right after it on its row, ``"row"``; a line and the line just below it, ``"line"``) into the numbers the rules
read (height ratio, gaps in line heights, colour distance, backdrop change, ink or an underline's end between,
alignment, list markers, the text cues, the rules' own decision), computed by the rules' own helpers.
:func:`packaged_decide` is the packaged model (:data:`MODEL_PATH`: gradient-boosted trees as plain arrays, numpy
alone predicts) as the grouping's ``decide`` callback (``OcrConfig(grouping="model")``), :func:`packaged_version`
its version (``screenmill run --ocr-join model`` puts it in the config hash). Training and the training set:
:mod:`screenmill.annotators.ocr_learn`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
from screenmill.annotators import ocr_features as g

MODEL_PATH = Path(__file__).resolve().parent / "ocr_data" / "grouping_model.json"
KINDS = ("row", "line")
#: A feature a cue cannot tell (a colour not read, no backdrop): the trees split it off from every real value.
UNKNOWN = -1.0
#: Features capped here (gaps and clearances in line heights: "far" is all that counts beyond).
CAP = 10.0
ROW_FEATURES = (
    "rule", "gap", "height_ratio", "size_ratio", "centre_offset", "colour_distance", "same_colour", "near_colour",
    "backdrop_change", "ink_between", "heading_i", "heading_j", "continues", "month_digit", "ends_comma_hyphen",
    "starts_lower", "starts_digit", "starts_upper", "words_i", "words_j", "chars_i", "chars_j", "count_j",
    "version_j", "list_marker_j",
)  # fmt: skip
LINE_FEATURES = (
    "rule", "gap", "height_ratio", "same_size", "left", "centre", "right", "colour_distance", "ends_in_colour",
    "room", "had_to_wrap", "mark_i", "mark_j", "item_text_i", "ends_code", "same_lead", "field_j", "continues",
    "on_pitch", "clear_right_i", "clear_left_j", "under_i", "under_j", "display_i", "display_j", "ends_hyphen",
    "ends_function_word", "ends_sentence", "starts_lower", "words_i", "words_j", "chars_i", "chars_j",
    "list_marker_j",
)  # fmt: skip
FEATURES = {"row": ROW_FEATURES, "line": LINE_FEATURES}


def _tri(v: bool | None) -> float:
    return UNKNOWN if v is None else float(v)


def _cap(v: float) -> float:
    return float(min(max(v, -CAP), CAP))


def _colour_distance(a, b) -> float:
    return UNKNOWN if a is None or b is None else float(g._colour_distances(a, b)[2].max())


def _text_cues(a: str, b: str) -> dict[str, float]:
    words_a, words_b = a.split(), b.split()
    return {
        "starts_lower": float(b.lstrip(g._OPENING)[:1].islower()),
        "words_i": float(len(words_a)),
        "words_j": float(len(words_b)),
        "chars_i": float(len(a)),
        "chars_j": float(len(b)),
        "list_marker_j": float(bool(g._LIST_MARKER.match(b))),
    }


def pair_features(kind: str, i: int, j: int, rule: bool, view: g.PairView) -> list[float]:
    """The features of candidate pair ``(i, j)`` of one kind (:data:`FEATURES`), in that order.

    Args:
        kind: ``"row"`` (piece ``j`` right after piece ``i``) or ``"line"`` (line ``j`` just below line ``i``).
        i / j / rule / view: as a ``decide`` callback gets them.
    """
    e, boxes, heights, cues = view.elements, view.boxes, view.heights, view.cues
    a, b, ta, tb = boxes[i], boxes[j], e[i].text, e[j].text
    h = (heights[i] + heights[j]) / 2
    ca, cb = view.colour(i), view.colour(j)
    f = {"rule": float(rule), "height_ratio": min(heights[i], heights[j]) / max(heights[i], heights[j])}
    f |= {"colour_distance": _colour_distance(ca, cb), **_text_cues(ta, tb)}
    if kind == "row":
        sa, sb = g._sizes([e[i], e[j]], [heights[i], heights[j]])
        end, between = cues["end"], cues["between"]
        right, left = end(i, "right"), end(j, "left")
        f |= {
            "gap": _cap((b[0] - a[2]) / h),
            "size_ratio": min(sa, sb) / max(sa, sb),
            "centre_offset": _cap(abs((a[1] + a[3]) - (b[1] + b[3])) / 2 / h),
            "same_colour": float(g._same_colour(ca, cb)),
            "near_colour": float(g._near_colour(ca, cb)),
            "backdrop_change": UNKNOWN if right is None or left is None else float(np.abs(right - left).max()),
            "ink_between": UNKNOWN if between is None or b[0] - a[2] < 2 else float(between(a, b)),
            "heading_i": float(i in cues["heading"]),
            "heading_j": float(j in cues["heading"]),
            "continues": float(g.continues_on_row(ta, tb)),
            "month_digit": float(bool(g._MONTH.match(ta)) and tb[:1].isdigit()),
            "ends_comma_hyphen": float(ta.endswith((",", "-"))),
            "starts_digit": float(tb.lstrip()[:1].isdigit()),
            "starts_upper": float(tb.lstrip()[:1].isupper()),
            "count_j": float(bool(g._COUNT.match(tb.strip()))),
            "version_j": float(bool(g._VERSION_TAG.match(tb.strip()))),
        }
    else:
        centres, mark, under, clearance = cues["centres"], cues["mark"], cues["under"], cues["clearance"]
        words = ta.split()
        display = cues["display"]
        f |= {
            "gap": _cap((b[1] - a[3]) / h),
            "same_size": float(g._same_size(i, j, e, heights)),
            "left": _cap((b[0] - a[0]) / h),
            "centre": _cap(((b[0] + b[2]) - (a[0] + a[2])) / 2 / h),
            "right": _cap((b[2] - a[2]) / h),
            "ends_in_colour": float(g._ends_in_colour(ca, cb)),
            "room": _cap((b[2] - a[2] - g._first_word(tb, b, space=True)) / h),
            "had_to_wrap": float(g._had_to_wrap(i, j, e, boxes, heights, min(a[0], b[0]), max(a[0], b[0]))),
            "mark_i": _tri(mark(i)),
            "mark_j": _tri(mark(j)),
            "item_text_i": float(cues["item_text"](i)),
            "ends_code": float(g.ends_code_statement(ta, tb)),
            "same_lead": float(g._same_lead(ta, tb)),
            "field_j": float(bool(g._FIELD.match(tb))),
            "continues": float(g.continues(ta, tb, display=i in display and j in display)),
            "on_pitch": float(g._on_pitch(i, j, centres, heights, cues["steps"])),
            "clear_right_i": _cap(clearance(i, +1)),
            "clear_left_j": _cap(clearance(j, -1)),
            "under_i": UNKNOWN if under is None else _tri(under(i)),
            "under_j": UNKNOWN if under is None else _tri(under(j)),
            "display_i": float(i in display),
            "display_j": float(j in display),
            "ends_hyphen": float(ta.endswith("-")),
            "ends_function_word": float(bool(words) and words[-1].casefold() in g.FUNCTION_WORDS),
            "ends_sentence": float(ta.rstrip(g._CLOSING)[-1:] in ".?!"),
        }
    return [f[name] for name in FEATURES[kind]]


class TreeModel:
    """Gradient-boosted trees as plain arrays: ``predict(x)`` gives the probability of a join."""

    def __init__(self, spec: dict) -> None:
        self.offset, self.rate = float(spec["offset"]), float(spec["rate"])
        self.trees = [{k: np.asarray(v) for k, v in t.items()} for t in spec["trees"]]

    def raw(self, x: np.ndarray) -> np.ndarray:
        x = np.atleast_2d(np.asarray(x, dtype=np.float64))
        out = np.full(len(x), self.offset)
        for t in self.trees:
            node = np.zeros(len(x), dtype=np.int64)
            while True:
                inner = t["left"][node] >= 0
                if not inner.any():
                    break
                go_left = x[np.arange(len(x)), np.maximum(t["feature"][node], 0)] <= t["threshold"][node]
                node = np.where(inner, np.where(go_left, t["left"][node], t["right"][node]), node)
            out += self.rate * t["value"][node]
        return out

    def predict(self, x: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.raw(x)))


def _load(path: str) -> dict:
    """The model file at ``path`` (read once per version of the file)."""
    return _read(path, Path(path).stat().st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _read(path: str, mtime_ns: int) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def packaged_version(path: str | Path = MODEL_PATH) -> str:
    """The packaged model's version (``gb1-`` and a hash of its trees and provenance)."""
    return _load(str(path))["version"]


def _decisions(p: np.ndarray, rule: np.ndarray, flip: float) -> np.ndarray:
    """Join or not from the model's join probabilities ``p``: the rules' decision unless the model is ``flip`` sure."""
    if flip >= 1.0:  # never overruled
        return np.asarray(rule, dtype=bool)
    return np.where(rule, p > 1.0 - flip, p >= flip)


def packaged_decide(path: str | Path = MODEL_PATH) -> Callable[..., bool]:
    """The packaged model as a ``decide`` callback: the rules' decision, overruled where the model is its kind's
    ``flip`` sure of the other (a kind whose ``flip`` is 1 is left to the rules, unread).

    Raises:
        OSError / ValueError: the model file cannot be read.
    """
    spec = _load(str(path))
    models = {k: TreeModel(v) for k, v in spec["kinds"].items()}

    def decide(kind: str, i: int, j: int, rule: bool, view: g.PairView) -> bool:
        if spec["flip"][kind] >= 1.0:
            return rule
        p = models[kind].predict(np.array(pair_features(kind, i, j, rule, view)))
        return bool(_decisions(p, np.array([rule]), spec["flip"][kind])[0])

    return decide
