"""Score text-element predictions (text + click point) against a ScreenSpot-style ground truth. Pure functions.

Ground truth is JSON Lines, one element per line::

    {"img_filename": "login.png", "instruction": "Forgot password?", "bbox": [x, y, w, h], ...}

``bbox`` is ``[x, y, w, h]`` in screenshot pixels (ScreenSpot's convention) unless ``load_truth(...,
bbox_format="xyxy")`` says otherwise; a record may instead carry ``bbox_xyxy: [x0, y0, x1, y1]``.

Matching, per image: a truth element is *found* when a prediction's text matches it — both normalised (Unicode
NFKC, casefold, whitespace collapsed, non-alphanumerics stripped at both ends) and compared with
``difflib.SequenceMatcher.ratio() >= min_ratio`` (0.8: small OCR slips pass, "Home" does not match "Home Products").
Pairs are taken greedily, best similarity first, then the prediction whose click point is nearest the truth box;
each truth element and each prediction is used at most once.

Lines (``data_type`` :data:`LINE`, from :func:`truth_from_dom`: the DOM's role ``line``) are visible text that is no
element: a line of a long paragraph or code block, the words around an inline link. They make precision honest (an
OCR label of such a line names painted text at its point) but are not elements to find: they count for precision
only, never in recall's truth, found or missed. A line has no parts a page marks out, so a prediction naming a run of
its whole words (:func:`names_part_of`: a column of a table set in a code block, the prose between two inline code
spans), whose box lies within the line's, is precise too; the report counts these apart (``line_parts``), so the
precision that takes whole lines only is ``(precise - line_parts) / predictions``.

Not text (``data_type`` :data:`ICON`: an image link, an icon button, a check box whose text is its label's; and
:data:`CUT`: text the screenshot's top or bottom edge cuts through, a strip of its glyphs painted) is what OCR cannot
read. ``evaluate(..., icons=False)`` leaves it out of recall's truth and point accuracy, so recall is
*visible-text recall* (the share of the painted text elements found); the icons are matched after the text elements,
with the predictions those left, and reported apart (:meth:`EvalReport.format_not_text`). Precision is the same
either way (a prediction inside an icon whose name matches its text is precise). :func:`icons_count` says which to
use for a set of labels: apart for OCR labels, counted for the others (a VLM's labels, whose task includes icons).

Metrics: ``recall = found / truth elements``; ``point_accuracy = matched predictions whose click point lies in the
truth box (edges included) / matched``; ``unmatched`` predictions are those no truth element took (extra text,
merged lines, or text the truth does not list).

Scripts: truth elements whose text holds letters of a script the OCR models cannot read
(:func:`screenmill.annotators.scripts.unreadable_scripts`: Arabic, Hebrew, Cyrillic, Greek, Korean, kana …) are counted
per image (``ImageScore.unreadable_scripts``) and reported, so a page the OCR cannot read shows as such, not as plain
misses.

Ambiguity (:func:`ambiguous_labels`, no truth needed): an (instruction, screenshot) pair is ambiguous when its labels
name two or more disjoint boxes (no common area; instructions compared case-insensitively, whitespace collapsed). No
model can answer such a pair right for every label, so a benchmark made of it caps every score below 1.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import math
import os
import unicodedata
import urllib.parse
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from screenmill.annotators.scripts import unreadable_scripts
from screenmill.annotators.wording import (
    DOM_FIELD,
    DOM_NAME,
    DOM_NAME_POSITION,
    DOM_POSITION,
    DOM_ROLE,
    DOM_TEXT,
    is_placeholder_label,
)

#: ``data_type`` of a truth record that is a line of painted text, not an element: scored for precision only.
LINE = "line"
#: ``data_type`` of a truth element with no visible text (ScreenSpot's "icon"; :func:`truth_from_dom`'s elements
#: without a ``dom-text`` / ``dom-field`` label): out of OCR's reach.
ICON = "icon"
#: ``data_type`` of a text element the screenshot's top or bottom edge cuts through (:func:`truth_from_dom`): only a
#: strip of its glyphs is painted, out of OCR's reach like an icon.
CUT = "cut"
#: A text element whose box touches the screenshot's top or bottom edge and is lower than this share of the
#: screenshot's median text height (elements and lines) is :data:`CUT`: the DOM box is clipped to the viewport, so a
#: line scrolled half out of view keeps a box a few pixels high.
CUT_HEIGHT = 0.75


@dataclasses.dataclass(frozen=True, slots=True)
class TruthRecord:
    """One ground-truth element.

    Attributes:
        image: the screenshot's file name (``img_filename``).
        text: the visible text (``instruction``).
        box: ``(x0, y0, x1, y1)`` in screenshot pixels.
        element: the DOM tag / role the record came from, if given.
        data_type: ScreenSpot ``data_type`` ("text", "icon"), if given; :data:`LINE` for a line of painted text that
            is no element (see :func:`evaluate`).
        sha256: hex SHA-256 of the image file, when it was next to the JSONL file at load time.
    """

    image: str
    text: str
    box: tuple[float, float, float, float]
    element: str = ""
    data_type: str = "text"
    sha256: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Prediction:
    """One predicted element.

    Attributes:
        image: key of the screenshot: its file name (a path is reduced to its base name) or its hex SHA-256.
        text: the predicted text.
        point: the click point ``(x, y)`` in screenshot pixels.
        box: ``(x0, y0, x1, y1)``, optional (not used for scoring).
    """

    image: str
    text: str
    point: tuple[float, float]
    box: tuple[float, float, float, float] | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Match:
    """A truth element paired with a prediction."""

    truth: TruthRecord
    prediction: Prediction
    similarity: float
    point_in_box: bool


class _Rates:
    """``recall`` and ``point_accuracy`` from ``truth``, ``found`` and ``point_in_box`` (fields or properties)."""

    __slots__ = ()

    @property
    def recall(self) -> float | None:
        """found / truth elements; None when there is no truth element."""
        return self.found / self.truth if self.truth else None

    @property
    def point_accuracy(self) -> float | None:
        """matched predictions with the point inside the truth box / matched; None when nothing matched."""
        return self.point_in_box / self.found if self.found else None


@dataclasses.dataclass(frozen=True, slots=True)
class Ambiguity:
    """An (instruction, screenshot) pair whose labels name disjoint boxes.

    Attributes:
        screenshot_id: the screenshot.
        instruction: the instruction as the first of its labels words it.
        boxes: every label's box ``(x0, y0, x1, y1)``, in row order.
    """

    screenshot_id: str
    instruction: str
    boxes: tuple[tuple[float, float, float, float], ...]


@dataclasses.dataclass(frozen=True, slots=True)
class ImageScore(_Rates):
    """Counts for one image (see :class:`EvalReport` for their meaning); ``unreadable_scripts``: per script the OCR
    models cannot read, how many of the image's truth elements hold letters of it (sorted by script)."""

    image: str
    truth: int
    found: int
    point_in_box: int
    predictions: int
    unmatched: int
    precise: int = 0
    unreadable_scripts: tuple[tuple[str, int], ...] = ()
    line_parts: int = 0

    @property
    def precision(self) -> float | None:
        """predictions whose point lies in a truth element of matching text / predictions; None without any."""
        return self.precise / self.predictions if self.predictions else None


