"""Reading PNG streams without a full decode (:mod:`screenmill.schemas.png`)."""

from __future__ import annotations

import io
import random
import struct
import zlib

from PIL import Image
from screenmill.schemas.png import _png_one_colour, one_colour


def _png(pixels: list[list[tuple[int, ...]]], filters: list[int]) -> bytes:
    """A PNG of ``pixels`` (rows of RGB or RGBA tuples) with the given PNG filter on each row (a reference encoder)."""
    bpp = len(pixels[0][0])
    raw, above = b"", bytes(len(pixels[0]) * bpp)
    for row, f in zip(pixels, filters, strict=True):
        line = bytes(c for px in row for c in px)
        out = bytearray()
        for i, x in enumerate(line):
            a = line[i - bpp] if i >= bpp else 0
            b, c = above[i], (above[i - bpp] if i >= bpp else 0)
            p = a + b - c
            paeth = (
                a if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c) else b if abs(p - b) <= abs(p - c) else c
            )
            out.append((x - (0, a, b, (a + b) // 2, paeth)[f]) & 255)
        raw += bytes([f]) + bytes(out)
        above = line

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    head = struct.pack(">IIBBBBB", len(pixels[0]), len(pixels), 8, 2 if bpp == 3 else 6, 0, 0, 0)
    idat = zlib.compress(raw)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", head)
        + chunk(b"IDAT", idat[:7])
        + chunk(b"IDAT", idat[7:])
        + (chunk(b"IEND", b""))
    )


def test_one_colour_reads_the_png_stream_and_agrees_with_decoding_under_every_filter():
    rng = random.Random(7)
    for bpp in (3, 4):
        for colour in [(0,) * bpp, (255,) * bpp, (200, 17, 255, 128)[:bpp], (1, 254, 127, 255)[:bpp]]:
            for trial in range(40):
                w, h = rng.randint(1, 9), rng.randint(1, 7)
                pixels = [[colour] * w for _ in range(h)]
                if trial % 2:  # one pixel off, anywhere (often the very last)
                    y, x = (h - 1, w - 1) if trial % 4 == 1 else (rng.randrange(h), rng.randrange(w))
                    pixels[y][x] = tuple((c + rng.randint(1, 255)) & 255 for c in colour)
                filters = [rng.randrange(5) for _ in range(h)]
                png = _png(pixels, filters)
                with Image.open(io.BytesIO(png)) as im:
                    decoded = all(lo == hi for lo, hi in im.getextrema())
                assert decoded == (len({px for row in pixels for px in row}) == 1)  # the reference encoder
                assert _png_one_colour(png) is decoded, (bpp, colour, trial, filters)
                assert one_colour(png) is decoded
    grey = io.BytesIO()
    Image.new("L", (4, 4), 9).save(grey, format="PNG")
    assert _png_one_colour(grey.getvalue()) is None and one_colour(grey.getvalue())  # decoded whole instead
