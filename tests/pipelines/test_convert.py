"""`screenmill convert` end to end: options, the table rows it reads, the files it writes, counts, the EXIF frame."""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image
from screenmill.annotators.evaluate.truth import load_truth
from screenmill.pipelines import cli
from screenmill.pipelines.convert import main
from screenmill.schemas.records import DeadLetter, GroundingLabel, ReviewedLabel, Screenshot

from tests.annotators.test_formats import label_row, render, review_row, shot_row

DT = "2026-11-22"
RED, BLUE = (230, 20, 20), (20, 20, 230)


# ------------------------------------------------------------------------------------------------ end to end


def _image_file(folder: Path, name: str, im: Image.Image, fmt: str, **save) -> tuple[str, str]:
    buf = io.BytesIO()
    im.save(buf, fmt, **save)
    data = buf.getvalue()
    path = folder / name
    path.write_bytes(data)
    return str(path), hashlib.sha256(data).hexdigest()


def _write_table(out: Path, table: str, rows: list[dict], record) -> None:
    folder = out / table / f"dt={DT}"
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=record.SCHEMA), folder / "part-00000-of-00001.parquet")


@pytest.fixture
def out_tree(tmp_path):
    """An output root: a PNG, an EXIF-6 JPEG, a vanished file, a changed file, a label with no screenshot row."""
    src = tmp_path / "src"
    src.mkdir()
    png = Image.new("RGB", (64, 48), (240, 240, 240))
    png.paste(RED, (0, 0, 16, 16))
    png_uri, a = _image_file(src, "a.png", png, "PNG")
    # stored 40 wide x 60 high, red top-left; orientation 6 = rotate 90° clockwise to view: 60 x 40, red top-right
    raw = Image.new("RGB", (40, 60), BLUE)
    raw.paste(RED, (0, 0, 16, 16))
    exif = Image.Exif()
    exif[0x0112] = 6
    jpg_uri, r = _image_file(src, "r.jpg", raw, "JPEG", exif=exif.tobytes(), quality=95)
    gone_uri, g = _image_file(src, "g.png", Image.new("RGB", (64, 48), BLUE), "PNG")
    os.remove(gone_uri)
    changed_uri, c = _image_file(src, "c.png", Image.new("RGB", (64, 48), RED), "PNG")
    c_size = os.path.getsize(changed_uri)  # what ingest recorded, before the file changed
    Path(changed_uri).write_bytes(Path(png_uri).read_bytes())
    m = "f" * 64
    shots = [
        shot_row(a, png_uri),
        shot_row(a, png_uri + "#step2"),  # the same bytes seen again (an episode step): one image
        shot_row(r, jpg_uri, 60, 40, "JPEG", 6),
        shot_row(g, gone_uri),
        shot_row(c, changed_uri, byte_size=c_size),
    ]
    labels = [
        label_row(a, 1),  # accepted
        label_row(a, 2),  # fixed (after an earlier reject)
        label_row(a, 3),  # rejected
        label_row(a, 4, element_text=""),  # unreviewed icon
        label_row(a, 5, box=(100.0, 60.0, 120.0, 70.0)),  # outside the image
        label_row(r, 1, box=(44.0, 0.0, 60.0, 16.0), width=60, height=40),  # the red block, oriented frame
        label_row(g, 1),
        label_row(c, 1),
        label_row(m, 1),
    ]
    reviews = [
        review_row(labels[0]["label_id"], "accept"),
        review_row(labels[1]["label_id"], "reject", minutes=1, annotation_id=2),
        review_row(labels[1]["label_id"], "fix", minutes=2, annotation_id=3, x1=33.0, instruction="open item 2"),
        review_row(labels[2]["label_id"], "reject", annotation_id=4),
        review_row(labels[5]["label_id"], "accept", annotation_id=5),
    ]
    out = tmp_path / "out"
    _write_table(out, "screenshots", list(reversed(shots)), Screenshot)
    _write_table(out, "grounding", list(reversed(labels)), GroundingLabel)
    _write_table(out, "reviewed", reviews, ReviewedLabel)
    return {"out": out, "labels": labels, "a": a, "r": r, "g": g, "c": c, "m": m, "png": png_uri}


