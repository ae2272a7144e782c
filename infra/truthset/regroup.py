"""Score a change of the OCR grouping or labelling on the truth set in a minute, without reading the text again.

OCR's detection and recognition take most of its time (minutes for the truth set on 2 cores); the grouping
(:func:`screenmill.annotators.ocr.group_elements`) and the labels
(:func:`screenmill.annotators.ocr_producer.elements_to_labels`) take seconds. So the ungrouped elements of each
screenshot are read once and cached, and every later score groups and labels them again with the code as it stands::

    screenmill run --pages /work/ts --viewports 1280x800,390x844@3m --annotator none --output /work/truth
    .venv/bin/python infra/truthset/regroup.py dump /work/truth /work/ts/pages.jsonl /work/cache.pkl
    .venv/bin/python infra/truthset/regroup.py score /work/truth /work/ts/pages.jsonl /work/cache.pkl --split dev

``dump`` reads the screenshots of a run (rendered with any annotator: only its ``screenshots`` table and the
image files are used) with ``OcrConfig(group_lines=False)`` and pickles the elements per screenshot, with the
annotator version they were read by. ``score`` groups and labels them as ``screenmill run`` would (the producer's
defaults), scores the labels against the DOM truth of the same run
(:func:`screenmill.annotators.evaluate.truth.truth_from_labels`), and prints the split's summary and table by role. A
change of the splitting inside :class:`screenmill.annotators.ocr.OcrAnnotator` (before grouping) needs a new ``dump``;
``score`` refuses a cache of another annotator version unless told.

``written`` scores the labels another run wrote on the same screenshot files (an older tree's annotator: where a
change started) with today's evaluator and truth::

    git worktree add /tmp/old <commit> && (cd /tmp/old && python -m screenmill.pipelines.cli run --input SHOTS --output
    OLD) .venv/bin/python infra/truthset/regroup.py written /work/truth /work/ts/pages.jsonl OLD --split test --kinds

``--show imprecise|none|missed N`` lists N labels (or missed truth texts) of the dev split for tuning. The test split
is only ever scored: the option is refused for it (never look at test labels one by one). ``--kinds`` counts the
imprecise labels by kind (a fragment of which role, more than a line, a misreading...), counts only, for any split.
"""

from __future__ import annotations

import argparse
import ast
import os
import pickle
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SHOW_CHOICES = ("imprecise", "none", "missed")
#: How often (screenshots) a dump saves what it has read so far.
SAVE_EVERY = 20


def _shots(run_output: str, manifest: str, splits: set[str]) -> tuple[list, dict[str, str]]:
    from screenmill.annotators.evaluate.truth import splits_from_manifest
    from screenmill.schemas.records import Screenshot
    from screenmill.schemas.tables import read_shards

    rows = read_shards(run_output, "screenshots").to_pylist()
    split_of = splits_from_manifest(manifest, rows)
    seen: set[str] = set()
    shots = []
    for row in rows:
        sid = row["screenshot_id"]
        if split_of.get(sid) in splits and sid not in seen:
            seen.add(sid)
            shots.append(Screenshot.from_row(row))
    return shots, split_of


def _pixels(shot):
    import numpy as np
    from screenmill.schemas.images import ImageLimits
    from screenmill.schemas.verified import read_screenshot

    return np.asarray(read_screenshot(shot, ImageLimits()))


def dump(run_output: str, manifest: str, cache: str, splits: set[str], options: dict | None = None) -> int:
    """Read every screenshot of ``splits`` ungrouped and pickle ``{"version", "options", "elements": {id:
    [TextElement]}}``; ``options`` are reading options of ``OcrConfig`` (``{"det_text_height": 12}``) to measure.

    Resumable: what an earlier dump of the same OCR version and options read (``cache``, or the ``cache.partial`` an
    interrupted one left, written every :data:`SAVE_EVERY` screenshots) is kept and only the rest is read.
    """
    from screenmill.annotators.ocr import OcrAnnotator
    from screenmill.annotators.ocr_config import OcrConfig

    options = dict(options or {})
    shots, _ = _shots(run_output, manifest, splits)
    elements: dict = {}
    for old in (cache, cache + ".partial"):
        if os.path.exists(old):
            with open(old, "rb") as f:
                data = pickle.load(f)
            if data.get("version") == OcrAnnotator.VERSION and data.get("options", {}) == options:
                elements.update(data["elements"])
    todo = [s for s in shots if s.screenshot_id not in elements]
    print(f"{len(shots) - len(todo)} of {len(shots)} screenshots already read", file=sys.stderr)
    annotator = OcrAnnotator(OcrConfig(**options, group_lines=False)) if todo else None

    def save(path: str) -> None:
        with open(path + ".tmp", "wb") as f:
            pickle.dump({"version": OcrAnnotator.VERSION, "options": options, "elements": elements}, f)
        os.replace(path + ".tmp", path)

    start = time.monotonic()
    for i, shot in enumerate(todo, 1):
        elements[shot.screenshot_id] = annotator.read(_pixels(shot)).elements
        print(f"\r{i}/{len(todo)} screenshots read", end="", file=sys.stderr, flush=True)
        if i % SAVE_EVERY == 0:
            save(cache + ".partial")
    print(f"\n{len(todo)} screenshots in {time.monotonic() - start:.0f} s", file=sys.stderr)
    save(cache)
    if os.path.exists(cache + ".partial"):
        os.remove(cache + ".partial")
    return 0


