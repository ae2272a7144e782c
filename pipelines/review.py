"""``screenmill review push|pull|status``: the human-review loop with Label Studio.

    export LABEL_STUDIO_URL=http://127.0.0.1:8089 LABEL_STUDIO_TOKEN_FILE=.label-studio-data/token
    screenmill review push OUT --project gui-review --files-root /data     # route doubtful labels, import tasks
    screenmill review pull OUT --project gui-review                        # completed reviews -> OUT/reviewed/

The URL and token come from the environment only (``LABEL_STUDIO_URL``, ``LABEL_STUDIO_API_KEY`` or
``LABEL_STUDIO_TOKEN_FILE``). Exit codes: 0 done, 1 Label Studio unreachable (a rerun resumes), 2 bad settings.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys

from apache_beam.io.filesystems import FileSystems
from screenmill.pipelines import argcheck as check
from screenmill.schemas.keys import new_run_id
from screenmill.schemas.tables import dead_letter_table, read_shards, table
from screenmill.stages.clients.labelstudio import Connection, LabelStudioClient, ReviewConfigError
from screenmill.stages.clients.retry import gave_up_behind
from screenmill.stages.review import (
    LABEL_CONFIG,
    ReviewConfig,
    ReviewPolicy,
    RouteToReview,
    agreement,
    agreement_lines,
    reviewed_from_completed,
    write_review_report,
)
from screenmill.stages.store.report import stage_counts


def build_parser() -> argparse.ArgumentParser:
    p = check.ArgumentParser(prog="screenmill review", description=__doc__.splitlines()[0])
    p.add_argument("action", choices=("push", "pull", "status"))
    p.add_argument("output", metavar="OUT", type=check.output_tree, help="a `screenmill run` output root")
    p.add_argument("--project", default="screenmill review", help="Label Studio project title")
    p.add_argument("--dt", type=check.date, default=None, help="only this date partition of the labels (default: all)")
    policy = ReviewPolicy()
    p.add_argument("--min-confidence", type=check.SHARE, default=policy.min_confidence)
    p.add_argument("--disagreement-iou", type=check.SHARE, default=policy.disagreement_iou)
    p.add_argument("--qa-rate", type=check.SHARE, default=policy.qa_rate)
    p.add_argument("--quota", type=check.NON_NEGATIVE, default=None, help="max routed labels per annotator + recipe")
    p.add_argument("--files-root", default="/", help="LOCAL_FILES_DOCUMENT_ROOT of the Label Studio server")
    p.add_argument("--chunk-size", type=check.POSITIVE, default=200, help="tasks per import request")
    return p


def _read(pipeline, output: str, name: str, dt: str | None, label: str):
    import apache_beam as beam

    pattern = table(name).glob(output, dt)
    if not FileSystems.match([pattern])[0].metadata_list:
        return pipeline | label >> beam.Create([])
    return pipeline | label >> beam.io.ReadFromParquet(pattern)


def _push(args, client: LabelStudioClient) -> int:
    import apache_beam as beam
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner
    from screenmill.stages.write import WriteConfig, WriteShards

    policy = ReviewPolicy(
        min_confidence=args.min_confidence,
        disagreement_iou=args.disagreement_iou,
        qa_rate=args.qa_rate,
        quota_per_source=args.quota,
    )
    run_id = new_run_id()
    cfg = ReviewConfig(run_id, args.project, policy, args.files_root, args.chunk_size)
    dt = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d")
    pipeline = beam.Pipeline(runner=FnApiRunner())
    labels = _read(pipeline, args.output, "grounding", args.dt, "ReadLabels")
    shots = _read(pipeline, args.output, "screenshots", args.dt, "ReadScreenshots")
    routed = {"labels": labels, "screenshots": shots} | "RouteToReview" >> RouteToReview(cfg)
    dead_cfg = WriteConfig.of(args.output, dead_letter_table("review"), dt)
    _ = routed.dead_letter | "WriteDeadLetters" >> WriteShards(dead_cfg)
    result = pipeline.run()
    result.wait_until_finish()
    counts = stage_counts(result).get("review", {})
    counts["project_id"] = client.ensure_project(args.project, LABEL_CONFIG)
    print(" ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    print(f"report: {write_review_report(args.output, 'push', {'run_id': run_id, **counts})}")
    return 0


def _pull(args, client: LabelStudioClient) -> int:
    import apache_beam as beam
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner
    from screenmill.stages.write import WriteConfig, WriteShards

    run_id = new_run_id()
    project = client.ensure_project(args.project, LABEL_CONFIG)
    reviewed, dead = reviewed_from_completed(client.completed(project), project, run_id)
    labels = read_shards(args.output, "grounding").to_pylist()
    figures = agreement(reviewed, labels)
    dt = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d")

    pipeline = beam.Pipeline(runner=FnApiRunner())
    _ = (
        pipeline
        | "Reviewed" >> beam.Create(reviewed, reshuffle=False)
        | "WriteReviewed" >> WriteShards(WriteConfig.of(args.output, "reviewed", dt))
    )
    _ = (
        pipeline
        | "Dead" >> beam.Create(dead, reshuffle=False)
        | "WriteDead" >> WriteShards(WriteConfig.of(args.output, dead_letter_table("review_pull"), dt))
    )
    pipeline.run().wait_until_finish()
    print(f"reviewed={len(reviewed)} bad_annotations={len(dead)} project_id={project}")
    for line in agreement_lines(figures):
        print(line)
    print(f"report: {write_review_report(args.output, 'agreement', {'run_id': run_id, 'figures': figures})}")
    return 0


def _status(args, client: LabelStudioClient) -> int:
    project = client.ensure_project(args.project, LABEL_CONFIG)
    print(f"project_id={project} " + " ".join(f"{k}={v}" for k, v in client.progress(project).items()))
    return 0


@check.returns_code
def main(argv: list[str] | None = None) -> int:
    """Run one review action; return the exit code."""
    args = build_parser().parse_args(argv)
    try:
        client = LabelStudioClient(Connection.from_env())
        return {"push": _push, "pull": _pull, "status": _status}[args.action](args, client)
    except ReviewConfigError as e:
        print(f"screenmill review: {e}", file=sys.stderr)
        return 2
    except Exception as e:
        gave_up = gave_up_behind(e)
        if gave_up is None:
            raise
        msg = f"screenmill review: Label Studio is unreachable ({gave_up}); nothing is lost, rerun to resume"
        print(msg, file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
