"""OCR grouping learned from the DOM: labels by construction, the training set, a small classifier, its figures.

The grouping (:mod:`screenmill.annotators.ocr_group`) decides, for every piece and the piece right after it on its
row (``"row"`` pairs, :func:`~screenmill.annotators.ocr_group.join_pieces`) and every line and the line just below it
(``"line"`` pairs, :func:`~screenmill.annotators.ocr_group.group_lines`), whether they join. Both take a ``decide``
callback that sees each candidate pair, the rules' decision and a :class:`~screenmill.annotators.ocr_group.PairView`;
this module makes and measures what it is given (:mod:`screenmill.annotators.ocr_model` holds the features and the
packaged model as a ``decide`` callback):

* :func:`pair_label`: join or not from the DOM truth of the same render: both pieces lie in one truth element (or
  line of painted text) and their texts are runs of its words; two lines of a paragraph are a pair the DOM does not
  tell (the training takes the rules' decision there);
* :func:`pair_rows` / ``pairs``: the table of every candidate pair of a truth-set render (Parquet, :func:`_schema`:
  the provenance, site, page, screenshot and split, the texts, the label, the features of
  :func:`~screenmill.annotators.ocr_model.pair_features`), from the ``regroup.py dump`` cache;
* ``train``: a gradient-boosted classifier per kind (scikit-learn, the ``learn`` extra) on the dev split's pairs,
  written as plain trees to :data:`~screenmill.annotators.ocr_model.MODEL_PATH` with its data's provenance and
  hash; ``evaluate``: the rules' and the model's pair accuracy per split; ``score``: both end to end per split
  (recall, point accuracy, precision against the DOM truth).

Commands::

    python -m screenmill.annotators.ocr_learn pairs /work/truth /work/ts/pages.jsonl /work/cache.pkl pairs.parquet
    python -m screenmill.annotators.ocr_learn cuts /work/truth /work/ts/pages.jsonl cuts.parquet  # a line's cuts
    python -m screenmill.annotators.ocr_learn crossval pairs.parquet gen.parquet  # leave one dev site out
    python -m screenmill.annotators.ocr_learn train pairs.parquet gen.parquet     # writes the packaged model
    python -m screenmill.annotators.ocr_learn evaluate pairs.parquet       # pair accuracy, rules vs model, per split
    python -m screenmill.annotators.ocr_learn score /work/truth /work/ts/pages.jsonl /work/cache.pkl MODEL.json \
        --also /work/gen-truth /work/gen/pages.jsonl /work/gen-cache.pkl --splits test,fresh   # held out: once
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from screenmill.annotators import ocr_features as g
from screenmill.annotators.ocr_model import (
    FEATURES,
    KINDS,
    LINE_FEATURES,
    MODEL_PATH,
    ROW_FEATURES,
    TreeModel,
    _decisions,
    _load,
    packaged_decide,
    pair_features,
)


def pair_label(a, b, truth: Sequence) -> tuple[bool, bool]:
    """Whether two pieces (``text`` and ``box``) are one element by the DOM truth, and whether the DOM tells.

    They join when some truth record that shows text (an element or a line of painted text; no icon) holds both
    pieces' centres and both texts as runs of its words. The DOM does not tell (``False, False``) for two lines of
    painted text that is no element (each in a :data:`~screenmill.annotators.evaluate.truth.LINE` record, in no
    element): a paragraph's lines, which the labels' policy names neither joined (a block too long to name) nor apart
    (each line is a precise label), so the training takes the rules' decision there.
    """
    from screenmill.annotators.evaluate.matching import point_in_box
    from screenmill.annotators.evaluate.text import names_part_of
    from screenmill.annotators.evaluate.truth import ICON, LINE

    ca = ((a.box[0] + a.box[2]) / 2, (a.box[1] + a.box[3]) / 2)
    cb = ((b.box[0] + b.box[2]) / 2, (b.box[1] + b.box[3]) / 2)
    shown = [t for t in truth if t.data_type != ICON]
    if any(
        point_in_box(ca, t.box)
        and point_in_box(cb, t.box)
        and names_part_of(a.text, t.text)
        and names_part_of(b.text, t.text)
        for t in shown
    ):
        return True, True

    def lines_only(c) -> bool:
        return {t.data_type == LINE for t in shown if point_in_box(c, t.box)} == {True}

    return False, not (lines_only(ca) and lines_only(cb))


class PairRecorder:
    """A ``decide`` callback that keeps every candidate pair's features and texts and returns the rules' decision
    (so grouping with it is grouping by the rules)."""

    def __init__(self) -> None:
        self.pairs: list[tuple[str, object, object, list[float]]] = []

    def __call__(self, kind: str, i: int, j: int, rule: bool, view: g.PairView) -> bool:
        self.pairs.append((kind, view.elements[i], view.elements[j], pair_features(kind, i, j, rule, view)))
        return rule


def _schema():
    import pyarrow as pa

    names = sorted(set(ROW_FEATURES) | set(LINE_FEATURES))
    return pa.schema(
        [
            pa.field("site", pa.string(), False),
            pa.field("page", pa.string(), False),
            pa.field("screenshot_id", pa.string(), False),
            pa.field("split", pa.string(), False),
            pa.field("kind", pa.string(), False),
            pa.field("text_i", pa.string(), False),
            pa.field("text_j", pa.string(), False),
            pa.field("label", pa.bool_(), False),
            pa.field("told", pa.bool_(), False),
            *(pa.field(f"f_{n}", pa.float64(), True) for n in names),
        ]
    )


def pair_rows(screenshot_id: str, pixels, pieces: Sequence, truth: Sequence, meta: dict, config=None) -> list[dict]:
    """The candidate pairs of one screenshot's grouping by the rules, with features and DOM labels, as table rows.

    Args:
        screenshot_id: the screenshot's id. pixels / pieces: as for
            :func:`screenmill.annotators.ocr.group_elements`. truth: the screenshot's truth records.
        meta: ``site``, ``page``, ``split``. config: the :class:`~screenmill.annotators.ocr.OcrConfig`.
    """
    from screenmill.annotators.ocr import group_elements
    from screenmill.annotators.ocr_config import OcrConfig

    recorder = PairRecorder()
    group_elements(pixels, list(pieces), config or OcrConfig(), decide=recorder)
    rows = []
    for kind, a, b, features in recorder.pairs:
        row = {"site": meta["site"], "page": meta["page"], "screenshot_id": screenshot_id, "split": meta["split"]}
        label, told = pair_label(a, b, truth)
        row |= {"kind": kind, "text_i": a.text, "text_j": b.text, "label": label, "told": told}
        row |= {f"f_{n}": v for n, v in zip(FEATURES[kind], features, strict=True)}
        rows.append(row)
    return rows


def _grounding_by_shot(run_output: str) -> dict[str, list[dict]]:
    """A render's grounding rows (its DOM labels) by screenshot id, read in one pass over the table."""
    from screenmill.schemas.tables import read_shards

    by_shot: dict[str, list[dict]] = {}
    for row in read_shards(run_output, "grounding").to_pylist():
        by_shot.setdefault(row["screenshot_id"], []).append(row)
    return by_shot


