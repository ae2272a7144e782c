"""``WriteShards``: records → balanced, deterministic Parquet shards with an explicit schema.

Layout: ``OUT/<table>/dt=YYYY-MM-DD/part-00000-of-00004.parquet``. Rows are spread over shards by a stable hash of
their key columns and sorted by key inside each shard, so the same rows always land in the same shard, in the same
order, whatever the runner or the bundle sizes. The shard count is ``num_shards`` if set, else
``ceil(rows / rows_per_shard)`` from a count of the input (at least one shard: an empty table still gets one file
with the schema). Each shard is written under a hidden temporary name and renamed into place when complete; a commit
step then removes stale ``part-*`` files of earlier runs of the same partition and writes ``_SUCCESS``. Readers that
skip files starting with ``.`` or ``_`` (pyarrow, Spark, Hugging Face ``datasets``) never see a half-written file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import math
import re
import uuid
from typing import Any

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from stages.store.failpoint import failpoint

CODECS = ("zstd", "snappy", "gzip", "none")
RUN_ID_RE = r"\d{8}T\d{6}Z-[0-9a-f]{6}"
_PART_RE = re.compile(rf"/part-(?:{RUN_ID_RE}-)?\d{{5}}-of-\d{{5}}\.parquet$")
STAGING = "_staging"


@dataclasses.dataclass(frozen=True)
class WriteConfig:
    """Where and how one table is written.

    Attributes:
        output: the output root (local path or any Beam FileSystems URI).
        table: table folder, e.g. ``grounding`` or ``_dead_letter/ingest``.
        schema: the explicit pyarrow schema (never inferred).
        key_columns: columns that identify a row: they pick the shard and the sort order.
        dt: the date partition, ``YYYY-MM-DD``.
        num_shards: fixed shard count; ``None`` sizes it from the row count.
        rows_per_shard: target rows per shard when ``num_shards`` is ``None``.
        row_group_rows: rows per Parquet row group.
        codec: ``zstd``, ``snappy``, ``gzip`` or ``none``.
        run_id: set for a transactional run: shards go to ``OUT/_staging/<run_id>/<table>/dt=…/`` named
            ``part-<run_id>-NNNNN-of-NNNNN.parquet`` and become visible only when
            :func:`stages.store.commit.commit_run` moves the whole run into place; a table with no rows then writes no
            file. ``None``: the partition is written in place and replaces the partition's earlier shards (review
            pulls, benchmarks).
    """

    output: str
    table: str
    schema: pa.Schema
    key_columns: tuple[str, ...]
    dt: str
    num_shards: int | None = None
    rows_per_shard: int = 200_000
    row_group_rows: int = 10_000
    codec: str = "zstd"
    run_id: str | None = None

    def __post_init__(self):
        if not self.output:
            raise ValueError("WriteConfig.output must be set")
        if not re.fullmatch(r"_?[a-z][a-z0-9_]*(/[a-z][a-z0-9_]*)?", self.table):
            raise ValueError(f"WriteConfig.table {self.table!r} must look like 'grounding' or '_dead_letter/ingest'")
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", self.dt):
            raise ValueError(f"WriteConfig.dt {self.dt!r} must be YYYY-MM-DD")
        missing = [c for c in self.key_columns if c not in self.schema.names]
        if not self.key_columns or missing:
            raise ValueError(
                f"WriteConfig.key_columns {self.key_columns} must name schema columns (missing {missing})"
            )
        if self.num_shards is not None and not 1 <= self.num_shards <= 99_999:
            raise ValueError(f"WriteConfig.num_shards must be in 1..99999, got {self.num_shards}")
        if self.rows_per_shard <= 0 or self.row_group_rows <= 0:
            raise ValueError("WriteConfig.rows_per_shard and row_group_rows must be > 0")
        if self.codec not in CODECS:
            raise ValueError(f"WriteConfig.codec {self.codec!r} is not one of {CODECS}")
        if self.run_id is not None and not re.fullmatch(RUN_ID_RE, self.run_id):
            raise ValueError(f"WriteConfig.run_id {self.run_id!r} must look like 20261123T154538Z-a1b2c3")

    @property
    def partition_dir(self) -> str:
        if self.run_id is None:
            return FileSystems.join(self.output, self.table, f"dt={self.dt}")
        return FileSystems.join(self.output, STAGING, self.run_id, self.table, f"dt={self.dt}")

    def shard_path(self, index: int, count: int) -> str:
        run = f"{self.run_id}-" if self.run_id else ""
        return FileSystems.join(self.partition_dir, f"part-{run}{index:05d}-of-{count:05d}.parquet")


def _sort_key(row: dict[str, Any], columns: tuple[str, ...]) -> tuple:
    return tuple((row[c] is None, "" if row[c] is None else row[c]) for c in columns)


def _shard_of(row: dict[str, Any], columns: tuple[str, ...], count: int) -> int:
    blob = "\x1f".join("" if row[c] is None else str(row[c]) for c in columns).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(blob, digest_size=8).digest(), "big") % count


def shard_count(config: WriteConfig, rows: int) -> int:
    """The number of shards for ``rows`` rows under ``config``."""
    if config.num_shards is not None:
        return config.num_shards
    return max(1, math.ceil(rows / config.rows_per_shard))


def write_parquet(path: str, rows: list[dict[str, Any]], config: WriteConfig) -> str:
    """Write ``rows`` (already sorted) to ``path`` atomically: a hidden temp file, then a rename.

    Raises:
        pyarrow.ArrowInvalid / ArrowTypeError: a row does not fit the schema (a bug upstream: fail loudly).
    """
    directory, name = path.rsplit("/", 1)
    tmp = FileSystems.join(directory, f".{name}.tmp-{uuid.uuid4().hex[:12]}")
    codec = None if config.codec == "none" else config.codec
    buffer = io.BytesIO()
    with pq.ParquetWriter(buffer, config.schema, compression=codec, write_statistics=True) as writer:
        for start in range(0, max(len(rows), 1), config.row_group_rows):
            chunk = rows[start : start + config.row_group_rows]
            writer.write_table(pa.Table.from_pylist(chunk, schema=config.schema))
    with FileSystems.create(tmp, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        f.write(buffer.getvalue())
    if FileSystems.exists(path):
        FileSystems.delete([path])
    FileSystems.rename([tmp], [path])
    return path


class _WriteShard(beam.DoFn):
    def __init__(self, config: WriteConfig):
        self._config = config

    def process(self, item, count: int):
        (index, rows) = item
        rows = sorted(rows, key=lambda r: _sort_key(r, self._config.key_columns))
        yield write_parquet(self._config.shard_path(index, shard_count(self._config, count)), rows, self._config)
        failpoint(f"write:{self._config.table}")


def _commit(_, written: list[str], count: int, config: WriteConfig) -> dict[str, Any]:
    n = shard_count(config, count)
    expected = {config.shard_path(i, n) for i in range(n)}
    if config.run_id is not None:  # staged: the run's commit makes files visible; an empty table adds no file
        if count:
            for path in sorted(expected - set(written)):
                write_parquet(path, [], config)
        return {"table": config.table, "dt": config.dt, "rows": count, "shards": sorted(expected) if count else []}
    for path in sorted(expected - set(written)):  # shards that got no rows still exist, with the schema
        write_parquet(path, [], config)
    existing = FileSystems.match([FileSystems.join(config.partition_dir, "*")])[0].metadata_list
    stale = [m.path for m in existing if _PART_RE.search(m.path) and m.path not in expected]
    if stale:
        FileSystems.delete(stale)
    with FileSystems.create(FileSystems.join(config.partition_dir, "_SUCCESS")) as f:
        f.write(f"{n} shards, {count} rows\n".encode())
    return {"table": config.table, "dt": config.dt, "rows": count, "shards": sorted(expected)}


class WriteShards(beam.PTransform):
    """Write records (anything with ``to_row()``, or dicts) as one Parquet table partition.

    Output: a PCollection with one dict ``{"table", "dt", "rows", "shards"}`` once the partition is committed.
    Write failures are not dead-lettered: they fail the run, because a row that does not fit the schema is a bug.
    """

    def __init__(self, config: WriteConfig):
        super().__init__()
        self._config = config

    def expand(self, records):
        config = self._config
        rows = records | "ToRows" >> beam.Map(lambda r: r if isinstance(r, dict) else r.to_row())
        count = beam.pvalue.AsSingleton(rows | "Count" >> beam.combiners.Count.Globally())
        written = (
            rows
            | "AssignShard"
            >> beam.Map(lambda r, n: (_shard_of(r, config.key_columns, shard_count(config, n)), r), n=count)
            | "GroupShard" >> beam.GroupByKey()
            | "WriteShard" >> beam.ParDo(_WriteShard(config), count=count)
        )
        return (
            records.pipeline
            | "Once" >> beam.Create([None])
            | "Commit" >> beam.Map(_commit, written=beam.pvalue.AsList(written), count=count, config=config)
        )


def read_shards(output: str, table: str, dt: str | None = None) -> pa.Table:
    """Read every committed shard of ``table`` (all ``dt`` partitions, or one) into one Arrow table.

    Only committed ``part-[<run_id>-]NNNNN-of-NNNNN.parquet`` files count: temporary and hidden files, and everything
    a run in progress or a dead run left under ``_staging/``, are never read. The table's explicit schema is used, so
    an empty table still has its columns.

    Raises:
        KeyError: ``table`` is not a known table.
    """
    from schemas.records import TABLES

    base = table.split("/")[0]
    schema = TABLES[base].SCHEMA
    pattern = FileSystems.join(output, table, f"dt={dt}" if dt else "dt=*", "part-*.parquet")
    paths = sorted(m.path for m in FileSystems.match([pattern])[0].metadata_list if _PART_RE.search(m.path))
    tables = []
    for path in paths:
        with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
            tables.append(pq.read_table(io.BytesIO(f.read()), schema=schema))
    return pa.concat_tables(tables) if tables else schema.empty_table()
