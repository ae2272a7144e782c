"""Benchmark formats (:mod:`screenmill.annotators.formats`): box layouts per benchmark, reviews, dead letters."""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os

import pytest
from screenmill.annotators.formats import (
    Origin,
    Unwritable,
    apply_review,
    convert_rows,
    data_type,
    output_name,
    page_application,
    pixel_box,
    platform_name,
    screenshot_origin,
    to_osworld_g,
    to_screenspot,
)
from screenmill.schemas.coords import box_to_pixels
from screenmill.schemas.records import GroundingLabel, RenderSettings, ReviewedLabel, Screenshot

T0 = _dt.datetime(2026, 11, 22, 12, 0, tzinfo=_dt.UTC)


def label_row(sid: str, n: int, box=(10.0, 5.0, 30.0, 25.0), width=64, height=48, **kw) -> dict:
    """A ``grounding`` row: label ``n`` of screenshot ``sid``."""
    fields = dict(
        label_id=f"{sid[:6]}-{n:02d}",
        screenshot_id=sid,
        image_width=width,
        image_height=height,
        instruction=f"click item {n}",
        element_text=f"Item {n}",
        role="button",
        x0=box[0],
        y0=box[1],
        x1=box[2],
        y1=box[3],
        click_x=(box[0] + box[2]) / 2,
        click_y=(box[1] + box[3]) / 2,
        coord_system="pixel",
        native_box=list(box),
        native_point=None,
        ref_width=width,
        ref_height=height,
        confidence=0.9,
        annotator="ocr",
        annotator_version="1",
        recipe="ocr_text",
        recipe_version="1",
        config_hash="c0ffee",
        run_id="run-1",
    )
    fields.update(kw)
    return GroundingLabel(**fields).to_row()


def shot_row(sid: str, uri: str, width=64, height=48, fmt="PNG", orientation=1, byte_size=None, **kw) -> dict:
    """A ``screenshots`` row; ``byte_size`` defaults to the file's size (1 when there is no file); ``kw`` sets other
    fields (``source_mode``, ``episode_id``, ``page_uri``, ``render``)."""
    if byte_size is None:
        byte_size = os.path.getsize(uri) if os.path.isfile(uri) else 1
    return Screenshot(
        screenshot_id=sid,
        source_uri=uri,
        width=width,
        height=height,
        format=fmt,
        source_mode=kw.pop("source_mode", "RGB"),
        exif_orientation=orientation,
        byte_size=byte_size,
        ingest_time=T0,
        run_id="run-1",
        **kw,
    ).to_row()


def review_row(label_id: str, verdict: str, minutes: int = 0, annotation_id: int = 1, **fix) -> dict:
    """A ``reviewed`` row ``minutes`` after T0; ``fix`` holds the corrections."""
    fields = dict(instruction=None, x0=None, y0=None, x1=None, y1=None, click_x=None, click_y=None)
    fields.update(fix)
    return ReviewedLabel(
        label_id=label_id,
        screenshot_id="",
        verdict=verdict,
        reviewer="r@example.com",
        lead_time_s=3.0,
        task_id=annotation_id,
        annotation_id=annotation_id,
        reviewed_at=T0 + _dt.timedelta(minutes=minutes),
        run_id="review-1",
        **fields,
    ).to_row()


def test_apply_review_under_each_mode():
    label = label_row("a" * 64, 1)
    fix = review_row(label["label_id"], "fix", x0=12.5, y1=20.0, instruction="press item 1")
    row, reason = apply_review(label, fix, "apply")
    assert reason is None
    assert (row["x0"], row["y0"], row["x1"], row["y1"]) == (12.5, 5.0, 30.0, 20.0)  # None corrections leave values
    assert row["instruction"] == "press item 1" and row["click_x"] == label["click_x"]
    assert label["x0"] == 10.0  # the input row is not modified
    reject = review_row(label["label_id"], "reject")
    accept = review_row(label["label_id"], "accept", x0=99.0)  # corrections only count for `fix`
    assert apply_review(label, reject, "apply") == (None, "rejected")
    assert apply_review(label, reject, "accept-only") == (None, "rejected")
    assert apply_review(label, None, "accept-only") == (None, "unreviewed")
    assert apply_review(label, None, "apply") == (label, None)
    assert apply_review(label, accept, "accept-only") == (label, None)
    assert apply_review(label, reject, "ignore") == (label, None)
    assert apply_review(label, fix, "ignore")[0]["x0"] == 10.0
    with pytest.raises(ValueError):
        apply_review(label, None, "strict")


