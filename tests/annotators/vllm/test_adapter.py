"""The vLLM adapter's version gate: the private fast path only on the versions it was written for, the public API
elsewhere (no engine here; the engine tests run the fast path, tests/annotators/test_engine_faults.py the fallback)."""

from __future__ import annotations

import logging

import pytest
from screenmill.annotators.vllm import adapter
from screenmill.annotators.vllm.adapter import FAST, PUBLIC, PUBLIC_API_ENV, VllmApi, choose_path


@pytest.mark.parametrize(
    ("version", "path"),
    [
        ("0.32.0", FAST),
        ("0.32.0+cpu", FAST),
        ("0.32.0+cu129", FAST),
        ("0.32.1", PUBLIC),
        ("0.11.0", PUBLIC),
        ("1.0.0", PUBLIC),
        ("0.3.2", PUBLIC),
        ("garbage", PUBLIC),
        (None, PUBLIC),
    ],
)
def test_the_fast_path_is_chosen_for_the_tested_version_only(version, path):
    assert choose_path(version, environ={}) == path


def test_the_env_var_forces_the_public_path():
    assert choose_path("0.32.0", environ={PUBLIC_API_ENV: "1"}) == PUBLIC
    assert choose_path("0.32.0", environ={PUBLIC_API_ENV: "0"}) == FAST


class _FakeEngine:
    def __init__(self):
        self.added = []

    def add_request(self, request_id, prompt, params):
        self.added.append((request_id, prompt, params))
        return f"{request_id}-internal"


class _FakeLLM:
    """What both paths call: the private split and the public enqueue."""

    def __init__(self, enqueue=True):
        self.calls = []
        self.llm_engine = _FakeEngine()
        if enqueue:
            self.enqueue = lambda prompts, params, use_tqdm: self.calls.append(("enqueue", prompts)) or ["e-1"]

    def _preprocess_cmpl_one(self, prompt):
        self.calls.append(("render", prompt))
        return {"rendered": prompt}

    def _render_and_add_requests(self, rendered, params):
        self.calls.append(("add", rendered))
        return ["r-1"]


def test_an_untested_version_never_touches_the_private_api(monkeypatch, caplog):
    monkeypatch.delenv(PUBLIC_API_ENV, raising=False)
    monkeypatch.setattr(adapter, "_logged", set())
    llm = _FakeLLM()
    with caplog.at_level(logging.INFO, logger="screenmill.engine"):
        api = VllmApi(llm, version="0.99.0")
        VllmApi(llm, version="0.99.0")
    assert api.path == PUBLIC and not api.fast
    assert [r.getMessage() for r in caplog.records] == [
        "vLLM 0.99.0: public-enqueue path, enqueues requests through the public API (rendered at submission)"
    ]  # logged once per process
    assert api.render({"prompt": "p"}) is None
    assert api.add({"prompt": "p"}, None, "params") == "e-1"
    assert llm.calls == [("enqueue", [{"prompt": "p"}])]


def test_the_public_path_falls_back_to_the_engines_add_request_without_enqueue():
    llm = _FakeLLM(enqueue=False)
    api = VllmApi(llm, version="0.11.0")
    assert api.add({"prompt": "p"}, None, "params") == "screenmill0-internal"
    assert llm.llm_engine.added == [("screenmill0", {"prompt": "p"}, "params")]
    assert llm.calls == []


def test_the_tested_version_renders_apart_from_enqueueing(monkeypatch):
    monkeypatch.delenv(PUBLIC_API_ENV, raising=False)
    llm = _FakeLLM()
    api = VllmApi(llm, version="0.32.0")
    assert api.fast
    rendered = api.render({"prompt": "p"})
    assert api.add({"prompt": "p"}, rendered, "params") == "r-1"
    assert llm.calls == [("render", {"prompt": "p"}), ("add", [{"rendered": {"prompt": "p"}}])]


def test_a_tested_version_without_the_private_split_takes_the_public_path(monkeypatch):
    monkeypatch.delenv(PUBLIC_API_ENV, raising=False)

    class Public:
        def enqueue(self, prompts, params, use_tqdm):
            return ["e-1"]

    assert VllmApi(Public(), version="0.32.0").path == PUBLIC
