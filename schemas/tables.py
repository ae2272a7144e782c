"""The table catalogue: every table of an output tree, its record and keys, where its files live, how they are named
and how they are read. Every writer, reader, committer, exporter and converter takes the layout from here.

Layout of an output root ``OUT`` (a local path or any Beam FileSystems URI)::

    OUT/<table>/dt=YYYY-MM-DD/part-[<run_id>-]NNNNN-of-NNNNN.parquet   committed shards (the only files read)
    OUT/<table>/dt=YYYY-MM-DD/_SUCCESS                                 the partition's marker
    OUT/_staging/<run_id>/<table>/dt=YYYY-MM-DD/part-<run_id>-…        a run's shards before its commit
    OUT/_staging/<run_id>/_COMMIT                                      the run's commit point (files it moves)
    OUT/_runs/<run_id>.json                                            the run manifest
    OUT/_review/ _export/ _eval/ _inspect/                             reports of review, export, evaluate, inspect

Tables: ``screenshots``, ``grounding``, ``actions``, ``reviewed``, ``_done`` (the incremental index) and one
``_dead_letter/<stage>`` per stage. Half-written shards carry a hidden temporary name (``.part-….tmp-…``) and are
never read, nor is anything under ``_staging/``.

Beam's ``FileSystems`` and ``pyarrow.parquet`` are imported where they are used, so that importing ``schemas``
stays light.
"""

from __future__ import annotations

import dataclasses
import io
import re

import pyarrow as pa
from screenmill.schemas.keys import RUN_ID_RE
from screenmill.schemas.records import ActionStep, DeadLetter, Done, GroundingLabel, ReviewedLabel, Screenshot

STAGING = "_staging"
RUNS = "_runs"
#: Screenshots the pipeline made itself (rendered pages), content-addressed; written outside the staging transaction
#: (immutable, so a dead run leaves at most unreferenced files).
IMAGES = "images"
DEAD_LETTER = "_dead_letter"
COMMIT_MARKER = "_COMMIT"
SUCCESS_MARKER = "_SUCCESS"
#: What a table name looks like: ``grounding``, ``_done``, ``_dead_letter/ingest``.
TABLE_NAME_RE = r"_?[a-z][a-z0-9_]*(/[a-z][a-z0-9_]*)?"
#: A committed part file, as the last component of a path (or a bare name); groups ``run_id``, ``index``, ``count``.
PART_RE = re.compile(rf"(?:^|/)part-(?:(?P<run_id>{RUN_ID_RE})-)?(?P<index>\d{{5}})-of-(?P<count>\d{{5}})\.parquet$")
#: A glob of part file names (it can also match names :func:`is_part` refuses).
PART_GLOB = "part-*.parquet"
#: The folders beside the tables where a command writes its reports, by command (never a table, never read by a run).
REPORT_FOLDERS = {
    "review": "_review",
    "export": "_export",
    "evaluate": "_eval",
    "inspect": "_inspect",
    "replay": "_replay",
}


def _join(*parts: str) -> str:
    from apache_beam.io.filesystems import FileSystems

    return FileSystems.join(*parts)


@dataclasses.dataclass(frozen=True)
class Part:
    """A part file's name, parsed: shard ``index`` of ``count``, written by run ``run_id`` (``None``: in place)."""

    index: int
    count: int
    run_id: str | None = None

    @property
    def name(self) -> str:
        return part_name(self.index, self.count, self.run_id)


def part_name(index: int, count: int, run_id: str | None = None) -> str:
    """``part-[<run_id>-]NNNNN-of-NNNNN.parquet``: shard ``index`` (from 0) of ``count``."""
    run = f"{run_id}-" if run_id else ""
    return f"part-{run}{index:05d}-of-{count:05d}.parquet"


def parse_part(path: str) -> Part | None:
    """The :class:`Part` a path (or bare file name) names, or ``None`` when it is not a committed part file name
    (temporary and hidden files, markers, anything else)."""
    m = PART_RE.search(path)
    if m is None:
        return None
    return Part(int(m["index"]), int(m["count"]), m["run_id"])


def is_part(path: str) -> bool:
    """Whether the last component of ``path`` is a part file name (see :func:`parse_part`)."""
    return PART_RE.search(path) is not None


def staging_root(output: str) -> str:
    """``OUT/_staging``: the folder of runs in progress (every reader ignores it)."""
    return _join(output, STAGING)


