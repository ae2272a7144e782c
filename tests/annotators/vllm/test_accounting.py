"""The model stage's accounting without an engine: the ledger's totals and what :func:`summarize` makes of them
(the real engine's figures are checked in ``tests/pipelines/test_run_vllm.py``)."""

from __future__ import annotations

import threading

import pytest
from screenmill.annotators.vllm.accounting import VERDICTS, Ledger, format_accounting, summarize


def _raw(**kw) -> dict:
    base = {"units": 10, "completions": 10, "stage_start_ms": 1_000, "stage_end_ms": 11_000}  # 10 s in the stage
    return {**base, **kw}


def test_the_ledger_sums_from_threads_and_starts_again_after_take():
    ledger = Ledger()

    def work():
        for _ in range(1000):
            ledger.add(units=1, busy_us=2)
            ledger.peak("step_tokens_max", 7)
            ledger.low("stage_start_ms", 5)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ledger.peak("step_tokens_max", 3)
    taken = ledger.take()
    assert (taken["units"], taken["busy_us"], taken["step_tokens_max"], taken["stage_start_ms"]) == (4000, 8000, 7, 5)
    again = ledger.take()
    assert again["units"] == 0 and "step_tokens_max" not in again and "stage_start_ms" not in again


def test_nothing_handled_gives_no_section():
    assert summarize({"units": 0}, engines=0) is None
    assert summarize({"units": 3}, engines=1) is None  # no stage times: nothing was fed


@pytest.mark.parametrize(
    ("times", "bound"),
    [
        ({"busy_us": 8_000_000}, "engine"),
        ({"busy_us": 2_000_000, "inline_render_us": 5_000_000}, "input rendering"),
        ({"busy_us": 2_000_000, "wait_render_us": 1_000_000, "wait_decode_us": 6_000_000}, "image decoding"),
        ({"busy_us": 2_000_000}, "Beam"),  # 8 of the 10 s unaccounted for: Beam's
    ],
)
def test_the_verdict_is_where_most_of_the_feeding_threads_time_went(times, bound):
    a = summarize(_raw(**times), engines=1)
    assert a["bound_by"] == bound and bound in VERDICTS
    assert sum(a["time_s"].values()) == pytest.approx(10.0)
    assert a["verdict"].startswith(f"bound by {bound}:") and "of the model stage's 10.0 s" in a["verdict"]
    assert a["engine_busy_share"] == pytest.approx(times["busy_us"] / 1e7)


def test_time_outside_the_model_stage_is_beams_in_the_verdict_of_the_run():
    a = summarize(_raw(busy_us=8_000_000), engines=1, run_wall_s=30.0)
    assert a["engine_busy_share"] == pytest.approx(0.8)  # of the stage's wall time
    assert a["outside_stage_s"] == pytest.approx(20.0) and a["time_s"]["Beam"] == pytest.approx(22.0)
    assert a["bound_by"] == "Beam" and "of the run's 30.0 s" in a["verdict"]


def test_several_engines_share_the_stage_wall_time():
    a = summarize(_raw(busy_us=16_000_000), engines=2)
    assert a["engine_busy_share"] == pytest.approx(0.8) and a["time_s"]["Beam"] == pytest.approx(4.0)
    assert "x 2 engines" in a["verdict"]


def test_step_figures_come_from_the_scheduler_or_else_from_the_finished_requests():
    watched = summarize(
        _raw(steps=4, watched_steps=4, step_tokens=400, prefill_tokens=380, decode_tokens=20, step_budget=1000,
             step_tokens_max=200, prompt_tokens=380, output_tokens=30),
        engines=1,
    )  # fmt: skip
    assert (watched["tokens_per_step_mean"], watched["budget_use"]) == (100.0, 0.1)
    assert (watched["prefill_tokens"], watched["decode_tokens"], watched["tokens_per_step_max"]) == (380, 20, 200)
    # engine core in another process: no scheduler view, the mean from the requests, no maximum
    remote = summarize(_raw(steps=4, prompt_tokens=380, output_tokens=30), engines=1)
    assert (remote["prefill_tokens"], remote["decode_tokens"]) == (380, 20)
    assert remote["tokens_per_step_mean"] == 100.0 and remote["tokens_per_step_max"] is None
    assert remote["queue_wait_s_mean"] is None
    lines = format_accounting("infer", remote)
    assert len(lines) == 3 and "max -" in lines[0] and lines[2].endswith(remote["verdict"])
    assert remote["encoder_s"] is None and "vision encoder" not in lines[0]  # no view of the model runner


def test_the_vision_encoders_time_is_a_share_of_the_engines_busy_time():
    a = summarize(_raw(busy_us=8_000_000, encoder_us=2_000_000, images_encoded=5), engines=1)
    assert (a["encoder_s"], a["encoder_share_of_busy"], a["images_encoded"]) == (2.0, 0.25, 5)
    assert "vision encoder 2.0 s (25 % of busy) for 5 images" in format_accounting("infer", a)[0]