def labels_of(shots, cached: dict, grouping: str = "model") -> list[dict]:
    """The grounding rows ``screenmill run --ocr-join GROUPING`` would write for ``shots`` from their cached ungrouped
    elements (``grouping``: ``model``, the default, or ``rules``)."""
    from screenmill.annotators.ocr_config import OcrConfig
    from screenmill.annotators.ocr_snapshot import labels_of as shot_labels

    config = OcrConfig(grouping=grouping)
    return [row for shot in shots for row in shot_labels(shot, _pixels(shot), cached[shot.screenshot_id], config)]


def _containing(truth) -> Callable:
    """``prediction`` → the truth elements of its screenshot whose box holds its point."""
    from screenmill.annotators.evaluate.matching import point_in_box

    by_shot: dict[str, list] = {}
    for t in truth:
        by_shot.setdefault(t.image, []).append(t)
    return lambda p: [t for t in by_shot.get(p.image, ()) if point_in_box(p.point, t.box)]


KINDS = ("in no truth element", "a fragment of a {role}", "more than the line of painted text it lies on",
         "the text of its element misread", "other")  # fmt: skip


#: An element whose box is this many times as high as a label's, or more, wraps onto more lines than the label's.
WRAPPED_RATIO = 1.6


def imprecise_kinds(truth, predictions) -> dict[str, int]:
    """Counts of the imprecise predictions (point in no truth element of a matching text) by kind, and how many of them
    are one word: counts only, so they may be printed for the test split. Kinds, by the smallest truth element the
    point lies in: none; a fragment (a run of the element's words, shorter than it); more than a line (a ``line``
    element whose text the prediction holds, with more); a misreading (text similarity 0.5-0.8); other. Of those in
    no element, how many name a text that repeats on the screenshot (named by its place among the repeats: the DOM
    names no repeat beyond the tenth, so such a text may have no truth element). Of the fragments, how many are of an
    element that wraps (its box at least :data:`WRAPPED_RATIO` times as high as the label's: one of its lines, read
    alone), and of those, how many lie on the element's first line or a later one, at its left edge or right of it."""
    from screenmill.annotators.evaluate.matching import names_element
    from screenmill.annotators.evaluate.text import names_part_of, normalize_text, text_similarity
    from screenmill.annotators.evaluate.truth import LINE
    from screenmill.annotators.ocr_producer import repeat_key

    containing = _containing(truth)
    counts: dict[str, int] = {}
    one_word = repeated = 0
    places: dict[tuple[str, str], int] = {}  # (first / later line, at / right of the left edge) → wrapped fragments
    shown: dict[tuple[str, str], int] = {}

    def key(p) -> tuple[str, str]:  # texts compared as the OCR producer compares them to find repeats
        return p.image, repeat_key(p.text)

    for p in predictions:
        shown[key(p)] = shown.get(key(p), 0) + 1
    for p in predictions:
        inside = containing(p)
        if any(names_element(p, t) for t in inside):
            continue
        one_word += len(normalize_text(p.text).split()) == 1
        if not inside:
            kind = KINDS[0]
            repeated += shown[key(p)] > 1
        else:
            t = min(inside, key=lambda t: (t.box[2] - t.box[0]) * (t.box[3] - t.box[1]))
            said, whole = normalize_text(p.text), normalize_text(t.text)
            if len(said) < len(whole) and names_part_of(p.text, t.text):
                kind = KINDS[1].format(role=t.element or "text")
                if p.box is not None and t.box[3] - t.box[1] >= WRAPPED_RATIO * (p.box[3] - p.box[1]):
                    h = p.box[3] - p.box[1]
                    place = "first" if p.box[1] - t.box[1] < 0.5 * h else "later"
                    edge = "at" if abs(p.box[0] - t.box[0]) < 0.5 * h else "right of"
                    places[place, edge] = places.get((place, edge), 0) + 1
            elif t.data_type == LINE and whole and whole in said:
                kind = KINDS[2]
            elif text_similarity(p.text, t.text) >= 0.5:
                kind = KINDS[3]
            else:
                kind = KINDS[4]
        counts[kind] = counts.get(kind, 0) + 1
    counts["(of which one word)"] = one_word
    counts["(in no truth element, named by position)"] = repeated
    counts["(fragments of an element that wraps)"] = sum(places.values())
    for (place, edge), v in sorted(places.items()):
        counts[f"(wrapped: {place} line, {edge} the element's left edge)"] = v
    return counts


