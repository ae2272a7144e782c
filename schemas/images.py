"""How a screenshot's bytes become the RGB frame every coordinate refers to, and what makes bytes unacceptable.

One function decides both, so ingest (which validates) and the annotators (which need pixels) can never disagree:
:func:`inspect_image` validates and measures; :func:`load_rgb` decodes, applies the EXIF orientation and converts
palette / CMYK / alpha / 16-bit / float modes to 8-bit RGB (alpha is composited on white).

Reason codes raised with :class:`ImageRejected` are stable strings (docs/reason-codes.md): ``empty_file``,
``not_an_image``, ``unsupported_format``, ``decompression_bomb``, ``too_small``, ``too_large``,
``extreme_aspect_ratio``, ``truncated``, ``corrupt_image``.

Decode cost is bounded before any pixel is decoded: width × height by ``ImageLimits.max_pixels``, and the number of
scans of a progressive JPEG by :data:`MAX_JPEG_SCANS` (a decoder walks every block once per scan, so a 300 KB file
with thousands of empty scans at 7000×7000 takes minutes to decode: ``decompression_bomb``).
"""

from __future__ import annotations

import dataclasses
import io
import warnings

import numpy as np
from PIL import Image, ImageFile, ImageOps, UnidentifiedImageError
from screenmill.schemas.records import Rejected

# Never accept a half image: Pillow's default, asserted here because a library elsewhere may have flipped it.
ImageFile.LOAD_TRUNCATED_IMAGES = False

FORMATS = ("PNG", "JPEG", "WEBP")
_ROTATING_ORIENTATIONS = (5, 6, 7, 8)
_PNG_TRAILER = b"IEND\xaeB`\x82"
# libjpeg's standard progression has 10 scans (6 for grayscale) and encoder scan scripts stay far below this; each
# scan costs a pass over every block (~1 ns per pixel), so 32 keeps a 50-Mpixel JPEG near 2 s per decode.
MAX_JPEG_SCANS = 32
_SOS = b"\xff\xda"


class ImageRejected(Rejected):
    """Raised for bytes that are not an acceptable screenshot; ``reason`` is a stable dead-letter code."""


@dataclasses.dataclass(frozen=True, slots=True)
class ImageLimits:
    """What a screenshot may be.

    Attributes:
        max_pixels: width × height above which an image is a decompression bomb (checked from the header, before
            any pixel is decoded).
        min_side: smaller width or height is ``too_small`` (1×1 trackers, icons).
        max_side: larger width or height is ``too_large``.
        max_aspect: a longer/shorter side ratio above this is ``extreme_aspect_ratio``.
        formats: accepted container formats (Pillow names).
    """

    max_pixels: int = 50_000_000
    min_side: int = 32
    max_side: int = 16_384
    max_aspect: float = 32.0
    formats: tuple[str, ...] = FORMATS

    def __post_init__(self):
        if self.max_pixels <= 0 or self.min_side <= 0 or self.max_side < self.min_side:
            raise ValueError(f"ImageLimits: need max_pixels > 0 and 0 < min_side <= max_side, got {self}")
        if self.max_aspect < 1:
            raise ValueError(f"ImageLimits: max_aspect must be >= 1, got {self.max_aspect}")
        unknown = set(self.formats) - set(FORMATS)
        if unknown:
            raise ValueError(f"ImageLimits: unsupported formats {sorted(unknown)}; known: {FORMATS}")


@dataclasses.dataclass(frozen=True, slots=True)
class ImageInfo:
    """What :func:`inspect_image` learned: ``width``/``height`` are after EXIF orientation."""

    format: str
    width: int
    height: int
    mode: str
    orientation: int
    frames: int


