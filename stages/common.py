"""What every stage shares: the dead-letter tag, per-stage counters and the dead-letter record builder.

Counters live in the Beam Metrics namespace ``screenmill.<stage>``: ``total`` (inputs seen), ``forwarded`` (outputs
passed on) and ``dropped_<reason>`` (inputs dead-lettered, by reason code). The run manifest and the end-of-run summary
read them back from the pipeline result.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from typing import NamedTuple

import apache_beam as beam
from apache_beam.metrics import Metrics

from schemas.records import DeadLetter, utcnow

DEAD_LETTER = "dead_letter"
METRICS_PREFIX = "screenmill."
MAX_ERROR_CHARS = 4000


PROGRESS_EVERY_S = 10.0
_log = logging.getLogger("screenmill.progress")


class _Counter:
    """A Beam counter that also keeps this worker's running count (for the progress line)."""

    def __init__(self, owner: StageCounters, name: str):
        self._owner = owner
        self._metric = Metrics.counter(owner.namespace, name)
        self.value = 0

    def inc(self, n: int = 1) -> None:
        self._metric.inc(n)
        self.value += n
        self._owner.maybe_report()

    def dec(self, n: int = 1) -> None:
        self.inc(-n)


class StageCounters:
    """Beam counters for one stage; create inside a DoFn (``__init__`` or ``setup``), use anywhere after.

    Also the progress display: every worker logs one line per stage at most every ``PROGRESS_EVERY_S`` seconds
    (logger ``screenmill.progress``, INFO) with its running in / out / dead-letter counts and rate.
    """

    def __init__(self, stage: str):
        self.stage = stage
        self.namespace = METRICS_PREFIX + stage
        self.total = _Counter(self, "total")
        self.forwarded = _Counter(self, "forwarded")
        self._dropped: dict[str, object] = {}
        self.dropped_count = 0
        self._started = self._last_report = time.monotonic()

    def dropped(self, reason: str, n: int = 1) -> None:
        counter = self._dropped.get(reason)
        if counter is None:
            counter = self._dropped[reason] = Metrics.counter(self.namespace, f"dropped_{reason}")
        counter.inc(n)
        self.dropped_count += n
        self.maybe_report()

    def maybe_report(self) -> None:
        now = time.monotonic()
        if now - self._last_report < PROGRESS_EVERY_S:
            return
        self._last_report = now
        rate = self.total.value / max(now - self._started, 1e-9)
        _log.info(
            "[%s] %d in, %d out, %d dead-lettered (%.1f/s on this worker)",
            self.stage,
            self.total.value,
            self.forwarded.value,
            self.dropped_count,
            rate,
        )


def dead_letter(
    counters: StageCounters, input_id: str, reason: str, error: str, payload_ref: str, run_id: str
) -> beam.pvalue.TaggedOutput:
    """Count a rejected input and wrap its :class:`DeadLetter` for the dead-letter output of the stage."""
    counters.dropped(reason)
    text = error if len(error) <= MAX_ERROR_CHARS else error[: MAX_ERROR_CHARS - 20] + " …[truncated]"
    record = DeadLetter(
        input_id=input_id,
        stage=counters.stage,
        reason=reason,
        error=text,
        payload_ref=payload_ref,
        run_id=run_id,
        time=utcnow(),
    )
    return beam.pvalue.TaggedOutput(DEAD_LETTER, record)


class StageOutputs(NamedTuple):
    """What every stage's ``expand`` returns: ``good`` records and ``dead_letter`` records."""

    good: beam.PCollection
    dead_letter: beam.PCollection


FAILPOINT_ENV = "SCREENMILL_FAILPOINT"


def failpoint(name: str) -> None:
    """Crash-test hook: with ``SCREENMILL_FAILPOINT=<name>`` set, kill this process with SIGKILL right here.

    The crash tests use it to stop a run at an exact point (mid-write, before or inside the commit); unset, it costs
    one dictionary lookup.
    """
    if os.environ.get(FAILPOINT_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
