"""The vLLM labelling config's checks that need no engine: config checks, preflight, what ``screenmill run`` refuses
up front (the model DoFn: tests/annotators/vllm/test_expand.py, work units: tests/annotators/vllm/test_units.py)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import pytest
from screenmill.annotators.vllm.config import EngineConfig
from screenmill.annotators.vllm.engine import Completion, EngineInputError, Request, VlmEngine
from screenmill.annotators.vllm.expand import _RunEngine
from screenmill.schemas.keys import config_dict
from screenmill.schemas.records import Screenshot, TilePlan
from screenmill.stages.label.vlm import VlmConfig

ENGINE = EngineConfig(model="/models/Holotron-12B")


def _shot(step=None, episode=None, task=None, action=None, sha="a" * 64, w=1920, h=1080):
    plan = TilePlan(4, 2, 512, True, 9, 2304, 2048, 1024, "closest_aspect")
    return Screenshot(
        screenshot_id=sha,
        source_uri=f"/data/{episode or 'loose'}/{step}.png",
        width=w,
        height=h,
        format="PNG",
        source_mode="RGB",
        exif_orientation=1,
        byte_size=1,
        ingest_time=dt.datetime(2026, 11, 23, tzinfo=dt.UTC),
        run_id="r",
        episode_id=episode,
        step_index=step,
        tile_plan=plan,
        episode_task=task,
        recorded_action=action,
    )


def test_config_checks():
    cfg = VlmConfig(run_id="r", config_hash="h", engine=ENGINE)
    assert cfg.annotator == "vllm:Holotron-12B"
    assert VlmConfig(run_id="r", config_hash="h", engine=EngineConfig(model="Hcompany/Holotron-12B")).annotator == (
        "vllm:Holotron-12B"
    )
    with pytest.raises(ValueError, match="instructions"):
        VlmConfig(run_id="r", config_hash="h", engine=ENGINE, recipe="holo2-localize")
    with pytest.raises(KeyError):
        VlmConfig(run_id="r", config_hash="h", engine=ENGINE, recipe="nope")
    with pytest.raises(ValueError):
        VlmConfig(run_id="r", config_hash="h", engine=ENGINE, history=4)
    assert VlmConfig(run_id="r", config_hash="h", engine=ENGINE, recipe_version="9").get_recipe().version == "9"


def test_thread_counts_are_checked_and_left_out_of_the_config_hash():
    from screenmill.schemas.keys import config_hash

    base = VlmConfig(run_id="r", config_hash="h", engine=ENGINE)
    more = VlmConfig(run_id="r", config_hash="h", engine=ENGINE, decode_threads=8, render_threads=16)
    inline = VlmConfig(run_id="r", config_hash="h", engine=ENGINE, render_threads=0)  # on the engine's thread
    other_recipe = VlmConfig(run_id="r", config_hash="h", engine=ENGINE, recipe="navigate-step")
    assert config_hash(base) == config_hash(more) == config_hash(inline)  # execution only: a rerun redoes nothing
    assert config_hash(base) != config_hash(other_recipe)
    for bad in (-1, 65):
        with pytest.raises(ValueError, match="render_threads must be 0..64"):
            VlmConfig(run_id="r", config_hash="h", engine=ENGINE, render_threads=bad)
    with pytest.raises(ValueError, match="decode_threads must be 1..64"):
        VlmConfig(run_id="r", config_hash="h", engine=ENGINE, decode_threads=0)


def test_engine_config_defaults_for_hybrid_models():
    kwargs = ENGINE.llm_kwargs()
    assert kwargs["enable_prefix_caching"] is False
    assert kwargs["mm_processor_cache_gb"] == 0
    assert kwargs["limit_mm_per_prompt"] == {"image": 4}
    assert kwargs["mm_processor_kwargs"] == {"max_num_tiles": 12}
    assert kwargs["dtype"] == "bfloat16"
    assert "kv_cache_memory_bytes" not in kwargs and "revision" not in kwargs
    assert EngineConfig(model="m", kv_cache_memory_bytes=2**30).llm_kwargs()["kv_cache_memory_bytes"] == 2**30
    for bad in ({"max_images_per_prompt": 5}, {"chat_format": "x"}, {"structured_backend": "x"}, {"model": ""}):
        with pytest.raises(ValueError):
            EngineConfig(**{"model": "m", **bad})


def test_completion_confidence():
    assert Completion("k", "{}", 10, 4, "stop", None, -4 * 0.1).confidence == pytest.approx(0.904837, rel=1e-5)
    assert Completion("k", "{}", 10, 0, "stop").confidence == 0.0


def test_preflight_offline_needs_the_hub_model_in_the_local_cache(tmp_path, monkeypatch):
    """With ``HF_HUB_OFFLINE`` set (offline clusters), a hub id that is not cached is refused before the run starts,
    not by vLLM inside a worker; a cached one, or the same id with the hub reachable, goes on."""
    pytest.importorskip("vllm")
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    engine = EngineConfig(model="Hcompany/Holotron-12B")
    with pytest.raises(FileNotFoundError, match="'Hcompany/Holotron-12B' is not in the local Hugging Face cache"):
        engine.preflight()
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    engine.preflight()  # online: left to vLLM's download
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    engine.preflight(check_imports=False)  # the model runs on workers with a cache of their own
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    repo = tmp_path / "models--Hcompany--Holotron-12B"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("abc123")
    (repo / "snapshots" / "abc123").mkdir(parents=True)
    (repo / "snapshots" / "abc123" / "config.json").write_text("{}")
    engine.preflight()  # cached: goes on


def test_preflight_names_a_missing_model_dir(tmp_path, monkeypatch):
    pytest.importorskip("vllm")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        EngineConfig(model=str(tmp_path / "nope")).preflight()
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="config.json"):
        EngineConfig(model=str(tmp_path / "empty")).preflight()
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    EngineConfig(model="Hcompany/Holotron-12B").preflight()  # a hub id is left to vLLM


@pytest.mark.parametrize(
    ("architectures", "tiled"),
    [(None, True), (["NemotronH_Nano_VL_V2"], True), (["Idefics3ForConditionalGeneration"], False), ([], False)],
)
def test_the_tile_cap_goes_only_to_models_the_tile_plan_describes(tmp_path, architectures, tiled):
    model = tmp_path / "model"
    model.mkdir()
    if architectures is not None:  # None: no config.json here (a hub id or a remote path) is taken as Holotron
        (model / "config.json").write_text(json.dumps({"architectures": architectures}))
    engine = EngineConfig(model=str(model), max_num_tiles=6)
    assert engine.tiled() is tiled
    assert engine.llm_kwargs().get("mm_processor_kwargs") == ({"max_num_tiles": 6} if tiled else None)
    assert EngineConfig(model="Hcompany/Holotron-12B").tiled()


def test_a_pixel_resized_recipe_or_pre_resize_is_refused_for_a_model_tiled_otherwise(tmp_path):
    pytest.importorskip("vllm")
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["Idefics3ForConditionalGeneration"]}))
    engine = EngineConfig(model=str(model))
    cfg = VlmConfig(run_id="r", config_hash="h", engine=engine, recipe="holo15-localize", instructions="i.jsonl")
    with pytest.raises(ValueError, match="holo15-localize answers in pixels.*Idefics3ForConditionalGeneration"):
        cfg.preflight()
    VlmConfig(run_id="r", config_hash="h", engine=engine, recipe="holo2-localize", instructions="i").preflight()
    with pytest.raises(ValueError, match="--pre-resize"):
        VlmConfig(run_id="r", config_hash="h", engine=engine, pre_resize=True).preflight()
    (model / "config.json").write_text(json.dumps({"architectures": ["NemotronH_Nano_VL_V2"]}))
    cfg.preflight(check_imports=False)  # Holotron's resize is the plan's own: nothing to refuse


def test_preflight_checks_the_modules_the_architecture_needs(tmp_path, monkeypatch):
    pytest.importorskip("vllm")
    from screenmill.annotators.vllm import config as vllm_config

    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["TinyArch"]}))
    monkeypatch.setitem(vllm_config.ARCHITECTURE_IMPORTS, "TinyArch", ("screenmill_absent_module.sub",))
    with pytest.raises(ImportError, match=r"TinyArch with `import screenmill_absent_module.sub`.*install the package"):
        EngineConfig(model=str(model)).preflight()
    monkeypatch.setitem(vllm_config.ARCHITECTURE_IMPORTS, "TinyArch", ("json",))
    EngineConfig(model=str(model)).preflight()  # importable: nothing to say
    (model / "config.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a JSON object"):
        EngineConfig(model=str(model)).preflight()


@pytest.fixture
def nemotron_vl_without_torchvision(tmp_path, monkeypatch):
    """A local Nemotron-VL (Holotron) model folder, in a process where torchvision cannot be imported (the tests'
    stand-in taken out of ``sys.modules`` if another module left it; skipped where a real torchvision is installed)."""
    pytest.importorskip("vllm")
    import importlib.util
    import sys

    for name in ("torchvision", "torchvision.transforms"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    if importlib.util.find_spec("torchvision") is not None:
        pytest.skip("torchvision is installed here")
    model = tmp_path / "Holotron-12B"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["NemotronH_Nano_VL_V2"]}))
    return model


def test_run_refuses_a_nemotron_vl_model_without_torchvision_up_front(tmp_path, nemotron_vl_without_torchvision):
    """CPU machines have no torchvision build: vLLM would fail deep inside a worker ("failed to be inspected");
    the run refuses up front and says what is missing."""
    from screenmill.pipelines.run import run

    (tmp_path / "in").mkdir()
    with pytest.raises(SystemExit, match=r"NemotronH_Nano_VL_V2 with `import torchvision.transforms`.*torchvision"):
        run(["--input", str(tmp_path / "in"), "--output", str(tmp_path / "out"), "--annotator", "vllm",
             "--model", str(nemotron_vl_without_torchvision)])  # fmt: skip
    assert not (tmp_path / "out").exists()


def test_remote_workers_check_the_architecture_imports_themselves(nemotron_vl_without_torchvision):
    """On Dask or Dataflow the model loads in the workers' environment, not the driver's: the driver skips the import
    check, and the model DoFn's setup() runs it, refusing before any engine is built."""
    from screenmill.annotators.vllm.engine import SharedEngine

    engine = EngineConfig(model=str(nemotron_vl_without_torchvision))
    engine.preflight(check_imports=False)  # a driver without torchvision submitting to GPU workers
    before = SharedEngine.current()
    with pytest.raises(ImportError, match=r"NemotronH_Nano_VL_V2 with `import torchvision.transforms`"):
        _RunEngine(VlmConfig(run_id="r", config_hash="h", engine=engine)).setup()
    assert SharedEngine.current() is before  # refused before an engine was built