def build_pairs(run_output: str, manifest: str, cache: str, out: str) -> int:
    """Write the pair table of every cached screenshot of a truth-set render (``pairs``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from screenmill.annotators.evaluate.truth import splits_from_manifest, truth_from_labels
    from screenmill.annotators.ocr_snapshot import read_rendered
    from screenmill.schemas.tables import read_shards

    with open(cache, "rb") as f:
        cached = pickle.load(f)["elements"]
    rows = read_shards(run_output, "screenshots").to_pylist()
    splits = splits_from_manifest(manifest, rows)
    grounding = _grounding_by_shot(run_output)
    table = []
    for sid, meta, pixels in read_rendered(rows, manifest, set(cached), splits):
        truth = truth_from_labels(grounding.get(sid, ()))
        table += pair_rows(sid, pixels, cached[sid], truth, meta)
    schema = _schema()
    full = [{name: r.get(name) for name in schema.names} for r in table]
    pq.write_table(pa.Table.from_pylist(full, schema=schema), out)
    print(f"pairs: {len(table)} pairs of {len({r['screenshot_id'] for r in table})} screenshots -> {out}")
    return 0


def read_pairs(pairs: str | Sequence[str]):
    """One pyarrow table of one or several pair tables (the renders of the truth set, of generated pages, ...) and
    the SHA-256 of their bytes in order (one file: its own hash).

    Raises:
        OSError / pyarrow.ArrowInvalid: a file is missing or no Parquet. ValueError: a table of another schema.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    paths = [pairs] if isinstance(pairs, str | Path) else list(pairs)
    tables, digests = [], []
    for path in paths:
        digests.append(hashlib.sha256(Path(path).read_bytes()).hexdigest())
        table = pq.read_table(path)
        if table.schema != _schema():
            raise ValueError(f"{path} is not a pair table of this tree (its schema differs)")
        tables.append(table)
    digest = digests[0] if len(digests) == 1 else hashlib.sha256(" ".join(digests).encode()).hexdigest()
    return pa.concat_tables(tables), digest


