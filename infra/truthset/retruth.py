"""Score one run's OCR labels against the DOM truth of another run of the same pages, per split.

The DOM truth changes when the DOM extraction does (``annotators/dom/extract.py``), the OCR labels when the OCR
does; OCR is the slow part (tens of minutes for the truth set on 2 cores), rendering is not. So a changed truth is
measured by rendering again without OCR (``screenmill run --pages ... --annotator none``) and scoring the OCR labels of
an earlier run on the screenshots both runs share (rendering is deterministic for static pages: same PNG bytes, same
``screenshot_id``)::

    .venv/bin/python infra/truthset/retruth.py OCR_OUT TRUTH_OUT /work/ts/pages.jsonl --split dev [--show-none 40]

prints, for the split, the shared screenshots, recall / point accuracy / precision and the table by role; with
``--wrong-script`` the OCR labels the wrong-script rule drops (OCR revision 5,
:func:`screenmill.annotators.scripts.is_wrong_script_reading`) are left out first. ``--show-none N`` lists N texts of
labels whose point lies in no truth element (dev only: never look at test labels one by one). Truth elements with no
visible text are left out of recall (visible-text recall, as ``screenmill eval`` does for OCR labels) and reported
apart; ``--icons count`` puts them back (the figures before 2026-11-27's visible-text recall).
"""

from __future__ import annotations

import argparse
import random

from screenmill.annotators.evaluate.matching import (
    ICONS_CHOICES,
    evaluate,
    icons_count,
    point_in_box,
    predictions_from_labels,
)
from screenmill.annotators.evaluate.reports import format_split_details, summary
from screenmill.annotators.evaluate.truth import splits_from_manifest, truth_from_labels
from screenmill.annotators.scripts import is_wrong_script_reading
from screenmill.schemas.tables import read_shards


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ocr_output", help="run output root holding the OCR labels")
    p.add_argument("truth_output", help="run output root holding the DOM labels (the truth)")
    p.add_argument("manifest", help="the pages.jsonl of infra/truthset/collect.py")
    p.add_argument("--split", default="dev", help="the split to report (default dev)")
    p.add_argument("--wrong-script", action="store_true", help="leave out the labels OCR revision 5 drops")
    p.add_argument("--icons", choices=ICONS_CHOICES, default="auto", help="as `screenmill eval --icons`")
    p.add_argument("--show-none", type=int, default=0, help="list this many labels in no truth element (dev only)")
    args = p.parse_args(argv)
    if args.show_none and args.split != "dev":
        p.error("--show-none is for the dev split only")
    truth_rows = read_shards(args.truth_output, "grounding").to_pylist()
    split_of = splits_from_manifest(args.manifest, read_shards(args.truth_output, "screenshots").to_pylist())
    ocr = [r for r in read_shards(args.ocr_output, "grounding").to_pylist() if r["annotator"].startswith("ocr")]
    shared = {r["screenshot_id"] for r in ocr} & {k for k, v in split_of.items() if v == args.split}
    truth = truth_from_labels(r for r in truth_rows if r["screenshot_id"] in shared)
    labels = [r for r in ocr if r["screenshot_id"] in shared]
    if args.wrong_script:
        labels = [r for r in labels if not is_wrong_script_reading(r.get("element_text") or "")]
    icons = icons_count(labels, args.icons)
    rep = evaluate(truth, predictions_from_labels(labels), icons=icons)
    n_split = sum(v == args.split for v in split_of.values())
    print(f"split {args.split}: {len(shared)} of {n_split} screenshots shared, {summary(rep)}")
    print(format_split_details(rep))
    if args.show_none:
        by_shot: dict[str, list] = {}
        for t in truth:
            by_shot.setdefault(t.image, []).append(t.box)
        none = [
            p
            for p in predictions_from_labels(labels)
            if not any(point_in_box(p.point, b) for b in by_shot.get(p.image, ()))
        ]
        for p in random.Random(0).sample(none, min(args.show_none, len(none))):
            print(f"  {p.image[:8]} ({p.point[0]:.0f},{p.point[1]:.0f}) {p.text!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
