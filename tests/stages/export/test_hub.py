"""Hub export on a synthetic output root: datasets loads the local export; increments add files; upload is mocked."""

from __future__ import annotations

import datetime as dt
import io
import json
import logging
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image
from screenmill.pipelines.selftest.fixtures import FakeHub
from screenmill.schemas.keys import stable_id
from screenmill.schemas.records import ActionStep, DeadLetter, GroundingLabel, ReviewedLabel, Screenshot
from screenmill.stages.clients.retry import GaveUp
from screenmill.stages.export.hub import (
    INDEX_PATH,
    STATE_PATH,
    ExportConfig,
    ExportError,
    HubRepo,
    dead_config,
    export_to_hub,
    export_to_local,
    format_summary,
    split_of,
)

datasets = pytest.importorskip("datasets")
hf = pytest.importorskip("huggingface_hub")

DAY1, DAY2 = "2026-11-22", "2026-11-23"
RUN1, RUN2 = "20261122T080000Z-aaaaaa", "20261123T080000Z-bbbbbb"
SEED = "t"
PLANTED = "hf_planted3f1e9c0d5b7a4e21tokenvalue"
WHEN = dt.datetime(2026, 11, 22, 8, 0, tzinfo=dt.UTC)


class Out:
    """A synthetic screenmill output root: PNGs under ``images/``, tables and manifests under ``out/``."""

    def __init__(self, root: Path):
        self.images, self.out = root / "images", root / "out"
        self.images.mkdir(parents=True)
        self.paths: dict[str, Path] = {}  # screenshot id -> its file

    def image(self, seed: int) -> str:
        """A small PNG whose size and colour follow ``seed``; returns its screenshot id."""
        im = Image.new("RGB", (48 + seed, 32 + seed % 7), (seed * 37 % 256, seed * 91 % 256, 128))
        buf = io.BytesIO()
        im.save(buf, "PNG")
        data = buf.getvalue()
        sid = __import__("hashlib").sha256(data).hexdigest()
        path = self.images / f"shot-{seed:03d}.png"
        path.write_bytes(data)
        self.paths[sid] = path
        return sid

    def shot(self, sid, run_id, episode=None, step=None) -> dict:
        with Image.open(self.paths[sid]) as im:
            w, h = im.size
        return Screenshot(
            sid,
            str(self.paths[sid]),
            w,
            h,
            "PNG",
            "RGB",
            1,
            self.paths[sid].stat().st_size,
            WHEN,
            run_id,
            episode,
            step,
            None,
            f"task of {episode}" if episode else None,
            json.dumps({"action": "click", "x": 5, "y": 5}) if episode else None,
        ).to_row()

    def labels(self, sid, run_id, n=2, annotator="ocr", recipe="ocr-text-click", version="1") -> list[dict]:
        rows = []
        for i in range(n):
            text = f"item {i}"
            label_id = GroundingLabel.make_id(sid, annotator, version, f"click {text}")
            rows.append(
                GroundingLabel(
                    label_id,
                    sid,
                    48,
                    32,
                    f"click {text}",
                    text,
                    "button",
                    1.0,
                    2.0,
                    10.0,
                    12.0,
                    5.5,
                    7.0,
                    "pixel",
                    None,
                    None,
                    48,
                    32,
                    0.9,
                    annotator,
                    "1.0",
                    recipe,
                    version,
                    "cfg-hash",
                    run_id,
                ).to_row()
            )
        return rows

    def write_day(self, day: str, run_id: str, tables: dict[str, list[dict]]) -> None:
        records = {
            "screenshots": Screenshot,
            "grounding": GroundingLabel,
            "actions": ActionStep,
            "reviewed": ReviewedLabel,
        }
        for table, rows in tables.items():
            folder = self.out / table / f"dt={day}"
            folder.mkdir(parents=True)
            schema = records[table].SCHEMA
            pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / "part-00000-of-00001.parquet")
        manifest = {
            "run_id": run_id,
            "dt": day,
            "input": str(self.images),
            "output": str(self.out),
            "annotator": "ocr",
            "config": {"annotate": {"annotator": "ocr"}},
            "config_hash": f"hash-{run_id[-6:]}",
            "counts": {"ingest": {"total": len(tables["screenshots"])}},
            "tables": {t: {"rows": len(r), "shards": 1} for t, r in tables.items()},
            "versions": {"screenmill": "0.1.0", "apache-beam": "2.77.0", "python": "3.11.7", "platform": "Linux-x"},
        }
        (self.out / "_runs").mkdir(exist_ok=True)
        (self.out / "_runs" / f"{run_id}.json").write_text(json.dumps(manifest))


