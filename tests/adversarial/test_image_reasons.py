"""Reasons stay stable and say what happened: a cut WebP is ``truncated`` (not ``corrupt_image``) wherever it is cut,
and bytes that carry an accepted format's signature but an unparsable header are ``corrupt_image``, not
``not_an_image``."""

from __future__ import annotations

import io
import struct

import pytest
from PIL import Image
from screenmill.pipelines.selftest.fixtures import png_header_only, ui
from screenmill.schemas.images import ImageRejected, inspect_image, load_rgb

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies


def _webp(**kw) -> bytes:
    buf = io.BytesIO()
    ui(3).save(buf, "WEBP", **kw)
    return buf.getvalue()


WEBPS = {"lossy": _webp(quality=80), "lossless": _webp(lossless=True)}


def _reasons(data: bytes) -> set[str]:
    found = set()
    for fn in (inspect_image, load_rgb):
        with pytest.raises(ImageRejected) as err:
            fn(data)
        found.add(err.value.reason)
    return found


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(st.sampled_from(sorted(WEBPS)), st.data())
def test_a_webp_cut_anywhere_after_its_signature_is_truncated(kind, data):
    full = WEBPS[kind]
    cut = data.draw(st.integers(12, len(full) - 1))
    assert _reasons(full[:cut]) == {"truncated"}


@pytest.mark.parametrize(
    "data",
    [
        png_header_only(0, 0),
        png_header_only(0, 100),
        b"\x89PNG\r\n\x1a\n" + b"\x00" * 40,
        b"\xff\xd8\xff\xe0" + b"\x00" * 40,
    ],
    ids=["png-0x0", "png-0x100", "png-garbage-header", "jpeg-garbage-header"],
)
def test_a_known_signature_with_a_broken_header_is_corrupt(data):
    assert _reasons(data) == {"corrupt_image"}


def test_a_zero_height_jpeg_is_corrupt():
    buf = io.BytesIO()
    Image.new("RGB", (64, 64)).save(buf, "JPEG")
    data = bytearray(buf.getvalue())
    at = data.index(b"\xff\xc0") + 5
    data[at : at + 2] = struct.pack(">H", 0)
    assert _reasons(bytes(data)) == {"corrupt_image"}


def test_plain_text_is_still_not_an_image():
    assert _reasons(b"hello\n" * 20) == {"not_an_image"}
