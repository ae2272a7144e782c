"""The ``_done`` index: which screenshot occurrences are finished under which ``config_hash``.

Incremental runs read it inside the pipeline (a side input, so it works the same on a cluster): ingest skips an
occurrence that is done under the run's own ``config_hash`` right after hashing its bytes, and a screenshot row is
written only for occurrences no earlier run has written. :class:`MarkDone` decides what this run marks done: every
occurrence that reached the end of the run, except those whose label stage failed for a reason worth retrying
(:data:`RETRYABLE`), which it is told as :class:`LabelFailure` records: their labels are held back and they stay
undone, so the next run does them again, whole.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterator

import apache_beam as beam
import pyarrow.parquet as pq
from apache_beam.io import fileio
from apache_beam.io.filesystem import CompressionTypes, FileMetadata
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from screenmill.annotators.outputs import FAILURES
from screenmill.schemas.keys import item_key
from screenmill.schemas.records import Done, Screenshot, utcnow
from screenmill.schemas.tables import TABLES, is_part
from screenmill.stages.base import Failure

HELD = "held"
# Label-stage reasons that say nothing about the screenshot itself: the next run tries it again.
RETRYABLE = frozenset({"engine_failure", "unreadable", "changed_during_run", "annotator_failure"})


@dataclasses.dataclass(frozen=True, slots=True)
class LabelFailure:
    """A screenshot whose label stage failed for a :data:`RETRYABLE` reason: its occurrences stay undone.

    Attributes:
        screenshot_id: the screenshot's content id.
        source_uri: the file the label stage read (every occurrence of this file is held back).
        reason: the label stage's reason code.
    """

    screenshot_id: str
    source_uri: str
    reason: str


def label_failure(shot: Screenshot, failure: Failure) -> list[beam.pvalue.TaggedOutput]:
    """The labelling stage's ``failures`` output (:data:`screenmill.annotators.outputs.FAILURES`) of a failure on
    ``shot``: a :class:`LabelFailure`, none unless its reason is :data:`RETRYABLE`."""
    if failure.reason not in RETRYABLE:
        return []
    return [beam.pvalue.TaggedOutput(FAILURES, LabelFailure(shot.screenshot_id, failure.payload_ref, failure.reason))]


def shot_key(shot: Screenshot) -> str:
    return item_key(shot.screenshot_id, shot.episode_id, shot.step_index)


def _read_index(meta: FileMetadata) -> Iterator[tuple[str, str]]:
    if not is_part(meta.path):
        return
    with FileSystems.open(meta.path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        table = pq.read_table(io.BytesIO(f.read()), columns=[*Done.KEY])
    for row in table.to_pylist():
        yield item_key(row["screenshot_id"], row["episode_id"], row["step_index"]), row["config_hash"]


class ReadDoneIndex(beam.PTransform):
    """``OUT/_done`` → ``(item_key, config_hash)`` pairs (none when the index does not exist yet).

    Only committed shards are read (the same rule as :func:`screenmill.schemas.tables.read_shards`).
    """

    def __init__(self, output: str):
        super().__init__()
        self._pattern = TABLES["_done"].glob(output)

    def expand(self, pbegin):
        return (
            pbegin
            | "MatchDone" >> fileio.MatchFiles(self._pattern, empty_match_treatment=fileio.EmptyMatchTreatment.ALLOW)
            | "ReadDone" >> beam.FlatMap(_read_index)
        )


class _Decide(beam.DoFn):
    def __init__(self, config_hash: str, run_id: str):
        self._config_hash = config_hash
        self._run_id = run_id

    def setup(self):
        self._held = Metrics.counter("screenmill.commit", "held_back_for_retry")
        self._marked = Metrics.counter("screenmill.commit", "marked_done")

    def process(self, item):
        _, groups = item
        shots, failures = list(groups["shot"]), list(groups["failed"])
        for shot in shots:
            if failures:
                self._held.inc()
                yield beam.pvalue.TaggedOutput(HELD, shot.screenshot_id)
                continue
            self._marked.inc()
            yield Done(
                screenshot_id=shot.screenshot_id,
                episode_id=shot.episode_id,
                step_index=shot.step_index,
                config_hash=self._config_hash,
                outcome="labelled",
                reason=None,
                run_id=self._run_id,
                done_time=utcnow(),
            )


def _failed_uri(failure: LabelFailure) -> list[tuple[str, None]]:
    return [(failure.source_uri, None)] if failure.reason in RETRYABLE else []


class MarkDone(beam.PTransform):
    """(screenshots that passed tiling, :class:`LabelFailure` records of the label stage) → ``Done`` records +
    held-back ids.

    Output: a ``DoOutputsTuple``: the main output holds :class:`Done` records; ``held`` holds the ``screenshot_id``
    of every occurrence of a file whose label stage failed for a :data:`RETRYABLE` reason (its labels must not be
    committed).
    """

    def __init__(self, config_hash: str, run_id: str):
        super().__init__()
        self._config_hash = config_hash
        self._run_id = run_id

    def expand(self, inputs):
        shots, failures = inputs
        grouped = {
            "shot": shots | "ShotByUri" >> beam.Map(lambda s: (s.source_uri, s)),
            "failed": failures | "FailedUri" >> beam.FlatMap(_failed_uri),
        } | "JoinFailures" >> beam.CoGroupByKey()
        return grouped | "Decide" >> beam.ParDo(_Decide(self._config_hash, self._run_id)).with_outputs(
            HELD, main="done"
        )


def rejected_done(shot_id: str, episode_id: str | None, step: int | None, reason: str, config_hash: str, run_id: str):
    """The ``_done`` row of an input rejected for good (bytes hashed, then refused): the next run skips it too."""
    return Done(shot_id, episode_id, step, config_hash, "rejected", reason, run_id, utcnow())


def is_new(shot: Screenshot, known: dict[str, bool], held: dict[str, bool]) -> bool:
    """Whether ``shot`` needs a ``screenshots`` row: no earlier run wrote one and its labels are not held back."""
    return shot_key(shot) not in known and shot.screenshot_id not in held


def not_held(record, held: dict[str, bool]) -> bool:
    """Whether a label / action row may be committed (its screenshot's label stage did not fail retryably); a
    tuple of labels (one screenshot's: :func:`screenmill.stages.render.labels_of_kept`) by its first."""
    return (record[0] if isinstance(record, tuple) else record).screenshot_id not in held
