"""``screenmill selftest``: run the adversarial suite in-process and print a reliability report.

Every figure is computed here, in a temporary folder, from what the code does (nothing is parsed from test output):

* **ingest corpus**: a folder of hostile inputs (random, truncated and bit-flipped bytes, decompression and scan
  bombs, animated and odd-mode images, wrong extensions, symlinks out of the root, a FIFO, a device, non-UTF-8 names,
  malformed episode manifests…) goes through ``screenmill run --annotator none``. Every bad input must be
  dead-lettered with its expected reason, every good one accepted, the counts must add up, and no file outside the
  input root may be opened (an audit hook watches every ``open``).
* **model answers**: prompt-injection text, NaN / Infinity / huge numbers, huge strings and nesting bombs through every
  recipe's answer parser: rejected with a reason, or kept as plain storable strings; never executed, never a crash.
* **services and secrets**: with planted tokens in ``HF_TOKEN`` / ``HUGGINGFACE_HUB_TOKEN`` / ``LABEL_STUDIO_API_KEY``:
  a run, an export to a local folder, an export to a Hub (``HfApi`` patched in memory) whose commit fails twice with
  503, and a review push / pull to a closed port. The upload must succeed, review must exit 1 ("rerun to resume"), and
  no output file (Parquet decoded) nor any captured output may hold a token.
* **retry helper**: transient faults (connection errors, timeouts, 429 / 5xx) are retried to success, permanent ones
  (4xx, bugs) are not retried, a lasting outage ends in ``GaveUp``.
* **kill -9** (skipped by ``--quick``): runs killed at failpoints inside the writes and the commit, and by a timed
  SIGKILL from outside, then rerun: rows lost and duplicated against a clean run must both be 0.

Usage: ``screenmill selftest [--quick] [--workdir DIR] [--json FILE]``; exit code 0 only when every expectation holds.

The parts live by role in this package; :mod:`screenmill.pipelines.selftest.fixtures` is the one public place the
command and the tests take them from.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from screenmill.pipelines import argcheck as check
from screenmill.pipelines.selftest.fixtures import (
    KillResult,
    captured,
    format_report,
    grouped,
    run_answers,
    run_corpus,
    run_kill9,
    run_retry,
    run_services,
)


def selftest(workdir: Path, quick: bool = False, kill_annotator: str = "none") -> dict[str, Any]:
    """Run every section under ``workdir``; return the figures (``ok`` says whether every expectation held)."""
    crashes: list[str] = []
    results: dict[str, Any] = {}
    results["corpus"] = _section("corpus", lambda: run_corpus(workdir / "corpus"), crashes)
    results["answers"] = _section("answers", lambda: run_answers(workdir), crashes)
    results["services"] = _section("services", lambda: run_services(workdir / "services"), crashes)
    results["retry"] = _section("retry", _quietly(run_retry), crashes)
    if not quick:
        results["kill9"] = _section("kill9", lambda: run_kill9(workdir / "kill9", annotator=kill_annotator), crashes)
    figures: dict[str, Any] = {"mode": "quick" if quick else "full"}
    for name, res in results.items():
        if res is None:
            figures[name] = None
            continue
        figures[name] = dataclasses.asdict(res) | {"ok": res.ok}
        if isinstance(res, KillResult):
            figures[name] |= {"lost": res.lost, "duplicated": res.duplicated}
    corpus, answers, services = results.get("corpus"), results.get("answers"), results.get("services")
    crash_list = list(crashes)
    crash_list += [f"run over the corpus: {corpus.crash}"] if corpus and corpus.crash else []
    crash_list += [f"answer parser: {m}" for m in grouped(answers.crashes if answers else [])]
    crash_list += [f"services: {services.crash}"] if services and services.crash else []
    figures["crash_list"], figures["crashes"] = crash_list, len(crash_list)
    figures["ok"] = not crash_list and all(r is not None and r.ok for r in results.values())
    return figures


def _quietly(fn: Callable[[], Any]) -> Callable[[], Any]:
    def call() -> Any:
        with captured():
            return fn()

    return call


def _section(name: str, fn: Callable[[], Any], crashes: list[str]) -> Any:
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - a section that raises is a crash in the report, not a dead selftest
        crashes.append(f"{name}: {type(e).__name__}: {e}")
        traceback.print_exc(file=sys.stderr)
        return None


def build_parser() -> argparse.ArgumentParser:
    p = check.ArgumentParser(prog="screenmill selftest", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="skip the kill -9 + rerun part (the slow one)")
    p.add_argument(
        "--workdir",
        type=check.output_dir,
        default=None,
        help="work here (kept) instead of in a temporary folder (removed)",
    )
    p.add_argument(
        "--json", type=check.output_file_in_dir, default=None, metavar="FILE", help="also write the figures as JSON"
    )
    p.add_argument("--kill-annotator", choices=("none", "ocr"), default="none", help="annotator of the kill -9 runs")
    return p


@check.returns_code
def main(argv: list[str] | None = None) -> int:
    """Run the selftest, print the report; 0 when every expectation holds, else 1."""
    args = build_parser().parse_args(argv)
    with contextlib.ExitStack() as stack:
        if args.workdir:
            workdir = Path(args.workdir)
            workdir.mkdir(parents=True, exist_ok=True)
        else:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="screenmill-selftest-")))
        figures = selftest(workdir, quick=args.quick, kill_annotator=args.kill_annotator)
    print(format_report(figures))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2, default=str))
    return 0 if figures["ok"] else 1
