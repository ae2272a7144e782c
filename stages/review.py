"""Human review: which labels go to Label Studio, what a task looks like there, and what comes back.

:class:`RouteToReview` is the stage (routing + chunked push); the pieces it is made of are pure functions (the
Label Studio calls are in :mod:`screenmill.stages.clients.labelstudio`):

* :class:`ReviewPolicy` / :func:`route_reasons`: why a label is doubtful — ``low_confidence``, ``disagreement``
  (another annotator labelled the same element elsewhere: box IoU below a threshold and neither click point inside
  the other's box), ``qa_sample`` (a stable random sample), with a per-source quota (annotator + recipe);
* :func:`to_task`: a label + its screenshot → a Label Studio task with a prediction (box + click point in Label
  Studio percent, ``model_version``, ``score``); images are referenced by URL (local-files serving or cloud storage),
  never inlined;
* :func:`reviewed_from_annotation`: a completed annotation → a :class:`ReviewedLabel` in original pixels
  (:func:`reviewed_from_completed`: every completed annotation of a project, the bad ones as dead letters);
* :func:`agreement` / :func:`agreement_lines`: how often reviewers agreed with each annotator and recipe;
* :func:`write_review_report`: the JSON report of ``screenmill review push|pull`` under ``OUT/_review/``.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import os
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import quote

import apache_beam as beam
from apache_beam.metrics import Metrics
from screenmill.schemas.coords import (
    box_from_pixels,
    box_iou,
    box_to_pixels,
    point_from_pixels,
    point_in_box,
    point_to_pixels,
)
from screenmill.schemas.records import DeadLetter, ReviewedLabel, utcnow
from screenmill.schemas.reviews import latest_reviews
from screenmill.schemas.tables import report_path
from screenmill.stages.base import METRICS_PREFIX, Failure, Stage, StageDoFn, StageOutputs

STAGE = "review"
VERDICTS = ("accept", "fix", "reject")
REASONS = ("low_confidence", "disagreement", "qa_sample")

LABEL_CONFIG = """<View>
  <Header value="$instruction"/>
  <Image name="image" value="$image" zoom="true" zoomControl="true"/>
  <RectangleLabels name="box" toName="image">
    <Label value="target" background="#e4572e"/>
  </RectangleLabels>
  <KeyPointLabels name="point" toName="image">
    <Label value="click" background="#2e86e4"/>
  </KeyPointLabels>
  <Choices name="verdict" toName="image" choice="single" showInline="true">
    <Choice value="accept"/>
    <Choice value="fix"/>
    <Choice value="reject"/>
  </Choices>
  <TextArea name="instruction_fix" toName="image" placeholder="corrected instruction (optional)" maxSubmissions="1"/>
