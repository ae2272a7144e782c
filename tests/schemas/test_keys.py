"""The keys of incremental runs: the default run's ``config_hash`` is pinned, and the hashing properties hold (what
changes the hash, what must not, key order)."""

from __future__ import annotations

import dataclasses

import pytest
from screenmill.pipelines.options import run_configs
from screenmill.pipelines.run import build_parser
from screenmill.schemas.keys import EXECUTION_ONLY, config_dict, config_hash
from screenmill.stages.label.ocr import AnnotateConfig
from screenmill.stages.tile import TileConfig

# The config hash of `screenmill run --input in --output out` (OCR annotator, recipe 88, default tiling). A change
# here re-labels every output: change it only with a change meant to change the default run's labels (a new OCR
# recipe version, a new default), and say so in the commit. Older recipe versions are no longer pinned one by one:
# test_every_recipe_version_has_a_hash_of_its_own shows that each still gets a hash of its own. Last change: OCR
# revision 88, the detector's scale from the glyphs' height (eight glyph_blob_* thresholds; join model as in 86).
DEFAULT_RUN_HASH = "743fdbdfcfff33a8ab91eca6b7d783f9"


@dataclasses.dataclass(frozen=True)
class _Engine:
    model: str = "m"
    max_num_seqs: int = 64
    tensor_parallel_size: int = 1


@dataclasses.dataclass(frozen=True)
class _Labeller:
    run_id: str
    config_hash: str
    pattern: str
    recipe: str
    engine: _Engine
    options: tuple
    instructions: str | None
    decode_threads: int = 4


def _default_args(*argv: str):
    args, _ = build_parser().parse_known_args(["--input", ".", "--output", "out", *argv])  # an input that exists
    return args


def test_the_default_run_config_hash_is_pinned():
    assert run_configs(_default_args(), "20261123T154538Z-a1b2c3", False).config_hash == DEFAULT_RUN_HASH
    # the same settings built directly: the run's hash is the label config's and the tiling config's
    assert config_hash(AnnotateConfig(run_id="r", config_hash="pending"), TileConfig(run_id="r")) == DEFAULT_RUN_HASH


def test_the_run_and_execution_only_settings_leave_the_hash_alone():
    other_run = _default_args("--num-shards", "3", "--ocr-threads", "2")
    assert run_configs(other_run, "20261124T000000Z-ffffff", False).config_hash == DEFAULT_RUN_HASH


def test_execution_only_fields_nested_or_in_option_pairs_are_left_out(tmp_path):
    instructions = tmp_path / "i.jsonl"
    instructions.write_text('{"image": "a.png", "instruction": "click OK"}\n')
    options = (("intra_op_threads", 2), ("box_thresh", 0.5))
    cfg = _Labeller("20261123T154538Z-a1b2c3", "pending", "in/*", "localize", _Engine(), options, str(instructions))
    base = config_hash(cfg)
    execution_only = dataclasses.replace(
        cfg,
        run_id="x",
        config_hash="other",
        pattern="elsewhere/*.png",
        engine=_Engine(max_num_seqs=8, tensor_parallel_size=4),
        options=(("intra_op_threads", 8), ("box_thresh", 0.5)),
        decode_threads=1,
    )
    assert config_hash(execution_only) == base
    assert {"intra_op_threads", "max_num_seqs", "tensor_parallel_size", "decode_threads"} <= EXECUTION_ONLY
    # what the output depends on does change it
    assert config_hash(dataclasses.replace(cfg, recipe="navigate")) != base
    assert config_hash(dataclasses.replace(cfg, engine=_Engine(model="other"))) != base
    assert config_hash(dataclasses.replace(cfg, options=(("box_thresh", 0.6),))) != base


def test_an_instructions_file_counts_by_its_content_not_its_path(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text('{"image": "a.png", "instruction": "click OK"}\n')
    second.write_text(first.read_text())
    cfg = _Labeller("r", "pending", "in/*", "localize", _Engine(), (), str(first))
    assert config_hash(cfg) == config_hash(dataclasses.replace(cfg, instructions=str(second)))
    second.write_text('{"image": "a.png", "instruction": "click Cancel"}\n')
    assert config_hash(cfg) != config_hash(dataclasses.replace(cfg, instructions=str(second)))


def test_key_order_does_not_matter_but_the_values_and_configs_do():
    d = config_dict(AnnotateConfig(run_id="r", config_hash="pending"))
    assert config_hash(dict(reversed(list(d.items())))) == config_hash(d)
    tile = TileConfig(run_id="r")
    ocr = AnnotateConfig(run_id="r", config_hash="pending")
    assert config_hash(tile, ocr) != config_hash(ocr, tile)  # one part per config, in the order given
    assert config_hash(ocr, dataclasses.replace(tile, max_tiles=6)) != DEFAULT_RUN_HASH
    assert config_hash(dataclasses.replace(ocr, drop_glyphs=False), tile) != DEFAULT_RUN_HASH
    assert config_hash(dataclasses.replace(ocr, glyph_min_confidence=0.8), tile) != DEFAULT_RUN_HASH
    assert config_hash(ocr, tile, {"viewports": ["800x600"]}) != DEFAULT_RUN_HASH  # rendering pages adds a part


def test_every_recipe_version_has_a_hash_of_its_own():
    ocr = AnnotateConfig(run_id="r", config_hash="pending")
    tile = TileConfig(run_id="r")
    versions = [str(v) for v in range(1, 100)]
    hashes = {config_hash(dataclasses.replace(ocr, recipe_version=v), tile) for v in versions}
    assert len(hashes) == len(versions)
    assert config_hash(dataclasses.replace(ocr, recipe_version=ocr.recipe_version), tile) == DEFAULT_RUN_HASH


def test_the_join_models_version_is_in_the_default_hash():
    """The default grouping is the packaged join model: its version is an annotator option however the config is
    built (a version that is not the packaged model's is refused); the rules alone (``--ocr-join rules``) have a hash
    of their own."""
    from screenmill.annotators.ocr_model import packaged_version

    ocr, tile = AnnotateConfig(run_id="r", config_hash="pending"), TileConfig(run_id="r")
    assert dict(ocr.annotator_options)["grouping_model"] == packaged_version()
    run = run_configs(_default_args(), "r", False)
    assert dict(run.label.annotator_options)["grouping_model"] == packaged_version()
    with pytest.raises(ValueError, match="is not the packaged model"):  # a label set names the model it came from
        dataclasses.replace(ocr, annotator_options=(("grouping_model", "gb1-000000000000"),))
    assert config_hash(ocr, tile) == DEFAULT_RUN_HASH
    rules = run_configs(_default_args("--ocr-join", "rules"), "r", False)
    assert "grouping_model" not in dict(rules.label.annotator_options)
    assert rules.config_hash != DEFAULT_RUN_HASH
