"""Which review of a label counts: the one rule that review agreement figures, converters and exports share."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

R = TypeVar("R")


def _field(review: Any, name: str) -> Any:
    return review[name] if isinstance(review, Mapping) else getattr(review, name)


def review_order(review: Any) -> tuple:
    """The sort key under which the last review of a label is the one that counts: ``(reviewed_at, annotation_id)``.

    The latest ``reviewed_at`` wins; two reviews at the same time are told apart by the higher ``annotation_id``
    (Label Studio's id of the annotation, unique and stable across pulls), so the choice never depends on the order
    the rows were read in.
    """
    return (_field(review, "reviewed_at"), _field(review, "annotation_id"))


def latest_reviews(reviews: Iterable[R]) -> dict[str, R]:
    """The latest review of each label, by :func:`review_order`.

    Args:
        reviews: :class:`~screenmill.schemas.records.ReviewedLabel` records or ``reviewed`` table rows (mappings).

    Returns:
        ``{label_id: its latest review}``; of two reviews equal under :func:`review_order`, the first seen.
    """
    latest: dict[str, R] = {}
    for review in reviews:
        label_id = _field(review, "label_id")
        seen = latest.get(label_id)
        if seen is None or review_order(review) > review_order(seen):
            latest[label_id] = review
    return latest
