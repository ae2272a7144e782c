"""Perceptual hashes of screenshots (numpy + Pillow only): the DCT pHash, a difference hash, Hamming distance.

Two images whose hashes differ in few bits look alike. The benchmark-leakage guard (:mod:`screenmill.stages.guard`)
compares every screenshot's :func:`phash` against the hashes of a benchmark's images.

:func:`phash` is the classic DCT hash: EXIF orientation applied, 8-bit luma, resized to 32×32 (Lanczos, always the
same filter), 2-D DCT-II (orthonormal, one precomputed matrix), the top-left 8×8 block of lowest frequencies minus
the DC term (which only carries mean brightness), each of the 63 coefficients thresholded at their median. Bit
``i`` (LSB first) is coefficient ``i + 1`` of the block in row-major order; bit 63 is always 0, so a hash is an int
below 2**63 written as 16 hex digits and distances run 0..63.

:func:`dhash` (9×8 luma, is each pixel darker than its right neighbour, 64 bits) is cheaper and coarser; it is kept
as a second opinion for callers and is not used by the guard.

Robustness, measured on synthetic UIs and on the 67 real phone / desktop / web screenshots of the shared data set
(``tests/schemas/test_phash.py`` keeps the JPEG q70, 0.5× and distinct-screen bounds true). pHash distances are even,
as 31 of the 63 bits are set (barring ties):

* re-encoding moves a hash by 0-2 bits (JPEG q70 and q50, WebP q80), 0-4 at JPEG q30;
* resizing by 0-2 (0.25×, 0.5×, 1.5× with an area-aware filter; 0.5× + JPEG q70), 0-4 for a nearest-neighbour 0.5×;
* crops are the weak spot (the 32×32 grid shifts): a 1 % border crop moves it by 0-8 (most ≤ 4), 2 % by 2-18; so
  does a +10 % brightness change (0-8); a dark-mode (inverted) copy is far away;
* different screenshots: the closest visually different pair is 6 bits apart (the same Android notification shade
  over two apps), different apps ≥ 8 (Excel vs Word ribbons, a Google results page vs OneNote), median 30.
  Near-copies (a home screen whose clock changed, one desktop captured twice at two sizes) are 0-2 apart.

Hence the guard's default threshold of 4. Hashes depend on Pillow's resampling code: compare hashes made by this
module under one Pillow major version.
"""

from __future__ import annotations

import functools

import numpy as np
from PIL import Image, ImageOps

HASH_BITS = 63
HEX_DIGITS = 16
PHASH_SIZE = 32
PHASH_LOW = 8
DHASH_SIZE = 8
RESAMPLE = Image.Resampling.LANCZOS
_ORIENTATION = 0x0112


@functools.cache
def dct_matrix(n: int = PHASH_SIZE) -> np.ndarray:
    """The orthonormal DCT-II matrix ``D`` (``D @ x`` transforms a column vector; ``D @ D.T == I``)."""
    k = np.arange(n)[:, None]
    i = np.arange(n)[None, :]
    d = np.sqrt(2.0 / n) * np.cos(np.pi * (2 * i + 1) * k / (2 * n))
    d[0, :] /= np.sqrt(2.0)
    d.setflags(write=False)
    return d


def luma(image: Image.Image) -> Image.Image:
    """The image as upright 8-bit luma (``L``): EXIF orientation applied, alpha composited on white, 16-bit, float,
    palette and CMYK modes converted the way :func:`screenmill.schemas.images.to_rgb` does."""
    from screenmill.schemas.images import to_rgb

    try:
        orientation = int(image.getexif().get(_ORIENTATION, 1) or 1)
    except Exception:  # noqa: BLE001 - a broken EXIF block means no orientation, as in screenmill.schemas.images
        orientation = 1
    if orientation != 1:
        image = ImageOps.exif_transpose(image)
    if image.mode == "L":
        return image
    return to_rgb(image).convert("L")


def _bits_to_int(bits: np.ndarray) -> int:
    return int(sum(1 << i for i, bit in enumerate(bits.ravel().tolist()) if bit))


def phash(image: Image.Image) -> int:
    """The 63-bit DCT perceptual hash of a Pillow image (any mode; EXIF orientation applied first).

    Args:
        image: a Pillow image, loaded or not.

    Returns:
        An int in ``[0, 2**63)``; :func:`hamming` of two hashes is their distance (0..63).

    Raises:
        OSError / ValueError: Pillow cannot decode the pixels.
    """
    small = luma(image).resize((PHASH_SIZE, PHASH_SIZE), RESAMPLE)
    pixels = np.asarray(small, dtype=np.float64)
    d = dct_matrix(PHASH_SIZE)
    # Rounded so that float noise cannot set bits: a flat image hashes to 0 on every machine.
    low = np.round((d @ pixels @ d.T)[:PHASH_LOW, :PHASH_LOW].ravel()[1:], 6)
    return _bits_to_int(low > np.median(low))


def dhash(image: Image.Image) -> int:
    """The 64-bit difference hash: 9×8 luma, bit set where a pixel is darker than its right neighbour."""
    small = np.asarray(luma(image).resize((DHASH_SIZE + 1, DHASH_SIZE), RESAMPLE), dtype=np.int16)
    return _bits_to_int(small[:, :-1] < small[:, 1:])


def hamming(a: int, b: int) -> int:
    """How many bits two hashes differ in."""
    return (a ^ b).bit_count()


def to_hex(value: int) -> str:
    """A hash as 16 lower-case hex digits."""
    if not 0 <= value < 1 << 64:
        raise ValueError(f"not a 64-bit hash: {value}")
    return f"{value:0{HEX_DIGITS}x}"


def from_hex(text: str) -> int:
    """Parse 16 hex digits (any case) back into a hash.

    Raises:
        ValueError: ``text`` is not exactly 16 hex digits.
    """
    text = text.strip()
    if len(text) != HEX_DIGITS or any(c not in "0123456789abcdefABCDEF" for c in text):
        raise ValueError(f"{text!r} is not a {HEX_DIGITS}-hex-digit perceptual hash")
    return int(text, 16)