class CutRecorder:
    """A ``cut`` callback (:mod:`screenmill.annotators.ocr_cut`) that keeps every candidate cut of the lines it sees
    with its features and DOM label (against ``truth``, set per screenshot) and returns the rules' decisions."""

    def __init__(self, config=None) -> None:
        from screenmill.annotators.ocr_config import OcrConfig

        self.config, self.truth, self.rows = config or OcrConfig(group_lines=False), [], []

    def __call__(self, view) -> list[bool]:
        from screenmill.annotators.ocr_cut import CUT_FEATURES, cut_features, cut_label, word_boxes

        features, boxes = cut_features(view, self.config), word_boxes(view)
        for k in range(len(view.rule)):
            label, told = cut_label(boxes[k], boxes[k + 1], self.truth)
            row = {"text": view.text, "k": k, "label": label, "told": told}
            self.rows.append(row | {f"f_{n}": float(v) for n, v in zip(CUT_FEATURES, features[k], strict=True)})
        return list(view.rule)


def _cut_schema():
    import pyarrow as pa
    from screenmill.annotators.ocr_cut import CUT_FEATURES

    meta = ("site", "page", "screenshot_id", "split", "text")
    return pa.schema(
        [
            *(pa.field(n, pa.string(), False) for n in meta),
            pa.field("k", pa.int32(), False),
            pa.field("label", pa.bool_(), False),
            pa.field("told", pa.bool_(), False),
            *(pa.field(f"f_{n}", pa.float64(), False) for n in CUT_FEATURES),
        ]
    )


