"""The measurements of ``screenmill bench vllm`` (:mod:`screenmill.pipelines.bench_vllm`): the same requests four ways,
side by side on one engine.

(a) ``ceiling``: one raw ``LLM.generate`` over every request (images decoded beforehand, timed apart: ``a'`` adds
    that reading and decoding, which any script calling ``generate`` on image files also does);
(b) ``pipeline``: ``screenmill run --annotator vllm`` (ingest, tile, RunVlm, Parquet) over the same screenshots;
(c) ``naive``: the same pipeline, its model stage feeding the engine the way Beam's RunInference does (its feeding
    policy :class:`PerBatchFeeder`): collect a batch of ``--naive-batch`` units, render it, generate it to
    completion, then read the next (the engine idles at the tail of every batch and while the next one is rendered);
(d) ``transformers``: Hugging Face ``generate``, the model card's way: ``AutoModel`` from the model's own remote code,
    one request at a time, each generating exactly as many tokens as vLLM did for it (run last, after the engine is
    released, so the two never share the accelerator's memory).

Modes (a)–(c) use the one engine of this process (:class:`screenmill.annotators.vllm.engine.SharedEngine`), built and
warmed before anything is timed, and send it identical engine inputs: the same prompts, images and sampling (greedy,
structured outputs), and image ids of the same kind (a sha256 of the screenshot's bytes, as the pipeline sends: the
ceiling's salted, the naive mode's taken from re-encoded copies of the same pixels, so no mode reuses an encoder
output another left in the engine's cache). b/c compares two feedings of the same pipeline; b/a also counts the
pipeline's own work (Beam start-up, ingest, decoding, Parquet) that the ceiling leaves out.

Requests: ``holo2-localize`` / ``holo15-localize``, one per instruction (``--per-shot`` per screenshot, short
answers); ``propose-elements``, one per screenshot (long answers: decode-heavy). Printed: seconds, requests, output
tokens, tokens/s, screenshots/s, tokens per engine step (the effective batch, from vLLM's own step histogram) and the
ratios b/a, b/a', b/c, b/d; then, for each pipeline mode, the model stage's accounting from its run manifest (where
its time went and what bounded it, :mod:`screenmill.annotators.vllm.accounting`), as ``screenmill run`` prints it.

Packing (``--pack K``, localize recipes): the pipeline once more with ``screenmill run --pack K`` on a copy of the
screenshots (the same pixels under new content ids), beside (b) on the same engine: labels, labels/s and prompt
(prefill) tokens per label of each, and the table's last line ``labels/s packed/unpacked R``.

The pipeline modes run ``screenmill run``'s entry point, which the command passes in (``run(argv, feeding)``):
this module sits beside the engine it measures and imports no pipeline.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import re
import time
from pathlib import Path

from screenmill.annotators.vllm.accounting import format_accounting
from screenmill.annotators.vllm.feeding import Feeder

MODES = ("ceiling", "pipeline", "naive", "ray", "transformers")
#: CPU flags that give bf16 matrix products in hardware (without them, oneDNN converts to fp32 and back).
NATIVE_BF16_FLAGS = ("avx512_bf16", "amx_bf16")
#: What runs without ``--modes``: all but the optional peer (``ray``: ``bash infra/peer/install.sh``).
DEFAULT_MODES = tuple(m for m in MODES if m != "ray")
RECIPES = ("holo2-localize", "holo15-localize", "propose-elements")


def make_screens(folder: Path, n: int, per_shot: int, seed: int = 0) -> Path:
    """Write ``n`` synthetic UI screenshots (varied sizes) and an instructions JSONL; return the JSONL path."""
    from PIL import Image, ImageDraw

    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(n):
        w, h = rng.choice([(1920, 1080), (1280, 800), (828, 1792), (1024, 768), (2560, 1440)])
        im = Image.new("RGB", (w, h), (rng.randrange(200, 256),) * 3)
        draw = ImageDraw.Draw(im)
        draw.rectangle([0, 0, w, h // 12], fill=(rng.randrange(256), 60, 120))
        for _ in range(12):
            x, y = rng.randrange(w - 120), rng.randrange(h // 12, h - 40)
            draw.rectangle([x, y, x + 120, y + 36], fill=(rng.randrange(256), rng.randrange(256), 200))
            draw.text((x + 8, y + 10), f"Button {rng.randrange(100)}", fill=(0, 0, 0))
        name = f"screen_{i:04d}.png"
        im.save(folder / name)
        lines += [{"image": name, "instruction": f"click Button {i}.{k}"} for k in range(per_shot)]
    path = folder.parent / "instructions.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


def recompressed(folder: Path, dest: Path) -> Path:
    """A copy of ``folder``'s PNGs with the same pixels and other bytes (another zlib level): the same work under new
    content ids, so a mode never reuses encoder outputs an earlier mode left in the engine's cache."""
    from PIL import Image

    dest.mkdir(parents=True, exist_ok=True)
    for path in sorted(folder.glob("*.png")):
        with Image.open(path) as im:
            im.save(dest / path.name, compress_level=1)
    return dest


