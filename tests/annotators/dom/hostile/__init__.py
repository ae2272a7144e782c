"""Hostile pages and the listeners they must not reach (the render fence's network tests)."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from pathlib import Path

HOSTILE = Path(__file__).resolve().parent / "hostile.html"
CANARY_TEXT = "CANARY-7731-not-for-pages"
NAME = "canary-name.test"


def host_addresses() -> list[str]:
    """127.0.0.1 and the host's first non-loopback IPv4 address, when it has one."""
    found = ["127.0.0.1"]
    try:
        out = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"], capture_output=True, text=True)
        found += [line.split()[3].split("/")[0] for line in out.stdout.splitlines()][:1]
    except OSError:
        pass
    return found


class Listeners:
    """A TCP and a UDP listener on each address (plus UDP and TCP 53 of 127.0.0.1 when free: a resolver's place);
    :attr:`seen` is every connection and datagram they got."""

    def __init__(self, addresses: list[str]):
        self.seen: list[str] = []
        self.targets: list[tuple[str, int, int]] = []
        self._socks: list[socket.socket] = []
        for addr in addresses:
            tcp = self._tcp(addr, 0)
            udp = self._udp(addr, 0)
            self.targets.append((addr, tcp.getsockname()[1], udp.getsockname()[1]))
        self.dns = []
        for make in (self._udp, self._tcp):
            try:
                self.dns.append(make("127.0.0.1", 53))
            except OSError:
                pass  # taken: a resolver of the host's own is there

    def _tcp(self, addr, port):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((addr, port))
        s.listen(64)
        self._socks.append(s)
        threading.Thread(target=self._accept, args=(s,), daemon=True).start()
        return s

    def _udp(self, addr, port):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((addr, port))
        self._socks.append(s)
        threading.Thread(target=self._recv, args=(s,), daemon=True).start()
        return s

    def _accept(self, s):
        name = s.getsockname()
        while True:
            try:
                conn, peer = s.accept()
            except OSError:
                return
            self.seen.append(f"tcp {name} from {peer}")
            conn.close()

    def _recv(self, s):
        name = s.getsockname()
        while True:
            try:
                data, peer = s.recvfrom(4096)
            except OSError:
                return
            self.seen.append(f"udp {name} from {peer}: {data[:20]!r}")

    def settle(self, seconds: float = 1.0) -> list[str]:
        """What they got, after ``seconds`` more for late packets."""
        time.sleep(seconds)
        return list(self.seen)

    def close(self):
        for s in self._socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


def write_hostile(folder: Path, targets, canary: Path, name: str = "hostile.html") -> Path:
    """The hostile page aimed at ``targets`` and ``canary``, written to ``folder/name``."""
    text = HOSTILE.read_text(encoding="utf-8")
    for key, value in (
        ("__TARGETS__", json.dumps([list(t) for t in targets])),
        ("__CANARY__", json.dumps(canary.as_uri())),
        ("__CANARYATTR__", canary.as_uri()),
        ("__NAME__", json.dumps(NAME)),
    ):
        text = text.replace(key, value)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path
