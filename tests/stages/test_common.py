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

