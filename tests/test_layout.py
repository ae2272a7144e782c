"""The installed layout: one distribution namespace (``screenmill.*``) and nothing else at the top of site-packages."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOPS = ("pipelines", "stages", "schemas", "annotators")


def _source_files():
    for top in (*TOPS, "tests", "infra"):
        yield from sorted((ROOT / top).rglob("*.py"))


def test_every_package_folder_is_listed_in_pyproject_under_the_namespace():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"] == {f"screenmill.{t}": t for t in TOPS}
    found = {
        "screenmill." + ".".join(init.parent.relative_to(ROOT).parts)
        for top in TOPS
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert set(config["packages"]) == found


def test_no_module_imports_a_bare_top_level_name():
    bare = []
    for path in _source_files():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            bare += [f"{path.relative_to(ROOT)}:{node.lineno} {n}" for n in names if n.split(".")[0] in TOPS]
    assert bare == []


@pytest.mark.slow  # pip builds the wheel and installs it into a fresh target folder
def test_the_wheel_installs_only_the_screenmill_namespace(tmp_path):
    """``pip install .`` puts only ``screenmill/`` (and its dist-info) at the top of site-packages."""
    src = tmp_path / "src"  # a copy: building in the checkout would leave a build/ folder there
    for top in TOPS:
        shutil.copytree(ROOT / top, src / top, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(src),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = tmp_path.glob("screenmill-*.whl")
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"screenmill"}
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"screenmill/{t}/__init__.py" for t in TOPS} <= names
    assert "screenmill/pipelines/cli.py" in names
