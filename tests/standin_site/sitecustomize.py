"""TEST-ONLY: the torchvision stand-in of ``tests/tiny_holotron.py`` in every Python process started with this folder
(and the repository root) on ``PYTHONPATH`` and ``SCREENMILL_TORCHVISION_STANDIN=1``.

The in-process stand-in cannot reach the engine-core and worker processes vLLM spawns in its default mode (the one
GPU hosts run); Python imports ``sitecustomize`` at the start of every interpreter, those children included. Nothing
happens without the variable. Never on a product path.
"""

import os

if os.environ.get("SCREENMILL_TORCHVISION_STANDIN") == "1":
    from tests.tiny_holotron import install_torchvision_shim

    install_torchvision_shim()