def staging_dir(output: str, run_id: str) -> str:
    """``OUT/_staging/<run_id>``: where run ``run_id`` writes everything before its commit."""
    return _join(output, STAGING, run_id)


def image_path(output: str, sha256: str) -> str:
    """``OUT/images/<sha256>.png``: a screenshot the pipeline made itself (a rendered page), content-addressed."""
    return _join(output, IMAGES, f"{sha256}.png")


def manifest_rel(run_id: str) -> str:
    """``_runs/<run_id>.json``: the run manifest's path relative to the output root (and to the staging dir)."""
    return f"{RUNS}/{run_id}.json"


def manifest_path(output: str, run_id: str) -> str:
    """``OUT/_runs/<run_id>.json``: where run ``run_id``'s manifest is once committed."""
    return _join(output, RUNS, f"{run_id}.json")


def read_manifests(output: str) -> tuple[list[dict], list[tuple[str, str]]]:
    """Every committed run manifest ``OUT/_runs/*.json``, sorted by run id, and ``(path, error)`` for each file there
    that is not a run manifest (not JSON, or no ``run_id``)."""
    import json

    from apache_beam.io.filesystem import CompressionTypes
    from apache_beam.io.filesystems import FileSystems

    manifests, bad = [], []
    metas = FileSystems.match([_join(output, RUNS, "*.json")])[0].metadata_list
    for meta in sorted(metas, key=lambda m: m.path):
        try:
            with FileSystems.open(meta.path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
                manifest = json.loads(f.read())
            if not isinstance(manifest, dict) or not manifest.get("run_id"):
                raise ValueError("not a run manifest (no run_id)")
            manifests.append(manifest)
        except ValueError as e:
            bad.append((meta.path, f"{type(e).__name__}: {e}"))
    return sorted(manifests, key=lambda m: m["run_id"]), bad


def report_dir(output: str, command: str) -> str:
    """``OUT/<folder>``: where ``screenmill <command>`` writes its reports (:data:`REPORT_FOLDERS`: ``_review``,
    ``_export``, ``_eval``, ``_inspect``, ``_replay``).

    Raises:
        KeyError: ``command`` writes no reports.
    """
    return _join(output, REPORT_FOLDERS[command])


def report_path(output: str, command: str, name: str) -> str:
    """``OUT/<folder>/<name>``: report file ``name`` of ``screenmill <command>`` (see :func:`report_dir`)."""
    return _join(report_dir(output, command), name)


def partition_name(table_name: str, dt: str) -> str:
    """``<table>/dt=<dt>``: a partition relative to the output root (the name its write counters carry)."""
    return f"{table_name}/dt={dt}"


def partition_dir(output: str, table_name: str, dt: str, run_id: str | None = None) -> str:
    """``OUT/<table>/dt=<dt>``, or with ``run_id`` the same partition inside the run's staging dir."""
    root = output if run_id is None else staging_dir(output, run_id)
    return _join(root, table_name, f"dt={dt}")


def part_path(output: str, table_name: str, dt: str, index: int, count: int, run_id: str | None = None) -> str:
    """The path of shard ``index`` of ``count`` of partition ``dt`` (in the run's staging dir with ``run_id``)."""
    return _join(partition_dir(output, table_name, dt, run_id), part_name(index, count, run_id))


def success_path(partition: str) -> str:
    """The ``_SUCCESS`` marker of a partition folder."""
    return _join(partition, SUCCESS_MARKER)


def dead_letter_table(stage: str) -> str:
    """``_dead_letter/<stage>``: the table of ``stage``'s dead letters."""
    return f"{DEAD_LETTER}/{stage}"


@dataclasses.dataclass(frozen=True)
class Table:
    """One table of the catalogue.

    Attributes:
        name: the table's folder under the output root, e.g. ``grounding`` or ``_dead_letter/ingest``.
        record: the record class; its ``SCHEMA`` is the table's explicit pyarrow schema.
        key: the columns that identify a row (they pick the shard and the sort order when written).
    """

    name: str
    record: type
    key: tuple[str, ...]

    @property
    def schema(self) -> pa.Schema:
        return self.record.SCHEMA

    def partition_dir(self, output: str, dt: str, run_id: str | None = None) -> str:
        """See :func:`partition_dir`."""
        return partition_dir(output, self.name, dt, run_id)

    def glob(self, output: str, dt: str | None = None) -> str:
        """``OUT/<table>/dt=<dt or *>/part-*.parquet``: a FileSystems pattern of the table's committed part files
        (it can also match names :func:`is_part` refuses; :meth:`read` filters them)."""
        return _join(output, self.name, f"dt={dt}" if dt else "dt=*", PART_GLOB)

    def part_files(self, output: str, dt: str | None = None) -> list[str]:
        """The paths of the table's committed part files (all ``dt`` partitions, or one), sorted."""
        from apache_beam.io.filesystems import FileSystems

        found = FileSystems.match([self.glob(output, dt)])[0].metadata_list
        return sorted(m.path for m in found if is_part(m.path))

    def read(self, output: str, dt: str | None = None) -> pa.Table:
        """Every committed shard of the table (all ``dt`` partitions, or one) as one Arrow table of its schema."""
        import pyarrow.parquet as pq
        from apache_beam.io.filesystem import CompressionTypes
        from apache_beam.io.filesystems import FileSystems

        tables = []
        for path in self.part_files(output, dt):
            with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
                tables.append(pq.read_table(io.BytesIO(f.read()), schema=self.schema))
        return pa.concat_tables(tables) if tables else self.schema.empty_table()


DEAD_LETTER_KEY = ("input_id", "reason")

#: The catalogue, by top folder. ``_dead_letter`` is a family: one table per stage, see :func:`table`.
TABLES: dict[str, Table] = {
    t.name: t
    for t in (
        Table("screenshots", Screenshot, ("screenshot_id", "episode_id", "step_index")),
        Table("grounding", GroundingLabel, ("label_id",)),
        Table("actions", ActionStep, ActionStep.KEY),
        Table("reviewed", ReviewedLabel, ("label_id", "annotation_id")),
        Table(DEAD_LETTER, DeadLetter, DEAD_LETTER_KEY),
        Table("_done", Done, Done.KEY),
    )
}


def table(name: str) -> Table:
    """The catalogue entry of table ``name`` (``grounding``, ``_dead_letter/ingest`` …): a table below a known top
    folder (a stage's dead letters) has that folder's record and keys.

    Raises:
        KeyError: ``name``'s top folder is not a known table.
    """
    family = TABLES[name.split("/")[0]]
    return family if family.name == name else dataclasses.replace(family, name=name)


def read_shards(output: str, table_name: str, dt: str | None = None) -> pa.Table:
    """Read every committed shard of ``table_name`` (all ``dt`` partitions, or one) into one Arrow table.

    Only committed ``part-[<run_id>-]NNNNN-of-NNNNN.parquet`` files count: temporary and hidden files, and everything
    a run in progress or a dead run left under ``_staging/``, are never read. The table's explicit schema is used, so
    an empty table still has its columns.

    Raises:
        KeyError: ``table_name`` is not a known table.
    """
    return table(table_name).read(output, dt)


def committed_tables(output: str, dt: str | None = None) -> list[str]:
    """The names of the tables with committed part files under ``output`` (in partition ``dt``, or any), sorted."""
    from apache_beam.io.filesystems import FileSystems

    base = output.rstrip("/") + "/"
    found = FileSystems.match([_join(output, "**", f"dt={dt}" if dt else "dt=*", PART_GLOB)])[0].metadata_list
    names = set()
    for m in found:
        rel = m.path[len(base) :] if m.path.startswith(base) else m.path
        name = rel.rsplit("/dt=", 1)[0]
        if is_part(m.path) and not name.startswith(STAGING + "/") and re.fullmatch(TABLE_NAME_RE, name):
            names.add(name)
    return sorted(names)


def is_output_root(path: str) -> bool:
    """True when the local folder ``path`` is an output root: it has ``_runs/`` or a table's folder."""
    import os

    return any(os.path.isdir(os.path.join(path, name)) for name in (RUNS, *TABLES))


def find_output_root(path: str) -> str | None:
    """The output root a local path is in: ``path`` itself or the nearest folder above it with ``screenshots/``
    (``path`` may be a partition folder or a shard); None when there is none."""
    import os

    probe = os.path.abspath(path)
    if os.path.isdir(probe) and is_output_root(probe):
        return probe
    while probe != os.path.dirname(probe):
        if os.path.isdir(os.path.join(probe, table("screenshots").name)):
            return probe
        probe = os.path.dirname(probe)
    return None
