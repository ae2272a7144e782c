"""Review routing, Label Studio tasks and annotations → reviewed rows, exactly in original pixels."""

from __future__ import annotations

import copy

import pytest
from screenmill.stages.review import (
    LABEL_CONFIG,
    ReviewPolicy,
    apply_quota,
    image_url,
    reviewed_from_annotation,
    route_reasons,
    to_task,
)


def _label(label_id, annotator="ocr", text="Sign in", box=(100, 200, 300, 260), conf=0.9, recipe="ocr-text-click"):
    x0, y0, x1, y1 = box
    return {
        "label_id": label_id, "screenshot_id": "s" * 64, "image_width": 1920, "image_height": 1080,
        "instruction": f'click "{text}"', "element_text": text, "x0": x0, "y0": y0, "x1": x1, "y1": y1,
        "click_x": (x0 + x1) / 2, "click_y": (y0 + y1) / 2, "confidence": conf, "annotator": annotator,
        "recipe": recipe, "recipe_version": "1",
    }  # fmt: skip


def test_routing_reasons():
    policy = ReviewPolicy(min_confidence=0.5, disagreement_iou=0.5, qa_rate=0.0)
    labels = [
        _label("a", conf=0.3),
        _label("b", annotator="vllm:m", box=(110, 205, 310, 265)),  # agrees with a (points inside)
        _label("c", text="Help", box=(0, 0, 50, 20)),
        _label("d", annotator="vllm:m", text="Help", box=(900, 900, 1000, 950)),  # disagrees with c
        _label("e", text="Only OCR saw this"),
    ]
    routed = route_reasons(labels, policy)
    assert routed == {"a": ["low_confidence"], "c": ["disagreement"], "d": ["disagreement"]}
    everything = route_reasons(labels, ReviewPolicy(qa_rate=1.0))
    assert all("qa_sample" in r for r in everything.values()) and len(everything) == 5
    sample = [f"id{i}" for i in range(4000)]
    picked = route_reasons([_label(i) for i in sample], ReviewPolicy(qa_rate=0.1, min_confidence=0.0))
    assert 300 < len(picked) < 500
    assert picked == route_reasons([_label(i) for i in sample], ReviewPolicy(qa_rate=0.1, min_confidence=0.0))
    with pytest.raises(ValueError):
        ReviewPolicy(qa_rate=2)


def test_quota_is_per_annotator_and_recipe():
    routed = [_label(f"o{i}") for i in range(5)] + [_label(f"v{i}", annotator="vllm:m") for i in range(3)]
    kept, over = apply_quota(routed, 2, "seed")
    assert len(kept) == 4 and len(over) == 4
    assert sorted(r["annotator"] for r in kept) == ["ocr", "ocr", "vllm:m", "vllm:m"]
    assert apply_quota(routed, None, "s") == (routed, [])


def test_image_urls():
    assert image_url("gs://bucket/a.png", None) == "gs://bucket/a.png"
    assert image_url("/data/shots/a b.png", "/data") == "/data/local-files/?d=shots/a%20b.png"
    with pytest.raises(ValueError, match="outside"):
        image_url("/elsewhere/a.png", "/data")


def test_task_round_trips_through_an_accepting_review():
    label = _label("L1", box=(123.25, 77.5, 410.0, 133.75))
    task = to_task(label, {"source_uri": "/data/a.png"}, "/data", ["low_confidence"])
    assert task["data"]["label_id"] == "L1" and task["data"]["image"] == "/data/local-files/?d=a.png"
    pred = task["predictions"][0]
    assert pred["score"] == 0.9 and pred["model_version"] == "ocr/ocr-text-click@1"
    assert "<RectangleLabels" in LABEL_CONFIG and "<KeyPointLabels" in LABEL_CONFIG

    task = {**task, "id": 7}
    verdict = {"from_name": "verdict", "to_name": "image", "type": "choices", "value": {"choices": ["accept"]}}
    accepted = {"id": 70, "completed_by": {"email": "r@x"}, "lead_time": 3.5, "created_at": "2026-11-23T10:00:00Z",
                "result": copy.deepcopy(pred["result"]) + [verdict]}  # fmt: skip
    row = reviewed_from_annotation(task, accepted, "run")
    assert (row.verdict, row.x0, row.click_x, row.instruction) == ("accept", None, None, None)
    assert (row.reviewer, row.lead_time_s, row.task_id, row.annotation_id) == ("r@x", 3.5, 7, 70)


