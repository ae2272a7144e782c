"""Every command answers a bad command line before any work: one line on stderr naming the argument, exit code 2,
nothing created, no traceback (issue 48 part 3). The commands run for real, in-process through
``screenmill.pipelines.cli.main``; one runs as a subprocess to see what a user sees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from screenmill.pipelines import argcheck
from screenmill.pipelines.cli import _COMMANDS, main

#: (command line, with {T} for the work folder; the argument the one line must name). Each is one class of bad input.
BAD = [
    # run: inputs
    ("run --input {T}/missing --output {T}/out", "--input: no such folder or file"),
    ("run --input {T}/missing --pages {T}/site --output {T}/out", "--input: no such folder or file"),
    ("run --input {T}/in/*.nope --output {T}/out", "--input: nothing matches"),
    ("run --output {T}/out", "give --input, --pages, --urls or --apps"),
    ("run --apps {T}/missing.txt --output {T}/out", "--apps: no such file"),
    ("run --pages {T}/empty --output {T}/out", "--pages: no .html / .htm pages"),
    ("run --pages {T}/missing --output {T}/out", "--pages: no such folder"),
    ("run --urls {T}/missing.txt --output {T}/out", "--urls: no such file"),
    ("run --urls {T}/bad-urls.txt --output {T}/out", "--urls: no file:// or http(s):// URL"),
    ("run --input {T}/in --output {T}/out --instructions {T}/missing.jsonl", "--instructions: no such file"),
    ("run --input {T}/in --output {T}/out --benchmark-images {T}/missing", "--benchmark-images: no such file"),
    # run: outputs
    ("run --input {T}/in --output {T}/afile", "--output: is a file, not a folder"),
    ("run --input {T}/in --output {T}/afile/sub", "--output: {T}/afile is a file"),
    # run: formats, enums, numbers, dates
    ("run --input {T}/in --output {T}/out --viewports 12x", "--viewports: viewport '12x' is not WIDTHxHEIGHT"),
    ("run --input {T}/in --output {T}/out --viewports ,", "--viewports: no viewport given"),
    ("run --input {T}/in --output {T}/out --displays 390x844@3m", "--displays: display '390x844@3m': mobile"),
    ("run --input {T}/in --output {T}/out --window-manager twm", "--window-manager: must be among jwm, none"),
    ("run --input {T}/in --output {T}/out --app-step-timeout 0", "--app-step-timeout: must be"),
    ("run --input {T}/in --output {T}/out --color-schemes sepia", "--color-schemes: must be among light, dark"),
    ("run --input {T}/in --output {T}/out --annotator gpt", "--annotator: invalid choice"),
    ("run --input {T}/in --output {T}/out --codec lz4", "--codec: invalid choice"),
    ("run --input {T}/in --output {T}/out --annotator vllm --recipe nope", "--recipe: unknown recipe 'nope'"),
    ("run --input {T}/in --output {T}/out --explore -1", "--explore: must be in 0..100, got -1"),
    ("run --input {T}/in --output {T}/out --pages {T}/site --dom-recipes text,colour", "--dom-recipes: must be among"),
    ("run --input {T}/in --output {T}/out --a11y-recipes text,row", "--a11y-recipes: must be among text, relational"),
    ("run --input {T}/in --output {T}/out --a11y-recipes ,", "--a11y-recipes: must be among"),
    ("run --input {T}/in --output {T}/out --screens 0", "--screens: must be in 1..100, got 0"),
    ("run --input {T}/in --output {T}/out --num-shards 0", "--num-shards: must be >= 1, got 0"),
    ("run --input {T}/in --output {T}/out --render-timeout 0", "--render-timeout: must be > 0"),
    ("run --input {T}/in --output {T}/out --max-side many", "--max-side: not an integer"),
    ("run --input {T}/in --output {T}/out --dt 2024-02-30", "--dt: not a date YYYY-MM-DD"),
    ("run --input {T}/in --output {T}/out --dt yesterday", "--dt: not a date YYYY-MM-DD"),
    ("run --input {T}/in --output {T}/out --pages {T}/site --explore 2 --screens 2", "does not go with --screens"),
    ("run --input {T}/in --output {T}/out --runner", "--runner needs a value"),
    # replay
    ("replay {T}/missing", "OUT: no such folder"),
    ("replay {T}/notree", "OUT: not a screenmill output tree"),
    ("replay {T}/tree", "no explored episodes in its screenshots table"),
    ("replay {T}/tree --apps {T}/missing.txt", "--apps: no such file"),
    ("replay {T}/tree --root {T}/afile", "--root: not a folder"),
    # inspect
    ("inspect {T}/missing", "PATH: no such file or folder"),
    ("inspect {T}/notree", "PATH: not in a screenmill output tree"),
    ("inspect {T}/tree --out {T}/afile", "--out: is a file, not a folder"),
    ("inspect {T}/tree --limit 0", "--limit: must be >= 1"),
    # eval
    ("eval {T}/tree --truth {T}/missing.jsonl", "--truth: no such file"),
    ("eval {T}/tree --truth {T}/not-truth.jsonl", "--truth: {T}/not-truth.jsonl:1: 'img_filename' must be"),
    ("eval {T}/tree --truth {T}/empty", "--truth: not a file"),
    ("eval {T}/notree --truth-from-dom", "OUT: not a screenmill output tree"),
    ("eval {T}/missing --truth-from-dom", "OUT: no such folder"),
    ("eval {T}/tree", "one of the arguments --truth --truth-from-dom --truth-from-a11y is required"),
    ("eval {T}/notree --truth-from-a11y", "OUT: not a screenmill output tree"),
    (
        "eval {T}/tree --truth-from-dom --truth-from-a11y",
        "--truth-from-a11y: not allowed with argument --truth-from-dom",
    ),
    ("eval {T}/tree --truth-from-a11y --min-point-accuracy -1", "--min-point-accuracy: must be >= 0"),
    ("eval {T}/tree --truth-from-dom --min-recall -1", "--min-recall: must be >= 0"),
    ("eval {T}/tree --truth-from-dom --min-ratio 1.5", "--min-ratio: must be in 0..1"),
    ("eval {T}/tree --truth-from-dom --split-manifest {T}/missing.jsonl", "--split-manifest: no such file"),
    ("eval {T}/tree --truth-from-dom --icons maybe", "--icons: invalid choice"),
    # review
    ("review push {T}/notree", "OUT: not a screenmill output tree"),
    ("review pull {T}/missing", "OUT: no such folder"),
    ("review status {T}/afile", "OUT: not a folder"),
    ("review publish {T}/tree", "action: invalid choice"),
    ("review push {T}/tree --qa-rate 2", "--qa-rate: must be in 0..1"),
    ("review push {T}/tree --dt 1.1.2024", "--dt: not a date"),
    # export
    ("export {T}/missing --local-dir {T}/D", "OUT: no such folder"),
    ("export {T}/notree --local-dir {T}/D", "OUT: not a screenmill output tree"),
    ("export {T}/tree --local-dir {T}/afile", "--local-dir: is a file, not a folder"),
    ("export {T}/tree --local-dir {T}/D --test-fraction 2", "--test-fraction: must be in 0..1"),
    ("export {T}/tree --local-dir {T}/D --dt 2024-1-1", "--dt: not a date"),
    ("export {T}/tree --local-dir {T}/D --format trl", "--target: --format needs --target"),
    ("export {T}/tree --local-dir {T}/D --format trl --target qwen9", "--target: invalid choice"),
    (
        "export {T}/tree --local-dir {T}/D --format swift --target holo2 --task navigation --per image",
        "--per: --per image",
    ),
    (
        "export {T}/tree --local-dir {T}/D --format trl --target holo2 --min-confidence 2",
        "--min-confidence: must be in 0..1",
    ),
    # convert
    ("convert {T}/notree --to screenspot --dest {T}/D", "OUT: not a screenmill output tree"),
    ("convert {T}/tree --to coco --dest {T}/D", "--to: invalid choice"),
    ("convert {T}/tree --to screenspot --dest {T}/afile", "--dest: is a file, not a folder"),
    ("convert {T}/tree --to screenspot --dest {T}/D --split ../x", "--split: '../x' must be a plain file-name part"),
    # leakage-hashes
    ("leakage-hashes {T}/missing --out {T}/h.txt", "IMAGES_DIR: no such folder"),
    ("leakage-hashes {T}/afile --out {T}/h.txt", "IMAGES_DIR: not a folder"),
    ("leakage-hashes {T}/in --out {T}/empty", "--out: is a folder, not a file"),
    # selftest
    ("selftest --workdir {T}/afile", "--workdir: is a file, not a folder"),
    ("selftest --json {T}/missing/report.json", "--json: no such folder"),
    ("selftest --kill-annotator vllm", "--kill-annotator: invalid choice"),
    # size
    ("size --config {T}/missing", "--config: no such file or folder"),
    ("size --config holotron-12b --gpu a100", "--gpu: invalid choice"),
    ("size --config holotron-12b --recipe nope", "--recipe: unknown recipe"),
    ("size --config holotron-12b --images-per-request 9", "--images-per-request: must be in 1..4"),
    ("size --config holotron-12b --dump-config {T}/empty", "--dump-config: is a folder, not a file"),
    # bench
    ("bench", "the following arguments are required: what"),
    ("bench gpu", "what: invalid choice"),
    ("bench cpu --n 0", "--n: must be >= 1"),
    ("bench cpu --samples {T}/missing", "--samples: no such folder"),
    ("bench cpu --json {T}/missing/b.json", "--json: no such folder"),
    ("bench render --n -3", "--n: must be >= 1"),
    ("bench render --pages {T}/empty", "--pages: no .html / .htm pages"),
    ("bench explore --steps 0", "--steps: must be in 1..100"),
    ("bench explore --seeds a,b", "--seeds: not comma-separated integers"),
    ("bench vllm --modes pipeline,warp", "--modes: must be among"),
    ("bench render --viewports 12x", "--viewports: viewport '12x' is not WIDTHxHEIGHT"),  # an option for run
    ("bench explore --dt today", "--dt: not a date"),
    ("bench cpu --annotator gpt", "--annotator: invalid choice"),
    ("bench desktop --n 0", "--n: must be >= 1"),
    ("bench desktop --factor 1", "--factor: must be in 2..100"),
    ("bench desktop --apps {T}/missing.txt", "--apps: no such file"),
    ("bench desktop --displays 12x", "--displays: "),  # an option for run
    ("frobnicate {T}/tree", "unknown command 'frobnicate'"),
]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A folder with what the bad command lines name: inputs, a file, an empty folder, a folder that is no output
    tree, an (empty) output tree, a page site, a URL list with no URL, a JSONL that is not truth."""
    (tmp_path / "in").mkdir()
    (tmp_path / "empty").mkdir()
    (tmp_path / "afile").write_text("not a folder\n")
    (tmp_path / "notree").mkdir()
    (tmp_path / "notree" / "notes.txt").write_text("hello\n")
    (tmp_path / "tree" / "_runs").mkdir(parents=True)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "a.html").write_text("<!doctype html><button>OK</button>\n")
    (tmp_path / "bad-urls.txt").write_text("# pages\nftp://example.org/a.html\nexample.org\n")
    (tmp_path / "not-truth.jsonl").write_text(json.dumps({"image": "a.png", "text": "OK", "box": [0, 0, 1, 1]}) + "\n")
    return tmp_path


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _prog(argv: list[str]) -> str:
    """The name a command's one line starts with: ``screenmill run``, ``screenmill bench render`` …"""
    if argv[0] not in _COMMANDS:
        return "screenmill"
    sub = argv[1:2] if argv[0] == "bench" and argv[1:2] in (["vllm"], ["render"], ["explore"], ["desktop"]) else []
    return " ".join(["screenmill", argv[0], *sub])