def _open(data: bytes, limits: ImageLimits) -> tuple[Image.Image, ImageInfo]:
    if not data:
        raise ImageRejected("empty_file", "the file has zero bytes")
    if _signature(data) == "WEBP" and len(data) < 8 + int.from_bytes(data[4:8], "little"):
        raise ImageRejected("truncated", "the file is shorter than its RIFF header says")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            im = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as e:
        raise ImageRejected("decompression_bomb", str(e)) from None
    except UnidentifiedImageError:
        fmt = _signature(data)
        if fmt:  # the magic bytes of an accepted format, a header that does not parse (e.g. a 0x0 PNG)
            raise ImageRejected("corrupt_image", f"{fmt} signature, but its header does not parse") from None
        raise ImageRejected("not_an_image", "no image format recognises these bytes") from None
    except (OSError, SyntaxError, ValueError) as e:
        raise ImageRejected("corrupt_image", f"header unreadable: {e}") from None
    if im.format not in limits.formats:
        raise ImageRejected("unsupported_format", f"format {im.format} is not one of {', '.join(limits.formats)}")
    w, h = im.size
    if w * h > limits.max_pixels:
        raise ImageRejected("decompression_bomb", f"{w}x{h} = {w * h} pixels exceeds the limit of {limits.max_pixels}")
    if min(w, h) < limits.min_side:
        raise ImageRejected("too_small", f"{w}x{h}: a side is under {limits.min_side} px")
    if max(w, h) > limits.max_side:
        raise ImageRejected("too_large", f"{w}x{h}: a side is over {limits.max_side} px")
    if max(w, h) / min(w, h) > limits.max_aspect:
        raise ImageRejected("extreme_aspect_ratio", f"{w}x{h}: aspect ratio over {limits.max_aspect}")
    if im.format == "JPEG" and data.count(_SOS) > MAX_JPEG_SCANS:  # the count is an upper bound: walk when over
        scans = jpeg_scans(data, stop_after=MAX_JPEG_SCANS)
        if scans > MAX_JPEG_SCANS:
            raise ImageRejected("decompression_bomb", f"over {MAX_JPEG_SCANS} JPEG scans (each decodes every block)")
    try:
        # Pillow's PNG getexif() decodes every pixel to look for a late eXIf chunk: skip it when there is none.
        has_exif = im.format != "PNG" or b"eXIf" in data
        orientation = int(im.getexif().get(0x0112, 1) or 1) if has_exif else 1
    except Exception:  # noqa: BLE001 - a broken EXIF block must not reject an otherwise good image
        orientation = 1
    if orientation not in range(1, 9):
        orientation = 1
    if orientation in _ROTATING_ORIENTATIONS:
        w, h = h, w
    info = ImageInfo(im.format, w, h, im.mode, orientation, int(getattr(im, "n_frames", 1) or 1))
    return im, info


