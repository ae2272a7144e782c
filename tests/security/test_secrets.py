"""Planted tokens never reach an output file, a log line, stdout or stderr.

``HF_TOKEN``, ``HUGGINGFACE_HUB_TOKEN`` and ``LABEL_STUDIO_API_KEY`` hold unique planted values while `screenmill run`,
`screenmill export --local-dir`, `screenmill export --repo` (``HfApi`` patched in memory, its first two commits
failing with 503) and `screenmill review push` / `pull` (Label Studio URL on a closed 127.0.0.1 port) run; then every
file under the output roots (Parquet decoded: its strings are compressed on disk), the captured Python output and log
records, and what reached the process's file descriptors are searched for the tokens.
"""

from __future__ import annotations

import http.server
import logging
import threading

import pytest
from screenmill.pipelines.selftest.fixtures import planted_tokens, run_services, scan_for


@pytest.mark.slow  # a run, two exports and a review push/pull, then every output file decoded and searched
def test_planted_tokens_appear_nowhere(tmp_path, capfd, caplog):
    pytest.importorskip("datasets")
    pytest.importorskip("huggingface_hub")
    pytest.importorskip("label_studio_sdk")
    caplog.set_level(logging.DEBUG)
    res = run_services(tmp_path)
    assert res.crash is None, res.crash
    assert res.planted == 3 and res.scanned_files > 10
    assert not res.hits, res.hits
    assert res.faults == {
        "export --local-dir": True,
        "Hub commit after 2 x 503": True,
        "Hub client got the env token": True,  # the token was there to leak: it was used, and stayed out of the output
        "review push with Label Studio down": True,
        "review pull with Label Studio down": True,
    }
    fd_out, fd_err = capfd.readouterr()
    planted = list(planted_tokens(tmp_path).values())
    hits, _, _ = scan_for(planted, [], {"fd stdout": fd_out, "fd stderr": fd_err, "caplog": caplog.text})
    assert not hits, hits


class _Unavailable(http.server.BaseHTTPRequestHandler):
    """A Label Studio behind a proxy that is down: 503, a session cookie, and an error page echoing the request."""

    def do_GET(self):  # noqa: N802 - the http.server API
        self.send_response(503)
        self.send_header("Set-Cookie", "sessionid=COOKIE-3f1e9c0d5b7a; HttpOnly")
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(
            b'{"detail": "upstream down; request had %s"}' % self.headers.get("Authorization", "").encode()
        )

    def log_message(self, *args):
        pass


def test_retry_messages_carry_no_response_headers_or_bodies(caplog):
    pytest.importorskip("label_studio_sdk")
    from screenmill.stages.clients.labelstudio import Connection, LabelStudioClient
    from screenmill.stages.clients.retry import GaveUp

    server = http.server.HTTPServer(("127.0.0.1", 0), _Unavailable)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    caplog.set_level(logging.INFO)  # httpcore traces raw headers at DEBUG: a debug setting, not a default
    caplog.set_level(logging.DEBUG, logger="screenmill")
    token = "tok-planted-5b7a4e21"
    try:
        client = LabelStudioClient(Connection(f"http://127.0.0.1:{server.server_port}", token), attempts=2)
        with pytest.raises(GaveUp) as err:
            client.tasks(1)
    finally:
        server.shutdown()
        server.server_close()
    said = str(err.value) + caplog.text
    assert "503" in said
    assert "COOKIE-3f1e9c0d5b7a" not in said and token not in said
