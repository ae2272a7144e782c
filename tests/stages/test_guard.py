"""The benchmark-leakage guard in a real Beam pipeline: copies of benchmark images are refused (or flagged), other
screenshots pass, unreadable ones are dead-lettered with their reason, a bad benchmark fails before the run."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.testing.util import assert_that, equal_to
from PIL import ImageDraw
from screenmill.pipelines import cli
from screenmill.pipelines.leakage import main as leakage_main
from screenmill.schemas.images import inspect_image
from screenmill.schemas.phash import hamming, phash
from screenmill.schemas.records import Screenshot, utcnow
from screenmill.stages.guard import GuardBenchmarkLeakage, GuardConfig, hash_image_dir, load_benchmark_hashes
from screenmill.stages.store.report import stage_counts

from tests.schemas.test_phash import encoded, half, ui_layout

RUN = "run-guard"


def screenshot(path: Path) -> Screenshot:
    """A Screenshot record as ingest makes it (content id = sha256 of the bytes)."""
    data = path.read_bytes()
    info = inspect_image(data)
    sha = hashlib.sha256(data).hexdigest()
    return Screenshot(
        sha, str(path), info.width, info.height, info.format, info.mode, info.orientation, len(data), utcnow(), RUN
    )


@pytest.fixture
def bench(tmp_path) -> Path:
    folder = tmp_path / "bench"
    (folder / "sub").mkdir(parents=True)
    (folder / "dialog.png").write_bytes(encoded(ui_layout(2), "PNG"))
    (folder / "sub" / "form.png").write_bytes(encoded(ui_layout(3), "PNG"))
    (folder / "README.md").write_text("benchmark licence: not an image")
    return folder


@pytest.fixture
def shots(tmp_path) -> list[Screenshot]:
    """copy.jpg: the benchmark dialog halved and re-encoded (a leak); inbox.png, chat.webp: other screens;
    changed.png: bytes replaced after ingest; gone.png: deleted after ingest."""
    folder = tmp_path / "in"
    folder.mkdir()
    files = {
        "copy.jpg": encoded(half(ui_layout(2)), "JPEG", quality=70),
        "inbox.png": encoded(ui_layout(0), "PNG"),
        "chat.webp": encoded(ui_layout(5), "WEBP", quality=80),
        "changed.png": encoded(ui_layout(1), "PNG"),
        "gone.png": encoded(ui_layout(6), "PNG"),
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)
    records = [screenshot(folder / name) for name in files]
    (folder / "changed.png").write_bytes(encoded(ui_layout(4), "PNG"))
    (folder / "gone.png").unlink()
    return records


def run_guard(records, config, expected_good, expected_dead) -> dict[str, int]:
    """Run the stage; assert the forwarded file names and the dead letters as (file, stage, reason, (matched
    benchmark, distance within the threshold) or None); return the stage's counters."""

    def dead_key(r):
        m = re.search(r"benchmark image '([^']+)' \(pHash [0-9a-f]{16}\): Hamming distance (\d+) <= (\d+)", r.error)
        match = (m.group(1), int(m.group(2)) <= int(m.group(3))) if m else None
        return Path(r.input_id).name, r.stage, r.reason, match

    p = beam.Pipeline(runner=FnApiRunner())
    out = p | beam.Create(records) | GuardBenchmarkLeakage(config)
    assert_that(out.good | "GoodNames" >> beam.Map(lambda s: Path(s.source_uri).name), equal_to(expected_good))
    assert_that(out.dead_letter | "DeadKeys" >> beam.Map(dead_key), equal_to(expected_dead), label="CheckDead")
    result = p.run()
    result.wait_until_finish()
    return stage_counts(result)["guard"]


FAILURES = [("changed.png", "guard", "changed_during_run", None), ("gone.png", "guard", "unreadable", None)]


def test_refuse_mode_dead_letters_a_reencoded_copy_of_a_benchmark_image(bench, shots):
    counts = run_guard(
        shots,
        GuardConfig(benchmark=str(bench), run_id=RUN),
        ["inbox.png", "chat.webp"],
        [("copy.jpg", "guard", "benchmark_leak", ("dialog.png", True)), *FAILURES],
    )
    assert counts["total"] == 5 and counts["forwarded"] == 2
    assert counts["dropped_benchmark_leak"] == 1 and counts["dropped_unreadable"] == 1
    assert counts["dropped_changed_during_run"] == 1 and counts.get("flagged_benchmark_leak", 0) == 0