</View>"""


@dataclasses.dataclass(frozen=True)
class ReviewPolicy:
    """Which labels a person should look at.

    Attributes:
        min_confidence: labels with a lower confidence are routed (``low_confidence``).
        disagreement_iou: a label whose best match by another annotator overlaps less than this is routed.
        qa_rate: share of all labels routed as a random QA sample (stable: the same labels every run).
        quota_per_source: at most this many routed labels per (annotator, recipe); None: no quota.
        seed: salt of the QA sample.
    """

    min_confidence: float = 0.5
    disagreement_iou: float = 0.5
    qa_rate: float = 0.02
    quota_per_source: int | None = None
    seed: str = "screenmill-review"

    def __post_init__(self):
        if not 0.0 <= self.min_confidence <= 1.0 or not 0.0 <= self.disagreement_iou <= 1.0:
            raise ValueError("ReviewPolicy: min_confidence and disagreement_iou must be in [0, 1]")
        if not 0.0 <= self.qa_rate <= 1.0:
            raise ValueError("ReviewPolicy: qa_rate must be in [0, 1]")
        if self.quota_per_source is not None and self.quota_per_source < 0:
            raise ValueError("ReviewPolicy: quota_per_source must be >= 0")


def _unit(label_id: str, seed: str) -> float:
    digest = hashlib.sha256(f"{seed}:{label_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _key_text(label: Mapping[str, Any]) -> str:
    text = label.get("element_text") or label.get("instruction") or ""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _box(label: Mapping[str, Any]) -> tuple[float, float, float, float]:
    return (label["x0"], label["y0"], label["x1"], label["y1"])


def _agrees(a: Mapping[str, Any], b: Mapping[str, Any], iou: float) -> bool:
    if point_in_box((a["click_x"], a["click_y"]), _box(b)) or point_in_box((b["click_x"], b["click_y"]), _box(a)):
        return True
    return box_iou(_box(a), _box(b)) >= iou


def route_reasons(labels: Iterable[Mapping[str, Any]], policy: ReviewPolicy) -> dict[str, list[str]]:
    """``{label_id: [reasons]}`` for the labels of ONE screenshot that should be reviewed (others are absent).

    Args:
        labels: grounding-label rows of one screenshot (any annotators).
        policy: the routing policy.
    """
    labels = list(labels)
    by_text: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for label in labels:
        by_text[_key_text(label)].append(label)
    routed: dict[str, list[str]] = {}
    for label in labels:
        reasons = []
        if label["confidence"] < policy.min_confidence:
            reasons.append("low_confidence")
        others = [o for o in by_text[_key_text(label)] if o["annotator"] != label["annotator"]]
        if others and not any(_agrees(label, o, policy.disagreement_iou) for o in others):
            reasons.append("disagreement")
        if _unit(label["label_id"], policy.seed) < policy.qa_rate:
            reasons.append("qa_sample")
        if reasons:
            routed[label["label_id"]] = reasons
    return routed


def apply_quota(routed: list[Mapping[str, Any]], quota: int | None, seed: str) -> tuple[list, list]:
    """Keep at most ``quota`` labels per (annotator, recipe), chosen by a stable hash; return (kept, over quota)."""
    if quota is None:
        return list(routed), []
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for label in routed:
        groups[(label["annotator"], label["recipe"])].append(label)
    kept, over = [], []
    for group in groups.values():
        k, o = within_quota(group, quota, seed, lambda r: r["label_id"])
        kept += k
        over += o
    return kept, over


def within_quota(group: list, quota: int | None, seed: str, label_id) -> tuple[list, list]:
    """One source's items → (the ``quota`` chosen by a stable hash of ``label_id(item)``, the rest)."""
    if quota is None:
        return list(group), []
    ordered = sorted(group, key=lambda r: _unit(label_id(r), seed))
    return ordered[:quota], ordered[quota:]


def image_url(source_uri: str, files_root: str | None) -> str:
    """How Label Studio reaches the screenshot: cloud URIs as they are (its cloud storage resolves them), local
    files through its local-files serving (``/data/local-files/?d=<path under LOCAL_FILES_DOCUMENT_ROOT>``).

    Raises:
        ValueError: a local file outside ``files_root`` (Label Studio could not serve it).
    """
    if "://" in source_uri and not source_uri.startswith("file://"):
        return source_uri
    path = os.path.abspath(source_uri.removeprefix("file://"))
    root = os.path.abspath(files_root or "/")
    rel = os.path.relpath(path, root)
    if rel.startswith(".."):
        raise ValueError(f"{source_uri} is outside the Label Studio files root {root}")
    return "/data/local-files/?d=" + quote(rel)


def to_task(label: Mapping[str, Any], shot: Mapping[str, Any], files_root: str | None, reasons: list[str]) -> dict:
    """A Label Studio task (data + one prediction) for a grounding label; ``data.label_id`` is its stable key."""
    w, h = label["image_width"], label["image_height"]
    x, y, bw, bh = box_from_pixels(_box(label), "ls_percent", w, h)
    px, py = point_from_pixels((label["click_x"], label["click_y"]), "ls_percent", w, h)
    common = {"to_name": "image", "original_width": w, "original_height": h, "image_rotation": 0}
    result = [
        {"id": "box", "from_name": "box", "type": "rectanglelabels", **common,
         "value": {"x": x, "y": y, "width": bw, "height": bh, "rotation": 0, "rectanglelabels": ["target"]}},
        {"id": "point", "from_name": "point", "type": "keypointlabels", **common,
         "value": {"x": px, "y": py, "width": 0.6, "keypointlabels": ["click"]}},
    ]  # fmt: skip
    return {
        "data": {
            "image": image_url(shot["source_uri"], files_root),
            "instruction": label["instruction"],
            "label_id": label["label_id"],
            "screenshot_id": label["screenshot_id"],
            "source_uri": shot["source_uri"],
            "annotator": label["annotator"],
            "recipe": f"{label['recipe']}@{label['recipe_version']}",
            "review_reasons": ",".join(reasons),
        },
        "predictions": [
            {
                "model_version": f"{label['annotator']}/{label['recipe']}@{label['recipe_version']}",
                "score": float(label["confidence"]),
                "result": result,
            }
        ],
    }


