"""The ``--apps`` file: one desktop app per line, and what a screenshot records of an app (its Debian package).

A line is one of (``#`` starts a comment line; blank lines are skipped):

* a command line, split like a shell does (``shlex``): ``galculator``, ``mousepad /data/notes.txt``; the app's name
  is the command's file name;
* ``NAME: COMMAND``: the same with a name of its own (letters, digits, ``._-``), ``calc-big: galculator``;
* a JSON object: ``{"name": "calc", "command": ["galculator"], "env": {"LANG": "de_DE.UTF-8"}, "display":
  "800x600"}`` (``command`` a list or a string split like a shell does; ``env`` additions to the app's
  environment; ``display`` a display of its own instead of ``--displays``).

Names must be unique in a file (a screenshot's ``page_uri`` is ``app:<name>``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import shlex
import shutil
import subprocess

from screenmill.annotators.dom.page import Viewport

_NAMED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*):\s+(\S.*)$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclasses.dataclass(frozen=True)
class AppSpec:
    """One app to run: ``name``, its command line, environment additions and a display of its own (None: the run's
    ``--displays``)."""

    name: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    display: Viewport | None = None

    @property
    def command(self) -> str:
        return json.dumps(list(self.argv))


def parse_display(spec: str) -> Viewport:
    """``1280x800`` or ``1920x1080@2`` (logical size, scale): :meth:`Viewport.parse` without mobile emulation.

    Raises:
        ValueError: a malformed spec, values out of range, or mobile emulation (``m``).
    """
    display = Viewport.parse(spec)
    if display.mobile:
        raise ValueError(f"display {spec!r}: mobile emulation (m) is for pages only")
    return display


def parse_app_line(line: str) -> AppSpec | None:
    """One line of an ``--apps`` file → an :class:`AppSpec`, or None for a blank or comment line.

    Raises:
        ValueError: the line does not parse (the message says why).
    """
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    if text.startswith("{"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"not JSON: {e}") from None
        if not isinstance(obj, dict) or not obj.get("command"):
            raise ValueError('a JSON line needs a "command" (a list or a string)')
        command = obj["command"]
        argv = shlex.split(command) if isinstance(command, str) else command
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            raise ValueError('"command" must be a string or a list of strings')
        env = obj.get("env") or {}
        if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise ValueError('"env" must map names to strings')
        display = parse_display(obj["display"]) if obj.get("display") else None
        name = obj.get("name") or os.path.basename(argv[0] if argv else "")
    else:
        m = _NAMED.match(text)
        name, command = (m[1], m[2]) if m else (None, text)
        argv = shlex.split(command)
        env, display = {}, None
        name = name or os.path.basename(argv[0] if argv else "")
    if not argv:
        raise ValueError("no command")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"app name {name!r} must be letters, digits and ._- only")
    return AppSpec(name, tuple(argv), tuple(sorted(env.items())), display)


@functools.lru_cache(maxsize=256)
def package_of(executable: str) -> tuple[str | None, str | None]:
    """``(Debian package, its version)`` owning ``executable`` (looked up on PATH), or ``(None, None)``."""
    path = shutil.which(executable) or executable
    if not os.path.isabs(path) or shutil.which("dpkg-query") is None:
        return None, None
    for candidate in dict.fromkeys((path, os.path.realpath(path))):
        out = subprocess.run(["dpkg-query", "-S", candidate], capture_output=True, text=True, timeout=20)
        owners = [ln for ln in out.stdout.splitlines() if ":" in ln and not ln.startswith("diversion")]
        if out.returncode == 0 and owners:
            package = owners[0].split(":", 1)[0].split(",")[0].strip()
            version = subprocess.run(
                ["dpkg-query", "-W", "-f", "${Version}", package], capture_output=True, text=True, timeout=20
            )
            return package, (version.stdout.strip() or None) if version.returncode == 0 else None
    return None, None