def _summary(line: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in line.split(" -> ")[0].split())


def test_screenspot_end_to_end(out_tree, tmp_path, capsys):
    dest = tmp_path / "dest"
    assert main([str(out_tree["out"]), "--to", "screenspot", "--dest", str(dest), "--split", "web"]) == 0
    counts = _summary(capsys.readouterr().out.strip())
    assert counts == {
        "written": "4",
        "images": "2",
        "dropped_rejected": "1",
        "dropped_unreviewed": "0",
        "dropped_missing_screenshot": "1",
        "dropped_missing_image": "1",
        "dropped_image_changed": "1",
        "dropped_bad_image": "0",
        "dropped_frame_mismatch": "0",
        "dropped_empty_box": "1",
    }
    records = json.loads((dest / "screenspot_web.json").read_text())
    a, r = out_tree["a"], out_tree["r"]
    assert [(rec["img_filename"], rec["instruction"]) for rec in records] == [
        (f"{a}.png", "click item 1"),
        (f"{a}.png", "open item 2"),
        (f"{a}.png", "click item 4"),
        (f"{r}.jpg", "click item 1"),
    ]
    assert records[1]["bbox"] == [10.0, 5.0, 23.0, 20.0]  # the fix's x1 = 33, the rest as labelled
    assert [rec["data_type"] for rec in records] == ["text", "text", "icon", "text"]
    assert {rec["data_source"] for rec in records} == {"web"}

    # dead letters: one line per label that could not be written, with the reason the summary counts
    dead = [json.loads(line) for line in (dest / "_dead_letter.jsonl").read_text().splitlines()]
    by_reason = {d["reason"]: d for d in dead}
    assert sorted(by_reason) == ["empty_box", "image_changed", "missing_image", "missing_screenshot"]
    assert {d["stage"] for d in dead} == {"convert"} and all(d["error"] for d in dead)
    assert all(DeadLetter.from_row({**d, "time": _dt.datetime.fromisoformat(d["time"])}) for d in dead)  # the record
    assert by_reason["missing_screenshot"]["input_id"] == out_tree["labels"][8]["label_id"]
    assert by_reason["missing_image"]["input_id"] == out_tree["labels"][6]["label_id"]
    assert by_reason["image_changed"]["input_id"] == out_tree["labels"][7]["label_id"]
    assert by_reason["empty_box"]["input_id"] == out_tree["labels"][4]["label_id"]

    # images: the PNG copied byte for byte, the EXIF-6 JPEG re-encoded upright (60 x 40, red block top-right)
    assert (dest / f"{a}.png").read_bytes() == Path(out_tree["png"]).read_bytes()
    assert not (dest / f"{out_tree['g']}.png").exists() and not (dest / f"{out_tree['c']}.png").exists()
    with Image.open(dest / f"{r}.jpg") as im:
        assert im.format == "JPEG" and im.size == (60, 40)
        assert im.getexif().get(0x0112, 1) == 1
        rgb = im.convert("RGB")
        assert records[3]["bbox"] == [44.0, 0.0, 16.0, 16.0]
        assert all(abs(c - e) < 40 for c, e in zip(rgb.getpixel((52, 8)), RED, strict=True))  # inside the box
        assert all(abs(c - e) < 40 for c, e in zip(rgb.getpixel((8, 8)), BLUE, strict=True))

    # the project's own ScreenSpot reader agrees on the boxes and finds the copied images by content hash
    jsonl = dest / "truth.jsonl"
    jsonl.write_text("".join(json.dumps(rec) + "\n" for rec in records))
    truth = load_truth(jsonl)
    assert truth[1].box == (10.0, 5.0, 33.0, 25.0) and truth[0].sha256 == a
    jsonl.unlink()

    # deterministic: a second run writes the same bytes, and the same dead letters but for their time
    before = (dest / "screenspot_web.json").read_bytes(), _timeless(dest / "_dead_letter.jsonl")
    assert main([str(out_tree["out"]), "--to", "screenspot", "--dest", str(dest), "--split", "web"]) == 0
    assert before == ((dest / "screenspot_web.json").read_bytes(), _timeless(dest / "_dead_letter.jsonl"))


