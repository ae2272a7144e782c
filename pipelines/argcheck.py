"""Command-line checking shared by every ``screenmill`` command: a bad argument is answered before any work.

A command builds its parser with :class:`ArgumentParser` (argparse's, answering in one line) and declares each
argument's check where it declares the argument, as its ``type=`` (one of the checkers below); checks that need two
arguments at once are declared with :meth:`ArgumentParser.add_check`. A bad value ends the command with exactly one
line on stderr, ``screenmill <command>: <argument>: <reason>``, and exit code 2 (argparse's), before the command
reads, writes or creates anything. Checks a config makes of itself later (``__post_init__``) end the same way through
:func:`fail`.

Paths: a remote URI (``gs://``, ``s3://``, any ``scheme://``) is passed on unchecked, since it cannot be looked at
without credentials and network; a local path is checked on the local disk. Every checker returns the value the
command uses (the text as given, unless it says otherwise) and raises ``argparse.ArgumentTypeError`` with the reason.

The checkers (see docs/commands.md for which argument of which command uses which):

* :func:`input_pattern`: an existing file or folder, or a glob that matches something;
* :func:`existing_dir`, :func:`existing_file`, :func:`existing_path`;
* :func:`output_dir`: a folder to write into: absent (the command creates it) or a folder, never a file;
* :func:`output_file`: a file to write: absent or a file, never a folder (:func:`output_file_in_dir`: in a folder
  that exists);
* :func:`output_tree`: a ``screenmill run`` output root (:func:`screenmill.schemas.tables.is_output_root`);
* :func:`in_output_tree`: an output root, or a partition folder or shard inside one;
* :func:`pages`: a folder or glob with ``.html`` / ``.htm`` pages; :func:`urls_file`: a file naming at least one URL;
* :func:`viewports`, :func:`among` (comma-separated values of a set), :func:`recipe`, :func:`date`;
* :func:`int_range`, :func:`float_range`, :func:`int_list`: numbers within bounds.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import functools
import glob
import math
import os
import sys
from collections.abc import Callable, Iterable
from typing import NoReturn

ArgumentTypeError = argparse.ArgumentTypeError


class UsageError(SystemExit):
    """A bad command line: its one line (already on stderr) is the exception's text, its exit code is 2."""

    def __init__(self, line: str):
        super().__init__(line)
        self.code = 2


def fail(prog: str, message: object) -> NoReturn:
    """Print ``<prog>: <message>`` as one line on stderr (white space folded) and raise :class:`UsageError`.

    Raises:
        UsageError: always; exit code 2, its text the line printed.
    """
    line = f"{prog}: {' '.join(str(message).split())}"
    print(line, file=sys.stderr)
    raise UsageError(line)


def returns_code(main: Callable[..., int]) -> Callable[..., int]:
    """Decorate a command's ``main(argv) -> exit code`` so that a bad command line returns 2 (its line printed)
    instead of raising :class:`UsageError`; ``--help`` still exits through argparse's ``SystemExit(0)``."""

    @functools.wraps(main)
    def wrapper(*args, **kwargs) -> int:
        try:
            return main(*args, **kwargs)
        except UsageError as e:
            return e.code

    return wrapper


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser, answering a bad command line in one line (no usage block) with exit code 2.

    ``add_check(argument, check)`` declares a check of the parsed namespace (for what one ``type=`` cannot see, such
    as two arguments together): ``check(args)`` raises ``ValueError`` / ``OSError`` / ``ArgumentTypeError`` with
    the reason; it runs after parsing, before the command does anything.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._checks: list[tuple[str, Callable[[argparse.Namespace], object]]] = []

    def add_check(self, argument: str, check: Callable[[argparse.Namespace], object]) -> None:
        self._checks.append((argument, check))

    def parse_known_args(self, args=None, namespace=None):
        parsed, extra = super().parse_known_args(args, namespace)
        for argument, check in self._checks:
            try:
                check(parsed)
            except (ValueError, OSError, ArgumentTypeError) as e:
                self.error(f"argument {argument}: {e}")
        return parsed, extra

    def error(self, message: str):
        fail(self.prog, message.removeprefix("argument "))


