"""What the glyph-noise rule does to a run's OCR labels, per split, without running OCR again.

Takes a ``screenmill run --pages ... --annotator ocr`` output made *before* the rule (OCR revision < 3), applies
:func:`screenmill.annotators.ocr_producer.glyph_noise` to each screenshot's OCR labels (text, box, confidence: what the
rule sees when elements become labels) and scores both label sets against the DOM truth of the same screenshots::

    .venv/bin/python infra/truthset/glyph_effect.py OUT /tmp/truthset/pages.jsonl --split dev

prints, for the split, the labels the rule removes (with their texts) and recall / point accuracy / precision before
and after. Give ``--split test`` only to report a figure, never to tune the rule on it.
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict

from screenmill.annotators.evaluate.matching import evaluate_by_split, predictions_from_labels
from screenmill.annotators.evaluate.reports import summary
from screenmill.annotators.evaluate.truth import splits_from_manifest, truth_from_labels
from screenmill.annotators.ocr_producer import glyph_noise
from screenmill.schemas.tables import read_shards


def drop_glyph_rows(rows: list[dict], min_confidence: float = 0.9) -> list[dict]:
    """The OCR rows the glyph rule keeps, judged per screenshot as :func:`elements_to_labels` judges elements."""
    by_shot: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_shot[r["screenshot_id"]].append(r)
    kept = []
    for members in by_shot.values():
        noise = glyph_noise(
            [r.get("element_text") or "" for r in members],
            [(r["x0"], r["y0"], r["x1"], r["y1"]) for r in members],
            [r["confidence"] if r["confidence"] is not None else 1.0 for r in members],
            min_confidence,
        )
        kept += [r for i, r in enumerate(members) if i not in noise]
    return kept


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("output", help="run output root (rendered pages, OCR labels before the glyph rule)")
    p.add_argument("manifest", help="the pages.jsonl of infra/truthset/collect.py")
    p.add_argument("--split", default="dev", help="the split to report (default dev)")
    args = p.parse_args(argv)
    rows = read_shards(args.output, "grounding").to_pylist()
    split_of = splits_from_manifest(args.manifest, read_shards(args.output, "screenshots").to_pylist())
    keep = {k for k, v in split_of.items() if v == args.split}
    truth = truth_from_labels(r for r in rows if r["screenshot_id"] in keep)
    ocr = [r for r in rows if r["annotator"].startswith("ocr") and r["screenshot_id"] in keep]
    after = drop_glyph_rows(ocr)
    kept_ids = {r["label_id"] for r in after}
    removed = [r for r in ocr if r["label_id"] not in kept_ids]
    print(f"split {args.split}: {len(keep)} screenshots, {len(ocr)} OCR labels, the rule removes {len(removed)}")
    print("removed:", ", ".join(f"{t!r}×{n}" for t, n in Counter(r["element_text"] for r in removed).most_common()))
    for name, labels in (("before", ocr), ("after", after)):
        (rep,) = evaluate_by_split(truth, predictions_from_labels(labels), {k: args.split for k in keep}).values()
        print(f"{name}: {summary(rep)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
