"""``TileScreenshots``: attach the engine's tiling plan (grid, tile count, image tokens) to each screenshot.

The plan is the one vLLM's ``nano_nemotron_vl`` processor computes for Nemotron-Nano-VL-v2 / Holotron (512 px
tiles, 1..12 tiles + a thumbnail, 256 tokens per tile) — see :mod:`screenmill.annotators.vllm.tile_plan` and its parity
test. The token count is what the inference stage batches by.
"""

from __future__ import annotations

import dataclasses

from screenmill.annotators.vllm.tile_plan import RULES, plan_tiles
from screenmill.schemas.records import Screenshot
from screenmill.stages.base import Stage, StageDoFn

STAGE = "tile"


@dataclasses.dataclass(frozen=True)
class TileConfig:
    """The processor settings the plan must match (defaults: Nemotron-Nano-VL-v2 / Holotron-12B in vLLM).

    Attributes:
        run_id: the run's id (stamped on dead letters).
        tile_size: tile side in pixels (the model's ``force_image_size``).
        min_tiles / max_tiles: tile-count bounds (vLLM's ``max_num_tiles``, default 12).
        thumbnail: add a whole-image thumbnail tile when there is more than one tile.
        tokens_per_tile: image tokens per tile ((tile/patch)² × downsample², 256 for Holotron).
        rule: ``closest_aspect`` (vLLM's processor) or ``area_weighted`` (NVIDIA's HF processor).
    """

    run_id: str
    tile_size: int = 512
    min_tiles: int = 1
    max_tiles: int = 12
    thumbnail: bool = True
    tokens_per_tile: int = 256
    rule: str = "closest_aspect"

    def __post_init__(self):
        if not self.run_id:
            raise ValueError("TileConfig.run_id must be set")
        if self.tile_size <= 0 or self.tokens_per_tile <= 0:
            raise ValueError("TileConfig.tile_size and tokens_per_tile must be > 0")
        if not 1 <= self.min_tiles <= self.max_tiles:
            raise ValueError(f"TileConfig: need 1 <= min_tiles <= max_tiles, got {self.min_tiles}, {self.max_tiles}")
        if self.rule not in RULES:
            raise ValueError(f"TileConfig.rule {self.rule!r} is not one of {RULES}")

    def plan(self, width: int, height: int):
        return plan_tiles(
            width,
            height,
            tile_size=self.tile_size,
            min_tiles=self.min_tiles,
            max_tiles=self.max_tiles,
            thumbnail=self.thumbnail,
            tokens_per_tile=self.tokens_per_tile,
            rule=self.rule,
        )


class _Tile(StageDoFn):
    stage = STAGE
    error_reason = "tiling_failed"  # an image the plan cannot handle is dead-lettered, not fatal

    def __init__(self, config: TileConfig):
        super().__init__(config.run_id)
        self._config = config

    def handle(self, shot: Screenshot):
        yield dataclasses.replace(shot, tile_plan=self._config.plan(shot.width, shot.height))


class TileScreenshots(Stage):
    """Screenshots → the same screenshots with ``tile_plan`` set; dead letters with reason ``tiling_failed``."""

    def __init__(self, config: TileConfig):
        super().__init__()
        self._config = config

    def expand(self, shots):
        return self.apply_fn(shots, "Plan", _Tile(self._config))
