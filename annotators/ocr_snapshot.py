"""A small committed snapshot of OCR pieces and DOM truth, grouped and scored in seconds (OCR quality in CI).

The OCR's detection and recognition take seconds a screenshot; the grouping (:func:`screenmill.annotators.ocr.
group_elements`) and the labels (:func:`screenmill.annotators.ocr_producer.elements_to_labels`) take milliseconds. A
snapshot keeps, for a few dozen rendered screenshots, what the grouping starts from (the ungrouped pieces of
``OcrConfig(group_lines=False)``, the screenshot's pixels as lossless WebP, which the colour, backdrop and underline
cues read) and the DOM truth of the same render
(:func:`screenmill.annotators.evaluate.truth.truth_from_labels`), so the test suite can group and score them with the
code as it stands, with no ONNX run.

Layout of a snapshot folder::

    snapshot.json.gz   {"ocr_version", "shots": [{"id", "site", "page", "split", "licence", "width", "height",
                         "image", "pieces": [[text, x0, y0, x1, y1, confidence]],
                         "truth": [[text, x0, y0, x1, y1, element, data_type]]}]}
    images/<id>.webp   the screenshot, lossless
    README.md          where the pages come from, their licence, how to rebuild

``build`` makes one from a truth-set render and its ``regroup.py dump`` cache (``infra/truthset/BASELINE.md``), for
the sites given (by default the project's own pages: ``screenmill-truthset``, ``screenmill-samples``)::

    python -m screenmill.annotators.ocr_snapshot build /work/truth /work/ts/pages.jsonl /work/cache.pkl OUT

``score`` groups and scores one (the suite's snapshot by default), per split. ``reread`` reads a snapshot's own
images again with the annotator as it stands (after a change of the reading: a new ``OcrAnnotator.VERSION``) and
rewrites its pieces and OCR version, its truth and images as they are (minutes; no render, no dump)::

    python -m screenmill.annotators.ocr_snapshot reread tests/annotators/ocr_snapshot
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import gzip
import json
import pickle
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

#: The snapshot the test suite scores (tests/annotators/ocr_snapshot/).
DEFAULT_SNAPSHOT = Path(__file__).resolve().parents[1] / "tests" / "annotators" / "ocr_snapshot"
#: The sites a snapshot takes by default: pages the project wrote itself (Apache-2.0, like the project).
DEFAULT_SITES = ("screenmill-truthset", "screenmill-samples")
#: Truth texts up to this many characters are the grounding targets (the issue's recall figure); longer ones apart.
SHORT_TEXT = 60


@dataclasses.dataclass(frozen=True, slots=True)
class SnapshotShot:
    """One screenshot of a snapshot: its provenance, pixels, ungrouped OCR pieces and DOM truth."""

    id: str
    site: str
    page: str
    split: str
    width: int
    height: int
    image: Path
    pieces: tuple  # of screenmill.annotators.ocr.TextElement
    truth: tuple  # of screenmill.annotators.evaluate.truth.TruthRecord

    def pixels(self):
        """The screenshot as an RGB ``uint8`` array."""
        import numpy as np
        from PIL import Image

        with Image.open(self.image) as im:
            return np.asarray(im.convert("RGB"))

    def screenshot(self):
        """A :class:`screenmill.schemas.records.Screenshot` of this shot, as the OCR producer stamps labels with."""
        from screenmill.schemas.records import Screenshot

        return Screenshot(
            screenshot_id=self.id,
            source_uri=str(self.image),
            width=self.width,
            height=self.height,
            format="webp",
            source_mode="RGB",
            exif_orientation=1,
            byte_size=0,
            ingest_time=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
            run_id="snapshot",
        )


def read_snapshot(folder: str | Path = DEFAULT_SNAPSHOT) -> tuple[str, list[SnapshotShot]]:
    """The OCR version the snapshot's pieces were read by, and its shots.

    Raises:
        OSError: the folder has no readable ``snapshot.json.gz``. ValueError / KeyError: it is not a snapshot.
    """
    from screenmill.annotators.evaluate.truth import TruthRecord
    from screenmill.annotators.ocr import TextElement

    folder = Path(folder)
    with gzip.open(folder / "snapshot.json.gz", "rt", encoding="utf-8") as f:
        data = json.load(f)
    shots = []
    for s in data["shots"]:
        pieces = tuple(
            TextElement(t, (x0, y0, x1, y1), ((x0 + x1) / 2, (y0 + y1) / 2), c) for t, x0, y0, x1, y1, c in s["pieces"]
        )
        truth = tuple(
            TruthRecord(s["id"], t, (x0, y0, x1, y1), element=el, data_type=kind, sha256=s["id"])
            for t, x0, y0, x1, y1, el, kind in s["truth"]
        )
        fields = {k: s[k] for k in ("id", "site", "page", "split", "width", "height")}
        shots.append(SnapshotShot(**fields, image=folder / s["image"], pieces=pieces, truth=truth))
    return data["ocr_version"], shots


def labels_of(shot, pixels, pieces: Sequence, config=None, producer=None, decide=None) -> list[dict]:
    """The grounding rows ``screenmill run`` would write for one screenshot from its ungrouped ``pieces``.

    Args:
        shot: the :class:`screenmill.schemas.records.Screenshot`.
        pixels: its RGB array. pieces: its ungrouped text elements.
        config: the :class:`screenmill.annotators.ocr.OcrConfig` (default: the annotator's defaults).
        producer: the :class:`screenmill.annotators.ocr_producer.OcrProducer` (default: the producer's defaults).
        decide: the join decisions (:func:`screenmill.annotators.ocr.group_elements`); None: as ``config`` says.
    """
    from screenmill.annotators.ocr import OcrAnnotator, group_elements
    from screenmill.annotators.ocr_config import OcrConfig
    from screenmill.annotators.ocr_producer import OcrProducer, elements_to_labels

    config = config or OcrConfig()
    producer = producer or OcrProducer(run_id="regroup", config_hash="regroup")
    grouped = group_elements(pixels, list(pieces), config, decide)
    return [lab.to_row() for lab in elements_to_labels(shot, grouped, OcrAnnotator, producer)]


@dataclasses.dataclass(frozen=True, slots=True)
class SnapshotScore:
    """The scores of one split of a snapshot (rates in 0..1; None where undefined)."""

    split: str
    screenshots: int
    truth_short: int
    recall_short: float | None
    recall: float | None
    point_accuracy: float | None
    precision: float | None
    labels: int
    ambiguous_labels: int

    def line(self) -> str:
        """The scores as one line."""

        def pct(v: float | None) -> str:
            return "n/a" if v is None else f"{100 * v:.1f}"

        return (
            f"split {self.split}: {self.screenshots} screenshots, recall (≤ {SHORT_TEXT} chars, {self.truth_short}) "
            f"{pct(self.recall_short)}, recall {pct(self.recall)}, point accuracy {pct(self.point_accuracy)}, "
            f"precision {pct(self.precision)} ({self.labels} labels), ambiguous labels {self.ambiguous_labels}"
        )


def score_labels(split: str, n_shots: int, truth: Iterable, labels: list[dict]) -> SnapshotScore:
    """Score grounding rows against truth records with the project's matching (:mod:`screenmill.annotators.evaluate`):
    visible-text recall (all, and of texts of at most :data:`SHORT_TEXT` characters), point accuracy, precision."""
    from screenmill.annotators.evaluate.ambiguity import ambiguous_labels
    from screenmill.annotators.evaluate.matching import evaluate, predictions_from_labels

    report = evaluate(list(truth), predictions_from_labels(labels), icons=False)
    short_found = sum(len(m.truth.text) <= SHORT_TEXT for m in report.matches)
    short_missed = sum(len(t.text) <= SHORT_TEXT for t in report.missed)
    short = short_found + short_missed
    return SnapshotScore(
        split=split,
        screenshots=n_shots,
        truth_short=short,
        recall_short=short_found / short if short else None,
        recall=report.recall,
        point_accuracy=report.point_accuracy,
        precision=report.precision,
        labels=report.predictions,
        ambiguous_labels=sum(len(a.boxes) for a in ambiguous_labels(labels)),
    )


def score_snapshot(shots: Sequence[SnapshotShot], config=None, decide=None) -> dict[str, SnapshotScore]:
    """Group and label every shot's pieces with the code as it stands (``config`` and ``decide`` as for
    :func:`labels_of`), and score each split (and ``all``)."""
    by_split: dict[str, tuple[list, list, int]] = {}
    for shot in shots:
        labels = labels_of(shot.screenshot(), shot.pixels(), shot.pieces, config, decide=decide)
        for key in (shot.split, "all"):
            truth, rows, n = by_split.setdefault(key, ([], [], 0))
            truth.extend(shot.truth)
            rows.extend(labels)
            by_split[key] = (truth, rows, n + 1)
    return {k: score_labels(k, n, truth, rows) for k, (truth, rows, n) in sorted(by_split.items())}


def read_rendered(rows: Sequence[dict], manifest: str, ids: set[str], splits: dict[str, str], sites=None):
    """``(screenshot_id, meta, pixels)`` of each rendered screenshot (``screenshots`` rows) in ``ids`` whose page the
    manifest lists (of ``sites``, when given), once each, by page and width; ``meta``: site, page, split, licence."""
    import numpy as np
    from screenmill.schemas.images import ImageLimits
    from screenmill.schemas.records import Screenshot
    from screenmill.schemas.verified import read_screenshot

    records = {}
    with open(manifest, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                records[rec["path"].lstrip("/")] = rec
    seen: set[str] = set()
    for row in sorted(rows, key=lambda r: (r.get("page_uri") or "", r["width"])):
        sid, uri = row["screenshot_id"], row.get("page_uri") or ""
        page = next((p for p in records if uri.endswith("/" + p)), None)
        if page is None or sid in seen or sid not in ids or (sites is not None and records[page]["site"] not in sites):
            continue
        seen.add(sid)
        rec = records[page]
        meta = {"site": rec["site"], "page": page, "split": splits.get(sid, rec["split"]), "licence": rec["licence"]}
        yield sid, meta, np.asarray(read_screenshot(Screenshot.from_row(row), ImageLimits()))


def build(run_output: str, manifest: str, cache: str, out: str, sites: Sequence[str] = DEFAULT_SITES) -> int:
    """Write a snapshot of the screenshots of ``sites`` from a truth-set render, its manifest and its dump cache.

    Raises:
        SystemExit: no screenshot of those sites is in the cache, or the cache was read by another OCR version.
    """
    from PIL import Image
    from screenmill.annotators.evaluate.truth import splits_from_manifest, truth_from_labels
    from screenmill.annotators.ocr import OcrAnnotator
    from screenmill.schemas.tables import read_shards

    with open(cache, "rb") as f:
        cached = pickle.load(f)
    if cached["version"] != OcrAnnotator.VERSION:
        raise SystemExit(f"{cache} was read by OCR {cached['version']}, this tree is {OcrAnnotator.VERSION}")
    rows = read_shards(run_output, "screenshots").to_pylist()
    splits = splits_from_manifest(manifest, rows)
    grounding = read_shards(run_output, "grounding").to_pylist()
    folder = Path(out)
    (folder / "images").mkdir(parents=True, exist_ok=True)
    shots = []
    for sid, meta, pixels in read_rendered(rows, manifest, set(cached["elements"]), splits, sites):
        image = f"images/{sid[:16]}.webp"
        Image.fromarray(pixels).save(folder / image, "WEBP", lossless=True, quality=100, method=6)
        with Image.open(folder / image) as back:
            if back.convert("RGB").tobytes() != pixels.tobytes():
                raise SystemExit(f"{image}: the WebP of screenshot {sid} is not lossless")
        truth = truth_from_labels(r for r in grounding if r["screenshot_id"] == sid)
        pieces = [[e.text, *map(float, e.box), float(e.confidence)] for e in cached["elements"][sid]]
        shots.append(
            {
                **meta,
                "id": sid,
                "height": pixels.shape[0],
                "width": pixels.shape[1],
                "image": image,
                "pieces": pieces,
                "truth": [[t.text, *t.box, t.element, t.data_type] for t in truth],
            }
        )
    if not shots:
        raise SystemExit(f"no screenshot of the sites {', '.join(sites)} is in {cache}")
    with gzip.open(folder / "snapshot.json.gz", "wt", encoding="utf-8") as f:
        json.dump({"ocr_version": OcrAnnotator.VERSION, "shots": shots}, f, ensure_ascii=False, separators=(",", ":"))
    print(f"snapshot: {len(shots)} screenshots of {len({s['site'] for s in shots})} sites -> {folder}")
    return 0


def reread(folder: str | Path = DEFAULT_SNAPSHOT) -> int:
    """Read every image of the snapshot in ``folder`` ungrouped (``OcrConfig(group_lines=False)``) with the annotator
    as it stands, and rewrite ``snapshot.json.gz`` with the new pieces and ``OcrAnnotator.VERSION`` (the truth, the
    images and the provenance kept).

    Raises:
        OSError / ValueError / KeyError: ``folder`` holds no readable snapshot.
    """
    from screenmill.annotators.ocr import OcrAnnotator
    from screenmill.annotators.ocr_config import OcrConfig

    folder = Path(folder)
    _, shots = read_snapshot(folder)
    with gzip.open(folder / "snapshot.json.gz", "rt", encoding="utf-8") as f:
        data = json.load(f)
    annotator = OcrAnnotator(OcrConfig(group_lines=False))
    pieces = {s.id: annotator.read(s.pixels()).elements for s in shots}
    for shot in data["shots"]:
        shot["pieces"] = [[e.text, *map(float, e.box), float(e.confidence)] for e in pieces[shot["id"]]]
    data["ocr_version"] = OcrAnnotator.VERSION
    with gzip.open(folder / "snapshot.json.gz", "wt", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
    print(f"snapshot: {len(shots)} screenshots read again by OCR {OcrAnnotator.VERSION} -> {folder}")
    return 0


def add_render_arguments(parser: argparse.ArgumentParser, out: str) -> None:
    """The positional arguments of a command that reads a truth-set render and its dump cache, and writes ``out``."""
    parser.add_argument("run_output", help="the truth set's run output root (screenshots table, DOM labels)")
    parser.add_argument("manifest", help="the pages.jsonl of infra/truthset/collect.py")
    parser.add_argument("cache", help="the pickle of infra/truthset/regroup.py dump")
    parser.add_argument("out", help=out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="write a snapshot from a truth-set render, its manifest and its dump cache")
    add_render_arguments(b, "the snapshot folder to write")
    b.add_argument("--sites", default=",".join(DEFAULT_SITES), help="comma-separated sites to take")
    s = sub.add_parser("score", help="group and score a snapshot with the code as it stands")
    s.add_argument("folder", nargs="?", default=str(DEFAULT_SNAPSHOT), help="the snapshot folder")
    r = sub.add_parser("reread", help="read a snapshot's images again with the annotator as it stands")
    r.add_argument("folder", nargs="?", default=str(DEFAULT_SNAPSHOT), help="the snapshot folder")
    args = p.parse_args(argv)
    if args.command == "build":
        return build(args.run_output, args.manifest, args.cache, args.out, tuple(args.sites.split(",")))
    if args.command == "reread":
        try:
            return reread(args.folder)
        except (OSError, ValueError, KeyError) as e:
            print(f"ocr_snapshot: {args.folder} is no readable snapshot: {e}", file=sys.stderr)
            return 2
    try:
        _, shots = read_snapshot(args.folder)
    except (OSError, ValueError, KeyError) as e:
        print(f"ocr_snapshot: {args.folder} is no readable snapshot: {e}", file=sys.stderr)
        return 2
    for score in score_snapshot(shots).values():
        print(score.line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
