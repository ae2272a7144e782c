"""The ``screenmill`` command: ``run`` and its companions (``screenmill --help`` lists them)."""

from __future__ import annotations

import sys

_COMMANDS = {
    "run": ("screenmill.pipelines.run", "run", "run the main job: screenshots -> labels -> Parquet"),
    "inspect": ("screenmill.pipelines.inspect", "main", "draw labels over their screenshots (PNG + HTML gallery)"),
    "replay": (
        "screenmill.pipelines.replay",
        "main",
        "act out explored episodes' recorded actions in fresh sessions; compare frame hashes",
    ),
    "eval": ("screenmill.pipelines.evaluate", "main", "score labels against ground truth (point accuracy, recall)"),
    "review": ("screenmill.pipelines.review", "main", "human review with Label Studio: push | pull | status"),
    "bench": (
        "screenmill.pipelines.bench",
        "main",
        "benchmarks: `bench cpu` (ingest+tile+write), `bench render` (pages), `bench explore` (episodes), "
        "`bench desktop` (apps), `bench vllm`",
    ),
    "export": ("screenmill.pipelines.export", "main", "export the dataset to the Hugging Face Hub (or --local-dir)"),
    "leakage-hashes": (
        "screenmill.pipelines.leakage",
        "main",
        "perceptual hashes of benchmark images for run --benchmark-images",
    ),
    "convert": ("screenmill.pipelines.convert", "main", "write labels in ScreenSpot / OSWorld-G benchmark formats"),
    "selftest": ("screenmill.pipelines.selftest", "main", "run the adversarial suite, print the reliability report"),
    "size": ("screenmill.pipelines.size", "main", "GPU memory sizing for a model config: max_num_seqs, token budget"),
}


def _usage() -> str:
    lines = ["usage: screenmill COMMAND [options]", "", "commands:"]
    width = max(len(name) for name in _COMMANDS)
    lines += [f"  {name:<{width}}  {help_}" for name, (_, _, help_) in _COMMANDS.items()]
    lines += ["", "`screenmill COMMAND --help` for a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0
    if argv[0] not in _COMMANDS:
        print(f"screenmill: unknown command {argv[0]!r} (`screenmill --help` lists the commands)", file=sys.stderr)
        return 2
    module_name, func_name, _ = _COMMANDS[argv[0]]
    import importlib

    from screenmill.pipelines.argcheck import UsageError

    try:
        result = getattr(importlib.import_module(module_name), func_name)(argv[1:])
    except UsageError as e:  # a bad command line: its one line is on stderr already
        return e.code
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main())