def _time(value: Any) -> _dt.datetime:
    if isinstance(value, _dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=_dt.UTC)
    if isinstance(value, str) and value:
        return _dt.datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(_dt.UTC)
    return _dt.datetime.now(_dt.UTC)


def _reviewer(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("email") or value.get("username") or value.get("id"))
    return str(value)


def _predicted_values(task: Mapping[str, Any], annotation: Mapping[str, Any]) -> dict[str, dict]:
    """The prediction's geometry by result type: from the annotation's own ``prediction`` (snapshot exports) or the
    task's ``predictions`` (task listings)."""
    out: dict[str, dict] = {}
    predictions = [annotation.get("prediction"), *(task.get("predictions") or [])]
    for prediction in predictions:
        if not isinstance(prediction, Mapping):
            continue
        for r in prediction.get("result") or []:
            out.setdefault(r.get("type"), r.get("value") or {})
    return out


def _same_geometry(value: Mapping[str, Any], predicted: Mapping[str, Any] | None, tol: float = 1e-6) -> bool:
    if not predicted:
        return False
    keys = ("x", "y", "width", "height") if "height" in value else ("x", "y")
    return all(abs(float(value.get(k, 0)) - float(predicted.get(k, 0))) <= tol for k in keys)


def reviewed_from_annotation(task: Mapping[str, Any], annotation: Mapping[str, Any], run_id: str) -> ReviewedLabel:
    """A completed Label Studio annotation of one of our tasks → a :class:`ReviewedLabel` in original pixels.

    A box or point equal to the task's prediction counts as unchanged (Label Studio copies predictions into the
    annotation). The verdict is the reviewer's choice, except that ``accept`` with a changed box, point or
    instruction is ``fix``; without a choice it is ``fix`` when something changed and ``accept`` otherwise. Percent
    coordinates convert back with the result's original size.

    Raises:
        ValueError: the task is not one of ours (no ``label_id``) or a result has an unknown verdict.
    """
    data = task.get("data") or {}
    if not data.get("label_id"):
        raise ValueError(f"task {task.get('id')} has no data.label_id: not a screenmill task")
    verdict = None
    box = point = instruction = None
    predicted = _predicted_values(task, annotation)
    for r in annotation.get("result") or []:
        value = r.get("value") or {}
        w, h = r.get("original_width"), r.get("original_height")
        if r.get("type") in ("rectanglelabels", "keypointlabels") and _same_geometry(value, predicted.get(r["type"])):
            continue  # the prediction, kept as it was
        if r.get("from_name") == "verdict" and value.get("choices"):
            verdict = value["choices"][0]
            if verdict not in VERDICTS:
                raise ValueError(f"unknown verdict {verdict!r}")
        elif r.get("type") == "rectanglelabels" and w and h:
            box = box_to_pixels((value["x"], value["y"], value["width"], value["height"]), "ls_percent", w, h)
        elif r.get("type") == "keypointlabels" and w and h:
            point = point_to_pixels((value["x"], value["y"]), "ls_percent", w, h)
        elif r.get("from_name") == "instruction_fix" and value.get("text"):
            text = " ".join(" ".join(value["text"]).split())
            instruction = text or None
    corrected = bool(box or point or instruction)
    if verdict is None or (verdict == "accept" and corrected):
        verdict = "fix" if corrected else "accept"
    return ReviewedLabel(
        label_id=data["label_id"],
        screenshot_id=data.get("screenshot_id", ""),
        verdict=verdict,
        instruction=instruction,
        x0=box[0] if box else None,
        y0=box[1] if box else None,
        x1=box[2] if box else None,
        y1=box[3] if box else None,
        click_x=point[0] if point else None,
        click_y=point[1] if point else None,
        reviewer=_reviewer(annotation.get("completed_by")),
        lead_time_s=annotation.get("lead_time"),
        task_id=int(task["id"]),
        annotation_id=int(annotation["id"]),
        reviewed_at=_time(annotation.get("updated_at") or annotation.get("created_at")),
        run_id=run_id,
    )


def reviewed_from_completed(
    completed: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]], project: int, run_id: str
) -> tuple[list[ReviewedLabel], list[DeadLetter]]:
    """Every completed ``(task, annotation)`` of Label Studio project ``project`` → reviewed rows, plus one dead letter
    (stage ``review_pull``, reason ``bad_annotation``, named ``labelstudio://project/<p>/task/<t>/annotation/<a>``)
    per annotation :func:`reviewed_from_annotation` refuses (not our task, an unknown verdict, a malformed result).
    """
    reviewed, dead = [], []
    for task, annotation in completed:
        try:
            reviewed.append(reviewed_from_annotation(task, annotation, run_id))
        except (ValueError, KeyError, TypeError) as e:
            where = f"labelstudio://project/{project}/task/{task.get('id')}/annotation/{annotation.get('id')}"
            text = f"{type(e).__name__}: {e}"
            dead.append(DeadLetter(where, "review_pull", "bad_annotation", text, where, run_id, utcnow()))
    return reviewed, dead


