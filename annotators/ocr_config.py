"""The OCR's settings: :class:`OcrConfig` (what the annotator runs, with its
:class:`screenmill.annotators.ocr_thresholds.OcrThresholds`)."""

from __future__ import annotations

import dataclasses

from screenmill.annotators.ocr_thresholds import OcrThresholds

_INSTALL_HINT = (
    "the OCR annotator needs rapidocr-onnxruntime: run `bash infra/setup.sh`, or "
    "`pip install onnxruntime opencv-python-headless pyclipper shapely six PyYAML` and then "
    "`pip install --no-deps rapidocr-onnxruntime==1.4.4`"
)


#: Who may decide the grouping's joins (``OcrConfig.grouping``, ``--ocr-join``); the first is the default.
GROUPINGS = ("model", "rules")


@dataclasses.dataclass(frozen=True, slots=True)
class OcrConfig:
    """Settings of :class:`OcrAnnotator`; frozen and validated on construction.

    Attributes:
        min_confidence: drop elements whose recognition confidence (0..1) is below this.
        label_min_confidence: an element (after grouping: its least sure piece) read with less confidence than this
            gives no label (:func:`screenmill.annotators.ocr_producer.elements_to_labels`); it is still read and
            grouped, and its text still counts when repeats are named. On the truth set's main dev part a third of the
            labels read below 0.8 named nothing (53 of 79 named their element; 95 % of the others do): the floor raised
            its precision 94.8 -> 95.0 % for 0.1 point of recall (96.3 -> 96.2 %); at 0.9 recall fell 0.9 point for 0.1
            more (OCR revision 85). 0.5 (``min_confidence``) labels every element read, as revisions up to 84 did.
        max_side: largest image side processed at full scale, in pixels. Wider images are scaled down to this
            width; taller ones are processed in horizontal strips of this height (docs/ocr-grouping.md).
        strip_overlap: overlap of consecutive strips, in (scaled) pixels; must exceed the tallest text line.
        split_elements: split detected text lines into element-level pieces (gap, colour and separator splits).
        group_lines: join the pieces of one element's line and the wrapped lines of one link, button or heading
            into one element (:mod:`screenmill.annotators.ocr_group`).
        split_gap_advances: a gap splits a line when it is at least this many average glyph advances wide ...
        split_gap_height: ... and at least this fraction of the line height.
        relative_gap: a gap also splits when it is this many times the median word space of its own line ...
        relative_gap_advances: ... and at least this many glyph advances (tight rows of links or tabs).
        color_split: RGB distance between the glyph colours of two adjacent words that splits them; 0 disables.
        chroma_split: distance between the two colours' hues (:func:`_chroma`; grey has none) that splits them too,
            whatever their RGB distance: grey prose and a blue link whose thin glyphs are both anti-aliased towards
            the page lie under ``color_split`` apart; 0 disables.
        ink_contrast: smallest per-column intensity range (0..255) that counts as a glyph stroke.
        line_min_confidence: detected lines recognised below this are dropped before splitting (a piece of a
            split line is recognised again and filtered by ``min_confidence``).
        det_box_thresh: detector box score threshold (RapidOCR ``box_thresh``).
        det_unclip_ratio: detector box expansion (RapidOCR ``unclip_ratio``).
        det_faint_target: with ``det_faint_gain`` above 1, the detector reads an image whose faint text is stretched
            to this local contrast (grey standard deviation over ``det_faint_window`` px, 0-255;
            :func:`screenmill.annotators.ocr_detect.detector_input`) ...
        det_faint_gain: ... by at most this factor; 1 (the default) turns it off: the detector reads the screenshot as
            it is. 4 finds 9-10 px pale text on coloured bands the plain detector misses, but on dev it lost more
            short texts than it found (docs/ocr.md, "Faint text"), so it is an option ...
        det_faint_window: ... measured over this many pixels square (odd).
        det_scale: with ``det_text_height`` 0, the detector reads every strip scaled by this factor (its boxes are
            scaled back; the lines are read from the screenshot's own pixels); also the scale of a strip in which no
            glyph is found.
        det_text_height: above 0 (15, the default since OCR revision 88), the detector's scale follows the text: each
            strip is read at the scale that brings its glyphs' height
            (:func:`screenmill.annotators.ocr_detect.glyph_height`, an upper quartile: letters with ascenders) to
            this many pixels (:func:`screenmill.annotators.ocr_detect.detector_scale`): 1.5 for the 9-11 px glyphs
            of a desktop page at 1x, which finds small text and splits touching elements the detector reads as one
            line at its own scale, 0.75 for a phone's at 3x, which costs less for about the same reading ...
        det_scale_range: ... within these bounds (low, high) ...
        det_max_pixels: ... and reading at most this many pixels of a strip (0: no cap), which bounds the detector's
            CPU for a large screenshot (docs/ocr.md, "The detector's scale").
        intra_op_threads: onnxruntime intra-op threads per session; 0 means ``min(4, os.cpu_count())``.
        inter_op_threads: onnxruntime inter-op threads per session.
        grouping: who decides whether two neighbouring pieces join: ``"model"`` (the default: the classifier
            packaged with :mod:`screenmill.annotators.ocr_model`, trained on pairs labelled by DOM truth; the rules'
            decision is one of its features, overruled where the model is sure) or ``"rules"``
            (:mod:`screenmill.annotators.ocr_group` alone).
        grouping_model: with ``grouping="model"``, the packaged model's version (its data's and weights' hash), so
            that it is part of the run's config hash; must match the packaged model (the label settings fill it in,
            :class:`screenmill.annotators.ocr_producer.OcrLabelSettings`).
        thresholds: every numeric threshold of the reading and the grouping
            (:class:`screenmill.annotators.ocr_thresholds.OcrThresholds`).
    """

    min_confidence: float = 0.5
    label_min_confidence: float = 0.8
    max_side: int = 2560
    strip_overlap: int = 160
    split_elements: bool = True
    group_lines: bool = True
    split_gap_advances: float = 1.35
    split_gap_height: float = 0.4
    relative_gap: float = 1.8
    relative_gap_advances: float = 0.9
    color_split: float = 90.0
    chroma_split: float = 60.0
    ink_contrast: int = 32
    line_min_confidence: float = 0.3
    det_box_thresh: float = 0.5
    det_unclip_ratio: float = 1.6
    det_faint_target: float = 40.0
    det_faint_gain: float = 1.0
    det_faint_window: int = 15
    det_scale: float = 1.0
    det_text_height: float = 15.0
    det_scale_range: tuple[float, float] = (0.75, 1.5)
    det_max_pixels: int = 2_400_000
    intra_op_threads: int = 2
    inter_op_threads: int = 1
    grouping: str = GROUPINGS[0]
    grouping_model: str = ""
    thresholds: OcrThresholds = OcrThresholds()

    def __post_init__(self) -> None:
        def check(ok: bool, msg: str) -> None:
            if not ok:
                raise ValueError(f"OcrConfig: {msg}")

        for name in ("min_confidence", "label_min_confidence", "line_min_confidence", "det_box_thresh"):
            v = getattr(self, name)
            check(isinstance(v, int | float) and 0.0 <= v <= 1.0, f"{name} must be in [0, 1], got {v!r}")
        check(
            isinstance(self.max_side, int) and self.max_side >= 64,
            f"max_side must be an int >= 64, got {self.max_side!r}",
        )
        check(
            isinstance(self.strip_overlap, int) and 0 <= self.strip_overlap <= self.max_side // 2,
            f"strip_overlap must be an int in [0, max_side // 2], got {self.strip_overlap!r}",
        )
        for name in ("split_elements", "group_lines"):
            v = getattr(self, name)
            check(isinstance(v, bool), f"{name} must be a bool, got {v!r}")
        for name in (
            "split_gap_advances",
            "split_gap_height",
            "relative_gap",
            "relative_gap_advances",
            "det_unclip_ratio",
            "det_faint_target",
        ):
            v = getattr(self, name)
            check(isinstance(v, int | float) and v > 0, f"{name} must be > 0, got {v!r}")
        for name in ("color_split", "chroma_split"):
            v = getattr(self, name)
            check(isinstance(v, int | float) and v >= 0, f"{name} must be >= 0, got {v!r}")
        check(
            isinstance(self.det_faint_gain, int | float) and 1.0 <= self.det_faint_gain <= 16.0,
            f"det_faint_gain must be in [1, 16], got {self.det_faint_gain!r}",
        )
        check(
            isinstance(self.det_faint_window, int) and 3 <= self.det_faint_window <= 255 and self.det_faint_window % 2,
            f"det_faint_window must be an odd int in [3, 255], got {self.det_faint_window!r}",
        )
        check(
            isinstance(self.det_scale, int | float) and 0.25 <= self.det_scale <= 4.0,
            f"det_scale must be in [0.25, 4], got {self.det_scale!r}",
        )
        check(
            isinstance(self.det_text_height, int | float) and 0 <= self.det_text_height <= 200,
            f"det_text_height must be in [0, 200] (0: off), got {self.det_text_height!r}",
        )
        lo_hi = self.det_scale_range
        check(
            isinstance(lo_hi, tuple)
            and len(lo_hi) == 2
            and all(isinstance(v, int | float) for v in lo_hi)
            and 0.25 <= lo_hi[0] <= lo_hi[1] <= 4.0,
            f"det_scale_range must be a tuple (low, high) with 0.25 <= low <= high <= 4, got {lo_hi!r}",
        )
        check(
            isinstance(self.det_max_pixels, int) and (self.det_max_pixels == 0 or self.det_max_pixels >= 64 * 64),
            f"det_max_pixels must be 0 (no cap) or an int >= 4096, got {self.det_max_pixels!r}",
        )
        check(
            isinstance(self.ink_contrast, int) and 1 <= self.ink_contrast <= 255,
            f"ink_contrast must be an int in [1, 255], got {self.ink_contrast!r}",
        )
        for name in ("intra_op_threads", "inter_op_threads"):
            v = getattr(self, name)
            check(isinstance(v, int) and v >= 0, f"{name} must be an int >= 0, got {v!r}")
        check(
            isinstance(self.thresholds, OcrThresholds),
            f"thresholds must be an OcrThresholds, got {type(self.thresholds).__name__}",
        )
        check(self.grouping in GROUPINGS, f"grouping must be one of {', '.join(GROUPINGS)}, got {self.grouping!r}")
        if self.grouping == "model" and self.grouping_model:
            from screenmill.annotators.ocr_model import packaged_version

            check(
                self.grouping_model == packaged_version(),
                f"grouping_model {self.grouping_model!r} is not the packaged model ({packaged_version()!r})",
            )