def _units(folder: Path, instructions: Path, recipe) -> list[tuple[str, dict[str, str]]]:
    """(screenshot file name, prompt fields) per request of the ceiling (the pipeline modes build the same requests
    from the screenshots and the instructions file): one per instruction line for localize recipes, one per
    screenshot for propose."""
    if recipe.kind == "propose":
        return [(p.name, {}) for p in sorted(folder.glob("*.png"))]
    lines = map(json.loads, instructions.read_text().splitlines())
    return [(x["image"], {"instruction": x["instruction"]}) for x in lines]


def _request(recipe, fields: dict[str, str], data: bytes, image, salt: str):
    """The ceiling's (or the warm-up's) request for one unit, as RunVlm builds it; ``salt`` keeps its image ids apart
    from the pipeline modes' (the screenshot's sha256 unsalted)."""
    from screenmill.annotators.vllm.engine import Request

    image_id = f"{salt}:{hashlib.sha256(data).hexdigest()}"
    return Request(salt, recipe.prompt(**fields), (image,), recipe.answer_schema, recipe.max_tokens, (image_id,))


def _requests(folder: Path, units, recipe, engine, salt: str):
    """(prompt dicts, sampling params, (image, prompt text) pairs) for ``units``, every image decoded once."""
    from screenmill.schemas.images import load_rgb

    images: dict[str, tuple[bytes, object]] = {}
    prompts, params, items = [], [], []
    for name, fields in units:
        if name not in images:
            data = (folder / name).read_bytes()
            images[name] = (data, load_rgb(data))
        request = _request(recipe, fields, *images[name], salt)
        prompt, param = engine.engine_input(request)
        prompts.append(prompt)
        params.append(param)
        items.append((request.images[0], request.text))
    return prompts, params, items


def _generate(shared, prompts, params):
    """``LLM.generate`` on the engine's own thread, as the pipeline drives it (:meth:`SharedEngine.call`)."""
    return shared.call(lambda: shared.engine.llm.generate(prompts, params, use_tqdm=False))


def _ceiling(shared, prompts, params) -> dict:
    started = time.perf_counter()
    outs = _generate(shared, prompts, params)
    seconds = time.perf_counter() - started
    from screenmill.annotators.vllm.peer_ray import in_flight_mean

    token_ids = [list(o.outputs[0].token_ids) for o in outs]
    lengths = [len(t) for t in token_ids]
    spans = [(o.metrics.scheduled_ts, o.metrics.last_token_ts) for o in outs if getattr(o, "metrics", None)]
    return {
        "seconds": seconds,
        "requests": len(outs),
        "output_tokens": sum(lengths),
        "lengths": lengths,
        "token_ids": token_ids,  # the answers mode (e) must reproduce
        "in_flight": in_flight_mean(spans),
    }


def _pipeline(run, run_argv: list[str], shared, feeding=None) -> dict:
    """(b): ``run(run_argv, feeding)`` (``screenmill run``'s entry point, given by the command)."""
    before = dict(shared.engine.stats)
    started = time.perf_counter()
    manifest = run(run_argv, feeding)
    seconds = time.perf_counter() - started
    stats = shared.engine.stats
    return {
        "seconds": seconds,
        "requests": stats["requests"] - before["requests"],
        "output_tokens": stats["output_tokens"] - before["output_tokens"],
        "engine_busy_s": stats["busy_s"] - before["busy_s"],
        "prompt_tokens": stats["prompt_tokens"] - before["prompt_tokens"],
        "labels": manifest["tables"].get("grounding", {}).get("rows", 0),
        "accounting": manifest.get("accounting", {}).get("infer"),
    }


