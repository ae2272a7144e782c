"""IngestScreenshots' outputs: a duplicate file is dead-lettered and also named on the ``aliases`` output."""

from __future__ import annotations

import io

import apache_beam as beam
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.testing.util import assert_that, equal_to
from PIL import Image
from screenmill.stages.ingest import DuplicateAlias, IngestConfig, IngestScreenshots
from screenmill.stages.store.report import stage_counts


def _png(color: str) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (64, 48), color).save(buf, format="PNG")
    return buf.getvalue()


def test_a_duplicate_is_dead_lettered_and_named_on_the_aliases_output(tmp_path):
    import hashlib

    red = _png("red")
    for name, data in (("a.png", red), ("b.png", red), ("c.png", _png("blue"))):
        (tmp_path / name).write_bytes(data)
    kept, copy = str(tmp_path / "a.png"), str(tmp_path / "b.png")
    p = beam.Pipeline(runner=FnApiRunner())
    out = p | IngestScreenshots(IngestConfig(pattern=str(tmp_path), run_id="r"))
    assert out._fields == ("good", "dead_letter", "done", "aliases", "skipped")
    assert_that(out.good | beam.Map(lambda s: s.source_uri), equal_to([kept, str(tmp_path / "c.png")]))
    dead = out.dead_letter | beam.Map(lambda d: (d.input_id, d.stage, d.reason, d.payload_ref))
    assert_that(dead, equal_to([(copy, "ingest", "duplicate", kept)]), label="Dead")
    alias = DuplicateAlias(copy, hashlib.sha256(red).hexdigest(), kept)
    assert_that(out.aliases, equal_to([alias]), label="Aliases")
    result = p.run()
    result.wait_until_finish()
    counts = stage_counts(result)["ingest"]
    assert counts == {"total": 3, "forwarded": 2, "dropped_duplicate": 1}
