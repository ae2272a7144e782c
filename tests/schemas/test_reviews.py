"""Which review of a label counts (:mod:`screenmill.schemas.reviews`): latest ``reviewed_at``, then annotation id."""

from __future__ import annotations

import datetime as _dt

from screenmill.schemas.records import ReviewedLabel
from screenmill.schemas.reviews import latest_reviews, review_order

from tests.annotators.test_formats import review_row


def test_latest_review_wins_by_time_then_annotation_id():
    rows = [
        review_row("L1", "reject", minutes=5, annotation_id=1),
        review_row("L1", "accept", minutes=1, annotation_id=9),
        review_row("L2", "accept", minutes=0, annotation_id=3),
        review_row("L2", "fix", minutes=0, annotation_id=4),
    ]
    latest = latest_reviews(rows)
    assert latest["L1"]["verdict"] == "reject"
    assert latest["L2"]["verdict"] == "fix"


def test_a_tie_on_time_is_decided_by_annotation_id_in_any_order():
    """Two reviews of one label at the same instant: the higher annotation id counts, however the rows come in,
    for table rows and records alike (agreement figures and exports pick the same review)."""
    rows = [review_row("L", "reject", annotation_id=7), review_row("L", "accept", annotation_id=12)]
    assert latest_reviews(rows)["L"]["verdict"] == "accept"
    assert latest_reviews(reversed(rows))["L"]["verdict"] == "accept"
    records = [ReviewedLabel.from_row(r) for r in rows]
    assert latest_reviews(records)["L"].annotation_id == 12
    assert latest_reviews(reversed(records))["L"].annotation_id == 12
    assert review_order(rows[1]) == review_order(records[1]) == (rows[1]["reviewed_at"], 12)


def test_a_later_time_beats_a_higher_annotation_id():
    late = review_row("L", "fix", minutes=3, annotation_id=1)
    early = review_row("L", "accept", minutes=2, annotation_id=99)
    assert latest_reviews([late, early])["L"] is late and latest_reviews([early, late])["L"] is late
    assert late["reviewed_at"] - early["reviewed_at"] == _dt.timedelta(minutes=1)