def test_moved_box_and_new_instruction_are_a_fix_in_exact_pixels():
    label = _label("L2", box=(100, 200, 300, 260))
    task = {**to_task(label, {"source_uri": "/d/a.png"}, "/d", ["qa_sample"]), "id": 8}
    moved = copy.deepcopy(task["predictions"][0]["result"])
    moved[0]["value"].update(x=25.0, y=50.0, width=12.5, height=10.0)  # percent of 1920 x 1080
    moved.append({"from_name": "instruction_fix", "to_name": "image", "type": "textarea",
                  "value": {"text": ["  click  the Sign in button "]}})  # fmt: skip
    moved.append({"from_name": "verdict", "type": "choices", "value": {"choices": ["accept"]}})
    row = reviewed_from_annotation(task, {"id": 80, "completed_by": 3, "result": moved}, "run")
    assert row.verdict == "fix"  # accepted, but with changes
    assert (row.x0, row.y0, row.x1, row.y1) == (480.0, 540.0, 720.0, 648.0)
    assert row.click_x is None and row.instruction == "click the Sign in button" and row.reviewer == "3"


def test_reject_and_foreign_tasks():
    task = {**to_task(_label("L3"), {"source_uri": "/d/a.png"}, "/d", []), "id": 9}
    rejected = {"id": 90, "completed_by": 1, "result": [{"from_name": "verdict", "value": {"choices": ["reject"]}}]}
    assert reviewed_from_annotation(task, rejected, "run").verdict == "reject"
    with pytest.raises(ValueError, match="not a screenmill task"):
        reviewed_from_annotation({"id": 1, "data": {}}, rejected, "run")
    with pytest.raises(ValueError, match="unknown verdict"):
        bad = {"id": 2, "result": [{"from_name": "verdict", "value": {"choices": ["x"]}}]}
        reviewed_from_annotation(task, bad, "r")


def test_completed_annotations_become_rows_and_bad_ones_dead_letters():
    from screenmill.stages.review import reviewed_from_completed

    task = {**to_task(_label("L4"), {"source_uri": "/d/a.png"}, "/d", []), "id": 10}
    ok = {"id": 100, "completed_by": 1, "result": [{"from_name": "verdict", "value": {"choices": ["reject"]}}]}
    bad = {"id": 101, "result": [{"from_name": "verdict", "value": {"choices": ["maybe"]}}]}
    reviewed, dead = reviewed_from_completed([(task, ok), (task, bad), ({"id": 11, "data": {}}, ok)], 5, "run")
    assert [(r.label_id, r.verdict, r.annotation_id) for r in reviewed] == [("L4", "reject", 100)]
    assert [(d.stage, d.reason, d.input_id) for d in dead] == [
        ("review_pull", "bad_annotation", "labelstudio://project/5/task/10/annotation/101"),
        ("review_pull", "bad_annotation", "labelstudio://project/5/task/11/annotation/100"),
    ]
    assert "unknown verdict 'maybe'" in dead[0].error and dead[1].payload_ref == dead[1].input_id


def test_route_and_quota_dofns():
    from screenmill.stages.review import ReviewConfig, _Quota, _Route

    labels = [_label("low", conf=0.1), _label("ok", text="Fine"), _label("far", conf=0.2)]
    route = _Route(ReviewConfig("run", "p", ReviewPolicy(qa_rate=0.0), "/data"))
    route.setup()
    out = list(route.process(("s", {"labels": labels, "shots": ["/data/a.png"]})))
    assert [(key, task["data"]["label_id"]) for key, task in out] == [
        (("ocr", "ocr-text-click"), "far"),
        (("ocr", "ocr-text-click"), "low"),
    ]
    dead = list(route.process(("s", {"labels": labels, "shots": ["/elsewhere/a.png"]})))
    assert [d.value.reason for d in dead] == ["unservable_image"] * 2
    orphan = list(route.process(("s", {"labels": labels, "shots": []})))
    assert "no screenshot row" in orphan[0].value.error

    tasks = [task for _, task in out] * 3
    kept = list(_Quota(ReviewPolicy(quota_per_source=2)).process((("ocr", "x"), tasks)))
    assert len(kept) == 2
    assert len(list(_Quota(ReviewPolicy()).process((("ocr", "x"), tasks)))) == 6