def build_cuts(run_output: str, manifest: str, out: str, splits: Sequence[str] = ("dev",), limit: int = 0) -> int:
    """Read every screenshot of ``splits`` of a truth-set render with the rules' cuts and write the table of its
    candidate cuts (``cuts``: features, DOM labels; minutes, the OCR reads each screenshot; ``limit``: the first N).

    Raises:
        SystemExit: no screenshot of those splits is in the render.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq
    from screenmill.annotators.evaluate.truth import splits_from_manifest, truth_from_labels
    from screenmill.annotators.ocr import OcrAnnotator
    from screenmill.annotators.ocr_snapshot import read_rendered
    from screenmill.schemas.tables import read_shards

    rows = read_shards(run_output, "screenshots").to_pylist()
    split_of = splits_from_manifest(manifest, rows)
    ids = {r["screenshot_id"] for r in rows if split_of.get(r["screenshot_id"]) in set(splits)}
    grounding = _grounding_by_shot(run_output)
    recorder = CutRecorder()
    annotator, table, n = OcrAnnotator(recorder.config, cut=recorder), [], 0
    for sid, meta, pixels in read_rendered(rows, manifest, ids, split_of):
        if limit and n >= limit:
            break
        recorder.truth, recorder.rows = truth_from_labels(grounding.get(sid, ())), []
        annotator.read(pixels)
        table += [{"site": meta["site"], "page": meta["page"], "screenshot_id": sid, "split": meta["split"]} | r
                  for r in recorder.rows]  # fmt: skip
        n += 1
    if not n:
        raise SystemExit(f"no screenshot of split(s) {', '.join(splits)} in {run_output}")
    pq.write_table(pa.Table.from_pylist(table, schema=_cut_schema()), out)
    print(f"cuts: {len(table)} candidate cuts of {n} screenshots -> {out}")
    return 0


def _classifier(seed: int = 0, trees: int = 120):
    """The classifier ``train`` fits and ``crossval`` measures (one place for both)."""
    try:
        from sklearn.ensemble import GradientBoostingClassifier
    except ImportError:
        raise SystemExit("ocr_learn train / crossval need scikit-learn: pip install -e '.[learn]'") from None
    return GradientBoostingClassifier(n_estimators=trees, max_depth=3, learning_rate=0.1, random_state=seed)


def _matrix(table, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Features, targets, whether the DOM told them, and splits of one kind's rows of a pair table (a pyarrow table).
    The target is the DOM's label where it tells (``told``), else the rules' decision (feature 0)."""
    rows = [r for r in table.to_pylist() if r["kind"] == kind]
    width = len(FEATURES[kind])
    x = np.array([[r[f"f_{n}"] for n in FEATURES[kind]] for r in rows], dtype=np.float64).reshape(-1, width)
    told = np.array([r["told"] for r in rows], dtype=bool)
    y = np.where(told, np.array([r["label"] for r in rows], dtype=bool), x[:, 0] >= 0.5)
    return x, y, told, np.array([r["split"] for r in rows])


def _export(clf, x: np.ndarray) -> dict:
    """A fitted ``GradientBoostingClassifier`` as :class:`TreeModel`'s spec (its offset read off ``x``)."""
    trees = []
    for (est,) in clf.estimators_:
        t = est.tree_
        trees.append(
            {
                "left": t.children_left.tolist(),
                "right": t.children_right.tolist(),
                "feature": t.feature.tolist(),
                "threshold": [round(float(v), 6) for v in t.threshold],
                "value": [round(float(v), 6) for v in t.value[:, 0, 0]],
            }
        )
    spec = {"offset": 0.0, "rate": clf.learning_rate, "trees": trees}
    sample = x[:1]
    spec["offset"] = float(clf.decision_function(sample)[0] - TreeModel(spec).raw(sample)[0])
    return spec


#: Per kind, how sure the model must be to overrule the rules' decision (a join probability of at least this, or of
#: at most one minus this; 1.0: never), chosen by :func:`chosen_flips` leaving one dev site out at a time (2026-12-02:
#: 37 dev sites, 19 of the truth set and 18 generated, 312 screenshots): row pairs, rules 83.3 % right against the
#: model's 90.1 % at 0.5 and 89.6 % at 0.6; line pairs, rules 92.5 %, the model 96.9 % at 0.5 and 96.7 % at 0.6.
FLIP = {"row": 0.6, "line": 0.6}