def is_remote(text: str) -> bool:
    """True for a URI with a scheme (``gs://…``, ``s3://…``): not looked at on the local disk."""
    return "://" in text


def _has_glob(text: str) -> bool:
    return any(c in text for c in "*?[")


def _file_above(path: str) -> str | None:
    """The nearest existing ancestor of ``path`` if it is a file (nothing can be created below it), else None."""
    probe = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    return None if os.path.isdir(probe) else probe


def input_pattern(text: str) -> str:
    """An input: an existing file or folder, or a glob matching at least one path (remote: unchecked)."""
    if is_remote(text):
        return text
    if _has_glob(text):
        if not glob.glob(text, recursive=True):
            raise ArgumentTypeError(f"nothing matches {text}")
    elif not os.path.exists(text):
        raise ArgumentTypeError(f"no such folder or file: {text}")
    return text


def _existing(text: str, is_kind: Callable[[str], bool], noun: str) -> str:
    if not is_remote(text) and not is_kind(text):
        raise ArgumentTypeError(f"{f'not a {noun}' if os.path.exists(text) else f'no such {noun}'}: {text}")
    return text


def existing_path(text: str) -> str:
    """An existing local file or folder (remote: unchecked)."""
    return _existing(text, os.path.exists, "file or folder")


def existing_dir(text: str) -> str:
    """An existing local folder (remote: unchecked)."""
    return _existing(text, os.path.isdir, "folder")


def existing_file(text: str) -> str:
    """An existing local file (remote: unchecked)."""
    return _existing(text, os.path.isfile, "file")


def output_dir(text: str) -> str:
    """A folder to write into: absent (created by the command) or an existing folder; never a file."""
    return _writable(text, folder=True)


def output_file(text: str) -> str:
    """A file to write: absent or an existing file; never a folder."""
    return _writable(text, folder=False)


def _writable(text: str, folder: bool) -> str:
    if is_remote(text):
        return text
    if os.path.exists(text) and os.path.isdir(text) != folder:
        raise ArgumentTypeError(f"is a {'file, not a folder' if folder else 'folder, not a file'}: {text}")
    above = _file_above(text)
    if above:
        raise ArgumentTypeError(f"{above} is a file, so {text} cannot be made")
    return text


def output_file_in_dir(text: str) -> str:
    """A local file to write into a folder that exists already (absent or a file, never a folder)."""
    output_file(text)
    parent = os.path.dirname(os.path.abspath(text))
    if not is_remote(text) and not os.path.isdir(parent):
        raise ArgumentTypeError(f"no such folder: {parent}")
    return text


def output_tree(text: str) -> str:
    """A ``screenmill run`` output root: a folder with ``_runs/`` or a table folder (remote: unchecked)."""
    from screenmill.schemas.tables import is_output_root

    existing_dir(text)
    if not is_remote(text) and not is_output_root(text):
        raise ArgumentTypeError(f"not a screenmill output tree (no _runs/ nor table folder): {text}")
    return text


def in_output_tree(text: str) -> str:
    """An output root, or a partition folder or shard inside one."""
    from screenmill.schemas.tables import find_output_root

    existing_path(text)
    if not is_remote(text) and find_output_root(text) is None:
        raise ArgumentTypeError(f"not in a screenmill output tree (no folder with screenshots/ above it): {text}")
    return text


def pages(text: str) -> str:
    """A folder (recursive) or glob of ``.html`` / ``.htm`` pages with at least one page."""
    from screenmill.stages.render import list_pages

    if not _has_glob(text):
        existing_dir(text)
    if not list_pages(text):
        raise ArgumentTypeError(f"no .html / .htm pages in {text}")
    return text


def urls_file(text: str) -> str:
    """A file of URLs, one a line (``#`` comments), with at least one ``file://`` or ``http(s)://`` URL; a bad line
    among good ones is the run's dead letter (``bad_url``), not a refusal."""
    existing_file(text)
    with open(text, encoding="utf-8", errors="replace") as f:
        lines = [s for s in (line.strip() for line in f) if s and not s.startswith("#")]
    if not any(s.startswith(("file://", "http://", "https://")) for s in lines):
        first = f" (first line: {lines[0][:80]!r})" if lines else " (it is empty)"
        raise ArgumentTypeError(f"no file:// or http(s):// URL in {text}{first}")
    return text


