"""GUI-grounding benchmark formats (ScreenSpot v1 / v2 / Pro, OSWorld-G): grounding rows → the records and image
folder the benchmarks' harnesses read (``screenmill convert`` is the command: :mod:`screenmill.pipelines.convert`).

:func:`convert_rows` takes the rows of the ``grounding``, ``screenshots`` and ``reviewed`` tables, applies the human
review, and writes one JSON file plus the images it names into DEST. Images are named ``<screenshot_id>.<ext>`` and
lie next to the JSON, so DEST is both the harnesses' annotation folder and their image folder. Every image is the
frame the coordinates refer to: :func:`screenmill.schemas.images.load_rgb`'s (first frame, EXIF orientation applied,
8-bit RGB, alpha composited on white). A file already in that frame (RGB, orientation 1) is copied or linked as it is;
any other (RGBA, palette, grayscale, CMYK, 16-bit, EXIF-rotated) is re-encoded from the frame in its own format, so a
harness never sees another frame (a rotated view, a transparent background it fills in its own colour).

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
folder is a task). ``data_type`` / ``data_source`` are kept too, so v1 readers still find them. ``instruction_cn`` is
a copy of the English ``instruction``, not a translation: the scorer reads it for ``--language cn`` (and fails on a
record without it), so that run works and scores as the English one.

Where a Pro record comes from (:func:`screenshot_origin`), so the scorer's breakdowns by platform, application and
group mean something: ``platform`` is ``web`` / ``mobile`` / ``desktop`` — for a rendered page ``mobile`` when it
was rendered with mobile emulation (``render.mobile``), else ``web``; for an episode step what the episode manifest's
``platform`` names (``"desktop-linux (VNC)"`` → ``desktop``, ``android`` → ``mobile``, ``browser`` → ``web``); else
``convert --platform``; else ``unknown``. ``application`` is the rendered page's site (its host without ``www.``, or
the page file's name: its folder's for an ``index`` page), the manifest's ``application`` (else the episode folder's
name), or the name of the folder the screenshot was read from. ``group`` is the platform: ScreenSpot v1 / v2 group
their results by platform (their mobile / desktop / web files), so the scorer's group table is that table.

``--to osworld-g`` writes ``DEST/OSWorld-G_<split>.json``: a JSON list of ``{id, image_path, image_size [w, h],
instruction, box_type: "bbox", box_coordinates, GUI_types}`` with ``box_coordinates`` = ``[x, y, w, h]`` pixels,
as in xlang-ai/OSWorld-G's ``benchmark/OSWorld-G.json`` (e.g. ``"box_coordinates": [1422.9, 326.4, 26.68, 28.4]``
for a 1920×1080 image). Its evaluators take ``box_coordinates[:2]`` as the corner and ``[2:]`` as the size and test
``x <= px <= x + w`` (open-compass/VLMEvalKit ``vlmeval/dataset/GUI/osworld_g.py`` ``_eval``;
Onifin/Holo3.1-OSWorld-G ``evaluation/holo_osworld_g.py``). ``GUI_types`` is ``[role]`` when the label has a role.

Everywhere ``data_type`` / ``ui_type`` is ``text`` when the label has non-empty ``element_text``, else ``icon``;
``data_source`` is the ``--split`` name; ids are ``label_id`` s.
Boxes are ordered and clamped into the image first; ``x, y, w, h`` boxes come from
:func:`screenmill.schemas.coords.box_from_pixels` (``xywh_pixel``), which converts back to the same pixels exactly.

Review (``--reviewed``), using each label's latest review (:func:`screenmill.schemas.reviews.latest_reviews`: by
``reviewed_at``, then ``annotation_id``):
``apply`` (default) drops rejected labels and uses the reviewer's corrections of fixed ones; ``accept-only`` keeps
only labels a reviewer accepted or fixed (corrections applied); ``ignore`` uses the labels as produced.

Nothing is lost silently. Labels left out by the review policy are counted (``dropped_rejected``,
``dropped_unreviewed``); labels that cannot be written go to ``DEST/_dead_letter.jsonl``, one
:class:`screenmill.schemas.records.DeadLetter` per line (:meth:`~screenmill.schemas.records.DeadLetter.to_json`:
``input_id`` = the label, ``stage`` ``convert``, ``reason``, ``error``, ``payload_ref``, ``run_id`` empty, ``time`` of
the conversion) and are counted under their reason: ``missing_screenshot`` (no screenshots row), ``missing_image`` (the
file at ``source_uri`` is gone), ``image_changed`` (its size or bytes no longer match the ``screenshot_id``: the
``changed_during_run`` of :func:`screenmill.schemas.verified.read_verified`), ``bad_image`` (an image to re-encode that
cannot be decoded), ``frame_mismatch`` (the label's image size is not the screenshot's) and ``empty_box`` (nothing
of the box is left inside the image). Output is deterministic (the dead letters' ``time`` aside): records are sorted by
``screenshot_id``, then ``label_id``.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import io
import json
import os
import posixpath
import re
import urllib.parse
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from screenmill.schemas.images import ImageLimits, ImageRejected, load_rgb
from screenmill.schemas.records import DeadLetter, first_occurrence, utcnow
from screenmill.schemas.reviews import latest_reviews
from screenmill.schemas.verified import read_verified

TARGETS = ("screenspot", "osworld-g")
VARIANTS = ("v1", "v2", "pro")
IMAGE_MODES = ("copy", "symlink", "none")
REVIEW_MODES = ("apply", "accept-only", "ignore")
REVIEW_DROPS = ("rejected", "unreviewed")
DEAD_REASONS = ("missing_screenshot", "missing_image", "image_changed", "bad_image", "frame_mismatch", "empty_box")
DEAD_LETTER_FILE = "_dead_letter.jsonl"
_EXTENSIONS = {"PNG": "png", "JPEG": "jpg", "WEBP": "webp"}
_CORRECTED = ("instruction", "x0", "y0", "x1", "y1", "click_x", "click_y")
PLATFORMS = ("web", "mobile", "desktop")
UNKNOWN = "unknown"
EPISODE_MANIFEST = "episode.json"
_MANIFEST_MAX_BYTES = 16 << 20
_MANIFEST_LEVELS = 3
_PLATFORM_WORDS = {
    "mobile": {"mobile", "android", "ios", "iphone", "ipad", "phone", "tablet", "smartphone"},
    "web": {"web", "browser", "website", "webpage", "chrome", "firefox", "safari", "edge"},
    "desktop": {"desktop", "windows", "macos", "mac", "osx", "linux", "ubuntu", "gnome", "kde"},
}


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


# ------------------------------------------------------------------------------------------------ origin


@dataclasses.dataclass(frozen=True, slots=True)
class Origin:
    """Where a screenshot comes from: ``platform`` (one of :data:`PLATFORMS` or ``unknown``) and ``application``."""

    platform: str = UNKNOWN
    application: str = UNKNOWN


def platform_name(text: Any) -> str | None:
    """The platform (:data:`PLATFORMS`) a free-text platform names (``"desktop-linux (VNC)"`` → ``desktop``), or None
    when it names none or several."""
    if not isinstance(text, str):
        return None
    words = set(re.split(r"[^a-z0-9]+", text.casefold()))
    found = [p for p in PLATFORMS if words & _PLATFORM_WORDS[p]]
    return found[0] if len(found) == 1 else None


def page_application(page_uri: str) -> str:
    """A rendered page's application: the host of an http(s) URL without ``www.``, else the page file's name without
    its extension (its folder's name for an ``index`` page)."""
    parts = urllib.parse.urlsplit(page_uri)
    if parts.scheme in ("http", "https") and parts.hostname:
        host = parts.hostname
        return host[4:] if host.startswith("www.") else host
    path = urllib.parse.unquote(parts.path) if parts.scheme == "file" else page_uri
    stem = posixpath.splitext(posixpath.basename(path.rstrip("/")))[0]
    if stem.casefold() in ("index", "") and posixpath.basename(posixpath.dirname(path)):
        stem = posixpath.basename(posixpath.dirname(path))
    return stem or UNKNOWN


def _read_manifest(path: str) -> Mapping[str, Any] | None:
    """An episode manifest's JSON object, or None when there is none (or it is unreadable, too big, not an object)."""
    from apache_beam.io.filesystem import CompressionTypes
    from apache_beam.io.filesystems import FileSystems

    try:
        if not FileSystems.exists(path):
            return None
        with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
            data = f.read(_MANIFEST_MAX_BYTES + 1)
        manifest = json.loads(data.decode("utf-8")) if len(data) <= _MANIFEST_MAX_BYTES else None
    except Exception:  # noqa: BLE001 - a broken manifest only means the platform is not known from it
        return None
    return manifest if isinstance(manifest, dict) else None


def episode_manifest(
    shot: Mapping[str, Any], read: Callable[[str], Mapping[str, Any] | None] = _read_manifest
) -> tuple[str, Mapping[str, Any]] | None:
    """The folder and manifest (``episode.json``) of an episode step's episode, or None.

    The manifest is looked for in the screenshot's folder and up to two folders above it (a step may name an image
    in a subfolder); it is the episode's when its ``episode_id`` (else its folder's name) is the row's.
    """
    episode = shot.get("episode_id")
    if not episode:
        return None
    uri = shot["source_uri"]
    join, dirname, basename = (posixpath.join, posixpath.dirname, posixpath.basename)
    if "://" not in uri:
        join, dirname, basename = os.path.join, os.path.dirname, os.path.basename
    folder = dirname(uri)
    for _ in range(_MANIFEST_LEVELS):
        manifest = read(join(folder, EPISODE_MANIFEST))
        if manifest is not None and str(manifest.get("episode_id") or basename(folder)) == episode:
            return folder, manifest
        parent = dirname(folder)
        if parent == folder:
            break
        folder = parent
    return None


def screenshot_origin(
    shot: Mapping[str, Any],
    platform: str | None = None,
    read: Callable[[str], Mapping[str, Any] | None] = _read_manifest,
) -> Origin:
    """Where a ``screenshots`` row comes from (the rules are in the module docstring).

    Args:
        shot: the row.
        platform: the platform of screenshots nothing else tells (``convert --platform``), or None.
        read: reads an episode manifest (a path → its JSON object or None).

    Raises:
        ValueError: ``platform`` is not one of :data:`PLATFORMS`.
    """
    if platform is not None and platform not in PLATFORMS:
        raise ValueError(f"platform must be one of {PLATFORMS}, got {platform!r}")
    fallback = platform or UNKNOWN
    uri = shot["source_uri"]
    folder = (posixpath if "://" in uri else os.path).dirname(uri)
    folder_name = (posixpath if "://" in uri else os.path).basename(folder) or UNKNOWN
    render, page = shot.get("render"), shot.get("page_uri")
    if shot.get("app"):  # a desktop app's screen (``--apps``)
        return Origin("desktop", shot["app"]["name"])
    if render is not None or page:
        mobile = bool(render and render.get("mobile"))
        return Origin("mobile" if mobile else "web", page_application(page) if page else folder_name)
    found = episode_manifest(shot, read)
    if found is not None:
        episode_folder, manifest = found
        app = manifest.get("application")
        name = (posixpath if "://" in uri else os.path).basename(episode_folder) or UNKNOWN
        return Origin(
            platform_name(manifest.get("platform")) or fallback, app if isinstance(app, str) and app else name
        )
    return Origin(fallback, folder_name)


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
    from screenmill.schemas.coords import clamp_box

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
    from screenmill.schemas.coords import box_from_pixels

    return list(box_from_pixels(box, "xywh_pixel", width, height))


def to_screenspot(
    label: Mapping[str, Any],
    shot: Mapping[str, Any],
    img_filename: str,
    split: str,
    variant: str = "v1",
    origin: Origin = Origin(),
) -> dict[str, Any]:
    """One ScreenSpot record for a (reviewed) grounding row.

    Args:
        label: the grounding row to write (review already applied).
        shot: its ``screenshots`` row (``width`` / ``height`` are the oriented frame).
        img_filename: the image's name relative to the JSON file.
        split: written as ``data_source``.
        variant: ``v1`` / ``v2`` (``bbox`` = ``[x, y, w, h]``) or ``pro`` (``bbox`` = ``[x0, y0, x1, y1]`` plus
            ``instruction_cn``, ``img_size``, ``ui_type``, ``platform``, ``application``, ``group``, ``id``).
        origin: the screenshot's platform and application (Pro; :func:`screenshot_origin`); ``group`` is the
            platform.

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
        record["instruction_cn"] = label["instruction"]  # a copy, not a translation: see the module docstring
        record.update({"id": label["label_id"], "img_size": [width, height], "ui_type": kind})
        record.update({"platform": origin.platform, "application": origin.application, "group": origin.platform})
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
    """The screenshot's bytes from ``source_uri``, checked against its ``byte_size`` and ``screenshot_id`` (the sha256
    of the bytes) by :func:`screenmill.schemas.verified.read_verified`.

    Raises:
        Unwritable: ``missing_image`` when the file cannot be read; ``image_changed`` when its size or bytes are
            other than the run recorded.
    """
    uri = shot["source_uri"]
    try:
        return read_verified(uri, shot["screenshot_id"], int(shot["byte_size"]))
    except ImageRejected as e:  # changed_during_run: reported as image_changed, the name convert always used
        raise Unwritable("image_changed", e.message) from None
    except Exception as e:  # noqa: BLE001 - every filesystem raises its own "not there"
        raise Unwritable("missing_image", f"cannot read {uri}: {type(e).__name__}: {e}") from None


def needs_reencoding(shot: Mapping[str, Any]) -> bool:
    """Whether a screenshot's file is not already the RGB, upright frame its coordinates refer to."""
    return int(shot["exif_orientation"] or 1) != 1 or shot["source_mode"] != "RGB"


