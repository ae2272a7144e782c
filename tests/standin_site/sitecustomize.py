"""TEST-ONLY: the torchvision stand-in of ``tests/tiny_holotron.py`` in every Python process started with this folder
(and the repository root) on ``PYTHONPATH`` and ``SCREENMILL_TORCHVISION_STANDIN=1``.

The in-process stand-in cannot reach the engine-core and worker processes vLLM spawns in its default mode (the one
GPU hosts run), nor the worker processes of Ray Data LLM (the bench's mode e); Python imports ``sitecustomize`` at the
start of every interpreter, those children included. Nothing happens without the variable. Never on a product path.

The stand-in goes in lazily, when a process first imports ``vllm.transformers_utils`` (the package whose
``processors.internvl`` imports ``torchvision.transforms``) or screenmill's ``screenmill.annotators.vllm`` (whose
preflight probes for ``torchvision.transforms`` before vLLM loads): a process that never loads vLLM (Ray's dashboard
agent, log monitor, the workers of its pre- and post-processing stages) starts as fast as without it. Installing it
eagerly imported torch and transformers at the start of every Ray service process, and the raylet gave up waiting for
its agent ("The current node timed out during startup").
"""

import importlib.abc
import os
import sys

_TRIGGERS = frozenset({"vllm.transformers_utils", "screenmill.annotators.vllm"})


class _InstallStandinBeforeVllmUtils(importlib.abc.MetaPathFinder):
    """Installs the stand-in modules the first time one of :data:`_TRIGGERS` is looked up, then steps aside."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in _TRIGGERS:
            return None
        sys.meta_path.remove(self)
        from tests.tiny_holotron import install_torchvision_modules

        install_torchvision_modules()
        return None  # the ordinary finders load the package


if os.environ.get("SCREENMILL_TORCHVISION_STANDIN") == "1":
    if _TRIGGERS & sys.modules.keys():  # pragma: no cover (nothing imports vLLM before site)
        from tests.tiny_holotron import install_torchvision_modules

        install_torchvision_modules()
    else:
        sys.meta_path.insert(0, _InstallStandinBeforeVllmUtils())
