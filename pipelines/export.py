"""``screenmill export``: a screenmill output root → a Hugging Face dataset repository (or a local copy of one).

    export HF_TOKEN=...                                   # or HUGGINGFACE_HUB_TOKEN; never on the command line
    screenmill export OUT --repo ORG/NAME                 # upload what is new since the last export, one commit
    screenmill export OUT --local-dir DIR [--repo ORG/NAME]   # write the repository an upload would make, no upload
    screenmill export OUT --format trl|llamafactory|swift --target T [--task grounding|navigation]
        [--per instruction|image] (--local-dir DIR | --repo ORG/NAME)   # training rows: image + conversation

Exit codes: 0 done (rows that could not be exported are listed and counted), 1 the Hub failed or is unreachable
(nothing was committed: rerun), 2 bad settings (options, missing token or packages, another dataset in the repo).
"""

from __future__ import annotations

import argparse
import sys

from screenmill.annotators.targets import TARGETS
from screenmill.pipelines import argcheck as check
from screenmill.stages.clients.retry import GaveUp
from screenmill.stages.export.config import FORMATS, PER, TASKS, ExportConfig, TrainingConfig


def build_parser() -> argparse.ArgumentParser:
    defaults = ExportConfig(output=".", local_dir=".")
    p = check.ArgumentParser(prog="screenmill export", description=__doc__.splitlines()[0])
    p.add_argument("output", metavar="OUT", type=check.output_tree, help="a `screenmill run` output root")
    p.add_argument("--repo", default=None, metavar="ORG/NAME", help="the Hub dataset repository")
    p.add_argument(
        "--local-dir",
        type=check.output_dir,
        default=None,
        metavar="DIR",
        help="write the repository here instead of uploading",
    )
    p.add_argument("--dt", type=check.date, default=None, help="only this date partition of the tables (default: all)")
    p.add_argument("--test-fraction", type=check.SHARE, default=defaults.test_fraction, help="share in the test split")
    p.add_argument("--seed", default=defaults.seed, help="salt of the split hash (keep it for the repository's life)")
    p.add_argument("--license", default=defaults.license, help="license id for the card (default: %(default)s)")
    p.add_argument("--public", action="store_true", help="create the repository public (default: private)")
    p.add_argument("--pretty-name", default=None, help="the card's title (default: the repository name)")
    p.add_argument(
        "--max-file-rows", type=check.POSITIVE, default=defaults.max_file_rows, help="rows per Parquet file"
    )
    p.add_argument(
        "--max-file-mb", type=check.POSITIVE, default=defaults.max_file_bytes // 2**20, help="image MiB per file"
    )
    _training_options(p)
    return p


def _training_options(p: check.ArgumentParser) -> None:
    """The options of the training export (``--format`` selects it): :mod:`screenmill.stages.export.training`."""
    t = p.add_argument_group("training export (--format)")
    t.add_argument("--format", choices=FORMATS, default=None, help="trainer row format: image(s) + conversation")
    t.add_argument("--target", choices=sorted(TARGETS), default=None, help="the model's coordinate convention")
    t.add_argument("--task", choices=TASKS, default="grounding", help="grounding labels or navigation steps")
    t.add_argument("--per", choices=PER, default="instruction", help="one row per instruction or per screenshot")
    t.add_argument("--history", type=check.int_range(0, 16), default=3, help="previous screenshots per step row")
    t.add_argument("--annotators", default=None, help="comma-separated annotators to keep (dom,ocr,a11y,...)")
    t.add_argument("--recipes", default=None, help="comma-separated recipes to keep")
    t.add_argument("--min-confidence", type=check.SHARE, default=None, help="keep labels at least this confident")
    p.add_check("--target", _needs_target)
    p.add_check("--per", _per_fits_task)


def _needs_target(args: argparse.Namespace) -> None:
    if args.format is not None and args.target is None:
        raise ValueError("--format needs --target")


def _per_fits_task(args: argparse.Namespace) -> None:
    if args.format is not None and args.task == "navigation" and args.per == "image":
        raise ValueError("--per image is for --task grounding (navigation rows are steps)")


def _names(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(n.strip() for n in text.split(",") if n.strip())


def _training(args) -> int:
    """``--format``: the training export; same exit codes as the Hub export."""
    from screenmill.stages.export.hub import HubRepo, token_from_env  # after the parse: no Beam for a bad line
    from screenmill.stages.export.training import export_training_hub, export_training_local, write_training_report

    try:
        cfg = TrainingConfig(
            output=args.output,
            fmt=args.format,
            target=args.target,
            task=args.task,
            per=args.per,
            local_dir=args.local_dir,
            repo_id=args.repo,
            history=args.history,
            annotators=_names(args.annotators),
            recipes=_names(args.recipes),
            min_confidence=args.min_confidence,
            dt=args.dt,
            test_fraction=args.test_fraction,
            seed=args.seed,
            max_file_rows=args.max_file_rows,
            max_file_bytes=args.max_file_mb * 2**20,
            license=args.license,
            private=not args.public,
            pretty_name=args.pretty_name,
        )
    except ValueError as e:
        print(f"screenmill export: {e}", file=sys.stderr)
        return 2
    result, code = _attempt(
        lambda: (
            export_training_local(cfg)
            if cfg.local_dir
            else export_training_hub(cfg, HubRepo(cfg.repo_id, token_from_env()))
        )
    )
    if result is None:
        return code
    print(result.summary())
    print(f"report: {write_training_report(cfg.output, result)}")
    return 0


def _attempt(call):
    """``(call(), 0)``, or ``(None, exit code)`` after one line on stderr: 2 bad settings, 1 the Hub failed."""
    from screenmill.stages.export.repo import ExportError

    try:
        return call(), 0
    except (ExportError, ImportError) as e:
        print(f"screenmill export: {e}", file=sys.stderr)
        return None, 2
    except GaveUp as e:
        print(f"screenmill export: the Hub is unreachable ({e}); nothing was committed, rerun", file=sys.stderr)
        return None, 1
    except OSError as e:  # huggingface_hub.errors.HfHubHTTPError is an OSError: 401, 403, 404…
        print(f"screenmill export: {type(e).__name__}: {e}", file=sys.stderr)
        return None, 1


@check.returns_code
def main(argv: list[str] | None = None) -> int:
    """Run one export; return the exit code (0 done, 1 Hub failure, 2 bad settings)."""
    args = build_parser().parse_args(argv)
    if args.format is not None:
        return _training(args)
    from screenmill.stages.export.hub import (  # after the parse: a bad command line is answered without Beam
        HubRepo,
        export_to_hub,
        export_to_local,
        format_summary,
        token_from_env,
        write_report,
    )

    try:
        cfg = ExportConfig(
            output=args.output,
            repo_id=args.repo,
            local_dir=args.local_dir,
            dt=args.dt,
            test_fraction=args.test_fraction,
            seed=args.seed,
            license=args.license,
            private=not args.public,
            pretty_name=args.pretty_name,
            max_file_rows=args.max_file_rows,
            max_file_bytes=args.max_file_mb * 2**20,
        )
    except ValueError as e:
        print(f"screenmill export: {e}", file=sys.stderr)
        return 2
    result, code = _attempt(
        lambda: export_to_local(cfg) if cfg.local_dir else export_to_hub(cfg, HubRepo(cfg.repo_id, token_from_env()))
    )
    if result is None:
        return code
    print(format_summary(result))
    print(f"report: {write_report(cfg.output, result)}")
    return 0