def decode_frame(data: bytes, size: tuple[int, int]):
    """The frame the coordinates refer to (:func:`screenmill.schemas.images.load_rgb`: EXIF-oriented 8-bit RGB, alpha
    on white) of a screenshot whose oriented size the run recorded as ``size`` = ``(width, height)``.

    Raises:
        Unwritable: ``bad_image`` when the bytes do not decode; ``frame_mismatch`` when the frame is not ``size``.
    """
    width, height = int(size[0]), int(size[1])
    # the run accepted this size under its own limits: admit exactly it (the format and JPEG scan checks stay)
    side = max(width, height, 1)
    limits = ImageLimits(max(width * height, 1), 1, side, max(1.0, side / max(min(width, height), 1)))
    try:
        frame = load_rgb(data, limits)
    except Exception as e:  # noqa: BLE001 - ImageRejected, or Pillow's many types for a bad file
        raise Unwritable("bad_image", f"cannot decode: {type(e).__name__}: {e}") from None
    if frame.size != (width, height):
        raise Unwritable("frame_mismatch", f"the frame is {frame.size}, the screenshot row says {(width, height)}")
    return frame


def frame_bytes(data: bytes, fmt: str, size: tuple[int, int]) -> bytes:
    """Encode the frame the coordinates refer to (:func:`screenmill.schemas.images.load_rgb`: EXIF-oriented 8-bit RGB,
    alpha on white), without EXIF, in the same format: JPEG at quality 95, PNG and WebP losslessly.

    Args:
        data: the file's bytes.
        fmt: its Pillow format name (``PNG``, ``JPEG``, ``WEBP``).
        size: the oriented ``(width, height)`` the screenshots row recorded.

    Raises:
        Unwritable: ``bad_image`` when the bytes do not decode; ``frame_mismatch`` when the frame is not ``size``.
    """
    return encode_frame(decode_frame(data, size), fmt)


