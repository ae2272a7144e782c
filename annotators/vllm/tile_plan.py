"""The dynamic tiling plan of Nemotron-Nano-VL-v2 / Holotron: which grid of tiles an image is cut into.

Pure functions, no Beam, no vLLM. The engine resizes each image to ``cols*tile_size`` × ``rows*tile_size``, cuts it
into ``cols`` × ``rows`` square tiles and, when there is more than one tile, appends a thumbnail of the whole image;
every tile costs ``tokens_per_tile`` image tokens. The grid is picked from :func:`target_ratios` by one of two rules:

``closest_aspect``
    What vLLM's ``nano_nemotron_vl`` processor does (``dynamic_preprocess`` / ``get_num_image_tokens`` via
    InternVL's ``calculate_internvl_targets``): the grid whose aspect ratio is closest to the image's; on an exact
    tie the later (larger) grid wins when the image area exceeds half the grid's pixel area.
``area_weighted``
    NVIDIA's own Hugging Face processor (vLLM's ``nemotron_vl.find_closest_aspect_ratio``): maximise
    ``min(grid_area / image_area, 0.6) * min(r / a, a / r)``; the first grid wins ties.

Both are reimplemented here operation for operation (same float expressions, same candidate order), so the plan
is the engine's plan bit for bit; ``tests/annotators/vllm/test_tile_plan.py`` checks that against vLLM's own functions.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from screenmill.schemas.coords import positive_int as _positive_int
from screenmill.schemas.records import TilePlan

if TYPE_CHECKING:  # Pillow is only needed by resize_for_plan
    from PIL import Image

RULES = ("closest_aspect", "area_weighted")

# target_ratios enumerates O(max_tiles**3) pairs; no real processor goes near this.
MAX_TILES_LIMIT = 128


def _tile_bounds(min_tiles, max_tiles) -> tuple[int, int]:
    lo, hi = _positive_int("min_tiles", min_tiles), _positive_int("max_tiles", max_tiles)
    if lo > hi:
        raise ValueError(f"min_tiles ({lo}) must be <= max_tiles ({hi})")
    if hi > MAX_TILES_LIMIT:
        raise ValueError(f"max_tiles ({hi}) is above the supported limit {MAX_TILES_LIMIT}")
    return lo, hi


@functools.lru_cache(maxsize=64)
def _ratios(min_tiles: int, max_tiles: int) -> tuple[tuple[int, int], ...]:
    # Built exactly like vLLM's get_internvl_target_ratios: the same set comprehension, then a stable sort by tile
    # count. Grids with the same tile count (e.g. (1, 2) and (2, 1)) keep the set's iteration order, which is
    # deterministic for small-int tuples and identical to vLLM's because the set is built the same way. The order
    # matters: both rules break exact ties by position.
    ratios = {
        (i, j)
        for n in range(min_tiles, max_tiles + 1)
        for i in range(1, n + 1)
        for j in range(1, n + 1)
        if min_tiles <= i * j <= max_tiles
    }
    return tuple(sorted(ratios, key=lambda x: x[0] * x[1]))


def target_ratios(min_tiles: int, max_tiles: int) -> list[tuple[int, int]]:
    """Every candidate grid ``(cols, rows)`` with ``min_tiles <= cols*rows <= max_tiles``, in the engine's order.

    Args:
        min_tiles: the fewest tiles a grid may have (>= 1).
        max_tiles: the most tiles a grid may have (>= min_tiles, <= ``MAX_TILES_LIMIT``).

    Returns:
        ``(cols, rows)`` pairs (cols = tiles across the width), sorted by tile count; equal counts in the same
        order as vLLM's ``get_internvl_target_ratios``.

    Raises:
        TypeError: a bound is not an integer.
        ValueError: a bound is < 1, ``min_tiles > max_tiles``, or ``max_tiles > MAX_TILES_LIMIT``.
    """
    return list(_ratios(*_tile_bounds(min_tiles, max_tiles)))


def _closest_aspect(width: int, height: int, ratios, tile_size: int) -> tuple[int, int]:
    # vllm/transformers_utils/processors/internvl.py::find_closest_aspect_ratio, same expressions in the same order.
    aspect_ratio = width / height
    best_ratio_diff = float("inf")
    best_ratio = (1, 1)
    area = width * height
    for ratio in ratios:
        target_aspect_ratio = ratio[0] / ratio[1]
        ratio_diff = abs(aspect_ratio - target_aspect_ratio)
        if ratio_diff < best_ratio_diff:
            best_ratio_diff = ratio_diff
            best_ratio = ratio
        elif ratio_diff == best_ratio_diff:
            if area > 0.5 * tile_size * tile_size * ratio[0] * ratio[1]:
                best_ratio = ratio
    return best_ratio


def _area_weighted(width: int, height: int, ratios, tile_size: int) -> tuple[int, int]:
    # vllm/transformers_utils/processors/nemotron_vl.py::find_closest_aspect_ratio, same expressions in the same order.
    aspect_ratio = width / height
    best_factor = float("-inf")
    best_ratio = (1, 1)
    area = width * height
    for rw, rh in ratios:
        target_aspect_ratio = rw / rh
        size_factor = min((rw * rh * tile_size * tile_size) / area, 0.6)
        ratio_closeness = min(target_aspect_ratio / aspect_ratio, aspect_ratio / target_aspect_ratio)
        factor = size_factor * ratio_closeness
        if factor > best_factor:
            best_factor = factor
            best_ratio = (rw, rh)
    return best_ratio


_PICK = {"closest_aspect": _closest_aspect, "area_weighted": _area_weighted}


def plan_tiles(
    width: int,
    height: int,
    *,
    tile_size: int = 512,
    min_tiles: int = 1,
    max_tiles: int = 12,
    thumbnail: bool = True,
    tokens_per_tile: int = 256,
    rule: str = "closest_aspect",
) -> TilePlan:
    """The grid, tile count and image-token count the engine uses for a ``width`` × ``height`` image.

    Args:
        width: image width in pixels (after EXIF orientation), > 0.
        height: image height in pixels, > 0.
        tile_size: tile side in pixels (the model's ``force_image_size``; 512 for Nemotron-Nano-VL-v2).
        min_tiles: fewest grid tiles (vLLM's ``nano_nemotron_vl`` always uses 1).
        max_tiles: most grid tiles, thumbnail not counted (vLLM's ``max_num_tiles``, default 12).
        thumbnail: the model's ``use_thumbnail``: append a whole-image tile when the grid has more than one tile.
        tokens_per_tile: image tokens per tile ((tile_size / patch)² × downsample_ratio²; 256 here).
        rule: ``"closest_aspect"`` (vLLM's processor) or ``"area_weighted"`` (NVIDIA's HF processor).

    Returns:
        A :class:`TilePlan`: ``cols`` × ``rows`` grid; ``thumbnail`` True when this plan has a thumbnail tile
        (requested and more than one grid tile); ``num_tiles`` = cols*rows + thumbnail; ``image_tokens`` =
        num_tiles × tokens_per_tile; ``resized_width`` / ``resized_height`` = cols*tile_size / rows*tile_size.

    Raises:
        TypeError: a size or count is not an integer, or ``thumbnail`` is not a bool.
        ValueError: a size or count is <= 0, ``min_tiles > max_tiles``, ``max_tiles > MAX_TILES_LIMIT``, or
            ``rule`` is not one of :data:`RULES`.
    """
    width, height = _positive_int("width", width), _positive_int("height", height)
    tile_size = _positive_int("tile_size", tile_size)
    tokens_per_tile = _positive_int("tokens_per_tile", tokens_per_tile)
    lo, hi = _tile_bounds(min_tiles, max_tiles)
    if not isinstance(thumbnail, bool):
        raise TypeError(f"thumbnail must be a bool, got {type(thumbnail).__name__}")
    if rule not in _PICK:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")

    cols, rows = _PICK[rule](width, height, _ratios(lo, hi), tile_size)
    blocks = cols * rows
    has_thumbnail = thumbnail and blocks != 1
    num_tiles = blocks + 1 if has_thumbnail else blocks
    return TilePlan(
        cols=cols,
        rows=rows,
        tile_size=tile_size,
        thumbnail=has_thumbnail,
        num_tiles=num_tiles,
        image_tokens=num_tiles * tokens_per_tile,
        resized_width=cols * tile_size,
        resized_height=rows * tile_size,
        rule=rule,
    )


def resize_for_plan(image: Image.Image, plan: TilePlan) -> Image.Image:
    """Resize ``image`` to the plan's ``resized_width`` × ``resized_height`` (bicubic), an optional pre-resize.

    Sending the pre-resized image spares the GPU host the resize. The engine re-plans on what it receives; for a
    resized image the aspect ratio is exactly ``cols/rows``, which yields the same grid for both rules as long as
    ``max_tiles`` < 16 (``tests/annotators/vllm/test_tile_plan.py`` checks every grid up to 12). Pixels differ
    slightly from the engine's own resize (torch antialiased bicubic), and the engine's thumbnail is then made from
    the resized image rather than the original; coordinates keep referring to the original image.

    Args:
        image: a Pillow image (any mode Pillow can resize).
        plan: the plan computed for this image's size.

    Returns:
        A new image of the plan's resized size (a copy when the size already matches).

    Raises:
        TypeError: ``plan`` is not a :class:`TilePlan`.
        ValueError: the plan's resized size is not positive.
    """
    from PIL import Image as _Image

    if not isinstance(plan, TilePlan):
        raise TypeError(f"plan must be a TilePlan, got {type(plan).__name__}")
    size = (plan.resized_width, plan.resized_height)
    if min(size) <= 0:
        raise ValueError(f"plan has a non-positive resized size {size}")
    return image.resize(size, _Image.Resampling.BICUBIC)
