"""``screenmill inspect PATH``: draw grounding labels over their screenshots so a person can look at them.

PATH is an output root, a table partition or a single grounding shard. Writes one PNG per screenshot (boxes in red,
click points as blue dots, instruction text above each box) and an ``index.html`` gallery into ``--out``. Episodes
(screenshots with ``episode_id``) are also drawn as strips: each step's frame with its recorded action on it (the
point as a ring, the typed text beside it), next to the frame that followed.
"""

from __future__ import annotations

import html
import io
import json
import os
import sys

from screenmill.pipelines import argcheck as check
from screenmill.schemas.images import load_rgb
from screenmill.schemas.tables import find_output_root, read_shards, report_dir


def render(labels: list[dict], image_bytes: bytes, max_width: int = 1600):
    """Draw ``labels`` (grounding rows) on the image; returns a Pillow image at most ``max_width`` wide."""
    from PIL import ImageDraw

    im = load_rgb(image_bytes)
    scale = min(1.0, max_width / im.width)
    if scale < 1.0:
        im = im.resize((round(im.width * scale), round(im.height * scale)))
    draw = ImageDraw.Draw(im)
    for row in labels:
        box = [row["x0"] * scale, row["y0"] * scale, row["x1"] * scale, row["y1"] * scale]
        draw.rectangle(box, outline=(230, 30, 30), width=2)
        cx, cy = row["click_x"] * scale, row["click_y"] * scale
        draw.ellipse([cx - 4, cy - 4, cx + 4, cy + 4], fill=(30, 90, 230))
        draw.text((box[0], max(0, box[1] - 11)), (row["element_text"] or row["instruction"])[:40], fill=(200, 0, 0))
    return im


def _read(uri: str) -> bytes:
    from apache_beam.io.filesystem import CompressionTypes
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.open(uri, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        return f.read()


def episode_strip(frame: dict, after: dict | None, height: int = 360):
    """One step of an episode: ``frame`` (a screenshots row) with its ``recorded_action`` drawn, beside ``after``."""
    from PIL import Image, ImageDraw

    try:
        action = json.loads(frame["recorded_action"] or "{}")
    except ValueError:
        action = {}
    action = action if isinstance(action, dict) else {"action": str(action)}
    images = []
    for i, shot in enumerate([frame, after] if after else [frame]):
        im = load_rgb(_read(shot["source_uri"]))
        scale = height / im.height
        im = im.resize((max(1, round(im.width * scale)), height))
        if i == 0:
            draw = ImageDraw.Draw(im)
            what = " ".join(str(action.get(k)) for k in ("action", "content", "key", "name") if action.get(k))
            x, y = action.get("x"), action.get("y")
            if isinstance(x, int | float) and isinstance(y, int | float):
                cx, cy = x * scale, y * scale
                draw.ellipse([cx - 9, cy - 9, cx + 9, cy + 9], outline=(230, 30, 30), width=3)
                draw.text((cx + 12, cy - 6), what[:60], fill=(230, 30, 30))
            else:
                draw.text((6, 6), what[:60] or "(no action)", fill=(230, 30, 30))
        images.append(im)
    strip = Image.new("RGB", (sum(i.width for i in images) + 12 * (len(images) - 1), height), (255, 255, 255))
    left = 0
    for im in images:
        strip.paste(im, (left, 0))
        left += im.width + 12
    return strip


def _episodes(shots: list[dict], out: str, limit: int) -> list[str]:
    episodes: dict[str, list[dict]] = {}
    for row in shots:
        if row["episode_id"] is not None and row["step_index"] is not None:
            episodes.setdefault(row["episode_id"], []).append(row)
    cards = []
    for eid in sorted(episodes)[:limit]:
        frames = sorted(episodes[eid], key=lambda r: r["step_index"])
        imgs = []
        for i, frame in enumerate(frames):
            name = f"episode-{eid[:12]}-{frame['step_index']:03d}.png"
            episode_strip(frame, frames[i + 1] if i + 1 < len(frames) else None).save(os.path.join(out, name))
            imgs.append(f"<p>step {frame['step_index']}</p><img src='{name}' style='max-width:100%'>")
        cards.append(f"<section><h2>episode {html.escape(eid)} ({len(frames)} frames)</h2>{''.join(imgs)}</section>")
    return cards


@check.returns_code
def main(argv: list[str] | None = None) -> int:
    p = check.ArgumentParser(prog="screenmill inspect", description=__doc__.splitlines()[0])
    p.add_argument(
        "path", metavar="PATH", type=check.in_output_tree, help="output root, partition folder or grounding shard"
    )
    p.add_argument(
        "--out", type=check.output_dir, default=None, help="gallery folder (default: <output root>/_inspect)"
    )
    p.add_argument("--limit", type=check.POSITIVE, default=50, help="at most this many screenshots")
    args = p.parse_args(argv)

    root = find_output_root(args.path) or args.path
    if args.path.endswith(".parquet"):
        import pyarrow.parquet as pq

        grounding = pq.read_table(io.BytesIO(_read(args.path))).to_pylist()
    else:
        grounding = read_shards(root, "grounding").to_pylist()
    shots, shot_rows = {}, read_shards(root, "screenshots").to_pylist()
    for row in shot_rows:
        shots.setdefault(row["screenshot_id"], row)
    by_image: dict[str, list[dict]] = {}
    for row in grounding:
        by_image.setdefault(row["screenshot_id"], []).append(row)
    out = args.out or report_dir(root, "inspect")
    os.makedirs(out, exist_ok=True)
    cards = []
    for sid in sorted(by_image, key=lambda s: shots.get(s, {}).get("source_uri", s))[: args.limit]:
        shot = shots.get(sid)
        if shot is None:
            print(f"screenmill inspect: screenshot {sid[:12]} has labels but no screenshots row", file=sys.stderr)
            continue
        image = render(by_image[sid], _read(shot["source_uri"]))
        name = f"{sid[:16]}.png"
        image.save(os.path.join(out, name))
        rows = "".join(
            f"<tr><td>{html.escape(r['instruction'])}</td><td>{r['confidence']:.2f}</td>"
            f"<td>{r['x0']:.0f},{r['y0']:.0f},{r['x1']:.0f},{r['y1']:.0f}</td></tr>"
            for r in by_image[sid]
        )
        cards.append(
            f"<section><h2>{html.escape(shot['source_uri'])}</h2><p>{len(by_image[sid])} labels, "
            f"{shot['width']}×{shot['height']}</p><img src='{name}' style='max-width:100%'>"
            f"<details><summary>labels</summary><table>{rows}</table></details></section>"
        )
    strips = _episodes(shot_rows, out, args.limit)
    cards += strips
    with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as f:
        f.write("<!doctype html><meta charset=utf-8><title>screenmill inspect</title>" + "".join(cards))
    print(f"{len(cards) - len(strips)} screenshots, {len(strips)} episodes drawn -> {os.path.join(out, 'index.html')}")
    return 0
