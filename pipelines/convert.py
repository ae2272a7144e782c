"""``screenmill convert OUT --to screenspot|osworld-g --dest DIR``: write labels in GUI-grounding benchmark formats.

Usage: ``screenmill convert OUT --to screenspot|osworld-g --dest DIR [--images copy|symlink|none]
[--reviewed accept-only|apply|ignore] [--split NAME] [--screenspot-variant v1|v2|pro]
[--platform web|mobile|desktop]``.

Reads the ``grounding``, ``screenshots`` and ``reviewed`` tables of a screenmill output root OUT (through
:func:`screenmill.schemas.tables.read_shards`) and hands their rows to
:func:`screenmill.annotators.formats.convert_rows`, which applies the human review and writes one JSON file, the images
it names and ``_dead_letter.jsonl`` into DEST (the formats, the review modes, the dead-letter reasons and where
ScreenSpot-Pro's ``platform`` / ``application`` / ``group`` come from are described in
:mod:`screenmill.annotators.formats`). Prints one summary line.

Exit codes: 0 done (even with dead letters), 2 bad arguments or OUT has no grounding table.
"""

from __future__ import annotations

import argparse
import os
import sys

from screenmill.annotators.formats import IMAGE_MODES, PLATFORMS, REVIEW_MODES, TARGETS, VARIANTS, convert_rows
from screenmill.pipelines import argcheck as check


def _split_name(text: str) -> str:
    if not text or os.sep in text or text.startswith("."):
        raise check.ArgumentTypeError(f"{text!r} must be a plain file-name part")
    return text


def build_parser() -> argparse.ArgumentParser:
    """The ``screenmill convert`` argument parser."""
    p = check.ArgumentParser(prog="screenmill convert", description=__doc__.splitlines()[0])
    p.add_argument(
        "output", metavar="OUT", type=check.output_tree, help="a screenmill output root (with a grounding table)"
    )
    p.add_argument("--to", required=True, choices=TARGETS, help="the benchmark format")
    p.add_argument(
        "--dest",
        required=True,
        type=check.output_dir,
        metavar="DIR",
        help="folder for the JSON file, images and dead letters",
    )
    p.add_argument("--images", choices=IMAGE_MODES, default="copy", help="how images reach DEST (default: copy)")
    p.add_argument(
        "--reviewed",
        choices=REVIEW_MODES,
        default="apply",
        help="apply: drop rejected, use fixes (default); accept-only: only accepted/fixed; ignore: no review",
    )
    p.add_argument(
        "--split", type=_split_name, default="screenmill", help="split name: names the file, fills data_source"
    )
    p.add_argument(
        "--screenspot-variant",
        choices=VARIANTS,
        default="v1",
        help="v1/v2: bbox [x,y,w,h] (SeeClick, default); pro: bbox [x0,y0,x1,y1] + img_size (ScreenSpot-Pro)",
    )
    p.add_argument(
        "--platform",
        choices=PLATFORMS,
        default=None,
        help="ScreenSpot-Pro platform of screenshots that are neither rendered pages nor episode steps whose manifest "
        "names one (default: unknown)",
    )
    return p


@check.returns_code
def main(argv: list[str] | None = None) -> int:
    """Run the conversion; return the exit code (0 done, 2 bad arguments or no grounding table in OUT)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # --help: 0 (a bad command line returns 2 through check.returns_code)
        return int(e.code or 0)
    from apache_beam.io.filesystems import FileSystems
    from screenmill.schemas.tables import read_shards, table

    pattern = table("grounding").glob(args.output)
    if not FileSystems.match([pattern])[0].metadata_list:
        print(f"screenmill convert: {args.output} has no grounding table (no {pattern})", file=sys.stderr)
        return 2
    summary = convert_rows(
        read_shards(args.output, "grounding").to_pylist(),
        read_shards(args.output, "screenshots").to_pylist(),
        read_shards(args.output, "reviewed").to_pylist(),
        args.dest,
        args.to,
        images=args.images,
        reviewed=args.reviewed,
        split=args.split,
        variant=args.screenspot_variant,
        platform=args.platform,
    )
    print(summary.line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
