"""The dataset card (``README.md``) of an exported repository: YAML metadata and text, a pure function of the
repository's state and index (:func:`render_card`)."""

from __future__ import annotations

import datetime as _dt
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa
from screenmill.schemas.reviews import latest_reviews
from screenmill.stages.export.repo import CONFIGS, SPLITS, export_features, import_optional

ABOUT = {
    "screenshots": "one row per distinct screenshot (sha256 of its bytes), with the image",
    "steps": "one row per episode step: which screenshot, the episode's task, the recorded action, page, render",
    "grounding": "instruction → element box + click point, in original-image pixels, with provenance",
    "actions": "action traces: one action per step of an episode",
    "reviewed": "human review verdicts (accept / fix / reject) on grounding labels, with corrections",
}
_BEFORE_ANY = _dt.datetime.min.replace(tzinfo=_dt.UTC)  # the review time of an index row that has none


def card_facts(index: pa.Table) -> dict[str, Any]:
    """Annotators (rows per annotator + versions) and review coverage, from the index of the whole repository.

    Review coverage: the share of grounding labels with at least one review; ``by_verdict`` counts each reviewed
    label once, by the verdict of its latest review (:func:`screenmill.schemas.reviews.latest_reviews`: latest
    ``reviewed_at``, then highest ``annotation_id``). An index row written before the index carried ``reviewed_at``
    counts as earlier than any review with one, so an old index alone is ordered by ``annotation_id``.
    """
    annotators: Counter[tuple] = Counter()
    labels: set[str] = set()
    reviews: list[dict[str, Any]] = []
    for e in index.to_pylist():
        if e["config"] in ("grounding", "actions"):
            annotators[(e["config"], e["annotator"], e["annotator_version"], e["recipe"], e["recipe_version"])] += 1
        if e["config"] == "grounding":
            labels.add(e["key"])
        elif e["config"] == "reviewed":
            reviews.append(
                {**e, "reviewed_at": e.get("reviewed_at") or _BEFORE_ANY, "annotation_id": e["annotation_id"] or 0}
            )
    reviewed = {label: r["verdict"] for label, r in latest_reviews(reviews).items() if label in labels}
    names = ("config", "annotator", "annotator_version", "recipe", "recipe_version")
    return {
        "annotators": [
            {**dict(zip(names, k, strict=True)), "rows": n} for k, n in sorted(annotators.items(), key=str)
        ],
        "review_coverage": {
            "labels": len(labels),
            "reviewed": len(reviewed),
            "share": round(len(reviewed) / len(labels), 4) if labels else 0.0,
            "by_verdict": dict(sorted(Counter(reviewed.values()).items())),
        },
    }


def _size_category(rows: int) -> str:
    for limit, name in (
        (10**3, "n<1K"),
        (10**4, "1K<n<10K"),
        (10**5, "10K<n<100K"),
        (10**6, "100K<n<1M"),
        (10**7, "1M<n<10M"),
        (10**8, "10M<n<100M"),
        (10**9, "100M<n<1B"),
    ):
        if rows < limit:
            return name
    return "1B<n<10B"


def card_metadata(state: Mapping[str, Any], index: pa.Table) -> dict[str, Any]:
    """The card's YAML metadata, a pure function of the repository's state and index.

    Args:
        state: the repository state (``_screenmill/state.json`` after this export).
        index: the repository index after this export.

    Returns:
        ``license``, ``configs`` (data files per split; ``grounding`` is the default config), ``dataset_info``
        (features, split sizes) and a ``screenmill`` section (counts, sources, annotators, review coverage, runs,
        exports). Configs and splits without files are left out, so every listed glob matches.
    """
    per: dict[tuple[str, str], dict[str, int]] = defaultdict(Counter)
    for f in state["files"].values():
        per[(f["config"], f["split"])].update({k: f[k] for k in ("rows", "num_bytes", "size")})
    present = [c for c in CONFIGS if any((c, s) in per for s in SPLITS)]
    configs, infos = [], []
    for c in present:
        splits = [s for s in SPLITS if (c, s) in per]
        entry: dict[str, Any] = {"config_name": c}
        if c == ("grounding" if "grounding" in present else present[0]):
            entry["default"] = True
        entry["data_files"] = [{"split": s, "path": f"data/{c}/{s}-*.parquet"} for s in splits]
        configs.append(entry)
        infos.append(
            {
                "config_name": c,
                "features": export_features(c)._to_yaml_list(),
                "splits": [
                    {"name": s, "num_bytes": per[(c, s)]["num_bytes"], "num_examples": per[(c, s)]["rows"]}
                    for s in splits
                ],
                "download_size": sum(per[(c, s)]["size"] for s in splits),
                "dataset_size": sum(per[(c, s)]["num_bytes"] for s in splits),
            }
        )
    counts = {c: {s: per[(c, s)]["rows"] for s in SPLITS if (c, s) in per} for c in present}
    return {
        "license": state["license"],
        "pretty_name": state["pretty_name"],
        "tags": ["screenmill", "gui-grounding", "screenshots", "computer-use", "gui-agents"],
        "size_categories": [_size_category(max((sum(v.values()) for v in counts.values()), default=0))],
        "configs": configs,
        "dataset_info": infos,
        "screenmill": {
            "schema_version": state["schema_version"],
            "split": state["split"],
            "counts": counts,
            "sources": state["sources"],
            **card_facts(index),
            "runs": [state["runs"][r] for r in sorted(state["runs"])],
            "exports": [{"batch": b["batch"], "rows": b["rows"]} for b in state["batches"]],
        },
    }


