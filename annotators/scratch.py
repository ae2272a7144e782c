"""Scratch folders of a worker process's sessions (a browser's jail, a desktop session) that leave nothing behind.

A session's folder is removed by its ``close``; a session still open when the process exits normally is closed then
(:func:`close_at_exit`: per-process sessions are held for the life of the process and never closed otherwise); and a
folder whose process was killed (SIGKILL, a crash: no ``close``, no exit handler) is removed by the next
:func:`make_dir` of the same kind on the machine (:func:`sweep`): its name holds its process's pid and start time,
so a folder is removed only when the process that made it is gone (a reused pid has another start time).

A leaf module (the standard library only).
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
import threading
from typing import Protocol


class Closable(Protocol):
    def close(self) -> None: ...


_TAG = re.compile(r"^(\d+)\.(\d+)-")


def _start_time(pid: int) -> str | None:
    """The process's start time (clock ticks since boot, ``/proc/PID/stat`` field 22), None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            stat = f.read()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]


def make_dir(prefix: str) -> str:
    """A fresh folder ``<tmp>/<prefix><pid>.<start time>-XXXX`` (mode 0700, the caller opens it up as it needs), after
    removing the folders of ``prefix`` whose process is gone (:func:`sweep`)."""
    sweep(prefix)
    return tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}.{_start_time(os.getpid()) or 0}-")


def sweep(prefix: str, root: str | None = None) -> list[str]:
    """Remove the folders ``<root>/<prefix><pid>.<start>-*`` whose process is no longer running (``root``: the
    temporary folder); folders of running processes and names of another shape are left alone.

    Returns:
        The folders removed.
    """
    root = root or tempfile.gettempdir()
    gone = []
    try:
        names = [n for n in os.listdir(root) if n.startswith(prefix)]
    except OSError:
        return gone
    for name in names:
        m = _TAG.match(name[len(prefix) :])
        if m is None or _start_time(int(m.group(1))) == m.group(2):
            continue
        path = os.path.join(root, name)
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
            gone.append(path)
    return gone


def close_at_exit(session: Closable) -> None:
    """Call ``session.close()`` when the process exits normally (newest first) unless :func:`forget` is called with
    it first (its ``close`` does)."""
    with _lock:
        if not _pending:
            atexit.register(_close_pending)
        _pending[id(session)] = session


def forget(session: Closable) -> None:
    """Undo :func:`close_at_exit` (the session was closed)."""
    with _lock:
        _pending.pop(id(session), None)


_lock = threading.Lock()
_pending: dict[int, Closable] = {}


def _close_pending() -> None:
    while _pending:
        with _lock:
            _, session = _pending.popitem()
        try:
            session.close()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass
