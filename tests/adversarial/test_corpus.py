"""The bad-input corpus end to end through `screenmill run --annotator none`, plus the inputs the corpus cannot hold.

The corpus itself (what each input is and the reason it must get) is
:func:`screenmill.pipelines.selftest.fixtures.build_corpus`, so ``screenmill selftest`` reports on exactly what this
test asserts.
"""

from __future__ import annotations

import faulthandler
import json
import os
from pathlib import Path

import pytest
from screenmill.pipelines.run import run
from screenmill.pipelines.selftest.fixtures import DT, build_corpus, check_corpus, opens_under
from screenmill.schemas.tables import read_shards

from tests.adversarial.ingest_fn import assert_storable, ingest


@pytest.fixture
def watchdog():
    """A regression that reads a FIFO or /dev/zero would hang the suite: dump the stacks and exit instead."""
    faulthandler.dump_traceback_later(300, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def _run(inp: Path, out: Path) -> dict:
    return run(["--input", str(inp), "--output", str(out), "--annotator", "none", "--dt", DT, "--quiet"])


def test_every_bad_input_is_dead_lettered_with_its_reason_and_nothing_outside_the_root_is_read(tmp_path, watchdog):
    corpus = build_corpus(tmp_path)
    out = tmp_path / "out"
    with opens_under(corpus.outside) as opened:
        manifest = _run(corpus.root, out)
    res = check_corpus(out, corpus, manifest)
    assert not res.mismatches, "\n".join(res.mismatches)
    assert res.ok and res.bad_dead_lettered == res.bad > 50 and res.good_accepted == res.good > 15
    assert opened == []  # not one open() under the outside folder: symlinks, `..`, absolute paths all refused

    shots = read_shards(str(out), "screenshots").to_pylist()
    by_name = {(Path(s["source_uri"]).name, s["step_index"]): s for s in shots}
    assert by_name[("jpeg_named.png", None)]["format"] == "JPEG"  # content decides, not the extension
    assert by_name[("webp_named.jpg", None)]["format"] == "WEBP"
    for name in ("anim.webp", "apng.png"):  # animated: the first frame is the screenshot
        assert (by_name[(name, None)]["width"], by_name[(name, None)]["height"]) == (320, 200)
    assert by_name[("sixteen_bit.png", None)]["source_mode"] == "I;16"
    assert by_name[("cmyk.jpg", None)]["source_mode"] == "CMYK"
    assert by_name[("palette_alpha.png", None)]["source_mode"] == "P"
    assert by_name[("s0.png", 0)]["episode_task"] == "open the settings"

    dead = {d["input_id"][len(str(corpus.root)) + 1 :]: d for d in read_shards(str(out), "_dead_letter/ingest")
            .to_pylist()}  # fmt: skip
    assert "UTF-8" in dead["bad\\xffname.png"]["error"]
    assert "already named at" in dead["ep_ok/steps.jsonl:14"]["error"]
    assert "2**31" in dead["ep_ok/steps.jsonl:10"]["error"]
    assert "scans" in dead["scan_bomb.jpg"]["error"]
    # nothing from the outside folder is in any table, not even its path
    tables = [read_shards(str(out), t).to_pylist() for t in ("screenshots", "_dead_letter/ingest", "_done")]
    assert str(corpus.outside) not in json.dumps(tables, default=str)
    assert corpus.secret_sha not in json.dumps(tables, default=str)


def test_the_open_watch_sees_a_read_under_the_folder(tmp_path):
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "x").write_text("x")
    os.symlink(tmp_path / "secret" / "x", tmp_path / "link")
    with opens_under(tmp_path / "secret") as opened:
        (tmp_path / "link").read_text()
    assert opened == [str((tmp_path / "secret" / "x").resolve())]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 file: nothing to test")
def test_a_file_nobody_may_read_is_unreadable(tmp_path):
    from screenmill.pipelines.selftest.fixtures import encode, ui

    path = tmp_path / "locked.png"
    path.write_bytes(encode(ui(1), "PNG"))
    path.chmod(0)
    outputs, _ = ingest(tmp_path)
    [dead] = outputs
    assert dead.value.reason == "unreadable"
    assert_storable(outputs)


def test_an_episode_folder_named_in_non_utf8_bytes(tmp_path):
    from screenmill.pipelines.selftest.fixtures import encode, ui

    inp = tmp_path / "in"
    inp.mkdir()
    folder = os.fsencode(inp) + b"/ep_\xfe"
    os.mkdir(folder)
    Path(os.fsdecode(folder + b"/episode.json")).write_text('{"episode_id": "e"}')
    Path(os.fsdecode(folder + b"/a.png")).write_bytes(encode(ui(2), "PNG"))
    _run(inp, tmp_path / "out")
    dead = {d["input_id"].rsplit("/", 2)[-2:][0] + "/" + d["input_id"].rsplit("/", 1)[-1]: d["reason"]
            for d in read_shards(str(tmp_path / "out"), "_dead_letter/ingest").to_pylist()}  # fmt: skip
    assert dead == {"ep_\\xfe/episode.json": "bad_episode_manifest", "ep_\\xfe/a.png": "unreadable"}


def test_a_dangling_symlink_is_dead_lettered(tmp_path):
    inp = tmp_path / "in"
    inp.mkdir()
    os.symlink(tmp_path / "gone.png", inp / "dangling.png")
    manifest = _run(inp, tmp_path / "out")
    assert manifest["counts"].get("ingest", {}).get("total") == 1
    [dead] = read_shards(str(tmp_path / "out"), "_dead_letter/ingest").to_pylist()
    assert dead["reason"] == "unreadable" and dead["input_id"].endswith("dangling.png") and "gone.png" in dead["error"]
