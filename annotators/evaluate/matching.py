"""Score text-element predictions (text + click point) against ground truth: text matching, the greedy assignment,
point-in-box and the metrics. Pure functions; the truth comes from :mod:`screenmill.annotators.evaluate.truth`, the
printed and JSON reports of an :class:`EvalReport` from :mod:`screenmill.annotators.evaluate.reports`.

Matching, per image: a truth element is *found* when a prediction's text matches it (both normalised and compared with
``difflib``'s ratio against ``min_ratio``: :mod:`screenmill.annotators.evaluate.text`). Pairs are taken greedily, best
similarity first, then the prediction whose click point is nearest the truth box; each truth element and each
prediction is used at most once.

Lines (``data_type`` :data:`~screenmill.annotators.evaluate.truth.LINE`: visible text that is no element) make
precision honest (an OCR label of such a line names painted text at its point) but are not elements to find: they count
for precision only, never in recall's truth, found or missed. A line has no parts a page marks out, so a prediction
naming a run of its whole words (:func:`~screenmill.annotators.evaluate.text.names_part_of`: a column of a table set in
a code block, the prose between two inline code spans), whose box lies within the line's, is precise too; the report
counts these apart (``line_parts``), so the precision that takes whole lines only is ``(precise - line_parts) /
predictions``.

Not text (``data_type`` :data:`~screenmill.annotators.evaluate.truth.ICON` and
:data:`~screenmill.annotators.evaluate.truth.CUT`) is what OCR cannot read. ``evaluate(..., icons=False)`` leaves it
out of recall's truth and point accuracy, so recall is *visible-text recall* (the share of the painted text elements
found); the icons are matched after the text elements, with the predictions those left, and reported apart
(:func:`screenmill.annotators.evaluate.reports.format_not_text`). Precision is the same either way (a prediction inside
an icon whose name matches its text is precise). :func:`icons_count` says which to use for a set of labels: apart for
OCR labels, counted for the others (a VLM's labels, whose task includes icons).

Metrics: ``recall = found / truth elements``; ``point_accuracy = matched predictions whose click point lies in the
truth box (edges included) / matched``; ``unmatched`` predictions are those no truth element took (extra text, merged
lines, or text the truth does not list).

Scripts: truth elements whose text holds letters of a script the OCR models cannot read
(:func:`screenmill.annotators.scripts.unreadable_scripts`: Arabic, Hebrew, Cyrillic, Greek, Korean, kana …) are counted
per image (``ImageScore.unreadable_scripts``) and reported, so a page the OCR cannot read shows as such, not as plain
misses.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections import Counter
from collections.abc import Iterable

from screenmill.annotators.evaluate.ambiguity import Ambiguity
from screenmill.annotators.evaluate.text import names_part_of, normalize_text, ratio_at_least, text_similarity
from screenmill.annotators.evaluate.truth import CUT, ICON, LINE, TruthRecord
from screenmill.annotators.scripts import unreadable_scripts


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
        ambiguous: the ambiguous (instruction, screenshot) pairs of the labels scored
            (:func:`~screenmill.annotators.evaluate.ambiguity.ambiguous_labels`;
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

    @property
    def not_text(self) -> tuple[TruthRecord, ...]:
        """The truth elements left out of recall as out of OCR's reach, named by a label or not."""
        return (*(m.truth for m in self.not_text_matches), *self.not_text_missed)

    @property
    def not_text_cut(self) -> int:
        """How many of the elements left out of recall are text the screenshot's edge cuts through (:data:`CUT`)."""
        return sum(t.data_type == CUT for t in self.not_text)


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
        truth: the ground truth (e.g. from :func:`~screenmill.annotators.evaluate.truth.load_truth`).
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
                sim = ratio_at_least(nt, np_, min_ratio)
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
    whose image file was hashed by :func:`~screenmill.annotators.evaluate.truth.load_truth`, wherever the screenshot
    was ingested from. The label's ``element_text`` is the predicted text (its ``instruction`` when there is none).

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


#: The choices of ``--icons`` (:func:`icons_count`).
ICONS_CHOICES = ("auto", "count", "apart")


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
        split_of: image key → split (:func:`~screenmill.annotators.evaluate.truth.splits_from_manifest`); images in
            none are left out.

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
