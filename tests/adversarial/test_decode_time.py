"""Decode cost is bounded before decoding: no small file may keep a worker busy for long.

The pixel limit (``ImageLimits.max_pixels``) bounds one pass over the pixels; a progressive JPEG can ask for any
number of passes (scans), so :data:`screenmill.schemas.images.MAX_JPEG_SCANS` bounds those too. Before that bound, a
100 KB JPEG of 4000×4000 with a thousand copies of one refinement scan took ~17 s per decode (and ingest and annotate
each decode).
"""

from __future__ import annotations

import io
import time

import pytest
from PIL import Image
from screenmill.pipelines.selftest.fixtures import image_files, scan_bomb_jpeg
from screenmill.schemas.images import MAX_JPEG_SCANS, ImageRejected, inspect_image, jpeg_scans, load_rgb

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies


def _progressive(side: int = 64, mode: str = "RGB") -> bytes:
    buf = io.BytesIO()
    Image.new(mode, (side, side), 128).save(buf, "JPEG", progressive=True)
    return buf.getvalue()


def test_a_scan_bomb_is_refused_before_decoding():
    bomb = scan_bomb_jpeg(side=4000, extra_scans=1000)
    assert len(bomb) < 200_000 and jpeg_scans(bomb) == 1010
    for fn in (inspect_image, load_rgb):
        started = time.monotonic()
        with pytest.raises(ImageRejected) as err:
            fn(bomb)
        assert err.value.reason == "decompression_bomb"
        assert time.monotonic() - started < 1.0


def test_the_scan_limit_is_exact():
    at_limit = scan_bomb_jpeg(side=64, extra_scans=MAX_JPEG_SCANS - 10)  # the standard progression has 10 scans
    assert jpeg_scans(at_limit) == MAX_JPEG_SCANS
    assert inspect_image(at_limit).width == 64 and load_rgb(at_limit).size == (64, 64)
    over = scan_bomb_jpeg(side=64, extra_scans=MAX_JPEG_SCANS - 9)
    with pytest.raises(ImageRejected, match="scans"):
        inspect_image(over)


@pytest.mark.parametrize("mode, scans", [("RGB", 10), ("L", 6)])
def test_scan_count_of_ordinary_jpegs(mode, scans):
    assert jpeg_scans(_progressive(mode=mode)) == scans
    buf = io.BytesIO()
    Image.new(mode, (64, 64), 1).save(buf, "JPEG")
    assert jpeg_scans(buf.getvalue()) == 1


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(st.binary(max_size=2048), st.integers(0, 40) | st.none())
def test_scan_counting_never_fails_on_any_bytes(data, stop_after):
    n = jpeg_scans(b"\xff\xd8" + data, stop_after=stop_after)
    assert 0 <= n <= data.count(b"\xff\xda") + 1
    if stop_after is not None:
        assert n <= stop_after + 1


def test_every_corpus_image_is_judged_within_a_second():
    for name, data, _, _ in image_files():
        started = time.monotonic()
        for fn in (inspect_image, load_rgb):
            try:
                fn(data)
            except ImageRejected:
                pass
        assert time.monotonic() - started < 1.0, name