def agreement(reviewed: Iterable[ReviewedLabel], labels: Iterable[Mapping[str, Any]]) -> dict[str, dict]:
    """Per ``annotator/recipe@version``: how often reviewers agreed with the labels.

    ``accepted_rate`` = accepted / reviewed; over the labels not rejected, ``mean_iou`` = mean IoU of the label's box
    with the reviewer's box (1 where the box was kept) and ``point_in_box_rate`` = share whose click point lies in
    the reviewer's box. The latest review of a label counts (:func:`screenmill.schemas.reviews.latest_reviews`: latest
    ``reviewed_at``, then highest ``annotation_id``).
    """
    by_id = {lab["label_id"]: lab for lab in labels}
    latest = latest_reviews(reviewed)
    groups: dict[str, list[tuple[Mapping[str, Any], ReviewedLabel]]] = defaultdict(list)
    for label_id, r in latest.items():
        lab = by_id.get(label_id)
        if lab is not None:
            groups[f"{lab['annotator']}/{lab['recipe']}@{lab['recipe_version']}"].append((lab, r))
    out = {}
    for key, pairs in groups.items():
        kept = [(lab, r) for lab, r in pairs if r.verdict != "reject"]
        ious, inside = [], []
        for lab, r in kept:
            box = (r.x0, r.y0, r.x1, r.y1) if r.x0 is not None else _box(lab)
            ious.append(box_iou(_box(lab), box))
            inside.append(point_in_box((lab["click_x"], lab["click_y"]), box))
        out[key] = {
            "reviewed": len(pairs),
            "accepted_rate": sum(r.verdict == "accept" for _, r in pairs) / len(pairs),
            "rejected": len(pairs) - len(kept),
            "mean_iou": sum(ious) / len(ious) if ious else None,
            "point_in_box_rate": sum(inside) / len(inside) if inside else None,
        }
    return out


def agreement_lines(figures: Mapping[str, Mapping[str, Any]]) -> Iterator[str]:
    """One line per ``annotator/recipe@version`` of :func:`agreement`, as ``screenmill review pull`` prints them."""
    for key, f in sorted(figures.items()):
        iou, inside = (None if v is None else round(v, 3) for v in (f["mean_iou"], f["point_in_box_rate"]))
        yield f"  {key:<40} reviewed={f['reviewed']:>5} accepted={f['accepted_rate']:.1%} iou={iou} in_box={inside}"


def write_review_report(output: str, name: str, body: Mapping[str, Any]) -> str:
    """Write ``OUT/_review/<name>-<UTC stamp>.json`` (``body`` as JSON, values it cannot encode as text) and return
    its path."""
    from apache_beam.io.filesystems import FileSystems

    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    path = report_path(output, "review", f"{name}-{stamp}.json")
    with FileSystems.create(path) as f:
        f.write(json.dumps(body, indent=2, sort_keys=True, default=str).encode("utf-8"))
    return path


@dataclasses.dataclass(frozen=True)
class ReviewConfig:
    """Where routed labels go.

    Attributes:
        run_id: the run's id (dead letters carry it).
        project: Label Studio project title (created with :data:`LABEL_CONFIG` when missing).
        policy: the routing policy.
        files_root: the server's ``LOCAL_FILES_DOCUMENT_ROOT`` (local screenshots are served from under it).
        chunk_size: tasks per import request.
    """

    run_id: str
    project: str
    policy: ReviewPolicy = ReviewPolicy()
    files_root: str | None = "/"
    chunk_size: int = 200

    def __post_init__(self):
        if not self.run_id or not self.project:
            raise ValueError("ReviewConfig: run_id and project must be set")
        if self.chunk_size < 1:
            raise ValueError("ReviewConfig.chunk_size must be >= 1")


