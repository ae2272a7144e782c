"""Perceptual hashes: the DCT is right, the hash survives re-encoding and resizing, different screens stay apart.

The real-screenshot test measures what the guard's default threshold rests on (see :mod:`screenmill.schemas.phash`).
"""

from __future__ import annotations

import io
import itertools

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageOps
from screenmill.schemas.images import load_rgb
from screenmill.schemas.phash import HASH_BITS, dct_matrix, dhash, from_hex, hamming, phash, to_hex
from screenmill.stages.guard import DEFAULT_MAX_DISTANCE

LAYOUTS = 7


def ui_layout(kind: int, width: int = 800, height: int = 500) -> Image.Image:
    """A synthetic screen in one of seven different layouts (sidebar + list, card grid, modal dialog, form, dark
    article, chat, toolbar + canvas); deterministic."""
    dark = kind == 4
    im = Image.new("RGB", (width, height), (30, 32, 36) if dark else (248, 248, 250))
    d = ImageDraw.Draw(im)
    fg = (220, 220, 220) if dark else (30, 30, 30)
    d.rectangle([0, 0, width, 36], fill=(200, 200, 210) if dark else (60, 90, 160))
    d.text((12, 12), f"Screen {kind}", fill=(0, 0, 0) if dark else (255, 255, 255))
    if kind == 0:
        d.rectangle([0, 36, 200, height], fill=(45, 50, 60))
        for i in range(8):
            d.text((16, 60 + i * 40), f"Folder {i}", fill=(230, 230, 230))
            d.rectangle([220, 56 + i * 52, width - 20, 96 + i * 52], outline=(180, 180, 190))
            d.text((236, 70 + i * 52), f"Message subject number {i}", fill=fg)
    elif kind == 1:
        for r, c in itertools.product(range(2), range(3)):
            x, y = 30 + c * 255, 60 + r * 215
            d.rectangle([x, y, x + 230, y + 195], fill=(255, 255, 255), outline=(200, 200, 200))
            d.rectangle([x + 10, y + 10, x + 220, y + 130], fill=(90 + 40 * c, 140, 200 - 50 * r))
            d.text((x + 12, y + 150), f"Product {r * 3 + c}", fill=fg)
    elif kind == 2:
        d.rectangle([0, 36, width, height], fill=(120, 120, 125))
        d.rectangle([200, 140, 600, 360], fill=(255, 255, 255))
        d.text((230, 170), "Delete this file?", fill=fg)
        d.rectangle([440, 300, 580, 340], fill=(200, 40, 40))
        d.rectangle([300, 300, 420, 340], outline=(100, 100, 100))
    elif kind == 3:
        for i in range(5):
            d.text((60, 80 + i * 70), f"Field {i}", fill=fg)
            d.rectangle([200, 70 + i * 70, 700, 105 + i * 70], outline=(120, 120, 120), fill=(255, 255, 255))
        d.rectangle([560, 440, 700, 480], fill=(40, 150, 80))
    elif kind == 4:
        for i in range(12):
            d.rectangle([80, 70 + i * 34, 80 + (600 if i % 4 else 300), 84 + i * 34], fill=(150, 150, 155))
    elif kind == 5:
        for i in range(7):
            x0 = 20 if i % 2 == 0 else width - 380
            d.rounded_rectangle(
                [x0, 50 + i * 62, x0 + 360, 100 + i * 62], 12, fill=[(225, 228, 235), (70, 130, 240)][i % 2]
            )
    else:
        d.rectangle([0, 36, width, 90], fill=(235, 235, 240))
        for i in range(12):
            d.rectangle([10 + i * 45, 46, 44 + i * 45, 80], fill=(120 + 10 * i, 90, 160 - 10 * i))
        d.ellipse([250, 150, 550, 450], outline=(20, 20, 20), width=6)
        d.line([100, 450, 700, 120], fill=(200, 30, 30), width=8)
    return im


def encoded(im: Image.Image, fmt: str = "JPEG", **kw) -> bytes:
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def reencoded(im: Image.Image, quality: int = 70) -> Image.Image:
    return Image.open(io.BytesIO(encoded(im, "JPEG", quality=quality)))


