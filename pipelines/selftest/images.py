"""Synthetic screenshots and hostile image bytes: the raw material of the corpus, the service and the kill -9 runs.

Every maker is deterministic (a seed in, the same bytes out), so a figure never depends on the run.
"""

from __future__ import annotations

import io


def ui(seed: int, width: int = 320, height: int = 200, mode: str = "RGB"):
    """A small synthetic UI (title bar, three buttons), distinct bytes for every seed."""
    from PIL import Image, ImageDraw

    im = Image.new("RGB", (width, height), (200 + seed % 50, 210 + seed % 40, 220 + seed % 30))
    draw = ImageDraw.Draw(im)
    draw.rectangle([0, 0, width, 24], fill=(40, 60 + seed % 100, 120))
    draw.text((8, 6), f"Window {seed}", fill=(255, 255, 255))
    for i in range(3):
        draw.rectangle([10 + i * 100, 60, 90 + i * 100, 90], outline=(0, 0, 0), fill=(230, 230, 230))
        draw.text((20 + i * 100, 70), ("OK", "Cancel", "Help")[i], fill=(0, 0, 0))
    return im if mode == "RGB" else im.convert(mode)


def encode(im, fmt: str, **kw) -> bytes:
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def png_header_only(width: int, height: int) -> bytes:
    """A small, CRC-valid PNG whose header claims width × height (never decoded by a good ingest)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b"")
    )


def flip(data: bytes, pos: int, mask: int = 0x10) -> bytes:
    b = bytearray(data)
    b[pos] ^= mask
    return bytes(b)


def scan_bomb_jpeg(side: int = 2000, extra_scans: int = 100) -> bytes:
    """A progressive JPEG with ``extra_scans`` copies of its last (refinement) scan: small file, every scan a pass
    over every block (minutes to decode at 7000×7000 with a few thousand scans)."""
    from PIL import Image

    data = encode(Image.new("RGB", (side, side), (200, 200, 200)), "JPEG", progressive=True, quality=50)
    last = data.rindex(b"\xff\xda")
    eoi = data.rindex(b"\xff\xd9")
    return data[:eoi] + data[last:eoi] * extra_scans + data[eoi:]


def image_files() -> list[tuple[str, bytes, str | None, str]]:
    """(name, bytes, expected reason, what) of the loose files at the corpus root."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(7)
    good_png, good_jpg, good_webp = encode(ui(1), "PNG"), encode(ui(2), "JPEG", quality=85), encode(ui(3), "WEBP")
    frames = [ui(40 + i) for i in range(3)]
    idat = good_png.index(b"IDAT")
    sof = bytearray(encode(ui(4), "JPEG"))
    at = sof.index(b"\xff\xc0") + 5
    sof[at : at + 4] = (65000).to_bytes(2, "big") * 2
    cmyk = encode(ui(5).convert("CMYK"), "JPEG", quality=90)
    palette = encode(ui(6).convert("P", palette=Image.Palette.ADAPTIVE, colors=16), "PNG", transparency=0)
    sixteen = encode(Image.fromarray((np.arange(200 * 320).reshape(200, 320) * 3 % 65536).astype(np.uint16)), "PNG")
    floats = encode(Image.fromarray(rng.random((200, 320)).astype(np.float32)), "TIFF")
    return [
        ("good.png", good_png, None, "a good PNG"),
        ("good.jpg", good_jpg, None, "a good JPEG"),
        ("good.webp", good_webp, None, "a good WebP"),
        ("random.png", rng.bytes(2048), "not_an_image", "random bytes named .png"),
        ("random.jpg", rng.bytes(2048), "not_an_image", "random bytes named .jpg"),
        ("random.webp", rng.bytes(2048), "not_an_image", "random bytes named .webp"),
        ("text.jpg", b"hello, not a picture\n" * 20, "not_an_image", "a text file named .jpg"),
        ("empty.png", b"", "empty_file", "zero bytes"),
        ("empty.webp", b"", "empty_file", "zero bytes"),
        ("truncated.png", good_png[: len(good_png) // 2], "truncated", "half a PNG"),
        ("truncated.jpg", good_jpg[: len(good_jpg) // 2], "truncated", "half a JPEG"),
        ("truncated.webp", good_webp[: len(good_webp) // 2], "truncated", "half a WebP"),
        ("bitflip.png", flip(good_png, idat + 40), "corrupt_image", "a bit flipped in the PNG pixel data (CRC)"),
        (
            "bitflip_header.jpg",
            flip(good_jpg, good_jpg.index(b"\xff\xc4") + 1, 0x01),
            "corrupt_image",
            "the JPEG Huffman table marker damaged",
        ),
        (
            "bitflip_data.jpg",
            flip(good_jpg, len(good_jpg) * 2 // 3),
            None,
            "a bit flipped in JPEG entropy data: decodes (garbled block), accepted like any decoder would",
        ),
        ("bitflip.webp", flip(good_webp, 40, 0xFF), "corrupt_image", "a damaged WebP bitstream"),
        ("bomb.png", png_header_only(30_000, 30_000), "decompression_bomb", "30000x30000 claimed by a tiny PNG"),
        ("bomb.jpg", bytes(sof), "decompression_bomb", "65000x65000 claimed by a tiny JPEG"),
        ("scan_bomb.jpg", scan_bomb_jpeg(), "decompression_bomb", "a progressive JPEG with 110 scans"),
        ("zero.png", png_header_only(0, 0), "corrupt_image", "a 0x0 PNG"),
        ("one_by_n.png", encode(Image.new("RGB", (1, 600), (9, 9, 9)), "PNG"), "too_small", "1x600"),
        ("sliver.png", png_header_only(3000, 40), "extreme_aspect_ratio", "3000x40"),
        ("huge_side.png", png_header_only(17_000, 1000), "too_large", "17000x1000"),
        (
            "anim.gif",
            encode(frames[0], "GIF", save_all=True, append_images=frames[1:]),
            "unsupported_format",
            "an animated GIF",
        ),
        ("gif_named.png", encode(frames[1], "GIF"), "unsupported_format", "a GIF named .png"),
        (
            "anim.webp",
            encode(frames[0], "WEBP", save_all=True, append_images=frames[1:]),
            None,
            "an animated WebP: its first frame is the screenshot",
        ),
        (
            "apng.png",
            encode(frames[2], "PNG", save_all=True, append_images=frames[:2]),
            None,
            "an animated PNG: its first frame is the screenshot",
        ),
        ("sixteen_bit.png", sixteen, None, "16-bit grayscale (I;16)"),
        ("float_tiff.png", floats, "unsupported_format", "a float (F) TIFF named .png"),
        ("cmyk.jpg", cmyk, None, "a CMYK JPEG"),
        ("palette_alpha.png", palette, None, "a palette PNG with transparency"),
        ("jpeg_named.png", encode(ui(7), "JPEG"), None, "a JPEG named .png: accepted with its real format"),
        ("webp_named.jpg", encode(ui(8), "WEBP"), None, "a WebP named .jpg: accepted with its real format"),
        ("notes.txt", b"not an input", "-", "not an image extension: ignored, not an input"),
    ]