class _Route(StageDoFn):
    """(screenshot id, {labels, shots}) → ((annotator, recipe), task) for every routed label; dead letters.

    ``total`` counts labels (many per element); ``forwarded`` is counted by :class:`_Push`, once a task is there.
    """

    stage = STAGE
    count_inputs = False
    count_forwarded = False

    def __init__(self, config: ReviewConfig):
        super().__init__(config.run_id)
        self._config = config

    def start(self):
        self._reasons = {r: self.counters.counter(r) for r in REASONS}

    def handle(self, item):
        _, grouped = item
        labels, uris = list(grouped["labels"]), list(grouped["shots"])
        cfg = self._config
        self.counters.total.inc(len(labels))
        by_id = {lab["label_id"]: lab for lab in labels}
        for label_id, reasons in sorted(route_reasons(labels, cfg.policy).items()):
            label = by_id[label_id]
            try:
                if not uris:
                    raise ValueError("no screenshot row for this label")
                task = to_task(label, {"source_uri": uris[0]}, cfg.files_root, reasons)
            except ValueError as e:
                ref = uris[0] if uris else ""
                yield Failure(label_id, "unservable_image", str(e), ref)
                continue
            for r in reasons:
                self._reasons[r].inc()
            yield (label["annotator"], label["recipe"]), task


class _Quota(beam.DoFn):
    """((annotator, recipe), tasks) → at most ``quota_per_source`` of them, chosen by a stable hash."""

    def __init__(self, policy: ReviewPolicy):
        self._policy = policy

    def process(self, item):
        _, tasks = item
        policy = self._policy
        kept, over = within_quota(list(tasks), policy.quota_per_source, policy.seed, lambda t: t["data"]["label_id"])
        if over:
            Metrics.counter(METRICS_PREFIX + STAGE, "over_quota").inc(len(over))
        yield from kept


class _Push(StageDoFn):
    """Chunks of tasks → Label Studio (client and project made once per DoFn in ``setup``); yields task keys, each
    counted as ``forwarded``."""

    stage = STAGE
    count_inputs = False  # counted (as labels) by _Route

    def __init__(self, config: ReviewConfig):
        super().__init__(config.run_id)
        self._config = config

    def start(self):
        from screenmill.stages.clients.labelstudio import Connection, LabelStudioClient

        self._imported = self.counters.counter("imported")
        self._already = self.counters.counter("already_there")
        self._client = LabelStudioClient(Connection.from_env())
        self._project = self._client.ensure_project(self._config.project, LABEL_CONFIG)

    def handle(self, batch):
        local = [t["data"]["source_uri"] for t in batch if t["data"]["image"].startswith("/data/local-files/")]
        if local:
            folder = os.path.commonpath([os.path.dirname(p) for p in local])
            self._client.ensure_local_storage(self._project, folder)
        counts = self._client.push(self._project, batch, self._config.chunk_size)
        self._imported.inc(counts["imported"])
        self._already.inc(counts["already_there"])
        yield from (t["data"]["label_id"] for t in batch)


class RouteToReview(Stage):
    """``{"labels": grounding rows, "screenshots": screenshot rows}`` → keys of the tasks now in Label Studio, plus
    dead letters (stage ``review``).

    Labels are grouped per screenshot and routed with :func:`route_reasons`, the quota applies per (annotator,
    recipe), and tasks are pushed in chunks by a DoFn whose client comes from the environment
    (:class:`screenmill.stages.clients.labelstudio.Connection`). Counters (``screenmill.review``): ``total`` (labels),
    ``forwarded`` (tasks pushed or already there), ``imported``, ``already_there``, ``over_quota``, one per routing
    reason, and
    ``dropped_unservable_image`` (a screenshot Label Studio cannot reach). A push that gives up raises
    :class:`screenmill.stages.clients.retry.GaveUp` out of the pipeline; the project stays consistent and a rerun
    resumes.
    """

    def __init__(self, config: ReviewConfig):
        super().__init__()
        self._config = config

    def expand(self, inputs):
        cfg = self._config
        labels = inputs["labels"] | "LabelsByShot" >> beam.Map(lambda r: (r["screenshot_id"], r))
        shots = inputs["screenshots"] | "UriByShot" >> beam.Map(lambda r: (r["screenshot_id"], r["source_uri"]))
        joined = {"labels": labels, "shots": shots} | "Join" >> beam.CoGroupByKey()
        routed = self.apply_fn(joined, "Route", _Route(cfg))
        pushed = (
            routed.good
            | "BySource" >> beam.GroupByKey()
            | "Quota" >> beam.ParDo(_Quota(cfg.policy))
            | "Chunks" >> beam.BatchElements(min_batch_size=1, max_batch_size=cfg.chunk_size)
            | "Push" >> beam.ParDo(_Push(cfg))
        )
        return StageOutputs(pushed, routed.dead_letter)
