"""The dead-letter reason codes: every stable ``reason`` a stage writes, the stage(s) that write it, what it means.

This module is data, and the source of ``docs/reason-codes.md``::

    python -m screenmill.schemas.reasons > docs/reason-codes.md

``tests/schemas/test_reasons.py`` checks that the committed page is this module's output, and that every reason
code the code passes as a dead-letter reason (an AST scan of ``pipelines/ stages/ schemas/ annotators/``) is listed
here. A reason code is a stable string: the ``reason`` column of ``_dead_letter/<stage>`` rows, the stage's
``dropped_<reason>`` counter, and the key of the run manifest's dead letters by reason. Adding a code means adding
it here (and regenerating the page); renaming one is a change of the output format.
"""

from __future__ import annotations

import dataclasses
import sys


@dataclasses.dataclass(frozen=True, slots=True)
class Reason:
    """One dead-letter reason code.

    Attributes:
        code: the stable string written in the ``reason`` column.
        stages: the stages that write it (the ``stage`` column; ``export/<config>`` for the Hub export).
        meaning: one line for a person reading the dead letters.
    """

    code: str
    stages: tuple[str, ...]
    meaning: str


def _r(code: str, stages: str, meaning: str) -> Reason:
    return Reason(code, tuple(stages.split()), meaning)


#: Every reason code, grouped by the stage that writes it first, in the order a screenshot meets the stages.
REASONS: tuple[Reason, ...] = (
    # ingest: the files and episode manifests of --input
    _r("empty_file", "ingest", "zero bytes"),
    _r("not_an_image", "ingest", "no image format recognises the bytes (e.g. a text file named `.png`)"),
    _r(
        "unsupported_format",
        "ingest",
        "an image, but not PNG/JPEG/WebP (GIF included; animated WebP/APNG are accepted, first frame)",
    ),
    _r("truncated", "ingest", "the file ends before the image data does"),
    _r(
        "corrupt_image",
        "ingest",
        "the image data does not decode, or a PNG/JPEG/WebP signature with an unreadable header",
    ),
    _r(
        "decompression_bomb",
        "ingest",
        "width × height over `--max-pixels` (checked from the header, before decoding), or a JPEG with more than "
        "32 scans (decode time bomb)",
    ),
    _r("too_small", "ingest", "a side under `--min-side`"),
    _r("too_large", "ingest", "a side over `--max-side`, or a file over the byte limit"),
    _r("extreme_aspect_ratio", "ingest", "aspect ratio over 32:1"),
    _r(
        "unreadable",
        "ingest render guard annotate infer",
        "the file cannot be read: permissions, a FIFO / device / directory named like an image, a name that is not "
        "valid UTF-8, a dangling symlink (render: the page file or URL cannot be read for its content hash); "
        "retried by the next run in the label stage",
    ),
    _r(
        "bad_episode_manifest",
        "ingest",
        "`episode.json` or a `steps.jsonl` line does not parse, a step index that is not an int32 or repeats one "
        "(first wins), lone surrogates (the folder's images are still ingested)",
    ),
    _r(
        "path_outside_root",
        "ingest",
        "an episode step names a file outside its episode folder, or a symlink leads out of the input root "
        "(never followed)",
    ),
    _r("missing_file", "ingest", "an episode step names a file that does not exist"),
    _r(
        "duplicate",
        "ingest",
        "same bytes as another input (the one with the smallest URI is kept; of identical renders, the first page "
        "setting)",
    ),
    # render: --pages / --urls
    _r(
        "render_timeout",
        "render",
        "the page did not load, settle and screenshot within `--render-timeout` (a page looping in JS), or the "
        "browser stopped answering; retried by the next run",
    ),
    _r(
        "render_failed",
        "render",
        "navigation failed, the renderer crashed, or the page failed under a read; retried by the next run",
    ),
    _r(
        "explore_timeout",
        "render",
        "an exploration step over `--explore-step-timeout`, or the episode over `--render-timeout` + K × that; "
        "retried by the next run",
    ),
    _r("page_too_large", "render", "more DOM elements than `--max-dom-nodes`"),
    _r("blank_page", "render", "the first screen is a single colour: nothing visible"),
    _r(
        "page_redirects",
        "render",
        "the page went on to another while rendered (a meta refresh, a script's redirect): render that page instead",
    ),
    _r("bad_url", "render", "a `--urls` line that is not a `file://` or `http(s)://` URL"),
    # render_apps: --apps
    _r("bad_app_line", "render_apps", "an `--apps` line that does not parse (JSON, a command line, a display spec)"),
    _r(
        "app_start_failed",
        "render_apps",
        "the app's command could not be started (not found, not executable), it exited cleanly before showing a "
        "window, or the desktop session did not come up",
    ),
    _r(
        "app_timeout",
        "render_apps",
        "the app was not on the accessibility bus within `--app-start-timeout`, or a step (tree read, settle) over "
        "`--app-step-timeout`: a hung app; retried by the next run",
    ),
    _r("app_crashed", "render_apps", "the app died (a signal or a non-zero exit) while starting or being labelled"),
    _r("app_window_storm", "render_apps", "the app mapped more top-level windows than `--app-max-windows`"),
    # guard: --benchmark-images
    _r(
        "benchmark_leak",
        "guard",
        "the screenshot's perceptual hash is within `--benchmark-max-distance` of a benchmark image "
        "(`--benchmark-images`)",
    ),
    _r(
        "benchmark_leak_flagged",
        "guard",
        "the same match under `--benchmark-mode flag`: the screenshot is kept, the flag recorded",
    ),
    # tile
    _r("tiling_failed", "tile", "no tiling plan for the image"),
    # the label stage: annotate (OCR), infer (vLLM)
    _r(
        "changed_during_run",
        "guard annotate infer",
        "the file's bytes changed after ingest (its size or sha256 is no longer its id); retried by the next run",
    ),
    _r("annotator_failure", "annotate", "the annotator raised on this image; retried by the next run"),
    _r(
        "engine_failure",
        "infer",
        "vLLM refused or dropped the request (e.g. prompt longer than `--max-model-len`); retried by the next run",
    ),
    _r("model_output_not_json", "infer", "the answer does not parse as JSON (`payload_ref` = raw text)"),
    _r("model_output_schema", "infer", "the answer does not match the recipe's schema (`payload_ref` = raw text)"),
    _r("coords_out_of_bounds", "infer", "the answer points outside the image"),
    _r(
        "element_outside_image",
        "infer",
        "a `describe-element` line's box is not inside the screenshot it names (`--instructions` lines "
        "`{image, box}`, pixels)",
    ),
    _r(
        "instruction_without_image",
        "infer",
        "an `--instructions` line names no input screenshot (a file ingest set aside as a `duplicate` still names "
        "the copy it kept)",
    ),
    _r(
        "duplicate_instruction",
        "infer",
        "an `--instructions` line repeats another (the same screenshot, by file name or content id, and "
        "instruction): labelled once",
    ),
    _r("episode_without_task", "infer", "`navigate-step` on an episode with no task"),
    _r(
        "bad_recorded_action",
        "infer",
        "`explain-step` on a step whose recorded action has an unknown shape (`synthesize-task`: the episode is not "
        "labelled)",
    ),
    # review
    _r(
        "unservable_image",
        "review",
        "a routed label whose screenshot Label Studio cannot reach (outside `--files-root`)",
    ),
    _r(
        "bad_annotation",
        "review_pull",
        "a Label Studio annotation that cannot become a reviewed row (unknown verdict, not our task)",
    ),
    # export (screenmill export): stage export/<config>
    _r("bad_manifest", "export/<config>", "a run manifest in `_runs/` that does not parse (config `runs`)"),
    _r(
        "missing_image",
        "export/<config> export/training convert",
        "no file of the screenshot can be read any more",
    ),
    _r(
        "changed_since_run",
        "export/<config> export/training",
        "the screenshot's file was read but its size or sha256 is no longer its id",
    ),
    _r(
        "held_back",
        "export/<config>",
        "a row that depends on a screenshot or label not exported (its labels, reviews, its episode's steps and "
        "actions); exported once the image is back",
    ),
    _r("missing_label", "export/<config>", "a reviewed row whose label is in no grounding table"),
    _r(
        "missing_screenshot",
        "export/<config> convert",
        "a row whose screenshot is in no screenshots table",
    ),
    # export --format (screenmill export --format trl|llamafactory|swift): stage export/training, checks before writing
    _r("box_outside_image", "export/training", "the label's box (or an action's point) leaves its image"),
    _r("one_colour_box", "export/training", "the label's box lies over a region of one colour (nothing to point at)"),
    _r(
        "rounding_leaves_box",
        "export/training",
        "after the target's rounding the point, converted back, leaves the box (or the box's IoU falls below the "
        "threshold)",
    ),
    _r(
        "split_leak",
        "export/training",
        "a perceptual-hash twin of the image is already exported in both splits: no split keeps the group whole",
    ),
    _r("action_not_in_grammar", "export/training", "the target's navigation grammar has no such action"),
    _r("bad_image", "export/training convert", "the screenshot's file does not decode"),
    # convert (screenmill convert): its _dead_letter.jsonl
    _r("image_changed", "convert", "the screenshot's file size or bytes are other than the run recorded"),
    _r(
        "frame_mismatch",
        "convert",
        "the label or the decoded frame is for another image size than the screenshot row says",
    ),
    _r("empty_box", "convert", "the label's box has no area inside the image"),
)