@dataclasses.dataclass(frozen=True, slots=True)
class EvalReport(_Rates):
    """Result of :func:`evaluate`.

    Attributes:
        images: per-image scores, in truth order.
        matches: every (truth, prediction) pair that matched.
        missed: truth elements no prediction matched.
        unmatched: predictions on truth images that matched no truth element.
        ignored_predictions: predictions whose image key is not in the truth set.
        min_ratio: the text similarity threshold used.
        ambiguous: the ambiguous (instruction, screenshot) pairs of the labels scored (:func:`ambiguous_labels`;
            empty unless the caller set it: :func:`evaluate` sees predictions, not instructions).
        hits: per prediction on a truth image, ``(role, precise)``: the ``element`` of the smallest truth element
            its point lies in ("" when none) and whether some truth element of matching text contains the point.
        not_text_matches / not_text_missed: with ``evaluate(..., icons=False)``, the :data:`ICON` truth elements a
            prediction matched / none did (in none of the counts above); empty otherwise.
    """

    images: tuple[ImageScore, ...]
    matches: tuple[Match, ...]
    missed: tuple[TruthRecord, ...]
    unmatched: tuple[Prediction, ...]
    ignored_predictions: int
    min_ratio: float
    ambiguous: tuple[Ambiguity, ...] = ()
    hits: tuple[tuple[str, bool], ...] = ()
    not_text_matches: tuple[Match, ...] = ()
    not_text_missed: tuple[TruthRecord, ...] = ()

    @property
    def truth(self) -> int:
        return sum(s.truth for s in self.images)

    @property
    def found(self) -> int:
        return len(self.matches)

    @property
    def point_in_box(self) -> int:
        return sum(m.point_in_box for m in self.matches)

    @property
    def predictions(self) -> int:
        return sum(s.predictions for s in self.images)

    @property
    def precise(self) -> int:
        return sum(s.precise for s in self.images)

    @property
    def line_parts(self) -> int:
        """Precise predictions that name a part of a line of non-element text, not a whole element or line."""
        return sum(s.line_parts for s in self.images)

    @property
    def precision(self) -> float | None:
        """Share of the predictions on truth images whose point lies in a truth element whose text matches theirs
        (similarity ≥ ``min_ratio``), or in a line whose words theirs are a run of; None without predictions."""
        return self.precise / self.predictions if self.predictions else None

    @property
    def precision_whole(self) -> float | None:
        """:attr:`precision` with a part of a line counted as imprecise; None without predictions."""
        return (self.precise - self.line_parts) / self.predictions if self.predictions else None

    @property
    def ambiguous_labels(self) -> int:
        """Labels in ambiguous (instruction, screenshot) pairs."""
        return sum(len(a.boxes) for a in self.ambiguous)

    def unreadable_by_script(self) -> dict[str, dict[str, int]]:
        """Per script the OCR models cannot read: truth ``elements`` holding letters of it and the ``screenshots``
        they are on (:func:`screenmill.annotators.scripts.unreadable_scripts`), scripts sorted by name."""
        out: dict[str, dict[str, int]] = {}
        for s in self.images:
            for script, n in s.unreadable_scripts:
                row = out.setdefault(script, {"elements": 0, "screenshots": 0})
                row["elements"] += n
                row["screenshots"] += 1
        return dict(sorted(out.items()))

    def format_unreadable(self) -> str:
        """One line: the truth in scripts the OCR models cannot read, by script (``none`` when there is none)."""
        rows = self.unreadable_by_script()
        body = "; ".join(f"{k} {v['elements']} elements on {v['screenshots']} screenshots" for k, v in rows.items())
        return f"truth in scripts the OCR models cannot read: {body or 'none'}"

    def format_not_text(self) -> str:
        """One line: the truth elements with no visible text left out of recall (``evaluate(..., icons=False)``), how
        many a prediction named, and their count by role; "" when there are none."""
        roles = self.not_text_by_element()
        if not roles:
            return ""
        body = ", ".join(f"{k} {n}" for k, n in roles.items())
        cut = self.not_text_cut
        return (
            f"not text (out of OCR's reach, not in recall): {sum(roles.values())} elements"
            + (f" ({cut} text cut by the screenshot's edge)" if cut else "")
            + f", {len(self.not_text_matches)} named by a label; by role {body}"
        )

    def format_split_details(self) -> str:
        """The lines printed under a split's (or a part's) :meth:`summary`: the truth in scripts OCR cannot read,
        the elements with no visible text left out of recall (when there are), the table by role."""
        return "\n".join(x for x in (self.format_unreadable(), self.format_not_text(), self.format_by_element()) if x)

    def _not_text(self) -> tuple[TruthRecord, ...]:
        """The truth elements left out of recall as out of OCR's reach, named by a label or not."""
        return (*(m.truth for m in self.not_text_matches), *self.not_text_missed)

    @property
    def not_text_cut(self) -> int:
        """How many of the elements left out of recall are text the screenshot's edge cuts through (:data:`CUT`)."""
        return sum(t.data_type == CUT for t in self._not_text())

    def not_text_by_element(self) -> dict[str, int]:
        """Per role, the truth elements with no visible text left out of recall, most first."""
        roles = Counter(t.element or "-" for t in self._not_text())
        return dict(sorted(roles.items(), key=lambda kv: (-kv[1], kv[0])))

    def summary(self) -> str:
        """One line: truth, recall, point accuracy, predictions, precision, ambiguous labels."""

        def pct(v: float | None) -> str:
            return "-" if v is None else f"{100 * v:.1f}%"

        return (
            f"truth {self.truth}, recall {pct(self.recall)}, point accuracy {pct(self.point_accuracy)},"
            f" predictions {self.predictions}, precision {pct(self.precision)}"
            + (f" (whole elements and lines only: {pct(self.precision_whole)})" if self.line_parts else "")
        )

    def by_element(self) -> dict[str, dict]:
        """Per truth ``element`` (the DOM role for truth from DOM labels): truth, found, recall, point accuracy, and
        the predictions whose point lies in an element of that role with the share of them that are precise
        (predictions in no truth element are the row ``(none)``)."""
        out: dict[str, dict] = {}

        def row(role: str) -> dict:
            return out.setdefault(role, {"truth": 0, "found": 0, "point_in_box": 0, "predictions": 0, "precise": 0})

        for t in (*(m.truth for m in self.matches), *self.missed):
            row(t.element or "-")["truth"] += 1
        for m in self.matches:
            r = row(m.truth.element or "-")
            r["found"] += 1
            r["point_in_box"] += m.point_in_box
        for role, precise in self.hits:
            r = row(role or "(none)")
            r["predictions"] += 1
            r["precise"] += precise
        for r in out.values():
            r["recall"] = r["found"] / r["truth"] if r["truth"] else None
            r["point_accuracy"] = r["point_in_box"] / r["found"] if r["found"] else None
            r["precision"] = r["precise"] / r["predictions"] if r["predictions"] else None
        return dict(sorted(out.items(), key=lambda kv: (-kv[1]["truth"], kv[0])))

    def format_by_element(self) -> str:
        """A plain-text table of :meth:`by_element`."""

        def pct(v: float | None) -> str:
            return "-" if v is None else f"{100 * v:.1f}%"

        head = f"{'role':<16} {'truth':>6} {'found':>6} {'recall':>7} {'point acc':>9} {'preds':>6} {'precision':>9}"
        lines = [head]
        for role, r in self.by_element().items():
            lines.append(
                f"{role:<16} {r['truth']:>6} {r['found']:>6} {pct(r['recall']):>7} {pct(r['point_accuracy']):>9}"
                f" {r['predictions']:>6} {pct(r['precision']):>9}"
            )
        return "\n".join(lines)

    def to_dict(self, details: bool = False) -> dict:
        """JSON-ready summary; ``details=True`` adds the missed truth texts and unmatched prediction texts."""
        d = {
            "truth": self.truth,
            "found": self.found,
            "recall": self.recall,
            "point_in_box": self.point_in_box,
            "point_accuracy": self.point_accuracy,
            "predictions": self.predictions,
            "precise": self.precise,
            "precision": self.precision,
            "line_parts": self.line_parts,
            "precision_whole": self.precision_whole,
            "unmatched_predictions": len(self.unmatched),
            "ignored_predictions": self.ignored_predictions,
            "min_ratio": self.min_ratio,
            "ambiguous_labels": self.ambiguous_labels,
            "ambiguous_pairs": len(self.ambiguous),
            "unreadable_scripts": self.unreadable_by_script(),
            "not_text": {
                "elements": len(self.not_text_matches) + len(self.not_text_missed),
                "found": len(self.not_text_matches),
                "cut": self.not_text_cut,
                "by_element": self.not_text_by_element(),
            },
            "by_element": self.by_element(),
            "images": [
                {
                    "image": s.image,
                    "truth": s.truth,
                    "found": s.found,
                    "recall": s.recall,
                    "point_in_box": s.point_in_box,
                    "point_accuracy": s.point_accuracy,
                    "predictions": s.predictions,
                    "precision": s.precision,
                    "unmatched_predictions": s.unmatched,
                    "unreadable_scripts": dict(s.unreadable_scripts),
                }
                for s in self.images
            ],
        }
        if details:
            d["missed"] = [{"image": t.image, "text": t.text, "box": list(t.box)} for t in self.missed]
            d["unmatched"] = [{"image": p.image, "text": p.text, "point": list(p.point)} for p in self.unmatched]
            d["point_misses"] = [
                {
                    "image": m.truth.image,
                    "text": m.truth.text,
                    "box": list(m.truth.box),
                    "point": list(m.prediction.point),
                }
                for m in self.matches
                if not m.point_in_box
            ]
            d["ambiguous"] = [
                {"screenshot_id": a.screenshot_id, "instruction": a.instruction, "boxes": [list(b) for b in a.boxes]}
                for a in self.ambiguous
            ]
        return d

    def format_table(self) -> str:
        """A plain-text table: one row per image and a total row."""

        def pct(v: float | None) -> str:
            return "-" if v is None else f"{100 * v:.1f}%"

        rows = [("image", "truth", "found", "recall", "in box", "point acc", "preds", "unmatched", "precision",
                 "unreadable scripts")]  # fmt: skip
        for s in self.images:
            rows.append(
                (s.image, str(s.truth), str(s.found), pct(s.recall), str(s.point_in_box), pct(s.point_accuracy),
                 str(s.predictions), str(s.unmatched), pct(s.precision),
                 " ".join(f"{k}:{n}" for k, n in s.unreadable_scripts) or "-")
            )  # fmt: skip
        rows.append(
            ("TOTAL", str(self.truth), str(self.found), pct(self.recall), str(self.point_in_box),
             pct(self.point_accuracy), str(self.predictions), str(len(self.unmatched)), pct(self.precision),
             str(sum(n for s in self.images for _, n in s.unreadable_scripts)))
        )  # fmt: skip
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = []
        for k, r in enumerate(rows):
            cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]
            lines.append("  ".join(cells))
            if k == 0 or k == len(rows) - 2:
                lines.append("  ".join("-" * w for w in widths))
        lines.append(
            f"ambiguous labels: {self.ambiguous_labels} in {len(self.ambiguous)} (instruction, screenshot) pairs"
            " naming disjoint boxes"
        )
        lines.append(self.format_unreadable())
        if not_text := self.format_not_text():
            lines.append(not_text)
        if self.ignored_predictions:
            lines.append(f"({self.ignored_predictions} predictions on images not in the truth set were ignored)")
        return "\n".join(lines)