@pytest.mark.parametrize(("line", "says"), BAD, ids=[line.split(" {T}")[0] + f" [{says[:28]}]" for line, says in BAD])
def test_a_bad_command_line_is_one_line_exit_2_and_creates_nothing(work, capsys, monkeypatch, line, says):
    monkeypatch.chdir(work)  # a command that wrongly wrote into the working folder would show in the listing
    argv = [part.replace("{T}", str(work)) for part in line.split(" ")]
    before = _tree(work)
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith(f"{_prog(argv)}: "), err
    assert says.replace("{T}", str(work)) in err, err
    assert "Traceback" not in err and out == ""
    assert _tree(work) == before


def test_remote_outputs_and_inputs_are_not_looked_for_on_the_local_disk():
    for check in (argcheck.input_pattern, argcheck.output_dir, argcheck.output_tree, argcheck.existing_file):
        assert check("gs://bucket/none/*.png") == "gs://bucket/none/*.png"
        assert check("s3://bucket/out") == "s3://bucket/out"


def test_what_is_good_still_parses(work):
    """The checks refuse only what is bad: an absent output (the job makes it), an existing output tree (an
    incremental re-run), a glob that matches, 0 where 0 means off."""
    from screenmill.pipelines.run import build_parser

    args, _ = build_parser().parse_known_args(
        ["--input", str(work / "site" / "*.html"), "--output", str(work / "new" / "out"), "--explore", "0"]
        + ["--pages", str(work / "site"), "--viewports", "1280x800,390x844@3m", "--dt", "2024-02-29"]
    )
    assert (args.explore, args.dt, args.viewports) == (0, "2024-02-29", "1280x800,390x844@3m")
    assert argcheck.output_dir(str(work / "tree")) == str(work / "tree")
    assert not (work / "new").exists()


