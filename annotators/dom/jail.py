"""Where the rendering Chromium runs: the network layer of the fence (:mod:`screenmill.annotators.dom.fence` is the
request layer), one :class:`Jail` per :class:`screenmill.annotators.dom.browser.BrowserHost`.

Layers, each on where the host allows it (:attr:`Jail.settings` says which are; a missing one is logged once per
process):

1. a network namespace of the browser's own (:class:`screenmill.annotators.netns.NetNamespace`): only its own
   loopback, so nothing the browser sends (TCP, UDP, DNS) reaches the host's network or its loopback;
2. the only way out is the job's forwarder (:class:`screenmill.annotators.netns.Forwarder`, a SOCKS5 relay listening
   inside the namespace), allowed per page to that page's own origin and ``--allow-origin`` (none for a ``file://``
   page); Chromium sends every connection to it, loopback too (``--proxy-bypass-list=<-loopback>``), host names
   unresolved (the forwarder resolves allowed ones only). Without a namespace the forwarder listens on the host's
   loopback and this layer and the next are what is left;
3. WebRTC without UDP of its own (``--force-webrtc-ip-handling-policy`` / ``--webrtc-ip-handling-policy``
   ``=disable_non_proxied_udp``: ICE only over the proxy, which takes TCP to allowed origins only), no host
   resolution but the forwarder's (``--host-resolver-rules``: every name NOTFOUND but the forwarder's address), no
   QUIC, no background networking;
4. Chromium as ``nobody`` (:func:`screenmill.annotators.netns.unprivileged`: it reads what the job can, writes only
   its own profile) with its own sandbox on; where the sandbox cannot start the browser goes on with
   ``--no-sandbox`` (:meth:`screenmill.annotators.dom.browser.BrowserHost` probes it once per process).

The browser is started through a small script made per jail (playwright launches it as the executable, keeping its
debugging pipe): it hands playwright's profile folder to the unprivileged user and ``exec``s Chromium inside the
namespace as that user. :meth:`Jail.close` removes the script's folder, stops the forwarder and lets the namespace go.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket

from screenmill.annotators import netns, scratch

WEBRTC_ARGS = (
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--enforce-webrtc-ip-permission-check",
)


def say_once(what: str, message: str) -> None:
    """Log a fallback of the render fence once per process (:func:`screenmill.annotators.netns.say_once`)."""
    netns.say_once(what, f"render fence: {message}")


class Jail:
    """The namespace, forwarder and launch script of one browser session (see the module docstring).

    Attributes:
        executable: what playwright launches (the script, or ``chromium`` itself when nothing wraps it).
        forwarder: the way out (:meth:`allow` it per page).
        settings: what the jail has: ``network_namespace`` (bool), ``user`` (``nobody`` or ``caller``),
            ``fallbacks`` (why a layer is missing).
    """

    def __init__(self, chromium: str):
        self._ns = None
        fallbacks = []
        why = netns.why_no_namespace()
        if why is None:
            try:
                self._ns = netns.NetNamespace()
            except netns.NamespaceError as e:
                why = str(e)
        if why is not None:
            fallbacks.append(f"no network namespace ({why}): the forwarder and Chromium's flags only")
            say_once("netns", fallbacks[-1])
        listener = self._ns.listen() if self._ns else _host_listener()
        self.forwarder = netns.Forwarder(listener)
        user = netns.unprivileged()
        if not user and os.geteuid() == 0:
            fallbacks.append("setpriv is missing: Chromium runs as root, without its sandbox")
            say_once("user", fallbacks[-1])
        self._dir = scratch.make_dir("screenmill-chromium-")
        scratch.close_at_exit(self)
        self.executable = chromium
        if self._ns or user:
            self.executable = self._script(chromium, user)
        self.settings = {
            "network_namespace": self._ns is not None,
            "user": "nobody" if user else "caller",
            "fallbacks": fallbacks,
        }

    @property
    def runs_as_root(self) -> bool:
        """Whether Chromium runs as root (then only with ``--no-sandbox``)."""
        return os.geteuid() == 0 and self.settings["user"] != "nobody"

    def _script(self, chromium: str, user: list[str]) -> str:
        home = os.path.join(self._dir, "home")
        os.mkdir(home)
        os.chmod(self._dir, 0o711)
        lines = ["#!/bin/sh", "# screenmill: Chromium in the render fence (annotators/dom/jail.py)"]
        if user:
            os.chown(home, netns.NOBODY, netns.NOBODY)
            lines.append(
                'for a; do case "$a" in --user-data-dir=*) '
                f'chown -R {netns.NOBODY}:{netns.NOBODY} -- "${{a#--user-data-dir=}}";; esac; done'
            )
        q = shlex.quote(home)
        lines.append(f"export HOME={q} XDG_CONFIG_HOME={q}/.config XDG_CACHE_HOME={q}/.cache")
        prefix = (self._ns.command() if self._ns else []) + user + [chromium]
        lines.append(f'exec {" ".join(shlex.quote(p) for p in prefix)} "$@"')
        path = os.path.join(self._dir, "chromium.sh")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(path, 0o700)
        return path

    def args(self) -> list[str]:
        """Chromium's switches of the network layers (2 and 3 of the module docstring)."""
        host, port = self.forwarder.address
        return [
            f"--proxy-server={self.forwarder.proxy}",
            "--proxy-bypass-list=<-loopback>",
            f"--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE {host}",
            *WEBRTC_ARGS,
        ]

    def close(self) -> None:
        scratch.forget(self)
        self.forwarder.close()
        if self._ns is not None:
            self._ns.close()
        shutil.rmtree(self._dir, ignore_errors=True)


def _host_listener() -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    return s