def _step_totals(shared) -> tuple[int, float] | None:
    """(engine steps, tokens they scheduled) so far, from vLLM's own ``vllm:iteration_tokens_total`` histogram (kept
    with ``disable_log_stats=False``, which the benchmark sets); None where the installed vLLM does not report it."""
    try:
        metrics = shared.call(shared.engine.llm.get_metrics)
    except Exception:  # noqa: BLE001 - an older vLLM or stats off: the figure is left out, the run goes on
        return None
    histograms = [m for m in metrics if m.name == "vllm:iteration_tokens_total"]
    if not histograms:
        return None
    return sum(m.count for m in histograms), sum(m.sum for m in histograms)


def _with_step_stats(shared, measure) -> dict:
    """``measure()``'s result plus the engine steps it took and the tokens per step (the effective batch: prompt and
    answer tokens the scheduler put into one forward pass, averaged; on an accelerator whose step time hardly grows
    with the batch, throughput follows it)."""
    before = _step_totals(shared)
    result = measure()
    after = _step_totals(shared)
    if before is not None and after is not None and after[0] > before[0]:
        result["engine_steps"] = after[0] - before[0]
        result["tokens_per_step"] = (after[1] - before[1]) / result["engine_steps"]
    return result


class PerBatchFeeder(Feeder):
    """The model stage's feeding policy as Beam RunInference feeds a model: collect ``batch`` units, render them all,
    then generate them to completion before the next batch is read (the engine idles at every batch's tail and while
    the next batch is rendered). Everything else is the pipeline's own code: the only difference from (b) is how the
    engine is fed."""

    def __init__(self, holder, *, batch: int, **kwargs):
        super().__init__(holder, **kwargs)
        self.batch = batch

    def feed(self):
        if len(self.queue) >= self.batch:
            yield from self.drain()

    def drain(self):
        for key, future in self.queue:  # the whole batch is rendered before it is generated
            self.wait_for(key, future)
        yield from super().drain()


def _naive(run, run_argv: list[str], shared, batch: int) -> dict:
    """(c): ``screenmill run`` as in (b), its model stage fed by :class:`PerBatchFeeder`."""
    return _pipeline(run, run_argv, shared, functools.partial(PerBatchFeeder, batch=batch))