def test_a_user_sees_one_line_and_exit_2_from_the_real_command(work):
    """The process a user starts (``convert``: its module imports light, so this stays quick)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    argv = ["convert", str(work / "notree"), "--to", "screenspot", "--dest", str(work / "D")]
    before = _tree(work)
    proc = subprocess.run(
        [sys.executable, "-m", "screenmill.pipelines.cli", *argv], capture_output=True, text=True, env=env, cwd=work
    )
    assert proc.returncode == 2
    reason = "not a screenmill output tree (no _runs/ nor table folder)"
    assert proc.stderr == f"screenmill convert: OUT: {reason}: {work / 'notree'}\n"
    assert proc.stdout == "" and _tree(work) == before


def test_the_light_commands_answer_before_importing_beam(work):
    """eval, inspect, export, convert, leakage-hashes and selftest check their command line before Beam is imported
    (docs/commands.md); one fresh process runs them all."""
    lines = [
        ["eval", str(work / "notree"), "--truth-from-dom"],
        ["inspect", str(work / "missing")],
        ["export", str(work / "missing"), "--local-dir", str(work / "D")],
        ["convert", str(work / "tree"), "--to", "coco", "--dest", str(work / "D")],
        ["leakage-hashes", str(work / "afile"), "--out", str(work / "h.txt")],
        ["selftest", "--workdir", str(work / "afile")],
    ]
    code = (
        "import json, sys\nfrom screenmill.pipelines.cli import main\n"
        f"codes = [main(argv) for argv in {lines!r}]\n"
        "print(json.dumps([codes, 'apache_beam' in sys.modules]))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    before = _tree(work)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=work)
    assert json.loads(proc.stdout) == [[2] * len(lines), False], proc.stderr
    assert len(proc.stderr.splitlines()) == len(lines) and "Traceback" not in proc.stderr
    assert _tree(work) == before
