"""`screenmill inspect` on a single grounding shard inside an output tree: the tree is found above it, the shard's
labels are drawn (the run-wide gallery is tests/stages/test_explore.py's)."""

from __future__ import annotations

import hashlib

import pyarrow as pa
import pyarrow.parquet as pq
from screenmill.pipelines.cli import main
from screenmill.schemas.records import GroundingLabel, Screenshot

from tests.annotators.test_formats import label_row, shot_row
from tests.conftest import png_bytes, ui_image


def test_inspect_draws_the_labels_of_one_shard(tmp_path, capsys):
    data = png_bytes(ui_image(64, 48))
    sid = hashlib.sha256(data).hexdigest()
    (tmp_path / "shot.png").write_bytes(data)
    out = tmp_path / "out"
    for name, schema, rows in (
        ("screenshots", Screenshot.SCHEMA, [shot_row(sid, str(tmp_path / "shot.png"))]),
        ("grounding", GroundingLabel.SCHEMA, [label_row(sid, 1), label_row(sid, 2, box=(30.0, 5.0, 50.0, 25.0))]),
    ):
        folder = out / name / "dt=2026-11-22"
        folder.mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / "part-00000-of-00001.parquet")
    shard = out / "grounding" / "dt=2026-11-22" / "part-00000-of-00001.parquet"
    assert main(["inspect", str(shard), "--out", str(tmp_path / "gallery")]) == 0
    assert "1 screenshots, 0 episodes drawn" in capsys.readouterr().out
    page = (tmp_path / "gallery" / "index.html").read_text()
    assert "2 labels, 64×48" in page and (tmp_path / "gallery" / f"{sid[:16]}.png").is_file()