def _action(episode, step, sid, run_id) -> dict:
    args = json.dumps({"x": 5, "y": 5})
    return ActionStep(
        episode, step, stable_id(episode, step), sid, "click", args, None, "recorded", "recorded", "1", "1", run_id
    ).to_row()


def _review(label, verdict, annotation_id, run_id) -> dict:
    return ReviewedLabel(
        label["label_id"],
        label["screenshot_id"],
        verdict,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        "rev",
        3.0,
        annotation_id,
        annotation_id,
        WHEN,
        run_id,
    ).to_row()


def day1(o: Out) -> dict:
    """5 episodes × 3 steps (ep-a repeats a screenshot; ep-b and ep-c share one) + 6 loose shots, labels, reviews."""
    shots, actions, episodes = [], [], {}
    seed = 0
    for ep in ("ep-a", "ep-b", "ep-c", "ep-d", "ep-e"):
        sids = [o.image(seed), o.image(seed + 1), o.image(seed + 2)]
        seed += 3
        episodes[ep] = sids
    episodes["ep-a"][2] = episodes["ep-a"][0]  # the same bytes twice in one episode
    episodes["ep-c"][0] = episodes["ep-b"][1]  # the same bytes in two episodes
    for ep, sids in episodes.items():
        for step, sid in enumerate(sids):
            shots.append(o.shot(sid, RUN1, ep, step))
            actions.append(_action(ep, step, sid, RUN1))
    loose = [o.image(100 + i) for i in range(6)]
    shots += [o.shot(sid, RUN1) for sid in loose]
    distinct = sorted({s["screenshot_id"] for s in shots})
    labels = [row for sid in distinct for row in o.labels(sid, RUN1)]
    reviews = [
        _review(labels[0], "accept", 1, "rv1"),
        _review(labels[1], "fix", 2, "rv1"),
        _review(labels[2], "reject", 3, "rv1"),
        _review(labels[0], "fix", 4, "rv1"),
    ]
    o.write_day(DAY1, RUN1, {"screenshots": shots, "grounding": labels, "actions": actions, "reviewed": reviews})
    return {"episodes": episodes, "loose": loose, "distinct": distinct, "labels": labels, "steps": len(shots) - 6}


def day2(o: Out, d1: dict) -> dict:
    """3 new loose shots (one goes missing, one changes), episode ep-f with a missing step, more labels, orphans."""
    fine, missing, changed = o.image(200), o.image(201), o.image(202)
    ep_ok, ep_missing = o.image(203), o.image(204)
    shots = [o.shot(s, RUN2) for s in (fine, missing, changed)]
    shots += [o.shot(ep_ok, RUN2, "ep-f", 0), o.shot(ep_missing, RUN2, "ep-f", 1)]
    shots.append(o.shot(d1["loose"][0], RUN2))  # seen again: not a new screenshot
    old = d1["loose"][1]
    labels = o.labels(old, RUN2, n=1, annotator="holo", recipe="holo-click", version="2")
    labels += [r for s in (fine, missing, changed, ep_ok, ep_missing) for r in o.labels(s, RUN2, n=1)]
    orphan = o.labels("f" * 64, RUN2, n=1)[0]
    labels.append(orphan)
    reviews = [_review(d1["labels"][3], "accept", 10, "rv2"), _review(labels[1], "accept", 11, "rv2")]
    reviews.append(_review({"label_id": "nolabel", "screenshot_id": fine}, "accept", 12, "rv2"))
    reviews.append(_review(labels[2], "reject", 13, "rv2"))  # a review of the label of the missing image
    actions = [_action("ep-f", 0, ep_ok, RUN2), _action("ep-f", 1, ep_missing, RUN2)]
    o.write_day(DAY2, RUN2, {"screenshots": shots, "grounding": labels, "actions": actions, "reviewed": reviews})
    o.paths[missing].unlink()
    o.paths[ep_missing].unlink()
    o.paths[changed].write_bytes(o.paths[fine].read_bytes() + b"\x00")
    return {
        "fine": fine,
        "missing": missing,
        "changed": changed,
        "ep_ok": ep_ok,
        "ep_missing": ep_missing,
        "old": old,
        "orphan": orphan["label_id"],
    }


