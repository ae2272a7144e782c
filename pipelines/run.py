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
import logging
import time

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions

from pipelines import options as opts
from schemas.keys import config_hash, new_run_id
from schemas.records import ActionStep, DeadLetter, Done, GroundingLabel, Screenshot
from schemas.tables import manifest_path
from stages.done import MarkDone, ReadDoneIndex, is_new, not_held
from stages.guard import GuardBenchmarkLeakage
from stages.ingest import IngestConfig, IngestScreenshots
from stages.label import LabelScreenshots
from stages.label.vlm import FeedingPolicy
from stages.render import RenderPages, labels_of_kept, pages_done
from stages.runners import is_local_runner, resolve_runner, runner_name
from stages.store.commit import commit_run, recover
from stages.store.report import build_manifest, format_summary
from stages.tile import TileScreenshots
from stages.write import WriteShards


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="screenmill run", description=__doc__.splitlines()[0])
    p.add_argument("--input", default=None, help="FileSystems pattern or directory of screenshots / episodes")
    opts.add_output_options(p)
    p.add_argument("--annotator", choices=("ocr", "vllm", "none"), default="ocr", help="label producer (default: ocr)")
    p.add_argument("--dt", default=None, help="date partition YYYY-MM-DD (default: today, UTC)")
    opts.add_image_limit_options(p)
    opts.add_tile_options(p)
    opts.add_ocr_options(p)
    p.add_argument("--quiet", action="store_true", help="print only the manifest path")
    opts.add_guard_options(p)
    opts.add_engine_options(p, title="vllm engine (--annotator vllm)")
    opts.add_vlm_options(p)
    opts.add_placement_options(p)
    opts.add_render_options(p)
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