@pytest.mark.parametrize(
    "box",
    [(10.0, 5.0, 30.0, 25.0), (0.1, 0.2, 63.9, 47.7), (12.345678901, 3.3, 40.123456789, 9.87654321), (0, 0, 64, 48)],
)
def test_screenspot_bbox_layouts_round_trip(box):
    sid = "b" * 64
    label, shot = label_row(sid, 1, box=box), shot_row(sid, "unused.png")
    v1 = to_screenspot(label, shot, "x.png", "web")
    assert list(v1) == ["img_filename", "bbox", "instruction", "data_type", "data_source"]
    x, y, w, h = v1["bbox"]
    assert box_to_pixels(v1["bbox"], "xywh_pixel", 64, 48) == tuple(float(v) for v in box)  # exact
    assert (x, y) == (box[0], box[1])
    assert x + w == pytest.approx(box[2], abs=1e-9) and y + h == pytest.approx(box[3], abs=1e-9)  # SeeClick's math
    assert to_screenspot(label, shot, "x.png", "web", "v2")["bbox"] == v1["bbox"]
    pro = to_screenspot(label, shot, "x.png", "web", "pro")
    assert pro["bbox"] == [float(v) for v in box] and pro["img_size"] == [64, 48]
    assert pro["ui_type"] == pro["data_type"] == "text" and pro["id"] == label["label_id"]
    assert pro["data_source"] == "web" and pro["instruction_cn"] == pro["instruction"] == label["instruction"]
    assert (pro["platform"], pro["application"], pro["group"]) == ("unknown", "unknown", "unknown")  # no origin given


def test_screenspot_clamps_orders_and_types():
    sid = "c" * 64
    shot = shot_row(sid, "unused.png")
    flipped = label_row(sid, 1, box=(70.0, 30.0, 50.0, -4.0), element_text="  ")  # corners swapped, partly outside
    rec = to_screenspot(flipped, shot, "x.png", "s", "pro")
    assert rec["bbox"] == [50.0, 0.0, 64.0, 30.0]
    assert rec["data_type"] == "icon" and data_type(label_row(sid, 2, element_text=None)) == "icon"
    with pytest.raises(Unwritable) as e:
        pixel_box(label_row(sid, 3, box=(70.0, 5.0, 90.0, 9.0)), shot)
    assert e.value.reason == "empty_box"
    with pytest.raises(Unwritable) as e:
        pixel_box(label_row(sid, 4, width=48, height=64), shot)
    assert e.value.reason == "frame_mismatch"
    with pytest.raises(ValueError):
        to_screenspot(label_row(sid, 5), shot, "x.png", "s", "v3")


def test_osworld_g_record_is_xywh_as_its_evaluator_reads_it():
    sid = "d" * 64
    label = label_row(sid, 1, box=(1422.9, 326.4, 1449.58, 354.8), width=1920, height=1080, role="Button")
    rec = to_osworld_g(label, shot_row(sid, "u.png", 1920, 1080), "d.png")
    assert list(rec) == ["id", "image_path", "image_size", "instruction", "box_type", "box_coordinates", "GUI_types"]
    assert rec["box_type"] == "bbox" and rec["image_size"] == [1920, 1080] and rec["GUI_types"] == ["Button"]
    corner, size = rec["box_coordinates"][:2], rec["box_coordinates"][2:]  # as OSWorld-G's _eval splits it
    assert corner == [1422.9, 326.4]
    assert box_to_pixels(rec["box_coordinates"], "xywh_pixel", 1920, 1080) == (1422.9, 326.4, 1449.58, 354.8)
    cx, cy = label["click_x"], label["click_y"]
    assert corner[0] <= cx <= corner[0] + size[0] and corner[1] <= cy <= corner[1] + size[1]
    iconless = label_row(sid, 2, width=1920, height=1080, role=None)
    assert to_osworld_g(iconless, shot_row(sid, "u", 1920, 1080), "d")["GUI_types"] == []


def test_output_names():
    assert output_name("screenspot", "web") == "screenspot_web.json"
    assert output_name("screenspot", "web", "v2") == "screenspot_web_v2.json"
    assert output_name("screenspot", "vscode_macos", "pro") == "vscode_macos.json"
    assert output_name("osworld-g", "test") == "OSWorld-G_test.json"


