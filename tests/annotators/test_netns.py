"""The namespace and its forwarder (:mod:`screenmill.annotators.netns`) without a browser: a program in the
namespace sees only its own loopback; the forwarder relays to allowed ``host:port`` pairs only."""

from __future__ import annotations

import socket
import struct
import subprocess
import threading

import pytest
from screenmill.annotators import netns


def _socks_connect(address, host: str, port: int) -> tuple[int, socket.socket]:
    s = socket.create_connection(address, timeout=5)
    s.sendall(b"\x05\x01\x00")
    assert s.recv(2) == b"\x05\x00"
    name = host.encode()
    s.sendall(b"\x05\x01\x00\x03" + bytes([len(name)]) + name + struct.pack("!H", port))
    reply = s.recv(10)
    return reply[1], s


def test_the_forwarder_relays_allowed_origins_only():
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def echo():
        conn, _ = server.accept()
        conn.sendall(conn.recv(100).upper())
        conn.close()

    threading.Thread(target=echo, daemon=True).start()
    listener = socket.create_server(("127.0.0.1", 0))
    fw = netns.Forwarder(listener)
    try:
        code, s = _socks_connect(fw.address, "127.0.0.1", port)
        assert code == 2 and fw.refused == [f"127.0.0.1:{port}"]  # nothing allowed yet
        s.close()
        fw.allow([f"http://127.0.0.1:{port}", "https://example.com"])
        code, s = _socks_connect(fw.address, "127.0.0.1", port)
        assert code == 0
        s.sendall(b"hello")
        assert s.recv(100) == b"HELLO" and fw.relayed == 1
        s.close()
        code, s = _socks_connect(fw.address, "127.0.0.1", port + 1 if port < 65535 else port - 1)
        assert code == 2  # another port of an allowed host is another origin
        s.close()
    finally:
        fw.close()
        server.close()
    assert netns.endpoint_of("wss://Example.com") == ("example.com", 443)
    assert netns.endpoint_of("http://[::1]:8080") == ("::1", 8080)


def test_a_program_in_the_namespace_reaches_neither_the_host_loopback_nor_the_outside():
    why = netns.why_no_namespace()
    if why:
        pytest.skip(f"no network namespace here: {why}")
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    ns = netns.NetNamespace()
    try:
        probe = (
            "import socket, sys\n"
            f"for addr in (('127.0.0.1', {port}), ('192.0.2.1', 80)):\n"
            "    try:\n"
            "        socket.create_connection(addr, timeout=2); print('reached', addr)\n"
            "    except OSError as e:\n"
            "        print('no', addr, e.errno)\n"
        )
        out = subprocess.run([*ns.command(), "python3", "-c", probe], capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        assert "reached" not in out.stdout and out.stdout.count("no ") == 2, out.stdout
        inside = ns.listen()  # a socket made inside: the host cannot connect to it on the host's loopback
        with pytest.raises(OSError):
            socket.create_connection(inside.getsockname(), timeout=2)
        inside.close()
    finally:
        ns.close()
        server.close()
