"""Dataflow right-fitting, checked offline on the job graph: `screenmill run --accelerator … --inference-min-ram …`
puts Beam resource hints on the model stage only, behind a fan-out, so CPU stages stay on CPU workers and only
inference lands on GPU workers. Nothing runs and nothing is written: :func:`screenmill.pipelines.run.build_pipeline`
builds the graph and ``to_runner_api()`` gives the proto a runner receives; the DataflowRunner's ``--dry_run=True``
builds the very job Dataflow would be sent (its own overrides and environment merging applied), with no network."""

from __future__ import annotations

import socket

import pytest
from apache_beam.portability import common_urns
from screenmill.annotators.vllm.config import EngineConfig
from screenmill.pipelines.run import build_pipeline

ACCELERATOR = "type:nvidia-h100-80gb;count:1;install-nvidia-driver"
ACCELERATOR_URN = common_urns.resource_hints.ACCELERATOR.urn
MIN_RAM_URN = common_urns.resource_hints.MIN_RAM_BYTES.urn
GBK_URN = common_urns.primitives.GROUP_BY_KEY.urn


@pytest.fixture(autouse=True)
def _no_model_check(monkeypatch):
    # a graph needs no vLLM and no weights
    monkeypatch.setattr(EngineConfig, "preflight", lambda self, check_imports=True: None)


def _graph(tmp_path, *extra: str):
    out = tmp_path / "out"
    (tmp_path / "in").mkdir(exist_ok=True)  # the input must exist (screenmill run checks it before any work)
    pipeline, _ = build_pipeline(["--input", str(tmp_path / "in"), "--output", str(out), "--quiet", *extra])
    assert not out.exists()  # building touches nothing
    return pipeline.to_runner_api().components


def _hinted(components) -> dict[str, dict[str, bytes]]:
    """``{transform name: its environment's resource hints}`` for every transform whose environment has some."""
    envs = components.environments
    return {
        t.unique_name: dict(envs[t.environment_id].resource_hints)
        for t in components.transforms.values()
        if t.environment_id and envs[t.environment_id].resource_hints
    }


def _producer(components, pcoll_id: str):
    """The leaf transform that outputs ``pcoll_id``."""
    for t in components.transforms.values():
        if not t.subtransforms and pcoll_id in t.outputs.values():
            return t
    raise KeyError(pcoll_id)


@pytest.mark.parametrize("recipe", ["propose-elements", "navigate-step"])
def test_only_the_inference_transform_asks_for_a_gpu(tmp_path, recipe):
    hints = ["--accelerator", ACCELERATOR, "--inference-min-ram", "64GB"]
    components = _graph(tmp_path, "--annotator", "vllm", "--recipe", recipe, *hints)
    hinted = _hinted(components)
    assert list(hinted) == ["RunVlm/Generate/ParDo(_RunEngine)"]
    assert hinted["RunVlm/Generate/ParDo(_RunEngine)"] == {
        ACCELERATOR_URN: ACCELERATOR.encode(),
        MIN_RAM_URN: b"64000000000",
    }
    # the model stage reads from a fan-out: walking up from it through ParDos meets RunVlm/FanOut's shuffle first
    generate = next(t for t in components.transforms.values() if t.unique_name == "RunVlm/Generate/ParDo(_RunEngine)")
    (pcoll,) = generate.inputs.values()
    seen = []
    while True:
        t = _producer(components, pcoll)
        seen.append(t.unique_name)
        if t.spec.urn == GBK_URN:
            break
        pcoll = next(iter(t.inputs.values()))
    assert seen[-1].startswith("RunVlm/FanOut/"), seen
    assert not any(_hinted(components).get(name) for name in seen)


def test_cpu_runs_carry_no_hints(tmp_path):
    assert _hinted(_graph(tmp_path, "--annotator", "vllm")) == {}
    assert _hinted(_graph(tmp_path, "--annotator", "ocr")) == {}
    assert _hinted(_graph(tmp_path, "--annotator", "none", "--inference-min-ram", "8GB")) == {}


def test_ocr_memory_hint_lands_on_the_annotator_only(tmp_path):
    hinted = _hinted(_graph(tmp_path, "--annotator", "ocr", "--inference-min-ram", "16GB"))
    assert hinted == {"Annotate/Annotate/ParDo(_Annotate)": {MIN_RAM_URN: b"16000000000"}}


def test_a_bad_hint_fails_before_anything_runs(tmp_path):
    with pytest.raises(SystemExit, match="min_ram has invalid value lots"):
        _graph(tmp_path, "--annotator", "vllm", "--inference-min-ram", "lots")


def test_dataflow_dry_run_builds_the_job_offline_with_gpu_on_inference_only(tmp_path, monkeypatch):
    pytest.importorskip("apache_beam.runners.dataflow.internal.apiclient", reason="needs screenmill[dataflow]")

    def no_network(*args, **kwargs):
        raise OSError(f"network access during a Dataflow dry run: {args[1:] or args}")

    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    bucket = "gs://screenmill-dry-run"
    pipeline, _ = build_pipeline(
        [
            *("--input", f"{bucket}/in/", "--output", f"{bucket}/out", "--annotator", "vllm", "--quiet"),
            *("--accelerator", ACCELERATOR, "--inference-min-ram", "64GB"),
            *("--runner=DataflowRunner", "--dry_run=True", "--project=screenmill-dry-run", "--region=us-central1"),
            *(f"--temp_location={bucket}/tmp", "--sdk_container_image=example.org/screenmill:test"),
        ]
    )
    job = pipeline.run().job  # a dry run stops right before the job would be submitted
    components = job.proto_pipeline.components
    assert _hinted(components) == {
        "RunVlm/Generate/ParDo(_RunEngine)": {ACCELERATOR_URN: ACCELERATOR.encode(), MIN_RAM_URN: b"64000000000"}
    }
    assert len(components.environments) == 2  # the default (CPU) environment and the model stage's
    assert job.proto.name and job.proto.type.name == "JOB_TYPE_BATCH"
