"""Reading PNG files without decoding them whole: whether a screenshot is a single colour (a blank screen).

Chromium's screenshots are 8-bit RGB(A) PNGs; :func:`one_colour` reads such a file row by row from its compressed
stream and stops at the first row that differs, a fraction of a full decode on most pages (Pillow decodes every row
before it can say, ~30-50x slower on a typical 1280x800 page; both agree on every image, see the tests), and hands
any other image to Pillow.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Iterator


def one_colour(png: bytes) -> bool:
    """Whether the image is a single colour (a blank screen). An 8-bit RGB(A) PNG, what Chromium writes, is read row
    by row from its compressed stream and stops at the first row that is not the first pixel's colour (most pages
    differ near the top: a fraction of a full decode); other images are decoded whole."""
    known = _png_one_colour(png)
    if known is not None:
        return known
    from PIL import Image

    with Image.open(io.BytesIO(png)) as im:
        extrema = (im if im.mode in ("RGB", "RGBA") else im.convert("RGB")).getextrema()
    return all(lo == hi for lo, hi in extrema)


def _png_one_colour(png: bytes) -> bool | None:
    """:func:`one_colour` without decoding pixels, for a non-interlaced 8-bit RGB or RGBA PNG (None: another image).

    Unfiltering is one-to-one given the row above, so an image is one colour ``p`` (its first pixel: the first
    filtered bytes, whatever row 0's filter) exactly when every filtered row is what each PNG filter makes of a row of
    ``p`` under a row of ``p`` (or of zeros, above row 0): None ``p p p``, Sub ``p 0 0``, Up ``0 0 0`` (row 0:
    ``p p p``), Average ``p-p//2, 0 0`` (row 0: ``p, p-p//2 ...``), Paeth ``0 0 0`` (row 0: ``p 0 0``)."""
    if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        return None
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", png[16:29])
    if depth != 8 or colour not in (2, 6) or interlace or not width or not height:
        return None
    bpp = 3 if colour == 2 else 4
    expected: dict[tuple[int, bool], bytes] = {}
    row = 0
    try:
        for line in _png_rows(png, 1 + width * bpp):
            if not expected:
                p, zeros, blank = line[1 : 1 + bpp], bytes(width * bpp - bpp), bytes(width * bpp)
                half = bytes((c - c // 2) & 255 for c in p)
                expected = {  # (filter, row 0) -> the filtered row of a one-colour image
                    (0, True): b"\x00" + p * width,
                    (0, False): b"\x00" + p * width,
                    (1, True): b"\x01" + p + zeros,
                    (1, False): b"\x01" + p + zeros,
                    (2, True): b"\x02" + p * width,
                    (2, False): b"\x02" + blank,
                    (3, True): b"\x03" + p + half * (width - 1),
                    (3, False): b"\x03" + half + zeros,
                    (4, True): b"\x04" + p + zeros,
                    (4, False): b"\x04" + blank,
                }
            if line[0] > 4:
                return None  # not a PNG filter: the full decode says what it is
            if line != expected[(line[0], row == 0)]:
                return False
            row += 1
            if row == height:
                return True
    except zlib.error:
        return None  # a corrupt stream: the full decode says what it is
    return None  # too few rows: likewise


def _png_rows(png: bytes, stride: int) -> Iterator[bytes]:
    """The filtered rows (filter byte first) of a non-interlaced PNG, inflated a few rows at a time."""
    inflate = zlib.decompressobj()
    pos, pending = 8, b""
    while pos + 8 <= len(png):
        size, kind = struct.unpack(">I4s", png[pos : pos + 8])
        data = png[pos + 8 : pos + 8 + size] if kind == b"IDAT" else b""
        pos += 12 + size
        while data:
            pending += inflate.decompress(data, 64 * stride)
            data = inflate.unconsumed_tail
            full = len(pending) // stride * stride
            for at in range(0, full, stride):
                yield pending[at : at + stride]
            pending = pending[full:]