def test_flag_mode_forwards_the_copy_and_records_a_flag(bench, shots):
    counts = run_guard(
        shots,
        GuardConfig(benchmark=str(bench), run_id=RUN, mode="flag"),
        ["copy.jpg", "inbox.png", "chat.webp"],
        [("copy.jpg", "guard", "benchmark_leak_flagged", ("dialog.png", True)), *FAILURES],
    )
    assert counts["total"] == 5 and counts["forwarded"] == 3 and counts["flagged_benchmark_leak"] == 1
    assert not any(k.startswith("dropped_benchmark_leak") for k in counts)  # a flag is not a drop


def test_the_threshold_is_inclusive(tmp_path):
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "cards.png").write_bytes(encoded(ui_layout(1), "PNG"))
    edited = ui_layout(1)
    ImageDraw.Draw(edited).rectangle([0, 300, 400, 500], fill=(20, 20, 20))  # a dark panel over a third
    (tmp_path / "edited.png").write_bytes(encoded(edited, "PNG"))
    distance = hamming(phash(edited), phash(ui_layout(1)))
    assert 0 < distance < 32
    shot = [screenshot(tmp_path / "edited.png")]
    leak = [("edited.png", "guard", "benchmark_leak", ("cards.png", True))]
    run_guard(shot, GuardConfig(benchmark=str(bench), run_id=RUN, max_distance=distance - 1), ["edited.png"], [])
    run_guard(shot, GuardConfig(benchmark=str(bench), run_id=RUN, max_distance=distance), [], leak)


def test_hash_list_from_the_cli_guards_like_the_folder(bench, shots, tmp_path, capsys):
    listing = tmp_path / "lists" / "hashes.txt"
    assert cli.main(["leakage-hashes", str(bench), "--out", str(listing)]) == 0
    lines = listing.read_text().splitlines()
    assert lines[0].startswith("# ") and len([ln for ln in lines if not ln.startswith("#")]) == 2
    assert re.fullmatch(r"[0-9a-f]{16}  sub/form\.png", lines[-1])
    assert load_benchmark_hashes(str(listing)) == load_benchmark_hashes(str(bench))
    assert "2 hashes written" in capsys.readouterr().err
    run_guard(
        shots,
        GuardConfig(benchmark=str(listing), run_id=RUN),
        ["inbox.png", "chat.webp"],
        [("copy.jpg", "guard", "benchmark_leak", ("dialog.png", True)), *FAILURES],
    )


def test_hash_list_format(tmp_path):
    listing = tmp_path / "h.txt"
    listing.write_text("# made by hand\n\n  00000000000000FF  a shot.png \n0123456789abcdef\n")
    assert load_benchmark_hashes(str(listing)) == [("a shot.png", 0xFF), (f"{listing}:4", 0x0123456789ABCDEF)]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("# header\n0000000000000001 ok.png\nnot-a-hash bad.png\n", r"h\.txt:3: 'not-a-hash' is not a 16-hex-digit"),
        ("00000000000001 short.png\n", r"h\.txt:1: .* is not a 16-hex-digit"),
        ("# only comments\n\n", "no hashes in"),
    ],
)
def test_a_malformed_hash_list_fails_at_config_time(tmp_path, content, message):
    listing = tmp_path / "h.txt"
    listing.write_text(content)
    with pytest.raises(ValueError, match=message):
        GuardConfig(benchmark=str(listing), run_id=RUN)


def test_a_bad_benchmark_or_setting_fails_at_config_time(bench, tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        GuardConfig(benchmark=str(tmp_path / "nowhere"), run_id=RUN)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("no images here")
    with pytest.raises(ValueError, match="no benchmark images"):
        GuardConfig(benchmark=str(tmp_path / "empty"), run_id=RUN)
    with pytest.raises(ValueError, match="not a text file"):
        GuardConfig(benchmark=str(bench / "dialog.png"), run_id=RUN)  # one image is not a hash list
    for bad in ({"mode": "block"}, {"max_distance": -1}, {"max_distance": 40}, {"max_distance": True}, {"run_id": ""}):
        with pytest.raises(ValueError):
            GuardConfig(**{"benchmark": str(bench), "run_id": RUN, **bad})


def test_an_undecodable_benchmark_image_fails_unless_skipped(bench, tmp_path, capsys):
    good = (bench / "dialog.png").read_bytes()
    (bench / "broken.png").write_bytes(good[: len(good) // 2])
    with pytest.raises(ValueError, match=r"broken\.png cannot be hashed: truncated"):
        hash_image_dir(str(bench))
    out = tmp_path / "h.txt"
    assert leakage_main([str(bench), "--out", str(out)]) == 1 and not out.exists()
    assert leakage_main([str(bench), "--out", str(out), "--skip-unreadable"]) == 0
    assert "skipped broken.png" in capsys.readouterr().err
    assert [name for name, _ in load_benchmark_hashes(str(out))] == ["dialog.png", "sub/form.png"]
    assert leakage_main([str(tmp_path / "nowhere"), "--out", str(out)]) == 2
