"""``screenmill leakage-hashes IMAGES_DIR --out hashes.txt``: perceptual hashes of a benchmark's images.

Writes one ``<16 hex digits>  <path relative to IMAGES_DIR>`` line per image (``.png`` ``.jpg`` ``.jpeg`` ``.webp``,
recursive, sorted), under a ``#`` comment header: the hash-list format the leakage guard
(:mod:`screenmill.stages.guard`) reads as its ``benchmark``. Hashing once here spares every worker from hashing the
benchmark folder, and the list can be shared (``--out gs://…``) where workers cannot see a local folder.

Exit status: 0 written; 1 an image cannot be hashed (without ``--skip-unreadable``) or there is no image;
2 bad arguments.
"""

from __future__ import annotations

import sys

from screenmill.pipelines import argcheck as check
from screenmill.schemas.phash import to_hex


def format_hash_lines(hashes: list[tuple[str, int]], source: str) -> str:
    """The hash-list text for ``[(name, hash)]``: a comment header, then ``<hex>  <name>`` lines."""
    lines = [
        f"# screenmill leakage-hashes: {len(hashes)} benchmark images under {source}",
        "# <pHash: 16 hex digits (screenmill.schemas.phash)>  <image path relative to that folder>",
    ]
    lines += [f"{to_hex(value)}  {name}" for name, value in hashes]
    return "\n".join(lines) + "\n"


@check.returns_code
def main(argv: list[str] | None = None) -> int:
    p = check.ArgumentParser(prog="screenmill leakage-hashes", description=__doc__.splitlines()[0])
    p.add_argument(
        "images_dir",
        metavar="IMAGES_DIR",
        type=check.existing_dir,
        help="folder of benchmark images (read recursively)",
    )
    p.add_argument(
        "--out",
        required=True,
        type=check.output_file,
        help="hash list to write (local path or a Beam FileSystems URI)",
    )
    p.add_argument(
        "--skip-unreadable", action="store_true", help="leave out images that cannot be decoded (listed on stderr)"
    )
    args = p.parse_args(argv)
    from apache_beam.io.filesystems import FileSystems  # after the parse: a bad command line is answered without Beam
    from screenmill.stages.guard import hash_image_dir

    def skip(name: str, error: Exception) -> None:
        print(f"screenmill leakage-hashes: skipped {name}: {error}", file=sys.stderr)

    try:
        hashes = hash_image_dir(args.images_dir, on_error=skip if args.skip_unreadable else None)
    except ValueError as e:
        print(f"screenmill leakage-hashes: {e} (--skip-unreadable leaves such images out)", file=sys.stderr)
        return 1
    if not hashes:
        print(f"screenmill leakage-hashes: no images (.png .jpg .jpeg .webp) under {args.images_dir}", file=sys.stderr)
        return 1
    with FileSystems.create(args.out) as f:
        f.write(format_hash_lines(hashes, args.images_dir).encode("utf-8"))
    print(f"screenmill leakage-hashes: {len(hashes)} hashes written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