def _cfg(o: Out, local=None, **kw) -> ExportConfig:
    base = {"output": str(o.out), "test_fraction": 0.5, "seed": SEED, "license": "cc-by-4.0"}
    return ExportConfig(**{**base, "local_dir": None if local is None else str(local), **kw})


def _card(path: Path) -> dict:
    import yaml

    text = path.read_text()
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def _load(local: Path, config: str, cache: str):
    return datasets.load_dataset(str(local), config, cache_dir=cache)


def test_config_is_checked():
    ok = {"output": "out", "repo_id": "org/name"}
    ExportConfig(**ok)
    ExportConfig(output="out", local_dir="dir")
    for bad in (
        {"repo_id": None},
        {"repo_id": "no-slash"},
        {"repo_id": "a/b/c"},
        {"repo_id": "org/x--y"},
        {"test_fraction": 1.0},
        {"test_fraction": -0.1},
        {"dt": "22-11-2026"},
        {"license": "two words"},
        {"max_file_rows": 0},
        {"output": ""},
    ):
        with pytest.raises(ValueError):
            ExportConfig(**{**ok, **bad})


def test_split_is_stable_salted_and_near_the_fraction():
    units = [f"ep-{i}" for i in range(4000)]
    first = [split_of(u, 0.2, "s") for u in units]
    assert first == [split_of(u, 0.2, "s") for u in units]
    assert 0.17 < first.count("test") / len(units) < 0.23
    assert first != [split_of(u, 0.2, "other") for u in units]
    assert {split_of(u, 0.0) for u in units} == {"train"}