def train(
    pairs: str | Sequence[str],
    out: str | Path = MODEL_PATH,
    seed: int = 0,
    flip: dict[str, float] = FLIP,
    trees: int = 120,
) -> int:
    """Train one classifier per kind on the dev split's pairs of ``pairs`` (one table or several) and write the
    model file (``flip``: how sure the model must be to overrule the rules, :data:`FLIP`).

    Raises:
        SystemExit: scikit-learn is missing, or the table has no dev pair of a kind.
    """
    table, digest = read_pairs(pairs)
    model: dict = {"kinds": {}, "flip": dict(flip)}
    for kind in KINDS:
        x, y, _, split = _matrix(table, kind)
        dev = split == "dev"
        if not dev.any() or y[dev].all() or not y[dev].any():
            raise SystemExit(f"{pairs} has no dev pairs of both labels of kind {kind!r}")
        clf = _classifier(seed, trees)
        clf.fit(x[dev], y[dev])
        spec = _export(clf, x)
        if not np.allclose(TreeModel(spec).raw(x), clf.decision_function(x), atol=1e-4):
            raise SystemExit(f"the exported {kind} trees do not reproduce the classifier")
        model["kinds"][kind] = {"features": list(FEATURES[kind]), **spec}
    sites = sorted({(r["site"], r["split"]) for r in table.select(["site", "split"]).to_pylist()})
    model["provenance"] = {
        "pairs_sha256": digest,
        "pairs": table.num_rows,
        "screenshots": len(set(table.column("screenshot_id").to_pylist())),
        "trained_on": "dev",
        "sites": [f"{s}:{sp}" for s, sp in sites],
        "classifier": f"sklearn GradientBoostingClassifier(n_estimators={trees}, max_depth=3, learning_rate=0.1)",
    }
    body = json.dumps(model, sort_keys=True, separators=(",", ":"))
    model["version"] = "gb1-" + hashlib.sha256(body.encode()).hexdigest()[:12]
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(model, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"model {model['version']} ({table.num_rows} pairs) -> {out}")
    return 0


#: The flip thresholds ``crossval`` compares (1.0: the rules always).
FLIPS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


#: How much mean leave-one-site-out accuracy a flip threshold may give up against the best one to be chosen for a
#: better worst site (:func:`chosen_flips`): the held-out sites punish a model that wins on average but over-joins
#: some sites (gb1-55ccbb9f1589: 98.3 % leaving one dev site out, 94.0 % on the test split).
FLIP_SLACK = 0.005


def chosen_flips(cv: dict[tuple[str, float], dict[str, float]], slack: float = FLIP_SLACK) -> dict[str, float]:
    """Per kind, the flip threshold of ``crossval``'s figures whose worst site is best among those within ``slack``
    of the best mean accuracy (ties: the higher threshold, the nearer the rules)."""
    out = {}
    for kind in sorted({k for k, _ in cv}):
        rows = {f: v for (k, f), v in cv.items() if k == kind}
        best = max(v["model"] for v in rows.values())
        near = [f for f, v in rows.items() if v["model"] >= best - slack]
        out[kind] = max(near, key=lambda f: (rows[f]["worst_site_delta"], f))
    return out


def crossval(
    pairs: str | Sequence[str], seed: int = 0, trees: int = 120, flips: Sequence[float] = FLIPS
) -> dict[tuple[str, float], dict[str, float]]:
    """Leave one dev site out at a time: per (kind, flip), the DOM-told dev pairs' accuracy of the rules and of the
    model trained without the pair's site (the decision every tuning choice, :data:`FLIP` among them, is made on).

    Returns:
        ``{(kind, flip): {"pairs", "sites", "rules", "model", "worst_site_delta"}}``; ``worst_site_delta``: the
        lowest per-site difference model minus rules (a flip that wins on average but costs one site much shows).
    """
    table, _ = read_pairs(pairs)
    out = {}
    for kind in KINDS:
        x, y, told, split = _matrix(table, kind)
        site = np.array([r["site"] for r in table.select(["kind", "site"]).to_pylist() if r["kind"] == kind])
        dev = split == "dev"
        p = np.full(len(y), np.nan)
        for s in sorted(set(site[dev])):
            fit, held = dev & (site != s), dev & (site == s)
            if len(set(y[fit])) < 2:
                continue
            p[held] = _classifier(seed, trees).fit(x[fit], y[fit]).predict_proba(x[held])[:, 1]
        m = dev & told & ~np.isnan(p)
        rule = x[:, 0] >= 0.5
        for flip in flips:
            model = _decisions(np.nan_to_num(p), rule, flip)
            deltas = [
                float((model[k] == y[k]).mean() - (rule[k] == y[k]).mean())
                for s in sorted(set(site[m]))
                for k in [m & (site == s)]
            ]
            out[kind, flip] = {
                "pairs": float(m.sum()),
                "sites": float(len(deltas)),
                "rules": float((rule[m] == y[m]).mean()),
                "model": float((model[m] == y[m]).mean()),
                "worst_site_delta": min(deltas) if deltas else 0.0,
            }
    return out