# ---------------------------------------------------------------------- loading
def load_truth(path: str | os.PathLike, bbox_format: str = "xywh", hash_images: bool = True) -> list[TruthRecord]:
    """Read a ScreenSpot-style JSONL ground-truth file.

    Args:
        path: the ``.jsonl`` file; blank lines are skipped.
        bbox_format: how to read a ``bbox`` key: ``"xywh"`` (ScreenSpot, default) or ``"xyxy"``. A ``bbox_xyxy``
            key is always read as ``[x0, y0, x1, y1]``.
        hash_images: when the image named by ``img_filename`` exists next to the file, record its SHA-256 so
            predictions keyed by content hash match too.

    Returns:
        The records in file order.

    Raises:
        ValueError: an unknown ``bbox_format``, or a line that is not a JSON object with a non-empty string
            ``img_filename``, a non-empty string ``instruction`` and a box of 4 finite numbers with non-negative
            size; the message names the file and line number.
        OSError: the file cannot be read.
    """
    if bbox_format not in ("xywh", "xyxy"):
        raise ValueError(f"bbox_format must be 'xywh' or 'xyxy', got {bbox_format!r}")
    path = Path(path)
    hashes: dict[str, str | None] = {}
    out: list[TruthRecord] = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{where}: not valid JSON ({e.msg})") from None
            if not isinstance(rec, dict):
                raise ValueError(f"{where}: expected a JSON object, got {type(rec).__name__}")
            image, text = rec.get("img_filename"), rec.get("instruction")
            if not isinstance(image, str) or not image:
                raise ValueError(f"{where}: 'img_filename' must be a non-empty string")
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"{where}: 'instruction' must be a non-empty string")
            if "bbox_xyxy" in rec:
                box, fmt = rec["bbox_xyxy"], "xyxy"
            elif "bbox" in rec:
                box, fmt = rec["bbox"], bbox_format
            else:
                raise ValueError(f"{where}: needs 'bbox' ([x, y, w, h]) or 'bbox_xyxy' ([x0, y0, x1, y1])")
            if (
                not isinstance(box, list | tuple)
                or len(box) != 4
                or not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in box)
            ):
                raise ValueError(f"{where}: box must be 4 finite numbers, got {box!r}")
            x0, y0, a, b = (float(v) for v in box)
            x1, y1 = (x0 + a, y0 + b) if fmt == "xywh" else (a, b)
            if x1 < x0 or y1 < y0:
                raise ValueError(f"{where}: box {box!r} ({fmt}) has a negative width or height")
            if hash_images and image not in hashes:
                img_path = path.parent / image
                hashes[image] = hashlib.sha256(img_path.read_bytes()).hexdigest() if img_path.is_file() else None
            out.append(
                TruthRecord(
                    image=image,
                    text=text,
                    box=(x0, y0, x1, y1),
                    element=str(rec.get("element", "")),
                    data_type=str(rec.get("data_type", "text")),
                    sha256=hashes.get(image),
                )
            )
    return out


