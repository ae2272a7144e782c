"""What every stage shares: the dead-letter tag, per-stage counters and the dead-letter record builder.

Counters live in the Beam Metrics namespace ``screenmill.<stage>``: ``total`` (inputs seen), ``forwarded`` (outputs
passed on) and ``dropped_<reason>`` (inputs dead-lettered, by reason code). The run manifest and the end-of-run summary
read them back from the pipeline result.
"""

from __future__ import annotations

from typing import NamedTuple

import apache_beam as beam
from apache_beam.metrics import Metrics

from schemas.records import DeadLetter, utcnow

DEAD_LETTER = "dead_letter"
METRICS_PREFIX = "screenmill."
MAX_ERROR_CHARS = 4000


class StageCounters:
    """Beam counters for one stage; create inside a DoFn (``__init__`` or ``setup``), use anywhere after."""

    def __init__(self, stage: str):
        self.stage = stage
        self._namespace = METRICS_PREFIX + stage
        self.total = Metrics.counter(self._namespace, "total")
        self.forwarded = Metrics.counter(self._namespace, "forwarded")
        self._dropped: dict[str, object] = {}

    def dropped(self, reason: str, n: int = 1) -> None:
        counter = self._dropped.get(reason)
        if counter is None:
            counter = self._dropped[reason] = Metrics.counter(self._namespace, f"dropped_{reason}")
        counter.inc(n)


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