def _transformers(engine_cfg, items: list[tuple[object, str]], lengths: list[int]) -> dict:
    """(d) The model card's way: transformers (the model's remote code where it has some), one ``generate`` per
    request, each generating exactly as many tokens as vLLM generated for it (``lengths``), so the work is the same.
    Random weights (``from_config``) when ``load_format`` is ``dummy``.

    Nemotron-VL (Holotron) defines no processor of its own: pixels come from the same tiling vLLM uses (vLLM's
    HF-style processor for this architecture) and the image placeholder of the prompt vLLM was given
    (:meth:`EngineConfig.render`) is expanded InternVL-style into ``<img>``, one context token per vision embedding
    and ``</img>``. Any other architecture: ``AutoModelForImageTextToText`` and the model's own ``AutoProcessor`` on
    that same prompt text.

    Returns:
        seconds / requests / output_tokens, or ``{"unavailable": reason}`` when transformers cannot build the model.
    """
    try:
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
        build = _nemotron_vl_generate if engine_cfg.tiled() else _image_text_generate
        generate = build(engine_cfg, device)
    except Exception as e:  # noqa: BLE001 - report the reason instead of failing the whole benchmark
        return {"unavailable": f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"}

    with torch.inference_mode():
        generate(*items[0], 2)  # warm-up, not timed
        started = time.perf_counter()
        tokens = sum(generate(image, prompt, n) for (image, prompt), n in zip(items, lengths, strict=True))
    return {"seconds": time.perf_counter() - started, "requests": len(items), "output_tokens": tokens}


def _load(engine_cfg, auto_class, config, device):
    import torch

    kwargs = {"trust_remote_code": engine_cfg.trust_remote_code, "dtype": torch.bfloat16}
    if engine_cfg.load_format == "dummy":
        model = auto_class.from_config(config, **kwargs)
    else:
        model = auto_class.from_pretrained(engine_cfg.model, revision=engine_cfg.revision, **kwargs)
    return model.to(device).eval()


def _fixed_length(model, n: int, **inputs) -> int:
    """Generate exactly ``n`` new tokens greedily; the number generated."""
    out = model.generate(**inputs, max_new_tokens=n, min_new_tokens=n, do_sample=False)
    prompt = inputs.get("input_ids")
    if prompt is not None and out.shape[-1] > n:  # decoder-only generate returns the prompt too
        return int(out.shape[-1] - prompt.shape[-1])
    return int(out.shape[-1])  # generation from inputs_embeds returns the new tokens only


def _nemotron_vl_generate(engine_cfg, device: str):
    from transformers import AutoConfig, AutoModel, AutoTokenizer
    from vllm.transformers_utils.processors.nano_nemotron_vl import NanoNemotronVLProcessor

    remote = engine_cfg.trust_remote_code  # the engine's own switch, not a second one
    config = AutoConfig.from_pretrained(engine_cfg.model, trust_remote_code=remote, revision=engine_cfg.revision)
    model = _load(engine_cfg, AutoModel, config, device)
    tokenizer = AutoTokenizer.from_pretrained(
        engine_cfg.tokenizer or engine_cfg.model, revision=engine_cfg.revision, trust_remote_code=remote
    )
    model.img_context_token_id = tokenizer.convert_tokens_to_ids(config.img_context_token)
    processor = NanoNemotronVLProcessor(
        config, tokenizer, max_model_len=engine_cfg.max_model_len, max_num_tiles=engine_cfg.max_num_tiles
    )
    per_tile = processor.num_image_token

    def generate(image, prompt: str, n: int) -> int:
        pixels = processor(text=["<image>"], images=[image], return_tensors="pt")
        tiles = int(pixels["image_num_patches"][0])
        image_text = "<img>" + config.img_context_token * (tiles * per_tile) + "</img>"
        text = engine_cfg.render(tokenizer, prompt, 1)  # the prompt vLLM was given
        ids = tokenizer(
            text.replace(engine_cfg.image_placeholder, image_text, 1), add_special_tokens=False, return_tensors="pt"
        )
        return _fixed_length(
            model,
            n,
            pixel_values=pixels["pixel_values_flat"].to(device),
            input_ids=ids["input_ids"].to(device),
            attention_mask=ids["attention_mask"].to(device),
        )

    return generate


def _image_text_generate(engine_cfg, device: str):
    from transformers import AutoConfig, AutoModelForImageTextToText, AutoProcessor

    remote = engine_cfg.trust_remote_code
    config = AutoConfig.from_pretrained(engine_cfg.model, trust_remote_code=remote, revision=engine_cfg.revision)
    model = _load(engine_cfg, AutoModelForImageTextToText, config, device)
    processor = AutoProcessor.from_pretrained(engine_cfg.model, revision=engine_cfg.revision, trust_remote_code=remote)
    tokenizer = processor.tokenizer

    def generate(image, prompt: str, n: int) -> int:
        text = engine_cfg.render(tokenizer, prompt, 1)
        inputs = processor(text=[text], images=[[image]], return_tensors="pt", add_special_tokens=False)
        return _fixed_length(model, n, **{k: v.to(device) for k, v in inputs.items()})

    return generate


def measure(
    vlm_cfg,
    run,
    run_argv: list[str],
    folder: Path,
    instructions: Path,
    tmp: Path,
    modes,
    naive_batch: int,
    pack: int = 1,
):
    """Run ``modes`` (a subset of :data:`MODES`) on the process's engine for ``vlm_cfg`` and return their results.

    Args:
        vlm_cfg: the model stage's config the pipeline modes run with (``run_argv`` parsed), preflighted.
        run: ``screenmill run``'s entry point, ``run(argv, feeding) -> manifest``.
        run_argv: the pipeline modes' ``screenmill run`` arguments (over ``folder``).
        folder, instructions: the screenshots and instructions file (:func:`make_screens`).
        tmp: a scratch folder (the naive mode's copy of the screenshots and its output).
        naive_batch: units per batch in the naive mode.
        pack: > 1: also the pipeline with ``--pack pack`` (mode ``packed``), and (b) if ``modes`` leave it out.

    Returns:
        ``{mode: {"seconds", "requests", "output_tokens", ...}}``; the transformers mode may hold ``unavailable``.
    """
    from screenmill.annotators.vllm.engine import SharedEngine

    results: dict[str, dict] = {}
    recipe = vlm_cfg.get_recipe()
    started = time.perf_counter()
    shared = SharedEngine.get(vlm_cfg.engine)
    engine_build_s = time.perf_counter() - started  # 0 when an earlier call in this process built it
    units = _units(folder, instructions, recipe)
    warm, warm_params, _ = _requests(folder, units[:2], recipe, shared.engine, "warm-up")
    _generate(shared, warm, warm_params)  # warm-up, not timed
    started = time.perf_counter()
    prompts, params, items = _requests(folder, units, recipe, shared.engine, "ceiling")
    decode_s = time.perf_counter() - started  # reading + decoding the image files, building the inputs
    if "ceiling" in modes:
        results["ceiling"] = _with_step_stats(shared, lambda: _ceiling(shared, prompts, params))
        results["ceiling"]["decode_s"] = decode_s
    if "pipeline" in modes or pack > 1:
        results["pipeline"] = _with_step_stats(shared, lambda: _pipeline(run, run_argv, shared))
        results["pipeline"]["engine_build_s"] = engine_build_s
    if pack > 1:
        packed_in = recompressed(folder, tmp / "screens-packed")
        packed_argv = [*run_argv, "--input", str(packed_in), "--output", str(tmp / "out-packed"), "--pack", str(pack)]
        results["packed"] = _with_step_stats(shared, lambda: _pipeline(run, packed_argv, shared))
        results["packed"]["pack"] = pack
    if "naive" in modes:
        naive_in = recompressed(folder, tmp / "screens-naive")
        naive_argv = [*run_argv, "--input", str(naive_in), "--output", str(tmp / "out-naive")]  # last wins
        results["naive"] = _with_step_stats(shared, lambda: _naive(run, naive_argv, shared, naive_batch))
    if "ray" in modes:  # (e): the peer, Ray Data LLM, on the same requests (annotators/vllm/peer_ray.py)
        from screenmill.annotators.vllm import peer_ray

        reference = results.get("ceiling", {}).get("token_ids")
        results["ray"] = peer_ray.measure(vlm_cfg.engine, folder, units, prompts, params, reference)
    if "transformers" in modes:
        lengths = results.get("ceiling", {}).pop("lengths", None) or [recipe.max_tokens] * len(items)
        SharedEngine.release()  # the transformers model gets the memory the engine held
        results["transformers"] = _transformers(vlm_cfg.engine, items, lengths)

    results.get("ceiling", {}).pop("lengths", None)
    results.get("ceiling", {}).pop("token_ids", None)
    return results


def cpu_flags(cpuinfo: str) -> tuple[str, set[str]]:
    """The model name and the flags of the first processor in ``cpuinfo`` (the text of ``/proc/cpuinfo``)."""
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
    flags = re.search(r"^flags\s*:\s*(.+)$", cpuinfo, re.M)
    return (model.group(1).strip() if model else "unknown"), set(flags.group(1).split() if flags else ())


def machine_profile(size: int = 512, seconds: float = 0.5) -> dict:
    """What this machine's CPU does with the engine's dtype: model, torch's CPU capability, whether bf16 products
    are native (:data:`NATIVE_BF16_FLAGS`), and fp32 / bf16 matrix-product GFLOP/s (the fastest of the ``size``³
    products made in about ``seconds`` per dtype, so a loaded machine reads closer to what its CPU can).

    Seconds of an engine on one CPU say little on another: on a CPU without native bf16, a bf16 product costs
    8-9× an fp32 one (measured alone on an AVX2 EPYC), so FLOP-heavy parts (a vision encoder) slow down far more than
    the small, overhead-bound steps of a tiny LM. The bench prints this so that runs on different machines can be
    told apart; compare ratios within one run.

    Returns:
        ``{"cpu", "capability", "native_bf16", "gflops_fp32", "gflops_bf16"}``; ``cpu`` is ``unknown`` where
        ``/proc/cpuinfo`` cannot be read.
    """
    import torch

    try:
        model, flags = cpu_flags(Path("/proc/cpuinfo").read_text())
    except OSError:
        model, flags = "unknown", set()
    out = {
        "cpu": model,
        "capability": torch.backends.cpu.get_cpu_capability(),
        "native_bf16": any(f in flags for f in NATIVE_BF16_FLAGS),
    }
    for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        a, b = torch.randn(size, size).to(dtype), torch.randn(size, size).to(dtype)
        torch.nn.functional.linear(a, b)  # warm-up; a model's linear layers run this
        best, started = float("inf"), time.perf_counter()
        while time.perf_counter() - started < seconds:  # the fastest product: what the CPU can, not its load
            t = time.perf_counter()
            torch.nn.functional.linear(a, b)
            best = min(best, time.perf_counter() - t)
        out[f"gflops_{name}"] = 2 * size**3 / best / 1e9
    return out


def describe_machine(m: dict) -> str:
    """One line of :func:`machine_profile`."""
    native = "yes" if m["native_bf16"] else f"no ({'/'.join(NATIVE_BF16_FLAGS)} absent)"
    return (
        f"machine: {m['cpu']}, torch CPU capability {m['capability']}, native bf16 {native}; matrix products "
        f"fp32 {m['gflops_fp32']:.1f} GFLOP/s, bf16 {m['gflops_bf16']:.1f} GFLOP/s "
        f"(bf16/fp32 {m['gflops_bf16'] / max(m['gflops_fp32'], 1e-9):.2f})"
    )


def report(results: dict[str, dict], n: int) -> dict[str, float]:
    """Print the side-by-side table of ``results`` (:func:`measure`) for ``n`` screenshots, adding tokens/s and
    screenshots/s to each; return the throughput ratios (pipeline over each other mode)."""
    print(f"{'mode':<13} {'seconds':>8} {'requests':>9} {'out tok':>8} {'tok/s':>8} {'shots/s':>8} {'tok/step':>8}")
    for mode, r in results.items():
        if "unavailable" in r:
            print(f"{mode:<13} unavailable: {r['unavailable']}")
            continue
        r["tokens_per_s"] = r["output_tokens"] / r["seconds"]
        r["shots_per_s"] = n / r["seconds"]
        per_step = f"{r['tokens_per_step']:>8.1f}" if "tokens_per_step" in r else f"{'-':>8}"
        print(
            f"{mode:<13} {r['seconds']:>8.2f} {r['requests']:>9} {r['output_tokens']:>8} "
            f"{r['tokens_per_s']:>8.1f} {r['shots_per_s']:>8.2f} {per_step}"
        )
    ratios = {}
    b = results.get("pipeline")
    for other, name in (("ceiling", "b/a"), ("naive", "b/c"), ("transformers", "b/d")):
        o = results.get(other)
        if b and o and "unavailable" not in o:
            ratios[name] = o["seconds"] / b["seconds"]  # same work: the time ratio is the throughput ratio
    if b and "ceiling" in results:
        a = results["ceiling"]
        ratios["b/a'"] = (a["seconds"] + a["decode_s"]) / b["seconds"]
        print(f"a' = the ceiling plus reading and decoding the image files first: {a['decode_s']:.2f} s")
    if "ray" in results:
        from screenmill.annotators.vllm import peer_ray

        ratios.update(peer_ray.ratios(results))
        print(peer_ray.describe(results["ray"]))
    print("ratios (throughput, pipeline over other): " + ", ".join(f"{k} {v:.2f}" for k, v in ratios.items()))
    for mode, r in results.items():
        if r.get("accounting"):
            print("\n".join(format_accounting(mode, r["accounting"])))
    return ratios


def report_pack(results: dict[str, dict]) -> float:
    """Print labels, labels/s and prompt (prefill) tokens per label of the unpacked and packed pipeline runs of
    ``results`` (:func:`measure` with ``pack``), ending with the line ``labels/s packed/unpacked R``; return R."""
    print(f"{'packing':<13} {'seconds':>8} {'requests':>9} {'labels':>7} {'labels/s':>9} {'prefill/label':>14}")
    rates = {}
    for mode, name in (("pipeline", "unpacked"), ("packed", f"packed K={results['packed']['pack']}")):
        r = results[mode]
        r["labels_per_s"] = rates[mode] = r["labels"] / r["seconds"]
        r["prefill_per_label"] = r["prompt_tokens"] / max(r["labels"], 1)
        print(
            f"{name:<13} {r['seconds']:>8.2f} {r['requests']:>9} {r['labels']:>7} {r['labels_per_s']:>9.2f} "
            f"{r['prefill_per_label']:>14.1f}"
        )
    prefill = results["pipeline"]["prefill_per_label"] / max(results["packed"]["prefill_per_label"], 1e-9)
    print(f"prefill tokens per label unpacked/packed {prefill:.2f}")
    ratio = rates["packed"] / rates["pipeline"] if rates["pipeline"] else float("inf")
    print(f"labels/s packed/unpacked {ratio:.2f}")
    return ratio