# ---------------------------------------------------------------------- scoring
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
            if _ratio_at_least(want, " ".join(have[k : k + n]), min_ratio) >= min_ratio:
                return True
    return False


def _ratio_at_least(a: str, b: str, min_ratio: float) -> float:
    """difflib's ratio of two normalised texts (1.0 when equal), or 0.0 as soon as its cheap upper bounds show it
    is under ``min_ratio``."""
    if a == b:
        return 1.0
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if sm.real_quick_ratio() < min_ratio or sm.quick_ratio() < min_ratio:
        return 0.0
    return sm.ratio()


def names_element(p: Prediction, t: TruthRecord, min_ratio: float = 0.8) -> bool:
    """Whether prediction ``p``, whose point lies in truth element ``t``, names it as :func:`evaluate`'s precision
    counts: a similar text (normalised ratio at least ``min_ratio``), or a run of whole words of a :data:`LINE`
    element that holds the prediction's box (:func:`_names_line_part`)."""
    return text_similarity(p.text, t.text) >= min_ratio or _names_line_part(p, t, min_ratio)


def _names_line_part(p: Prediction, t: TruthRecord, min_ratio: float) -> bool:
    """A line part: ``t`` is a :data:`LINE`, ``p``'s box lies within it and ``p``'s text is a run of its words."""
    return t.data_type == LINE and _box_within(p.box, t.box) and names_part_of(p.text, t.text, min_ratio)


