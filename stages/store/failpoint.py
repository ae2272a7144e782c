"""Crash-test hook of the writers and the commit: :func:`failpoint` kills the process at a named point."""

from __future__ import annotations

import os
import signal

FAILPOINT_ENV = "SCREENMILL_FAILPOINT"


def failpoint(name: str) -> None:
    """Crash-test hook: with ``SCREENMILL_FAILPOINT=<name>`` set, kill this process with SIGKILL right here.

    The crash tests use it to stop a run at an exact point (mid-write, before or inside the commit); unset, it costs
    one dictionary lookup.
    """
    if os.environ.get(FAILPOINT_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