def viewports(text: str) -> str:
    """``WIDTHxHEIGHT[@SCALE[m]],…``: at least one, each valid (:meth:`Viewport.parse`); the text as given."""
    from screenmill.annotators.dom.page import Viewport

    specs = [v for v in text.split(",") if v.strip()]
    if not specs:
        raise ArgumentTypeError("no viewport given (e.g. 1280x800,390x844@3m)")
    for spec in specs:
        try:
            Viewport.parse(spec)
        except ValueError as e:
            raise ArgumentTypeError(str(e)) from None
    return text


def displays(text: str) -> str:
    """``WIDTHxHEIGHT[@SCALE],…`` desktop displays: at least one, each valid and without mobile emulation
    (:func:`screenmill.annotators.desktop.apps.parse_display`); the text as given."""
    from screenmill.annotators.desktop.apps import parse_display

    specs = [v for v in text.split(",") if v.strip()]
    if not specs:
        raise ArgumentTypeError("no display given (e.g. 1280x800,1920x1080@2)")
    for spec in specs:
        try:
            parse_display(spec)
        except ValueError as e:
            raise ArgumentTypeError(str(e)) from None
    return text


def among(values: Iterable[str]) -> Callable[[str], str]:
    """Comma-separated names, at least one, each one of ``values``; the text as given."""
    allowed = tuple(values)

    def check(text: str) -> str:
        names = [s.strip() for s in text.split(",") if s.strip()]
        bad = [s for s in names if s not in allowed]
        if bad or not names:
            raise ArgumentTypeError(f"must be among {', '.join(allowed)}, got {','.join(bad) or 'none'}")
        return text

    check.__name__ = f"among({', '.join(allowed)})"
    return check


def recipe(text: str) -> str:
    """A registered prompt recipe (:data:`screenmill.annotators.recipes.RECIPES`)."""
    from screenmill.annotators.recipes import get_recipe

    try:
        get_recipe(text)
    except KeyError as e:
        raise ArgumentTypeError(e.args[0]) from None
    return text


def int_list(text: str) -> list[int]:
    """Comma-separated integers, at least one; the list."""
    try:
        values = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise ArgumentTypeError(f"not comma-separated integers: {text!r}") from None
    if not values:
        raise ArgumentTypeError("no integer given")
    return values


def date(text: str) -> str:
    """A date ``YYYY-MM-DD`` (a ``dt`` partition)."""
    try:
        if _dt.date.fromisoformat(text).isoformat() != text:
            raise ValueError
    except ValueError:
        raise ArgumentTypeError(f"not a date YYYY-MM-DD: {text!r}") from None
    return text


def _bounds(lo, hi) -> str:
    return f">= {lo}" if hi is None else f"in {lo}..{hi}"


def int_range(lo: int, hi: int | None = None) -> Callable[[str], int]:
    """An integer in ``lo..hi`` (``hi`` None: no upper bound)."""

    def check(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < lo or (hi is not None and value > hi):
            raise ArgumentTypeError(f"must be {_bounds(lo, hi)}, got {value}")
        return value

    check.__name__ = f"int_range({lo}, {hi})"
    return check


def float_range(lo: float, hi: float | None = None, *, above: bool = False) -> Callable[[str], float]:
    """A finite number in ``lo..hi`` (``above``: strictly more than ``lo``)."""

    def check(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise ArgumentTypeError(f"not a number: {text!r}") from None
        low_ok = value > lo if above else value >= lo
        if not (math.isfinite(value) and low_ok and (hi is None or value <= hi)):
            bounds = (f"> {lo}" + ("" if hi is None else f" and <= {hi}")) if above else _bounds(lo, hi)
            raise ArgumentTypeError(f"must be {bounds}, got {text}")
        return value

    check.__name__ = f"float_range({lo}, {hi})"
    return check


#: Shared instances: a count of at least one, a count that may be zero, a positive number of seconds, a share.
POSITIVE = int_range(1)
NON_NEGATIVE = int_range(0)
SECONDS = float_range(0, above=True)
SHARE = float_range(0, 1)
