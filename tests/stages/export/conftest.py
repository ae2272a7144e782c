"""Shared by the export tests: an offline Hugging Face environment."""

from __future__ import annotations

import pytest


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """No hub: offline flags, a private HF_HOME; returns a cache dir for load_dataset."""
    datasets = pytest.importorskip("datasets")
    hf = pytest.importorskip("huggingface_hub")
    for var in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):
        monkeypatch.setenv(var, "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    monkeypatch.setattr(hf.constants, "HF_HUB_OFFLINE", True)
    return str(tmp_path / "hf_cache")
