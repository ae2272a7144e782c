"""The verified re-read of a screenshot's pixels."""

from __future__ import annotations


def _screenshot_of(path, data: bytes):
    import datetime as dt
    import hashlib

    from schemas.records import Screenshot

    return Screenshot(
        screenshot_id=hashlib.sha256(data).hexdigest(),
        source_uri=str(path),
        width=8,
        height=8,
        format="PNG",
        source_mode="RGB",
        exif_orientation=1,
        byte_size=len(data),
        ingest_time=dt.datetime(2026, 11, 23, tzinfo=dt.UTC),
        run_id="r",
    )


def test_read_screenshot_reads_at_most_the_ingested_size(tmp_path):
    """A file swapped after ingest is refused as ``changed_during_run``; a bigger one (here a symlink to an endless
    device) is refused after ``byte_size + 1`` bytes instead of being read whole."""
    import io
    import os

    import pytest
    from PIL import Image

    from schemas.images import ImageLimits, ImageRejected
    from stages.store.input_guard import read_screenshot

    buf = io.BytesIO()
    Image.new("RGB", (64, 48), "red").save(buf, format="PNG")
    data = buf.getvalue()
    path = tmp_path / "a.png"
    path.write_bytes(data)
    shot = _screenshot_of(path, data)
    assert read_screenshot(shot, ImageLimits()).size == (64, 48)

    path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # same size, other bytes
    with pytest.raises(ImageRejected) as e:
        read_screenshot(shot, ImageLimits())
    assert e.value.reason == "changed_during_run"

    path.unlink()
    os.symlink("/dev/zero", path)  # endless: an unbounded read would never return
    with pytest.raises(ImageRejected) as e:
        read_screenshot(shot, ImageLimits())
    assert e.value.reason == "changed_during_run"