def _table(header: list[str], rows: Iterable[Iterable[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join("" if v is None else str(v).replace("|", "\\|") for v in row) + " |" for row in rows]
    return lines + [""]


def render_card(state: Mapping[str, Any], index: pa.Table) -> str:
    """``README.md``: the YAML metadata of :func:`card_metadata`, then the same facts as text and tables."""
    yaml = import_optional("yaml")
    meta = card_metadata(state, index)
    sm = meta["screenmill"]
    cov = sm["review_coverage"]
    first = next((c["config_name"] for c in meta["configs"] if c.get("default")), "grounding")
    lines = [
        "---",
        yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).rstrip(),
        "---",
        "",
        f"# {meta['pretty_name']}",
        "",
        "GUI grounding labels and action traces made from UI screenshots by screenmill. Coordinates are pixels of",
        "the original image (after EXIF orientation); every row names the run, annotator and recipe that made it.",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'rows = load_dataset("{state["name"]}", "{first}", split="train")',
        f'images = load_dataset("{state["name"]}", "screenshots", split="train")  # join on screenshot_id',
        "```",
        "",
        "## Configs",
        "",
        *_table(
            ["config", "rows", "train", "test"],
            [
                [f"`{c}`: {ABOUT[c]}", sum(v.values()), v.get("train", 0), v.get("test", 0)]
                for c, v in sm["counts"].items()
            ],
        ),
        "## Splits",
        "",
        f"`test` holds a share of {sm['split']['test_fraction']} of the split units: episodes (whole: steps and",
        "actions of an episode are always in one split), or screenshots outside episodes. The split is a salted",
        f"hash of the unit (seed {sm['split']['seed']!r}), so a row never changes split when the dataset grows.",
        "Grounding labels and reviews follow their screenshot; a screenshot met in several episodes is stored once,",
        "with the first of them (by `episode_id`), so join `screenshots` across splits.",
        "",
        "## Annotators",
        "",
        *_table(
            ["config", "annotator", "annotator_version", "recipe", "recipe_version", "rows"],
            [a.values() for a in sm["annotators"]],
        ),
        "## Review coverage",
        "",
        f"{cov['reviewed']} of {cov['labels']} grounding labels ({cov['share']:.1%}) have a human review; latest "
        "verdicts: " + (", ".join(f"{k} {v}" for k, v in cov["by_verdict"].items()) or "none") + ".",
        "",
        "## Provenance",
        "",
        f"License: `{meta['license']}`. Sources (input roots): "
        + (", ".join(f"`{s}`" for s in sm["sources"]) or "none recorded")
        + ".",
        "",
        *_table(
            ["run_id", "dt", "input", "annotator", "config_hash", "versions"],
            [
                [
                    r["run_id"],
                    r["dt"],
                    r["input"],
                    r["annotator"],
                    r["config_hash"],
                    ", ".join(f"{k} {v}" for k, v in r["versions"].items()),
                ]
                for r in sm["runs"]
            ],
        ),
        "## Layout",
        "",
        "`data/<config>/<split>-<batch>-<chunk>.parquet`; each export adds new files in one batch (numbered, with a",
        "content hash) and never rewrites earlier ones. `_screenmill/` keeps the export index and state.",
        "",
    ]
    return "\n".join(lines)


def run_provenance(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The card's record of one run: id, date, input, annotator, config hash, package versions, rows per table."""
    return {
        "run_id": manifest["run_id"],
        "dt": manifest.get("dt"),
        "input": manifest.get("input"),
        "annotator": manifest.get("annotator"),
        "config_hash": manifest.get("config_hash"),
        "versions": {k: v for k, v in sorted((manifest.get("versions") or {}).items()) if k != "platform"},
        "rows": {t: v.get("rows", 0) for t, v in sorted((manifest.get("tables") or {}).items())},
    }


def render_training_card(
    state: Mapping[str, Any], counts: Mapping[str, int], sizes: Mapping[str, int], features
) -> str:
    """``README.md`` of a training export (:mod:`screenmill.stages.export.training`): YAML (configs, features, the
    convention) and the convention in words, exactly, with the formula back to original pixels.

    Args:
        state: the export's ``_screenmill/training.json`` after this export.
        counts, sizes: rows and Arrow bytes per split in the whole repository.
        features: the rows' ``datasets.Features``.
    """
    yaml = import_optional("yaml")
    conv, settings, checks = state["convention"], state["settings"], state.get("checks", {})
    splits = [s for s in SPLITS if counts.get(s)]
    meta = {
        "license": state["license"],
        "pretty_name": state["pretty_name"],
        "tags": ["screenmill", "gui-agents", "computer-use", settings["format"], conv["target"]],
        "size_categories": [_size_category(sum(counts.values()))],
        "configs": [
            {
                "config_name": "default",
                "default": True,
                "data_files": [{"split": s, "path": f"data/{s}/*.parquet"} for s in splits],
            }
        ],
        "dataset_info": {
            "features": features._to_yaml_list(),
            "splits": [{"name": s, "num_bytes": sizes[s], "num_examples": counts[s]} for s in splits],
        },
        "screenmill": {"settings": settings, "convention": conv},
    }
    resize = ""
    if conv["system"] == "pixel_resized":
        f, lo, hi = conv["factor"], conv["min_pixels"], conv["max_pixels"]
        resize = (
            f"Images are sent as they are; the model's processor resizes them with Qwen's `smart_resize` (factor {f}"
            f"{' = patch 14 x merge 2' if f == 28 else ''}, min_pixels {lo}, max_pixels {hi}; height and width are "
            "rounded to multiples of the factor independently, so x and y scale differently), and the coordinates "
            f"are absolute pixels of that resized W' x H' image: `h = round(H / {f}) * {f}`, `w = round(W / {f}) * "
            f"{f}` (Python's round, halves to even); if `h * w > {hi}`: `b = sqrt(H * W / {hi})`, `h = max({f}, "
            f"floor(H / b / {f}) * {f})`, `w` likewise; if `h * w < {lo}`: `b = sqrt({lo} / (H * W))`, "
            f"`h = ceil(H * b / {f}) * {f}`, `w` likewise; `H' = h`, `W' = w`."
        )
    lines = [
        "---",
        yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).rstrip(),
        "---",
        "",
        f"# {state['pretty_name']}",
        "",
        f"{settings['task'].capitalize()} samples for `{conv['target']}` ({conv['users']}) in the "
        f"`{settings['format']}` trainer format, made by screenmill: images inside every row, prompt, answer and "
        "provenance (screenshot_id, label_ids, annotator, recipe, review).",
        "",
        "## Coordinates",
        "",
        *_table(
            ["field", "value"],
            [[k, f"`{v}`"] for k, v in conv.items() if k not in ("users",)],
        ),
        f"Coordinate system `{conv['system']}`, {conv['geometry']} answers; rounding: {conv['rounding']}; clamp: "
        f"{conv['clamp']}. {resize}".rstrip(),
        "",
        f"Back to original-image pixels (W x H after EXIF orientation): `{conv['to_original_pixels']}`. Converted",
        "back this way, every exported point lies inside its labelled box (and every box keeps IoU >= "
        f"{checks.get('min_iou')} with it); rows for which rounding breaks that are held back, not exported.",
        "",
        "## Splits",
        "",
        f"`test` holds a share of {settings['split']['test_fraction']} of the image groups (seed "
        f"{settings['split']['seed']!r}): screenshots within {checks.get('phash_bits')} bits of perceptual hash, and "
        "the screenshots of one "
        "episode, form one group and share one split, so the same image is never on both sides.",
        "",
        *_table(["split", "rows"], [[s, counts[s]] for s in splits]),
        "## Layout",
        "",
        "`data/<split>/<batch>-<chunk>.parquet`; each export adds new files and never rewrites earlier ones.",
        "`_screenmill/` keeps the export index and state.",
        "",
    ]
    return "\n".join(lines)