def _timeless(path: Path) -> list[dict]:
    """The dead letters of a ``_dead_letter.jsonl`` without ``time`` (each conversion stamps its own)."""
    return [{k: v for k, v in json.loads(line).items() if k != "time"} for line in path.read_text().splitlines()]


def test_osworld_g_accept_only_with_symlinks(out_tree, tmp_path, capsys):
    dest = tmp_path / "og"
    argv = [str(out_tree["out"]), "--to", "osworld-g", "--dest", str(dest), "--images", "symlink"]
    assert main(argv + ["--reviewed", "accept-only", "--split", "test"]) == 0
    counts = _summary(capsys.readouterr().out.strip())
    # reviewed: 1 accepted, 1 fixed, 1 rejected, the icon's accept on the rotated image; 5 labels nobody reviewed
    assert (counts["written"], counts["dropped_rejected"], counts["dropped_unreviewed"]) == ("3", "1", "5")
    assert sum(int(v) for k, v in counts.items() if k.startswith("dropped_")) + 3 == len(out_tree["labels"])
    records = json.loads((dest / "OSWorld-G_test.json").read_text())
    a, r = out_tree["a"], out_tree["r"]
    assert [rec["id"] for rec in records] == [lab["label_id"] for lab in out_tree["labels"][:2]] + [
        out_tree["labels"][5]["label_id"]
    ]
    assert records[1]["box_coordinates"] == [10.0, 5.0, 23.0, 20.0] and records[1]["instruction"] == "open item 2"
    assert records[2] == {
        "id": out_tree["labels"][5]["label_id"],
        "image_path": f"{r}.jpg",
        "image_size": [60, 40],
        "instruction": "click item 1",
        "box_type": "bbox",
        "box_coordinates": [44.0, 0.0, 16.0, 16.0],
        "GUI_types": ["button"],
    }
    assert os.path.islink(dest / f"{a}.png") and os.readlink(dest / f"{a}.png") == out_tree["png"]
    assert not os.path.islink(dest / f"{r}.jpg")  # a link would show the stored, unrotated frame
    assert (dest / "_dead_letter.jsonl").read_text() == ""  # every label with a problem was dropped by review first


def test_images_none_and_ignorereview_row(out_tree, tmp_path, capsys):
    dest = tmp_path / "pro"
    argv = [str(out_tree["out"]), "--to", "screenspot", "--dest", str(dest), "--images", "none"]
    assert main(argv + ["--reviewed", "ignore", "--screenspot-variant", "pro", "--split", "app"]) == 0
    counts = _summary(capsys.readouterr().out.strip())
    assert (counts["written"], counts["images"], counts["dropped_rejected"]) == ("5", "0", "0")
    assert sorted(p.name for p in dest.iterdir()) == ["_dead_letter.jsonl", "app.json"]
    records = json.loads((dest / "app.json").read_text())
    assert records[1]["bbox"] == [10.0, 5.0, 30.0, 25.0]  # the fix is ignored
    assert len((dest / "_dead_letter.jsonl").read_text().splitlines()) == 4


