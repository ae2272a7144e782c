"""`screenmill review` without a server: bad settings, a clean failure when Label Studio is down, no token leaks."""

from __future__ import annotations

import logging

import pytest
from screenmill.pipelines.review import main

PLANTED = "tok-3f1e9c0d5b7a4e21-planted"


def test_missing_settings_exit_2(tmp_path, monkeypatch, capsys):
    pytest.importorskip("label_studio_sdk")
    for var in ("LABEL_STUDIO_URL", "LABEL_STUDIO_API_KEY", "LABEL_STUDIO_TOKEN_FILE"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "_runs").mkdir()  # an output tree (an empty one)
    assert main(["status", str(tmp_path)]) == 2
    assert "LABEL_STUDIO_URL" in capsys.readouterr().err


def test_server_down_fails_cleanly_without_leaking_the_token(tmp_path, monkeypatch, capsys, caplog):
    pytest.importorskip("label_studio_sdk")
    monkeypatch.setenv("LABEL_STUDIO_URL", "http://127.0.0.1:9")  # discard port: nothing listens
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", PLANTED)
    monkeypatch.delenv("LABEL_STUDIO_TOKEN_FILE", raising=False)
    caplog.set_level(logging.DEBUG)
    (tmp_path / "out" / "_runs").mkdir(parents=True)  # an output tree (an empty one)
    assert main(["push", str(tmp_path / "out"), "--project", "p"]) == 1
    out, err = capsys.readouterr()
    assert "rerun to resume" in err
    everything = out + err + caplog.text
    for path in tmp_path.rglob("*"):
        if path.is_file():
            everything += path.read_text(errors="replace")
    assert PLANTED not in everything
