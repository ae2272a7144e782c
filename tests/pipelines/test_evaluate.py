"""`screenmill eval` over a real run: the OCR annotator's labels scored against the shipped truth set."""

from __future__ import annotations

import datetime
import hashlib
import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from screenmill.pipelines.evaluate import main as eval_main
from screenmill.pipelines.run import run
from screenmill.schemas.records import GroundingLabel

from tests.annotators.test_formats import label_row
from tests.conftest import png_bytes, ui_image


@pytest.mark.slow  # a real OCR run over the ten truth pages (the labels' gate; test_ocr.py gates the annotator's)
def test_eval_scores_a_real_run_against_the_truth_set(samples_dir, tmp_path, capsys):
    truth_dir = samples_dir / "truth"
    # copy the pages under other names: labels meet truth records by content hash, not file name
    inputs = tmp_path / "in"
    inputs.mkdir()
    for i, page in enumerate(sorted(truth_dir.glob("*.png"))):
        shutil.copy(page, inputs / f"shot-{i:02d}.png")
    out = tmp_path / "out"
    manifest = run(["--input", str(inputs), "--output", str(out), "--quiet", "--ocr-threads", "2"])
    assert manifest["tables"]["grounding"]["rows"] > 100

    code = eval_main(
        [str(out), "--truth", str(truth_dir / "truth.jsonl"), "--min-recall", "0.9", "--min-point-accuracy", "0.98"]
        + ["--max-ambiguous", "0"]
    )
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "TOTAL" in printed
    (report_path,) = (out / "_eval").glob("eval-all-*.json")
    report = json.loads(report_path.read_text())
    assert report["truth"] == sum(1 for line in (truth_dir / "truth.jsonl").read_text().splitlines() if line.strip())
    assert report["recall"] >= 0.9 and report["point_accuracy"] >= 0.98
    assert report["ignored_predictions"] == 0
    assert report["ambiguous_labels"] == 0  # repeated text is named by position (screenmill.annotators.ocr_producer)

    # a gate it cannot meet exits 1; labels of another run only score nothing
    assert eval_main([str(out), "--truth", str(truth_dir / "truth.jsonl"), "--min-recall", "1.01"]) == 1
    assert eval_main([str(out), "--truth", str(truth_dir / "truth.jsonl"), "--run", "no-such-run"]) == 0
    assert "TOTAL" in capsys.readouterr().out


def test_eval_refuses_truth_without_images(tmp_path, capsys):
    truth = tmp_path / "truth.jsonl"
    truth.write_text(json.dumps({"img_filename": "absent.png", "instruction": "OK", "bbox": [0, 0, 10, 10]}) + "\n")
    (tmp_path / "out" / "_runs").mkdir(parents=True)  # an output tree (an empty one)
    assert eval_main([str(tmp_path / "out"), "--truth", str(truth)]) == 2
    assert "no truth image" in capsys.readouterr().out


def test_eval_reports_ambiguous_labels_and_gates_on_them(tmp_path, capsys):
    data = png_bytes(ui_image(64, 48))
    sid = hashlib.sha256(data).hexdigest()
    (tmp_path / "shot.png").write_bytes(data)
    truth = tmp_path / "truth.jsonl"
    truth.write_text(json.dumps({"img_filename": "shot.png", "instruction": "Edit", "bbox": [0, 0, 20, 10]}) + "\n")
    rows = [
        label_row(sid, 1, box=(0.0, 0.0, 20.0, 10.0), instruction='click "Edit"', element_text="Edit"),
        label_row(sid, 2, box=(30.0, 0.0, 50.0, 10.0), instruction='click "edit"', element_text="Edit"),
        label_row(sid, 3, box=(0.0, 20.0, 20.0, 30.0), instruction='click "Save"', element_text="Save"),
    ]
    folder = tmp_path / "out" / "grounding" / "dt=2026-11-22"
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=GroundingLabel.SCHEMA), folder / "part-00000-of-00001.parquet")
    assert eval_main([str(tmp_path / "out"), "--truth", str(truth), "--max-ambiguous", "2"]) == 0
    assert "ambiguous labels: 2 in 1 (instruction, screenshot) pairs" in capsys.readouterr().out
    (path,) = (tmp_path / "out" / "_eval").glob("eval-all-*.json")
    report = json.loads(path.read_text())
    assert (report["ambiguous_labels"], report["ambiguous_pairs"]) == (2, 1)
    assert report["ambiguous"][0]["boxes"] == [[0.0, 0.0, 20.0, 10.0], [30.0, 0.0, 50.0, 10.0]]
    assert eval_main([str(tmp_path / "out"), "--truth", str(truth), "--max-ambiguous", "0"]) == 1
    assert "ambiguous labels 2 > 0" in capsys.readouterr().out