def test_agreement_figures():
    import datetime as dt

    from screenmill.schemas.records import ReviewedLabel
    from screenmill.stages.review import agreement, agreement_lines

    labels = [_label("a"), _label("b"), _label("c"), _label("v", annotator="vllm:m")]

    def rev(label_id, verdict, box=(None, None, None, None), when=0):
        t = dt.datetime(2026, 11, 23, tzinfo=dt.UTC) + dt.timedelta(seconds=when)
        return ReviewedLabel(label_id, "s", verdict, None, *box, None, None, "r", 1.0, 1, 1, t, "run")

    figures = agreement(
        [
            rev("a", "accept"),
            rev("b", "fix", (100, 200, 200, 260)),
            rev("c", "accept"),
            rev("c", "reject", when=5),
            rev("v", "accept"),
        ],  # fmt: skip
        labels,
    )
    ocr = figures["ocr/ocr-text-click@1"]
    assert (ocr["reviewed"], ocr["rejected"]) == (3, 1)
    assert ocr["accepted_rate"] == pytest.approx(1 / 3)
    assert ocr["mean_iou"] == pytest.approx((1.0 + 0.5) / 2)
    assert ocr["point_in_box_rate"] == 1.0  # (200, 230) is on the corrected box's right edge
    assert figures["vllm:m/ocr-text-click@1"]["accepted_rate"] == 1.0
    assert list(agreement_lines(figures)) == [
        f"  {'ocr/ocr-text-click@1':<40} reviewed=    3 accepted=33.3% iou=0.75 in_box=1.0",
        f"  {'vllm:m/ocr-text-click@1':<40} reviewed=    1 accepted=100.0% iou=1.0 in_box=1.0",
    ]


def test_agreement_and_convert_count_the_same_review_when_two_tie_on_time():
    """Two reviews of a label at the same instant: the higher annotation id counts, in agreement figures and in the
    benchmark converter alike, whatever order the rows come in."""
    import datetime as dt

    from screenmill.annotators.formats import apply_review
    from screenmill.schemas.records import ReviewedLabel
    from screenmill.schemas.reviews import latest_reviews
    from screenmill.stages.review import agreement

    t = dt.datetime(2026, 11, 23, tzinfo=dt.UTC)
    accept = ReviewedLabel("a", "s", "accept", None, None, None, None, None, None, None, "r", 1.0, 1, 12, t, "run")
    reject = ReviewedLabel("a", "s", "reject", None, None, None, None, None, None, None, "r", 1.0, 1, 7, t, "run")
    for order in ([accept, reject], [reject, accept]):
        figures = agreement(order, [_label("a")])["ocr/ocr-text-click@1"]
        assert (figures["reviewed"], figures["rejected"], figures["accepted_rate"]) == (1, 0, 1.0)
        rows = [r.to_row() for r in order]
        assert apply_review(_label("a"), latest_reviews(rows)["a"], "apply")[1] is None  # kept, not rejected


def test_connection_reads_env_and_never_shows_the_token(tmp_path):
    from screenmill.stages.clients.labelstudio import Connection, ReviewConfigError

    token = tmp_path / "token"
    token.write_text("s3cr3t-token\n")
    c = Connection.from_env({"LABEL_STUDIO_URL": "http://127.0.0.1:8089/", "LABEL_STUDIO_TOKEN_FILE": str(token)})
    assert (c.url, c.token) == ("http://127.0.0.1:8089", "s3cr3t-token")
    assert "s3cr3t" not in repr(c)
    with pytest.raises(ReviewConfigError, match="LABEL_STUDIO_URL"):
        Connection.from_env({})
    with pytest.raises(ReviewConfigError, match="API_KEY"):
        Connection.from_env({"LABEL_STUDIO_URL": "http://x"})
    with pytest.raises(ReviewConfigError, match="TOKEN_FILE"):
        Connection.from_env({"LABEL_STUDIO_URL": "http://x", "LABEL_STUDIO_TOKEN_FILE": str(tmp_path / "missing")})


def test_snapshot_export_shape_uses_the_annotations_own_prediction():
    label = _label("L4")
    task = to_task(label, {"source_uri": "/d/a.png"}, "/d", [])
    prediction = task.pop("predictions")[0]  # exports list prediction ids on the task, the full one on the annotation
    exported = {**task, "id": 11, "predictions": [5]}
    annotation = {"id": 12, "completed_by": 1, "prediction": prediction,
                  "result": copy.deepcopy(prediction["result"])}  # fmt: skip
    row = reviewed_from_annotation(exported, annotation, "run")
    assert (row.verdict, row.x0, row.click_x) == ("accept", None, None)
