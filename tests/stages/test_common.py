"""Stage counters: the per-worker progress line and the dead-letter record."""

from __future__ import annotations

import logging

import stages.common as common
from stages.common import DEAD_LETTER, StageCounters, dead_letter


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def test_progress_line_counts_in_out_and_dead(monkeypatch):
    monkeypatch.setattr(common, "PROGRESS_EVERY_S", 0.0)
    log = logging.getLogger("screenmill.progress")
    handler = _Collect()
    log.addHandler(handler)
    old_level = log.level
    log.setLevel(logging.INFO)
    try:
        c = StageCounters("tile")
        c.total.inc(3)
        c.forwarded.inc(2)
        out = dead_letter(c, "file:///x.png", "tiling_failed", "boom" * 2000, "file:///x.png", "run-1")
    finally:
        log.removeHandler(handler)
        log.setLevel(old_level)
    assert handler.lines[-1].startswith("[tile] 3 in, 2 out, 1 dead-lettered")
    assert out.tag == DEAD_LETTER
    record = out.value
    assert (record.stage, record.reason, record.input_id) == ("tile", "tiling_failed", "file:///x.png")
    assert len(record.error) <= common.MAX_ERROR_CHARS and record.error.endswith("[truncated]")


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
    from stages.common import read_screenshot

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