def format_kinds(counts: dict[str, int]) -> str:
    """The kind counts as lines, most first, the one-word and wrapped-fragment counts last."""
    rows = sorted(((k, v) for k, v in counts.items() if not k.startswith("(")), key=lambda kv: (-kv[1], kv[0]))
    total = sum(v for _, v in rows)
    lines = [f"imprecise labels by kind: {total}"] + [f"  {v:4d}  {k}" for k, v in rows]
    return "\n".join(
        [
            *lines,
            f"  ({counts.get('(of which one word)', 0)} of them are one word; "
            f"{counts.get('(in no truth element, named by position)', 0)} of those in no truth element are a text "
            "that repeats, named by its place)",
            f"  ({counts.get('(fragments of an element that wraps)', 0)} of the fragments are of an element that "
            "wraps onto more lines)",
            *(
                f"    {v:4d}  {k.removeprefix('(wrapped: ').removesuffix(')')}"
                for k, v in counts.items()
                if k.startswith("(wrapped: ")
            ),
        ]
    )


def score(
    run_output: str,
    manifest: str,
    cache: str,
    split: str,
    show: str | None,
    n: int,
    any_version: bool,
    kinds: bool = False,
    grouping: str = "model",
) -> int:
    """Group, label and score one split from the cache; print the summary, the table by role and ``show``."""
    from screenmill.annotators.evaluate.matching import names_element
    from screenmill.annotators.evaluate.truth import truth_from_labels
    from screenmill.annotators.ocr import OcrAnnotator
    from screenmill.schemas.tables import read_shards

    with open(cache, "rb") as f:
        data = pickle.load(f)
    if data["version"] != OcrAnnotator.VERSION and not any_version:
        raise SystemExit(
            f"{cache} was read by OCR {data['version']}, this tree is {OcrAnnotator.VERSION}: dump again, or pass "
            "--any-version when the change is in the grouping or labels alone"
        )
    shots, _ = _shots(run_output, manifest, {split})
    shots = [s for s in shots if s.screenshot_id in data["elements"]]
    if not shots:
        raise SystemExit(f"no screenshot of split {split!r} is in {cache}")
    ids = {s.screenshot_id for s in shots}
    truth = truth_from_labels(r for r in read_shards(run_output, "grounding").to_pylist() if r["screenshot_id"] in ids)
    labels = labels_of(shots, data["elements"], grouping)
    report, predictions = _report(split, len(shots), truth, labels, kinds)
    if show:
        picked = []
        if show == "missed":
            picked = [f"{t.image[:8]} {t.element or '-'} {t.text!r}" for t in report.missed]
        else:
            containing = _containing(truth)
            for p in predictions:
                inside = containing(p)
                if show == "none" and not inside:
                    picked.append(f"{p.image[:8]} ({p.point[0]:.0f},{p.point[1]:.0f}) {p.text!r}")
                elif show == "imprecise" and inside and not any(names_element(p, t) for t in inside):
                    names = " | ".join(f"{t.element}:{t.text[:60]!r}" for t in inside)
                    picked.append(f"{p.image[:8]} ({p.point[0]:.0f},{p.point[1]:.0f}) {p.text!r} in {names}")
        print(f"{len(picked)} {show}:")
        for line in random.Random(0).sample(picked, min(n, len(picked))):
            print(" ", line)
    return 0


def _report(split: str, n_shots: int, truth, labels: list[dict], kinds: bool):
    """Score ``labels`` (grounding rows) against ``truth``; print the split's summary, its table by role and (with
    ``kinds``) its imprecise labels by kind. Returns the report and the predictions."""
    import dataclasses

    from screenmill.annotators.evaluate.ambiguity import ambiguous_labels
    from screenmill.annotators.evaluate.matching import evaluate, predictions_from_labels
    from screenmill.annotators.evaluate.reports import format_split_details, summary

    predictions = predictions_from_labels(labels)
    report = evaluate(truth, predictions, icons=False)
    report = dataclasses.replace(report, ambiguous=tuple(ambiguous_labels(labels)))
    print(f"split {split}: {n_shots} screenshots, {summary(report)}, ambiguous labels {report.ambiguous_labels}")
    print(format_split_details(report))
    if kinds:
        print(format_kinds(imprecise_kinds(truth, predictions)))
    return report, predictions