def _box_within(
    inner: tuple[float, float, float, float] | None, outer: tuple[float, float, float, float], slack: float = 0.25
) -> bool:
    """``inner`` lies within ``outer``, allowing ``slack`` of ``outer``'s height on every side (no box: False)."""
    if inner is None:
        return False
    m = slack * (outer[3] - outer[1])
    return (
        inner[0] >= outer[0] - m and inner[1] >= outer[1] - m and inner[2] <= outer[2] + m and inner[3] <= outer[3] + m
    )


def point_in_box(point: tuple[float, float], box: tuple[float, float, float, float]) -> bool:
    """True when ``point`` lies inside ``box`` (x0, y0, x1, y1), edges included."""
    x, y = point
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]


def _area(box: tuple[float, float, float, float]) -> float:
    return max(box[2] - box[0], 0.0) * max(box[3] - box[1], 0.0)


def _box_distance(point: tuple[float, float], box: tuple[float, float, float, float]) -> tuple[float, float]:
    x, y = point
    dx = max(box[0] - x, 0.0, x - box[2])
    dy = max(box[1] - y, 0.0, y - box[3])
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return math.hypot(dx, dy), math.hypot(x - cx, y - cy)


def evaluate(
    truth: Iterable[TruthRecord], predictions: Iterable[Prediction], min_ratio: float = 0.8, icons: bool = True
) -> EvalReport:
    """Match predictions to truth elements per image and compute recall and point accuracy.

    Args:
        truth: the ground truth (e.g. from :func:`load_truth`).
        predictions: predicted elements; ``image`` is a file name (a path is reduced to its base name) or the hex
            SHA-256 of the image. Predictions for images absent from the truth are counted in
            ``ignored_predictions`` and otherwise ignored.
        min_ratio: smallest normalised text similarity (0..1] that counts as a text match.
        icons: False leaves truth elements of ``data_type`` :data:`ICON` and :data:`CUT` out of recall's truth and
            point accuracy (visible-text recall, for OCR labels); they are matched after the others and reported apart
            (``EvalReport.not_text_matches`` / ``not_text_missed``). Precision does not depend on it.

    Returns:
        The :class:`EvalReport`.

    Raises:
        ValueError: ``min_ratio`` is not in (0, 1].
    """
    if not 0.0 < min_ratio <= 1.0:
        raise ValueError(f"min_ratio must be in (0, 1], got {min_ratio!r}")
    truth = list(truth)
    by_image: dict[str, list[TruthRecord]] = {}
    alias: dict[str, str] = {}
    for t in truth:
        by_image.setdefault(t.image, []).append(t)
        alias[t.image] = t.image
        alias.setdefault(os.path.basename(t.image), t.image)
        if t.sha256:
            alias[t.sha256.lower()] = t.image
    preds_by_image: dict[str, list[Prediction]] = {k: [] for k in by_image}
    ignored = 0
    for p in predictions:
        key = alias.get(p.image) or alias.get(p.image.lower()) or alias.get(os.path.basename(p.image))
        if key is None:
            ignored += 1
        else:
            preds_by_image[key].append(p)

    scores, matches, missed, unmatched, hits, apart_matches, apart_missed = [], [], [], [], [], [], []
    for image, recs in by_image.items():
        preds = preds_by_image[image]
        norm_t = [normalize_text(t.text) for t in recs]
        norm_p = [normalize_text(p.text) for p in preds]
        pairs = []
        for i, nt in enumerate(norm_t):
            if not nt:
                continue
            for j, np_ in enumerate(norm_p):
                if not np_:
                    continue
                sim = _ratio_at_least(nt, np_, min_ratio)
                if sim >= min_ratio:
                    d_box, d_centre = _box_distance(preds[j].point, recs[i].box)
                    pairs.append((-sim, d_box, d_centre, i, j))
        pairs.sort()
        lines = {i for i, t in enumerate(recs) if t.data_type == LINE}
        apart = set() if icons else {i for i, t in enumerate(recs) if t.data_type in (ICON, CUT)}
        used_t, used_p = set(), set()
        found_here = inside_here = 0
        for neg_sim, _db, _dc, i, j in pairs:
            if i in used_t or j in used_p or i in lines or i in apart:
                continue
            used_t.add(i)
            used_p.add(j)
            inside = point_in_box(preds[j].point, recs[i].box)
            matches.append(Match(truth=recs[i], prediction=preds[j], similarity=-neg_sim, point_in_box=inside))
            found_here += 1
            inside_here += inside
        for neg_sim, _db, _dc, i, j in pairs:  # not text: named by the predictions the text elements left
            if i in apart and i not in used_t and j not in used_p:
                used_t.add(i)
                used_p.add(j)
                inside = point_in_box(preds[j].point, recs[i].box)
                apart_matches.append(Match(recs[i], preds[j], similarity=-neg_sim, point_in_box=inside))
        missed.extend(t for i, t in enumerate(recs) if i not in used_t and i not in lines and i not in apart)
        apart_missed.extend(t for i, t in enumerate(recs) if i in apart and i not in used_t)
        unmatched.extend(p for j, p in enumerate(preds) if j not in used_p)
        text_ok = {(i, j) for _s, _db, _dc, i, j in pairs}
        precise_here = parts_here = 0
        for j, p in enumerate(preds):
            inside = [i for i, t in enumerate(recs) if point_in_box(p.point, t.box)]
            precise = any((i, j) in text_ok for i in inside)
            if not precise and any(_names_line_part(p, recs[i], min_ratio) for i in inside):
                precise = True
                parts_here += 1
            smallest = min(inside, key=lambda i: _area(recs[i].box), default=None)
            hits.append(("" if smallest is None else recs[smallest].element or "-", precise))
            precise_here += precise
        scripts = Counter(script for t in recs for script in unreadable_scripts(t.text))
        scores.append(
            ImageScore(
                image=image,
                truth=len(recs) - len(lines) - len(apart),
                found=found_here,
                point_in_box=inside_here,
                predictions=len(preds),
                unmatched=len(preds) - len(used_p),
                precise=precise_here,
                line_parts=parts_here,
                unreadable_scripts=tuple(sorted(scripts.items())),
            )
        )
    return EvalReport(
        images=tuple(scores),
        matches=tuple(matches),
        missed=tuple(missed),
        unmatched=tuple(unmatched),
        ignored_predictions=ignored,
        min_ratio=min_ratio,
        hits=tuple(hits),
        not_text_matches=tuple(apart_matches),
        not_text_missed=tuple(apart_missed),
    )


