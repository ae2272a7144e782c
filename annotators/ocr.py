"""CPU OCR annotator: element-level text boxes and click points from a UI screenshot (RapidOCR / PP-OCRv4 ONNX).

The detector of PP-OCRv4 finds text *lines*; on a web page one line often holds several clickable things (a nav bar
"Home  World  Politics", a toolbar, a table row's action links, "Don't have an account? Create one"). Grounding data
needs one element per clickable thing, so each detected line is split into elements. First, the detector's boxes
are mended where it missed a short token between two words it found ("Mar" | "2025" without the "01," between): two
boxes of one row and type size with ink of the words' contrast in the gap between them, no vertical rule, are read
as one line (:func:`_bridge_missed_ink`). Then:

1. **Gap split.** The line's box is scanned column by column over its central band; a column with no glyph stroke is
   empty (it is uniform, whatever the background colour is, so a button edge or a coloured pill does not count as
   ink). A run of empty columns at least ``split_gap_advances`` times the line's average glyph advance *and*
   ``split_gap_height`` times the line height wide separates two elements; so does one at least
   ``relative_gap`` times the median of the line's other word spaces (the n widest gaps, n = spaces in the
   recognised text, not one between two punctuation marks) and ``relative_gap_advances`` advances wide. Measured
   on ``samples/truth``: word spaces are 0.3-1.0 advances (up to 1.3 in monospace code), gaps between nav links,
   menu items, table cells and buttons 1.7 and more.
2. **Colour split.** Between two words (runs of ink separated by at least a word space) whose glyph colours differ
   by more than ``color_split`` (RGB distance) or whose hues differ by more than ``chroma_split``, e.g. grey body
   text followed by a blue link, or a bold price followed by a struck-through grey one. The punctuation at a word's
   ends (the full stop after a link, the brackets around an e-mail address) does not decide its colour.
3. **Separator split.** Pieces that are only separators (``/ | · • > »``) are dropped and a recognised
   ``" / "``, ``" | "``, ``" · "`` inside a piece splits it (breadcrumbs, footers).

Each piece of a split line is recognised again on its own crop (exact text and confidence instead of positions
guessed from CTC columns; RapidOCR's ``return_word_box`` gives only approximate per-character boxes). A piece's box
is tight to its ink horizontally and spans the detected line vertically; its click point is the box centre.

Then the pieces of one element's line that the text says belong together ("Feb" | "15, 2025") and the lines of one
wrapped link, button or heading are joined into one element (:mod:`screenmill.annotators.ocr_group`): its box spans
them, its click point is the first line's centre.

Large images: an image wider than ``max_side`` is scaled down to that width; one still taller than ``max_side`` is
processed in horizontal strips of ``max_side`` pixels that overlap by ``strip_overlap`` pixels (a line belongs to
the strip whose core holds its centre), so tall phone screenshots and full-page captures keep full resolution.
Boxes and points are always returned in pixels of the image passed in.
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
import unicodedata
from collections.abc import Callable
from typing import Any

import numpy as np
from screenmill.annotators.ocr_group import END_STOP, group_lines, join_code_rows, join_long_lines, join_pieces
from screenmill.annotators.scripts import script_of
from screenmill.annotators.wording import MAX_INSTRUCTION_NAME, Rows, reading_order

# Check boxes, radio buttons and square icons that the (Chinese + English) recogniser reads as a character.
_BOX_GLYPHS = frozenset("口囗回日目〇○◯□■▢")
#: The marks that separate a row's items when spaced ("Docs / Guide", "Home | About").
_SEPARATOR_MARKS = "/|·•»›"
_SEPARATOR_RE = re.compile(rf"\s+[{_SEPARATOR_MARKS}]\s+")
#: ... and in a breadcrumb ("»" or "›" in it) a spaced ">" too: the recogniser reads some of its "»" as ">"
#: ("Documentation » The Python Tutorial > 4. More Control Flow Tools").
_CRUMB_RE = re.compile(rf"\s+[{_SEPARATOR_MARKS}>]\s+")
#: The marks that are no text of a piece's own (:func:`_keep`): the separators, a breadcrumb's ">" and dashes.
_SEPARATOR_CHARS = _SEPARATOR_MARKS + ">–—"
#: List markers the recogniser reads at a line's start.
_LIST_MARKS = "■▪◦"
#: A list marker, dash or separator that starts a piece, then a space and more text (not a dash: "- -catalogs" is
#: "--catalogs" read with a space; not "/": "/ month" is a price's unit); a separator that ends one.
_LEAD_MARK = re.compile(rf"^[{_SEPARATOR_MARKS.replace('/', '')}{_LIST_MARKS}\-–—]\s+(?=[^\s\-–—])")
_TRAIL_MARK = re.compile(rf"(?<=\S)\s+[{_SEPARATOR_MARKS}]$")
#: A row of two or more bracketed items, side by side: texinfo's "[Contents][Index]", a wiki's "[edit] [history]".
_BRACKETED_RE = re.compile(r"\s*(?:\[[^\[\]]*[^\W_][^\[\]]*\]\s*){2,}")
#: ... read with its first "[" lost ("Contents][Index]") ...
_UNOPENED_ROW = re.compile(r"^\s*(?=[^\W\d_][^\[\]]*\]\[)")
#: ... or with a "]" read as a letter or a bar before the next "[" ("[Contentsl[lndex]").
_BRACKET_AS_LETTER = re.compile(r"(?<=[^\W\d_])[lI1|](?=\[)")
#: A Python console's prompt read as letters ("vvv from datetime import date", "VVV" alone): ">>>".
_PROMPT_AS_VS = re.compile(r"^[vV]{3}(?=\s|$)")
_INSTALL_HINT = (
    "the OCR annotator needs rapidocr-onnxruntime: run `bash infra/setup.sh`, or "
    "`pip install onnxruntime opencv-python-headless pyclipper shapely six PyYAML` and then "
    "`pip install --no-deps rapidocr-onnxruntime==1.4.4`"
)


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
            width; taller ones are processed in horizontal strips of this height (see the module docstring).
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
        intra_op_threads: onnxruntime intra-op threads per session; 0 means ``min(4, os.cpu_count())``.
        inter_op_threads: onnxruntime inter-op threads per session.
        grouping: who decides whether two neighbouring pieces join: ``"rules"`` (:mod:`screenmill.annotators.
            ocr_group`, the default) or ``"model"`` (the classifier packaged with :mod:`screenmill.annotators.
            ocr_model`, trained on pairs labelled by DOM truth; the rules' decision is one of its features).
        grouping_model: with ``grouping="model"``, the packaged model's version (its data's and weights' hash), so
            that it is part of the run's config hash; must match the packaged model (``screenmill run`` fills it).
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
    intra_op_threads: int = 2
    inter_op_threads: int = 1
    grouping: str = "rules"
    grouping_model: str = ""

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
        ):
            v = getattr(self, name)
            check(isinstance(v, int | float) and v > 0, f"{name} must be > 0, got {v!r}")
        for name in ("color_split", "chroma_split"):
            v = getattr(self, name)
            check(isinstance(v, int | float) and v >= 0, f"{name} must be >= 0, got {v!r}")
        check(
            isinstance(self.ink_contrast, int) and 1 <= self.ink_contrast <= 255,
            f"ink_contrast must be an int in [1, 255], got {self.ink_contrast!r}",
        )
        for name in ("intra_op_threads", "inter_op_threads"):
            v = getattr(self, name)
            check(isinstance(v, int) and v >= 0, f"{name} must be an int >= 0, got {v!r}")
        check(self.grouping in ("rules", "model"), f"grouping must be 'rules' or 'model', got {self.grouping!r}")
        if self.grouping == "model" and self.grouping_model:
            from screenmill.annotators.ocr_model import packaged_version

            check(
                self.grouping_model == packaged_version(),
                f"grouping_model {self.grouping_model!r} is not the packaged model ({packaged_version()!r})",
            )


@dataclasses.dataclass(frozen=True, slots=True)
class TextElement:
    """One text element found in a screenshot.

    Attributes:
        text: the recognised text, whitespace-collapsed and stripped.
        box: ``(x0, y0, x1, y1)`` in pixels of the image passed to :meth:`OcrAnnotator.annotate`.
        point: the click point ``(x, y)``, the centre of ``box``.
        confidence: recognition confidence in ``[0, 1]``.
    """

    text: str
    box: tuple[float, float, float, float]
    point: tuple[float, float]
    confidence: float


@dataclasses.dataclass(frozen=True, slots=True)
class OcrResult:
    """What :meth:`OcrAnnotator.read` found in one screenshot.

    Attributes:
        elements: the text elements (what :meth:`OcrAnnotator.annotate` returns).
        unread: boxes ``(x0, y0, x1, y1)`` of text lines the detector found and the recogniser read as nothing: text
            in a script the models cannot read (Korean, Japanese kana; :mod:`screenmill.annotators.scripts`), reported
            instead of silently missed.
    """

    elements: list[TextElement]
    unread: list[tuple[float, float, float, float]]


@dataclasses.dataclass(slots=True)
class _Piece:
    """A horizontal span of a detected line, in processed-image pixels (x1 exclusive)."""

    x0: int
    x1: int
    text: str | None = None
    confidence: float = 0.0
    #: the piece is set in a monospace font (:func:`_monospace_pitch`): its " | " and brackets are code, not separators
    mono: bool = False
    #: the piece's last run of ink is a letter's, too wide for a full stop (:data:`FULL_STOP_WIDTH`): a "." the
    #: recogniser reads at its end is not there (the end of a link's underline under a "g": "Reporting.")
    letter_end: bool = False


class OcrAnnotator:
    """Text elements with click points from UI screenshots, on CPU.

    Construction is cheap; the ONNX sessions are built on the first :meth:`load` (or :meth:`annotate`) call, once
    per instance (thread-safe). An instance is meant to be reused for many images (e.g. one per Beam worker).

    Args:
        config: the settings; see :class:`OcrConfig`.
    """

    NAME = "ocr-rapidocr"
    VERSION = "2025.1-bars3"

    def __init__(self, config: OcrConfig = OcrConfig()) -> None:  # noqa: B008 - frozen, so a shared default is safe
        if not isinstance(config, OcrConfig):
            raise TypeError(f"config must be an OcrConfig, got {type(config).__name__}")
        self.config = config
        self._engine: Any = None
        self._cv2: Any = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ engine
    def load(self) -> None:
        """Import RapidOCR and build the engine (detector and recogniser sessions) once.

        Raises:
            RuntimeError: rapidocr-onnxruntime (or one of its dependencies) is not installed; the message says how
                to install it.
        """
        if self._engine is not None:
            return
        with self._lock:
            if self._engine is not None:
                return
            try:
                import cv2
                from rapidocr_onnxruntime import RapidOCR
            except ImportError as e:
                raise RuntimeError(f"{_INSTALL_HINT} ({e})") from e
            cfg = self.config
            intra = cfg.intra_op_threads or min(4, os.cpu_count() or 1)
            self._cv2 = cv2
            self._engine = RapidOCR(
                use_cls=False,  # UI text is upright; the angle classifier only costs time
                intra_op_num_threads=intra,
                inter_op_num_threads=cfg.inter_op_threads or 1,
                max_side_len=max(cfg.max_side, 64) + 1,  # we scale ourselves; keep RapidOCR from doing it again
                print_verbose=False,
            )
            # The detector normalises the image with float64 mean and std (then casts it to float32): in float32 it
            # takes a sixth of the time (0.09 -> 0.015 s for a 1280x800 screenshot).
            det = self._engine.text_det
            det.mean = np.asarray(det.mean, dtype=np.float32)
            det.std = np.asarray(det.std, dtype=np.float32)

    # ------------------------------------------------------------------ public API
    def annotate(self, image: np.ndarray) -> list[TextElement]:
        """Find the text elements of one screenshot.

        Args:
            image: RGB ``uint8`` array of shape ``(H, W, 3)``.

        Returns:
            The elements in reading order (top to bottom, then left to right); empty when no text is found.

        Raises:
            ValueError: ``image`` is not an ``(H, W, 3)`` uint8 array or has a zero side.
            RuntimeError: rapidocr-onnxruntime is not installed (from :meth:`load`).
        """
        return self.read(image).elements

    def read(self, image: np.ndarray) -> OcrResult:
        """Find the text elements of one screenshot, and the detected text lines that could not be read.

        Args:
            image: RGB ``uint8`` array of shape ``(H, W, 3)``.

        Returns:
            The :class:`OcrResult`: elements in reading order (top to bottom, then left to right: their click points
            by :func:`screenmill.annotators.wording.reading_order` in rows of
            :attr:`screenmill.annotators.wording.Rows.BANDS`), unread line boxes top to bottom; both in pixels of
            ``image``.

        Raises:
            ValueError: ``image`` is not an ``(H, W, 3)`` uint8 array or has a zero side.
            RuntimeError: rapidocr-onnxruntime is not installed (from :meth:`load`).
        """
        if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
            desc = f"{image.dtype} {image.shape}" if isinstance(image, np.ndarray) else type(image).__name__
            raise ValueError(f"annotate() needs an RGB uint8 array of shape (H, W, 3), got {desc}")
        h, w = image.shape[:2]
        if h == 0 or w == 0:
            raise ValueError(f"annotate() got an empty image of shape {image.shape}")
        self.load()
        cfg = self.config
        scale = min(1.0, cfg.max_side / w)
        rgb = image
        if scale < 1.0:
            rgb = self._cv2.resize(image, (cfg.max_side, max(1, round(h * scale))), interpolation=self._cv2.INTER_AREA)
        rgb = np.ascontiguousarray(rgb)
        elements: list[TextElement] = []
        unread: list[tuple[float, float, float, float]] = []
        for top, core0, core1 in _strips(rgb.shape[0], cfg.max_side, cfg.strip_overlap):
            strip = rgb[top : top + cfg.max_side]
            found, not_read = self._annotate_strip(strip)
            for x0, y0, x1, y1, text, conf in [*found, *((*b, "", 0.0) for b in not_read)]:
                cy = (y0 + y1) / 2 + top
                if not core0 <= cy < core1:
                    continue
                bx = (x0 / scale, (y0 + top) / scale, x1 / scale, (y1 + top) / scale)
                bx = (
                    max(0.0, float(bx[0])),
                    max(0.0, float(bx[1])),
                    min(float(w), float(bx[2])),
                    min(float(h), float(bx[3])),
                )
                if not text:
                    unread.append(bx)
                    continue
                point = ((bx[0] + bx[2]) / 2, (bx[1] + bx[3]) / 2)
                elements.append(TextElement(text=text, box=bx, point=point, confidence=float(conf)))
        elements = _drop_contained(elements)
        if cfg.group_lines:
            elements = group_elements(image, elements, cfg)
        points = [(e.point[0], e.point[1], e.point[0], e.point[1]) for e in elements]  # ordered by their click points
        elements = [elements[i] for i in reading_order(points, Rows.BANDS)]
        return OcrResult(elements, sorted(unread, key=lambda b: (b[1], b[0])))

    # ------------------------------------------------------------------ internals
    def _annotate_strip(
        self, rgb: np.ndarray
    ) -> tuple[list[tuple[int, int, int, int, str, float]], list[tuple[int, int, int, int]]]:
        """Detect, recognise and split the lines of one strip; returns the pieces (x0, y0, x1, y1, text, conf) and
        the boxes of the detected lines read as nothing, in strip px."""
        cfg = self.config
        bgr = np.ascontiguousarray(rgb[:, :, ::-1])
        quads, _ = self._engine(
            bgr,
            use_det=True,
            use_cls=False,
            use_rec=False,
            box_thresh=cfg.det_box_thresh,
            unclip_ratio=cfg.det_unclip_ratio,
        )
        if not quads:
            return [], []
        H, W = rgb.shape[:2]
        boxes = []
        for q in _bridge_missed_ink([np.asarray(quad, dtype=np.float32) for quad in quads], rgb, cfg.ink_contrast):
            x0, y0, x1, y1 = _pixel_box(q, W, H)
            if x1 - x0 >= 2 and y1 - y0 >= 2:
                boxes.append((q, x0, y0, x1, y1))
        rgb, bgr, dotted = _erase_dotted_rules(rgb, bgr, [b[1:] for b in boxes], cfg.ink_contrast)
        lines, crops = [], []
        floors = _free_rows_below([b[1:] for b in boxes], H)
        for q, x0, y0, x1, y1 in boxes:
            if _is_axis_aligned(q):
                crops.append(bgr[y0:y1, x0:x1])
            else:
                crops.extend(self._engine.get_crop_img_list(bgr, [q]))
            lines.append((q, x0, y0, x1, y1))
        out: list[tuple[int, int, int, int, str, float]] = []
        unread: list[tuple[int, int, int, int]] = []
        pending: list[tuple[int, int, tuple[int, int], _Piece]] = []  # (line y0, y1, pads, piece) to recognise
        for k, ((q, x0, y0, x1, y1), (text, conf)) in enumerate(zip(lines, self._recognise(crops), strict=True)):
            line_text = _clean(text)
            if not line_text:
                unread.append((x0, y0, x1, y1))
                continue
            if float(conf) < cfg.line_min_confidence:
                continue
            pieces = None
            if cfg.split_elements and _is_axis_aligned(q):
                below = rgb[y1 : min(floors[k], y1 + int(round(UNDERSCORE_DEPTH * (y1 - y0)))), x0:x1]
                pieces = self._split_line(rgb[y0:y1, x0:x1], line_text, below, dotted[k])
            if pieces is None:  # not analysable (rotated, no ink found): keep the line as detected
                if _keep(line_text, float(conf), cfg.min_confidence):
                    out.append((x0, y0, x1, y1, line_text, float(conf)))
                continue
            if len(pieces) == 1:
                p = pieces[0]
                p.x0, p.x1 = p.x0 + x0, p.x1 + x0
                for sub in self._separator_split(rgb[y0:y1], p, _no_stop(line_text, p), float(conf)):
                    if _keep(sub.text, sub.confidence, cfg.min_confidence):
                        out.append((sub.x0, y0, sub.x1, y1, sub.text, sub.confidence))
                continue
            pad = max(2, (y1 - y0) // 4)
            for k, p in enumerate(pieces):
                # padded, but short of the next piece's ink: its glyphs would be read too
                left = pad if k == 0 else max(0, min(pad, p.x0 - pieces[k - 1].x1 - 1))
                right = pad if k == len(pieces) - 1 else max(0, min(pad, pieces[k + 1].x0 - p.x1 - 1))
                pending.append((y0, y1, (left, right), p))
            for p in pieces:
                p.x0 += x0
                p.x1 += x0
        if pending:
            crops = []
            for y0, y1, (left, right), p in pending:
                crops.append(bgr[y0:y1, max(0, p.x0 - left) : min(W, p.x1 + right)])
            for (y0, y1, _pad, p), (text, conf) in zip(pending, self._recognise(crops), strict=True):
                for sub in self._separator_split(rgb[y0:y1], p, _no_stop(_clean(text), p), float(conf)):
                    if _keep(sub.text, sub.confidence, cfg.min_confidence):
                        out.append((sub.x0, y0, sub.x1, y1, sub.text, sub.confidence))
        return out, unread

    def _recognise(self, crops: list[np.ndarray]) -> list[tuple[str, float]]:
        """Read each BGR line crop alone: (text, confidence) per crop.

        Not in batches: RapidOCR pads every crop of a batch to the widest one's width, and PP-OCR's recogniser then
        drops word spaces ("Refusestowritetoanyfileorresource."); alone, a crop is also cheaper to read (no padded
        columns to compute). A crop lower than the recogniser's input is scaled up to it here, with cubic
        interpolation: RapidOCR's linear upscaling blurs the word gaps of small text, which it then reads as
        nothing (on the truth set's dev pages, the two together cut the word spaces lost from 21-33 % to under
        1 %)."""
        rec = self._engine.text_rec
        rec_h = rec.rec_image_shape[1]
        out = []
        for crop in crops:
            h, w = crop.shape[:2]
            if 2 <= h < rec_h:
                crop = self._cv2.resize(
                    crop, (max(1, round(w * rec_h / h)), rec_h), interpolation=self._cv2.INTER_CUBIC
                )
            (res,), _ = rec([np.ascontiguousarray(crop)], False)
            out.append((res[0], float(res[1])))
        return out

    def _split_line(
        self, crop: np.ndarray, text: str, below: np.ndarray | None = None, dotted: np.ndarray | None = None
    ) -> list[_Piece] | None:
        """Split one line crop into element pieces (crop-relative columns); None when it cannot be analysed.
        ``below``: rows of the image under the crop that no other line covers (an underscore may lie there,
        :func:`_underscores`). ``dotted``: per column, whether a dotted underline lay under it before it was painted
        over (:func:`_erase_dotted_rules`): an underline like a solid one, so "Previous:" | "Welcome to Click" split
        where it starts."""
        cfg = self.config
        bg = np.median(crop.reshape(-1, 3), axis=0)  # the line's background, for the helpers below
        under_rows, under_cols = _underline(crop, cfg.ink_contrast, bg)
        ink = _ink_columns(crop, cfg.ink_contrast, under_rows, bg=bg)
        if not ink.any():
            return None
        ink |= _underscores(crop, cfg.ink_contrast, under_cols, ink, below, bg)
        if dotted is not None:
            under_cols = under_cols | dotted
        cols = np.flatnonzero(ink)
        a, b = int(cols[0]), int(cols[-1]) + 1
        runs = _runs(ink[a:b], a)  # ink runs [s, e)
        h = crop.shape[0]
        gaps = [runs[i + 1][0] - runs[i][1] for i in range(len(runs) - 1)]
        nchars = max(1, len(text.replace(" ", "")))
        wide = sum(g for g in gaps if g > 0.4 * h)
        advance = max(1.0, ((b - a) - wide) / nchars)
        split_at = max(cfg.split_gap_advances * advance, cfg.split_gap_height * h)
        word_at = max(2.0, 0.5 * advance)
        pitch = _monospace_pitch(runs, len(text), (b - a))
        if pitch is not None:  # code or a terminal: a word space is a whole cell, so only a run of blank cells splits
            split_at = MONO_SPLIT_CELLS * pitch
            word_at = max(2.0, 0.5 * pitch)
            runs = _runs(_ink_columns(crop, cfg.ink_contrast, under_rows, band=False, bg=bg)[a:b], a)  # a bar is ink
            gaps = [runs[i + 1][0] - runs[i][1] for i in range(len(runs) - 1)]
        # A gap much wider than the other word spaces of its own line splits too (tight rows of links or tabs,
        # "4 Branches  27 Tags"). The word spaces are the n widest gaps, n = the spaces in the recognised text
        # (letter gaps of monospace or bold text can be as wide as a word space, so width alone cannot tell). A space
        # the recogniser put between two punctuation marks is none: "--maxdepth" read as "- -maxdepth" would make the
        # narrow gap between the dashes a word space, and the real one beside it look wide.
        n_spaces = sum(
            1 for k in range(1, len(text) - 1) if text[k] == " " and (text[k - 1].isalnum() or text[k + 1].isalnum())
        )
        spaces = sorted(enumerate(gaps), key=lambda ig: -ig[1])[:n_spaces]
        splits = set()
        for i, g in enumerate(gaps):
            if g >= split_at:
                splits.add(i)
            elif pitch is None and g >= cfg.relative_gap_advances * advance:
                others = [o for k, o in spaces if k != i]
                if others and g >= cfg.relative_gap * float(np.median(others)):
                    splits.add(i)
        pieces: list[_Piece] = []
        start = runs[0][0]
        words: list[tuple[int, int]] = []  # words of the current piece
        wstart = runs[0][0]
        rule = _underline_rule(crop, under_rows, under_cols, cfg.ink_contrast, bg)  # the underline itself
        if dotted is not None:
            rule = rule | dotted
        for i, g in enumerate(gaps):
            end = runs[i][1]
            if g >= word_at or (
                _underline_edge(rule, runs[i], runs[i + 1])
                and min(_ink_height(crop, runs[k], under_rows, cfg.ink_contrast, bg) for k in (i, i + 1)) >= 0.3 * h
            ):  # a word space, or an underline's end between two letters (not a full stop or quote after a link)
                words.append((wstart, end))
                wstart = runs[i + 1][0]
            if i in splits:
                pieces.extend(self._color_split(crop, words, start, end, runs, under_cols, rule))
                start = runs[i + 1][0]
                words = []
        words.append((wstart, runs[-1][1]))
        pieces.extend(self._color_split(crop, words, start, runs[-1][1], runs, under_cols, rule))
        for p in pieces:
            p.mono = pitch is not None
        if pieces and pitch is None and text.endswith("."):  # a dot close to a letter ("y.") joins its run: low, short
            end = pieces[-1].x1
            edge = (end - max(1, round(STOP_EDGE * h)), end)
            pieces[-1].letter_end = (
                any(e == end and e - s >= FULL_STOP_WIDTH * h for s, e in runs)
                and _ink_height(crop, edge, under_rows, cfg.ink_contrast, bg) >= FULL_STOP_WIDTH * h
                and not _ink_columns(crop, cfg.ink_contrast, under_rows, band=False, bg=bg)[  # a dot below the band
                    end : end + max(2, round(FULL_STOP_WIDTH * h))
                ].any()
            )
        # slivers at a line's ends are fragments of neighbouring glyphs the detector box cut through
        return [p for p in pieces if p.x1 - p.x0 >= max(2.0, 0.15 * h)] or None

    def _color_split(
        self,
        crop: np.ndarray,
        words: list[tuple[int, int]],
        start: int,
        end: int,
        runs: list[tuple[int, int]],
        under_cols: np.ndarray,
        rule: np.ndarray,
    ) -> list[_Piece]:
        """Split a piece between adjacent words whose glyph colours differ by more than ``color_split`` (RGB) or
        their hues by more than ``chroma_split``, both as the usual glyph colour and as the colour of their cores
        (:data:`CORE_SHARE`: a thin word's paler edges are no other colour); beside a lone glyph narrower than
        :data:`PUNCTUATION_WIDTH` line heights ("|", "*") only hues count.

        A word's colour is that of its ink without the narrow runs at its ends (``runs``: the line's [start, end)
        ink runs; :data:`PUNCTUATION_WIDTH`): a glyph colour is that of the most contrasting pixels, which would
        otherwise be punctuation of another colour stuck to the word (the black full stop after a red link, the
        brackets around a blue e-mail address). Where that punctuation after a word is of another colour than the
        word, the word ends its piece: the plain comma between two links of one colour ("Tutorial, Tutorial2"). Where
        the last mark alone is darker than the word and of another hue (:func:`_darker_other_hue`), it ends the piece
        too: a comma is a sliver of a long word of narrow monospace glyphs, whose colour over its ends stays the
        link's ("maps:next/1, maps:filter/2" on grey chips; :func:`mark_after` keeps the two apart when grouped). Where
        the punctuation before a word is darker than the word and of another hue, the word starts a piece: the black
        bracket between two links of one colour ("org (archives)"); a thin bracket of the word's own colour reads
        paler, not darker, so "(in bytes)" stays whole.
        ``under_cols``: per column of the crop, whether an underline (:func:`_underline`) lies under it; ``rule``:
        whether the underline's own long run does (:func:`_long_runs`: not a descender touching its rows). Where an
        underline starts or ends between two words, one underlined and the other bare (:func:`_underline_edge`), they
        are a link and its prose and split, whatever their colours."""
        cfg = self.config
        if (cfg.color_split <= 0 and cfg.chroma_split <= 0) or len(words) < 2:
            return [_Piece(start, end)]

        h = crop.shape[0]

        def covered(a: int, b: int) -> bool:
            return _share(under_cols, a, b) >= UNDERLINED_SHARE

        def one_link(i: int) -> bool:  # one underline runs from word i's end, across the gap, under word i + 1's start
            (s1, e1), (s2, e2) = words[i], words[i + 1]
            k = max(1, round(0.5 * h))
            return covered(e1, s2) and covered(max(s1, e1 - k), e1) and covered(s2, min(e2, s2 + k))

        def link_edge(i: int) -> bool:  # an underline starts or ends between words i and i + 1
            return _underline_edge(rule, words[i], words[i + 1])

        bg = np.median(crop[:, start:end].reshape(-1, 3), axis=0)
        colors, cores, ends, starts = [], [], [], []
        for s, e in words:
            whole = [(r0, r1) for r0, r1 in runs if s <= r0 and r1 <= e]
            inside = _without_punctuation(whole, h)
            core = crop[:, inside[0][0] : inside[-1][1]] if inside else crop[:, s:e]
            usual, cores_colour = _glyph_colors(core, bg, (None, CORE_SHARE))
            colors.append(usual)
            cores.append(cores_colour)
            # punctuation of another colour after the word: the plain comma between two links ("Tutorial, Tutorial2")
            trailing = len(inside) < len(whole) and inside[-1][1] < e
            ends.append(
                trailing
                and (
                    _colours_differ(_glyph_color(crop[:, s:e], bg), colors[-1], cfg)
                    or _darker_other_hue(_glyph_color(crop[:, whole[-1][0] : e], bg), colors[-1], bg, cfg)
                )
            )
            # punctuation before the word, of another colour and more ink than it: the black bracket opening a link
            # ("org (archives)"; a thin bracket of the word's own colour reads paler, never darker)
            opened = len(inside) < len(whole) and inside[0][0] > s
            lead = _glyph_color(crop[:, s : inside[0][0]], bg) if opened else None
            starts.append(_darker_other_hue(lead, colors[-1], bg, cfg))
        pieces: list[_Piece] = []
        s0 = start
        for i in range(len(words) - 1):
            if min(words[k][1] - words[k][0] for k in (i, i + 1)) >= PUNCTUATION_WIDTH * h:
                differ = _colours_differ(colors[i], colors[i + 1], cfg) and _colours_differ(
                    cores[i], cores[i + 1], cfg
                )
            else:  # a lone narrow glyph ("|" set off the pixel grid) may have no pixel its stroke covers whole: its
                # coverage makes it paler, never of another hue (the black "*" between two blue links still is)
                differ = _hues_differ(colors[i], colors[i + 1], cfg)
            if (ends[i] or starts[i + 1] or differ or link_edge(i)) and not one_link(i):
                pieces.append(_Piece(s0, words[i][1]))
                s0 = words[i + 1][0]
        pieces.append(_Piece(s0, end))
        return pieces

    def _separator_split(self, line: np.ndarray, p: _Piece, text: str, conf: float) -> list[_Piece]:
        """Split a recognised piece at " / ", " | ", " · " (mapping the parts onto its ink words), and a row of
        bracketed items into the items (:func:`_bracketed`); a monospace piece (code: "[ ASC | DESC ]") is kept
        whole."""
        if p.mono:
            return [_Piece(p.x0, p.x1, text, conf, mono=True)]
        items = _bracketed(text)
        if items:
            w = (p.x1 - p.x0) / len(text)
            return [_Piece(p.x0 + round(w * a), p.x0 + round(w * b), t, conf) for t, a, b in items]
        # a list marker or a separator alone at an end ("- decompresses files", "› rrule", "Docs /") is no part of
        # what the piece names: it goes as a separator does
        lead, trail = bool(_LEAD_MARK.match(text)), bool(_TRAIL_MARK.search(text))
        core = text.split(None, 1)[1] if lead else text
        core = core.rsplit(None, 1)[0] if trail else core
        separator = _CRUMB_RE if re.search(r"\s[»›]\s", core) else _SEPARATOR_RE
        if not (lead or trail or separator.search(core)):
            return [_Piece(p.x0, p.x1, text, conf)]
        parts = [""] * lead + separator.split(core) + [""] * trail
        tokens = text.split()
        crop = line[:, p.x0 : p.x1]
        ink = _ink_columns(crop, self.config.ink_contrast)
        cols = np.flatnonzero(ink)
        if cols.size == 0:
            return [_Piece(p.x0, p.x1, text, conf)]
        runs = _runs(ink[cols[0] : cols[-1] + 1], int(cols[0]))

        def by_characters() -> list[_Piece]:  # the parts at their characters' share of the ink, in the line's pixels
            return [
                _Piece(p.x0 + q.x0, p.x0 + q.x1, q.text, conf)
                for q in _by_characters(text, parts, runs, crop.shape[0])
            ]

        if len(runs) < len(tokens):  # fewer ink words than tokens: no word for each token to fall on
            return by_characters()
        # merge ink runs into as many words as there are tokens, cutting at the widest gaps
        gaps = sorted(range(len(runs) - 1), key=lambda i: runs[i + 1][0] - runs[i][1], reverse=True)
        cuts = sorted(gaps[: len(tokens) - 1])
        words, s = [], runs[0][0]
        for i in cuts:
            words.append((s, runs[i][1]))
            s = runs[i + 1][0]
        words.append((s, runs[-1][1]))
        out: list[_Piece] = []
        k = 0
        for part in parts:
            n = len(part.split())
            if n:
                out.append(_Piece(p.x0 + words[k][0], p.x0 + words[k + n - 1][1], part.strip(), conf))
            k += n + 1  # skip the separator token
        advance = (runs[-1][1] - runs[0][0]) / len(text)
        if not all(_fits(q.x1 - q.x0, len(q.text), advance) for q in out):
            # the tokens did not fall on the ink's words ("Go |" read "GoI": one token for two words): every part
            # was shifted, down to a word on a lone bar; place the parts by their characters instead
            out = by_characters()
        return out


# ---------------------------------------------------------------------- helpers
def group_elements(
    image: np.ndarray, elements: list[TextElement], config: OcrConfig, decide: Callable[..., bool] | None = None
) -> list[TextElement]:
    """Join the pieces of one element's line and the wrapped lines of one element
    (:mod:`screenmill.annotators.ocr_group`), with the colour, list-marker and ink-between cues read from the
    screenshot, then the pieces of a line of prose too long to name
    (:func:`screenmill.annotators.ocr_group.join_long_lines`: it gives no label, as the DOM labels give it none).

    The grouping step of :meth:`OcrAnnotator.read` (when ``config.group_lines``), kept apart so that a cache of the
    ungrouped elements (``OcrConfig(group_lines=False)``) can be grouped again by the same code
    (``infra/truthset/regroup.py``).

    Args:
        image: the RGB ``uint8`` screenshot the elements' boxes are in.
        elements: the ungrouped elements, in pixels of ``image``.
        config: the annotator's settings (its colour thresholds; ``grouping="model"``: the join decisions of the
            packaged model, :mod:`screenmill.annotators.ocr_model`, replace the rules').
        decide: the join decisions of neighbouring pieces (the ``decide`` of
            :func:`~screenmill.annotators.ocr_group.join_pieces` and of
            :func:`~screenmill.annotators.ocr_group.group_lines`), overriding ``config.grouping``; None: as
            ``config.grouping`` says.

    Returns:
        The grouped elements, in no particular order.
    """
    if decide is None and config.grouping == "model":
        from screenmill.annotators.ocr_model import packaged_decide

        decide = packaged_decide()
    colour_of = lambda box: text_colours(image, box, config)  # noqa: E731
    marked = lambda box: list_marker_left(image, box, config)  # noqa: E731
    between = lambda a, b: (  # noqa: E731
        other_ink_between(image, a, b)
        or underline_ends_between(image, a, b, config)
        or mark_after(image, a, config)
        or glyph_between(image, a, b, config)
    )
    under = lambda box, side: backdrop(image, box, side)  # noqa: E731
    ruled = lambda a, b: rule_between(image, a, b, config)  # noqa: E731
    code = join_code_rows(elements, colour_of, TextElement)
    pieces = join_pieces(code, colour_of, TextElement, between, under, decide)
    under_of = lambda box: underlined(image, box, config)  # noqa: E731
    grouped = group_lines(pieces, colour_of, TextElement, marked, ruled, under_of, decide)
    return join_long_lines(grouped, colour_of, TextElement, MAX_INSTRUCTION_NAME)


def _strips(height: int, size: int, overlap: int) -> list[tuple[int, int, int]]:
    """(top, core start, core end) of each horizontal strip; the cores tile [0, height) exactly."""
    if height <= size:
        return [(0, 0, height)]
    tops = list(range(0, height - size, size - overlap)) + [height - size]
    out = []
    for i, top in enumerate(tops):
        core0 = 0 if i == 0 else out[-1][2]
        core1 = height if i == len(tops) - 1 else (top + size + tops[i + 1]) // 2
        out.append((top, core0, core1))
    return out


def _drop_contained(elements: list[TextElement]) -> list[TextElement]:
    """Drop an element lying mostly (>= 80 % of its area) inside a longer-text element (duplicate detections)."""
    keep = []
    for i, e in enumerate(elements):
        area = max(1e-6, (e.box[2] - e.box[0]) * (e.box[3] - e.box[1]))
        dup = False
        for j, o in enumerate(elements):
            if i == j or len(o.text) < len(e.text) or (len(o.text) == len(e.text) and j > i):
                continue
            iw = min(e.box[2], o.box[2]) - max(e.box[0], o.box[0])
            ih = min(e.box[3], o.box[3]) - max(e.box[1], o.box[1])
            if iw > 0 and ih > 0 and iw * ih >= 0.8 * area:
                dup = True
                break
        if not dup:
            keep.append(e)
    return keep


def _crop(image: np.ndarray, box: tuple[float, float, float, float]) -> np.ndarray:
    """The pixels of ``image`` inside ``box`` (x0, y0, x1, y1), rounded to whole pixels."""
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    return image[max(0, y0) : max(0, y1), max(0, x0) : max(0, x1)]


def _runs(mask: np.ndarray, offset: int) -> list[tuple[int, int]]:
    """[start, end) runs of True in a 1-D boolean array, shifted by ``offset``."""
    m = np.concatenate([[False], mask, [False]]).astype(np.int8)
    d = np.diff(m)
    starts = np.flatnonzero(d == 1)
    ends = np.flatnonzero(d == -1)
    return [(int(s) + offset, int(e) + offset) for s, e in zip(starts, ends, strict=True)]


#: A dotted underline (``border-bottom: 1px dotted``, an ``<abbr>``'s default): dots at most this many line heights
#: wide (and 1 px), at a regular pitch (their starts :data:`DOT_PITCH_SLACK` px from the median step), at least
#: :data:`DOT_COUNT` of them over :data:`UNDERLINE_RUN` line heights, in a band at most :data:`UNDERLINE_ROWS` line
#: heights thick with no ink just above or below it (a row through glyph stems at a regular pitch, "mmm", has ink
#: above it).
DOT_WIDTH = 0.12
DOT_PITCH_SLACK = 1
DOT_COUNT = 6


#: A line is set in a monospace font when the centres of its ink runs (its glyphs: a monospace font leaves a gap in
#: every cell) lie on a grid of one pitch: their median distance from the grid is at most :data:`MONO_RESIDUAL` of a
#: cell plus :data:`MONO_SNAP` px (glyphs snapped to whole pixels) over at least :data:`MONO_RUNS` runs (a code block's
#: lines: 0.01-0.05; proportional prose: 0.1-0.17, down to 0.04 on a short line, which too few runs leave undecided).
MONO_RESIDUAL = 0.035
MONO_SNAP = 0.15
MONO_RUNS = 16
#: ... its pitch is searched within this share either side of the line's width over its characters.
MONO_SEARCH = 0.15
#: In a monospace line a word space is a whole cell (the gap between two words' ink up to ~1.8 cells beside narrow
#: glyphs: "] [", and ~3.4 across a " | " whose thin bar shows no ink), so a gap splits the line only from this many
#: cells: a column's alignment.
MONO_SPLIT_CELLS = 2.5


def _monospace_pitch(runs: list[tuple[int, int]], nchars: int, width: int) -> float | None:
    """The cell width of a line set in a monospace font, or None for proportional text (or too few glyphs to tell).

    Args:
        runs: the line's ink runs [start, end) (one per glyph, or per touching glyphs).
        nchars: the recognised text's length, spaces included (one cell each).
        width: the span of the line's ink.

    Returns:
        The pitch, in pixels, whose grid the run centres fit best, where their median distance from it is at most
        :data:`MONO_RESIDUAL` cells and :data:`MONO_SNAP` px; None otherwise.
    """
    if len(runs) < MONO_RUNS or nchars < MONO_RUNS or width <= 0:
        return None
    centres = np.array([(s + e) / 2 for s, e in runs], dtype=np.float64)
    guess = width / nchars
    pitches = np.linspace((1 - MONO_SEARCH) * guess, (1 + MONO_SEARCH) * guess, 121)
    pitches = pitches[pitches >= 2]
    if not pitches.size:
        return None
    phase = np.exp(2j * np.pi * centres[None, :] / pitches[:, None])  # each centre's phase on each pitch's grid
    mean = phase.mean(axis=1)
    size = np.abs(mean)
    unit = np.where(size >= 1e-9, mean / np.maximum(size, 1e-9), 1.0)
    off = np.median(np.abs(np.angle(phase * np.conj(unit)[:, None])), axis=1) / (2 * np.pi)
    off[size < 1e-9] = np.inf
    k = int(np.argmin(off))
    pitch = float(pitches[k])
    return pitch if off[k] <= MONO_RESIDUAL + MONO_SNAP / pitch else None


def _dotted_rule(crop: np.ndarray, ink_contrast: int) -> np.ndarray:
    """The pixels of a dotted underline in a line crop (boolean, the crop's shape; all False without one): see
    :data:`DOT_WIDTH`. The recogniser reads its dots as full stops between the words ("Basic.Concepts...Creating"),
    and the gap split sees them as ink in every word space."""
    h, w = crop.shape[:2]
    out = np.zeros((h, w), dtype=bool)
    if h < 6 or w < UNDERLINE_RUN * h:
        return out
    bg = np.median(crop.reshape(-1, 3), axis=0)
    zone = int(h * (1 - UNDERLINE_ZONE))
    ink = np.zeros((h, w), dtype=bool)  # the underline's zone and the row above it only
    ink[zone - 1 :] = _ink_mask(crop[zone - 1 :], bg, ink_contrast)
    widest = max(1, round(DOT_WIDTH * h))
    rows = np.zeros((h, w), dtype=bool)
    rises = np.count_nonzero(ink[zone:, 1:] & ~ink[zone:, :-1], axis=1) + ink[zone:, 0]
    for r in zone + np.flatnonzero(rises >= DOT_COUNT):  # a row of fewer runs holds no dotted rule
        dots = [(s, e) for s, e in _runs(ink[r], 0) if e - s <= widest]
        if len(dots) < DOT_COUNT:
            continue
        steps = np.diff([s for s, _ in dots])
        pitch = float(np.median(steps))
        chain = [dots[0]]
        for (s, e), step in zip(dots[1:], steps, strict=True):
            # a descender or a glyph's foot may take a dot's place: a step of two or three pitches goes on
            if pitch >= 2 and min(abs(step - m * pitch) for m in (1, 2, 3)) <= DOT_PITCH_SLACK:
                chain.append((s, e))
                continue
            _mark_dots(rows[r], chain, h, pitch)
            chain = [(s, e)]
        _mark_dots(rows[r], chain, h, pitch)
    for top, bottom in _runs(rows.any(axis=1), 0):  # each band of rows holding dots
        cols = rows[top:bottom].any(axis=0)
        if bottom - top > max(1, round(UNDERLINE_ROWS * h)):
            continue
        if any(0 <= edge < h and ink[edge, cols].mean() > 0.2 for edge in (top - 1, bottom)):
            continue  # ink just above or below: glyphs, not a rule
        out[top:bottom] = rows[top:bottom]
    return out


def _mark_dots(row: np.ndarray, chain: list[tuple[int, int]], h: int, pitch: float) -> None:
    """Mark a chain of dots (``[start, end)`` runs) on ``row`` when it is a dotted rule: :data:`DOT_COUNT` dots or
    more over :data:`UNDERLINE_RUN` line heights, most of them one ``pitch`` from the one before (a few two or three,
    where a descender took a dot's place)."""
    if len(chain) < DOT_COUNT or chain[-1][1] - chain[0][0] < UNDERLINE_RUN * h:
        return
    steps = np.diff([s for s, _ in chain])
    if np.mean(np.abs(steps - pitch) <= DOT_PITCH_SLACK) < 0.8:
        return
    for s, e in chain:
        row[s:e] = True


def _erase_dotted_rules(
    rgb: np.ndarray, bgr: np.ndarray, boxes: list[tuple[int, int, int, int]], ink_contrast: int
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray | None]]:
    """The strip with the dotted underlines of its line ``boxes`` (:func:`_dotted_rule`) painted over in their
    line's background colour (copies; the inputs unchanged and returned as they are where there is none), and per
    box, the columns its dotted underline ran under (:func:`_dotted_columns`; None without one)."""
    out = None
    spans: list[np.ndarray | None] = []
    for x0, y0, x1, y1 in boxes:
        crop = rgb[y0:y1, x0:x1]
        dots = _dotted_rule(crop, ink_contrast)
        if not dots.any():
            spans.append(None)
            continue
        spans.append(_dotted_columns(dots))
        if out is None:
            out = rgb.copy()
        bg = np.median(crop.reshape(-1, 3), axis=0).astype(rgb.dtype)
        out[y0:y1, x0:x1][dots] = bg
    if out is None:
        return rgb, bgr, spans
    return out, np.ascontiguousarray(out[:, :, ::-1]), spans


def _dotted_columns(dots: np.ndarray) -> np.ndarray:
    """Per column of a line crop, whether its dotted underline (``dots``, :func:`_dotted_rule`'s pixels) runs under
    it: each chain of dots from its first to its last, the blanks between dots (up to :data:`DOT_BRIDGE` line
    heights) filled."""
    cols = dots.any(axis=0)
    out = cols.copy()
    bridge = max(2, round(DOT_BRIDGE * dots.shape[0]))
    on = np.flatnonzero(cols)
    for a, b in zip(on[:-1], on[1:], strict=True):
        if 1 < b - a <= bridge + 1:
            out[a:b] = True
    return out


#: The widest blank between two dots of one dotted underline, in line heights: a descender takes a few dots' place.
DOT_BRIDGE = 1.0


#: How near (in line heights) a solid column of ink must stand to a glyph's other ink to count as its stem (see
#: :func:`_ink_columns`).
STEM_REACH = 0.25


#: A bare stem standing alone is a letter ("I") when it ends within this many line heights of the baseline and is at
#: least :data:`STEM_HEIGHT` line heights tall (see :func:`_ink_columns`).
STEM_BASE = 0.04
STEM_HEIGHT = 0.5


def _baseline(far: np.ndarray, runs: list[tuple[int, int]]) -> int | None:
    """The row most of a line crop's glyphs (``runs`` of ink columns of the mask ``far``) end on: the median of their
    lowest inked rows (a descender is the exception), or None with fewer than three glyphs."""
    ends = [int(np.flatnonzero(far[:, s:e].any(axis=1))[-1]) for s, e in runs if far[:, s:e].any()]
    return int(np.median(ends)) if len(ends) >= 3 else None


def _ink_mask(pixels: np.ndarray, bg, ink_contrast: int) -> np.ndarray:
    """Per pixel of ``pixels`` (``(..., 3)`` RGB), whether some channel stands at least ``ink_contrast`` off the
    background colour ``bg`` (both taken as integers)."""
    return np.abs(pixels.astype(np.int16) - np.asarray(bg).astype(np.int16)).max(axis=-1) >= ink_contrast


def _band_margin(height: int) -> int:
    """The rows left out above and below a line crop's central band, where :func:`_ink_columns` reads glyph strokes
    (15 %: neighbours' ascenders and descenders, an underscore)."""
    return max(1, int(round(0.15 * height)))


def _ink_columns(
    crop: np.ndarray,
    ink_contrast: int,
    under: np.ndarray | None = None,
    band: bool = True,
    bg: np.ndarray | None = None,
) -> np.ndarray:
    """Boolean per column of a line crop: does a glyph stroke (an intensity range of at least ``ink_contrast``)
    cross its central band (``band``; else its whole height: a bar "|" that spans the band has no range in it)? An
    underline is no glyph stroke (its rows, ``under``, as :func:`_underline` finds them, measured here when not
    given): under a link's trailing space ("<a>archives </a>and") it would join the link's last word to the next
    word, which may be another colour's. ``bg``: the crop's median colour where the caller has it."""
    h = crop.shape[0]
    if bg is None:
        bg = np.median(crop.reshape(-1, 3), axis=0)
    m = _band_margin(h) if band else 0
    rows = np.arange(m, h - m) if h - 2 * m >= 2 else np.arange(h)
    if under is None:
        under = _underline(crop, ink_contrast, bg)[0]
    if under.any() and (~under[rows]).sum() >= 2:
        rows = rows[~under[rows]]
    band = crop[rows].astype(np.int16)
    rng = (band.max(axis=0) - band.min(axis=0)).max(axis=-1)
    ink = rng >= ink_contrast
    # a stem that fills the band (a bold capital's in a box drawn tight to the caps: "DESCRIPTION") has no range in
    # it: it is ink where it stands off the background, reaches no higher or lower than the line's other glyphs (a
    # bracket or a bar "|" reaches past the letters) and stands beside a glyph's ink, within STEM_REACH line heights,
    # or under a bar or serif that leaves the band ("T"); a lone cell border or " | " between two words stands further
    # off, with nothing reaching out of it
    solid = ~ink & _ink_mask(band, bg, ink_contrast).all(axis=0)
    if solid.any() and ink.any():  # rare: the whole crop's pixels only then
        far = _ink_mask(crop, bg, ink_contrast)
        far[under] = False  # an underline's rows are no glyph's
        reach = max(1, int(round(STEM_REACH * h)))
        marks = np.flatnonzero(ink)
        inked = np.flatnonzero(far[:, ink].any(axis=1))
        outside = np.ones(h, dtype=bool)
        outside[rows] = False
        arm = far[outside].any(axis=0) & ~far[rows].any(axis=0)  # ink above or below the band only: a bar, a serif
        base = None  # the line's baseline: the row most glyphs end on (descenders are the few)
        for s, e in _runs(solid, 0):
            own = np.flatnonzero(far[:, s:e].any(axis=1))
            if own[0] < inked[0] or own[-1] > inked[-1]:
                continue
            left = marks[marks < s]
            right = marks[marks >= e]
            if (
                (left.size and s - left[-1] <= reach)
                or (right.size and right[0] - e < reach)
                or arm[max(0, s - 2) : s].any()
                or arm[e : e + 2].any()
            ):
                ink[s:e] = True
                continue
            if base is None:
                base = _baseline(far, _runs(ink, 0))
            # a sans-serif "I" standing alone ("How do I convert"): a bare stem as tall as a capital, on the baseline,
            # where a bar "|" descends below it
            if base is not None and abs(own[-1] - base) <= STEM_BASE * h and own[-1] - own[0] + 1 >= STEM_HEIGHT * h:
                ink[s:e] = True
    return ink


#: An underscore is a short rule below a line's central band: at most this many line heights long ("idn2_to_ascii",
#: "XML_GET_CONTENT"), where an underline under a link runs for :data:`UNDERLINE_RUN` or more.
UNDERSCORE_RUN = 1.2
#: An underscore comes this close (line heights, or half its own length: a monospace "I" or "T" stands in the middle
#: of its cell) to the ink of the words it joins.
UNDERSCORE_TOUCH = 0.2
#: The rows under a line's box searched for an underscore (line heights; see :func:`_underscores`).
UNDERSCORE_DEPTH = 0.3


def _free_rows_below(boxes: list[tuple[int, int, int, int]], height: int) -> list[int]:
    """Per line box (x0, y0, x1, y1), the first row under it that another box starts on, among the boxes overlapping
    it horizontally whose top lies below its middle (``height`` where none): the rows from its bottom to there are
    free of other detected text."""
    if not boxes:
        return []
    b = np.asarray(boxes, dtype=np.float64)
    middle = (b[:, 1] + b[:, 3]) / 2
    under = (b[None, :, 1] > middle[:, None]) & (b[None, :, 0] < b[:, None, 2]) & (b[None, :, 2] > b[:, None, 0])
    return [int(v) for v in np.where(under, b[None, :, 1], float(height)).min(axis=1)]


def _underscores(
    crop: np.ndarray,
    ink_contrast: int,
    under_cols: np.ndarray,
    ink: np.ndarray,
    below: np.ndarray | None = None,
    bg: np.ndarray | None = None,
) -> np.ndarray:
    """Per column of a line crop, whether an underscore lies there: ink below the central band that
    :func:`_ink_columns` reads (its lowest 15 %, or in ``below``: rows under the crop that no other line's box covers,
    where an underscore of capitals lies outside a box drawn tight to them, "GCRY_MD_FLAG_HMAC"; there only in a run
    no longer than an underscore, not a rule) in a run of columns with no ink in the band, with ink on both sides
    within :data:`UNDERSCORE_TOUCH` line heights or half the run's length (it joins two words: "ascii_4i"; a monospace
    underscore fills its cell and stops short of a narrow letter) and at most :data:`UNDERSCORE_RUN` line heights long,
    under no underline (``under_cols``). Without it the gap split and the recogniser cut an identifier at its
    underscores ("idn2 to ascii" | "4i"). ``bg``: the crop's median colour where the caller has it."""
    h = crop.shape[0]
    m = _band_margin(h)
    if h - 2 * m < 2:
        return np.zeros_like(ink)
    bg = np.median(crop.reshape(-1, 3), axis=0) if bg is None else bg
    low_ink = _ink_mask(crop[h - m :], bg, ink_contrast).any(axis=0)
    if below is not None and below.shape[0] and below.shape[1] == crop.shape[1]:
        for row in _ink_mask(below, bg, ink_contrast):
            for s, e in _runs(row, 0):
                if e - s <= UNDERSCORE_RUN * h:
                    low_ink[s:e] = True
    out = np.zeros_like(ink)
    for s, e in _runs(low_ink & ~ink & ~under_cols, 0):
        touch = max(1, int(round(max(UNDERSCORE_TOUCH * h, 0.5 * (e - s)))))
        if e - s <= UNDERSCORE_RUN * h and ink[max(0, s - touch) : s].any() and ink[e : e + touch].any():
            out[s:e] = True
    return out


#: An underline: a row of ink in the lower :data:`UNDERLINE_ZONE` of a line crop, with a run at least
#: :data:`UNDERLINE_RUN` line heights long (no glyph's stroke is that wide), at most :data:`UNDERLINE_ROWS` rows thick.
UNDERLINE_ZONE = 0.4
UNDERLINE_RUN = 1.5
UNDERLINE_ROWS = 0.15
#: Two words are one underlined link (no colour split between them: "The <code>phony</code> rule") when their
#: underline covers this share of the gap between them and of each word's end next to it.
UNDERLINED_SHARE = 0.6
#: An underline's gaps up to this many line heights wide are where it skips a glyph's ink (1-2 px at 20 px) ...
UNDERLINE_SKIP = 0.1
#: ... and up to this many where a descender passes under it (a "g" in a 34 px crop: 7 px).
UNDERLINE_DESCENDER_SKIP = 0.5
#: A word with an underline under less than this share of it is bare: an underline that ends between an underlined
#: word and a bare one is a link's end beside its prose, which splits them whatever their colours (a grey link in black
#: prose reads only a shade apart: "on <a>GitHub</a>. You can"). The descenders of a bare word ("report") touch the
#: underline's rows under up to a fifth of it.
BARE_SHARE = 0.3


def _underline(crop: np.ndarray, ink_contrast: int, bg: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The underline of a line crop: per row, whether it is part of one (a thin long rule low in the crop, see
    :data:`UNDERLINE_RUN`; rows of a thick band, a border or a table rule that fills the crop, are not), and per
    column, whether ink lies on those rows (all False without an underline). ``bg``: the crop's median colour where
    the caller has it."""
    h, w = crop.shape[:2]
    none = np.zeros(h, dtype=bool), np.zeros(w, dtype=bool)
    if h < 6 or w < UNDERLINE_RUN * h:
        return none
    if bg is None:
        bg = np.median(crop.reshape(-1, 3), axis=0)
    ink = _ink_mask(crop, bg, ink_contrast)
    rows = np.zeros(h, dtype=bool)
    for r in range(int(h * (1 - UNDERLINE_ZONE)), h):
        runs = _runs(ink[r], 0)
        rows[r] = bool(runs) and max(e - s for s, e in runs) >= UNDERLINE_RUN * h
    if not rows.any() or rows.sum() > max(1, round(UNDERLINE_ROWS * h)):
        return none
    return rows, ink[rows].any(axis=0)


#: A run of ink at least this many line heights wide, whose last :data:`STOP_EDGE` line heights of columns hold ink
#: at least as many high, ends with a letter, not a full stop (a dot is about a tenth of a line height each way: see
#: :attr:`_Piece.letter_end`).
FULL_STOP_WIDTH = 0.25
STOP_EDGE = 0.06


def _ink_height(
    crop: np.ndarray, span: tuple[int, int], skip_rows: np.ndarray, ink_contrast: int, bg: np.ndarray | None = None
) -> int:
    """How many rows of ``crop``'s columns ``span`` (``[start, end)``) hold ink, from the first to the last, leaving
    out ``skip_rows`` (an underline's): a letter's x-height or more, a full stop's or a quote's few rows. ``bg``: the
    crop's median colour where the caller has it."""
    bg = np.median(crop.reshape(-1, 3), axis=0) if bg is None else bg
    rows = np.flatnonzero(_ink_mask(crop[:, span[0] : span[1]], bg, ink_contrast).any(axis=1) & ~skip_rows)
    return int(rows[-1] - rows[0] + 1) if rows.size else 0


def _underline_rule(
    crop: np.ndarray, under_rows: np.ndarray, under_cols: np.ndarray, ink_contrast: int, bg: np.ndarray | None = None
) -> np.ndarray:
    """Per column of a line crop, whether the underline's own long run (:data:`UNDERLINE_RUN` line heights) lies under
    it: ``under_cols`` (:func:`_underline`) without a glyph's ink that merely touches the underline's rows, its skips
    at glyphs and descenders bridged (:func:`_long_runs`; a descender is ink on the two rows just below the
    underline). All False without an underline. ``bg``: the crop's median colour where the caller has it."""
    h = crop.shape[0]
    rows = np.flatnonzero(under_rows)
    if rows.size == 0:
        return np.zeros_like(under_cols)
    band = crop[rows[-1] + 1 : rows[-1] + 3]
    bg = np.median(crop.reshape(-1, 3), axis=0) if bg is None else bg
    descends = _ink_mask(band, bg, ink_contrast).any(axis=0) if band.shape[0] else None
    return _long_runs(
        under_cols,
        UNDERLINE_RUN * h,
        max(1, round(UNDERLINE_SKIP * h)),
        descends,
        round(UNDERLINE_DESCENDER_SKIP * h),
    )


def _long_runs(
    mask: np.ndarray, length: float, bridge: int, descends: np.ndarray | None = None, skip: int = 0
) -> np.ndarray:
    """``mask`` with only its runs of True at least ``length`` long left True, gaps of at most ``bridge`` closed first.

    A browser's underline skips a glyph's ink by a pixel or two on each side ("page"), and a descender's by more
    ("bindings": 7 px at a 34 px line). Where ``descends`` (per column: a descender passes just under the underline)
    marks a narrow run (at most ``skip`` wide: the descender crossing the underline's rows), the gaps of at most
    ``skip`` on both its sides close too, but only when runs lie on both sides: a bare word's descender before a link
    ("designed by <a>Marc</a>") has underline on one side only and stays apart.
    """
    out = np.zeros_like(mask)
    runs = _runs(mask, 0)
    joined = [False] * max(0, len(runs) - 1)  # joined[k]: runs k and k + 1 are one
    for k in range(len(runs) - 1):
        joined[k] = runs[k + 1][0] - runs[k][1] <= bridge
    if descends is not None:
        for k in range(1, len(runs) - 1):
            s, e = runs[k]
            if e - s <= skip and descends[s:e].any() and s - runs[k - 1][1] <= skip and runs[k + 1][0] - e <= skip:
                joined[k - 1] = joined[k] = True
    start = 0
    for k in range(len(runs)):
        if k == len(runs) - 1 or not joined[k]:
            s, e = runs[start][0], runs[k][1]
            if e - s >= length:
                out[s:e] = True
            start = k + 1
    return out


def _share(mask: np.ndarray, x0: int, x1: int) -> float:
    """The share of columns ``[x0, x1)`` that ``mask`` marks (an underline under them); 0 for no column."""
    return float(mask[x0:x1].mean()) if x1 > x0 else 0.0


def _underline_edge(rule: np.ndarray, a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether an underline (``rule``: per column, under an underline's long run) starts or ends between the ink spans
    ``a`` and ``b`` (``[start, end)``, ``a`` left of ``b``; False otherwise): the gap between them is not under it, and
    one of them is (at least :data:`UNDERLINED_SHARE` of its columns) while the other is bare (under
    :data:`BARE_SHARE`)."""
    (s1, e1), (s2, e2) = a, b
    if s2 < e1 or _share(rule, e1, s2) >= UNDERLINED_SHARE:  # out of order, or one underline across the gap
        return False
    sa, sb = _share(rule, s1, e1), _share(rule, s2, e2)
    return (sa >= UNDERLINED_SHARE and sb < BARE_SHARE) or (sb >= UNDERLINED_SHARE and sa < BARE_SHARE)


def _without_punctuation(runs: list[tuple[int, int]], height: int) -> list[tuple[int, int]]:
    """A word's ink runs ``[start, end)`` without the narrow ones at its ends (:data:`PUNCTUATION_WIDTH` line heights:
    a full stop, a comma, a bracket, a quote), as long as at least a line height of its ink is left."""
    inside = list(runs)
    for end_at in (-1, 0):  # a full stop, a comma or a closing bracket; an opening bracket or quote
        while (
            len(inside) > 1
            and inside[end_at][1] - inside[end_at][0] <= PUNCTUATION_WIDTH * height
            and (inside[-2][1] - inside[0][0] if end_at == -1 else inside[-1][1] - inside[1][0]) >= height
        ):
            inside.pop(end_at)
    return inside


def _hues_differ(a: np.ndarray | None, b: np.ndarray | None, config: OcrConfig) -> bool:
    """Whether two glyph colours differ in hue by more than ``config.chroma_split`` (:func:`_chroma`); False where
    either is unknown."""
    if a is None or b is None or config.chroma_split <= 0:
        return False
    return float(np.linalg.norm(_chroma(a) - _chroma(b))) > config.chroma_split


def _darker_other_hue(mark: np.ndarray | None, word: np.ndarray | None, bg: np.ndarray, config: OcrConfig) -> bool:
    """Punctuation of colour ``mark`` at a word's end or start is the text around it, not the word's (``word``):
    their hues differ (:func:`_hues_differ`) and the mark stands out more from the background ``bg``. A thin mark of
    the word's own colour reads paler, never darker; False where either colour is unknown."""
    if mark is None or word is None or not _hues_differ(mark, word, config):
        return False
    return float(np.linalg.norm(mark - bg)) > float(np.linalg.norm(word - bg))


def _colours_differ(a: np.ndarray | None, b: np.ndarray | None, config: OcrConfig) -> bool:
    """Two glyph colours (RGB) are of another style: both known, and further apart than ``config.color_split`` or
    their hues (:func:`_chroma`) further than ``config.chroma_split`` (a threshold of 0 is off)."""
    if a is None or b is None:
        return False
    return 0 < config.color_split < float(np.linalg.norm(a - b)) or _hues_differ(a, b, config)


def _ink_runs(crop: np.ndarray, ink_contrast: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]] | None:
    """A text crop's ink runs ``[start, end)`` (:func:`_ink_columns`), and those runs without the punctuation at the
    text's ends (:func:`_without_punctuation`); None where the crop holds no ink."""
    ink = _ink_columns(crop, ink_contrast)
    cols = np.flatnonzero(ink)
    if cols.size == 0:
        return None
    runs = _runs(ink[cols[0] : cols[-1] + 1], int(cols[0]))
    return runs, _without_punctuation(runs, crop.shape[0])


def text_colours(image: np.ndarray, box: tuple[float, float, float, float], config: OcrConfig) -> np.ndarray | None:
    """The glyph colours of the text in ``box`` of ``image``, for telling whether two texts share a style: a
    ``(2, 3)`` RGB array, the colour of its words, then the colour of all its ink. They differ only where punctuation
    at the text's ends (:func:`_without_punctuation`) is of another colour (:func:`_colours_differ`) than its words:
    "intro)" is a link's colour and a black bracket's, whose stronger contrast alone decides its ink's colour. Two
    texts match where both colours do, so "(see the" | "intro)" stay apart, and so do the link "Tutorial," and the
    link "Tutorial2" after its plain comma. None when a glyph colour cannot be told (see :func:`_glyph_color`)."""
    crop = _crop(image, box)
    if crop.shape[0] < 2 or crop.shape[1] < 2:
        return None
    bg = _background(image, box, crop, config.ink_contrast)
    whole = _glyph_color(crop, bg)
    if whole is None:
        return None
    words = whole
    found = _ink_runs(crop, config.ink_contrast)
    if found:
        runs, inside = found
        if len(inside) < len(runs):
            core = _glyph_color(crop[:, inside[0][0] : inside[-1][1]], bg)
            if _colours_differ(core, whole, config):
                words = core
    return np.stack([words, whole])


#: Where a list marker is looked for: from this many line heights left of a line's start ...
MARKER_REACH = 1.5
#: ... to this many (the gap between a bullet and its item's text; the detector's box may cut into the first glyph).
MARKER_GAP = 0.3
#: A list marker has blank space at least this many line heights wide left of it (it is no word's last letter).
MARKER_CLEAR = 0.5
#: A list marker (a disc, a circle, a square) is at most this many line heights wide and high.
MARKER_SIZE = 0.55


def list_marker_left(image: np.ndarray, box: tuple[float, float, float, float], config: OcrConfig) -> bool | None:
    """What stands just left of the line in ``box`` (from :data:`MARKER_REACH` to :data:`MARKER_GAP` line heights
    before its start): True for a list marker (a bullet: a lone small blob of ink, at most :data:`MARKER_SIZE` line
    heights each way, in the middle of the line's height), False for nothing (blank), None for any other ink. The
    detector leaves bullets out of the line, so the text cannot tell a list item's first line from its next one; the
    ink can."""
    x0, y0, x1, y1 = box
    h = y1 - y0
    if h < 6:
        return None
    reach = x0 - MARKER_REACH * h
    lo, hi = int(round(max(0.0, reach - MARKER_CLEAR * h))), int(round(x0 - MARKER_GAP * h))
    top, bottom = int(round(y0 + 0.1 * h)), int(round(y1 - 0.05 * h))
    region = image[max(0, top) : max(0, bottom), lo : max(0, hi)].astype(np.int16)
    if region.shape[0] < 3 or region.shape[1] < 3:  # too small to tell, or a box at (or beyond) the image's edge
        return None
    bg = np.median(region.reshape(-1, 3), axis=0).astype(np.int16)
    ink = np.abs(region - bg).max(axis=-1) >= config.ink_contrast
    runs = _runs(ink.any(axis=0), lo)
    near = [r for r in runs if r[1] > reach]
    if not near:
        return False
    if len(near) != 1:
        return None
    s, e = near[0]
    rows = np.flatnonzero(ink[:, s - lo : e - lo].any(axis=1))
    width, height = e - s, rows[-1] - rows[0] + 1
    centre = top + (rows[0] + rows[-1]) / 2
    left_end = runs[-2][1] if len(runs) > 1 else (lo if lo > 0 else -np.inf)  # the image's edge is blank enough
    marker = (
        0.1 * h <= width <= MARKER_SIZE * h
        and 0.1 * h <= height <= MARKER_SIZE * h
        and y0 + 0.3 * h <= centre <= y0 + 0.8 * h
        and s >= reach
        and s - left_end >= MARKER_CLEAR * h
    )
    return True if marker else None


def backdrop(image: np.ndarray, box: tuple[float, float, float, float], side: str) -> np.ndarray | None:
    """The background colour at one end of a text's box: the commonest colour of the box's ``side`` (``"left"`` or
    ``"right"``) half a line height wide (or the box's width, if narrower), where the page (or a chip of inline code
    the text starts or ends on) shows between the glyph strokes, whose anti-aliased shades each cover few pixels.
    None when that strip is under two pixels either way."""
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    w = max(2, min((y1 - y0) // 2, x1 - x0))
    lo, hi = (x0, x0 + w) if side == "left" else (x1 - w, x1)
    strip = image[max(0, y0) : max(0, y1), max(0, lo) : max(0, hi)]
    if strip.shape[0] < 2 or strip.shape[1] < 2:
        return None
    colours, counts = np.unique(strip.reshape(-1, 3), axis=0, return_counts=True)
    return colours[int(np.argmax(counts))].astype(float)


#: Where a text's crop and its edges disagree about its background, the crop is grown by this many line heights above
#: and below for the median (see :func:`_background`).
BACKDROP_MARGIN = 0.25


def _background(image: np.ndarray, box: tuple[float, float, float, float], crop: np.ndarray, ink_contrast: int):
    """The background colour of the text in ``box`` of ``image`` (``crop``: its pixels): the median of the crop's
    pixels, unless the median of its outermost rows and columns differs from it by ``ink_contrast`` or more; then the
    median of the crop grown by :data:`BACKDROP_MARGIN` line heights above and below. Bold capitals in a box the
    detector drew tight to them ("GNU" in a heading) cover most of their crop, whose median is then their ink; the
    edges alone are no answer either (a link's underline runs along the bottom one)."""
    median = np.median(crop.reshape(-1, 3), axis=0)
    if crop.shape[0] < 3 or crop.shape[1] < 3:
        return median
    edges = np.concatenate([crop[0], crop[-1], crop[1:-1, 0], crop[1:-1, -1]])
    if float(np.abs(np.median(edges, axis=0) - median).max()) < ink_contrast:
        return median
    m = BACKDROP_MARGIN * (box[3] - box[1])
    grown = _crop(image, (box[0], box[1] - m, box[2], box[3] + m))
    return np.median(grown.reshape(-1, 3), axis=0)


def _glyph_color(
    crop: np.ndarray, background: np.ndarray | None = None, share: float | None = None
) -> np.ndarray | None:
    """Median colour of the glyph cores in a word crop: its pixels at least ``share`` times as far from the background
    colour as its most distinct pixel (:func:`_far_colour`; None or where fewer than 3 pixels are that far:
    :data:`FAR_SHARE`).
    ``background``: that of the line around the word (a narrow crop, a capital's stem cut off its word by the gap
    after it, the "T" of "The", is mostly ink, and its median would make the ink the background), else the crop's
    median colour."""
    return _glyph_colors(crop, background, (share,))[0]


def _glyph_colors(
    crop: np.ndarray, background: np.ndarray | None, shares: tuple[float | None, ...]
) -> list[np.ndarray | None]:
    """:func:`_glyph_color` at each of ``shares``, the crop's pixel distances computed once."""
    px = crop.reshape(-1, 3).astype(np.float32)
    if px.shape[0] < 4:
        return [None] * len(shares)
    bg = np.median(px, axis=0) if background is None else np.asarray(background, dtype=np.float32)
    d = np.linalg.norm(px - bg, axis=1)
    reach = d.max()
    out = []
    for share in shares:
        if share is None or (d >= share * reach).sum() < 3:
            share = FAR_SHARE
        out.append(_far_colour(px, d, reach, share))
    return out


#: The colour split also takes a word's colour from its most distinct pixels, those at least this share of the most
#: distinct one's distance from the background: the pixels a stem covers whole. Two words' colours differ only where
#: both this core colour and the usual one (:data:`FAR_SHARE`) do. The usual one takes in the anti-aliased edges,
#: whose share of a word grows as its strokes thin, so a short word of thin glyphs ("in", "value") read paler than the
#: black prose around it and was split from it ("particular column" | "in" | "which the"); the core alone is swayed by
#: a few pixels of other ink (a black dotted underline under a purple link).
CORE_SHARE = 0.85
#: A glyph colour's pixels are those at least this share of the most distinct one's distance from the background.
FAR_SHARE = 0.6


def _far_colour(px: np.ndarray, d: np.ndarray, reach: float, share: float = FAR_SHARE) -> np.ndarray | None:
    """Median colour of the pixels ``px`` (N, 3) whose distance from the background, ``d``, is at least ``share``
    times ``reach`` (the most distinct pixel's distance, of these pixels or of a wider crop's); None where ``reach`` is
    under 40 (no ink) or fewer than 3 pixels are that far."""
    far = d >= share * reach
    if reach < 40 or far.sum() < 3:
        return None
    return np.median(px[far], axis=0)


#: An ink run at most this many line heights wide at either end of a word is punctuation (".", ",", "<", ")"): it
#: does not decide the word's colour, if at least a line height of the word's ink is left without it.
PUNCTUATION_WIDTH = 0.4


def _chroma(rgb: np.ndarray) -> np.ndarray:
    """The two opponent-colour axes of an RGB colour, red-green and yellow-blue (0, 0 for any grey)."""
    r, g, b = (float(v) for v in rgb)
    return np.array([r - g, (r + g) / 2 - b])


#: Two detected boxes of one row whose gap holds ink neither box covers are one line (:func:`_bridge_missed_ink`)
#: when the gap is at most :data:`BRIDGE_GAP` row heights: the detector can miss a short token between two words it
#: found ("01," of "Mar 01, 2025", the comma of "Mar 03, 2025"), which read together are read too.
BRIDGE_GAP = 2.0
#: ... and when they share :data:`BRIDGE_ROW` of the lower box's height and their heights differ by at most
#: :data:`BRIDGE_HEIGHT` times (one line of one type size).
BRIDGE_ROW = 0.7
BRIDGE_HEIGHT = 1.5
#: ... and when the gap's ink has at least this share of the words' contrast (:func:`_contrast`).
BRIDGE_CONTRAST = 0.5


#: Ink in the gap between two pieces of a row is of another colour than theirs (:func:`other_ink_between`) when its
#: colour lies at least this far (RGB) off the line from the background to the pieces' colour: a bracket or a
#: separator set in the body's colour between two links, not a glyph's anti-aliased edge or an underscore, whose
#: colours are the pieces' colour blended with the background.
OTHER_INK = 60.0


def other_ink_between(
    image: np.ndarray, a: tuple[float, float, float, float], b: tuple[float, float, float, float]
) -> bool:
    """Whether the gap between two boxes of one row (``a`` left of ``b``) holds glyph ink of another colour than the
    glyphs of ``a``: the black "][" between the blue links of "[Contents][Index]".

    Args:
        image: the screenshot (H, W, 3) RGB.
        a / b: the two pieces' boxes (x0, y0, x1, y1) in its pixels.

    Returns:
        True where the gap's central band has pixels at least :data:`FAR_SHARE` times as far from the row's
        background as the row's most distinct pixel and their median colour lies :data:`OTHER_INK` or more off the
        line from the background to ``a``'s glyph colour; False for a blank gap, faint ink, or boxes too small to
        tell.
    """
    top, bottom = max(a[1], b[1]), min(a[3], b[3])
    m = 0.15 * (bottom - top)
    row = _crop(image, (a[0], top + m, b[2], bottom - m))
    gap = _crop(image, (a[2] + 1, top + m, b[0] - 1, bottom - m))
    if row.shape[0] < 2 or gap.shape[0] < 2 or gap.shape[1] < 1:
        return False
    px = row.reshape(-1, 3).astype(np.float32)
    # the background from the row's top and bottom pixel rows: in the central band of large bold type the glyphs
    # cover over half the pixels, and the band's median would be a grey that makes the blank gap "other ink"
    full = _crop(image, (a[0], top, b[2], bottom))
    bg = np.median(np.concatenate([full[0], full[-1]]).astype(np.float32), axis=0)
    dmax = float(np.linalg.norm(px - bg, axis=1).max())
    g = gap.reshape(-1, 3).astype(np.float32)
    between = _far_colour(g, np.linalg.norm(g - bg, axis=1), dmax)
    ink = _glyph_color(_crop(image, (a[0], top + m, a[2], bottom - m)), bg)
    if between is None or ink is None:
        return False
    off, axis = between - bg, ink - bg
    t = float(off @ axis) / max(1e-6, float(axis @ axis))
    return float(np.linalg.norm(off - max(0.0, t) * axis)) >= OTHER_INK


def glyph_between(
    image: np.ndarray, a: tuple[float, float, float, float], b: tuple[float, float, float, float], config: OcrConfig
) -> bool:
    """Whether the gap between two boxes of one row (``a`` left of ``b``) holds a separator the splitting took out of
    a piece's text, whatever its colour: a glyph standing alone, blank columns on both its sides, in a gap at least
    :data:`SEPARATOR_GAP` line heights wide (two word spaces and the mark: the grey "»" between two grey links of a
    breadcrumb, "3.11.2 Documentation » The Python Standard Library", which reads like a section number and its
    title).

    Args:
        image: the screenshot (H, W, 3) RGB.
        a / b: the two pieces' boxes (x0, y0, x1, y1) in its pixels; their boxes are their ink's.
        config: the annotator's settings (``ink_contrast``).

    Returns:
        True as above, the ink read over the rows the two boxes share less :func:`_band_margin` (:func:`_ink_columns`
        over that whole height: a bar "|" counts); False for a blank or narrower gap.
    """
    top, bottom = max(a[1], b[1]), min(a[3], b[3])
    h = bottom - top
    if h < 4 or b[0] - a[2] < SEPARATOR_GAP * h:
        return False
    m = _band_margin(int(h))
    gap = _crop(image, (a[2] + 1, top + m, b[0] - 1, bottom - m))
    if gap.shape[0] < 2 or gap.shape[1] < 3:
        return False
    bg = np.median(_crop(image, (a[0], top, b[2], bottom)).reshape(-1, 3), axis=0)
    ink = _ink_columns(gap, config.ink_contrast, np.zeros(gap.shape[0], dtype=bool), band=False, bg=bg)
    return bool(ink[1:-1].any() and not ink[0] and not ink[-1])


#: A gap this many line heights wide or more can hold a spaced separator (:func:`glyph_between`): Sphinx's " | "
#: between its header's links measures 0.76 of the detector's box (0.8 missed it, and "next" | "modules" joined).
SEPARATOR_GAP = 0.7


def mark_after(image: np.ndarray, box: tuple[float, float, float, float], config: OcrConfig) -> bool:
    """Whether the text in ``box`` ends with a mark of the prose around it: its last ink run is punctuation
    (:data:`PUNCTUATION_WIDTH` line heights or narrower, :func:`_without_punctuation`) darker than its words and of
    another hue (:func:`_darker_other_hue`), the black comma after a blue link ("maps:next/1," | "maps:filter/2").
    The text does not run on into the next piece across it, though the comma says the text continues.

    Args:
        image: the screenshot (H, W, 3) RGB.
        box: the piece's box (x0, y0, x1, y1) in its pixels.
        config: the annotator's settings (``ink_contrast``, ``chroma_split``).

    Returns:
        True as above; False where the text has no such mark, its words' colour cannot be told, or the box is too
        small to tell.
    """
    crop = _crop(image, box)
    found = _ink_runs(crop, config.ink_contrast) if crop.shape[0] >= 2 and crop.shape[1] >= 2 else None
    if found is None:
        return False
    runs, inside = found
    if len(inside) == len(runs) or inside[-1] == runs[-1]:
        return False
    bg = _background(image, box, crop, config.ink_contrast)
    words = _glyph_color(crop[:, inside[0][0] : inside[-1][1]], bg)
    return _darker_other_hue(_glyph_color(crop[:, runs[-1][0] : runs[-1][1]], bg), words, bg, config)


def underlined(image: np.ndarray, box: tuple[float, float, float, float], config: OcrConfig) -> bool | None:
    """Whether the text in ``box`` is underlined: True where an underline's long run (:func:`_underline_rule`) lies
    under at least :data:`UNDERLINED_SHARE` of its ink's span, False where under less than :data:`BARE_SHARE` (or the
    crop has no underline), None in between or for a box too small to tell. A dotted underline (:func:`_dotted_rule`:
    Sphinx's links, "translation" | "project") counts as running from its first dot to its last, and a thin row of ink
    under nearly all of the text (:func:`_broken_underline`) as an underline too: one broken where descenders cross it
    ("https://git-"), or under a word too short to show a run :data:`UNDERLINE_RUN` line heights long ("In")."""
    crop = _crop(image, box)
    h, w = crop.shape[:2]
    if h < 6 or w < 2:
        return None
    if w < UNDERLINE_RUN * h:  # too short for a run, not for a row under all of it
        span = np.flatnonzero(_ink_columns(crop, config.ink_contrast))
        lined = span.size and _broken_underline(crop, int(span[0]), int(span[-1]) + 1, config.ink_contrast)
        return True if lined else None
    rows, cols = _underline(crop, config.ink_contrast)
    dots = np.flatnonzero(_dotted_rule(crop, config.ink_contrast).any(axis=0))
    ink = np.flatnonzero(_ink_columns(crop, config.ink_contrast, rows))
    if ink.size == 0:
        return None
    rule = _underline_rule(crop, rows, cols, config.ink_contrast)
    if dots.size:
        rule[dots[0] : dots[-1] + 1] = True
    share = float(rule[ink[0] : ink[-1] + 1].mean())
    if share < UNDERLINED_SHARE and _broken_underline(crop, int(ink[0]), int(ink[-1]) + 1, config.ink_contrast):
        return True
    return True if share >= UNDERLINED_SHARE else False if share < BARE_SHARE else None


def _broken_underline(crop: np.ndarray, x0: int, x1: int, ink_contrast: int) -> bool:
    """Whether a thin row low in a line crop is ink under nearly all of the text's span ``[x0, x1)``
    (:data:`UNDERLINE_COVER`), the rows above it not: an underline broken where descenders cross it, into runs each
    shorter than :data:`UNDERLINE_RUN` line heights ("https://git-": runs of 27 and 34 px under a 23 px line), or
    under all of it but the skips round the descenders that cross it, with blank above it ("Bugs" at 3x)."""
    h = crop.shape[0]
    bg = np.median(crop.reshape(-1, 3), axis=0)
    ink = _ink_mask(crop[:, x0:x1], bg, ink_contrast)
    cover = ink.mean(axis=1)
    zone = int(h * (1 - UNDERLINE_ZONE))
    for top, bottom in _runs(cover[zone:] >= UNDERLINE_COVER / 2, zone):
        if bottom - top > max(1, round(UNDERLINE_ROWS * h)) or (top > 0 and cover[top - 1] >= UNDERLINE_COVER):
            continue
        if cover[top:bottom].max() >= UNDERLINE_COVER:
            return True
        if top > 0 and cover[top - 1] >= SKIP_INK_SHARE:  # ink above it: a row through glyphs, not a rule
            continue
        # a descender that crosses the underline (ink right below it) skips it a little way on either side
        crossed = np.concatenate([[0], np.cumsum(ink[bottom : bottom + 2].any(axis=0))])
        at, reach = np.arange(ink.shape[1]), round(SKIP_INK_REACH * h)
        skip = crossed[np.minimum(at + reach + 1, ink.shape[1])] > crossed[np.maximum(at - reach, 0)]
        if not skip.all() and ink[top:bottom].any(axis=0)[~skip].mean() >= UNDERLINE_COVER:
            return True
    return False


#: Share of the text's span a row must be ink under to be its underline (:func:`_broken_underline`): a descender's
#: skip takes a few pixels of it, a glyph row (a serif font's baseline) leaves far more blank. Columns within
#: :data:`SKIP_INK_REACH` line heights of a descender that crosses the row (ink right below it) do not count: the
#: browser skips the underline round it ("Bugs" at 3x: 20 px either side of the "g"), up to half a short word's span
#: ("page"). Such a row has blank above it (less than :data:`SKIP_INK_SHARE` ink), not a glyph's stems.
UNDERLINE_COVER = 0.85
SKIP_INK_REACH = 0.4
SKIP_INK_SHARE = 0.25


def underline_ends_between(
    image: np.ndarray, a: tuple[float, float, float, float], b: tuple[float, float, float, float], config: OcrConfig
) -> bool:
    """Whether an underline ends between two boxes of one row (``a`` left of ``b``): one is underlined and the other
    bare (:func:`_underline_edge` on the underline's own run across the two, :func:`_underline_rule`), so one is a link
    and the other the prose beside it, however close their colours (a grey link in black prose); or both are
    underlined and the gap between them is not, so they are two links ("Babel 2.18.0" | "previous": a link's
    underline runs under its word spaces).

    Args:
        image: the screenshot (H, W, 3) RGB.
        a / b: the two pieces' boxes (x0, y0, x1, y1) in its pixels.
        config: the annotator's settings (``ink_contrast``).

    Returns:
        True as above; False where the row has no underline (:func:`_underline`: a thin rule low in the row, at least
        :data:`UNDERLINE_RUN` line heights long), one underline runs across the gap, neither is underlined, or the
        boxes are too small to tell.
    """
    x0 = int(min(a[0], b[0]))
    row = _crop(image, (x0, min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])))
    if row.shape[0] < 2 or row.shape[1] < 2:
        return False
    rows, cols = _underline(row, config.ink_contrast)
    rule = _underline_rule(row, rows, cols, config.ink_contrast)
    span_a = (max(0, int(a[0]) - x0), max(0, int(a[2]) - x0))
    span_b = (max(0, int(b[0]) - x0), max(0, int(b[2]) - x0))
    if span_a[1] <= span_a[0] or span_b[1] <= span_b[0]:
        return False
    if _underline_edge(rule, span_a, span_b):
        return True
    both = min(_share(rule, *span_a), _share(rule, *span_b)) >= UNDERLINED_SHARE  # two links, each underlined
    return both and span_b[0] > span_a[1] and _share(rule, span_a[1], span_b[0]) < BARE_SHARE


def rule_between(
    image: np.ndarray, a: tuple[float, float, float, float], b: tuple[float, float, float, float], config: OcrConfig
) -> bool:
    """Whether a vertical rule stands between two boxes of one row (``a`` left of ``b``): a column of the gap whose
    pixels all stand ``config.ink_contrast`` or more off the gap's background from half a line height above the two
    boxes to half a line height below them, taller than any glyph (a panel's border, a side bar's edge). Text on the
    other side of it is in another column. False for a gap under one pixel or a row at the image's edge."""
    h = max(a[3] - a[1], b[3] - b[1])
    top, bottom = min(a[1], b[1]) - 0.5 * h, max(a[3], b[3]) + 0.5 * h
    if top < 0 or bottom > image.shape[0]:
        return False
    gap = _crop(image, (a[2] + 1, top, b[0] - 1, bottom)).astype(np.int16)
    if gap.shape[0] < 2 or gap.shape[1] < 1:
        return False
    bg = np.median(gap.reshape(-1, 3), axis=0)
    ink = np.abs(gap - bg).max(axis=-1) >= config.ink_contrast
    return bool(ink.all(axis=0).any())


def _contrast(crop: np.ndarray) -> int:
    """How far a crop's most distinct pixel lies from its median colour (largest channel difference, 0..255)."""
    if crop.size == 0:
        return 0
    px = crop.reshape(-1, 3).astype(np.int16)
    return int(np.abs(px - np.median(px, axis=0).astype(np.int16)).max())


def _bridge_missed_ink(quads: list[np.ndarray], rgb: np.ndarray, ink_contrast: int) -> list[np.ndarray]:
    """Join detected upright boxes of one row across a gap of ink the detector found no text in.

    Args:
        quads: the detector's boxes, each a (4, 2) array of corners in ``rgb``'s pixels.
        rgb: the strip the boxes were detected in.
        ink_contrast: as :attr:`OcrConfig.ink_contrast`.

    Returns:
        The boxes with each run of bridged neighbours replaced by one upright rectangle spanning them (in order of
        their left edges); rotated boxes and boxes with a blank gap (or a vertical rule: ink running above and below
        the row, a table's cell border) between them as given.
    """
    H, W = rgb.shape[:2]
    upright, out = [], []
    for q in quads:
        if _is_axis_aligned(q):
            x0, y0, x1, y1 = _pixel_box(q, W, H)
            if x1 - x0 >= 2 and y1 - y0 >= 2:
                upright.append([x0, y0, x1, y1, q])
                continue
        out.append(q)
    upright.sort(key=lambda b: b[0])

    def bridged(a: list, b: list) -> bool:
        ha, hb = a[3] - a[1], b[3] - b[1]
        h = min(ha, hb)
        overlap = min(a[3], b[3]) - max(a[1], b[1])
        gap = b[0] - a[2]
        if overlap < BRIDGE_ROW * h or max(ha, hb) > BRIDGE_HEIGHT * h or not -0.3 * h <= gap <= BRIDGE_GAP * h:
            return False
        top, bottom = max(a[1], b[1]), min(a[3], b[3])
        x0, x1 = a[2] + 1, b[0] - 1
        if x1 - x0 < 1:
            return False
        # ink of the words' own contrast: not a pill's or a button's pale edge between two tags ("accounting" |
        # "finance"), which would glue them into one line the gap split could no longer cut
        text = min(_contrast(rgb[a[1] : a[3], a[0] : a[2]]), _contrast(rgb[b[1] : b[3], b[0] : b[2]]))
        cols = np.flatnonzero(_ink_columns(rgb[top:bottom, x0:x1], max(ink_contrast, int(BRIDGE_CONTRAST * text))))
        if cols.size == 0:
            return False
        # a vertical rule crosses the row: ink at the same columns half a row above and below it
        above = rgb[max(0, top - h // 2) : max(0, top - h // 2) + 1, x0:x1][:, cols]
        below = rgb[min(H - 1, bottom + h // 2) : min(H - 1, bottom + h // 2) + 1, x0:x1][:, cols]
        row = np.median(rgb[top:bottom, x0:x1].reshape(-1, 3), axis=0)

        def inked(px: np.ndarray) -> bool:
            return px.size > 0 and bool((np.abs(px.astype(np.int16) - row).max(axis=-1) >= ink_contrast).any())

        return not (inked(above) and inked(below))

    used = [False] * len(upright)
    for i, a in enumerate(upright):
        if used[i]:
            continue
        used[i] = True
        box = a
        joined = False
        while True:
            nxt = next(
                (j for j in range(len(upright)) if not used[j] and bridged(box, upright[j])),
                None,
            )
            if nxt is None:
                break
            b = upright[nxt]
            used[nxt] = True
            box = [box[0], min(box[1], b[1]), max(box[2], b[2]), max(box[3], b[3]), None]
            joined = True
        if joined:
            x0, y0, x1, y1 = (float(v) for v in box[:4])
            out.append(np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float32))
        else:
            out.append(a[4])
    return out


def _pixel_box(q: np.ndarray, width: int, height: int) -> tuple[int, int, int, int]:
    """The whole pixels (x0, y0, x1, y1) a detected quad covers, clipped to a ``width`` x ``height`` image."""
    x0, y0 = np.floor(q.min(axis=0)).astype(int)
    x1, y1 = np.ceil(q.max(axis=0)).astype(int)
    return max(0, int(x0)), max(0, int(y0)), min(width, int(x1)), min(height, int(y1))


def _is_axis_aligned(q: np.ndarray) -> bool:
    """True when the detected quad is (nearly) an upright rectangle."""
    dx, dy = q[1] - q[0]
    return abs(dy) <= max(2.0, 0.06 * abs(dx))


#: A number the recogniser read with letters "o" for some of its zeros ("7.1o", "2oo8.", "1o0"): digits, dots and
#: o's only, at least one digit, standing alone (no letter or digit before or after it); not an octal literal
#: ("0o755", :data:`_OCTAL`).
_DIGIT_O = re.compile(r"(?<![\w.])(?=[\d.oO]*\d)(?=[\d.oO]*[oO])[\d.oO]+(?!\w)")
_OCTAL = re.compile(r"^0[oO][0-7]+$")
#: ... and one read with "l" or "I" for some of its ones, with a dot ("3.2.l6", "2.l", "l.0"): a code name ("l1")
#: has none.
_DIGIT_L = re.compile(r"(?<![\w.])(?=[\d.lI]*\d)(?=[\d.lI]*[lI])(?=[\d.lI]*\.)[\d.lI]+(?!\w)")
_ZEROS, _ONES = str.maketrans("oO", "00"), str.maketrans("lI", "11")


def _clean(text: str) -> str:
    """The recogniser's text, NFC, whitespace collapsed, with the CJK marks it reads for ASCII ones in Latin text
    ("count丨ALL", "［", "（0）") made ASCII (:func:`_ascii_marks`), the zeros of a number read as "o" made zeros
    (:data:`_DIGIT_O`: "7.1o How do I" → "7.10 How do I"), the ones of a dotted number read as "l" ones
    (:data:`_DIGIT_L`: "3.2.l6" → "3.2.16") and a console's prompt read as "vvv" at the start ">>>"
    (:data:`_PROMPT_AS_VS`)."""
    text = _PROMPT_AS_VS.sub(">>>", _ascii_marks(" ".join(unicodedata.normalize("NFC", str(text)).split())))
    text = _DIGIT_O.sub(lambda m: m.group(0) if _OCTAL.match(m.group(0)) else m.group(0).translate(_ZEROS), text)
    return _DIGIT_L.sub(lambda m: m.group(0).translate(_ONES), text)


def _no_stop(text: str, piece: _Piece) -> str:
    """``text`` without a full stop the recogniser read after its last letter where ``piece`` ends with a letter's
    ink, not a dot's (:attr:`_Piece.letter_end`: "Reporting." for a link's "Reporting", its underline ending under
    the "g")."""
    return END_STOP.sub("", text) if piece.letter_end else text


#: CJK marks the recogniser (trained on Chinese and English) reads for ASCII ones: the Han stroke "丨" for "|",
#: lenticular brackets for square ones, the ideographic comma and full stop; and double angle brackets for the
#: guillemets of a breadcrumb ("Python 》 3.11.2 Documentation").
_CJK_MARKS = str.maketrans(
    {"丨": "|", "【": "[", "】": "]", "〔": "[", "〕": "]", "、": ",", "。": ".", "》": "»", "《": "«"}
)


def _ascii_marks(text: str) -> str:
    """``text`` with CJK and fullwidth marks (U+FF01-FF5E) made ASCII where it holds Latin letters or digits and no
    Han or kana letter but the Han stroke "丨" (Chinese text keeps its own punctuation)."""
    if not any(c.isascii() and c.isalnum() for c in text):
        return text
    if any(c != "丨" and script_of(c) in ("han", "kana") for c in text):
        return text
    text = text.translate(_CJK_MARKS)
    return "".join(chr(ord(c) - 0xFEE0) if 0xFF01 <= ord(c) <= 0xFF5E else c for c in text)


def _keep(text: str, conf: float, min_conf: float) -> bool:
    """A piece is kept when confident enough, not only punctuation / separators (but a console's prompt, ">>>", which
    the grouping joins to the code after it: alone it gives no label), and not a box glyph."""
    if conf < min_conf or not text or text.strip() in _BOX_GLYPHS:
        return False
    return text.strip() == ">>>" or any(ch.isalnum() for ch in text.strip(_SEPARATOR_CHARS + " "))


def _bracketed(text: str) -> list[tuple[str, float, float]] | None:
    """The items of a row of bracketed items ("[Contents][Index]": each a link of its own, the brackets around it
    are not), each with the character span ``[start, end)`` of its text in ``text``; None for any other text. A row
    read with its first "[" lost ("Contents][Index]": the span is of the row with it, scaled to ``text``'s length, as
    the box holds its ink) or a "]" read as "l", "I", "1" or "|" before the next "[" ("[Contentsl[lndex]") is such a
    row."""
    row = ("[" if _UNOPENED_ROW.match(text) else "") + text  # its first "[" lost: its ink is still in the box
    if row.lstrip().startswith("["):
        row = _BRACKET_AS_LETTER.sub("]", row)
    if not _BRACKETED_RE.fullmatch(row):
        return None
    scale = len(text) / len(row)  # the row's characters spread over the text's span
    out = []
    for m in re.finditer(r"\[([^\[\]]*)\]", row):
        inner = m.group(1)
        lead = len(inner) - len(inner.lstrip())
        if inner.strip():
            start = m.start(1) + lead
            out.append((inner.strip(), start * scale, (start + len(inner.strip())) * scale))
    return out


#: Two ink runs at least this many line heights apart are two words (a word space; letters stand closer).
WORD_GAP = 0.18
#: A part placed by characters snaps each end to the nearest word's edge within this many characters' advance of it;
#: further, its glyphs touch (a struck-through row is one run of ink) and the end stays at its characters' share.
SNAP_CHARS = 3.0
#: A part of a split piece fits its ink when its width is within this factor either way of its characters' share
#: of the piece's ink (a part of 4 characters, "next", at least half and at most twice 4 average advances).
PART_WIDTH_FACTOR = 2.0


def _fits(width: int, nchars: int, advance: float) -> bool:
    """Whether a part of ``nchars`` characters can span ``width`` px where the piece averages ``advance`` px per
    character (:data:`PART_WIDTH_FACTOR`)."""
    expected = nchars * advance
    return expected / PART_WIDTH_FACTOR <= width <= expected * PART_WIDTH_FACTOR


def _by_characters(text: str, parts: list[str], runs: list[tuple[int, int]], height: int) -> list[_Piece]:
    """Place each part of ``text`` (in order, as :func:`_separator_split` cut it) at its characters' share of the
    ink span of ``runs`` (the piece's [start, end) ink runs), its ends moved to the nearest word's start and end
    (runs :data:`WORD_GAP` line heights of ``height`` apart) where one is within :data:`SNAP_CHARS` characters: the
    glyphs of one line are of similar widths, so a part lands on its words even where the recogniser read two of
    them as one token, and where glyphs touch (fewer runs than words) it keeps its share. A part whose snapped ends
    would cross (a short part between two words' edges) keeps its unsnapped share: every part is placed, none
    dropped."""
    a, b = runs[0][0], runs[-1][1]
    scale = (b - a) / max(1, len(text))
    reach = SNAP_CHARS * scale  # a word's edge this near its share's: glyphs that touch leave no word to snap to
    words = [list(runs[0])]
    for s, e in runs[1:]:
        if s - words[-1][1] >= WORD_GAP * height:
            words.append([s, e])
        else:
            words[-1][1] = e
    starts = np.array([s for s, _ in words], dtype=np.float64)
    ends = np.array([e for _, e in words], dtype=np.float64)
    out, pos = [], 0
    for part in parts:
        word = part.strip()
        if not word:
            continue
        found = text.find(word, pos)
        c0 = found if found >= 0 else pos  # a part is text's own; were one not found, it goes on from the last
        pos = c0 + len(word)
        lo, hi = a + scale * c0, a + scale * pos
        x0, x1 = int(starts[np.argmin(np.abs(starts - lo))]), int(ends[np.argmin(np.abs(ends - hi))])
        x0, x1 = x0 if abs(x0 - lo) <= reach else int(lo), x1 if abs(x1 - hi) <= reach else int(round(hi))
        if x1 <= x0:
            x0, x1 = int(lo), max(int(lo) + 1, int(round(hi)))
        out.append(_Piece(x0, x1, word))
    return out