def encode_frame(frame, fmt: str) -> bytes:
    """A decoded frame in Pillow format ``fmt``, without EXIF: JPEG at quality 95, PNG and WebP losslessly."""
    fmt = fmt.upper()
    options = {"JPEG": {"quality": 95}, "WEBP": {"lossless": True}}.get(fmt, {})
    out = io.BytesIO()
    frame.save(out, fmt, **options)
    return out.getvalue()


def place_image(shot: Mapping[str, Any], dest_path: str, mode: str) -> bool:
    """Put the screenshot at ``dest_path`` as the frame its coordinates refer to.

    Args:
        shot: the ``screenshots`` row.
        dest_path: where the image goes.
        mode: ``copy`` (the bytes), ``symlink`` (a link to ``source_uri`` when it is local and already the frame,
            else a copy) or ``none`` (nothing is written; the source is still checked). A file that is not the RGB,
            upright frame (:func:`needs_reencoding`) is re-encoded by :func:`frame_bytes` in ``copy`` and
            ``symlink`` mode.

    Returns:
        Whether a file (or link) was written.

    Raises:
        Unwritable: as :func:`read_source` and :func:`frame_bytes`.
    """
    data = read_source(shot)
    if mode == "none":
        return False
    reencode = needs_reencoding(shot)
    if reencode:
        data = frame_bytes(data, shot["format"], (int(shot["width"]), int(shot["height"])))
    if os.path.lexists(dest_path):
        os.remove(dest_path)
    if mode == "symlink" and not reencode and "://" not in shot["source_uri"]:
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