def run(argv: list[str] | None = None, feeding: FeedingPolicy | None = None) -> dict:
    """Run the main job; return the run manifest (also written to ``OUT/_runs/<run_id>.json``). ``feeding``: the vLLM
    stage's feeding policy (``LabelScreenshots(feeding=...)``; None: its default)."""
    started = time.monotonic()
    pipeline, ctx = build_pipeline(argv, feeding)
    args = ctx.args
    recovered = recover(args.output)  # finish or discard what a killed run left, before the done index is read
    result = pipeline.run()
    result.wait_until_finish()

    manifest = build_manifest(
        result,
        run_id=ctx.run_id,
        dt=ctx.dt,
        input=args.input or "",
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


def build_pipeline(
    argv: list[str] | None = None, feeding: FeedingPolicy | None = None
) -> tuple[beam.Pipeline, RunContext]:
    """Parse ``screenmill run`` options and build the job's pipeline, without running it or touching the output."""
    parser = build_parser()
    args, beam_args = parser.parse_known_args(argv)
    if not (args.input or args.pages or args.urls):
        parser.error("give --input, --pages or --urls (or several)")
    _progress_to_stderr(not args.quiet)
    run_id = new_run_id()
    dt = args.dt or _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d")
    try:  # every config checks its values: a bad option ends here with the reason, not a traceback
        beam_args = resolve_runner(beam_args)
        runner = runner_name(beam_args)
        limits = opts.image_limits(args)
        tile_cfg = opts.tile_config(args, run_id)
        vllm = args.annotator == "vllm"
        label_cfg = opts.vlm_config(args, run_id, limits) if vllm else opts.ocr_config(args, run_id, limits)
        if vllm:  # the hash must see the recipe version the code registers, not just its name
            label_cfg = dataclasses.replace(label_cfg, recipe_version=label_cfg.get_recipe().version)
        render_cfg = opts.render_config(args, run_id, limits)
        rendering = [render_cfg.hash_view()] if render_cfg else []  # file-only runs keep their hash
        label_cfg = dataclasses.replace(label_cfg, config_hash=config_hash(label_cfg, tile_cfg, *rendering))
        run_hash = label_cfg.config_hash
        ingest_cfg = IngestConfig(pattern=args.input, run_id=run_id, limits=limits, config_hash=run_hash)
        render_cfg = render_cfg and dataclasses.replace(render_cfg, config_hash=run_hash)
    except (ValueError, KeyError) as e:
        raise SystemExit(f"screenmill run: {e.args[0] if e.args else e}") from None
    if args.annotator == "vllm":
        try:  # the model's own imports are checked here only where it runs in this environment
            label_cfg.preflight(check_imports=is_local_runner(runner))
        except (ImportError, FileNotFoundError, ValueError) as e:
            raise SystemExit(f"screenmill run: {e}") from None

    guard_cfg = opts.guard_config(args, run_id, limits)
    hints = opts.resource_hints(args)

    def table(name, schema, keys):
        return opts.write_config(args, name, schema, keys, dt=dt, run_id=run_id)

    options = PipelineOptions(beam_args)
    pipeline = beam.Pipeline(runner=None if runner else _default_runner(), options=options)
    done_index = pipeline | "DoneIndex" >> ReadDoneIndex(args.output)
    skip = done_index | "DoneHere" >> beam.Filter(lambda kv: kv[1] == run_hash) | "SkipKeys" >> beam.Keys()
    known = beam.pvalue.AsDict(done_index | "KnownKeys" >> beam.Map(lambda kv: (kv[0], True)))
    rendered = pipeline | "Render" >> RenderPages(render_cfg, done=skip) if render_cfg else None
    shots = pipeline | "Ingest" >> IngestScreenshots(ingest_cfg, done=skip, rendered=rendered and rendered.good)
    accepted, dead = (
        shots.good,
        {"ingest": shots.dead_letter, **({"render": rendered.dead_letter} if rendered else {})},
    )
    if guard_cfg is not None:
        guarded = accepted | "Guard" >> GuardBenchmarkLeakage(guard_cfg)
        accepted, dead["guard"] = guarded.good, guarded.dead_letter
    tiled = accepted | "Tile" >> TileScreenshots(tile_cfg)
    dead["tile"] = tiled.dead_letter
    outputs, failures = {}, None
    if args.annotator != "none":
        producer = label_cfg.producer()
        labels = tiled.good | producer.step >> LabelScreenshots(
            label_cfg, resource_hints=hints, duplicates=shots.aliases, feeding=feeding
        )
        outputs = {"grounding": labels.good, **({"actions": labels.actions} if producer.makes_actions else {})}
        dead[producer.stage], failures = labels.dead_letter, labels.failures
    if rendered:  # the DOM labels of the rendered screenshots that got this far
        dom = labels_of_kept(tiled.good, rendered.labels)
        outputs["grounding"] = (outputs["grounding"], dom) | "WithDomLabels" >> beam.Flatten() if outputs else dom
    if failures is None:
        failures = pipeline | "NoLabelStage" >> beam.Create([])
    marked = (tiled.good, failures) | "MarkDone" >> MarkDone(run_hash, run_id)
    held = beam.pvalue.AsDict(marked.held | "HeldIds" >> beam.Map(lambda i: (i, True)))
    new_shots = tiled.good | "NewOccurrences" >> beam.Filter(is_new, known=known, held=held)
    new_shots | "WriteScreenshots" >> WriteShards(
        table("screenshots", Screenshot.SCHEMA, ("screenshot_id", "episode_id", "step_index"))
    )
    keys = {"grounding": (GroundingLabel.SCHEMA, ("label_id",)), "actions": (ActionStep.SCHEMA, ActionStep.KEY)}
    for name, records in outputs.items():
        kept = records | f"NotHeld_{name}" >> beam.Filter(not_held, held=held)
        kept | f"Write_{name}" >> WriteShards(table(name, *keys[name]))
    done_rows = [marked.done, shots.done]
    if rendered:
        pages = rendered.pages | "PagesDone" >> beam.FlatMap(pages_done, held, run_hash, run_id)
        done_rows += [pages, rendered.done]
    done_rows = done_rows | "DoneRows" >> beam.Flatten()
    done_rows | "WriteDone" >> WriteShards(table("_done", Done.SCHEMA, Done.KEY))
    for stage, records in dead.items():
        records | f"WriteDeadLetter_{stage}" >> WriteShards(
            table(f"_dead_letter/{stage}", DeadLetter.SCHEMA, ("input_id", "reason"))
        )
    configs = {
        "ingest": ingest_cfg,
        "tile": tile_cfg,
        "annotate": label_cfg,
        **({"render": render_cfg} if render_cfg else {}),
    }
    return pipeline, RunContext(args, beam_args, run_id, dt, configs, label_cfg.config_hash)


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
