"""A network namespace of its own for an untrusted program, and the forwarder that is its only way out.

The rendering browser (:mod:`screenmill.annotators.dom.browser`, through :mod:`screenmill.annotators.dom.jail`) and
every desktop session (:mod:`screenmill.annotators.desktop.session`) run in one. A
:class:`NetNamespace` is a namespace with nothing but its own loopback (not the host's): no interface, no route, no
resolver. It is held by a small process (``unshare --net``) for as long as it is open; a program enters it with
:meth:`NetNamespace.command` (``nsenter``), which keeps the program's file descriptors (playwright's debugging pipe).
The holder exits when its owner closes it or dies (its stdin is a pipe from the owner).

:class:`Forwarder` is a SOCKS5 relay (no authentication, TCP ``CONNECT`` only, no ``BIND``/``UDP ASSOCIATE``) whose
listening socket lives inside the namespace (:meth:`NetNamespace.listen`: made on a thread that entered the
namespace, for a socket keeps the namespace it was made in) while its outbound connections are made from the host's:
the only way out of the namespace, and only to the ``host:port`` pairs it is told to allow (:meth:`Forwarder.allow`);
everything else is refused and counted. Chromium goes through it with ``--proxy-server=socks5://...`` (host names are
resolved by the forwarder, only for allowed hosts: a page-chosen name is never looked up).

:func:`unprivileged` is the command prefix that runs a program as an unprivileged user (``nobody``) with
``CAP_DAC_READ_SEARCH`` alone (it reads what the job can read, e.g. pages under a root-only folder, and writes only
what ``nobody`` may). :func:`why_no_namespace` says once per process why a namespace cannot be made here (None: it
can); callers fall back to what they have without one and say so.
"""

from __future__ import annotations

import ctypes
import functools
import ipaddress
import logging
import os
import selectors
import shutil
import socket
import struct
import subprocess
import threading
import urllib.parse

NOBODY = 65534
CLONE_NEWNET = 0x40000000
HOLDER_START_S = 10.0
_log = logging.getLogger("screenmill.netns")
DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}


class NamespaceError(RuntimeError):
    """A namespace could not be made or entered (the message says why)."""