def icons_count(rows: Iterable[dict], choice: str = "auto") -> bool:
    """Whether truth elements with no visible text (:data:`ICON`) belong in the recall of these grounding labels.

    Args:
        rows: the grounding rows scored.
        choice: one of :data:`ICONS_CHOICES` (``--icons``): ``count`` → True, ``apart`` → False, ``auto`` → False
            when any row is an OCR annotator's (``annotator`` starting with ``ocr``), whose reach is visible text,
            True otherwise (a VLM's or the DOM's labels, whose task includes icons).
    """
    if choice != "auto":
        return choice == "count"
    return not any(str(r.get("annotator", "")).startswith("ocr") for r in rows)


def predictions_from_labels(rows: Iterable[dict]) -> list[Prediction]:
    """Turn grounding-label rows (``GroundingLabel`` dicts, e.g. ``read_shards(...).to_pylist()``) into predictions.

    Each label is keyed by its ``screenshot_id`` (the SHA-256 of the image bytes), so it meets the truth records
    whose image file was hashed by :func:`load_truth`, wherever the screenshot was ingested from. The label's
    ``element_text`` is the predicted text (its ``instruction`` when there is none).

    Args:
        rows: mappings with ``screenshot_id``, ``element_text``/``instruction``, ``click_x``, ``click_y`` and the
            box ``x0, y0, x1, y1`` (original-image pixels).

    Returns:
        One :class:`Prediction` per row, in row order.

    Raises:
        KeyError: a row lacks one of those keys.
    """
    out = []
    for r in rows:
        text = r.get("element_text") or r["instruction"]
        out.append(
            Prediction(
                image=r["screenshot_id"],
                text=text,
                point=(float(r["click_x"]), float(r["click_y"])),
                box=(float(r["x0"]), float(r["y0"]), float(r["x1"]), float(r["y1"])),
            )
        )
    return out


