"""What a selftest run does, watched from inside the process: every file it opens under a folder (an audit hook on
``open``), everything it prints or logs (:func:`captured`), and ``screenmill run`` called with both in place.

``DT`` is the date partition of every run the selftest makes; ``ROOT`` the checkout the child runs start in.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DT = "2026-11-23"


_WATCHED: list[tuple[str, list[str]]] = []
_HOOKED = False


def _audit(event: str, args: tuple) -> None:
    if event != "open" or not _WATCHED or isinstance(args[0], int):
        return
    try:
        real = os.path.realpath(os.fsdecode(args[0]))
    except (TypeError, ValueError):
        return
    for root, hits in _WATCHED:
        if real == root or real.startswith(root + os.sep):
            hits.append(real)


@contextlib.contextmanager
def opens_under(folder: Path) -> Iterator[list[str]]:
    """Collect the paths under ``folder`` that this process opens while the block runs (audit hook on ``open``)."""
    global _HOOKED
    if not _HOOKED:
        sys.addaudithook(_audit)  # stays for the process's life; costs nothing when nothing is watched
        _HOOKED = True
    entry: tuple[str, list[str]] = (os.path.realpath(folder), [])
    _WATCHED.append(entry)
    try:
        yield entry[1]
    finally:
        _WATCHED.remove(entry)


@contextlib.contextmanager
def captured() -> Iterator[io.StringIO]:
    """stdout, stderr and every log record (DEBUG and up, ours and Beam's) into one buffer; the console stays quiet
    meanwhile (the report says what went wrong), and handlers a run adds on the way are removed afterwards."""
    buf = io.StringIO()
    mine = logging.StreamHandler(buf)
    mine.setLevel(logging.DEBUG)
    loggers = [logging.getLogger(), logging.getLogger("screenmill")]
    levels = {lg: lg.level for lg in loggers}
    before = {lg: list(lg.handlers) for lg in loggers}
    muted = {h: h.level for lg in loggers for h in lg.handlers}
    for h in muted:
        h.setLevel(logging.CRITICAL + 1)
    for lg in loggers:
        lg.addHandler(mine)
        lg.setLevel(logging.DEBUG)
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            yield buf
    finally:
        for lg in loggers:
            for h in [h for h in lg.handlers if h not in before[lg]]:
                lg.removeHandler(h)  # ours, and any a run made on the redirected stderr
            lg.setLevel(levels[lg])
        for h, level in muted.items():
            h.setLevel(level)


def run_quietly(argv: list[str]) -> dict:
    from screenmill.pipelines.run import run

    with captured():
        return run(argv)