class NetNamespace:
    """A network namespace with only its own loopback, held open by a process (see the module docstring).

    Raises:
        NamespaceError: ``unshare`` is missing, not permitted or did not answer within :data:`HOLDER_START_S`.
    """

    def __init__(self):
        for tool in ("unshare", "nsenter", "ip"):
            if shutil.which(tool) is None:
                raise NamespaceError(f"{tool} is missing (util-linux / iproute2)")
        try:
            self._holder = subprocess.Popen(
                ["unshare", "--net", "--", "sh", "-c", "ip link set lo up && echo ready && exec cat >/dev/null"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as e:
            raise NamespaceError(f"unshare failed: {e}") from e
        ready = _read_line(self._holder.stdout, HOLDER_START_S)
        if ready != b"ready\n":
            exited = self._holder.poll() is not None
            why = self._holder.stderr.read().decode(errors="replace").strip() if exited else ""
            self.close()
            raise NamespaceError(f"unshare --net did not start: {why or 'no answer'}")
        self.path = f"/proc/{self._holder.pid}/ns/net"

    def command(self) -> list[str]:
        """The command prefix that runs a program inside the namespace (file descriptors kept)."""
        return ["nsenter", f"--net={self.path}", "--"]

    def listen(self, host: str = "127.0.0.1") -> socket.socket:
        """A listening TCP socket on ``host`` (port chosen) inside the namespace, made on a thread of its own that
        entered it (``setns`` changes the calling thread's namespace only; the thread ends after).

        Raises:
            NamespaceError: the namespace could not be entered.
        """
        made: dict = {}

        def make():
            try:
                fd = os.open(self.path, os.O_RDONLY)
                try:
                    if ctypes.CDLL(None, use_errno=True).setns(fd, CLONE_NEWNET) != 0:
                        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
                finally:
                    os.close(fd)
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.bind((host, 0))
                s.listen(64)
                made["socket"] = s
            except OSError as e:
                made["error"] = e

        t = threading.Thread(target=make, name="screenmill-netns-listen")
        t.start()
        t.join()
        if "error" in made:
            raise NamespaceError(f"could not enter {self.path}: {made['error']}")
        return made["socket"]

    def close(self) -> None:
        """Let the holder go (the namespace goes with the last process in it)."""
        holder = self._holder
        if holder.poll() is None:
            try:
                holder.stdin.close()
                holder.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                holder.kill()
                holder.wait(timeout=5)
        for f in (holder.stdout, holder.stderr):
            f.close()


def _read_line(stream, timeout_s: float) -> bytes:
    sel = selectors.DefaultSelector()
    sel.register(stream, selectors.EVENT_READ)
    try:
        return stream.readline() if sel.select(timeout_s) else b""
    finally:
        sel.close()


@functools.cache
def why_no_namespace() -> str | None:
    """Why a :class:`NetNamespace` cannot be made in this process (None: it can); asked once, by making one."""
    if os.geteuid() != 0:
        return "not root: no network namespace can be entered"
    try:
        NetNamespace().close()
    except NamespaceError as e:
        return str(e)
    return None


def unprivileged(uid: int = NOBODY, gid: int = NOBODY, read_all: bool = True) -> list[str]:
    """The command prefix that runs a program as ``uid``/``gid`` with no groups and, with ``read_all``,
    ``CAP_DAC_READ_SEARCH`` alone (reads anything the caller can, writes only what that user may; without it, no
    capability: what that user may read and write); ``[]`` when not root or ``setpriv`` is missing (the program
    then runs as the caller)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return []
    caps = ["--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"] if read_all else []
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", *caps, "--"]


def say_once(what: str, message: str) -> None:
    """Log a fallback of a fence (no namespace, no user switch, no sandbox) once per process, under ``what``."""
    if what not in _said:
        _said.add(what)
        _log.warning("%s", message)


_said: set[str] = set()


def endpoint_of(origin: str) -> tuple[str, int]:
    """``(host, port)`` of an ``http(s)``/``ws(s)`` origin (the scheme's default port when none is given)."""
    parts = urllib.parse.urlsplit(origin)
    return (parts.hostname or "").lower(), parts.port or DEFAULT_PORTS.get(parts.scheme, 0)


class Forwarder:
    """The SOCKS5 relay that is the namespace's only way out (see the module docstring), serving ``listener`` on
    threads of its own until :meth:`close`.

    Attributes:
        refused: ``host:port`` of every connection refused (not allowed, or a request it does not serve).
        relayed: how many connections were relayed.
    """

    def __init__(self, listener: socket.socket, connect_timeout_s: float = 10.0):
        self._listener = listener
        self.address = listener.getsockname()[:2]
        self._allowed: frozenset[tuple[str, int]] = frozenset()
        self._connect_timeout_s = connect_timeout_s
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.refused: list[str] = []
        self.relayed = 0
        self._closed = False
        threading.Thread(target=self._accept, name="screenmill-forwarder", daemon=True).start()

    @property
    def proxy(self) -> str:
        """The forwarder as a proxy URL (``socks5://host:port``)."""
        return f"socks5://{self.address[0]}:{self.address[1]}"

    def allow(self, origins) -> None:
        """Allow connections to these ``http(s)``/``ws(s)`` origins only, from now on (connections already relayed
        go on)."""
        self._allowed = frozenset(endpoint_of(o) for o in origins)

    def close(self) -> None:
        self._closed = True
        for s in (self._listener, *list(self._open)):
            try:
                s.shutdown(socket.SHUT_RDWR)  # wakes the threads waiting on it
            except OSError:
                pass
            s.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), name="screenmill-forward", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        out = None
        with self._lock:
            self._open.add(conn)
        try:
            conn.settimeout(10)
            target = _socks5_request(conn)
            if target is None:
                self.refused.append("?")
                return
            host, port = target
            if (host.lower(), port) not in self._allowed:
                self.refused.append(f"{host}:{port}")
                conn.sendall(b"\x05\x02\x00\x01" + bytes(6))  # connection not allowed by ruleset
                return
            try:
                out = socket.create_connection((host, port), timeout=self._connect_timeout_s)
            except OSError:
                conn.sendall(b"\x05\x05\x00\x01" + bytes(6))  # connection refused
                return
            with self._lock:
                self._open.add(out)
            self.relayed += 1
            conn.sendall(b"\x05\x00\x00\x01" + bytes(6))
            _relay(conn, out)
        except OSError:
            pass
        finally:
            for s in (conn, out):
                if s is not None:
                    with self._lock:
                        self._open.discard(s)
                    s.close()


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise OSError("closed during the SOCKS5 handshake")
        data += chunk
    return data


def _socks5_request(conn: socket.socket) -> tuple[str, int] | None:
    """The ``(host, port)`` a SOCKS5 client asks to ``CONNECT`` to (None: another request, answered with a refusal)."""
    version, methods = _recv_exact(conn, 2)
    offered = _recv_exact(conn, methods)
    if version != 5 or 0 not in offered:
        conn.sendall(b"\x05\xff")
        return None
    conn.sendall(b"\x05\x00")
    version, command, _, kind = _recv_exact(conn, 4)
    if kind == 1:
        host = str(ipaddress.IPv4Address(_recv_exact(conn, 4)))
    elif kind == 3:
        host = _recv_exact(conn, _recv_exact(conn, 1)[0]).decode("idna")
    elif kind == 4:
        host = str(ipaddress.IPv6Address(_recv_exact(conn, 16)))
    else:
        conn.sendall(b"\x05\x08\x00\x01" + bytes(6))
        return None
    (port,) = struct.unpack("!H", _recv_exact(conn, 2))
    if version != 5 or command != 1:
        conn.sendall(b"\x05\x07\x00\x01" + bytes(6))  # only CONNECT
        return None
    return host, port


def _relay(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until both sides are done (a side's end is passed on as a half close)."""
    a.settimeout(None)
    b.settimeout(None)
    sel = selectors.DefaultSelector()
    peers = {a: b, b: a}
    for s in peers:
        sel.register(s, selectors.EVENT_READ)
    open_ends = 2
    try:
        while open_ends:
            for key, _ in sel.select():
                src = key.fileobj
                data = src.recv(65536)
                if data:
                    peers[src].sendall(data)
                    continue
                sel.unregister(src)
                open_ends -= 1
                try:
                    peers[src].shutdown(socket.SHUT_WR)
                except OSError:
                    pass
    finally:
        sel.close()
