"""End-to-end runs of `screenmill run` on real Beam runners, asserting on the Parquet written to disk."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from screenmill.pipelines.run import run
from screenmill.schemas.records import DeadLetter, GroundingLabel, Screenshot
from screenmill.schemas.tables import read_shards

from tests.conftest import png_bytes, ui_image


def _episode(folder, steps: list[str], manifest: dict | None = None):
    folder.mkdir(parents=True)
    (folder / "episode.json").write_text(json.dumps(manifest or {"episode_id": folder.name, "task_en": "t"}))
    (folder / "steps.jsonl").write_text("\n".join(steps) + "\n")


def test_bad_inputs_land_where_they_should(bad_inputs, tmp_path):
    folder, expected = bad_inputs
    good = (folder / "good.webp").read_bytes()
    ep = folder / "ep1"
    _episode(
        ep,
        [
            json.dumps({"step": 0, "screenshot": "s0.webp"}),
            json.dumps({"step": 1, "screenshot": "../good.webp"}),
            json.dumps({"step": 2, "screenshot": "missing.png"}),
            "{not json",
            json.dumps({"step": 4, "screenshot": "s0.webp"}),
        ],
    )
    (ep / "s0.webp").write_bytes(good)
    (ep / "extra.png").write_bytes(png_bytes(ui_image(seed=11)))  # in the folder, named by no step
    broken = folder / "ep_broken"
    broken.mkdir()
    (broken / "episode.json").write_text("{broken")
    (broken / "only.png").write_bytes(png_bytes(ui_image(seed=12)))

    out = tmp_path / "out"
    manifest = run(["--input", str(folder), "--output", str(out), "--annotator", "none", "--dt", "2026-11-23"])

    dead = read_shards(str(out), "_dead_letter/ingest").to_pylist()
    reasons = {}
    for row in dead:
        reasons.setdefault(row["reason"], []).append(row["input_id"])
    for name, reason in expected.items():
        if reason is None:
            continue
        assert any(i.endswith("/" + name) for i in reasons.get(reason, [])), (name, reason, reasons)
    assert any(i.endswith("steps.jsonl:2") for i in reasons["path_outside_root"])
    assert any(i.endswith("steps.jsonl:3") for i in reasons["missing_file"])
    assert any(i.endswith("steps.jsonl:4") for i in reasons["bad_episode_manifest"])
    assert any(i.endswith("ep_broken/episode.json") for i in reasons["bad_episode_manifest"])
    assert all(row["error"] and row["stage"] == "ingest" for row in dead)

    shots = read_shards(str(out), "screenshots").to_pylist()
    by_name = {(r["source_uri"].rsplit("/", 1)[-1], r["episode_id"], r["step_index"]): r for r in shots}
    accepted = {n for n, r in expected.items() if r is None}
    assert {n for n, _, _ in by_name} == accepted | {"s0.webp", "extra.png", "only.png"}
    # the same bytes at two steps of an episode stay two rows; the loose copy is a third occurrence
    assert ("s0.webp", "ep1", 0) in by_name and ("s0.webp", "ep1", 4) in by_name
    assert by_name[("s0.webp", "ep1", 0)]["episode_task"] == "t"
    assert by_name[("s0.webp", "ep1", 0)]["recorded_action"] is None
    assert by_name[("extra.png", None, None)]["episode_task"] is None
    assert ("extra.png", None, None) in by_name and ("only.png", None, None) in by_name
    rotated = by_name[("exif_rotated.jpg", None, None)]
    assert (rotated["width"], rotated["height"], rotated["exif_orientation"]) == (200, 400, 6)
    assert by_name[("sixteen_bit.png", None, None)]["source_mode"].startswith("I;16")
    assert by_name[("cmyk.jpg", None, None)]["source_mode"] == "CMYK"
    assert all(r["tile_plan"]["image_tokens"] > 0 for r in shots)

    c = manifest["counts"]["ingest"]
    assert c["total"] == c["forwarded"] + sum(v for k, v in c.items() if k.startswith("dropped_"))
    assert c["ignored"] >= 1  # notes.txt
    assert c["forwarded"] == len(shots)
    assert sum(v for k, v in c.items() if k.startswith("dropped_")) == len(dead)


def test_tables_use_the_explicit_schemas_and_commit_markers(bad_inputs, tmp_path):
    folder, _ = bad_inputs
    out = tmp_path / "out"
    run(["--input", str(folder / "*.png"), "--output", str(out), "--annotator", "none", "--dt", "2026-11-23"])
    for table, record in (("screenshots", Screenshot), ("_dead_letter/ingest", DeadLetter)):
        part = out / table / "dt=2026-11-23"
        files = sorted(part.glob("part-*.parquet"))
        assert files and (part / "_SUCCESS").exists()
        assert all(f.name.endswith(f"-of-{len(files):05d}.parquet") for f in files)
        assert pq.read_schema(files[0]).remove_metadata().equals(record.SCHEMA.remove_metadata())
        assert not list(part.glob(".*"))  # no temp files left behind


def test_a_rerun_with_nothing_new_writes_nothing_new(bad_inputs, tmp_path):
    folder, _ = bad_inputs
    out = tmp_path / "out"
    base = ["--input", str(folder), "--output", str(out), "--annotator", "none", "--dt", "2026-11-23"]
    first = run(base + ["--num-shards", "3"])
    data = {p.relative_to(out): p.read_bytes() for p in out.rglob("part-*.parquet") if "_dead_letter" not in str(p)}
    second = run(base + ["--num-shards", "2"])  # shard count is execution only: nothing is redone
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("part-*.parquet") if "_dead_letter" not in str(p)}
    assert after == data and data  # same files, same bytes: no screenshot, label or _done row was written again
    hashed = first["counts"]["ingest"]["total"] - first["counts"]["ingest"].get("dropped_unsupported_format", 0)
    assert second["counts"]["ingest"]["skipped_done"] == hashed
    assert second["counts"]["ingest"]["forwarded"] == 0
    # inputs refused before their bytes could be hashed (here a .gif) are reported again by every run
    dead = read_shards(str(out), "_dead_letter/ingest").to_pylist()
    assert sorted({d["run_id"] for d in dead if d["reason"] == "unsupported_format"}) == sorted(
        [first["run_id"], second["run_id"]]
    )
    assert len(list((out / "_runs").glob("*.json"))) == 2
    assert not (out / "_staging").exists()


def _committed_counts(out, run_id: str, dt: str) -> dict[str, dict[str, int]]:
    """What the manifest's ``tables`` used to be computed from: the footers of the run's committed shards."""
    found: dict[str, dict[str, int]] = {}
    for path in sorted(out.rglob(f"dt={dt}/part-{run_id}-*.parquet")):
        entry = found.setdefault(str(path.parent.parent.relative_to(out)), {"rows": 0, "shards": 0})
        entry["rows"] += pq.ParquetFile(path).metadata.num_rows
        entry["shards"] += 1
    return found


def test_the_manifest_counts_what_the_writers_committed(bad_inputs, tmp_path):
    folder, _ = bad_inputs
    out = tmp_path / "out"
    base = ["--input", str(folder), "--output", str(out), "--annotator", "none", "--dt", "2026-11-23"]
    first = run(base + ["--num-shards", "2"])
    second = run(base)  # nothing new: only the dead letters refused before hashing are written again
    for manifest in (first, second):
        assert manifest["tables"] == _committed_counts(out, manifest["run_id"], "2026-11-23")
        assert json.loads((out / "_runs" / f"{manifest['run_id']}.json").read_text())["tables"] == manifest["tables"]
    assert set(first["tables"]) == {"screenshots", "_done", "_dead_letter/ingest"}
    assert first["tables"]["screenshots"]["shards"] == 2
    assert set(second["tables"]) == {"_dead_letter/ingest"}
    assert "tables" not in first["counts"]


@pytest.fixture(scope="module")
def samples_input(samples_dir, tmp_path_factory):
    """A copy of samples/ (screens and the episode), read by the samples runs below."""
    inp = tmp_path_factory.mktemp("samples") / "samples"
    shutil.copytree(samples_dir / "screens", inp / "screens")
    shutil.copytree(samples_dir / "episodes", inp / "episodes")
    return inp


def test_samples_end_to_end_ingest(samples_input, tmp_path):
    """Every real screenshot and episode step of samples/ is ingested, the real duplicate refused (no annotator: the
    labels are the next test's, on a few of the screens)."""
    inp = samples_input
    out = tmp_path / "out"
    run(["--input", str(inp), "--output", str(out), "--dt", "2026-11-23", "--quiet", "--annotator", "none"])
    shots = read_shards(str(out), "screenshots").to_pylist()
    n_screens = len(list((inp / "screens").iterdir()))
    n_steps = len((inp / "episodes" / "screenagent_task002" / "steps.jsonl").read_text().splitlines())
    dead = read_shards(str(out), "_dead_letter/ingest").to_pylist()
    assert [d["reason"] for d in dead] == ["duplicate"]  # showui chrome.png == 0730d….png
    assert len(shots) == n_screens - 1 + n_steps
    assert sum(1 for s in shots if s["episode_id"] == "task002") == n_steps
    steps = sorted((s for s in shots if s["episode_id"] == "task002"), key=lambda s: s["step_index"])
    assert all(s["episode_task"] == "In open word, display gridlines" for s in steps)
    assert json.loads(steps[1]["recorded_action"])[0]["mouse_position"] == {"height": 45, "width": 460}


@pytest.mark.slow  # real OCR of seven real screenshots (four, then three of them again), about a minute on 2 cores
def test_samples_end_to_end_with_ocr(samples_input, tmp_path):
    pytest.importorskip("rapidocr_onnxruntime")
    # OCR on four real screens (a phone, a spreadsheet, a desktop, an iPhone) rather than all of samples/ (the run
    # of every screen took minutes on two cores; test_samples_end_to_end_ingest reads them all); the rerun that
    # checks the labels are deterministic reads three of them (not the batch of the first run)
    names = ("droidbot__anupam", "omniparser__excel", "screenagent__58d6", "omniparser__ios")
    runs = []
    for name, chosen in (("a", names), ("b", names[:3])):
        source = tmp_path / f"in-{name}"
        source.mkdir()
        for shot in sorted((samples_input / "screens").iterdir()):
            if shot.name.startswith(chosen):
                shutil.copy(shot, source / shot.name)
        out = tmp_path / name
        manifest = run(["--input", str(source), "--output", str(out), "--dt", "2026-11-23", "--quiet"])
        runs.append((out, manifest))
    (out_a, man_a), (out_b, _) = runs

    shots = read_shards(str(out_a), "screenshots").to_pylist()
    assert len(shots) == len(names)
    labels = read_shards(str(out_a), "grounding")
    assert labels.schema.remove_metadata().equals(GroundingLabel.SCHEMA.remove_metadata())
    rows = labels.to_pylist()
    size = {s["screenshot_id"]: (s["width"], s["height"]) for s in shots}
    assert len(rows) > 20 * len(size)  # real UIs carry plenty of visible text
    labelled = {r["screenshot_id"] for r in rows}
    assert labelled == set(size)
    for r in rows:
        w, h = size[r["screenshot_id"]]
        assert 0 <= r["x0"] < r["x1"] <= w and 0 <= r["y0"] < r["y1"] <= h
        assert r["x0"] <= r["click_x"] <= r["x1"] and r["y0"] <= r["click_y"] <= r["y1"]
        assert r["instruction"] and 0 <= r["confidence"] <= 1
    assert len({r["label_id"] for r in rows}) == len(rows)

    rows_b = read_shards(str(out_b), "grounding").to_pylist()
    shots_b = {s["screenshot_id"] for s in read_shards(str(out_b), "screenshots").to_pylist()}
    assert len(shots_b) == 3 and shots_b <= {s["screenshot_id"] for s in shots}
    assert sorted(r["label_id"] for r in rows if r["screenshot_id"] in shots_b) == sorted(
        r["label_id"] for r in rows_b
    )
    assert rows_b
    assert man_a["counts"]["annotate"]["total"] == len(size)
    assert (out_a / "_runs" / f"{man_a['run_id']}.json").exists()


def test_no_ocr_grouping_reaches_the_annotator_and_the_config_hash():
    from screenmill.annotators.ocr_config import OcrConfig
    from screenmill.pipelines.options import ocr_config
    from screenmill.pipelines.run import build_parser
    from screenmill.schemas.images import ImageLimits
    from screenmill.schemas.keys import config_hash

    configs = {}
    for argv in ([], ["--no-ocr-grouping"]):
        args, _ = build_parser().parse_known_args(["--input", ".", "--output", "out", *argv])  # an input that exists
        configs[bool(argv)] = ocr_config(args, "r", ImageLimits())
    assert OcrConfig(**dict(configs[False].annotator_options)).group_lines is True
    assert OcrConfig(**dict(configs[True].annotator_options)).group_lines is False
    assert config_hash(configs[False]) != config_hash(configs[True])


def test_the_ocr_label_confidence_floor_reaches_the_annotator_options_and_the_config_hash():
    """``--ocr-min-label-confidence`` overrides the OCR revision's floor (and so changes the hash); without it the
    options hold no floor and the default run's floor is the revision's."""
    from screenmill.annotators.ocr_config import OcrConfig
    from screenmill.pipelines.options import ocr_config
    from screenmill.pipelines.run import build_parser
    from screenmill.schemas.images import ImageLimits
    from screenmill.schemas.keys import config_hash

    configs = []
    for argv in ([], ["--ocr-min-label-confidence", "0.5"]):
        args, _ = build_parser().parse_known_args(["--input", ".", "--output", "out", *argv])  # an input that exists
        configs.append(ocr_config(args, "r", ImageLimits()))
    assert "label_min_confidence" not in dict(configs[0].annotator_options)
    assert OcrConfig(**dict(configs[0].annotator_options)).label_min_confidence == OcrConfig().label_min_confidence
    assert OcrConfig(**dict(configs[1].annotator_options)).label_min_confidence == 0.5
    assert config_hash(configs[0]) != config_hash(configs[1])


def test_the_ocr_join_model_puts_the_packaged_models_version_in_the_options_and_the_config_hash():
    """``--ocr-join model`` (the default) hands the grouping's decisions to the packaged classifier: its version is
    an annotator option (so part of the config hash); ``--ocr-join rules`` names the rules alone (another hash)."""
    from screenmill.annotators.ocr_config import OcrConfig
    from screenmill.annotators.ocr_model import packaged_version
    from screenmill.pipelines.options import ocr_config
    from screenmill.pipelines.run import build_parser
    from screenmill.schemas.images import ImageLimits
    from screenmill.schemas.keys import config_hash

    configs = []
    for argv in ([], ["--ocr-join", "rules"], ["--ocr-join", "model"]):
        args, _ = build_parser().parse_known_args(
            ["--input", str(Path(__file__).resolve().parents[2] / "samples" / "screens"), "--output", "out", *argv]
        )
        configs.append(ocr_config(args, "r", ImageLimits()))
    assert configs[0].annotator_options == configs[2].annotator_options
    model = OcrConfig(**dict(configs[2].annotator_options))
    assert (model.grouping, model.grouping_model) == ("model", packaged_version())
    assert OcrConfig(**dict(configs[1].annotator_options)).grouping == "rules"
    assert config_hash(configs[0]) == config_hash(configs[2]) != config_hash(configs[1])


@pytest.mark.parametrize(
    ("option", "reason"),
    [
        (("--ocr-min-label-confidence", "1.5"), "--ocr-min-label-confidence: must be in 0..1, got 1.5"),
        (("--ocr-threads", "-2"), "--ocr-threads: must be >= 1, got -2"),
    ],
)
def test_run_refuses_a_bad_ocr_option_before_reading_a_screenshot(tmp_path, option, reason):
    """A bad annotator option is refused when the run's config is built, with its reason, not by a worker loading the
    model after ingest has run; nothing is written."""
    from screenmill.pipelines.run import run

    (tmp_path / "in").mkdir()
    with pytest.raises(SystemExit, match=f"^screenmill run: .*{reason}"):
        run(["--input", str(tmp_path / "in"), "--output", str(tmp_path / "out"), *option])
    assert not (tmp_path / "out").exists()