def _dead_letter(label_id: str, error: Unwritable, payload_ref: str, now: _dt.datetime) -> DeadLetter:
    return DeadLetter(label_id, "convert", error.reason, error.message, payload_ref, "", now)


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
    platform: str | None = None,
) -> Summary:
    """Convert table rows into DEST: the JSON file, the images, ``_dead_letter.jsonl`` (always rewritten).

    Args:
        labels: ``grounding`` rows.
        shots: ``screenshots`` rows (several rows of one ``screenshot_id``, e.g. episode steps, are one image: its
            :func:`screenmill.schemas.records.first_occurrence`).
        reviews: ``reviewed`` rows.
        dest: the output folder (created).
        target: ``screenspot`` or ``osworld-g``.
        images: ``copy``, ``symlink`` or ``none`` (see :func:`place_image`).
        reviewed: ``apply``, ``accept-only`` or ``ignore`` (see :func:`apply_review`).
        split: names the file and fills ``data_source``.
        variant: the ScreenSpot variant (``v1``, ``v2``, ``pro``); ignored for ``osworld-g``.
        platform: the platform of screenshots nothing else tells (:func:`screenshot_origin`), or None (``unknown``).

    Returns:
        A :class:`Summary` of what was written and left out.

    Raises:
        ValueError: an unknown ``target``, ``images``, ``reviewed``, ``variant`` or ``platform``.
        OSError: DEST cannot be written.
    """
    if target not in TARGETS or images not in IMAGE_MODES or reviewed not in REVIEW_MODES or variant not in VARIANTS:
        raise ValueError(f"bad option: target={target!r} images={images!r} reviewed={reviewed!r} variant={variant!r}")
    if platform is not None and platform not in PLATFORMS:
        raise ValueError(f"platform must be one of {PLATFORMS}, got {platform!r}")
    read_manifest = functools.cache(_read_manifest)  # once per folder, however many steps it has
    os.makedirs(dest, exist_ok=True)
    summary = Summary(path=os.path.join(dest, output_name(target, split, variant)))
    occurrences: dict[str, list[Mapping[str, Any]]] = {}
    for shot in shots:
        occurrences.setdefault(shot["screenshot_id"], []).append(shot)
    by_shot = {sid: first_occurrence(rows) for sid, rows in occurrences.items()}
    latest = latest_reviews(reviews)
    now = utcnow()
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
            dead += [_dead_letter(r["label_id"], error, sid, now) for r in rows]
            continue
        name = image_name(shot)
        pro = target == "screenspot" and variant == "pro"
        origin = screenshot_origin(shot, platform, read_manifest) if pro else Origin()
        ready: list[tuple[str, dict[str, Any]]] = []
        for row in rows:
            try:
                if target == "osworld-g":
                    ready.append((row["label_id"], to_osworld_g(row, shot, name)))
                else:
                    ready.append((row["label_id"], to_screenspot(row, shot, name, split, variant, origin)))
            except Unwritable as e:
                dead.append(_dead_letter(row["label_id"], e, shot["source_uri"], now))
        if not ready:
            continue
        try:
            summary.images += place_image(shot, os.path.join(dest, name), images)
        except Unwritable as e:
            dead += [_dead_letter(label_id, e, shot["source_uri"], now) for label_id, _ in ready]
            continue
        records += [record for _, record in ready]
    for letter in dead:
        summary.dropped[letter.reason] += 1
    summary.written = len(records)
    with open(summary.path, "w", encoding="utf-8") as f:
        json.dump(records, f, indent=2, ensure_ascii=False)
        f.write("\n")
    with open(os.path.join(dest, DEAD_LETTER_FILE), "w", encoding="utf-8") as f:
        f.writelines(letter.to_json() + "\n" for letter in dead)
    return summary