def pair_accuracy(
    pairs: str | Sequence[str], path: str | Path = MODEL_PATH
) -> dict[tuple[str, str], dict[str, float]]:
    """Per (split, kind): the pairs the DOM tells (and how many it does not), their share of joins, and the share
    of them whose DOM label the rules' / the model's decision is (``pairs``: one table or several)."""
    table, _ = read_pairs(pairs)
    spec = _load(str(path))
    models = {k: TreeModel(v) for k, v in spec["kinds"].items()}
    out = {}
    for kind in KINDS:
        x, y, told, split = _matrix(table, kind)
        p = models[kind].predict(x) if len(x) else np.zeros(0)
        model = _decisions(p, x[:, 0] >= 0.5, spec["flip"][kind])
        for s in sorted(set(split)):
            m = (split == s) & told
            rules = x[m, 0] >= 0.5
            out[s, kind] = {
                "pairs": float(m.sum()),
                "untold": float(((split == s) & ~told).sum()),
                "joins": float(y[m].mean()),
                "rules": float((rules == y[m]).mean()),
                "model": float((model[m] == y[m]).mean()),
            }
    return out


def score_render(
    run_output: str,
    manifest: str,
    cache: str,
    model: str | Path = MODEL_PATH,
    more: Sequence[tuple[str, str, str]] = (),
    splits: Sequence[str] | None = None,
) -> dict:
    """End to end on truth-set renders: per split, the labels of the rules' grouping and of the model's, scored
    against the DOM truth (:func:`screenmill.annotators.ocr_snapshot.score_labels`: aggregates only).

    Args:
        run_output / manifest / cache: a render, its manifest and its ``regroup.py dump`` cache. model: the model
            file. more: further ``(run_output, manifest, cache)`` renders whose splits join the same figures (the
            fresh split spans a Debian render and a generated one). splits: only these splits (default: all).
    """
    from screenmill.annotators.evaluate.truth import splits_from_manifest, truth_from_labels
    from screenmill.annotators.ocr_config import OcrConfig
    from screenmill.annotators.ocr_snapshot import labels_of, read_rendered, score_labels
    from screenmill.schemas.records import Screenshot
    from screenmill.schemas.tables import read_shards

    decide, rules = packaged_decide(model), OcrConfig(grouping="rules")
    parts: dict[str, dict] = {}
    for run, pages, pickled in ((run_output, manifest, cache), *more):
        with open(pickled, "rb") as f:
            cached = pickle.load(f)["elements"]
        rows = read_shards(run, "screenshots").to_pylist()
        by_id = {r["screenshot_id"]: Screenshot.from_row(r) for r in rows}
        split_of = splits_from_manifest(pages, rows)
        grounding = _grounding_by_shot(run)
        for sid, meta, pixels in read_rendered(rows, pages, set(cached), split_of):
            if splits is not None and meta["split"] not in splits:
                continue
            part = parts.setdefault(meta["split"], {"n": 0, "truth": [], "rules": [], "model": []})
            part["n"] += 1
            part["truth"] += truth_from_labels(grounding.get(sid, ()))
            part["rules"] += labels_of(by_id[sid], pixels, cached[sid], rules)
            part["model"] += labels_of(by_id[sid], pixels, cached[sid], decide=decide)
    return {
        (split, who): score_labels(split, p["n"], p["truth"], p[who])
        for split, p in sorted(parts.items())
        for who in ("rules", "model")
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    from screenmill.annotators.ocr_snapshot import add_render_arguments

    add_render_arguments(sub.add_parser("pairs", help="write the pair table of a render from its cache"), "Parquet")
    t = sub.add_parser("train", help="train the classifier on the dev pairs and write the model file")
    t.add_argument("pairs", nargs="+", help="the pair tables")
    t.add_argument("--out", default=str(MODEL_PATH), help="the model file (default: the packaged one)")
    e = sub.add_parser("evaluate", help="pair accuracy of the rules and the model, per split and kind")
    e.add_argument("pairs", nargs="+", help="the pair tables")
    c = sub.add_parser("crossval", help="leave one dev site out: rules vs model per kind and flip threshold")
    c.add_argument("pairs", nargs="+", help="the pair tables")
    e.add_argument("--model", default=str(MODEL_PATH), help="the model file (default: the packaged one)")
    r = sub.add_parser("score", help="end to end per split: the rules' labels and the model's against DOM truth")
    add_render_arguments(r, "the model file")
    r.add_argument(
        "--also",
        nargs=3,
        action="append",
        default=[],
        metavar=("RUN", "MANIFEST", "CACHE"),
        help="another render whose splits join the figures (repeatable)",
    )
    r.add_argument("--splits", help="comma-separated splits to score (default: all)")
    k = sub.add_parser("cuts", help="read a render's screenshots and write the table of their lines' candidate cuts")
    k.add_argument("run_output", help="the truth set's run output root (screenshots table, DOM labels)")
    k.add_argument("manifest", help="the pages.jsonl of infra/truthset/collect.py")
    k.add_argument("out", help="the Parquet file to write")
    k.add_argument("--splits", default="dev", help="comma-separated splits to read (default: dev)")
    k.add_argument("--limit", type=int, default=0, help="read only the first N screenshots")
    args = p.parse_args(argv)
    if args.command == "cuts":
        if args.limit < 0:
            p.error(f"--limit must be >= 0, got {args.limit}")
        return build_cuts(args.run_output, args.manifest, args.out, args.splits.split(","), args.limit)
    if args.command == "score":
        splits = args.splits.split(",") if args.splits else None
        scores = score_render(args.run_output, args.manifest, args.cache, args.out, args.also, splits)
        for (_, who), score in scores.items():
            print(f"{who:5s} {score.line()}")
        return 0
    if args.command == "pairs":
        return build_pairs(args.run_output, args.manifest, args.cache, args.out)
    if args.command == "train":
        return train(args.pairs, args.out)
    if args.command == "crossval":
        cv = crossval(args.pairs)
        for (kind, flip), v in cv.items():
            print(
                f"{kind:5s} flip {flip:.1f}: {int(v['pairs'])} pairs of {int(v['sites'])} sites, rules "
                f"{100 * v['rules']:.2f} %, model {100 * v['model']:.2f} % (worst site "
                f"{100 * v['worst_site_delta']:+.2f})"
            )
        print(f"chosen (within {100 * FLIP_SLACK:.1f} points of the best, best worst site): {chosen_flips(cv)}")
        return 0
    for (split, kind), v in pair_accuracy(args.pairs, args.model).items():
        print(
            f"{split:5s} {kind:5s} {int(v['pairs']):6d} pairs ({100 * v['joins']:.1f} % joins; "
            f"{int(v['untold'])} more the DOM does not tell): rules "
            f"{100 * v['rules']:.2f} %, model {100 * v['model']:.2f} %"
        )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except OSError as e:  # a missing render, manifest, cache or table: one line, no traceback
        sys.exit(f"ocr_learn: {e}")