def test_local_export_loads_with_datasets(tmp_path, offline):
    o = Out(tmp_path)
    d1 = day1(o)
    local = tmp_path / "repo"
    result = export_to_local(_cfg(o, local, repo_id="org/gui-labels"))
    assert result.dead_letters == []

    shots = _load(local, "screenshots", offline)
    assert set(shots) == {"train", "test"}
    assert isinstance(shots["train"].features["image"], datasets.Image)
    assert shots["train"].features["screenshot_id"] == datasets.Value("string")
    seen = {}
    for split in shots:
        for row in shots[split]:
            assert isinstance(row["image"], Image.Image)
            assert row["image"].size == (row["width"], row["height"])
            assert row["screenshot_id"] not in seen  # one row per screenshot, whatever the occurrences
            seen[row["screenshot_id"]] = split
    assert sorted(seen) == d1["distinct"]

    steps, actions = _load(local, "steps", offline), _load(local, "actions", offline)
    for table in (steps, actions):
        ep_split = {}
        for split in table:
            for row in table[split]:
                assert ep_split.setdefault(row["episode_id"], split) == split  # no episode is split
        assert ep_split == {ep: split_of(ep, 0.5, SEED) for ep in d1["episodes"]}
    assert sum(len(s) for s in steps.values()) == d1["steps"] == sum(len(s) for s in actions.values())
    for ep, sids in d1["episodes"].items():
        if ep != "ep-c":
            assert {seen[s] for s in sids} == {split_of(ep, 0.5, SEED)}
    shared = d1["episodes"]["ep-c"][0]
    assert seen[shared] == split_of("ep-b", 0.5, SEED)  # in two episodes: stored with the first

    grounding = _load(local, "grounding", offline)
    assert grounding["train"].features["native_box"] == datasets.List(datasets.Value("float64"))
    assert grounding["train"].features["confidence"] == datasets.Value("float32")
    label_split = {}
    for split in grounding:
        for row in grounding[split]:
            assert seen[row["screenshot_id"]] == split  # labels follow their screenshot
            label_split[row["label_id"]] = split
    assert sorted(label_split) == sorted(r["label_id"] for r in d1["labels"])
    reviewed = _load(local, "reviewed", offline)
    assert sum(len(s) for s in reviewed.values()) == 4
    for split in reviewed:
        assert all(label_split[r["label_id"]] == split for r in reviewed[split])

    card = _card(local / "README.md")
    assert card["license"] == "cc-by-4.0"
    configs = {c["config_name"]: c for c in card["configs"]}
    assert set(configs) == {"screenshots", "steps", "grounding", "actions", "reviewed"}
    assert configs["grounding"]["default"] is True
    assert {"split": "train", "path": "data/grounding/train-*.parquet"} in configs["grounding"]["data_files"]
    info = {i["config_name"]: i for i in card["dataset_info"]}
    assert {"name": "image", "dtype": "image"} in info["screenshots"]["features"]
    sm = card["screenmill"]
    assert sm["counts"]["grounding"] == {s: len(grounding[s]) for s in grounding}
    assert sm["counts"]["screenshots"]["train"] + sm["counts"]["screenshots"]["test"] == len(d1["distinct"])
    assert sm["sources"] == [str(o.images)]
    assert [(r["run_id"], r["config_hash"], r["versions"]["apache-beam"]) for r in sm["runs"]] == [
        (RUN1, "hash-aaaaaa", "2.77.0")
    ]
    assert {(a["config"], a["annotator"], a["recipe"], a["rows"]) for a in sm["annotators"]} == {
        ("grounding", "ocr", "ocr-text-click", len(d1["labels"])),
        ("actions", "recorded", None, d1["steps"]),
    }
    cov = sm["review_coverage"]
    assert (cov["labels"], cov["reviewed"], cov["by_verdict"]) == (len(d1["labels"]), 3, {"fix": 2, "reject": 1})
    body = (local / "README.md").read_text()
    assert RUN1 in body and "Review coverage" in body and 'load_dataset("org/gui-labels"' in body


def _data_files(local: Path) -> dict[str, bytes]:
    return {str(p.relative_to(local)): p.read_bytes() for p in sorted((local / "data").rglob("*.parquet"))}


def test_second_export_adds_only_new_files_and_holds_back_bad_input(tmp_path, offline):
    o = Out(tmp_path)
    d1 = day1(o)
    local = tmp_path / "repo"
    first = export_to_local(_cfg(o, local))
    before = _data_files(local)
    assert sorted(before) == first.added and all(p.split("/")[-1].split("-")[1] == "00001" for p in first.added)

    d2 = day2(o, d1)
    second = export_to_local(_cfg(o, local))
    after = _data_files(local)
    assert {p: after[p] for p in before} == before  # yesterday's files untouched, byte for byte
    assert sorted(set(after) - set(before)) == second.added
    assert all(p.split("/")[-1].split("-")[1] == "00002" for p in second.added)
    assert second.written == second.added + ["README.md", INDEX_PATH, STATE_PATH]

    assert all(isinstance(d, DeadLetter) and d.stage.startswith("export/") for d in second.dead_letters)
    reasons = {(dead_config(d), d.input_id): d.reason for d in second.dead_letters}
    assert reasons[("screenshots", d2["missing"])] == "missing_image"
    assert reasons[("screenshots", d2["changed"])] == "changed_since_run"
    assert reasons[("grounding", d2["orphan"])] == "missing_screenshot"
    assert reasons[("reviewed", '["nolabel",12]')] == "missing_label"
    held = sorted(k[0] for k, r in reasons.items() if r == "held_back")
    assert held == ["actions", "actions", "grounding", "grounding", "grounding", "reviewed", "steps", "steps"]
    summary = format_summary(second)
    assert "missing_image" in summary and "screenshots/changed_since_run=1" in summary

    shots = _load(local, "screenshots", offline)
    ids = [r for s in shots.values() for r in s["screenshot_id"]]
    assert len(ids) == len(set(ids)) == len(d1["distinct"]) + 2  # fine + ep_ok; loose[0] seen again is not new
    assert d2["missing"] not in ids and d2["changed"] not in ids
    grounding = _load(local, "grounding", offline)
    holo = [r for s in grounding for r in grounding[s] if r["annotator"] == "holo"]
    assert len(holo) == 1 and holo[0]["screenshot_id"] == d2["old"]
    assert "ep-f" not in {r for s in _load(local, "actions", offline).values() for r in s["episode_id"]}
    card = _card(local / "README.md")
    assert [r["run_id"] for r in card["screenmill"]["runs"]] == [RUN1, RUN2]
    assert card["screenmill"]["counts"]["grounding"] == {s: len(grounding[s]) for s in grounding}
    assert [e["batch"][:5] for e in card["screenmill"]["exports"]] == ["00001", "00002"]

    # the images are back: the held-back rows come in, in their own batch, and nothing else moves
    o.paths[d2["changed"]].write_bytes(o.paths[d2["fine"]].read_bytes())  # still not its bytes
    o.image(201), o.image(204)
    third = export_to_local(_cfg(o, local))
    assert {p: _data_files(local)[p] for p in after} == after
    assert {p.split("/")[1] for p in third.added} == {"screenshots", "steps", "grounding", "actions", "reviewed"}
    assert [d.reason for d in third.dead_letters if dead_config(d) == "screenshots"] == ["changed_since_run"]
    actions = _load(local, "actions", offline)
    assert {s for s in actions if "ep-f" in actions[s]["episode_id"]} == {split_of("ep-f", 0.5, SEED)}

    again = export_to_local(_cfg(o, local))
    assert not again.changed and again.added == [] and "up to date" in format_summary(again)


