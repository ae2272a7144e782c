"""The table catalogue: part names round-trip, paths follow the layout, the reader sees committed shards only."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from screenmill.schemas import tables
from screenmill.schemas.records import DeadLetter, GroundingLabel, utcnow
from screenmill.schemas.tables import Part, parse_part, part_name, read_shards, table

RUN = "20261123T154538Z-a1b2c3"
DT = "2026-11-23"


@pytest.mark.parametrize("run_id", [None, RUN])
@pytest.mark.parametrize(("index", "count"), [(0, 1), (3, 12), (99_998, 99_999)])
def test_a_part_name_parses_back_to_what_built_it(index, count, run_id):
    name = part_name(index, count, run_id)
    assert parse_part(name) == Part(index, count, run_id)
    assert parse_part(f"gs://bucket/out/grounding/dt={DT}/{name}") == Part(index, count, run_id)
    assert Part(index, count, run_id).name == name
    assert tables.is_part("/" + name)


def test_part_names_are_the_documented_ones():
    assert part_name(0, 4) == "part-00000-of-00004.parquet"
    assert part_name(2, 3, RUN) == f"part-{RUN}-00002-of-00003.parquet"


@pytest.mark.parametrize(
    "name",
    [
        ".part-00000-of-00001.parquet.tmp-0123456789ab",  # a shard being written
        "part-00000-of-00001.parquet.tmp",
        "_SUCCESS",
        "_COMMIT",
        "part-0-of-1.parquet",
        "part-20261123T154538Z-zzzzzz-00000-of-00001.parquet",  # not a run id
        "xpart-00000-of-00001.parquet",
        "part-00000-of-00001.parquet/",
    ],
)
def test_anything_else_is_not_a_part(name):
    assert parse_part(name) is None
    assert not tables.is_part("/out/grounding/dt=2026-11-23/" + name)


def test_paths_follow_the_layout():
    grounding = table("grounding")
    assert grounding.partition_dir("/o", DT) == f"/o/grounding/dt={DT}"
    assert grounding.partition_dir("/o", DT, RUN) == f"/o/_staging/{RUN}/grounding/dt={DT}"
    assert tables.part_path("/o", "grounding", DT, 1, 2) == f"/o/grounding/dt={DT}/part-00001-of-00002.parquet"
    assert tables.part_path("/o", "grounding", DT, 1, 2, RUN) == (
        f"/o/_staging/{RUN}/grounding/dt={DT}/part-{RUN}-00001-of-00002.parquet"
    )
    assert grounding.glob("/o") == "/o/grounding/dt=*/part-*.parquet"
    assert grounding.glob("/o", DT) == f"/o/grounding/dt={DT}/part-*.parquet"
    assert tables.staging_dir("/o", RUN) == f"/o/_staging/{RUN}"
    assert tables.manifest_path("/o", RUN) == f"/o/_runs/{RUN}.json"
    assert tables.manifest_rel(RUN) == f"_runs/{RUN}.json"
    assert tables.success_path(f"/o/grounding/dt={DT}") == f"/o/grounding/dt={DT}/_SUCCESS"
    assert tables.dead_letter_table("ingest") == "_dead_letter/ingest"
    assert tables.staging_root("/o") == "/o/_staging"
    assert tables.partition_name("grounding", DT) == f"grounding/dt={DT}"
    assert tables.report_path("/o", "review", "push-1.json") == "/o/_review/push-1.json"
    assert tables.report_path("/o", "export", "e.json") == "/o/_export/e.json"
    assert tables.report_dir("/o", "evaluate") == "/o/_eval" and tables.report_dir("/o", "inspect") == "/o/_inspect"
    with pytest.raises(KeyError):
        tables.report_dir("/o", "run")


def test_every_table_has_its_record_and_keys():
    assert set(tables.TABLES) == {"screenshots", "grounding", "actions", "reviewed", "_dead_letter", "_done"}
    for entry in tables.TABLES.values():
        assert set(entry.key) <= set(entry.schema.names), entry.name
        assert entry.schema is entry.record.SCHEMA
    ingest = table("_dead_letter/ingest")
    assert (ingest.name, ingest.record, ingest.key) == ("_dead_letter/ingest", DeadLetter, ("input_id", "reason"))
    assert table("grounding").record is GroundingLabel
    with pytest.raises(KeyError):
        table("labels")


def _dead(input_id: str) -> dict:
    return DeadLetter(input_id, "ingest", "empty_file", "zero bytes", "/x", RUN, utcnow()).to_row()


def _write(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=DeadLetter.SCHEMA), path)


def test_the_reader_ignores_staging_temp_and_foreign_files(tmp_path):
    name = "_dead_letter/ingest"
    assert read_shards(str(tmp_path), name).schema.equals(DeadLetter.SCHEMA)  # no table yet: empty, with columns
    part = tmp_path / name / f"dt={DT}"
    _write(part / part_name(0, 2, RUN), [_dead("a")])
    _write(part / part_name(1, 2, RUN), [_dead("b")])
    _write(tmp_path / name / "dt=2026-11-24" / part_name(0, 1), [_dead("c")])
    _write(part / f".{part_name(0, 1)}.tmp-0123456789ab", [_dead("half-written")])
    _write(part / "part-extra.parquet", [_dead("foreign")])
    _write(tmp_path / "_staging" / RUN / name / f"dt={DT}" / part_name(0, 1, RUN), [_dead("uncommitted")])
    (part / "_SUCCESS").write_text("{}")

    assert sorted(read_shards(str(tmp_path), name).column("input_id").to_pylist()) == ["a", "b", "c"]
    assert sorted(read_shards(str(tmp_path), name, DT).column("input_id").to_pylist()) == ["a", "b"]
    assert table(name).part_files(str(tmp_path), DT) == [str(part / part_name(i, 2, RUN)) for i in range(2)]
    assert tables.committed_tables(str(tmp_path)) == [name]
    assert tables.committed_tables(str(tmp_path), "2026-11-24") == [name]
    assert tables.committed_tables(str(tmp_path), "2026-11-25") == []


def test_app_window_titles_round_trip_and_rows_written_before_them_read_as_none(tmp_path):
    """A screenshot's app record keeps its window titles (a list of structs in the app struct); a shard written
    with the app struct as it was before (no ``window_titles``) still reads, its rows with no title."""
    from screenmill.schemas.records import AppSettings, Screenshot, WindowTitle

    title = WindowTitle("Framed shapes", 426.0, 248.0, 854.0, 270.0)
    app = AppSettings("shapes", '["python3"]', None, None, "GTK4", "4.8.3", window_titles=(title,))
    shot = Screenshot("a" * 64, "x.png", 1280, 800, "png", "RGB", 1, 1, utcnow(), RUN, page_uri="app:shapes", app=app)
    part = tmp_path / "screenshots" / f"dt={DT}"
    part.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([shot.to_row()], schema=Screenshot.SCHEMA), part / part_name(0, 2, RUN))
    old_app = pa.struct([f for f in AppSettings.SCHEMA if f.name != "window_titles"])
    old = pa.schema([pa.field("app", old_app) if f.name == "app" else f for f in Screenshot.SCHEMA])
    old_row = shot.to_row() | {"screenshot_id": "b" * 64}
    old_row["app"] = {k: v for k, v in old_row["app"].items() if k != "window_titles"}
    pq.write_table(pa.Table.from_pylist([old_row], schema=old), part / part_name(1, 2, RUN))
    rows = sorted(read_shards(str(tmp_path), "screenshots").to_pylist(), key=lambda r: r["screenshot_id"])
    assert rows[0]["app"]["window_titles"] == [title.to_row()] and rows[1]["app"]["window_titles"] is None
    assert Screenshot.from_row(rows[0]).app == app
    assert Screenshot.from_row(rows[1]).app.window_titles == () and Screenshot.from_row(rows[1]).app.name == "shapes"