BY_CODE: dict[str, Reason] = {r.code: r for r in REASONS}


def render_markdown() -> str:
    """The page ``docs/reason-codes.md``: a table of every reason code, its stages and its meaning.

    Returns:
        Markdown text ending in a newline; the same text for the same :data:`REASONS`.
    """
    lines = [
        "# Dead-letter reason codes",
        "",
        "<!-- Generated: python -m screenmill.schemas.reasons > docs/reason-codes.md (edit schemas/reasons.py). -->",
        "",
        "Every rejected input is a row of `OUT/_dead_letter/<stage>/` (`input_id`, `stage`, `reason`, `error`,",
        "`payload_ref`), counted as `dropped_<reason>` in its stage and listed by reason in the run manifest",
        "(`_runs/<run_id>.json`). `screenmill export` reports its own under stage `export/<config>` (in",
        "`OUT/_export/`), `screenmill convert` in the destination's `_dead_letter.jsonl`. Reason codes are stable",
        "strings; the registry is [`schemas/reasons.py`](../schemas/reasons.py) (`screenmill.schemas.reasons`).",
        "",
        "| reason | stage(s) | meaning |",
        "|---|---|---|",
    ]
    for r in REASONS:
        stages = ", ".join(f"`{s}`" for s in r.stages)
        lines.append(f"| `{r.code}` | {stages} | {r.meaning} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    """Write :func:`render_markdown` to stdout; returns the exit status (0)."""
    sys.stdout.write(render_markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