def test_pro_records_say_where_each_screenshot_comes_from_and_an_rgba_png_is_exported_rgb(tmp_path, capsys):
    src = tmp_path / "phone-shots"
    src.mkdir()
    rgba = Image.new("RGBA", (64, 48), (0, 0, 0, 0))  # transparent: load_rgb composites it on white
    rgba.paste((230, 20, 20, 255), (0, 0, 16, 16))
    rgba_uri, a = _image_file(src, "a.png", rgba, "PNG")
    pages = tmp_path / "out" / "images"
    pages.mkdir(parents=True)
    desk_uri, d = _image_file(pages, "d.png", Image.new("RGB", (64, 48), BLUE), "PNG")
    phone_uri, m = _image_file(pages, "m.png", Image.new("RGB", (64, 48), RED), "PNG")
    shots = [
        shot_row(a, rgba_uri, source_mode="RGBA"),
        shot_row(d, desk_uri, page_uri="https://www.example.org/pricing", render=render(False)),
        shot_row(m, phone_uri, page_uri="file:///site/pages/login.html", render=render(True)),
    ]
    out = tmp_path / "out"
    _write_table(out, "screenshots", shots, Screenshot)
    _write_table(out, "grounding", [label_row(a, 1), label_row(d, 1), label_row(m, 1)], GroundingLabel)
    dest = tmp_path / "pro"
    argv = [str(out), "--to", "screenspot", "--screenspot-variant", "pro", "--dest", str(dest), "--split", "mix"]
    assert main(argv + ["--images", "symlink", "--platform", "mobile"]) == 0
    assert _summary(capsys.readouterr().out.strip())["written"] == "3"
    records = {rec["img_filename"]: rec for rec in json.loads((dest / "mix.json").read_text())}
    where = {name: (rec["platform"], rec["application"], rec["group"]) for name, rec in records.items()}
    assert where == {
        f"{a}.png": ("mobile", "phone-shots", "mobile"),  # --platform; the folder it was read from
        f"{d}.png": ("web", "example.org", "web"),  # a page rendered at a desktop viewport; its site
        f"{m}.png": ("mobile", "login", "mobile"),  # rendered with mobile emulation; the page file's name
    }
    assert all(rec["instruction_cn"] == rec["instruction"] == "click item 1" for rec in records.values())
    assert all(rec["data_source"] == "mix" for rec in records.values())

    # the RGBA file is exported as the RGB frame the boxes refer to, not linked; an RGB file is linked as it is
    assert not os.path.islink(dest / f"{a}.png") and os.path.islink(dest / f"{d}.png")
    with Image.open(dest / f"{a}.png") as im:
        assert (im.format, im.mode, im.size) == ("PNG", "RGB", (64, 48))
        assert im.getpixel((8, 8)) == (230, 20, 20) and im.getpixel((40, 40)) == (255, 255, 255)

    # without --platform a screenshot nothing tells about is "unknown"
    assert main(argv + ["--images", "none"]) == 0
    records = {rec["img_filename"]: rec for rec in json.loads((dest / "mix.json").read_text())}
    assert records[f"{a}.png"]["platform"] == records[f"{a}.png"]["group"] == "unknown"
    assert main(argv + ["--platform", "tv"]) == 2


def test_exit_2_without_grounding_or_with_bad_arguments(tmp_path, capsys):
    (tmp_path / "out" / "screenshots").mkdir(parents=True)
    assert main([str(tmp_path / "out"), "--to", "screenspot", "--dest", str(tmp_path / "d")]) == 2
    assert "no grounding table" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
    assert main([str(tmp_path / "out"), "--to", "coco", "--dest", str(tmp_path / "d")]) == 2
    assert main([str(tmp_path / "out"), "--to", "screenspot"]) == 2
    assert main([str(tmp_path / "out"), "--to", "screenspot", "--dest", "d", "--split", "../x"]) == 2


def test_registered_in_the_cli(capsys):
    assert cli.main(["--help"]) == 0
    assert "convert" in capsys.readouterr().out
    assert cli.main(["convert", "--help"]) == 0
    assert "--screenspot-variant" in capsys.readouterr().out
