"""``screenmill replay OUT``: act out explored episodes' recorded actions in fresh sessions; compare frame hashes.

Every episode in ``OUT``'s ``screenshots`` table (or the ones ``--episode`` names: an ``episode_id`` or a prefix of
one) is replayed by :func:`screenmill.annotators.replay.replay_episode`: a desktop app's in a fresh desktop session
at the recorded display, command and (from ``--apps``, the file the run was given) environment; a page's in a fresh
browser at the recorded viewport and colour scheme, fenced to ``--root`` (the run's ``--pages`` folder; default the
page's own folder). One line per episode: its frames matching, or the steps whose frames differ; a JSON report under
``OUT/_replay/``. Exit 0 when every frame of every episode hashes the same, 1 when any differs or an episode cannot
be replayed, 2 on a bad command line (an ``--episode`` that names no episode, an output without episodes).
"""

from __future__ import annotations

import json
import os

from screenmill.pipelines import argcheck as check
from screenmill.schemas.tables import read_shards, report_path


def _apps(path: str | None) -> dict:
    """The ``--apps`` file's good lines by name (its bad lines are the run's dead letters, not replay's business)."""
    from screenmill.annotators.desktop.apps import parse_app_line

    out = {}
    if path:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    app = parse_app_line(line)
                except ValueError:
                    continue
                if app is not None:
                    out.setdefault(app.name, app)
    return out


@check.returns_code
def main(argv: list[str] | None = None) -> int:
    from screenmill.annotators import replay

    p = check.ArgumentParser(prog="screenmill replay", description=__doc__.splitlines()[0])
    p.add_argument("output", metavar="OUT", type=check.output_tree, help="a screenmill run's output root")
    p.add_argument("--episode", action="append", default=[], help="an episode_id (or a prefix); repeatable")
    p.add_argument("--apps", type=check.existing_file, default=None, help="the run's --apps file (app environments)")
    p.add_argument("--root", type=check.existing_dir, default=None, help="the run's --pages folder (the fence's root)")
    args = p.parse_args(argv)

    found = replay.episodes(read_shards(args.output, "screenshots").to_pylist())
    if not found:
        check.fail(p.prog, f"{args.output}: no explored episodes in its screenshots table (run --explore K)")
    chosen = dict(found)
    if args.episode:
        chosen = {}
        for want in args.episode:
            hits = [e for e in found if e.startswith(want)]
            if len(hits) != 1:
                why = "names no episode" if not hits else f"names {len(hits)} episodes"
                check.fail(p.prog, f"--episode {want}: {why} in {args.output}")
            chosen[hits[0]] = found[hits[0]]
    apps = _apps(args.apps)
    results = []
    for eid, frames in chosen.items():
        got = replay.replay_episode(frames, apps, args.root)
        results.append(got)
        head = f"episode {eid[:16]} {got.source}: "
        if got.error:
            print(head + f"not replayed: {got.error}")
        elif got.mismatched:
            steps = ", ".join(map(str, got.mismatched))
            print(head + f"frames differ at step(s) {steps} ({len(got.recorded) - len(got.mismatched)}/"
                  f"{len(got.recorded)} match)")  # fmt: skip
        else:
            print(head + f"{len(got.recorded)}/{len(got.recorded)} frames match")
        for note in got.notes:
            print(f"  note: {note}")
    report = report_path(args.output, "replay", "replay.json")
    os.makedirs(os.path.dirname(report), exist_ok=True)
    body = [
        {
            "episode_id": r.episode_id,
            "source": r.source,
            "recorded": r.recorded,
            "got": r.got,
            "error": r.error,
            "mismatched": r.mismatched,
            "notes": r.notes,
        }  # fmt: skip
        for r in results
    ]
    with open(report, "w", encoding="utf-8") as f:
        json.dump({"episodes": body, "ok": all(r.ok for r in results)}, f, indent=1)
    bad = sum(not r.ok for r in results)
    print(f"{len(results) - bad}/{len(results)} episodes replay to the same frames -> {report}")
    return 1 if bad else 0
