"""Compare the data tables of two screenmill output trees, row for row.

    python infra/compare_trees.py OUT_A OUT_B [--ignore COL ...]

Reads every committed table of both trees (``screenshots``, ``grounding``, ``actions``, ``reviewed``, ``_done`` and
every ``_dead_letter/<stage>``), drops the columns that differ by construction between two runs (``run_id``, the
timestamps, and whatever ``--ignore`` adds), sorts the rows and compares them. Prints one line per table with its row
counts and ``same`` or what differs; exits 0 when every table is the same in both trees, 1 otherwise, 2 on bad
arguments. Used to prove that a change of code layout left the data unchanged (two runs of the same inputs, one per
commit). Reads the Parquet files directly (only ``pyarrow``), so that it depends on no version of screenmill's own
readers.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pyarrow.parquet as pq

#: Columns whose values change from one run to the next whatever the code: the run's id, and clock readings.
VOLATILE = ("run_id", "ingest_time", "time", "reviewed_at", "done_time")


def tables(root: Path) -> dict[str, list[Path]]:
    """Table name (``grounding``, ``_dead_letter/ingest``, ...) → its committed Parquet files under ``root``."""
    found: dict[str, list[Path]] = {}
    for path in sorted(root.rglob("*.parquet")):
        rel = path.relative_to(root).parts
        if rel[0].startswith("_") and rel[0] not in ("_dead_letter", "_done"):
            continue  # _staging, _export, _inspect...: not data tables
        if any(part.startswith(".") for part in rel):
            continue
        parts = [p for p in rel[:-1] if not p.startswith("dt=")]
        found.setdefault("/".join(parts), []).append(path)
    return found


def rows(files: list[Path], ignore: set[str], root: Path | None = None) -> list[str]:
    """Every row of ``files`` as a canonical JSON line without the ``ignore`` columns, sorted. A column that is null
    in a row is left out of it, so a tree written before a nullable column was added compares equal to one written
    after, as long as the new column is empty (a schema that grew, not data that changed). A string that names a
    file inside ``root`` (the tree itself: a rendered screenshot's ``OUT/images/<sha256>.png``) is compared by its
    path relative to the tree, so two trees written to different folders compare equal."""
    prefix = str(root.resolve()) + "/" if root is not None else None
    out = []
    for path in files:
        table = pq.read_table(path)
        keep = [name for name in table.column_names if name not in ignore]
        for row in table.select(keep).to_pylist():
            row = {k: _in_tree(v, prefix) for k, v in row.items() if v is not None}
            out.append(json.dumps(row, sort_keys=True, default=str))
    return sorted(out)


def _in_tree(value, prefix: str | None):
    """``value`` with a leading ``prefix`` (the tree's own folder) written as ``<OUT>/``."""
    if prefix and isinstance(value, str) and value.startswith(prefix):
        return "<OUT>/" + value[len(prefix) :]
    return value


def compare(a: Path, b: Path, ignore: set[str]) -> list[tuple[str, int, int, str]]:
    """``(table, rows in a, rows in b, verdict)`` for every table found in either tree."""
    ta, tb = tables(a), tables(b)
    report = []
    for name in sorted(set(ta) | set(tb)):
        ra, rb = rows(ta.get(name, []), ignore, a), rows(tb.get(name, []), ignore, b)
        if ra == rb:
            verdict = "same"
        else:
            only_a, only_b = sorted(set(ra) - set(rb)), sorted(set(rb) - set(ra))
            verdict = f"DIFFERENT: {len(only_a)} rows only in A, {len(only_b)} only in B"
            if only_a:
                verdict += f"\n    A: {only_a[0][:400]}"
            if only_b:
                verdict += f"\n    B: {only_b[0][:400]}"
        report.append((name, len(ra), len(rb), verdict))
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="compare_trees", description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--ignore", nargs="*", default=[], help="more columns to leave out of the comparison")
    args = parser.parse_args(argv)
    for root in (args.a, args.b):
        if not root.is_dir():
            parser.error(f"{root}: not a directory")
    report = compare(args.a, args.b, set(VOLATILE) | set(args.ignore))
    if not report:
        print("no tables found in either tree")
        return 1
    for name, na, nb, verdict in report:
        print(f"{name:<28} {na:>6} {nb:>6}  {verdict}")
    return 0 if all(v == "same" for *_, v in report) else 1


if __name__ == "__main__":
    sys.exit(main())
