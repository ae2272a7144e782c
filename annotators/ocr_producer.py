"""The OCR label producer: :class:`screenmill.annotators.ocr.OcrAnnotator` text elements → click grounding labels.

No ambiguous instruction: text that appears once on a screenshot is named bare (``click "Save"``); text that repeats
(compared case-insensitively, whitespace collapsed, a trailing comma, full stop or semicolon ignored: the prose's
punctuation after a link, "GHashTable," and "GHashTable.", which are the link "GHashTable" to a reader) is named by its
place among the repeats in reading order (top to bottom, then left to right; boxes whose vertical centres fall in one
another's line are one line: :func:`screenmill.annotators.wording.reading_order` by rows of
:attr:`screenmill.annotators.wording.Rows.LINES`), worded as the DOM producer words positions without its role noun
(OCR has none): ``click the second "Edit"``. A text repeated more often than there are ordinals
(:data:`screenmill.annotators.wording.ORDINALS`, ten) gets no label, counting, for a text that repeats, also the times
it is painted as words of another element's text (:func:`painted_inside`: a type name in lines of code, "gboolean
g_hash_table_insert", whose cells the OCR may have joined, so that its own count of the repeats falls short of the
page's and the places it names are not the ones a reader counts). An instruction that would still name two elements (a
literal text equal to a positional phrase) is given to none of them.

No glyph noise: an element that is an icon read as text gives no label (:func:`is_glyph_noise`): a text with no
letter or digit ("≡", "»", "+"), or a lone glyph (at most two characters, one letter, not a number: "Q", "b", "三",
"X.") read with confidence below :attr:`OcrProducer.glyph_min_confidence`, in a square box (an icon's cell; a
letter of running text is narrower than it is tall) or beside another lone glyph on its line (a toolbar: "B" "I"
"U"), or of a script no other text of the screenshot is in ("田" on an English page, :func:`glyph_noise`).

Scripts the models cannot read (:mod:`screenmill.annotators.scripts`: the shipped models read Latin and Chinese): a
reading that is a wrong-script reading (:func:`screenmill.annotators.scripts.is_wrong_script_reading`: "HOBOCTИ" for
"Новости") gives no label, and each screenshot's count of them and of text lines detected but read as nothing (Korean,
Japanese kana) is reported in the stage's counters (``wrong_script_readings`` / ``screenshots_wrong_script``,
``unread_text_lines`` / ``screenshots_unread_text``), so such text is reported, not silently missed.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from screenmill.annotators.ocr_thresholds import OcrThresholds
from screenmill.annotators.outputs import Count
from screenmill.annotators.producer import ScreenshotProducer
from screenmill.annotators.scripts import is_wrong_script_reading, letter_scripts
from screenmill.annotators.wording import (
    CLICK_TEMPLATE,
    MAX_INSTRUCTION_NAME,
    OCR_TEXT_CLICK,
    ORDINALS,
    Rows,
    positional_template,
    reading_order,
)
from screenmill.schemas.labels import LabelBuilder, LabelProvenance
from screenmill.schemas.records import GroundingLabel, Screenshot

#: The OCR revision, written to the ``recipe_version`` column of every OCR label (its changes: docs/ocr-revisions.md).
OCR_REVISION = "88"
#: Text whose box comes this close (px) to the screenshot's right edge is cut by it (a page wider than the viewport:
#: "Joe Wres" of "Joe Wreschnig"); a label would name a cut word, so it gives none (the DOM truth leaves text cut by
#: the top or bottom edge out of recall the same way). The left edge cuts nothing: a page is shown from its left
#: end, and text there is set flush with it (OCR revision 87; a blog's list of posts with no margin).
EDGE_CUT = 2.0
#: A lone glyph's box is square (an icon's cell) when its width / height lies in this range.
GLYPH_SQUARE_ASPECT = (0.8, 1.25)
#: A number of one or two characters read with less confidence than this is glyph noise too: a bracket or a bar read
#: as "1" in a synopsis ("[ WHERE condition ]"), a logo's shape read as "2". On the truth set's dev parts every such
#: label (12) named nothing; the 37 that named their element were read at 0.9 or more.
NUMBER_MIN_CONFIDENCE = 0.75
#: Lone glyphs on one line closer than this many line heights apart are a toolbar of icons.
GLYPH_TOOLBAR_GAP = 6.0


@dataclasses.dataclass(frozen=True, kw_only=True)
class OcrLabelSettings:
    """How the OCR's text elements become labels: the one definition of these settings and their defaults, which
    the producer (:class:`OcrProducer`) and the run's labelling config
    (:class:`screenmill.stages.label.ocr.AnnotateConfig`) both are.

    Attributes:
        run_id / config_hash: stamped on every label.
        annotator_options: keyword arguments of :class:`screenmill.annotators.ocr.OcrConfig` (its thresholds aside).
            With the join model's grouping (the default) the packaged model's version is added as
            ``grouping_model`` where it is not given, so the config hash sees the model the labels came from.
        thresholds: the OCR's numeric thresholds (:class:`screenmill.annotators.ocr_thresholds.OcrThresholds`),
            the annotator's ``OcrConfig.thresholds``; part of the config hash with every value.
        instruction_template: how an element's text becomes the instruction (contains ``{text}``); a repeated
            text's instruction is derived from it by :func:`screenmill.annotators.wording.positional_template`.
        recipe / recipe_version: recorded on each label (the recipe
            :data:`screenmill.annotators.wording.OCR_TEXT_CLICK` at the revision :data:`OCR_REVISION`).
        min_element_chars: elements with less visible text are skipped.
        drop_glyphs: skip elements that are icons read as text (:func:`is_glyph_noise`).
        glyph_min_confidence: a lone glyph read with less confidence than this is an icon.
        max_batch_size: upper bound of a batch of screenshots handed to one DoFn call.
    """

    run_id: str
    config_hash: str
    annotator_options: tuple[tuple[str, Any], ...] = ()
    thresholds: OcrThresholds = OcrThresholds()
    instruction_template: str = CLICK_TEMPLATE
    recipe: str = OCR_TEXT_CLICK
    recipe_version: str = OCR_REVISION
    min_element_chars: int = 1
    drop_glyphs: bool = True
    glyph_min_confidence: float = 0.9
    max_batch_size: int = 8

    def __post_init__(self):
        """Checks the settings (ValueError naming the class and the setting) before any screenshot is read, so a
        producer built directly gets the same checks as the run's config."""
        name = type(self).__name__
        if not self.run_id or not self.config_hash:
            raise ValueError(f"{name}: run_id and config_hash must be set")
        if "{text}" not in self.instruction_template:
            raise ValueError(f"{name}.instruction_template must contain '{{text}}'")
        if self.max_batch_size <= 0 or self.min_element_chars <= 0:
            raise ValueError(f"{name}: max_batch_size and min_element_chars must be > 0")
        if not 0.0 <= self.glyph_min_confidence <= 1.0:
            raise ValueError(f"{name}.glyph_min_confidence must be in [0, 1], not {self.glyph_min_confidence}")
        if "thresholds" in dict(self.annotator_options):
            raise ValueError(f"{name}.annotator_options: set the OCR's thresholds as {name}.thresholds")
        if not isinstance(self.thresholds, OcrThresholds):
            raise ValueError(f"{name}.thresholds must be an OcrThresholds, got {type(self.thresholds).__name__}")
        from screenmill.annotators.ocr_config import OcrConfig

        try:  # the OCR's own options (ValueError for a value out of range, TypeError for an unknown option)
            ocr = OcrConfig(**dict(self.annotator_options))
        except TypeError as e:
            raise ValueError(f"{name}.annotator_options: {e}") from e
        if ocr.grouping == "model" and not ocr.grouping_model:
            from screenmill.annotators.ocr_model import packaged_version

            options = (*self.annotator_options, ("grouping_model", packaged_version()))
            object.__setattr__(self, "annotator_options", options)

    def label_settings(self) -> dict[str, Any]:
        """These settings' values by name (the fields of :class:`OcrLabelSettings`, not a subclass's own)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(OcrLabelSettings)}


@dataclasses.dataclass(frozen=True, kw_only=True)
class OcrProducer(OcrLabelSettings, ScreenshotProducer):
    """Text elements of a screenshot → one unambiguous ``click "<text>"`` label each (``click the second "<text>"``
    for a repeated text), in original pixels (stage ``annotate``).

    Attributes:
        (the settings of :class:`OcrLabelSettings`)
        drop_wrong_script: skip wrong-script readings (:func:`screenmill.annotators.scripts.is_wrong_script_reading`).
    """

    drop_wrong_script: bool = True

    stage = "annotate"
    step = "Annotate"

    @property
    def install_hint(self) -> str:
        from screenmill.annotators.ocr_config import _INSTALL_HINT

        return _INSTALL_HINT

    @property
    def name(self) -> str:
        from screenmill.annotators.ocr import OcrAnnotator

        return OcrAnnotator.NAME

    @property
    def version(self) -> str:
        from screenmill.annotators.ocr import OcrAnnotator

        return OcrAnnotator.VERSION

    def process_key(self) -> Hashable:
        return ("ocr", self.annotator_options, self.thresholds)

    def load(self):
        """A loaded :class:`screenmill.annotators.ocr.OcrAnnotator` (RuntimeError with the install hint when RapidOCR
        is missing)."""
        from screenmill.annotators.ocr import OcrAnnotator

        annotator = OcrAnnotator(self.ocr_config)
        annotator.load()
        return annotator

    @functools.cached_property
    def ocr_config(self):
        """The annotator's settings, :class:`screenmill.annotators.ocr.OcrConfig` of ``annotator_options``: built and
        checked once (ValueError for a value out of range, TypeError for an option it does not have), with
        :attr:`thresholds`."""
        from screenmill.annotators.ocr_config import OcrConfig

        return OcrConfig(**dict(self.annotator_options), thresholds=self.thresholds)

    def produce(self, model, shot: Screenshot, pixels) -> Iterable[GroundingLabel | Count]:
        """The labels of one screenshot, and the counts of its text the models could not read (see the module
        docstring)."""
        result = model.read(pixels)
        yield from elements_to_labels(shot, result.elements, model, self)
        wrong = sum(is_wrong_script_reading(e.text) for e in result.elements) if self.drop_wrong_script else 0
        for name, per_shot, n in (
            ("wrong_script_readings", "screenshots_wrong_script", wrong),
            ("unread_text_lines", "screenshots_unread_text", len(result.unread)),
        ):
            if n:
                yield Count(name, n)
                yield Count(per_shot)


def is_lone_glyph(text: str) -> bool:
    """At most two characters other than whitespace, exactly one of them a letter, none a digit ("Q", "三", "X.")."""
    chars = "".join(text.split())
    return len(chars) <= 2 and sum(c.isalpha() for c in chars) == 1 and not any(c.isdigit() for c in chars)


def is_glyph_noise(
    text: str, box: Sequence[float], confidence: float, min_confidence: float = 0.9, in_toolbar: bool = False
) -> bool:
    """Whether an OCR element is an icon read as text rather than text a person would name.

    Args:
        text: the recognised text.
        box: its ``(x0, y0, x1, y1)``.
        confidence: the recognition confidence in ``[0, 1]``.
        min_confidence: a lone glyph read with less confidence is an icon.
        in_toolbar: another lone glyph sits beside it on its line (:func:`glyph_noise`).

    Returns:
        True for a text without a letter or digit, for a lone glyph (:func:`is_lone_glyph`) read with
        confidence below ``min_confidence``, in a square box (width / height within :data:`GLYPH_SQUARE_ASPECT`)
        or in a toolbar, and for a number of one or two characters ("1", "42", "x2") read with confidence below
        :data:`NUMBER_MIN_CONFIDENCE`. Longer numbers and words of two letters or more ("OK", "Go") never are.
    """
    if not any(c.isalnum() for c in text):
        return True
    chars = "".join(text.split())
    if len(chars) <= 2 and any(c.isdigit() for c in chars):
        return confidence < NUMBER_MIN_CONFIDENCE
    if not is_lone_glyph(text):
        return False
    w, h = box[2] - box[0], box[3] - box[1]
    square = h > 0 and GLYPH_SQUARE_ASPECT[0] <= w / h <= GLYPH_SQUARE_ASPECT[1]
    return confidence < min_confidence or square or in_toolbar


def glyph_noise(
    texts: Sequence[str], boxes: Sequence[Sequence[float]], confidences: Sequence[float], min_confidence: float = 0.9
) -> set[int]:
    """Indices of the elements that are glyph noise (:func:`is_glyph_noise`).

    A lone glyph is *in a toolbar* when another lone glyph lies on its line (its vertical centre within the other's
    vertical extent) less than :data:`GLYPH_TOOLBAR_GAP` line heights away horizontally: a row of one-letter
    elements is a row of icons ("B", "I", "U"), a one-letter word of running text is not read as its own element.
    A lone glyph whose letter is of a script no other text of the screenshot is written in is an icon too, whatever
    its confidence: the recogniser reads icons as Chinese characters ("田" for a plus-in-a-square on an English page).
    """
    lone = [i for i, t in enumerate(texts) if is_lone_glyph(t)]
    alone = set(lone)
    written = set().union(*(letter_scripts(t) for i, t in enumerate(texts) if i not in alone))
    # with no other text on the screenshot nothing tells its script
    foreign = {i for i in lone if written and not set(letter_scripts(texts[i])) <= written}
    toolbar = set()
    for i in lone:
        a = boxes[i]
        for j in lone:
            b = boxes[j]
            if i == j or not b[1] <= (a[1] + a[3]) / 2 <= b[3]:
                continue
            gap = max(b[0] - a[2], a[0] - b[2], 0.0)
            if gap < GLYPH_TOOLBAR_GAP * max(a[3] - a[1], b[3] - b[1]):
                toolbar.add(i)
                break
    return {
        i
        for i, (t, b, c) in enumerate(zip(texts, boxes, confidences, strict=True))
        if i in foreign or is_glyph_noise(t, b, c, min_confidence, in_toolbar=i in toolbar)
    }


def repeat_key(text: str) -> str:
    """What a text is compared as to find its repeats (see the module docstring): trailing commas, full stops and
    semicolons dropped (the prose's, after a link: "GHashTable,"), but not an ellipsis ("Open..." is a menu item that
    opens a dialog, not "Open")."""
    key = " ".join(text.split()).casefold()
    return key if key.endswith(("...", "…")) else key.rstrip(",.;")


def painted_inside(texts: Sequence[str], members: Sequence[int]) -> int:
    """How often the text of ``members`` (indices into ``texts``, all one text) is painted inside the other texts:
    as whole words (not as part of a longer word), compared as repeats are (:func:`repeat_key`).

    Args:
        texts: every element's text on one screenshot.
        members: the indices of the elements whose text it is (at least one).

    Returns:
        The count of its occurrences in the texts of the elements not in ``members``.
    """
    words = repeat_key(texts[members[0]])
    pattern = re.compile(r"(?<!\w)" + re.escape(words) + r"(?!\w)")
    own = set(members)
    return sum(len(pattern.findall(" ".join(t.split()).casefold())) for i, t in enumerate(texts) if i not in own)


def _instructions(texts: list[str], boxes: list[tuple[float, ...]], template: str) -> list[str | None]:
    """One instruction per element (None: no label), bare for a unique text, positional for a repeat."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, text in enumerate(texts):
        groups[repeat_key(text)].append(i)
    positional = positional_template(template)
    out: list[str | None] = [None] * len(texts)
    for members in groups.values():
        if len(members) == 1:
            out[members[0]] = template.format(text=texts[members[0]])
        elif len(members) + painted_inside(texts, members) <= len(ORDINALS):
            ranked = reading_order([boxes[i] for i in members], Rows.LINES)
            for rank, k in enumerate(ranked):
                i = members[k]
                out[i] = positional.format(ordinal=ORDINALS[rank], text=texts[i])
    owners: dict[str, int] = defaultdict(int)
    for instruction in out:
        if instruction is not None:
            owners[instruction.casefold()] += 1
    return [None if x is None or owners[x.casefold()] > 1 else x for x in out]