def _signature(data: bytes) -> str | None:
    """The accepted format whose magic bytes ``data`` starts with, if any."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if data.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    return None


def jpeg_scans(data: bytes, stop_after: int | None = None) -> int:
    """How many scans (SOS segments) a JPEG has, walking its marker segments and skipping entropy-coded data.

    Stops at EOI, at the first malformed byte (the decoder reports those) or once the count exceeds ``stop_after``.
    """
    n, i, end = 0, 2, len(data)
    while i + 1 < end:
        if data[i] != 0xFF:
            return n
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker == 0xD9:
            return n
        if marker == 0x01 or 0xD0 <= marker <= 0xD8:  # TEM, RSTn, SOI: no length
            i += 2
            continue
        if i + 4 > end:
            return n
        i += 2 + int.from_bytes(data[i + 2 : i + 4], "big")
        if marker != 0xDA:
            continue
        n += 1
        if stop_after is not None and n > stop_after:
            return n
        while True:  # entropy-coded data runs to the next 0xFF that is not stuffing (FF00) nor a restart (FFD0-D7)
            j = data.find(b"\xff", i)
            if j < 0 or j + 1 >= end:
                return n
            nxt = data[j + 1]
            if nxt == 0x00 or 0xD0 <= nxt <= 0xD7:
                i = j + 2
            elif nxt == 0xFF:
                i = j + 1
            else:
                i = j
                break
    return n


def _decode(im: Image.Image) -> None:
    try:
        im.load()
    except OSError as e:
        text = str(e)
        if "truncated" in text or "broken data stream" in text or "Truncated" in text:
            raise ImageRejected("truncated", text) from None
        raise ImageRejected("corrupt_image", text) from None
    except (SyntaxError, ValueError, EOFError, Image.DecompressionBombError) as e:
        raise ImageRejected("corrupt_image", f"{type(e).__name__}: {e}") from None


def inspect_image(data: bytes, limits: ImageLimits = ImageLimits()) -> ImageInfo:
    """Validate screenshot bytes and measure them, decoding every byte of the pixel data once.

    JPEGs decode in DCT-scaled draft mode (1/8 size): every entropy-coded byte is still read, so truncation is
    still caught, at a fraction of the cost. PNGs are verified chunk by chunk (every CRC, the IEND trailer) without
    inflating the pixels; a PNG whose compressed stream is corrupt under valid CRCs is caught where pixels are
    decoded (:func:`load_rgb`, in the annotators) and dead-lettered there. Other formats decode fully.

    Args:
        data: the file's bytes.
        limits: size and format limits.

    Returns:
        An :class:`ImageInfo` (sizes after EXIF orientation).

    Raises:
        ImageRejected: with a stable ``reason`` code when the bytes are not an acceptable screenshot.
    """
    im, info = _open(data, limits)
    if im.format == "PNG":
        if not data.endswith(_PNG_TRAILER):
            raise ImageRejected("truncated", "the PNG has no IEND trailer")
        try:
            Image.open(io.BytesIO(data)).verify()  # verify() must come straight after open()
        except OSError as e:
            raise ImageRejected("truncated", str(e)) from None
        except (SyntaxError, ValueError, EOFError) as e:
            raise ImageRejected("corrupt_image", f"{type(e).__name__}: {e}") from None
        return info
    if im.format == "JPEG":
        im.draft("RGB", (max(1, im.size[0] // 8), max(1, im.size[1] // 8)))
    _decode(im)
    return info


def to_rgb(im: Image.Image) -> Image.Image:
    """Convert any Pillow mode to 8-bit RGB: 16-bit and 32-bit integer modes keep their top 8 bits, float modes
    are scaled from [0, 1] (or clipped to [0, 255]), alpha is composited on white, CMYK and palettes are converted."""
    mode = im.mode
    if mode == "RGB":
        return im
    if mode.startswith("I;16") or mode == "I":
        arr = np.asarray(im, dtype=np.int64)
        arr = (np.clip(arr, 0, 65535) >> 8).astype(np.uint8)
        return Image.fromarray(arr, "L").convert("RGB")
    if mode == "F":
        arr = np.asarray(im, dtype=np.float64)
        arr = np.nan_to_num(arr, nan=0.0, posinf=255.0, neginf=0.0)
        if arr.size and float(arr.max()) <= 1.0:
            arr = arr * 255.0
        return Image.fromarray(np.clip(arr + 0.5, 0, 255).astype(np.uint8), "L").convert("RGB")
    if mode == "P" or mode == "PA":
        im = im.convert("RGBA")
        mode = "RGBA"
    if mode in ("RGBA", "LA", "La", "RGBa"):
        rgba = im.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    return im.convert("RGB")


def load_rgb(data: bytes, limits: ImageLimits = ImageLimits()) -> Image.Image:
    """Decode screenshot bytes into the canonical frame: first frame, EXIF-oriented, 8-bit RGB.

    Args:
        data: the file's bytes.
        limits: size and format limits (the same checks as :func:`inspect_image`).

    Returns:
        A loaded RGB Pillow image whose size equals :func:`inspect_image`'s ``width`` × ``height``.

    Raises:
        ImageRejected: as :func:`inspect_image`.
    """
    im, info = _open(data, limits)
    _decode(im)
    if info.orientation != 1:
        im = ImageOps.exif_transpose(im)
    return to_rgb(im)
