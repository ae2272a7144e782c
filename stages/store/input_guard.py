"""What ingest checks about a local input file before it reads a byte of it.

Three kinds of hostile input get through a directory listing: a symlink whose target is outside the input root
(``/etc/…``, another tenant's folder, ``/dev/zero``), something that is not a regular file (a FIFO would block the
read forever, a device never ends) and a name that is not valid UTF-8 (every table column is a UTF-8 string, so it
would fail the run at write time). :func:`check_local_file` refuses all three with a stable reason
(``path_outside_root``, ``unreadable``) and returns the file's real size, so a size limit holds for files the
listing did not measure (episode steps in sub-folders). Object-store URIs (``gs://``, ``s3://``…) are not local
files: only their names are checked. Stages that need pixels later re-read the file with
:func:`screenmill.schemas.verified.read_screenshot`, which checks it still holds the bytes ingest hashed.
"""

from __future__ import annotations

import functools
import os
import re
import stat

from screenmill.schemas.records import Rejected

_GLOB_PREFIX = re.compile(r"[^*?\[]*")


def printable(text: str) -> str:
    """``text`` as valid UTF-8: bytes a file name smuggled in as surrogates become ``\\xNN`` escapes."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _local(path: str) -> str | None:
    if path.startswith("file://"):
        return path[len("file://") :]
    return None if "://" in path else path


@functools.lru_cache(maxsize=64)
def input_root(pattern: str) -> str | None:
    """The real directory a (expanded) FileSystems pattern reads under: the folder of the part before the first glob
    character (``/in/**`` → ``/in``, ``/in/*.png`` → ``/in``, ``/in/a.png`` → ``/in``); ``None`` for object stores."""
    local = _local(pattern)
    if local is None:
        return None
    return os.path.realpath(os.path.dirname(_GLOB_PREFIX.match(local).group(0)) or ".")


def check_local_file(path: str, root: str | None, max_bytes: int | None = None) -> int | None:
    """Refuse a file ingest must not read; return its size in bytes (``None`` for object-store URIs).

    Args:
        path: the file, as the listing or an episode step named it.
        root: :func:`input_root` of the run's input pattern; ``None`` skips the containment check.
        max_bytes: a regular file larger than this is ``too_large``.

    Raises:
        screenmill.schemas.records.Rejected: ``unreadable`` (a name that is not UTF-8, a missing or inaccessible file,
        a FIFO,
            device, socket or directory), ``path_outside_root`` (a symlink that resolves outside ``root``) or
            ``too_large``.
    """
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise Rejected("unreadable", "the file name is not valid UTF-8 (rename the file)") from None
    local = _local(path)
    if local is None:
        return None
    try:
        st = os.stat(local)  # follows symlinks: what a read would open
    except (OSError, ValueError) as e:
        raise Rejected("unreadable", f"{type(e).__name__}: {e}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO, device or socket"
        raise Rejected("unreadable", f"not a regular file ({kind})")
    if root is not None:
        real = os.path.realpath(local)
        if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
            raise Rejected("path_outside_root", "a symlink that resolves outside the input folder")
    if max_bytes is not None and st.st_size > max_bytes:
        raise Rejected("too_large", f"{st.st_size} bytes is over the {max_bytes} byte limit")
    return st.st_size