@pytest.mark.parametrize(
    ("option", "reason"),
    [
        (("--render-threads", "-1"), "--render-threads: must be in 0..64, got -1"),
        (("--decode-threads", "65"), "--decode-threads: must be in 1..64, got 65"),
        (("--max-in-flight", "0"), "--max-in-flight: must be >= 1, got 0"),
    ],
)
def test_run_refuses_bad_model_stage_options_with_the_reason(tmp_path, option, reason):
    from screenmill.pipelines.run import run

    (tmp_path / "in").mkdir()
    with pytest.raises(SystemExit, match=f"^screenmill run: .*{reason}"):
        run(["--input", str(tmp_path / "in"), "--output", str(tmp_path / "out"), "--annotator", "vllm", *option])
    assert not (tmp_path / "out").exists()


def test_run_refuses_a_missing_model_before_starting(tmp_path):
    pytest.importorskip("vllm")
    from screenmill.pipelines.run import run

    (tmp_path / "in").mkdir()
    with pytest.raises(SystemExit, match="does not exist"):
        run(["--input", str(tmp_path / "in"), "--output", str(tmp_path / "out"), "--annotator", "vllm",
             "--model", str(tmp_path / "no_model")])  # fmt: skip
    assert not (tmp_path / "out").exists()


def test_engine_input_carries_image_ids_as_multi_modal_uuids():
    pytest.importorskip("vllm")
    from PIL import Image

    engine = VlmEngine(EngineConfig(model="m", chat_format="plain"))  # plain format: no tokenizer, no engine
    images = (Image.new("RGB", (8, 8)), Image.new("RGB", (8, 8), "red"))
    prompt, _ = engine.engine_input(Request("k", "where?", images, {"type": "object"}, 8, ("id-1", "id-2")))
    assert prompt["multi_modal_uuids"] == {"image": ["id-1", "id-2"]}
    assert prompt["prompt"] == "<image>\n<image>\nwhere?"
    prompt, _ = engine.engine_input(Request("k", "where?", images[:1], {"type": "object"}, 8))
    assert "multi_modal_uuids" not in prompt
    with pytest.raises(ValueError, match="2 image ids for 1 images"):
        engine.engine_input(Request("k", "where?", images[:1], {"type": "object"}, 8, ("id-1", "id-2")))
    engine._llm = object()  # submit() refuses the request before it reaches the engine
    with pytest.raises(EngineInputError, match="image ids"):
        engine.submit(Request("k", "where?", images[:1], {"type": "object"}, 8, ("id-1", "id-2")))


