"""``screenmill eval``: score a run's grounding labels against ScreenSpot-style ground truth.

Usage: ``screenmill eval --truth TRUTH.jsonl | --truth-from-dom OUT | --truth-from-a11y OUT [--dt YYYY-MM-DD]
[--run RUN_ID] [--annotator NAME] [--split-manifest PAGES.jsonl] [--icons auto|count|apart] [--min-recall R]
[--min-point-accuracy A] [--max-ambiguous N]``.

``--truth-from-dom`` takes the truth from the run's own DOM labels (rendered pages): the other annotators' labels of
the same screenshots (OCR, VLM) are scored against them, with a table by role. ``--truth-from-a11y`` does the same with
the accessibility labels of the run's desktop app screenshots (``run --apps``) and the title bars the window manager
drew on them (the screenshots' ``app.window_titles``: role ``window title``, printed apart as ``window titles: N,
found M``). ``--split-manifest`` (the ``pages.jsonl`` of ``infra/truthset/collect.py``) adds a summary and a table by
role for each split (dev / test) of the rendered pages.

Truth elements with no visible text (``data_type`` icon: image links, icon buttons, check boxes whose text is their
label's) and text the screenshot's top or bottom edge cuts through (``data_type`` cut: a line scrolled half out of
view) are out of OCR's reach. ``--icons auto`` (default) leaves them out of recall and point accuracy when any
label scored is OCR's, so the headline is visible-text recall, and prints them apart ("not text (out of OCR's
reach, not in recall): N elements, K named by a label; by role ..."); labels of other annotators (a VLM's, with
``--annotator vllm``) are scored with them. ``--icons count`` / ``--icons apart`` force either. Precision is the same
either way.

Reads ``OUT/grounding`` shards, matches labels to truth records by image content (SHA-256), prints a per-image
table with the count of ambiguous labels (an instruction naming disjoint boxes on one screenshot, among the labels
scored) and writes the full report to ``OUT/_eval/<name>.json``. With ``--min-*`` gates it exits 1 when quality is
below them (for CI).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json

from screenmill.annotators.evaluate.ambiguity import ambiguous_labels
from screenmill.annotators.evaluate.matching import (
    ICONS_CHOICES,
    evaluate,
    evaluate_by_split,
    icons_count,
    predictions_from_labels,
)
from screenmill.annotators.evaluate.reports import (
    format_by_element,
    format_split_details,
    format_table,
    format_window_titles,
    summary,
    to_dict,
)
from screenmill.annotators.evaluate.truth import (
    LABEL_TRUTH,
    load_truth,
    splits_from_manifest,
    truth_from_labels,
    window_title_truth,
)
from screenmill.pipelines import argcheck as check
from screenmill.schemas.tables import read_shards, report_path

#: A gate on a share: a number >= 0 (above 1 is a gate never met, which CI checks of the gate itself use).
_GATE = check.float_range(0)


def build_parser() -> argparse.ArgumentParser:
    p = check.ArgumentParser(prog="screenmill eval", description=__doc__.splitlines()[0])
    p.add_argument("output", metavar="OUT", type=check.output_tree, help="a `screenmill run` output root")
    truth = p.add_mutually_exclusive_group(required=True)
    truth.add_argument(
        "--truth", type=check.existing_file, help="ground-truth JSONL (img_filename, instruction, bbox [x,y,w,h])"
    )
    truth.add_argument("--truth-from-dom", action="store_true", help="the DOM labels of OUT's rendered pages")
    truth.add_argument(
        "--truth-from-a11y",
        action="store_true",
        help="the accessibility labels and window title bars of OUT's app screens",
    )
    p.add_argument("--bbox-format", choices=("xywh", "xyxy"), default="xywh")
    p.add_argument("--dt", type=check.date, default=None, help="only this date partition (default: all)")
    p.add_argument("--run", default=None, help="only labels of this run id")
    p.add_argument("--annotator", default=None, help="only labels of this annotator")
    p.add_argument("--min-ratio", type=check.SHARE, default=0.8, help="text similarity that counts as a match")
    p.add_argument(
        "--split-manifest",
        type=check.existing_file,
        default=None,
        help="pages.jsonl (path, split): also score each split alone",
    )
    p.add_argument(
        "--icons",
        choices=ICONS_CHOICES,
        default="auto",
        help="truth elements with no visible text: in recall (count), reported apart (apart), or apart when OCR"
        " labels are scored (auto, default)",
    )
    p.add_argument("--min-recall", type=_GATE, default=None, help="exit 1 when recall is below this (0..1)")
    p.add_argument("--min-point-accuracy", type=_GATE, default=None, help="exit 1 when point accuracy is below")
    p.add_argument(
        "--max-ambiguous", type=check.NON_NEGATIVE, default=None, help="exit 1 when more labels are ambiguous"
    )
    p.add_check("--truth", _check_truth)
    return p


def _check_truth(args: argparse.Namespace) -> None:
    """``--truth`` must be ScreenSpot-style truth, every line (``load_truth``'s ValueError names the bad one)."""
    if args.truth:
        load_truth(args.truth, bbox_format=args.bbox_format, hash_images=False)


@check.returns_code
def main(argv: list[str] | None = None) -> int:
    """Run the evaluation; return the process exit code (0 ok, 1 below a gate, 2 nothing to score)."""
    args = build_parser().parse_args(argv)
    rows = read_shards(args.output, "grounding", args.dt).to_pylist()
    source = "dom" if args.truth_from_dom else "a11y" if args.truth_from_a11y else None
    if source:
        truth = truth_from_labels(rows, source)
        rows = [r for r in rows if r["annotator"] != source]
        if not truth:
            print(f"screenmill eval: OUT has {LABEL_TRUTH[source].no_truth}")
            return 2
        if LABEL_TRUTH[source].window_titles:  # the title bars of the screens that have label truth
            shots = read_shards(args.output, "screenshots", args.dt).to_pylist()
            truth += window_title_truth(shots, {t.image for t in truth})
    else:
        truth = load_truth(args.truth, bbox_format=args.bbox_format)
    if args.run:
        rows = [r for r in rows if r["run_id"] == args.run]
    if args.annotator:
        rows = [r for r in rows if r["annotator"] == args.annotator]
    if not any(t.sha256 for t in truth):
        print("screenmill eval: no truth image was found next to the truth file, so no label can be matched")
        return 2
    icons = icons_count(rows, args.icons)
    report = evaluate(truth, predictions_from_labels(rows), min_ratio=args.min_ratio, icons=icons)
    report = dataclasses.replace(report, ambiguous=tuple(ambiguous_labels(rows)))
    print(format_table(report))
    if source:
        print(format_by_element(report))
        if LABEL_TRUTH[source].window_titles:
            print(format_window_titles(report))
    splits = {}
    if args.split_manifest:
        shots = read_shards(args.output, "screenshots", args.dt).to_pylist()
        split_of = splits_from_manifest(args.split_manifest, shots)
        splits = evaluate_by_split(
            truth, predictions_from_labels(rows), split_of, min_ratio=args.min_ratio, icons=icons
        )
        for name, rep in splits.items():
            n = len({k for k, v in split_of.items() if v == name})
            print(f"\nsplit {name}: {n} screenshots, {summary(rep)}")
            print(format_split_details(rep))
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    path = report_path(args.output, "evaluate", f"eval-{args.run or 'all'}-{stamp}.json")
    body = {"truth": args.truth or source, "labels": len(rows), "run": args.run, "annotator": args.annotator}
    body["icons"] = "count" if icons else "apart"
    body.update(to_dict(report, details=True))
    body["splits"] = {name: to_dict(rep) for name, rep in splits.items()}
    from apache_beam.io.filesystems import FileSystems  # here: a bad command line is answered without Beam

    with FileSystems.create(path) as f:
        f.write(json.dumps(body, indent=2).encode("utf-8"))
    print(f"report: {path}")
    failed = []
    if args.min_recall is not None and (report.recall or 0.0) < args.min_recall:
        failed.append(f"recall {report.recall} < {args.min_recall}")
    if args.min_point_accuracy is not None and (report.point_accuracy or 0.0) < args.min_point_accuracy:
        failed.append(f"point accuracy {report.point_accuracy} < {args.min_point_accuracy}")
    if args.max_ambiguous is not None and report.ambiguous_labels > args.max_ambiguous:
        failed.append(f"ambiguous labels {report.ambiguous_labels} > {args.max_ambiguous}")
    for msg in failed:
        print(f"screenmill eval: below gate: {msg}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
