"""Run transactions: staged shards are invisible until the run commits; a restart finishes or discards a dead run."""

from __future__ import annotations

import json

import apache_beam as beam
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from screenmill.schemas.records import DeadLetter, utcnow
from screenmill.schemas.tables import COMMIT_MARKER, read_shards, staging_dir
from screenmill.stages.store.commit import commit_run, recover, roll_forward
from screenmill.stages.write import WriteConfig, WriteShards

RUN_A = "20261123T100000Z-aaaaaa"
RUN_B = "20261123T110000Z-bbbbbb"


def _dead(i: int, run_id: str) -> DeadLetter:
    return DeadLetter(f"in-{i:05d}", "ingest", "empty_file", "zero bytes", f"/x/{i}", run_id, utcnow())


def _stage(out, run_id: str, n: int, table: str = "_dead_letter/ingest", num_shards: int = 3):
    config = WriteConfig(
        output=str(out),
        table=table,
        schema=DeadLetter.SCHEMA,
        key_columns=("input_id", "reason"),
        dt="2026-11-23",
        num_shards=num_shards,
        run_id=run_id,
    )
    with beam.Pipeline(runner=FnApiRunner()) as p:
        p | beam.Create([_dead(i, run_id) for i in range(n)]) | WriteShards(config)


def test_staged_shards_are_invisible_until_the_run_commits(tmp_path):
    _stage(tmp_path, RUN_A, 10)
    staged = sorted(p.name for p in (tmp_path / "_staging" / RUN_A).rglob("part-*.parquet"))
    assert staged == [f"part-{RUN_A}-{i:05d}-of-00003.parquet" for i in range(3)]
    assert read_shards(str(tmp_path), "_dead_letter/ingest").num_rows == 0  # nothing visible yet

    result = commit_run(str(tmp_path), RUN_A, {"run_id": RUN_A})
    assert read_shards(str(tmp_path), "_dead_letter/ingest").num_rows == 10
    assert result["partitions"] == ["_dead_letter/ingest/dt=2026-11-23"]
    assert json.loads((tmp_path / "_runs" / f"{RUN_A}.json").read_text()) == {"run_id": RUN_A}
    success = json.loads((tmp_path / "_dead_letter/ingest/dt=2026-11-23/_SUCCESS").read_text())
    assert success["runs"] == [RUN_A] and len(success["parts"]) == 3
    assert not (tmp_path / "_staging").exists()


def test_a_second_run_adds_files_to_the_partition_instead_of_replacing_it(tmp_path):
    _stage(tmp_path, RUN_A, 10)
    commit_run(str(tmp_path), RUN_A, {"run_id": RUN_A})
    _stage(tmp_path, RUN_B, 5, num_shards=1)
    commit_run(str(tmp_path), RUN_B, {"run_id": RUN_B})
    rows = read_shards(str(tmp_path), "_dead_letter/ingest").to_pylist()
    assert sorted({r["run_id"] for r in rows}) == [RUN_A, RUN_B] and len(rows) == 15
    success = json.loads((tmp_path / "_dead_letter/ingest/dt=2026-11-23/_SUCCESS").read_text())
    assert success["runs"] == [RUN_A, RUN_B] and len(success["parts"]) == 4


def test_an_empty_table_adds_no_file_in_a_transactional_run(tmp_path):
    _stage(tmp_path, RUN_A, 0)
    assert not list((tmp_path / "_staging").rglob("part-*"))


def test_recover_discards_a_run_that_never_committed(tmp_path):
    _stage(tmp_path, RUN_A, 10)  # killed before its commit marker: its work is simply redone
    assert recover(str(tmp_path)) == [{"run_id": RUN_A, "action": "discarded"}]
    assert not (tmp_path / "_staging").exists()
    assert read_shards(str(tmp_path), "_dead_letter/ingest").num_rows == 0
    assert recover(str(tmp_path)) == []


def test_recover_rolls_a_committed_run_forward_after_a_crash_half_way_through_the_moves(tmp_path):
    _stage(tmp_path, RUN_A, 10)
    stage = staging_dir(str(tmp_path), RUN_A)
    files = sorted(str(p.relative_to(stage)) for p in (tmp_path / "_staging" / RUN_A).rglob("part-*"))
    (tmp_path / "_staging" / RUN_A / COMMIT_MARKER).write_text(json.dumps({"run_id": RUN_A, "files": files}))
    # the crash happened after the first file had moved
    first = tmp_path / files[0]
    first.parent.mkdir(parents=True)
    (tmp_path / "_staging" / RUN_A / files[0]).rename(first)

    assert recover(str(tmp_path)) == [{"run_id": RUN_A, "action": "rolled_forward"}]
    rows = read_shards(str(tmp_path), "_dead_letter/ingest").to_pylist()
    assert sorted(r["input_id"] for r in rows) == [f"in-{i:05d}" for i in range(10)]  # each row exactly once


def test_roll_forward_is_idempotent_when_a_copy_based_rename_left_both_copies(tmp_path):
    _stage(tmp_path, RUN_A, 4, num_shards=1)
    stage = tmp_path / "_staging" / RUN_A
    rel = str(next(stage.rglob("part-*")).relative_to(stage))
    (stage / COMMIT_MARKER).write_text(json.dumps({"run_id": RUN_A, "files": [rel]}))
    (tmp_path / rel).parent.mkdir(parents=True)
    (tmp_path / rel).write_bytes((stage / rel).read_bytes())  # an object store copied, then died before deleting
    roll_forward(str(tmp_path), RUN_A)
    assert read_shards(str(tmp_path), "_dead_letter/ingest").num_rows == 4
