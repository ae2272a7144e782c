"""The ambiguity lint of grounding labels (no truth needed).

An (instruction, screenshot) pair is ambiguous when its labels name two or more disjoint boxes (no common area;
instructions compared case-insensitively, whitespace collapsed). No model can answer such a pair right for every
label, so a benchmark made of it caps every score below 1. ``screenmill eval`` puts the pairs of the labels it scores
on the report (:attr:`screenmill.annotators.evaluate.matching.EvalReport.ambiguous`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable


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