def test_other_split_settings_and_foreign_repos_are_refused(tmp_path):
    o = Out(tmp_path)
    day1(o)
    local = tmp_path / "repo"
    export_to_local(_cfg(o, local))
    with pytest.raises(ExportError, match="same --test-fraction"):
        export_to_local(_cfg(o, local, seed="other"))
    foreign = tmp_path / "foreign"
    (foreign / "data").mkdir(parents=True)
    (foreign / "data" / "train.parquet").write_bytes(b"x")
    with pytest.raises(ExportError, match="not a screenmill export"):
        export_to_local(_cfg(o, foreign))


@pytest.fixture
def hub():
    """The selftest's in-memory Hub (:class:`screenmill.pipelines.selftest.fixtures.FakeHub`), holding a new
    repository's ``.gitattributes``; set ``hub.fail`` to make the next commits fail."""
    with FakeHub(files={".gitattributes": b"*.parquet filter=lfs\n"}) as fake:
        yield fake


def _http_error(status: int):
    from huggingface_hub.errors import HfHubHTTPError

    httpx = pytest.importorskip("httpx2")  # what huggingface_hub 2.x speaks HTTP with
    request = httpx.Request("POST", "https://huggingface.co/api/datasets/org/gui-labels/commit/main")
    return HfHubHTTPError(f"{status} from the hub", response=httpx.Response(status, request=request))


def _paths(batch: str, parts: list[tuple[str, str]]) -> list[str]:
    """The repository paths one commit should add: one file per (config, split) of the batch, card, index, state."""
    return sorted([f"data/{c}/{s}-{batch}-00000.parquet" for c, s in parts] + ["README.md", INDEX_PATH, STATE_PATH])


