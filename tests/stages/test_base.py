"""The stage contract: counters, the per-worker progress line, failures → dead-letter rows, one outputs type."""

from __future__ import annotations

import logging

import pytest
import screenmill.stages.base as base
from apache_beam.pvalue import TaggedOutput
from screenmill.stages.base import DEAD_LETTER, StageCounters, dead_letter
from screenmill.stages.store.report import stage_counts


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def test_progress_line_counts_in_out_and_dead(monkeypatch):
    monkeypatch.setattr(base, "PROGRESS_EVERY_S", 0.0)
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
    assert len(record.error) <= base.MAX_ERROR_CHARS and record.error.endswith("[truncated]")


class _Shot:
    def __init__(self, uri: str):
        self.source_uri = uri


class _Sample(base.StageDoFn):
    """Yields per element name: ``good`` a record, ``bad`` a failure, ``flag`` a flag and the record, ``extra`` a
    tagged extra output and the record; ``boom`` raises after nothing, ``late`` after a record."""

    stage = "sample"
    error_reason = "sample_crashed"

    def handle(self, shot):
        name = shot.source_uri
        if name == "bad":
            yield base.Failure(name, "bad_input", "x" * 5000, "ref://bad")
            return
        if name == "flag":
            yield base.Failure(name, "looks_odd", "odd", name, flag="flagged_odd")
        if name == "extra":
            yield TaggedOutput("aliases", ("extra", "alias"))
        if name == "boom":
            raise RuntimeError("kaput")
        yield name.upper()
        if name == "late":
            raise ValueError("after one record")


def test_stage_dofn_counts_and_dead_letters_directly():
    fn = _Sample("run-1")
    fn.setup()
    outputs = [out for name in ("good", "bad", "flag", "extra", "boom", "late") for out in fn.process(_Shot(name))]
    good = [o for o in outputs if not isinstance(o, TaggedOutput)]
    dead = [o.value for o in outputs if isinstance(o, TaggedOutput) and o.tag == DEAD_LETTER]
    extra = [o.value for o in outputs if isinstance(o, TaggedOutput) and o.tag == "aliases"]
    assert good == ["GOOD", "FLAG", "EXTRA", "LATE"] and extra == [("extra", "alias")]
    rows = [(d.input_id, d.stage, d.reason, d.payload_ref, d.run_id) for d in dead]
    assert rows == [
        ("bad", "sample", "bad_input", "ref://bad", "run-1"),
        ("flag", "sample", "looks_odd", "flag", "run-1"),
        ("boom", "sample", "sample_crashed", "boom", "run-1"),
        ("late", "sample", "sample_crashed", "late", "run-1"),
    ]
    assert dead[0].error.endswith("[truncated]") and len(dead[0].error) <= base.MAX_ERROR_CHARS
    assert (dead[2].error, dead[3].error) == ("RuntimeError: kaput", "ValueError: after one record")
    c = fn.counters
    assert (c.total.value, c.forwarded.value, c.dropped_count) == (6, 4, 3)  # a flag is not a drop


def test_stage_dofn_without_error_reason_lets_a_bug_fail():
    class Strict(_Sample):
        error_reason = None

    fn = Strict("run-1")
    fn.setup()
    with pytest.raises(RuntimeError, match="kaput"):
        list(fn.process(_Shot("boom")))


def test_stage_dofn_needs_a_stage_name():
    class Nameless(base.StageDoFn):
        pass

    with pytest.raises(TypeError, match="must set StageDoFn.stage"):
        Nameless("run-1")


class _SampleStage(base.Stage):
    def expand(self, pcoll):
        return self.apply_fn(pcoll, "Sample", _Sample("run-1"), "aliases")


def test_stage_outputs_and_beam_metrics_in_a_pipeline():
    import apache_beam as beam
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner
    from apache_beam.testing.util import assert_that, equal_to

    p = beam.Pipeline(runner=FnApiRunner())
    shots = p | beam.Create(["good", "bad", "flag", "extra", "boom", "late"]) | beam.Map(_Shot)
    out = shots | "Stage" >> _SampleStage()
    assert isinstance(out, base.StageOutputs) and out._fields == ("good", "dead_letter", "aliases")
    good, dead, aliases = out  # a tuple too: Beam sees every output of the stage
    assert (good, dead, aliases) == (out.good, out.dead_letter, out.aliases)
    assert_that(out.good, equal_to(["GOOD", "FLAG", "EXTRA", "LATE"]))
    reasons = out.dead_letter | beam.Map(lambda d: (d.input_id, d.reason))
    expected = [("bad", "bad_input"), ("flag", "looks_odd"), ("boom", "sample_crashed"), ("late", "sample_crashed")]
    assert_that(reasons, equal_to(expected), label="Dead")
    assert_that(out.aliases, equal_to([("extra", "alias")]), label="Aliases")
    result = p.run()
    result.wait_until_finish()
    counts = stage_counts(result)["sample"]
    assert counts == {
        "total": 6,
        "forwarded": 4,
        "dropped_bad_input": 1,
        "dropped_sample_crashed": 2,
        "flagged_odd": 1,
    }
