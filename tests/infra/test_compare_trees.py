"""infra/compare_trees.py: two output trees compare equal row for row, volatile columns and their own folder aside."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

_SPEC = importlib.util.spec_from_file_location(
    "compare_trees", Path(__file__).resolve().parents[2] / "infra" / "compare_trees.py"
)
compare_trees = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(compare_trees)


def _tree(root: Path, rows: list[dict]) -> Path:
    (root / "screenshots" / "dt=2026-12-01").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), root / "screenshots" / "dt=2026-12-01" / "part-0.parquet")
    return root


def test_paths_inside_each_tree_and_volatile_columns_do_not_count(tmp_path):
    def shot(tree: str, run: str) -> dict:
        return {"id": "x", "uri": str((tmp_path / tree / "images" / "x.png").resolve()), "run_id": run}

    a, b = _tree(tmp_path / "a", [shot("a", "1")]), _tree(tmp_path / "b", [shot("b", "2")])
    assert compare_trees.main([str(a), str(b)]) == 0


def test_a_changed_value_or_a_path_outside_the_tree_differs(tmp_path):
    a = _tree(tmp_path / "a", [{"id": "x", "uri": "/data/in/x.png"}])
    b = _tree(tmp_path / "b", [{"id": "x", "uri": "/data/in/y.png"}])
    assert compare_trees.main([str(a), str(b)]) == 1
