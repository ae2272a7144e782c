"""MarkDone: what this run marks done and what it holds back, told by explicit label-stage failures."""

from __future__ import annotations

import datetime as dt

import apache_beam as beam
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.testing.util import assert_that, equal_to
from screenmill.schemas.records import DeadLetter, Screenshot
from screenmill.stages.done import LabelFailure, MarkDone
from screenmill.stages.store.report import stage_counts

T = dt.datetime(2026, 11, 23, tzinfo=dt.UTC)


def _shot(uri: str, sha: str, step: int | None = None) -> Screenshot:
    return Screenshot(sha, uri, 8, 8, "PNG", "RGB", 1, 10, T, "r", "ep" if step is not None else None, step)


def _dead(input_id: str, reason: str, payload_ref: str) -> DeadLetter:
    return DeadLetter(input_id, "annotate", reason, "e", payload_ref, "r", T)


SHOTS = [_shot("/in/a.png", "a" * 64), _shot("/in/b.png", "b" * 64), _shot("/in/c.png", "c" * 64)]
SHOTS += [_shot("/in/ep/s.png", "d" * 64, 0), _shot("/in/ep/s.png", "d" * 64, 1)]  # one file, two steps


def test_mark_done_ignores_failures_that_are_not_retryable_or_of_no_known_file():
    """What the label stage's dead letters used to be filtered for, MarkDone checks on its LabelFailure input too."""
    failures = [
        LabelFailure("b" * 64, "/in/b.png", "model_output_not_json"),  # not retryable
        LabelFailure("x" * 64, "/in/unknown.png", "engine_failure"),  # a file no screenshot came from
    ]
    p = beam.Pipeline(runner=FnApiRunner())
    shots, failed = p | "Shots" >> beam.Create(SHOTS), p | "Failures" >> beam.Create(failures)
    marked = (shots, failed) | MarkDone("hash-1", "r")
    assert_that(marked.done | beam.Map(lambda d: d.screenshot_id[0]), equal_to(["a", "b", "c", "d", "d"]))
    assert_that(marked.held, equal_to([]), label="Held")
    p.run().wait_until_finish()


def test_mark_done_holds_every_occurrence_of_a_failed_file_and_marks_the_rest():
    failures = [
        LabelFailure("a" * 64, "/in/a.png", "annotator_failure"),
        LabelFailure("d" * 64, "/in/ep/s.png", "engine_failure"),
    ]
    p = beam.Pipeline(runner=FnApiRunner())
    shots, failed = p | "Shots" >> beam.Create(SHOTS), p | "Failures" >> beam.Create(failures)
    marked = (shots, failed) | MarkDone("hash-1", "r")
    done = marked.done | beam.Map(lambda d: (d.screenshot_id[0], d.step_index, d.config_hash, d.outcome))
    assert_that(done, equal_to([("b", None, "hash-1", "labelled"), ("c", None, "hash-1", "labelled")]))
    assert_that(marked.held, equal_to(["a" * 64, "d" * 64, "d" * 64]), label="Held")
    result = p.run()
    result.wait_until_finish()
    counts = stage_counts(result)["commit"]
    assert counts == {"total": 0, "forwarded": 0, "marked_done": 2, "held_back_for_retry": 3}