def test_convert_rows_reports_a_bad_rotated_image(tmp_path):
    path = tmp_path / "broken.jpg"
    path.write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    sid = hashlib.sha256(path.read_bytes()).hexdigest()
    shot = shot_row(sid, str(path), 60, 40, "JPEG", 6)
    summary = convert_rows([label_row(sid, 1, width=60, height=40)], [shot], [], str(tmp_path / "d"), "screenspot")
    assert (summary.written, summary.dropped["bad_image"]) == (0, 1)
    (dead,) = [json.loads(x) for x in (tmp_path / "d" / "_dead_letter.jsonl").read_text().splitlines()]
    assert dead["reason"] == "bad_image" and dead["payload_ref"] == str(path)


# ------------------------------------------------------------------------------------------------ origin


def render(mobile: bool) -> RenderSettings:
    """The render settings of a page rendered at a phone (``mobile``) or desktop viewport."""
    return (
        RenderSettings(390, 844, 3.0, True, "light", 0, 0)
        if mobile
        else RenderSettings(1280, 800, 1.0, False, "light", 0, 0)
    )


def test_a_rendered_page_is_web_or_mobile_and_its_site_is_the_application():
    sid = "e" * 64
    phone = shot_row(sid, "/out/images/e.png", page_uri="https://www.shop.example.com/cart?x=1", render=render(True))
    assert screenshot_origin(phone, platform="desktop") == Origin("mobile", "shop.example.com")  # --platform: unused
    desk = shot_row(sid, "/out/images/e.png", page_uri="file:///site/pages/login.html", render=render(False))
    assert screenshot_origin(desk) == Origin("web", "login")
    assert page_application("file:///site/shop/index.html") == "shop"
    assert page_application("file:///site/Pricing%20page.html") == "Pricing page"
    assert page_application("http://localhost:8000/") == "localhost"
    label = label_row(sid, 1)
    pro = to_screenspot(label, phone, "e.png", "split", "pro", screenshot_origin(phone))
    assert (pro["platform"], pro["application"], pro["group"]) == ("mobile", "shop.example.com", "mobile")
    assert pro["data_source"] == "split" and pro["instruction_cn"] == "click item 1"


def test_an_episode_step_takes_the_manifests_platform_and_a_plain_screenshot_the_fallback(tmp_path):
    episode = tmp_path / "screenagent_task002"
    (episode / "frames").mkdir(parents=True)
    (episode / "episode.json").write_text(json.dumps({"episode_id": "task002", "platform": "desktop-linux (VNC)"}))
    step = shot_row("f" * 64, str(episode / "frames" / "s0.jpg"), episode_id="task002", step_index=0)
    assert screenshot_origin(step, platform="web") == Origin("desktop", "screenagent_task002")
    other = shot_row("f" * 64, str(episode / "frames" / "s0.jpg"), episode_id="another-episode", step_index=0)
    assert screenshot_origin(other, platform="mobile") == Origin("mobile", "frames")  # not its manifest
    (episode / "episode.json").write_text(json.dumps({"episode_id": "task002", "application": "LibreOffice Writer"}))
    assert screenshot_origin(step, platform="web") == Origin("web", "LibreOffice Writer")  # no platform: fallback
    (episode / "episode.json").write_text("{not json")
    assert screenshot_origin(step) == Origin("unknown", "frames")
    plain = shot_row("f" * 64, str(tmp_path / "phone-shots" / "a.png"))
    assert screenshot_origin(plain) == Origin("unknown", "phone-shots")
    assert screenshot_origin(plain, platform="mobile") == Origin("mobile", "phone-shots")
    with pytest.raises(ValueError):
        screenshot_origin(plain, platform="tv")


@pytest.mark.parametrize(
    "text, platform",
    [
        ("desktop-linux (VNC, 1024x768)", "desktop"),
        ("Android 13", "mobile"),
        ("iOS", "mobile"),
        ("Windows 11", "desktop"),
        ("web browser", "web"),
        ("web", "web"),
        ("VNC", None),
        ("desktop and mobile", None),
        (None, None),
        (3, None),
    ],
)
def test_platform_names(text, platform):
    assert platform_name(text) == platform