def _disjoint(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return min(a[2], b[2]) <= max(a[0], b[0]) or min(a[3], b[3]) <= max(a[1], b[1])


def ambiguous_labels(rows: Iterable[dict]) -> list[Ambiguity]:
    """The (instruction, screenshot) pairs of grounding-label rows whose labels name two or more disjoint boxes.

    Instructions are compared case-insensitively with whitespace collapsed; boxes that share no area (touching edges
    included) are disjoint, so two annotators' boxes of one element are not ambiguous, two "Edit" buttons are.

    Args:
        rows: mappings with ``screenshot_id``, ``instruction`` and the box ``x0, y0, x1, y1``.

    Returns:
        One :class:`Ambiguity` per ambiguous pair, in order of the pair's first row.

    Raises:
        KeyError: a row lacks one of those keys.
    """
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        key = (r["screenshot_id"], " ".join(r["instruction"].casefold().split()))
        groups.setdefault(key, []).append(r)
    out = []
    for (sid, _), members in groups.items():
        boxes = tuple(tuple(float(r[k]) for k in ("x0", "y0", "x1", "y1")) for r in members)
        if any(_disjoint(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :]):
            out.append(Ambiguity(sid, members[0]["instruction"], boxes))
    return out


#: The choices of ``--icons`` (:func:`icons_count`).
ICONS_CHOICES = ("auto", "count", "apart")
DOM_TEXT_RECIPES = (DOM_TEXT, DOM_FIELD, DOM_NAME, DOM_ROLE, DOM_POSITION, DOM_NAME_POSITION)
#: The DOM recipes that name an element by an accessible name it does not show.
DOM_NAME_RECIPES = frozenset({DOM_NAME, DOM_NAME_POSITION})
#: DOM roles that show no text of their own: a check box / radio button / switch is named by its label (an element of
#: its own, which keeps the visible text), an image by its alt text.
NO_TEXT_ROLES = frozenset({"checkbox", "radio", "switch", "image", "img"})


def truth_from_dom(rows: Iterable[dict]) -> list[TruthRecord]:
    """Ground truth from the DOM labels (``annotator='dom'``) of a run: one record per labelled element.

    A DOM element has a row per referring expression; its truth text is the visible text (``dom-text``) where it has
    one, else its field's placeholder (painted inside the field, where its label is painted beside it), else its
    field label, else its accessible name. ``element`` is the DOM role. ``data_type``
    is :data:`LINE` for the DOM's lines of painted text that is no element (role ``line``: scored for precision only)
    and :data:`ICON` for an element that shows no text of its own (what OCR cannot read), told from its recipes:

    * an accessible name that differs from its visible text (``dom-name``: an image link, an icon button; or
      ``dom-name-position``: such a name repeats, two "Up" arrows) and no ``dom-text`` / ``dom-field`` label;
    * a role whose text is another element's (:data:`NO_TEXT_ROLES`: a check box or radio button is named by its
      label, which is an element of its own) or an image, with no ``dom-text`` label.

    Every other element is ``text``, also one with only a role or positional instruction (its visible text repeats
    on the screenshot, so ``dom-text`` went to none of them: a repeated heading, a table cell "Paid"). DOM labels
    before recipe version 4 named a repeated icon's position ``dom-position`` too, so there it counts as text.
    A text element whose box touches the screenshot's top or bottom edge and is lower than :data:`CUT_HEIGHT` of the
    screenshot's median text height is :data:`CUT` (a line scrolled half out of view: its DOM box is the strip left
    in view). Records are keyed by the screenshot's content id (``image`` and ``sha256``), so the other annotators'
    labels of the same screenshots meet them.

    Args:
        rows: ``grounding`` rows (other annotators' rows are skipped).

    Returns:
        The records, one per (screenshot, element box), in row order of their first row.
    """
    elements: dict[tuple, dict[str, dict]] = {}
    image_height: dict[str, float] = {}
    for r in rows:
        if r["annotator"] != "dom":
            continue
        image_height[r["screenshot_id"]] = float(r.get("image_height") or 0)
        key = (r["screenshot_id"], *(round(float(r[k]), 1) for k in ("x0", "y0", "x1", "y1")))
        by_recipe = elements.setdefault(key, {})
        # a field's placeholder is painted inside it, its label beside it: the placeholder row wins, whatever the
        # row order (which follows the label ids, so changes with the config hash)
        if r["recipe"] not in by_recipe or (r["recipe"] == DOM_FIELD and is_placeholder_label(r["instruction"])):
            by_recipe[r["recipe"]] = r
    out = []
    for (sid, x0, y0, x1, y1), by_recipe in elements.items():
        first = next(by_recipe[k] for k in DOM_TEXT_RECIPES if k in by_recipe)
        text = first.get("element_text") or first["instruction"]
        shows_text = DOM_TEXT in by_recipe or DOM_FIELD in by_recipe
        role = first.get("role") or ""
        named = not DOM_NAME_RECIPES.isdisjoint(by_recipe)
        kind = "text" if shows_text or (not named and role not in NO_TEXT_ROLES) else ICON
        if role == LINE:
            kind = LINE
        out.append(
            TruthRecord(sid, text, (x0, y0, x1, y1), element=first.get("role") or "", data_type=kind, sha256=sid)
        )
    return _mark_cut(out, image_height)


def _mark_cut(records: list[TruthRecord], image_height: dict[str, float]) -> list[TruthRecord]:
    """The records with each text element cut by its screenshot's top or bottom edge made :data:`CUT`."""
    heights: dict[str, list[float]] = {}
    for t in records:
        if t.data_type in ("text", LINE):
            heights.setdefault(t.image, []).append(t.box[3] - t.box[1])
    median = {k: sorted(v)[len(v) // 2] for k, v in heights.items()}
    out = []
    for t in records:
        h, bottom = t.box[3] - t.box[1], image_height.get(t.image, 0.0)
        at_edge = t.box[1] <= 0.5 or (bottom > 0 and t.box[3] >= bottom - 0.5)
        if t.data_type == "text" and at_edge and h < CUT_HEIGHT * median[t.image]:
            t = dataclasses.replace(t, data_type=CUT)
        out.append(t)
    return out


def splits_from_manifest(manifest: str | os.PathLike, screenshots: Iterable[dict]) -> dict[str, str]:
    """``screenshot_id`` → split (``dev`` / ``test``) of the rendered screenshots whose page the manifest lists.

    The manifest is the JSONL that ``infra/truthset/collect.py`` writes (``path`` relative to the manifest's folder,
    ``split``); a screenshot's page is its ``page_uri`` (a ``file://`` URL of the rendered page). Pages are matched by
    resolved path, or else by the manifest path being the tail of the URL's path (the folder was moved).

    Args:
        manifest: the ``pages.jsonl`` file.
        screenshots: ``screenshots`` rows (``screenshot_id``, ``page_uri``); rows without a page are skipped.

    Returns:
        The split of every screenshot of a listed page.

    Raises:
        OSError: the manifest cannot be read. ValueError / KeyError: a line is not a record with path and split.
    """
    base = Path(manifest).resolve().parent
    by_path: dict[str, str] = {}
    with open(manifest, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                by_path[rec["path"].lstrip("/")] = rec["split"]
    resolved = {str((base / p).resolve()): split for p, split in by_path.items()}
    out = {}
    for s in screenshots:
        uri = s.get("page_uri")
        if not uri or not uri.startswith("file://"):
            continue
        path = urllib.parse.unquote(urllib.parse.urlsplit(uri).path)
        split = resolved.get(str(Path(path).resolve()))
        if split is None:
            split = next((v for p, v in by_path.items() if path.endswith("/" + p)), None)
        if split is not None:
            out[s["screenshot_id"]] = split
    return out


def evaluate_by_split(
    truth: Iterable[TruthRecord],
    predictions: Iterable[Prediction],
    split_of: dict[str, str],
    min_ratio: float = 0.8,
    icons: bool = True,
) -> dict[str, EvalReport]:
    """:func:`evaluate` on each split's screenshots alone (truth records and predictions keyed by screenshot id).

    Args:
        truth / predictions / min_ratio / icons: as for :func:`evaluate`.
        split_of: image key → split (:func:`splits_from_manifest`); images in none are left out.

    Returns:
        Split name → its report, splits sorted by name.
    """
    truth, predictions = list(truth), list(predictions)
    out = {}
    for split in sorted(set(split_of.values())):
        keep = {k for k, v in split_of.items() if v == split}
        out[split] = evaluate(
            [t for t in truth if t.image in keep],
            [p for p in predictions if p.image in keep],
            min_ratio=min_ratio,
            icons=icons,
        )
    return out
