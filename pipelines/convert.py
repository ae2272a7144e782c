"""``screenmill convert OUT --to screenspot|osworld-g --dest DIR``: write labels in GUI-grounding benchmark formats.

Usage: ``screenmill convert OUT --to screenspot|osworld-g --dest DIR [--images copy|symlink|none]
[--reviewed accept-only|apply|ignore] [--split NAME] [--screenspot-variant v1|v2|pro]``.

Reads the ``grounding``, ``screenshots`` and ``reviewed`` tables of a screenmill output root OUT (through
:func:`schemas.tables.read_shards`), applies the human review, and writes one JSON file plus the images it names into
DEST. Images are named ``<screenshot_id>.<ext>`` and lie next to the JSON, so DEST is both the harnesses' annotation
folder and their image folder. Images with an EXIF orientation other than 1 are re-encoded upright
(``ImageOps.exif_transpose``): every coordinate refers to the oriented frame, and a copy or link of the raw bytes
would show the harness another frame.

Formats, as the harnesses that read them expect (checked against their code):

``--to screenspot --screenspot-variant v1`` (default) writes ``DEST/screenspot_<split>.json``: a JSON list of
``{img_filename, bbox, instruction, data_type, data_source}`` with ``bbox`` = ``[x, y, w, h]`` in image pixels and
``data_type`` ``text`` | ``icon``. SeeClick's harness (njucckevin/SeeClick ``pretrain/screenspot_test.py``) loads
``screenspot_<task>.json``, turns ``bbox`` into ``[x, y, x + w, y + h]`` and divides by the image size; the project's
own ``screenmill eval --bbox-format xywh`` reads the same layout.

``v2`` writes ``DEST/screenspot_<split>_v2.json`` with the same records and the same ``[x, y, w, h]`` boxes:
ScreenSpot-v2 (OS-Copilot/ScreenSpot-v2 ``screenspot_{desktop,mobile,web}_v2.json``) kept v1's layout, and
open-compass/VLMEvalKit ``vlmeval/dataset/GUI/screenspot_v2.py`` (``convert_bbox``) adds ``w, h`` to ``x, y``.

``pro`` writes ``DEST/<split>.json`` in ScreenSpot-Pro's layout, which differs: ``bbox`` = ``[x0, y0, x1, y1]``
pixels, plus ``img_size`` ``[w, h]``, ``ui_type`` (``text`` | ``icon``), ``platform``, ``application``, ``group``
and ``id`` (likaixin2000/ScreenSpot-Pro-GUI-Grounding ``eval_screenspot_pro.py``: ``eval_sample_positive_gt`` reads
``bbox`` as ``x1, y1, x2, y2`` with the ``x, y, w, h`` line commented out, and every ``*.json`` of the annotation
folder is a task). ``data_type`` / ``data_source`` are kept too, so v1 readers still find them.

``--to osworld-g`` writes ``DEST/OSWorld-G_<split>.json``: a JSON list of ``{id, image_path, image_size [w, h],
instruction, box_type: "bbox", box_coordinates, GUI_types}`` with ``box_coordinates`` = ``[x, y, w, h]`` pixels,
as in xlang-ai/OSWorld-G's ``benchmark/OSWorld-G.json`` (e.g. ``"box_coordinates": [1422.9, 326.4, 26.68, 28.4]``
for a 1920×1080 image). Its evaluators take ``box_coordinates[:2]`` as the corner and ``[2:]`` as the size and test
``x <= px <= x + w`` (open-compass/VLMEvalKit ``vlmeval/dataset/GUI/osworld_g.py`` ``_eval``;
Onifin/Holo3.1-OSWorld-G ``evaluation/holo_osworld_g.py``). ``GUI_types`` is ``[role]`` when the label has a role.

Everywhere ``data_type`` / ``ui_type`` is ``text`` when the label has non-empty ``element_text``, else ``icon``;
``data_source`` (Pro: ``platform``, ``application``, ``group``) is the ``--split`` name; ids are ``label_id`` s.
Boxes are ordered and clamped into the image first; ``x, y, w, h`` boxes come from
:func:`schemas.coords.box_from_pixels` (``xywh_pixel``), which converts back to the same pixels exactly.

Review (``--reviewed``), using each label's latest review (by ``reviewed_at``, then ``annotation_id``):
``apply`` (default) drops rejected labels and uses the reviewer's corrections of fixed ones; ``accept-only`` keeps
only labels a reviewer accepted or fixed (corrections applied); ``ignore`` uses the labels as produced.

Nothing is lost silently. Labels left out by the review policy are counted (``dropped_rejected``,
``dropped_unreviewed``); labels that cannot be written go to ``DEST/_dead_letter.jsonl`` as ``{input_id, stage:
"convert", reason, error, payload_ref}`` and are counted under their reason: ``missing_screenshot`` (no screenshots
row), ``missing_image`` (the file at ``source_uri`` is gone), ``image_changed`` (its bytes no longer hash to the
``screenshot_id``), ``bad_image`` (an EXIF-rotated image that cannot be decoded), ``frame_mismatch`` (the label's
image size is not the screenshot's) and ``empty_box`` (nothing of the box is left inside the image). The command
prints one summary line. Output is deterministic: records are sorted by ``screenshot_id``, then ``label_id``.

Exit codes: 0 done (even with dead letters), 2 bad arguments or OUT has no grounding table.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import io
import json
import os
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

TARGETS = ("screenspot", "osworld-g")
VARIANTS = ("v1", "v2", "pro")
IMAGE_MODES = ("copy", "symlink", "none")
REVIEW_MODES = ("apply", "accept-only", "ignore")
REVIEW_DROPS = ("rejected", "unreviewed")
DEAD_REASONS = ("missing_screenshot", "missing_image", "image_changed", "bad_image", "frame_mismatch", "empty_box")
DEAD_LETTER_FILE = "_dead_letter.jsonl"
_EXTENSIONS = {"PNG": "png", "JPEG": "jpg", "WEBP": "webp"}
_CORRECTED = ("instruction", "x0", "y0", "x1", "y1", "click_x", "click_y")


class Unwritable(Exception):
    """A label that cannot be written; ``reason`` is its dead-letter code (one of :data:`DEAD_REASONS`)."""

    def __init__(self, reason: str, message: str):
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message


@dataclasses.dataclass
class Summary:
    """What one conversion did: records written, images written, and labels left out per reason."""

    path: str
    written: int = 0
    images: int = 0
    dropped: Counter = dataclasses.field(default_factory=Counter)

    def line(self) -> str:
        """The one-line report: ``written=N images=M dropped_<reason>=K ... -> PATH`` (every reason, zeros too)."""
        counts = " ".join(f"dropped_{r}={self.dropped[r]}" for r in REVIEW_DROPS + DEAD_REASONS)
        return f"written={self.written} images={self.images} {counts} -> {self.path}"


# ------------------------------------------------------------------------------------------------ review


def latest_reviews(rows: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """The latest review of each label: ``{label_id: reviewed row}``, latest by ``reviewed_at`` then ``annotation_id``.

    Args:
        rows: ``reviewed`` table rows.

    Returns:
        One row per ``label_id``.
    """
    latest: dict[str, Mapping[str, Any]] = {}
    for row in rows:
        seen = latest.get(row["label_id"])
        if seen is None or (row["reviewed_at"], row["annotation_id"]) > (seen["reviewed_at"], seen["annotation_id"]):
            latest[row["label_id"]] = row
    return latest


def apply_review(
    label: Mapping[str, Any], review: Mapping[str, Any] | None, mode: str
) -> tuple[dict[str, Any] | None, str | None]:
    """Apply a label's human review under ``mode``.

    Args:
        label: a ``grounding`` row.
        review: the label's latest ``reviewed`` row, or None when nobody reviewed it.
        mode: ``apply`` (drop rejected, use corrections), ``accept-only`` (keep only accepted or fixed labels, with
            corrections) or ``ignore`` (the label as produced).

    Returns:
        ``(row, None)`` with the row to write (a copy; a ``fix`` review's non-None corrections replace the label's
        instruction, box and click point), or ``(None, reason)`` with reason ``rejected`` or ``unreviewed``.

    Raises:
        ValueError: an unknown ``mode``.
    """
    if mode not in REVIEW_MODES:
        raise ValueError(f"review mode must be one of {REVIEW_MODES}, got {mode!r}")
    row = dict(label)
    if mode == "ignore":
        return row, None
    if review is None:
        return (None, "unreviewed") if mode == "accept-only" else (row, None)
    if review["verdict"] == "reject":
        return None, "rejected"
    if review["verdict"] == "fix":
        row.update({k: review[k] for k in _CORRECTED if review.get(k) is not None})
    return row, None


# ------------------------------------------------------------------------------------------------ records


def image_name(shot: Mapping[str, Any]) -> str:
    """The file name a screenshot gets in DEST: ``<screenshot_id>.<ext>`` (``png``, ``jpg`` or ``webp``)."""
    fmt = str(shot["format"]).upper()
    return f"{shot['screenshot_id']}.{_EXTENSIONS.get(fmt, fmt.lower())}"


def data_type(label: Mapping[str, Any]) -> str:
    """``text`` when the label names visible text (non-empty ``element_text``), else ``icon``."""
    return "text" if (label.get("element_text") or "").strip() else "icon"


def pixel_box(label: Mapping[str, Any], shot: Mapping[str, Any]) -> tuple[float, float, float, float]:
    """The label's box ordered and clamped into the screenshot's oriented frame, ``(x0, y0, x1, y1)`` pixels.

    Raises:
        Unwritable: ``frame_mismatch`` when the label's image size is not the screenshot's; ``empty_box`` when no
            area of the box lies inside the image.
    """
    from schemas.coords import clamp_box

    width, height = int(shot["width"]), int(shot["height"])
    if (label["image_width"], label["image_height"]) != (width, height):
        size = f"{label['image_width']}x{label['image_height']}"
        raise Unwritable("frame_mismatch", f"label is for a {size} image, the screenshot is {width}x{height}")
    box = clamp_box((label["x0"], label["y0"], label["x1"], label["y1"]), width, height)
    if box[2] <= box[0] or box[3] <= box[1]:
        given = (label["x0"], label["y0"], label["x1"], label["y1"])
        raise Unwritable("empty_box", f"box {given} has no area inside the {width}x{height} image")
    return box


def xywh(box: tuple[float, float, float, float], width: int, height: int) -> list[float]:
    """``(x0, y0, x1, y1)`` pixels → ``[x, y, w, h]``; ``box_to_pixels(..., "xywh_pixel", ...)`` inverts it exactly."""
    from schemas.coords import box_from_pixels

    return list(box_from_pixels(box, "xywh_pixel", width, height))


def to_screenspot(
    label: Mapping[str, Any], shot: Mapping[str, Any], img_filename: str, split: str, variant: str = "v1"
) -> dict[str, Any]:
    """One ScreenSpot record for a (reviewed) grounding row.

    Args:
        label: the grounding row to write (review already applied).
        shot: its ``screenshots`` row (``width`` / ``height`` are the oriented frame).
        img_filename: the image's name relative to the JSON file.
        split: written as ``data_source`` (Pro: ``platform``, ``application``, ``group``).
        variant: ``v1`` / ``v2`` (``bbox`` = ``[x, y, w, h]``) or ``pro`` (``bbox`` = ``[x0, y0, x1, y1]`` plus
            ``img_size``, ``ui_type``, ``platform``, ``application``, ``group``, ``id``).

    Returns:
        The record as a dict, keys in the benchmark's order.

    Raises:
        Unwritable: as :func:`pixel_box`.
        ValueError: an unknown ``variant``.
    """
    if variant not in VARIANTS:
        raise ValueError(f"ScreenSpot variant must be one of {VARIANTS}, got {variant!r}")
    box = pixel_box(label, shot)
    width, height = int(shot["width"]), int(shot["height"])
    kind = data_type(label)
    bbox = list(box) if variant == "pro" else xywh(box, width, height)
    record = {"img_filename": img_filename, "bbox": bbox, "instruction": label["instruction"]}
    if variant == "pro":
        record.update({"id": label["label_id"], "img_size": [width, height], "ui_type": kind})
        record.update({"platform": split, "application": split, "group": split})
    record.update({"data_type": kind, "data_source": split})
    return record


def to_osworld_g(label: Mapping[str, Any], shot: Mapping[str, Any], image_path: str) -> dict[str, Any]:
    """One OSWorld-G record for a (reviewed) grounding row: ``box_type`` bbox, ``box_coordinates`` ``[x, y, w, h]``.

    Args:
        label: the grounding row to write (review already applied).
        shot: its ``screenshots`` row.
        image_path: the image's name relative to the JSON file.

    Returns:
        ``{id, image_path, image_size, instruction, box_type, box_coordinates, GUI_types}``.

    Raises:
        Unwritable: as :func:`pixel_box`.
    """
    box = pixel_box(label, shot)
    width, height = int(shot["width"]), int(shot["height"])
    return {
        "id": label["label_id"],
        "image_path": image_path,
        "image_size": [width, height],
        "instruction": label["instruction"],
        "box_type": "bbox",
        "box_coordinates": xywh(box, width, height),
        "GUI_types": [label["role"]] if label.get("role") else [],
    }


# ------------------------------------------------------------------------------------------------ images


def read_source(shot: Mapping[str, Any]) -> bytes:
    """The screenshot's bytes from ``source_uri``, checked against its ``screenshot_id`` (the sha256 of the bytes).

    Raises:
        Unwritable: ``missing_image`` when the file cannot be read; ``image_changed`` when its bytes hash to
            something else.
    """
    from apache_beam.io.filesystem import CompressionTypes
    from apache_beam.io.filesystems import FileSystems

    uri = shot["source_uri"]
    try:
        with FileSystems.open(uri, compression_type=CompressionTypes.UNCOMPRESSED) as f:
            data = f.read()
    except Exception as e:  # noqa: BLE001 - every filesystem raises its own "not there"
        raise Unwritable("missing_image", f"cannot read {uri}: {type(e).__name__}: {e}") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != shot["screenshot_id"]:
        raise Unwritable("image_changed", f"{uri} now hashes to {digest[:16]}…, not {shot['screenshot_id'][:16]}…")
    return data


def upright_bytes(data: bytes, fmt: str, size: tuple[int, int]) -> bytes:
    """Re-encode an EXIF-oriented image in its oriented frame, without EXIF, in the same format.

    JPEG is written at quality 95, PNG and WebP losslessly.

    Args:
        data: the file's bytes.
        fmt: its Pillow format name (``PNG``, ``JPEG``, ``WEBP``).
        size: the oriented ``(width, height)`` the screenshots row recorded.

    Raises:
        Unwritable: ``bad_image`` when the bytes do not decode; ``frame_mismatch`` when the oriented image is not
            ``size``.
    """
    from PIL import Image, ImageOps

    try:
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            upright = ImageOps.exif_transpose(im)
    except Exception as e:  # noqa: BLE001 - Pillow raises many types for a bad file
        raise Unwritable("bad_image", f"cannot decode: {type(e).__name__}: {e}") from None
    if upright.size != tuple(size):
        raise Unwritable("frame_mismatch", f"oriented image is {upright.size}, the screenshot row says {size}")
    fmt = fmt.upper()
    if fmt == "JPEG" and upright.mode not in ("RGB", "L", "CMYK"):
        upright = upright.convert("RGB")
    options = {"JPEG": {"quality": 95}, "WEBP": {"lossless": True}}.get(fmt, {})
    out = io.BytesIO()
    upright.save(out, fmt, **options)
    return out.getvalue()


def place_image(shot: Mapping[str, Any], dest_path: str, mode: str) -> bool:
    """Put the screenshot at ``dest_path`` in its oriented frame.

    Args:
        shot: the ``screenshots`` row.
        dest_path: where the image goes.
        mode: ``copy`` (the bytes), ``symlink`` (a link to ``source_uri`` when it is local and upright, else a copy)
            or ``none`` (nothing is written; the source is still checked). EXIF-rotated images are re-encoded
            upright in ``copy`` and ``symlink`` mode.

    Returns:
        Whether a file (or link) was written.

    Raises:
        Unwritable: as :func:`read_source` and :func:`upright_bytes`.
    """
    data = read_source(shot)
    if mode == "none":
        return False
    rotated = int(shot["exif_orientation"] or 1) != 1
    if rotated:
        data = upright_bytes(data, shot["format"], (int(shot["width"]), int(shot["height"])))
    if os.path.lexists(dest_path):
        os.remove(dest_path)
    if mode == "symlink" and not rotated and "://" not in shot["source_uri"]:
        os.symlink(os.path.abspath(shot["source_uri"]), dest_path)
    else:
        with open(dest_path, "wb") as f:
            f.write(data)
    return True


# ------------------------------------------------------------------------------------------------ conversion


def output_name(target: str, split: str, variant: str = "v1") -> str:
    """The JSON file name the harnesses look for: see the module docstring."""
    if target == "osworld-g":
        return f"OSWorld-G_{split}.json"
    return {"v1": f"screenspot_{split}.json", "v2": f"screenspot_{split}_v2.json", "pro": f"{split}.json"}[variant]


def _dead_letter(label_id: str, error: Unwritable, payload_ref: str) -> dict[str, str]:
    return {
        "input_id": label_id,
        "stage": "convert",
        "reason": error.reason,
        "error": error.message,
        "payload_ref": payload_ref,
    }


def convert_rows(
    labels: list[Mapping[str, Any]],
    shots: list[Mapping[str, Any]],
    reviews: list[Mapping[str, Any]],
    dest: str,
    target: str,
    *,
    images: str = "copy",
    reviewed: str = "apply",
    split: str = "screenmill",
    variant: str = "v1",
) -> Summary:
    """Convert table rows into DEST: the JSON file, the images, ``_dead_letter.jsonl`` (always rewritten).

    Args:
        labels: ``grounding`` rows.
        shots: ``screenshots`` rows (several rows of one ``screenshot_id``, e.g. episode steps, are one image).
        reviews: ``reviewed`` rows.
        dest: the output folder (created).
        target: ``screenspot`` or ``osworld-g``.
        images: ``copy``, ``symlink`` or ``none`` (see :func:`place_image`).
        reviewed: ``apply``, ``accept-only`` or ``ignore`` (see :func:`apply_review`).
        split: names the file and fills ``data_source``.
        variant: the ScreenSpot variant (``v1``, ``v2``, ``pro``); ignored for ``osworld-g``.

    Returns:
        A :class:`Summary` of what was written and left out.

    Raises:
        ValueError: an unknown ``target``, ``images``, ``reviewed`` or ``variant``.
        OSError: DEST cannot be written.
    """
    if target not in TARGETS or images not in IMAGE_MODES or reviewed not in REVIEW_MODES or variant not in VARIANTS:
        raise ValueError(f"bad option: target={target!r} images={images!r} reviewed={reviewed!r} variant={variant!r}")
    os.makedirs(dest, exist_ok=True)
    summary = Summary(path=os.path.join(dest, output_name(target, split, variant)))
    by_shot: dict[str, Mapping[str, Any]] = {}
    for shot in sorted(shots, key=lambda s: (s["screenshot_id"], s["source_uri"])):
        by_shot.setdefault(shot["screenshot_id"], shot)
    latest = latest_reviews(reviews)
    kept: dict[str, list[dict[str, Any]]] = {}
    for label in sorted(labels, key=lambda r: (r["screenshot_id"], r["label_id"])):
        row, reason = apply_review(label, latest.get(label["label_id"]), reviewed)
        if row is None:
            summary.dropped[reason] += 1
        else:
            kept.setdefault(row["screenshot_id"], []).append(row)

    records, dead = [], []
    for sid, rows in kept.items():  # already in screenshot_id, label_id order
        shot = by_shot.get(sid)
        if shot is None:
            error = Unwritable("missing_screenshot", f"screenshot {sid} has labels but no screenshots row")
            dead += [_dead_letter(r["label_id"], error, sid) for r in rows]
            continue
        name = image_name(shot)
        ready: list[tuple[str, dict[str, Any]]] = []
        for row in rows:
            try:
                if target == "osworld-g":
                    ready.append((row["label_id"], to_osworld_g(row, shot, name)))
                else:
                    ready.append((row["label_id"], to_screenspot(row, shot, name, split, variant)))
            except Unwritable as e:
                dead.append(_dead_letter(row["label_id"], e, shot["source_uri"]))
        if not ready:
            continue
        try:
            summary.images += place_image(shot, os.path.join(dest, name), images)
        except Unwritable as e:
            dead += [_dead_letter(label_id, e, shot["source_uri"]) for label_id, _ in ready]
            continue
        records += [record for _, record in ready]
    for entry in dead:
        summary.dropped[entry["reason"]] += 1
    summary.written = len(records)
    with open(summary.path, "w", encoding="utf-8") as f:
        json.dump(records, f, indent=2, ensure_ascii=False)
        f.write("\n")
    with open(os.path.join(dest, DEAD_LETTER_FILE), "w", encoding="utf-8") as f:
        f.writelines(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n" for entry in dead)
    return summary


def build_parser() -> argparse.ArgumentParser:
    """The ``screenmill convert`` argument parser."""
    p = argparse.ArgumentParser(prog="screenmill convert", description=__doc__.splitlines()[0])
    p.add_argument("output", metavar="OUT", help="a screenmill output root (with a grounding table)")
    p.add_argument("--to", required=True, choices=TARGETS, help="the benchmark format")
    p.add_argument("--dest", required=True, metavar="DIR", help="folder for the JSON file, images and dead letters")
    p.add_argument("--images", choices=IMAGE_MODES, default="copy", help="how images reach DEST (default: copy)")
    p.add_argument(
        "--reviewed",
        choices=REVIEW_MODES,
        default="apply",
        help="apply: drop rejected, use fixes (default); accept-only: only accepted/fixed; ignore: no review",
    )
    p.add_argument("--split", default="screenmill", help="split name: names the file, fills data_source")
    p.add_argument(
        "--screenspot-variant",
        choices=VARIANTS,
        default="v1",
        help="v1/v2: bbox [x,y,w,h] (SeeClick, default); pro: bbox [x0,y0,x1,y1] + img_size (ScreenSpot-Pro)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the conversion; return the exit code (0 done, 2 bad arguments or no grounding table in OUT)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # argparse exits 2 on bad arguments, 0 on --help
        return int(e.code or 0)
    if not args.split or os.sep in args.split or args.split.startswith("."):
        print(f"screenmill convert: --split {args.split!r} must be a plain file-name part", file=sys.stderr)
        return 2
    from apache_beam.io.filesystems import FileSystems

    from schemas.tables import read_shards

    pattern = FileSystems.join(args.output, "grounding", "dt=*", "part-*.parquet")
    if not FileSystems.match([pattern])[0].metadata_list:
        print(f"screenmill convert: {args.output} has no grounding table (no {pattern})", file=sys.stderr)
        return 2
    summary = convert_rows(
        read_shards(args.output, "grounding").to_pylist(),
        read_shards(args.output, "screenshots").to_pylist(),
        read_shards(args.output, "reviewed").to_pylist(),
        args.dest,
        args.to,
        images=args.images,
        reviewed=args.reviewed,
        split=args.split,
        variant=args.screenspot_variant,
    )
    print(summary.line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
