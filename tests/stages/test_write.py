import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from screenmill.schemas.records import DeadLetter, utcnow
from screenmill.schemas.tables import read_shards
from screenmill.stages.write import WriteConfig, WriteShards, shard_count, written_tables


def _dead(i: int) -> DeadLetter:
    return DeadLetter(f"in-{i:05d}", "ingest", "empty_file", "zero bytes", f"/x/{i}", "run", utcnow())


def _config(out, **kw) -> WriteConfig:
    base = dict(
        output=str(out),
        table="_dead_letter/ingest",
        schema=DeadLetter.SCHEMA,
        key_columns=("input_id", "reason"),
        dt="2026-11-23",
    )
    return WriteConfig(**{**base, **kw})


def _write(records, config):
    with beam.Pipeline(runner=FnApiRunner()) as p:
        p | beam.Create(records) | WriteShards(config)


def test_shards_are_balanced_sorted_and_deterministic(tmp_path):
    records = [_dead(i) for i in range(1000)]
    _write(records, _config(tmp_path / "a", num_shards=4, row_group_rows=100))
    _write(list(reversed(records)), _config(tmp_path / "b", num_shards=4, row_group_rows=100))
    part = tmp_path / "a" / "_dead_letter" / "ingest" / "dt=2026-11-23"
    files = sorted(part.glob("part-*.parquet"))
    assert [f.name for f in files] == [f"part-{i:05d}-of-00004.parquet" for i in range(4)]
    sizes = [pq.ParquetFile(f).metadata.num_rows for f in files]
    assert sum(sizes) == 1000 and min(sizes) > 200  # a stable hash spreads rows evenly
    for f in files:
        ids = pq.read_table(f).column("input_id").to_pylist()
        assert ids == sorted(ids)
        assert pq.ParquetFile(f).metadata.num_row_groups >= 2  # row groups are bounded, not one per shard
        other = tmp_path / "b" / f.relative_to(tmp_path / "a")
        assert ids == pq.read_table(other).column("input_id").to_pylist()  # same rows, same shard, same order
    assert (part / "_SUCCESS").exists()


def test_shard_count_follows_row_count(tmp_path):
    cfg = _config(tmp_path, rows_per_shard=300)
    assert [shard_count(cfg, n) for n in (0, 1, 300, 301, 1000)] == [1, 1, 1, 2, 4]
    _write([_dead(i) for i in range(1000)], cfg)
    assert len(list((tmp_path / "_dead_letter" / "ingest" / "dt=2026-11-23").glob("part-*"))) == 4
    assert read_shards(str(tmp_path), "_dead_letter/ingest").num_rows == 1000


def test_batches_are_written_row_by_row_like_single_records(tmp_path):
    """A tuple or list of records (one element for many rows) writes the same files as the records one by one; the
    row count the shards follow is of rows, not elements."""
    records = [_dead(i) for i in range(700)]
    batched = [tuple(records[:300]), records[300], records[301:650], *records[650:]]
    _write(records, _config(tmp_path / "a", rows_per_shard=300))
    _write(batched, _config(tmp_path / "b", rows_per_shard=300))
    part = "_dead_letter/ingest/dt=2026-11-23"
    files = sorted((tmp_path / "a" / part).glob("part-*"))
    assert len(files) == 3  # 700 rows at 300 a shard (4 elements would be 1)
    for f in files:
        assert pq.read_table(f).equals(pq.read_table(tmp_path / "b" / part / f.name))


def test_empty_input_still_writes_one_shard_with_the_schema(tmp_path):
    _write([], _config(tmp_path))
    files = list((tmp_path / "_dead_letter" / "ingest" / "dt=2026-11-23").glob("part-*"))
    assert [f.name for f in files] == ["part-00000-of-00001.parquet"]
    table = pq.read_table(files[0])
    assert table.num_rows == 0 and table.schema.remove_metadata().equals(DeadLetter.SCHEMA.remove_metadata())


def test_readers_ignore_temp_and_foreign_files(tmp_path):
    _write([_dead(i) for i in range(10)], _config(tmp_path))
    part = tmp_path / "_dead_letter" / "ingest" / "dt=2026-11-23"
    (part / ".part-00000-of-00001.parquet.tmp-dead").write_bytes(b"half a file")
    (part / "notes.parquet").write_bytes(b"junk")
    assert read_shards(str(tmp_path), "_dead_letter/ingest").num_rows == 10


def test_a_row_that_does_not_fit_the_schema_fails_the_write(tmp_path):
    bad = _dead(1).to_row() | {"time": "not a timestamp"}
    with pytest.raises(Exception, match="(?i)timestamp|convert|type"):
        _write([bad], _config(tmp_path))


@pytest.mark.parametrize(
    "kw",
    [
        {"table": "../escape"},
        {"dt": "23-11-2026"},
        {"key_columns": ("nope",)},
        {"num_shards": 0},
        {"codec": "lz5"},
        {"rows_per_shard": 0},
    ],
)
def test_config_is_checked(tmp_path, kw):
    with pytest.raises(ValueError):
        _config(tmp_path, **kw)


def test_a_catalogue_table_takes_its_schema_and_keys_from_the_catalogue(tmp_path):
    assert WriteConfig.of(str(tmp_path), "_dead_letter/ingest", "2026-11-23", num_shards=2) == _config(
        tmp_path, num_shards=2
    )
    with pytest.raises(KeyError):
        WriteConfig.of(str(tmp_path), "labels", "2026-11-23")


def test_the_writer_reports_rows_and_shards_per_partition(tmp_path):
    run = "20261123T100000Z-aaaaaa"
    with beam.Pipeline(runner=FnApiRunner()) as p:
        p | "Many" >> beam.Create([_dead(i) for i in range(7)]) | "W1" >> WriteShards(_config(tmp_path, num_shards=3))
        p | "None" >> beam.Create([]) | "W2" >> WriteShards(_config(tmp_path, table="_dead_letter/tile", run_id=run))
        p | "One" >> beam.Create([_dead(1)]) | "W3" >> WriteShards(_config(tmp_path, table="_done_like", run_id=run))
    result = p.result
    # an empty staged table writes no file and reports nothing, as the run manifest always had it
    assert written_tables(result, "2026-11-23") == {
        "_dead_letter/ingest": {"rows": 7, "shards": 3},
        "_done_like": {"rows": 1, "shards": 1},
    }
    assert written_tables(result, "2026-11-24") == {}
