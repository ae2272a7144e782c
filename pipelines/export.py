"""``screenmill export``: a screenmill output root → a Hugging Face dataset repository (or a local copy of one).

    export HF_TOKEN=...                                   # or HUGGINGFACE_HUB_TOKEN; never on the command line
    screenmill export OUT --repo ORG/NAME                 # upload what is new since the last export, one commit
    screenmill export OUT --local-dir DIR [--repo ORG/NAME]   # write the repository an upload would make, no upload

Exit codes: 0 done (rows that could not be exported are listed and counted), 1 the Hub failed or is unreachable
(nothing was committed: rerun), 2 bad settings (options, missing token or packages, another dataset in the repo).
"""

from __future__ import annotations

import argparse
import sys

from screenmill.pipelines import argcheck as check
from screenmill.stages.clients.retry import GaveUp
from screenmill.stages.export.config import ExportConfig


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
    return p


@check.returns_code
def main(argv: list[str] | None = None) -> int:
    """Run one export; return the exit code (0 done, 1 Hub failure, 2 bad settings)."""
    args = build_parser().parse_args(argv)
    from screenmill.stages.export.hub import (  # after the parse: a bad command line is answered without Beam
        ExportError,
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
    try:
        if cfg.local_dir:
            result = export_to_local(cfg)
        else:
            result = export_to_hub(cfg, HubRepo(cfg.repo_id, token_from_env()))
    except (ExportError, ImportError) as e:
        print(f"screenmill export: {e}", file=sys.stderr)
        return 2
    except GaveUp as e:
        print(f"screenmill export: the Hub is unreachable ({e}); nothing was committed, rerun", file=sys.stderr)
        return 1
    except OSError as e:  # huggingface_hub.errors.HfHubHTTPError is an OSError: 401, 403, 404…
        print(f"screenmill export: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(format_summary(result))
    print(f"report: {write_report(cfg.output, result)}")
    return 0