def test_packing_is_checked_and_recorded_by_the_recipe_version_the_hash_sees():
    base = VlmConfig(run_id="r", config_hash="h", engine=ENGINE, recipe="holo2-localize", instructions="i.jsonl")
    packed = dataclasses.replace(base, pack=8)
    assert packed.get_recipe().version == "1+pack8" and packed.get_recipe(packed=False).version == "1"
    assert base.get_recipe().version == "1"
    view = base.hash_view()
    assert "pack" not in view and view["recipe_version"] == "1"
    legacy = config_dict(base)
    legacy.pop("pack")
    assert view == {**legacy, "recipe_version": "1"}  # an unpacked run keeps the hash it had before packing
    assert packed.hash_view()["recipe_version"] == "1+pack8"
    assert packed.hash_view() != dataclasses.replace(base, pack=4).hash_view() != view
    with pytest.raises(ValueError, match="only localize recipes pack"):
        VlmConfig(run_id="r", config_hash="h", engine=ENGINE, pack=2)
    with pytest.raises(ValueError, match="pack must be 1..64"):
        dataclasses.replace(base, pack=0)


def test_run_refuses_pack_for_a_recipe_that_does_not_localize(tmp_path):
    from screenmill.pipelines.run import run

    (tmp_path / "in").mkdir()
    with pytest.raises(SystemExit, match="only localize recipes pack"):
        run(["--input", str(tmp_path / "in"), "--output", str(tmp_path / "out"), "--annotator", "vllm",
             "--pack", "4"])  # fmt: skip
    assert not (tmp_path / "out").exists()
