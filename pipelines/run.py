"""``screenmill run``: screenshots → tiles → grounding labels → Parquet shards + dead letters + a run manifest.

Usage: ``screenmill run --input PATTERN --output DIR [--annotator ocr|none] [any Beam pipeline option]``.
Unknown options go to Beam untouched (``--runner``, ``--direct_num_workers``, ``--temp_location`` …). Without
``--runner`` the job runs on Beam's in-process FnApiRunner (the DirectRunner's engine), which works offline;
``--runner=DaskRunner`` (or Beam's DaskRunner class path) runs it on a Dask cluster through
:class:`screenmill.stages.runners.dask.DaskRunner` (``--dask_client_address=tcp://host:8786``).

:func:`build_pipeline` builds the job's graph without running it (graph tests, Dataflow dry runs); :func:`run` builds,
runs and commits it.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import time

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
from screenmill.annotators.vllm.expand import FeedingPolicy
from screenmill.pipelines import argcheck
from screenmill.pipelines import options as opts
from screenmill.schemas.keys import new_run_id
from screenmill.schemas.tables import dead_letter_table, manifest_path
from screenmill.stages.base import show_progress
from screenmill.stages.done import MarkDone, ReadDoneIndex, is_new, not_held
from screenmill.stages.guard import GuardBenchmarkLeakage
from screenmill.stages.ingest import IngestScreenshots
from screenmill.stages.label import LabelScreenshots
from screenmill.stages.render import RenderPages, labels_of_kept, pages_done
from screenmill.stages.render_apps import RenderApps
from screenmill.stages.runners import default_runner, is_local_runner, resolve_runner, runner_name
from screenmill.stages.store.commit import commit_run, recover
from screenmill.stages.store.report import build_manifest, format_summary
from screenmill.stages.tile import TileScreenshots
from screenmill.stages.write import WriteShards


def build_parser() -> argparse.ArgumentParser:
    """``screenmill run``'s options (:func:`screenmill.pipelines.options.run_parser`)."""
    return opts.run_parser(prog="screenmill run", description=__doc__.splitlines()[0])


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
    if not (args.input or args.pages or args.urls or args.apps):
        parser.error("give --input, --pages, --urls or --apps (or several)")
    show_progress(not args.quiet)
    run_id = new_run_id()
    dt = args.dt or _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d")
    try:
        beam_args = resolve_runner(beam_args)
    except ValueError as e:
        argcheck.fail("screenmill run", e)
    runner = runner_name(beam_args)
    cfg = opts.run_configs(args, run_id, check_imports=is_local_runner(runner))
    run_hash = cfg.config_hash

    def table(name):
        return WriteShards(opts.write_config(args, name, dt=dt, run_id=run_id))

    options = PipelineOptions(beam_args)
    pipeline = beam.Pipeline(runner=None if runner else default_runner(), options=options)
    done_index = pipeline | "DoneIndex" >> ReadDoneIndex(args.output)
    skip = done_index | "DoneHere" >> beam.Filter(lambda kv: kv[1] == run_hash) | "SkipKeys" >> beam.Keys()
    known = beam.pvalue.AsDict(done_index | "KnownKeys" >> beam.Map(lambda kv: (kv[0], True)))
    rendered = pipeline | "Render" >> RenderPages(cfg.render, done=skip) if cfg.render else None
    apps = pipeline | "RenderApps" >> RenderApps(cfg.apps, done=skip) if cfg.apps else None
    made = [r.good for r in (rendered, apps) if r]  # screenshots the pipeline made itself (pages, apps)
    made = (made | "RenderedShots" >> beam.Flatten() if len(made) > 1 else made[0]) if made else None
    shots = pipeline | "Ingest" >> IngestScreenshots(cfg.ingest, done=skip, rendered=made)
    accepted, dead = (
        shots.good,
        {
            "ingest": shots.dead_letter,
            **({"render": rendered.dead_letter} if rendered else {}),
            **({"render_apps": apps.dead_letter} if apps else {}),
        },
    )
    if cfg.guard is not None:
        guarded = accepted | "Guard" >> GuardBenchmarkLeakage(cfg.guard)
        accepted, dead["guard"] = guarded.good, guarded.dead_letter
    tiled = accepted | "Tile" >> TileScreenshots(cfg.tile)
    dead["tile"] = tiled.dead_letter
    outputs, failures = {}, None
    if args.annotator != "none":
        producer = cfg.label.producer()
        labels = tiled.good | producer.step >> LabelScreenshots(
            cfg.label, resource_hints=cfg.hints, duplicates=shots.aliases, feeding=feeding, skipped=shots.skipped
        )
        outputs = {"grounding": labels.good, **({"actions": labels.actions} if producer.makes_actions else {})}
        dead[producer.stage], failures = labels.dead_letter, labels.failures
    if rendered:  # the DOM labels of the rendered screenshots that got this far (+ explored episodes' actions)
        _add(outputs, "grounding", labels_of_kept(tiled.good, rendered.labels), "WithDomLabels")
        if cfg.render.explore:
            _add(outputs, "actions", rendered.actions, "WithDomActions")
    if apps:  # the accessibility labels of the app screenshots that got this far
        _add(outputs, "grounding", labels_of_kept(tiled.good, apps.labels, "A11yLabels"), "WithA11yLabels")
        if cfg.apps.explore:
            _add(outputs, "actions", apps.actions, "WithA11yActions")
    if failures is None:
        failures = pipeline | "NoLabelStage" >> beam.Create([])
    marked = (tiled.good, failures) | "MarkDone" >> MarkDone(run_hash, run_id)
    held = beam.pvalue.AsDict(marked.held | "HeldIds" >> beam.Map(lambda i: (i, True)))
    new_shots = tiled.good | "NewOccurrences" >> beam.Filter(is_new, known=known, held=held)
    new_shots | "WriteScreenshots" >> table("screenshots")
    for name, records in outputs.items():
        kept = records | f"NotHeld_{name}" >> beam.Filter(not_held, held=held)
        kept | f"Write_{name}" >> table(name)
    done_rows = [marked.done, shots.done]
    if rendered:
        pages = rendered.pages | "PagesDone" >> beam.FlatMap(pages_done, held, run_hash, run_id)
        done_rows += [pages, rendered.done]
    if apps:
        done_rows.append(apps.pages | "AppsDone" >> beam.FlatMap(pages_done, held, run_hash, run_id))
    done_rows = done_rows | "DoneRows" >> beam.Flatten()
    done_rows | "WriteDone" >> table("_done")
    for stage, records in dead.items():
        records | f"WriteDeadLetter_{stage}" >> table(dead_letter_table(stage))
    return pipeline, RunContext(args, beam_args, run_id, dt, cfg.by_stage(), run_hash)


def _add(outputs: dict, name: str, records: beam.PCollection, label: str) -> None:
    outputs[name] = (outputs[name], records) | label >> beam.Flatten() if name in outputs else records
