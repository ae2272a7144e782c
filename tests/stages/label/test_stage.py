"""The label-producer seam: a test-only screenshot producer (pure Python, no model) plugged into LabelScreenshots,
which expands the transform the producer gives (the screenshot producers' default, here)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import io

import apache_beam as beam
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.testing.util import assert_that, equal_to
from PIL import Image
from screenmill.annotators.outputs import Count, Failed
from screenmill.annotators.producer import LabelInputs, ScreenshotProducer
from screenmill.schemas.images import ImageLimits
from screenmill.schemas.labels import LabelBuilder, LabelProvenance
from screenmill.schemas.records import Screenshot
from screenmill.stages.done import LabelFailure
from screenmill.stages.label import LabelScreenshots
from screenmill.stages.store.report import stage_counts

T = dt.datetime(2026, 11, 25, tzinfo=dt.UTC)
LOADS = []


@dataclasses.dataclass(frozen=True)
class ToyProducer(ScreenshotProducer):
    """One ``click "<brightness>"`` label per screenshot; refuses dark images, raises on a 65-pixel-wide one."""

    stage = "toy"
    name = "toy"
    version = "1"

    def load(self):
        LOADS.append(1)
        return {"threshold": 100}

    def produce(self, model, shot, pixels):
        if shot.width == 65:
            raise RuntimeError("toy broke")
        mean = int(pixels.mean())
        if mean < model["threshold"]:
            yield Failed("too_dark", f"mean {mean}")
            return
        build = LabelBuilder(shot, LabelProvenance(self.name, self.version, "toy-recipe", "1", "h", "r"), "pixel")
        yield build.add(
            f'click "{mean}"',
            (0, 0, 1, 1),
            (0.5, 0.5),
            element_text=None,
            role=None,
            native_box=None,
            native_point=None,
            confidence=1.0,
        )
        yield Count("bright_pixels", mean)  # a count about the screenshot: a counter of the stage, not a row


@dataclasses.dataclass(frozen=True)
class ToyConfig:
    run_id: str = "r"
    limits: ImageLimits = ImageLimits()

    def producer(self):
        return ToyProducer()


def _shot(tmp_path, name: str, colour: int, width: int = 64, occurrence: int | None = None) -> Screenshot:
    buf = io.BytesIO()
    Image.new("RGB", (width, 64), (colour,) * 3).save(buf, "PNG")
    data = buf.getvalue()
    path = tmp_path / name
    path.write_bytes(data)
    sha = hashlib.sha256(data).hexdigest()
    episode = None if occurrence is None else "ep"
    return Screenshot(sha, str(path), width, 64, "PNG", "RGB", 1, len(data), T, "r", episode, occurrence)


def test_a_test_producer_plugs_into_the_labelling_stage(tmp_path):
    bright = _shot(tmp_path, "bright.png", 200)
    repeat = dataclasses.replace(bright, episode_id="ep", step_index=1)  # the same image again: labelled once
    dark = _shot(tmp_path, "dark.png", 10)
    broken = _shot(tmp_path, "broken.png", 200, width=65)
    gone = dataclasses.replace(_shot(tmp_path, "gone.png", 150), source_uri=str(tmp_path / "missing.png"))
    p = beam.Pipeline(runner=FnApiRunner())
    shots = p | beam.Create([bright, repeat, dark, broken, gone])
    out = shots | "Toy" >> LabelScreenshots(ToyConfig())
    assert out._fields == ("good", "dead_letter", "failures")  # no actions: the producer makes none
    assert_that(
        out.good | beam.Map(lambda g: (g.screenshot_id, g.instruction)),
        equal_to([(bright.screenshot_id, 'click "200"')]),
    )
    dead = out.dead_letter | beam.Map(lambda d: (d.stage, d.input_id, d.reason))
    assert_that(
        dead,
        equal_to(
            [
                ("toy", dark.source_uri, "too_dark"),
                ("toy", broken.source_uri, "annotator_failure"),
                ("toy", gone.source_uri, "unreadable"),
            ]
        ),
        label="Dead",
    )
    expected_failures = [
        LabelFailure(broken.screenshot_id, broken.source_uri, "annotator_failure"),
        LabelFailure(gone.screenshot_id, gone.source_uri, "unreadable"),
    ]  # too_dark is the image's own: not retried
    assert_that(out.failures, equal_to(expected_failures), label="Failures")
    result = p.run()
    result.wait_until_finish()
    counts = stage_counts(result)["toy"]
    assert dict(counts) == {
        "total": 4,
        "forwarded": 1,
        "dropped_too_dark": 1,
        "dropped_annotator_failure": 1,
        "dropped_unreadable": 1,
        "bright_pixels": 200,
    }


def test_the_run_summary_reports_text_the_ocr_cannot_read():
    from screenmill.stages.store.report import format_summary

    manifest = {"run_id": "r", "wall_seconds": 1.0, "manifest_path": "m.json", "tables": {}, "recovered": [],
                "throughput": {"screenshots_per_s": 1.0, "labels_per_s": 1.0},
                "counts": {"annotate": {"total": 3, "forwarded": 3}}}  # fmt: skip
    assert "cannot read" not in format_summary(manifest)
    manifest["counts"]["annotate"].update(
        unread_text_lines=4, screenshots_unread_text=2, wrong_script_readings=1, screenshots_wrong_script=1
    )
    assert (
        "4 text lines detected but not read on 2 screenshots, 1 wrong-script readings left unlabelled on 1 screenshots"
        in format_summary(manifest)
    )


def test_the_stage_expands_the_producers_transform_in_its_own_scope(tmp_path):
    """The stage asks the producer for its transform with what it was given, and its steps are the stage's own."""
    seen = []

    @dataclasses.dataclass(frozen=True)
    class Watched(ToyProducer):
        def label_transform(self, inputs):
            seen.append(inputs)
            return super().label_transform(inputs)

    @dataclasses.dataclass(frozen=True)
    class WatchedConfig(ToyConfig):
        def producer(self):
            return Watched()

    p = beam.Pipeline(runner=FnApiRunner())
    shots = p | beam.Create([_shot(tmp_path, "bright.png", 200)])
    skipped = p | "Skipped" >> beam.Create([])
    config = WatchedConfig()
    shots | "Toy" >> LabelScreenshots(config, resource_hints={"min_ram": "1GB"}, skipped=skipped, feeding="f")
    assert seen == [LabelInputs(config, {"min_ram": "1GB"}, None, skipped, "f")]
    names = {t.unique_name for t in p.to_runner_api().components.transforms.values()}
    assert {"Toy/ByContent", "Toy/Spread", "Toy/Batch", "Toy/Annotate"} <= names