def test_upload_commits_only_new_files_with_the_env_token(tmp_path, monkeypatch, capsys, caplog, hub):
    from screenmill.pipelines.export import main

    caplog.set_level(logging.DEBUG)
    o = Out(tmp_path)
    d1 = day1(o)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HUGGINGFACE_HUB_TOKEN", PLANTED)
    args = [str(o.out), "--repo", "org/gui-labels", "--test-fraction", "0.5", "--seed", SEED, "--license", "cc-by-4.0"]
    assert main(args) == 0
    local = tmp_path / "local"
    export_to_local(_cfg(o, local, repo_id="org/gui-labels"))
    expected = sorted(str(p.relative_to(local)) for p in local.rglob("*") if p.is_file())
    assert sorted(hub.commits[0]) == expected  # the upload is exactly the --local-dir tree
    b1 = json.loads(hub.files[STATE_PATH])["batches"][0]["batch"]
    both = [(c, s) for c in ("screenshots", "steps", "grounding", "actions") for s in ("train", "test")]
    assert sorted(hub.commits[0]) == _paths(b1, both + [("reviewed", "train")])
    assert all(hub.files[p] == (local / p).read_bytes() for p in expected)
    assert hub.calls == ["create_repo", "list_repo_files", "create_commit"]

    day2(o, d1)
    assert main(args) == 0
    old = set(hub.commits[0]) - {"README.md", INDEX_PATH, STATE_PATH}
    assert len(hub.commits) == 2 and not old & set(hub.commits[1])
    assert sorted(hub.commits[1]) == sorted(export_to_local(_cfg(o, local, repo_id="org/gui-labels")).written)
    b2 = json.loads(hub.files[STATE_PATH])["batches"][1]["batch"]
    assert sorted(hub.commits[1]) == _paths(
        b2, [(c, s) for c in ("screenshots", "grounding", "reviewed") for s in ("train", "test")]
    )
    assert hub.calls[3:] == ["create_repo", "list_repo_files", "hf_hub_download", "hf_hub_download", "create_commit"]

    assert main(args) == 0  # nothing new: no commit
    assert len(hub.commits) == 2
    assert hub.tokens == {PLANTED}
    out, err = capsys.readouterr()
    everything = out + err + caplog.text + "".join(p.read_text() for p in (o.out / "_export").glob("*.json"))
    assert "commit: https://huggingface.co/datasets/org/gui-labels/commit/2" in out
    assert PLANTED not in everything


def test_transient_hub_errors_are_retried_and_others_are_not(tmp_path, monkeypatch, capsys, hub):
    from screenmill.pipelines.export import main

    o = Out(tmp_path)
    day1(o)
    hub.fail = [_http_error(503), _http_error(503)]
    sleeps = []
    repo = HubRepo("org/gui-labels", PLANTED, sleep=sleeps.append)
    result = export_to_hub(_cfg(o, repo_id="org/gui-labels"), repo)
    assert result.commit_url.endswith("/commit/1") and len(sleeps) == 2
    assert hub.calls.count("create_commit") == 3 and len(hub.commits) == 1

    hub.fail = [_http_error(401)]
    (o.out / "_runs" / "extra.json").write_text(json.dumps({"run_id": "extra", "input": "elsewhere"}))
    with pytest.raises(hf.errors.HfHubHTTPError):
        export_to_hub(_cfg(o, repo_id="org/gui-labels"), HubRepo("org/gui-labels", PLANTED, sleep=sleeps.append))
    assert len(sleeps) == 2 and len(hub.commits) == 1  # a 401 is not retried

    monkeypatch.setenv("HF_TOKEN", PLANTED)
    hub.fail = [_http_error(401)]
    assert main([str(o.out), "--repo", "org/gui-labels", "--test-fraction", "0.5", "--seed", SEED]) == 1
    assert PLANTED not in "".join(capsys.readouterr())


def test_a_hub_outage_longer_than_the_retries_commits_nothing_and_a_rerun_resumes(tmp_path, hub):
    o = Out(tmp_path)
    day1(o)
    outage = [_http_error(503), TimeoutError("read timed out"), _http_error(502), ConnectionError("reset")]
    outage.append(_http_error(504))
    hub.fail = outage
    sleeps = []
    with pytest.raises(GaveUp):
        export_to_hub(_cfg(o, repo_id="org/gui-labels"), HubRepo("org/gui-labels", PLANTED, sleep=sleeps.append))
    assert len(sleeps) == 4 and hub.commits == []  # five attempts, jittered backoff between them, nothing half-done

    result = export_to_hub(_cfg(o, repo_id="org/gui-labels"), HubRepo("org/gui-labels", PLANTED, sleep=sleeps.append))
    local = tmp_path / "local"
    export_to_local(_cfg(o, local, repo_id="org/gui-labels"))
    expected = sorted(str(p.relative_to(local)) for p in local.rglob("*") if p.is_file())
    assert result.commit_url and len(hub.commits) == 1 and sorted(hub.commits[0]) == expected