def score_written(run_output: str, manifest: str, labels_run: str, split: str, kinds: bool = False) -> int:
    """Score the OCR labels another run wrote (``labels_run``: another tree's annotator, any OCR revision or schema
    version, run on the same screenshot files) for one split of ``run_output``'s screenshots, against its DOM truth:
    where a change started, measured by today's evaluator and truth. Aggregates, roles and kinds only, as ``score``.

    Raises:
        SystemExit: ``labels_run`` has no OCR label for any screenshot of the split.
    """
    import pyarrow.parquet as pq
    from screenmill.annotators.evaluate.truth import truth_from_labels
    from screenmill.schemas.tables import read_shards

    shots, _ = _shots(run_output, manifest, {split})
    ids = {s.screenshot_id for s in shots}
    labels = [
        r
        for f in sorted(Path(labels_run, "grounding").rglob("*.parquet"))
        for r in pq.read_table(f).to_pylist()  # one file at a time: an older run's schema may differ
        if r["screenshot_id"] in ids and str(r.get("annotator", "")).startswith("ocr")
    ]
    labelled = {r["screenshot_id"] for r in labels}
    if not labelled:
        raise SystemExit(f"{labels_run} has no OCR label for a screenshot of split {split!r}")
    truth = truth_from_labels(r for r in read_shards(run_output, "grounding").to_pylist() if r["screenshot_id"] in ids)
    print(f"{len(labels)} labels on {len(labelled)} of the split's {len(ids)} screenshots")
    _report(split, len(ids), truth, labels, kinds)
    return 0


def main(argv: list[str] | None = None) -> int:
    from screenmill.annotators.ocr_config import GROUPINGS, OcrConfig

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="read the screenshots ungrouped and cache the elements")
    s = sub.add_parser("score", help="group, label and score one split from the cache")
    for q in (d, s):
        q.add_argument("run_output", help="a run's output root (screenshots table, DOM labels for score)")
        q.add_argument("manifest", help="the pages.jsonl of infra/truthset/collect.py")
        q.add_argument("cache", help="the pickle file")
    d.add_argument("--splits", default="dev,test", help="comma-separated splits to read (default dev,test)")
    d.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE", help="an OcrConfig reading option to measure"
    )
    s.add_argument("--split", default="dev", help="the split to score (default dev)")
    s.add_argument("--show", choices=SHOW_CHOICES, help="list labels or misses of the dev split")
    s.add_argument("-n", type=int, default=40, help="how many to list (default 40)")
    s.add_argument("--any-version", action="store_true", help="score a cache of another OCR version")
    s.add_argument("--kinds", action="store_true", help="count the imprecise labels by kind (counts only: any split)")
    s.add_argument("--ocr-join", choices=GROUPINGS, default=GROUPINGS[0], help="as screenmill run's")
    w = sub.add_parser("written", help="score the OCR labels another run wrote for one split's screenshots")
    w.add_argument("run_output", help="the truth set's run output root (screenshots table, DOM labels)")
    w.add_argument("manifest", help="the pages.jsonl of infra/truthset/collect.py")
    w.add_argument("labels_run", help="the output root of a run on the same screenshot files (its grounding table)")
    w.add_argument("--split", default="test", help="the split to score (default test)")
    w.add_argument("--kinds", action="store_true", help="count the imprecise labels by kind")
    args = p.parse_args(argv)
    if args.command == "dump":
        options = {}
        for item in args.option:
            name, sep, value = item.partition("=")
            if not sep:
                p.error(f"--option {item!r}: not NAME=VALUE")
            if name == "group_lines":
                p.error("--option group_lines: a dump reads ungrouped (the grouping is what score measures)")
            try:
                options[name] = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                p.error(f"--option {item!r}: the value is no Python literal")
        try:
            OcrConfig(**options)
        except (TypeError, ValueError) as e:
            p.error(f"--option: {e}")
        return dump(args.run_output, args.manifest, args.cache, set(args.splits.split(",")), options)
    if args.command == "written":
        return score_written(args.run_output, args.manifest, args.labels_run, args.split, args.kinds)
    if args.show and args.split != "dev":
        p.error("--show is for the dev split only: the test split is scored, never read label by label")
    return score(
        args.run_output,
        args.manifest,
        args.cache,
        args.split,
        args.show,
        args.n,
        args.any_version,
        args.kinds,
        args.ocr_join,
    )


if __name__ == "__main__":
    raise SystemExit(main())
