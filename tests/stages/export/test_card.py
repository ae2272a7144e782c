"""The card's review coverage picks the latest review of a label by the house rule (screenmill.schemas.reviews)."""

from __future__ import annotations

import datetime as dt
import io

import pyarrow as pa
import pyarrow.parquet as pq
from screenmill.schemas.reviews import latest_reviews
from screenmill.stages.export.card import card_facts
from screenmill.stages.export.repo import INDEX_PATH, INDEX_SCHEMA, STATE_FORMAT, STATE_PATH, load_previous

T0 = dt.datetime(2026, 11, 22, 8, 0, tzinfo=dt.UTC)


def _label(key: str) -> dict:
    return {"config": "grounding", "key": key, "split": "train", "file": "data/grounding/train-00001-00000.parquet"}


def _review(label: str, annotation_id: int, verdict: str, reviewed_at: dt.datetime | None) -> dict:
    return {
        "config": "reviewed",
        "key": f'["{label}",{annotation_id}]',
        "split": "train",
        "file": "data/reviewed/train-00001-00000.parquet",
        "label_id": label,
        "verdict": verdict,
        "annotation_id": annotation_id,
        "reviewed_at": reviewed_at,
    }


def test_a_later_review_with_a_smaller_annotation_id_decides_the_verdict():
    reviews = [
        _review("a", 9, "reject", T0),  # higher annotation_id, reviewed first
        _review("a", 5, "accept", T0 + dt.timedelta(hours=1)),  # lower annotation_id, reviewed last
        _review("b", 3, "fix", T0),
    ]
    index = pa.Table.from_pylist([_label("a"), _label("b"), _label("c"), *reviews], schema=INDEX_SCHEMA)
    cov = card_facts(index)["review_coverage"]
    assert {k: r["verdict"] for k, r in latest_reviews(reviews).items()} == {"a": "accept", "b": "fix"}
    assert cov == {"labels": 3, "reviewed": 2, "share": round(2 / 3, 4), "by_verdict": {"accept": 1, "fix": 1}}


def test_an_index_written_without_reviewed_at_loads_and_orders_by_annotation_id():
    old_schema = pa.schema([f for f in INDEX_SCHEMA if f.name != "reviewed_at"])
    rows = [_label("a"), _review("a", 9, "reject", None), _review("a", 5, "accept", None)]
    old = pa.Table.from_pylist([{k: v for k, v in r.items() if k != "reviewed_at"} for r in rows], schema=old_schema)
    buf = io.BytesIO()
    pq.write_table(old, buf)
    files = {INDEX_PATH: buf.getvalue(), STATE_PATH: b'{"format": %d}' % STATE_FORMAT}
    index = load_previous(files, files.__getitem__).index
    assert index.schema == INDEX_SCHEMA and index.column("reviewed_at").null_count == 3
    assert card_facts(index)["review_coverage"]["by_verdict"] == {"reject": 1}

    # A review exported later (with its time) counts as later than the reviews the old index holds.
    index = pa.concat_tables([index, pa.Table.from_pylist([_review("a", 2, "fix", T0)], schema=INDEX_SCHEMA)])
    assert card_facts(index)["review_coverage"]["by_verdict"] == {"fix": 1}