def elements_to_labels(shot: Screenshot, elements, annotator, config: OcrProducer) -> list[GroundingLabel]:
    """Turn OCR text elements into grounding labels in original pixels, boxes clamped to the image.

    Instructions are unambiguous on the screenshot (see the module docstring): repeated texts are named by position,
    or not at all beyond the tenth repeat. Label ids are stable (the instruction is part of the id).

    Args:
        shot: the screenshot (its id and size are stamped on every label).
        elements: :class:`screenmill.annotators.ocr.TextElement` s in the screenshot's pixels.
        annotator: the annotator (its ``NAME`` / ``VERSION`` are the provenance).
        config: the producer (recipe, templates, ``min_element_chars``, the glyph rule, provenance).

    Returns:
        The labels, top to bottom then left to right (by rounded box corner, then text); elements with too little text
        or more than :data:`screenmill.annotators.wording.MAX_INSTRUCTION_NAME` characters (a paragraph: no one
        quotes it whole in an instruction, and the DOM labels draw the same line), glyph icons (:func:`is_glyph_noise`,
        unless ``config.drop_glyphs`` is off), wrong-script readings (unless ``config.drop_wrong_script`` is off), no
        area inside the image, text cut by its right edge (:data:`EDGE_CUT`), a text repeated more than ten
        times, or one read with less confidence than the annotator's ``label_min_confidence``
        (:class:`screenmill.annotators.ocr. OcrConfig`, from ``config.annotator_options``; after the repeats are
        counted: its text is on the screenshot all the same) give none.

    Raises:
        ValueError: ``config.annotator_options`` is no valid :class:`screenmill.annotators.ocr.OcrConfig`.
    """
    floor = config.ocr_config.label_min_confidence
    w, h = shot.width, shot.height
    ordered = sorted(elements, key=lambda e: (round(e.box[1]), round(e.box[0]), e.text))
    provenance = LabelProvenance(
        annotator.NAME, annotator.VERSION, config.recipe, config.recipe_version, config.config_hash, config.run_id
    )
    build = LabelBuilder(shot, provenance, "pixel")
    kept = []
    for el in ordered:
        text = " ".join(el.text.split())
        if not config.min_element_chars <= len(text) <= MAX_INSTRUCTION_NAME:
            continue
        x0, y0, x1, y1 = (min(max(v, 0.0), lim) for v, lim in zip(el.box, (w, h, w, h), strict=True))
        if x1 <= x0 or y1 <= y0 or x1 >= w - EDGE_CUT:  # no area, or cut by the right edge
            continue
        kept.append((el, text, (x0, y0, x1, y1)))
    if config.drop_wrong_script:
        kept = [k for k in kept if not is_wrong_script_reading(k[1])]
    if config.drop_glyphs:
        noise = glyph_noise([t for _, t, _ in kept], [b for _, _, b in kept], [e.confidence for e, _, _ in kept],
                            config.glyph_min_confidence)  # fmt: skip
        kept = [k for i, k in enumerate(kept) if i not in noise]
    instructions = _instructions([t for _, t, _ in kept], [b for _, _, b in kept], config.instruction_template)
    labels = []
    for (el, text, box), instruction in zip(kept, instructions, strict=True):
        if instruction is None or el.confidence < floor:
            continue
        px = min(max(el.point[0], box[0]), box[2])
        py = min(max(el.point[1], box[1]), box[3])
        labels.append(
            build.add(
                instruction,
                box,
                (px, py),
                element_text=text,
                role="text",
                native_box=el.box,
                native_point=el.point,
                confidence=el.confidence,
            )
        )
    return labels
