"""``WriteShards``: records → balanced, deterministic Parquet shards with an explicit schema.

Layout (paths and names from the table catalogue, :mod:`screenmill.schemas.tables`):
``OUT/<table>/dt=YYYY-MM-DD/part-00000-of-00004.parquet``. Rows are spread over shards by a stable hash of
their key columns and sorted by key inside each shard, so the same rows always land in the same shard, in the same
order, whatever the runner or the bundle sizes. The shard count is ``num_shards`` if set, else
``ceil(rows / rows_per_shard)`` from a count of the input (at least one shard: an empty table still gets one file
with the schema). Each shard is written under a hidden temporary name and renamed into place when complete; a commit
step then removes stale ``part-*`` files of earlier runs of the same partition and writes ``_SUCCESS``. Readers that
skip files starting with ``.`` or ``_`` (pyarrow, Spark, Hugging Face ``datasets``) never see a half-written file.
The rows and shards each partition got are reported as Beam counters (:func:`written_tables` reads them back from
the finished pipeline), so the run manifest need not read the shards again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import math
import re
import uuid
from collections import defaultdict
from typing import Any

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from screenmill.schemas import tables
from screenmill.schemas.keys import is_run_id
from screenmill.stages.store.failpoint import failpoint

CODECS = ("zstd", "snappy", "gzip", "none")
#: Beam Metrics namespace of what each partition got: counters ``<table>/dt=<dt>:rows`` and ``…:shards``.
TABLES_METRICS = "screenmill.tables"


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
            :func:`screenmill.stages.store.commit.commit_run` moves the whole run into place; a table with no rows then
            writes no file. ``None``: the partition is written in place and replaces the partition's earlier shards
            (review pulls, benchmarks).
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
        if not re.fullmatch(tables.TABLE_NAME_RE, self.table):
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
        if self.run_id is not None and not is_run_id(self.run_id):
            raise ValueError(f"WriteConfig.run_id {self.run_id!r} must look like 20261123T154538Z-a1b2c3")

    @classmethod
    def of(cls, output: str, table: str, dt: str, **options: Any) -> WriteConfig:
        """The config of catalogue table ``table`` (:func:`screenmill.schemas.tables.table`): its schema and key
        columns.

        Raises:
            KeyError: ``table`` is not in the catalogue.  ValueError: as the constructor.
        """
        entry = tables.table(table)
        return cls(output=output, table=table, schema=entry.schema, key_columns=entry.key, dt=dt, **options)

    @property
    def partition_dir(self) -> str:
        return tables.partition_dir(self.output, self.table, self.dt, self.run_id)

    def shard_path(self, index: int, count: int) -> str:
        return tables.part_path(self.output, self.table, self.dt, index, count, self.run_id)


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
        return _written(config, count, sorted(expected) if count else [])
    for path in sorted(expected - set(written)):  # shards that got no rows still exist, with the schema
        write_parquet(path, [], config)
    existing = FileSystems.match([FileSystems.join(config.partition_dir, "*")])[0].metadata_list
    stale = [m.path for m in existing if tables.is_part(m.path) and m.path not in expected]
    if stale:
        FileSystems.delete(stale)
    with FileSystems.create(tables.success_path(config.partition_dir)) as f:
        f.write(f"{n} shards, {count} rows\n".encode())
    return _written(config, count, sorted(expected))


def _written(config: WriteConfig, rows: int, shards: list[str]) -> dict[str, Any]:
    """The partition's summary, also reported as counters (only for a partition that has files)."""
    if shards:
        name = tables.partition_name(config.table, config.dt)
        Metrics.counter(TABLES_METRICS, f"{name}:rows").inc(rows)
        Metrics.counter(TABLES_METRICS, f"{name}:shards").inc(len(shards))
    return {"table": config.table, "dt": config.dt, "rows": rows, "shards": shards}


def written_tables(result, dt: str) -> dict[str, dict[str, int]]:
    """``{table: {"rows": n, "shards": k}}`` for every partition ``dt`` a finished pipeline's :class:`WriteShards`
    gave files (staged or in place), from the counters they reported; tables sorted by name."""
    found: dict[str, dict[str, int]] = defaultdict(lambda: {"rows": 0, "shards": 0})
    suffix = tables.partition_name("", dt)  # "/dt=<dt>"
    for counter in result.metrics().query()["counters"]:
        if counter.key.metric.namespace != TABLES_METRICS:
            continue
        partition, what = counter.key.metric.name.rsplit(":", 1)
        if partition.endswith(suffix):
            value = counter.committed if counter.committed is not None else counter.attempted
            found[partition[: -len(suffix)]][what] += int(value or 0)
    return {name: dict(found[name]) for name in sorted(found)}


def rows_of(element) -> list[dict[str, Any]]:
    """The rows of one element :class:`WriteShards` is given: a record (anything with ``to_row()``) or a dict is one
    row; a tuple or list of them (a batch: many rows for one element's Beam overhead, e.g. a screenshot's labels)
    is one row each."""
    batch = element if isinstance(element, tuple | list) else (element,)
    return [r if isinstance(r, dict) else r.to_row() for r in batch]


class _CountRows(beam.CombineFn):
    """The rows of :func:`rows_of` lists (one combine, no extra step for the lengths)."""

    def create_accumulator(self) -> int:
        return 0

    def add_input(self, count: int, rows: list) -> int:
        return count + len(rows)

    def merge_accumulators(self, counts) -> int:
        return sum(counts)

    def extract_output(self, count: int) -> int:
        return count


class WriteShards(beam.PTransform):
    """Write records (anything with ``to_row()``, or dicts, or tuples / lists of them: :func:`rows_of`) as one
    Parquet table partition.

    Output: a PCollection with one dict ``{"table", "dt", "rows", "shards"}`` once the partition is committed.
    Write failures are not dead-lettered: they fail the run, because a row that does not fit the schema is a bug.
    """

    def __init__(self, config: WriteConfig):
        super().__init__()
        self._config = config

    def expand(self, records):
        config = self._config
        rows = records | "ToRows" >> beam.Map(rows_of)  # a list of rows an element, up to the shuffle
        count = beam.pvalue.AsSingleton(rows | "Count" >> beam.CombineGlobally(_CountRows()))
        written = (
            rows
            | "AssignShard"
            >> beam.FlatMap(
                lambda batch, n: [(_shard_of(r, config.key_columns, shard_count(config, n)), r) for r in batch],
                n=count,
            )
            | "GroupShard" >> beam.GroupByKey()
            | "WriteShard" >> beam.ParDo(_WriteShard(config), count=count)
        )
        return (
            records.pipeline
            | "Once" >> beam.Create([None])
            | "Commit" >> beam.Map(_commit, written=beam.pvalue.AsList(written), count=count, config=config)
        )