def test_eval_scores_each_split_of_a_page_manifest(tmp_path, capsys):
    from screenmill.schemas.records import Screenshot

    pages = tmp_path / "set"
    pages.mkdir()
    (pages / "pages.jsonl").write_text(
        json.dumps({"path": "a/p.html", "site": "a", "split": "dev"})
        + "\n"
        + json.dumps({"path": "b/q.html", "site": "b", "split": "test"})
        + "\n"
    )
    dev, test = "d" * 64, "e" * 64

    def dom(sid, n, text, box):
        return label_row(sid, n, box=box, instruction=f'click "{text}"', element_text=text, annotator="dom",
                         recipe="dom-text", role="button")  # fmt: skip

    def ocr(sid, n, text, box):
        return label_row(sid, 10 + n, box=box, instruction=f'click "{text}"', element_text=text, role="text")

    rows = [
        dom(dev, 1, "Save", (0.0, 0.0, 30.0, 10.0)),
        dom(dev, 2, "Open", (0.0, 20.0, 30.0, 30.0)),
        dom(test, 1, "Cancel", (0.0, 0.0, 30.0, 10.0)),
        ocr(dev, 1, "Save", (0.0, 0.0, 30.0, 10.0)),
        ocr(dev, 2, "Q", (40.0, 0.0, 48.0, 8.0)),  # a glyph: in no truth element
        ocr(test, 1, "Cancel", (0.0, 0.0, 30.0, 10.0)),
    ]
    out = tmp_path / "out"
    folder = out / "grounding" / "dt=2026-11-22"
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=GroundingLabel.SCHEMA), folder / "part-00000-of-00001.parquet")
    base = {f.name: None for f in Screenshot.SCHEMA}
    base.update(source_uri="x", width=64, height=48, format="png", source_mode="RGB", exif_orientation=1, byte_size=1)
    base.update(ingest_time=datetime.datetime(2026, 11, 22, tzinfo=datetime.UTC), run_id="r", schema_version=1)
    shots = [
        {**base, "screenshot_id": dev, "page_uri": f"file://{pages}/a/p.html"},
        {**base, "screenshot_id": test, "page_uri": f"file://{pages}/b/q.html"},
    ]
    folder = out / "screenshots" / "dt=2026-11-22"
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(shots, schema=Screenshot.SCHEMA), folder / "part-00000-of-00001.parquet")
    assert eval_main([str(out), "--truth-from-dom", "--split-manifest", str(pages / "pages.jsonl")]) == 0
    printed = capsys.readouterr().out
    assert (
        "split dev: 1 screenshots, truth 2, recall 50.0%, point accuracy 100.0%, predictions 2, precision 50.0%"
        in (printed)
    )
    assert (
        "split test: 1 screenshots, truth 1, recall 100.0%, point accuracy 100.0%, predictions 1, precision 100.0%"
        in (printed)
    )
    (path,) = (out / "_eval").glob("eval-all-*.json")
    report = json.loads(path.read_text())
    assert report["splits"]["dev"]["by_element"]["(none)"]["predictions"] == 1
    assert report["precision"] == pytest.approx(2 / 3)


def test_eval_leaves_elements_with_no_visible_text_out_of_ocr_recall(tmp_path, capsys):
    """`--icons auto`: an image link the DOM names but shows no text of is out of OCR recall (reported apart), in a
    VLM's; `--icons count` puts it back for OCR."""
    sid = "f" * 64

    def dom(n, text, box, recipe):
        return label_row(sid, n, box=box, instruction=f'click "{text}"', element_text=text if recipe == "dom-text"
                         else None, annotator="dom", recipe=recipe, role="link")  # fmt: skip

    def label(n, text, box, annotator):
        return label_row(sid, 10 + n, box=box, instruction=f'click "{text}"', element_text=text, annotator=annotator)

    def write(rows):
        out = tmp_path / f"out{len(list(tmp_path.iterdir()))}"
        folder = out / "grounding" / "dt=2026-11-27"
        folder.mkdir(parents=True)
        pq.write_table(
            pa.Table.from_pylist(rows, schema=GroundingLabel.SCHEMA), folder / "part-00000-of-00001.parquet"
        )
        return str(out)

    truth = [
        dom(1, "Docs", (0.0, 0.0, 30.0, 10.0), "dom-text"),
        dom(2, "W3C logo", (0.0, 20.0, 30.0, 40.0), "dom-name"),
    ]
    ocr = write([*truth, label(1, "Docs", (0.0, 0.0, 30.0, 10.0), "ocr-rapidocr")])
    assert eval_main([ocr, "--truth-from-dom"]) == 0
    printed = capsys.readouterr().out
    assert "not text (out of OCR's reach, not in recall): 1 elements, 0 named by a label; by role link 1" in printed
    assert eval_main([ocr, "--truth-from-dom", "--min-recall", "1.0"]) == 0
    assert eval_main([ocr, "--truth-from-dom", "--icons", "count", "--min-recall", "1.0"]) == 1
    capsys.readouterr()
    vlm = write([*truth, label(1, "Docs", (0.0, 0.0, 30.0, 10.0), "vllm")])
    assert eval_main([vlm, "--truth-from-dom", "--min-recall", "1.0"]) == 1
    assert "not text" not in capsys.readouterr().out
    assert eval_main([vlm, "--truth-from-dom", "--icons", "apart", "--min-recall", "1.0"]) == 0