def half(im: Image.Image) -> Image.Image:
    return im.resize((im.width // 2, im.height // 2), Image.Resampling.BICUBIC)


def test_dct_matrix_is_the_orthonormal_dct_ii():
    d = dct_matrix(32)
    assert np.allclose(d @ d.T, np.eye(32))
    x = np.random.default_rng(0).normal(size=32)
    n = np.arange(32)
    direct = [np.sum(x * np.cos(np.pi * (2 * n + 1) * k / 64)) * np.sqrt((1 if k else 0.5) * 2 / 32) for k in n]
    assert np.allclose(d @ x, direct)
    assert np.allclose(d @ np.full(32, 3.0), [3.0 * np.sqrt(32)] + [0.0] * 31)  # a flat signal is all DC


def test_hex_and_hamming():
    assert hamming(0b1011, 0b0001) == 2 and hamming(5, 5) == 0
    for value in (0, 1, 0x7FFF_FFFF_FFFF_FFFF, 0xDEAD_BEEF):
        assert from_hex(to_hex(value)) == value and len(to_hex(value)) == 16
    assert from_hex(" 00000000DEADBEEF\n") == 0xDEADBEEF
    for bad in ("", "xyz", "0" * 15, "0" * 17, "0x000000000000ff", "00000000 0000000", "g" * 16):
        with pytest.raises(ValueError, match="16-hex-digit"):
            from_hex(bad)
    with pytest.raises(ValueError):
        to_hex(-1)


def test_hash_shape_flat_images_and_inversion():
    h = phash(ui_layout(0))
    assert 0 <= h < 1 << HASH_BITS and h.bit_count() == 31  # the median splits the 63 coefficients 31 / 1 / 31
    assert phash(Image.new("RGB", (300, 200), (255, 255, 255))) == 0  # no float noise in the bits
    assert phash(Image.new("L", (64, 640), 17)) == 0
    assert hamming(h, phash(ImageOps.invert(ui_layout(0)))) >= 60  # a negative is nearly the complement


def test_any_mode_hashes_like_its_rgb_frame():
    im = ui_layout(5)
    h = phash(im)
    assert phash(im.convert("L")) == h
    assert phash(im.convert("RGBA")) == h
    assert hamming(phash(im.convert("P", palette=Image.Palette.ADAPTIVE, colors=64)), h) <= DEFAULT_MAX_DISTANCE
    sixteen = Image.fromarray(np.asarray(im.convert("L"), dtype=np.uint16) * 257)
    assert sixteen.mode.startswith("I;16") and phash(sixteen) == h


def test_exif_orientation_is_applied_first():
    upright = ui_layout(3, 400, 640)
    exif = Image.Exif()
    exif[0x0112] = 6  # stored rotated: a viewer turns it 90° clockwise
    data = encoded(upright.transpose(Image.Transpose.ROTATE_90), "JPEG", quality=95, exif=exif.tobytes())
    raw = Image.open(io.BytesIO(data))
    assert raw.size == (640, 400)
    assert phash(raw) == phash(load_rgb(data))  # the guard's decode and a plain open agree
    assert hamming(phash(raw), phash(upright)) <= 2
    sideways = Image.open(io.BytesIO(encoded(upright.transpose(Image.Transpose.ROTATE_90), "JPEG", quality=95)))
    assert hamming(phash(sideways), phash(upright)) > 16


def test_synthetic_screens_survive_reencoding_and_resizing_and_stay_apart():
    screens = [ui_layout(k) for k in range(LAYOUTS)]
    hashes = [phash(im) for im in screens]
    for k, (im, h) in enumerate(zip(screens, hashes, strict=True)):
        assert hamming(h, phash(reencoded(im))) <= DEFAULT_MAX_DISTANCE, k
        assert hamming(h, phash(half(im))) <= DEFAULT_MAX_DISTANCE, k
        assert hamming(h, phash(reencoded(half(im)))) <= DEFAULT_MAX_DISTANCE, k
        assert hamming(h, phash(Image.open(io.BytesIO(encoded(im, "WEBP", quality=80))))) <= DEFAULT_MAX_DISTANCE, k
    closest = min(hamming(a, b) for a, b in itertools.combinations(hashes, 2))
    assert closest >= 4 * DEFAULT_MAX_DISTANCE  # measured 24


def test_dhash_is_a_coarser_second_opinion():
    screens = [ui_layout(k) for k in range(LAYOUTS)]
    hashes = [dhash(im) for im in screens]
    assert all(0 <= h < 1 << 64 for h in hashes)
    assert min(hamming(a, b) for a, b in itertools.combinations(hashes, 2)) > 16  # measured 21
    assert max(hamming(h, dhash(reencoded(im))) for im, h in zip(screens, hashes, strict=True)) <= 8  # measured 7
    # ...but a flat form moves 15 of 64 bits when halved: why the guard relies on pHash alone.
    assert hamming(hashes[3], dhash(half(screens[3]))) > DEFAULT_MAX_DISTANCE


@pytest.fixture(scope="module")
def real_screens(shared_dir):
    files = sorted(p for p in (shared_dir / "screens").glob("*") if p.suffix.lower() in (".png", ".jpg", ".jpeg"))
    if len(files) < 2:
        pytest.skip("no real screenshots in ../shared/screens")
    return {p.name: load_rgb(p.read_bytes()) for p in files}


def test_real_screenshots_survive_reencoding_and_resizing(real_screens):
    worst = {"jpeg q70": 0, "0.5x": 0}
    for name, im in real_screens.items():
        h = phash(im)
        small = im.reduce(2)  # a cheap 0.5× (box filter): the full-size bicubic one measures the same 0-2
        for what, copy in (("jpeg q70", reencoded(im)), ("0.5x", small)):
            d = hamming(h, phash(copy))
            assert d <= DEFAULT_MAX_DISTANCE, (name, what, d)
            worst[what] = max(worst[what], d)
    print(f"worst distance over {len(real_screens)} real screenshots: {worst}")


def _thumb(im: Image.Image) -> np.ndarray:
    return np.asarray(im.convert("L").resize((128, 128), Image.Resampling.BOX), dtype=np.float64)


def test_distinct_real_screenshots_do_not_collide(real_screens):
    """Pairs within the threshold must be near-copies in pixels (a home screen whose clock moved, the same desktop
    captured twice); pairs that differ in pixels must be further apart than the threshold."""
    names = list(real_screens)
    hashes = {n: phash(real_screens[n]) for n in names}
    thumbs = {n: _thumb(real_screens[n]) for n in names}
    closest_distinct, near_copies = 64, 0
    for a, b in itertools.combinations(names, 2):
        d = hamming(hashes[a], hashes[b])
        pixel_diff = float(np.abs(thumbs[a] - thumbs[b]).mean())  # mean |Δ luma| of 128×128 thumbnails, 0..255
        if pixel_diff < 8.0:
            near_copies += 1
        else:
            closest_distinct = min(closest_distinct, d)
            assert d > DEFAULT_MAX_DISTANCE, (a, b, d, pixel_diff)
        if d <= DEFAULT_MAX_DISTANCE:
            assert pixel_diff < 8.0, (a, b, d, pixel_diff)
    print(f"{len(names)} real screenshots: {near_copies} near-copy pairs, closest distinct pair {closest_distinct}")
