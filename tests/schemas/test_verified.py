"""The verified read (:mod:`screenmill.schemas.verified`): size-bounded, sha256-checked, one reason code."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import os

import pytest
from PIL import Image
from screenmill.schemas.images import ImageLimits, ImageRejected
from screenmill.schemas.records import Screenshot
from screenmill.schemas.verified import CHANGED, read_screenshot, read_verified


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (64, 48), "red").save(buf, format="PNG")
    return buf.getvalue()


def _screenshot_of(path, data: bytes) -> Screenshot:
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
    data = _png()
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


def test_read_verified_returns_the_recorded_bytes(tmp_path):
    data = _png()
    path = tmp_path / "a.png"
    path.write_bytes(data)
    assert read_verified(str(path), hashlib.sha256(data).hexdigest(), len(data)) == data


def test_a_larger_file_is_refused_without_being_read_whole(tmp_path):
    data = _png()
    path = tmp_path / "a.png"
    path.write_bytes(data + b"\0" * 10_000_000)  # the recorded bytes, then more
    with pytest.raises(ImageRejected) as e:
        read_verified(str(path), hashlib.sha256(data).hexdigest(), len(data))
    assert e.value.reason == CHANGED == "changed_during_run"
    assert f"no longer {len(data)} bytes" in e.value.message


def test_a_shorter_file_is_refused(tmp_path):
    data = _png()
    path = tmp_path / "a.png"
    path.write_bytes(data[:-5])
    with pytest.raises(ImageRejected) as e:
        read_verified(str(path), hashlib.sha256(data).hexdigest(), len(data))
    assert e.value.reason == CHANGED


def test_same_size_other_bytes_is_a_hash_mismatch(tmp_path):
    data = _png()
    path = tmp_path / "a.png"
    path.write_bytes(bytes([data[0] ^ 1]) + data[1:])
    with pytest.raises(ImageRejected) as e:
        read_verified(str(path), hashlib.sha256(data).hexdigest(), len(data))
    assert e.value.reason == CHANGED and "now hashes to" in e.value.message


def test_a_missing_file_raises_the_filesystem_error(tmp_path):
    data = _png()
    with pytest.raises(OSError):
        read_verified(str(tmp_path / "gone.png"), hashlib.sha256(data).hexdigest(), len(data))
