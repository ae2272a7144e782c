"""OcrAnnotator: config validation, input checks, element splitting on a drawn image, and the truth-set accuracy."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont
from screenmill.annotators.ocr import OcrAnnotator, TextElement
from screenmill.annotators.ocr_colour import glyph_between, mark_after, other_ink_between, text_colours
from screenmill.annotators.ocr_config import OcrConfig
from screenmill.annotators.ocr_detect import _bridge_missed_ink
from screenmill.annotators.ocr_ink import (
    _free_rows_below,
    _ink_columns,
    _monospace_pitch,
    _runs,
    _underscores,
    underline_ends_between,
)
from screenmill.annotators.ocr_text import (
    _ascii_marks,
    _bracketed,
    _by_characters,
    _clean,
    _fits,
    _keep,
    _no_stop,
    _Piece,
)

ROOT = Path(__file__).resolve().parents[2]
TRUTH = ROOT / "samples" / "truth" / "truth.jsonl"
DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def _font(size: int) -> ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=size)  # Pillow >= 10.1 with FreeType: a scalable built-in font
    except (TypeError, OSError):  # pragma: no cover - old Pillow
        pytest.skip("needs Pillow >= 10.1 with FreeType for a scalable default font")


def _dejavu(size: int) -> ImageFont.FreeTypeFont:
    """DejaVu Sans, Chromium's sans-serif here (Debian's fonts-dejavu-core, installed by infra/browser/install.sh)."""
    if not DEJAVU.is_file():
        pytest.skip(f"needs {DEJAVU} (Debian's fonts-dejavu-core, installed by infra/browser/install.sh)")
    return ImageFont.truetype(str(DEJAVU), size)


def _dejavu_mono(size: int) -> ImageFont.FreeTypeFont:
    """DejaVu Sans Mono, Chromium's monospace font here (as :func:`_dejavu`)."""
    if not DEJAVU_MONO.is_file():
        pytest.skip(f"needs {DEJAVU_MONO} (Debian's fonts-dejavu-core, installed by infra/browser/install.sh)")
    return ImageFont.truetype(str(DEJAVU_MONO), size)


def _draw_ui(width: int = 900, height: int = 340, size: int = 20) -> tuple[Image.Image, dict[str, tuple]]:
    """A login-ish UI: nav links on one row, a button, a label and a link far apart, grey text + a blue link."""
    im = Image.new("RGB", (width, height), (250, 250, 252))
    d = ImageDraw.Draw(im)
    font = _font(size)
    boxes: dict[str, tuple] = {}
    x = 30
    for word in ("Home", "Products", "Pricing", "Blog"):  # nav links 0.7 em apart: one detector line
        x0, t, r, b = d.textbbox((x, 30), word, font=font)
        d.text((x, 30), word, font=font, fill=(30, 30, 30))
        boxes[word] = (x0, t, r, b)
        x = r + int(0.7 * size)
    # a filled button with centred text
    d.rounded_rectangle((30, 120, 200, 170), radius=6, fill=(43, 74, 203))
    x0, t, r, b = d.textbbox((0, 0), "Sign in", font=font)
    tx, ty = 30 + (170 - (r - x0)) // 2 - x0, 120 + (50 - (b - t)) // 2 - t
    d.text((tx, ty), "Sign in", font=font, fill=(255, 255, 255))
    boxes["Sign in"] = (30, 120, 200, 170)
    # label and a blue link on one line, far apart
    x0, t, r, b = d.textbbox((30, 230), "Remember me", font=font)
    d.text((30, 230), "Remember me", font=font, fill=(60, 60, 60))
    boxes["Remember me"] = (x0, t, r, b)
    x0, t, r, b = d.textbbox((420, 230), "Forgot password?", font=font)
    d.text((420, 230), "Forgot password?", font=font, fill=(20, 80, 220))
    boxes["Forgot password?"] = (x0, t, r, b)
    # grey text then a blue link after an ordinary word space: only the colour tells them apart
    x0, t, r, b = d.textbbox((30, 280), "No account?", font=font)
    d.text((30, 280), "No account?", font=font, fill=(110, 115, 130))
    boxes["No account?"] = (x0, t, r, b)
    x = r + d.textlength(" ", font=font)
    x0, t, r, b = d.textbbox((x, 280), "Create one", font=font)
    d.text((x, 280), "Create one", font=font, fill=(20, 80, 220))
    boxes["Create one"] = (x0, t, r, b)
    return im, boxes


def _inside(point, box, slack: float = 2.0) -> bool:
    return box[0] - slack <= point[0] <= box[2] + slack and box[1] - slack <= point[1] <= box[3] + slack


def _find(elements: list[TextElement], text: str) -> TextElement:
    def key(s: str) -> str:  # the recogniser sometimes drops a space ("Rememberme"); that is not under test here
        return s.casefold().replace(" ", "").strip("?")

    hits = [e for e in elements if key(e.text) == key(text)]
    assert len(hits) == 1, f"{text!r}: expected one element, got {[e.text for e in elements]}"
    return hits[0]


# ---------------------------------------------------------------------- no engine needed
@pytest.mark.parametrize(
    "kwargs",
    [
        {"min_confidence": 1.5},
        {"min_confidence": -0.1},
        {"max_side": 10},
        {"max_side": 1000, "strip_overlap": 600},
        {"split_gap_advances": 0},
        {"color_split": -1},
        {"chroma_split": -1},
        {"ink_contrast": 0},
        {"intra_op_threads": -1},
        {"split_elements": "yes"},
        {"det_faint_gain": 0.5},
        {"det_faint_target": 0},
        {"det_faint_window": 16},
        {"det_scale": 0.1},
        {"det_scale": 5},
    ],
)
def test_config_rejects_bad_values(kwargs):
    with pytest.raises(ValueError, match="OcrConfig"):
        OcrConfig(**kwargs)


def test_config_is_frozen_and_annotator_is_cheap():
    cfg = OcrConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.min_confidence = 0.1  # type: ignore[misc]
    t = time.perf_counter()
    ann = OcrAnnotator(cfg)
    assert time.perf_counter() - t < 0.05 and ann._engine is None  # no model loaded at construction
    assert OcrAnnotator.NAME == "ocr-rapidocr" and OcrAnnotator.VERSION


@pytest.mark.parametrize(
    "image",
    [
        np.zeros((10, 10), np.uint8),
        np.zeros((10, 10, 4), np.uint8),
        np.zeros((10, 10, 3), np.float32),
        np.zeros((0, 10, 3), np.uint8),
        "not an array",
    ],
)
def test_annotate_rejects_bad_images(image):
    with pytest.raises(ValueError):
        OcrAnnotator().annotate(image)


def test_missing_rapidocr_gives_install_hint(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("rapidocr_onnxruntime"):
            raise ImportError("No module named 'rapidocr_onnxruntime'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(RuntimeError, match="infra/setup.sh"):
        OcrAnnotator().load()


def test_a_texts_colours_are_its_words_and_none_where_no_glyph_can_be_told():
    """text_colours: the words' colour, then all the ink's; None for a crop under 2 px either way or without ink."""
    im = Image.new("RGB", (300, 60), (255, 255, 255))
    d = ImageDraw.Draw(im)
    d.text((10, 15), "Download", font=_dejavu(20), fill=(200, 30, 30))
    a, cfg = np.asarray(im), OcrConfig()
    colours = text_colours(a, (8, 10, 130, 45), cfg)
    assert colours is not None and colours.shape == (2, 3)
    assert all(c[0] > 150 and c[1] < 90 and c[2] < 90 for c in colours), colours  # red, both
    assert text_colours(a, (40, 10, 41, 45), cfg) is None  # 1 px wide
    assert text_colours(a, (8, 30, 130, 31), cfg) is None  # 1 px high
    assert text_colours(a, (150, 10, 290, 45), cfg) is None  # blank


# ---------------------------------------------------------------------- with the engine


def test_splits_a_drawn_ui_into_elements(annotator):
    im, boxes = _draw_ui()
    elements = annotator.annotate(np.asarray(im))
    for text, box in boxes.items():
        e = _find(elements, text)
        assert _inside(e.point, box), f"{text!r}: point {e.point} not in {box}"
        assert e.box[0] <= e.point[0] <= e.box[2] and e.box[1] <= e.point[1] <= e.box[3]
        assert 0.5 <= e.confidence <= 1.0
    assert all(isinstance(v, float) for e in elements for v in (*e.box, *e.point, e.confidence))


def _draw_runs(d: ImageDraw.ImageDraw, xy: tuple[int, int], runs, font) -> dict[str, tuple]:
    """Draw (text, colour, underlined) runs one after another on a line; returns each run's box."""
    x, y = xy
    boxes = {}
    for text, colour, underline in runs:
        x0, y0, x1, y1 = d.textbbox((x, y), text, font=font)
        d.text((x, y), text, font=font, fill=colour)
        if underline:
            d.line((x0, y1 + 1, x1, y1 + 1), fill=colour, width=1)
        boxes[text.strip()] = (x0, y0, x1, y1)
        x = x1 + (d.textlength(" ", font=font) if text.endswith(" ") else 0)
    return boxes


def _draw_advancing(d: ImageDraw.ImageDraw, xy: tuple[float, float], runs, font) -> float:
    """Draw (text, colour, underlined) runs one after another at their advances, as a browser sets them (an
    underline runs under a run's whole advance, its trailing space included); returns the x after the last run."""
    x, y = xy
    ascent, _descent = font.getmetrics()
    for text, colour, underline in runs:
        d.text((x, y), text, font=font, fill=colour)
        advance = d.textlength(text, font=font)
        if underline:
            d.line((x, y + ascent + 1, x + advance, y + ascent + 1), fill=colour, width=2)
        x += advance
    return x


def _read_rows(annotator, rows, font, size: tuple[int, int], background: tuple[int, int, int]) -> list[list[str]]:
    """Each row of (text, colour, underlined) runs drawn alone on an image of ``size`` (:func:`_draw_advancing`) and
    read: its elements' texts, case-folded, without spaces."""
    read = []
    for runs in rows:
        im = Image.new("RGB", size, background)
        _draw_advancing(ImageDraw.Draw(im), (20.0, 20.0), runs, font)
        read.append([e.text.casefold().replace(" ", "") for e in annotator.annotate(np.asarray(im))])
    return read


def test_a_link_in_prose_splits_off_by_colour_whatever_its_punctuation_and_however_close_in_rgb(annotator):
    """A word's colour leaves out the punctuation at its ends: the black full stop after an underlined red link, or
    the grey brackets around a blue address, do not make it the prose's colour, and a black comma between two red
    links ends the first; grey and a blue of an RGB distance under ``color_split`` still differ in hue
    (``chroma_split``)."""
    font = _font(20)
    im = Image.new("RGB", (760, 140), (255, 250, 215))
    d = ImageDraw.Draw(im)
    grey, red, blue = (85, 85, 85), (160, 96, 96), (40, 110, 150)  # grey and blue: 83 apart in RGB
    _draw_runs(d, (20, 20), [("Logo designed by ", (10, 10, 10), False), ("Marc Liyanage", red, True),
                             (".", (10, 10, 10), False)], font)  # fmt: skip
    _draw_runs(d, (20, 80), [("Loic Minier <", grey, False), ("lool@debian.org", blue, False), (">", grey, False)],
               font)  # fmt: skip
    _draw_runs(d, (420, 20), [("Tutorial", red, True), (", ", (10, 10, 10), False), ("Reference", red, True)], font)
    texts = {e.text.replace(" ", "") for e in annotator.annotate(np.asarray(im))}
    assert {"Logodesignedby", "MarcLiyanage.", "LoicMinier", "Reference"} <= texts, texts
    assert "Tutorial," in texts or "Tutorial" in texts, texts  # a plain comma between two links ends the first
    assert any(t.strip("<>") == "lool@debian.org" for t in texts), texts
    no_hue = OcrAnnotator(dataclasses.replace(annotator.config, chroma_split=0.0))
    assert "LoicMinier" not in {e.text.replace(" ", "") for e in no_hue.annotate(np.asarray(im))}


def test_a_plain_comma_after_a_monospace_link_on_a_chip_ends_it(annotator):
    """Links set as code on a grey chip and listed with the prose's black commas ("Consumed by maps:next/1,
    maps:filter/2, maps:fold/3 and ..."): the comma is a sliver of a long word of narrow monospace glyphs, so the
    word's colour over its ends stays the link's; the comma's own colour, darker and of another hue, ends the link."""
    sans, mono = _dejavu(17), _dejavu_mono(17)
    im = Image.new("RGB", (900, 70), (255, 255, 255))
    d = ImageDraw.Draw(im)
    black, blue, chip = (34, 34, 34), (40, 110, 175), (243, 243, 243)
    x = 20.0
    for text, font, colour in [("Consumed by ", sans, black), ("maps:next/1", mono, blue), (", ", sans, black),
                               ("maps:filter/2", mono, blue), (", ", sans, black), ("maps:fold/3", mono, blue),
                               (" and so on.", sans, black)]:  # fmt: skip
        advance = d.textlength(text, font=font)
        if font is mono:
            d.rectangle((x, 22, x + advance + 4, 46), fill=chip)
            x += 2
        d.text((x, 24), text, font=font, fill=colour)
        x += advance + (2 if font is mono else 0)
    texts = {e.text.replace(" ", "").rstrip(",") for e in annotator.annotate(np.asarray(im))}
    assert {"maps:next/1", "maps:filter/2", "maps:fold/3"} <= texts, texts


def test_a_link_keeps_apart_from_prose_despite_an_underlined_space_or_a_bracket_of_the_prose_colour(annotator):
    """A link whose underline runs on under its trailing space ("<a>archives </a>and") still splits from the next
    word (an underline is no glyph stroke), and a link followed by a bracket of the prose's colour ("(see the
    intro)") is not joined back to the prose: a text's colour for joining is its words', not that of its most
    contrasting ink (the black bracket)."""
    font = _dejavu(18)
    im = Image.new("RGB", (900, 130), (255, 250, 205))
    d = ImageDraw.Draw(im)
    black, brown = (0, 0, 0), (150, 90, 80)
    rows = [
        [("check the ", black, False), ("archives ", brown, True), ("and the bug database", black, False)],
        [("(see the ", black, False), ("intro", brown, True), (")", black, False)],
    ]
    for k, runs in enumerate(rows):
        _draw_advancing(d, (20.0, 20 + 60 * k), runs, font)
    texts = [e.text for e in annotator.annotate(np.asarray(im))]
    assert "archives" in texts, texts
    assert "intro" in {t.rstrip(")") for t in texts}, texts
    assert not any("see" in t and "intro" in t for t in texts), texts


def test_a_bracket_of_the_prose_colour_opening_a_link_splits_it_from_the_link_before(annotator):
    """ "contact the <a>xml-bindings@gnome.org</a> (<a>archives</a>) in order": two links of one colour with a black
    bracket between them are two elements, apart from the prose around them. The word "(archives)" has the links'
    colour without its brackets, so only the bracket before it, darker than the link and of another hue, tells that
    a new element starts there (without that rule this line is read as one piece). A bracket of the prose's own
    colour ("(in bytes)") splits nothing."""
    font = _dejavu(15)
    black, brown = (14, 14, 12), (166, 106, 103)
    rows = [
        [("contact the ", black, False), ("xml-bindings@gnome.org", brown, True), (" (", black, False),
         ("archives", brown, True), (") in order to get", black, False)],
        [("the size ", black, False), ("(in bytes) is", black, False)],
    ]  # fmt: skip
    links, prose = _read_rows(annotator, rows, font, (900, 80), (255, 250, 205))
    assert sum(t.startswith("xml-bindings@") and "archives" not in t for t in links) == 1, links
    assert "archives" in {t.strip("()") for t in links}, links
    assert "contactthe" in links and "inordertoget" in links, links
    assert prose == ["thesize(inbytes)is"]


def test_one_underline_keeps_a_link_whole_though_a_word_of_it_is_another_colour(annotator):
    """A link whose text holds code in another colour ("The <code>phony</code> rule", one underline under all of it)
    is one element: where one underline runs from a word across the gap under the next, they are one link."""
    font = _dejavu(18)
    ascent, _descent = font.getmetrics()
    im = Image.new("RGB", (600, 70), (255, 255, 255))
    d = ImageDraw.Draw(im)
    blue, navy = (0, 0, 238), (60, 60, 120)
    x = _draw_advancing(d, (20.0, 20), [("The ", blue, False), ("phony", navy, False), (" rule", blue, False)], font)
    d.line((20, 20 + ascent + 1, x, 20 + ascent + 1), fill=blue, width=2)
    assert [e.text for e in annotator.annotate(np.asarray(im))] == ["The phony rule"]


def test_a_grey_underlined_link_splits_from_black_prose_where_its_underline_ends(annotator):
    """underscore.js's links are grey (68) and underlined in black prose: set small, the prose reads 15-50 grey and
    the link 76-83, under ``color_split`` apart, so colour alone keeps "on <a>GitHub</a>. You can report" one piece.
    An underline that ends between an underlined word and a bare one splits them, also where the link's last word
    holds a bare "'s" ("with <a>jQuery</a>'s tux"), and between two letters two pixels apart ("<a>Gitter</a> channel",
    a space too narrow to split at): the underline is told by its own long run, the gaps it leaves at descenders
    ("page") bridged."""
    font = _dejavu(15)
    black, grey = (0, 0, 0), (68, 68, 68)
    rows = [
        [("The project is ", black, False), ("hosted on GitHub", grey, True), (". You can report bugs", black, False)],
        [("go along with ", black, False), ("jQuery", grey, True), ("'s tux and more", black, False)],
    ]
    github, jquery = _read_rows(annotator, rows, font, (700, 60), (255, 255, 255))
    assert any(t.startswith("hostedongithub") and "report" not in t for t in github), github
    assert any(t.startswith("youcanreport") or t.startswith(".youcanreport") for t in github), github
    assert any(t.startswith("jquery") and "tux" not in t for t in jquery), jquery
    # two pixels between the link and the word after it, too narrow a space to split at: the underline's end splits,
    # and the link's crop, padded no further than a pixel short of the next word, holds none of its first letter.
    # Read at the detector's own scale: at the one these glyphs ask for (1.36, OCR revision 88) its box of the line
    # lies a row lower (22-37, not 21-36) and the split no longer finds the underline's end, so "Gitter channel."
    # stays one piece (docs/ocr.md, "The detector's scale": a known loss of revision 88)
    own_scale = OcrAnnotator(dataclasses.replace(annotator.config, det_text_height=0.0))
    for after in ("channel.", "lines", "faster"):
        im = Image.new("RGB", (700, 60), (255, 255, 255))
        d = ImageDraw.Draw(im)
        x = _draw_advancing(d, (20.0, 20.0), [("or chat in the ", black, False), ("Gitter", grey, True)], font)
        _draw_advancing(d, (x + 2, 20.0), [(after, black, False)], font)
        gitter = [e.text.casefold().replace(" ", "") for e in own_scale.annotate(np.asarray(im))]
        assert "gitter" in gitter, gitter


def test_an_underline_is_its_long_run_across_the_skips_at_descenders_and_its_end_is_told_between_two_spans():
    """A browser's underline skips a glyph's ink by a pixel or two each side ("issues page"), and a descender's by
    up to half a line height ("bindings"): those gaps are bridged, so the underline is one long run; ink of bare
    glyphs touching its rows (a descender, a baseline) makes only short runs, which are none. An underline ends
    between two spans where one is under it and the other bare, and not where it runs on across the gap (under a
    link's trailing space) or both are bare."""
    from screenmill.annotators.ocr_ink import _long_runs, _underline_edge

    mask = np.array([1] * 30 + [0, 0] + [1] * 20 + [0] * 10 + [1, 1, 1, 0, 1, 1] + [0] * 5, dtype=bool)
    rule = _long_runs(mask, length=31, bridge=2)
    assert rule[:52].all() and not rule[52:].any()  # 30 + a 2-px skip + 20, one run; the bare 3 + 2 dropped
    assert not _long_runs(mask, length=31, bridge=1).any()  # without the bridge no run is long enough
    # "bindings": the underline skips the "g"'s descender by 7 px before it and 2 after, where ink lies just below it
    gapped = np.array([1] * 30 + [0] * 7 + [1] * 3 + [0] * 2 + [1] * 9, dtype=bool)
    descends = np.zeros(51, dtype=bool)
    descends[37:40] = True
    assert _long_runs(gapped, length=45, bridge=2, descends=descends, skip=8).all()
    assert not _long_runs(gapped, length=45, bridge=2, descends=np.zeros(51, dtype=bool), skip=8).any()
    assert not _long_runs(gapped, length=45, bridge=2, descends=descends, skip=6).any()  # wider than a skip
    # "designed by <a>Marc</a>": a bare word's descender 5 px before a link's underline has underline on one side only
    by = np.array([1] * 3 + [0] * 5 + [1] * 40, dtype=bool)
    rule = _long_runs(by, length=31, bridge=2, descends=np.array([True] * 3 + [False] * 45), skip=8)
    assert not rule[:8].any() and rule[8:].all()
    rule = _long_runs(mask, length=31, bridge=2)
    assert _underline_edge(rule, (40, 52), (56, 62))  # underlined, then bare after a blank gap
    assert _underline_edge(rule, (56, 62), (40, 52)) is False  # spans out of order: b starts before a ends
    assert not _underline_edge(rule, (0, 20), (22, 40))  # one link across the gap
    assert not _underline_edge(rule, (56, 60), (62, 70))  # both bare


def test_an_underline_ends_between_two_underlined_links_whose_gap_is_bare():
    """A link's underline runs under its word spaces; two links side by side ("Babel 2.18.0" | "previous") each have
    their own, and the bare gap between them is where one ends, though both are underlined."""
    font = _dejavu(18)
    red = (170, 0, 0)
    im = Image.new("RGB", (600, 60), (255, 255, 255))
    d = ImageDraw.Draw(im)
    x = _draw_advancing(d, (20.0, 20.0), [("Babel 2.18.0", red, True)], font)
    end = x
    x = _draw_advancing(d, (x + 30, 20.0), [("previous", red, True)], font)
    image = np.asarray(im)
    space = d.textlength("Babel ", font=font) - d.textlength("Babel", font=font)
    babel, previous = (18.0, 16.0, end + 1, 46.0), (end + 29, 16.0, x + 1, 46.0)
    assert underline_ends_between(image, babel, previous, OcrConfig())
    first = (18.0, 16.0, 20 + d.textlength("Babel", font=font), 46.0)  # one link's two words: one underline
    second = (20 + d.textlength("Babel", font=font) + space, 16.0, end + 1, 46.0)
    assert not underline_ends_between(image, first, second, OcrConfig())


PROSE = (
    "Refuses to write to any file or resource.",
    "Output an XML tree of the transformed document for debugging purposes.",
    "Initialize pseudo random number generator with specific seed.",
)


def test_prose_keeps_its_word_spaces_beside_a_wider_line(annotator):
    """Lines of prose read with every word space, though a much wider line shares the screenshot: recognised in one
    padded batch, PP-OCR read such lines as "Refusestowritetoanyfileorresource.", and the lost spaces also split
    lines at ordinary word gaps (a line's word spaces are measured against the spaces read)."""
    font = _dejavu(15)  # Chromium's sans-serif here, at a size body text often has
    im = Image.new("RGB", (1400, 200), (255, 255, 255))
    d = ImageDraw.Draw(im)
    d.text((10, 10), " ".join(["A very long line of words that fills the whole width of the page"] * 2), font=font,
           fill=(0, 0, 0))  # fmt: skip
    for i, line in enumerate(PROSE):
        d.text((10, 60 + 40 * i), line, font=font, fill=(0, 0, 0))
    texts = [e.text for e in annotator.annotate(np.asarray(im))]
    for line in PROSE:
        assert line in texts, (line, texts)


def test_a_space_read_between_two_punctuation_marks_is_no_word_space(annotator):
    """The relative gap split compares a gap with the line's word spaces, as many as the recognised text has. Read as
    "- -maxdepth VALUE", "--maxdepth VALUE" made the narrow gap between its dashes a word space, and its one real
    space, twice as wide, split the option from its value; a space between two punctuation marks no longer counts.
    A tight row of links still splits ("4 Branches" and "27 Tags", their gap wider than the spaces inside them)."""
    mono = ImageFont.truetype(str(DEJAVU.with_name("DejaVuSansMono.ttf")), 16) if DEJAVU.is_file() else _dejavu(16)
    im = Image.new("RGB", (500, 40), (255, 255, 255))
    ImageDraw.Draw(im).text((6, 8), "--maxdepth VALUE", font=mono, fill=(0, 0, 0))
    assert len(annotator._split_line(np.asarray(im)[4:36], "- -maxdepth VALUE")) == 1
    font = _dejavu(16)
    im = Image.new("RGB", (500, 40), (255, 255, 255))
    d = ImageDraw.Draw(im)
    d.text((6, 8), "4 Branches", font=font, fill=(0, 0, 0))
    d.text((6 + d.textlength("4 Branches", font=font) + 14, 8), "27 Tags", font=font, fill=(0, 0, 0))
    assert len(annotator._split_line(np.asarray(im)[4:36], "4 Branches 27 Tags")) == 2


def test_a_row_of_bracketed_links_splits_into_its_items(annotator):
    """Texinfo's navigation "[Contents][Index]" is two links, the brackets outside them: read as one piece, it
    becomes one element per item, each point on its word."""
    font = _dejavu(16)
    im = Image.new("RGB", (500, 60), (255, 255, 255))
    d = ImageDraw.Draw(im)
    row = "[Contents][Index]"
    d.text((20, 20), row, font=font, fill=(0, 0, 0))  # one colour: no colour split between the items
    boxes = {}
    for word in ("Contents", "Index"):
        start = row.index(word)
        x0 = 20 + d.textlength(row[:start], font=font)
        boxes[word] = (x0, 20, 20 + d.textlength(row[: start + len(word)], font=font), 40)
    elements = annotator.annotate(np.asarray(im))
    for word in ("Contents", "Index"):
        found = [e for e in elements if e.text.strip("[] ") == word]
        assert len(found) == 1, (word, [e.text for e in elements])
        assert _inside(found[0].point, boxes[word]), (word, found[0], boxes[word])
    # Chromium sets "][" tighter than Pillow does, and the piece comes whole: the items are mapped onto its ink
    x0, _t, x1, _b = d.textbbox((20, 20), row, font=font)
    pieces = annotator._separator_split(np.asarray(im), _Piece(int(x0), int(x1)), row, 0.9)
    assert [p.text for p in pieces] == ["Contents", "Index"]
    for p in pieces:
        assert _inside(((p.x0 + p.x1) / 2, 30), boxes[p.text]), (p, boxes[p.text])
    assert _bracketed("[Contents] [Index]") == [("Contents", 1, 9), ("Index", 12, 17)]
    assert _bracketed("[Contents]") is None and _bracketed("see [1] here") is None and _bracketed("[][x]") is None
    # read on a phone with its first "[" lost, or with a "]" read as "l" before the next "[": still two links
    # (the lost "[" is ink in the piece's box still: "Contents" starts after it)
    k = 16 / 17  # 17 characters of the row with its "[" over the 16 read
    assert _bracketed("Contents][Index]") == [("Contents", 1 * k, 9 * k), ("Index", 11 * k, 16 * k)]
    assert _bracketed("[Contentsl[lndex]") == [("Contents", 1, 9), ("lndex", 11, 16)]
    for other in ("MPFR Basics [Index]", "vall[0]", "a[1][2]", "x = arrl[i][j]"):
        assert _bracketed(other) is None, other


def _quad(box) -> np.ndarray:
    x0, y0, x1, y1 = box
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float32)


def _date_row(d: ImageDraw.ImageDraw, xy: tuple[int, int], font) -> dict[str, tuple]:
    """ "Mar 01, 2025" drawn word by word; each word's box padded as the detector pads its boxes."""
    x, y = xy
    boxes = {}
    for word in ("Mar", "01,", "2025"):
        x0, y0, x1, y1 = d.textbbox((x, y), word, font=font)
        d.text((x, y), word, font=font, fill=(33, 37, 41))
        boxes[word] = (int(x0) - 3, int(y0) - 4, int(x1) + 3, int(y1) + 4)
        x = x1 + d.textlength(" ", font=font)
    return boxes


def test_boxes_of_one_row_join_across_ink_the_detector_found_no_text_in():
    """The detector can find "Mar" and "2025" and miss the "01," between them: the two boxes become one line box
    spanning all three. A blank gap, a table's vertical rule between two cells, another row or another type size do
    not join."""
    font = _dejavu(15)
    im = Image.new("RGB", (700, 200), (255, 255, 255))
    d = ImageDraw.Draw(im)
    row = _date_row(d, (20, 20), font)
    blank = _date_row(d, (20, 80), font)
    d.rectangle((blank["01,"][0] + 3, 80, blank["01,"][2] - 3, 110), fill=(255, 255, 255))  # no 01, at all
    ruled = {"left": (300, 16, 360, 42), "right": (380, 16, 440, 42)}
    d.text((303, 20), "Paid", font=font, fill=(0, 0, 0))
    d.text((383, 20), "Due", font=font, fill=(0, 0, 0))
    d.line((370, 0, 370, 70), fill=(200, 200, 200), width=1)  # a cell border from above the row to below it
    tall = ImageFont.truetype(str(DEJAVU), 30)
    d.text((300, 120), "Title", font=tall, fill=(0, 0, 0))
    d.text((400, 128), "x", font=font, fill=(0, 0, 0))
    d.text((465, 130), "small", font=font, fill=(0, 0, 0))
    detected = [row["Mar"], row["2025"], blank["Mar"], blank["2025"], ruled["left"], ruled["right"],
                (296, 116, 390, 158), (460, 126, 520, 152)]  # fmt: skip
    quads = [_quad(b) for b in detected]
    out = sorted(
        tuple(int(v) for v in (*q.min(axis=0), *q.max(axis=0))) for q in _bridge_missed_ink(quads, np.asarray(im), 32)
    )
    joined = (row["Mar"][0], min(row["Mar"][1], row["2025"][1]), row["2025"][2], max(row["Mar"][3], row["2025"][3]))
    assert joined in out, out
    assert len(out) == len(quads) - 1, out  # only that pair joined
    for box in (blank["Mar"], blank["2025"], ruled["left"], ruled["right"], (296, 116, 390, 158)):
        assert box in out, (box, out)


def test_a_token_the_detector_missed_is_read_with_its_row(annotator, monkeypatch):
    """End to end with the real detector and recogniser, the detector's miss made sure of by dropping the box it
    gives "01,": the element read is the whole date, as the DOM has it, not "Mar" and "2025" apart."""
    font = _dejavu(15)
    im = Image.new("RGB", (400, 60), (255, 255, 255))
    d = ImageDraw.Draw(im)
    row = _date_row(d, (20, 20), font)
    engine = annotator._engine
    gap = (row["Mar"][2], row["2025"][0])

    class MissesTheDay:
        def __init__(self, inner):
            self._inner = inner

        def __getattr__(self, name):
            return getattr(self._inner, name)

        def __call__(self, *args, **kwargs):
            quads, rest = self._inner(*args, **kwargs)
            kept = []  # the boxes that do not cover the gap's middle, or a box of each word when one spans the row
            for q in quads or []:
                x0, x1 = float(np.min(np.asarray(q)[:, 0])), float(np.max(np.asarray(q)[:, 0]))
                if x0 < sum(gap) / 2 < x1:
                    if x1 - x0 > gap[1] - gap[0] + 20:  # one box for the whole row: stand in its two outer words
                        kept += [_quad(row["Mar"]).tolist(), _quad(row["2025"]).tolist()]
                    continue
                kept.append(q)
            return kept, rest

    # the stand-in boxes are in the screenshot's pixels: the detector reads it at its own scale (det_text_height 0)
    own_scale = OcrAnnotator(dataclasses.replace(annotator.config, det_text_height=0.0))
    own_scale.load()
    monkeypatch.setattr(own_scale, "_engine", MissesTheDay(engine))
    texts = [e.text for e in own_scale.annotate(np.asarray(im))]
    assert [t.replace(" ", "") for t in texts] == ["Mar01,2025"], texts


def test_unsplit_mode_keeps_lines(annotator):
    im, _ = _draw_ui()
    lines = OcrAnnotator(dataclasses.replace(annotator.config, split_elements=False)).annotate(np.asarray(im))
    assert len(lines) < len(annotator.annotate(np.asarray(im)))


def test_blank_image_has_no_elements(annotator):
    assert annotator.annotate(np.full((200, 300, 3), 255, np.uint8)) == []


def test_tall_image_strips_and_wide_image_scaling_map_back(annotator):
    im, boxes = _draw_ui(size=24)
    small = OcrAnnotator(dataclasses.replace(annotator.config, max_side=400, strip_overlap=120))
    # tall: a 390-wide canvas (no scaling at max_side=400) with the nav row at three heights -> 5 strips
    nav = im.crop((0, 0, 390, 90))
    tall = Image.new("RGB", (390, 1400), (250, 250, 252))
    for top in (0, 600, 1300):
        tall.paste(nav, (0, top))
    found = [e for e in small.annotate(np.asarray(tall)) if e.text == "Home"]
    assert sorted(round(e.point[1]) // 100 for e in found) == [0, 6, 13]
    # wide: a 2x upscaled UI processed at max_side=1000 (scaled down by 2) comes back in input pixels
    big = im.resize((im.width * 2, im.height * 2), Image.Resampling.LANCZOS)
    scaled = OcrAnnotator(dataclasses.replace(annotator.config, max_side=1000)).annotate(np.asarray(big))
    e = _find(scaled, "Forgot password?")
    x0, y0, x1, y1 = (2 * v for v in boxes["Forgot password?"])
    assert _inside(e.point, (x0, y0, x1, y1), slack=4)


@pytest.mark.slow  # real OCR of the ten truth pages (the gate of the annotator itself; test_evaluate scores the run's)
def test_truth_set_accuracy(annotator):
    """The hand-written pages of infra/truthset: element recall >= 90 %, click points in the right box >= 98 %."""
    from screenmill.annotators.evaluate.matching import Prediction, evaluate
    from screenmill.annotators.evaluate.reports import format_table
    from screenmill.annotators.evaluate.truth import load_truth

    assert TRUTH.is_file(), "samples/truth/truth.jsonl is missing (run infra/truthset/build.py)"
    truth = load_truth(TRUTH)
    preds = []
    for name in sorted({t.image for t in truth}):
        arr = np.asarray(Image.open(TRUTH.parent / name).convert("RGB"))
        preds += [Prediction(name, e.text, e.point, e.box) for e in annotator.annotate(arr)]
    report = evaluate(truth, preds)
    print("\n" + format_table(report))
    assert report.truth >= 300
    assert report.recall >= 0.90, format_table(report)
    assert report.point_accuracy >= 0.98, format_table(report)


def _dotted(d: ImageDraw.ImageDraw, x0: int, x1: int, y: int, colour, step: int = 2, size: int = 1) -> None:
    """A dotted underline from x0 to x1 on row y: ``size``-px dots every ``step`` px (``border-bottom: dotted``)."""
    for x in range(x0, x1, step):
        d.rectangle((x, y, x + size - 1, y + size - 1), fill=colour)


def test_a_dotted_underline_is_told_from_glyph_feet_at_a_regular_pitch():
    from screenmill.annotators.ocr_ink import _dotted_rule

    font = _dejavu(15)
    for text, step, size in (("Basic Concepts", 2, 1), ("Working with Message Catalogs", 6, 3)):
        im = Image.new("RGB", (400, 24), (255, 255, 255))
        d = ImageDraw.Draw(im)
        x0, _y0, x1, y1 = d.textbbox((4, 2), text, font=font)
        d.text((4, 2), text, font=font, fill=(0, 0, 0))
        _dotted(d, x0, x1, min(23 - size, y1 + 1), (0, 0, 0), step, size)
        mask = _dotted_rule(np.asarray(im)[:, : x1 + 4], 60)
        assert mask.any() and np.flatnonzero(mask.any(axis=1)).min() > y1 - 2, text
    # glyph stems at a regular pitch ("mmmm" at its baseline), a solid underline: no dotted rule
    for text, solid in (("mmmmmmmmmmmmmmmm", False), ("hosted on GitHub", True)):
        im = Image.new("RGB", (400, 24), (255, 255, 255))
        d = ImageDraw.Draw(im)
        x0, _y0, x1, y1 = d.textbbox((4, 2), text, font=font)
        d.text((4, 2), text, font=font, fill=(0, 0, 0))
        if solid:
            d.line((x0, y1 + 1, x1, y1 + 1), fill=(0, 0, 0), width=1)
        assert not _dotted_rule(np.asarray(im)[:, : x1 + 4], 60).any(), text


def test_a_link_with_a_dotted_underline_reads_without_full_stops(annotator):
    """Sphinx's Pallets and Babel themes underline links with dots; read with the line, the dots come out as full
    stops between the words ("Basic.Concepts...Creating..a"). They are painted over before the line is read."""
    font = _dejavu(15)
    im = Image.new("RGB", (500, 40), (255, 255, 255))
    d = ImageDraw.Draw(im)
    text = "Basic Concepts - Creating a Command"
    x0, _y0, x1, _y1 = d.textbbox((20, 10), text, font=font)
    d.text((20, 10), text, font=font, fill=(0, 70, 140))
    _dotted(d, x0, x1, 10 + font.getmetrics()[0] + 1, (0, 70, 140))  # a row under the baseline, as a browser sets it
    read = " ".join(e.text for e in annotator.annotate(np.asarray(im)))
    assert "." not in read and read.replace(" ", "").casefold() == text.replace(" ", "").casefold(), read


def _stems(values: list[int], stems: int, height: int = 12) -> np.ndarray:
    """A word of ``stems`` vertical strokes, each the grey ``values`` across its columns, one white column apart, on a
    line twice its height (the page shows above and below)."""
    cols = [v for _ in range(stems) for v in [*values, 255]]
    word = np.repeat(np.array(cols, dtype=np.uint8)[None, :, None], height, axis=0).repeat(3, axis=2)
    return np.pad(word, ((height // 2, height // 2), (0, 0), (0, 0)), constant_values=255)


def test_a_thin_words_paler_edges_are_no_colour_of_its_own_but_a_grey_word_is():
    """The colour split compares words by their usual glyph colour and by their cores' (``core_share``): a short
    word of thin glyphs, set off the pixel grid (a black core column between two wide grey edges), reads paler than
    the black prose beside it by the usual colour alone, but it is black ("particular column" | "in" | "which"); a
    word set in grey is another colour by both and splits."""
    gap = np.full((24, 6, 3), 255, dtype=np.uint8)

    def pieces(right: np.ndarray) -> list[tuple[int, int]]:
        left = _stems([0, 0], 5)
        crop = np.concatenate([gap, left, gap, right, gap], axis=1)
        runs = _runs(crop.min(axis=(0, 2)) < 250, 0)
        c = 2 * gap.shape[1] + left.shape[1]  # the right word's first column
        words = [(runs[0][0], max(e for s, e in runs if s < c)), (c, runs[-1][1])]
        flat = np.zeros(crop.shape[1], dtype=bool)
        split = OcrAnnotator(OcrConfig())._color_split(crop, words, words[0][0], words[1][1], runs, flat, flat)
        return [(p.x0, p.x1) for p in split]

    thin = _stems([80, 10, 80], 3)  # 0.6-share colour 80 (138 from black in RGB), core 10
    assert len(pieces(thin)) == 1
    assert len(pieces(_stems([110, 110, 110], 3))) == 2  # grey ink: another colour however it is measured


def test_other_ink_between_tells_the_background_of_large_bold_type_from_its_top_and_bottom_rows():
    """In the central band of a large bold title the glyphs cover over half the pixels; the blank gap between two of
    its words ("Reference" | "Manual") is the page, not ink of another colour, so the words may join."""
    im = Image.new("RGB", (700, 120), (255, 255, 255))
    d = ImageDraw.Draw(im)
    for x0 in (20, 380):  # two words of solid black blocks, 80 % of their band inked
        for k in range(6):
            d.rectangle((x0 + 45 * k, 20, x0 + 45 * k + 38, 100), fill=(0, 0, 0))
    a, b = (14.0, 10.0, 300.0, 110.0), (374.0, 10.0, 660.0, 110.0)
    assert not other_ink_between(np.asarray(im), a, b)
    d.rectangle((330, 40, 345, 80), fill=(200, 0, 0))  # a red separator between them is other ink
    assert other_ink_between(np.asarray(im), a, b)


def test_mark_after_tells_the_proses_comma_after_a_link_from_the_links_own():
    """A black comma after a blue word set in narrow monospace glyphs is the prose's (it ends the link); a blue comma
    after it, a black comma after black words, or no mark at all is not."""
    mono = _dejavu_mono(17)
    black, blue = (34, 34, 34), (40, 110, 175)

    def ends_in_mark(word_colour, mark_colour, mark=",") -> bool:
        im = Image.new("RGB", (200, 40), (255, 255, 255))
        d = ImageDraw.Draw(im)
        d.text((10, 10), "maps:next/1", font=mono, fill=word_colour)
        x = 10 + d.textlength("maps:next/1", font=mono)
        d.text((x, 10), mark, font=mono, fill=mark_colour)
        x1 = x + d.textlength(mark, font=mono)
        return mark_after(np.asarray(im), (6.0, 8.0, x1 + 2, 32.0), OcrConfig())

    assert ends_in_mark(blue, black)
    assert not ends_in_mark(blue, blue)
    assert not ends_in_mark(black, black)
    assert not ends_in_mark(blue, blue, mark="")
    blank = np.full((40, 200, 3), 255, dtype=np.uint8)  # boxes too small or blank to tell: no mark, no error
    assert not mark_after(blank, (5.0, 5.0, 6.0, 6.0), OcrConfig())
    assert not mark_after(blank, (0.0, 0.0, 100.0, 30.0), OcrConfig())


DEJAVU_MONO = DEJAVU.with_name("DejaVuSansMono.ttf")


def test_a_monospace_line_of_code_is_one_element_where_proportional_prose_is_not_taken_for_one(annotator):
    """In a monospace font every character is a cell and a word space a whole one, so a synopsis line of code
    ("[ ORDER BY expression [ ASC | DESC ] ...") has word gaps the gap split would cut at, and " | " and brackets the
    separator split would cut at: a line whose glyph centres sit on one pitch's grid (``_monospace_pitch``) splits
    only at a run of blank cells, and its pieces keep their separators. Proportional prose has no such grid."""
    if not DEJAVU_MONO.is_file():
        pytest.skip(f"needs {DEJAVU_MONO} (Debian's fonts-dejavu-core)")
    line = "[ ORDER BY expression [ ASC | DESC | USING operator ] [ NULLS { FIRST | LAST } ]"
    for size in (13, 15, 18):
        im = Image.new("RGB", (1400, 60), (255, 255, 255))
        ImageDraw.Draw(im).text((20, 20), line, font=ImageFont.truetype(str(DEJAVU_MONO), size), fill=(0, 0, 0))
        texts = [e.text for e in annotator.annotate(np.asarray(im))]
        assert len(texts) == 1 and "ORDER" in texts[0] and "LAST" in texts[0], (size, texts)
    d = ImageDraw.Draw(im := Image.new("RGB", (1400, 60), (255, 255, 255)))
    prose = "The datatype of a value is associated with the value itself, not its container."
    d.text((20, 20), prose, font=_dejavu(15), fill=(0, 0, 0))
    ink = np.asarray(im).min(axis=(0, 2)) < 200
    runs = _runs(ink, 0)
    assert len(runs) > 20 and _monospace_pitch(runs, 80, runs[-1][1] - runs[0][0]) is None


def test_beside_a_lone_narrow_glyph_only_hues_split():
    """A lone glyph narrower than ``punctuation_width`` line heights ("|" set off the pixel grid: two half-covered
    grey columns, no pixel of the black ink) has no colour to compare but its hue: "FIRST | LAST" in black stays
    one piece, the black "*" between two blue links ("GString *" | "g_string_new") still splits them."""
    gap = np.full((24, 6, 3), 255, dtype=np.uint8)

    def coloured(word: np.ndarray, rgb: tuple[int, int, int]) -> np.ndarray:
        ink = (255 - word.astype(np.int32)) / 255.0  # 1 where the stroke covers the pixel whole
        return np.clip(255 - ink * (255 - np.array(rgb)), 0, 255).astype(np.uint8)

    def pieces(*parts: np.ndarray) -> int:
        crop = np.concatenate([gap, *[x for p in parts for x in (p, gap)]], axis=1)
        runs = _runs(crop.min(axis=(0, 2)) < 250, 0)
        words, x = [], gap.shape[1]
        for p in parts:
            words.append((x, x + p.shape[1] - 1))  # each part a word: its ink up to its trailing white column
            x += p.shape[1] + gap.shape[1]
        flat = np.zeros(crop.shape[1], dtype=bool)
        return len(OcrAnnotator(OcrConfig())._color_split(crop, words, words[0][0], words[-1][1], runs, flat, flat))

    black, bar = _stems([0, 0], 5), _stems([130, 130], 1)
    assert pieces(black, bar, black) == 1
    blue = coloured(black, (20, 60, 220))
    assert pieces(blue, _stems([0, 0], 1), blue) == 3


def test_zeros_and_ones_of_a_number_read_as_letters_are_made_digits():
    """The recogniser reads some zeros of a number as "o" ("7.1o How do I", "2oo8.", "over 1o0 functions"); a token of
    digits, dots and o's only is a number. Words ("go to 10 or no"), a token with other letters ("v1o"), o's with no
    digit ("o.O") and an octal literal ("0o755") keep their letters."""
    assert _clean("7.1o How do I  convert") == "7.10 How do I convert"
    assert _clean("published in 2oo8. The 2.1O FAQ lists over 1o0 functions") == (
        "published in 2008. The 2.10 FAQ lists over 100 functions"
    )
    assert _clean("jam-transitions: [\\o01-n]") == "jam-transitions: [\\001-n]"
    for kept in ("go to 10 or no", "v1o version", "o.O", "os.chmod(path, 0o755)", "x1o", "1ox"):
        assert _clean(kept) == kept, kept
    # ones read as "l" or "I" in a dotted number: a section's, a version's, a literal's
    assert _clean("3.2.l6 The virtdomain Statement") == "3.2.16 The virtdomain Statement"
    assert _clean("version 0.1l: see 2.l3, format(l.2345)") == "version 0.11: see 2.13, format(1.2345)"
    for kept in ("l1 = l2 + 1", "I. Introduction", "Il y a", "x.l2", "3.2.16 l"):
        assert _clean(kept) == kept, kept


def test_a_console_prompt_read_as_letters_is_made_the_prompt():
    """Python's console prompt ">>>" in a doctest is often read "vvv" (or "VVV"): at a text's start, alone or before
    the code, it is the prompt, so the label says what the screen shows (">>> @define", not "VVV @define"). Elsewhere,
    or inside a word, the letters stay."""
    assert _clean("vvv from datetime import date") == ">>> from datetime import date"
    assert _clean("VVV") == ">>>" and _clean("vvV @define") == ">>> @define"
    for kept in ("vvvv", "a vvv b", "VVVx = 1"):
        assert _clean(kept) == kept, kept
    # the prompt read alone is kept for the grouping to join to its code (alone it is glyph noise: no label); other
    # marks alone are not
    assert _keep(">>>", 0.95, 0.5) and not _keep(">>>", 0.3, 0.5)
    assert not _keep(">>", 0.95, 0.5) and not _keep("»", 0.95, 0.5)


def test_a_full_stop_read_after_a_piece_that_ends_with_a_letter_is_dropped():
    """A link wrapped in a texinfo node header ends its first line with "Reporting"; its underline ends a little past
    the "g", and the recogniser read "Reporting." (so the line's first half looked like a sentence's end). Where a
    piece's last run of ink is a letter's, wide and as high at its end as a letter (``_Piece.letter_end``), a "." read
    after its last letter is dropped (``_no_stop``). A real full stop, set apart or close to a "y", and one below the
    central band at a small size, is its own low ink: it stays."""
    for size in (16, 28, 40):
        font = _dejavu(size)
        for text, letter_end in (("see Reporting", True), ("It is stored.", False), ("values x, y.", False)):
            im = Image.new("RGB", (40 * size, 3 * size), "white")
            draw = ImageDraw.Draw(im)
            draw.text((10, size // 2), text, font=font, fill=(0, 0, 238))
            if letter_end:  # a link's underline, ending just past the "g"
                y = size // 2 + font.getmetrics()[0] + max(1, size // 12)
                draw.line((10, y, 14 + font.getlength(text), y), fill=(0, 0, 238), width=max(1, size // 14))
            pixels = np.asarray(im)
            rows = np.flatnonzero((pixels.min(axis=-1) < 200).any(axis=1))
            crop = np.ascontiguousarray(pixels[rows[0] - 2 : rows[-1] + 3])
            read = text.rstrip(".") + "."  # as the recogniser reads the line
            pieces = OcrAnnotator(OcrConfig())._split_line(crop, read)
            assert pieces is not None and pieces[-1].letter_end is letter_end, (size, text)
            assert _no_stop(text + ".", pieces[-1]) == text + ("" if letter_end else ".")
    assert _no_stop("Reporting.", _Piece(0, 10, letter_end=True)) == "Reporting"
    assert _no_stop("version 2.", _Piece(0, 10, letter_end=True)) == "version 2."  # a number's stop is its own
    assert _no_stop("Reporting.", _Piece(0, 10)) == "Reporting."


def test_cjk_marks_read_for_ascii_ones_in_latin_text_are_made_ascii():
    """The recogniser reads "|" as the Han stroke "丨" and brackets, commas and parentheses as CJK or fullwidth marks;
    in Latin text they are made ASCII, and Chinese text keeps its own punctuation."""
    assert _ascii_marks("[LIMIT { count丨ALL }］") == "[LIMIT { count|ALL }]"
    assert _ascii_marks(">>> ＳC SomeClass(1， [1, 2]）") == ">>> SC SomeClass(1, [1, 2])"
    assert _ascii_marks("【Contents】") == "[Contents]"
    assert _ascii_marks("Python 》 3.11.2 Documentation") == "Python » 3.11.2 Documentation"
    assert _ascii_marks("设置（高级）") == "设置（高级）" and _ascii_marks("（）") == "（）"


def test_a_marker_or_separator_alone_at_a_pieces_end_is_no_part_of_it(annotator):
    """A list marker, a dash or a breadcrumb's separator that the colour split left on a piece ("- decompresses files
    to stdout", "› rrule", "Docs /") is dropped from its text, and its box starts after the marker's ink; "- -catalogs"
    ("--catalogs" read with a space) and a price's unit ("/ month") keep theirs."""
    font = _dejavu(18)
    for text, want in [("- decompresses files", "decompresses files"), ("› rrule", "rrule"), ("Docs /", "Docs")]:
        im = Image.new("RGB", (400, 40), (255, 255, 255))
        d = ImageDraw.Draw(im)
        d.text((10, 8), text, font=font, fill=(0, 0, 0))
        x0, _, x1, _ = d.textbbox((10, 8), text, font=font)
        line = np.asarray(im)
        (got,) = annotator._separator_split(line, _Piece(x0 - 2, x1 + 2), text, 0.9)
        assert got.text == want, (text, got)
        start, end = d.textbbox((10, 8), text, font=font)[0], d.textbbox((10, 8), text, font=font)[2]
        if text.startswith(("-", "›")):
            assert got.x0 > start + d.textlength(text[0], font=font), (text, got)
        else:
            assert got.x1 < end - d.textlength(" /", font=font) + 2, (text, got)
    for text in ("- -catalogs", "/ month"):
        assert [q.text for q in annotator._separator_split(line, _Piece(0, 300), text, 0.9)] == [text]


def _drawn_row(text: str, width: int):
    """``text`` drawn black in 18 px DejaVu Sans at (10, 8) on a white strip ``width`` px wide, 40 high: the strip's
    pixels, its drawing context, the font and the text's ink span (x0, x1)."""
    font = _dejavu(18)
    im = Image.new("RGB", (width, 40), (255, 255, 255))
    d = ImageDraw.Draw(im)
    d.text((10, 8), text, font=font, fill=(0, 0, 0))
    x0, _t, x1, _b = d.textbbox((10, 8), text, font=font)
    return np.asarray(im), d, font, (x0, x1)


def test_a_row_read_with_a_bar_glued_to_a_word_still_puts_each_link_on_its_own_words(annotator):
    """Sphinx's "Go | previous | next | modules | index" read as "GoI previous | ...": one token fewer than the ink has
    words, so cutting the ink at its widest gaps shifted every part, down to "modules" on the lone bar before it. A
    part whose width does not fit its characters sends the piece to a placement by characters, snapped to words."""
    row = "Go | previous | next | modules | index"
    line, d, font, (x0, x1) = _drawn_row(row, 700)
    boxes = {}
    for word in ("previous", "next", "modules", "index"):
        start = row.index(word)
        boxes[word] = (
            10 + d.textlength(row[:start], font=font),
            8,
            10 + d.textlength(row[: start + len(word)], font=font),
            32,
        )
    for read in (row, "GoI previous | next | modules | index"):
        pieces = {q.text: q for q in annotator._separator_split(line, _Piece(int(x0) - 2, int(x1) + 2), read, 0.9)}
        assert set(pieces) >= {"next", "modules", "index"}, (read, pieces)
        for word in ("next", "modules", "index"):
            q = pieces[word]
            assert _inside(((q.x0 + q.x1) / 2, 20), boxes[word]), (read, word, q, boxes[word])
            assert q.x1 - q.x0 >= 0.6 * (boxes[word][2] - boxes[word][0]), (read, word, q, boxes[word])
    assert _fits(40, 4, 10.0) and not _fits(2, 7, 10.0) and not _fits(90, 4, 10.0)
    # a short part between two words' edges would snap to the next word's start and the last word's end: it keeps its
    # own share of the ink instead, and no part is lost
    placed = _by_characters("aaaa | b | cccc", ["aaaa", "b", "cccc"], [(0, 45), (55, 100)], 20)
    assert [q.text for q in placed] == ["aaaa", "b", "cccc"]
    assert all(q.x1 > q.x0 for q in placed) and 45 <= placed[1].x0 < placed[1].x1 <= 55, placed


def test_a_row_whose_ink_is_one_run_places_its_parts_on_the_ink_not_on_the_detectors_box(annotator):
    """A row struck through ("Contents | Index | About" of deprecated names, ``<del>``) is one run of ink, fewer runs
    than the row has tokens, so no token has a word of its own to fall on. Each part goes to its characters' share of
    the ink's span (no word edge near enough to snap to), not of the detector's box, which may reach far past the ink
    at one end."""
    row = "Contents | Index | About"
    line, d, font, (x0, x1) = _drawn_row(row, 700)
    line = line.copy()
    line[19:21, x0:x1] = 0  # struck through: one run of ink from the first glyph to the last
    for word in ("Contents", "Index", "About"):
        start = row.index(word)
        left, right = d.textlength(row[:start], font=font), d.textlength(row[: start + len(word)], font=font)
        box = (10 + left, 8, 10 + right, 32)
        pieces = {q.text: q for q in annotator._separator_split(line, _Piece(max(0, x0 - 10), x1 + 150), row, 0.9)}
        q = pieces[word]
        assert _inside(((q.x0 + q.x1) / 2, 20), box), (word, q, box)


def test_a_breadcrumb_splits_at_its_guillemets_and_at_a_guillemet_read_as_a_spaced_angle_bracket(annotator):
    """A breadcrumb's "»" separate its links, and so does a spaced ">" in a text that holds a "»" (the recogniser
    reads some of them as ">"); a spaced ">" in any other text ("if x > 0 then stop") splits nothing."""
    text = "3.11.2 Documentation » The Python Tutorial > 4. More Control Flow Tools"
    line, _d, font, (x0, x1) = _drawn_row(text, 900)
    parts = [q.text for q in annotator._separator_split(line, _Piece(x0 - 2, x1 + 2), text, 0.9)]
    assert parts == ["3.11.2 Documentation", "The Python Tutorial", "4. More Control Flow Tools"], parts
    prose = "if x > 0 then stop"
    assert [q.text for q in annotator._separator_split(line, _Piece(x0 - 2, x1 + 2), prose, 0.9)] == [prose]
    # read and grouped: "3.11.2 Documentation" reads like a section number and its title's start, but the grey "»"
    # left between the two grey links keeps them apart (glyph_between)
    im = Image.new("RGB", (900, 40), (255, 255, 255))
    crumb = "3.11.2 Documentation » The Python Standard Library"
    ImageDraw.Draw(im).text((10, 8), crumb, font=font, fill=(60, 60, 60))
    texts = [e.text for e in annotator.annotate(np.asarray(im))]
    assert "3.11.2 Documentation" in texts and "The Python Standard Library" in texts, texts


def test_glyph_between_finds_a_spaced_separator_of_the_rows_own_colour():
    """A breadcrumb's grey "»" between two grey links stands alone in a gap of two word spaces and the mark; a blank
    gap as wide, or a narrow word space, holds none."""
    font = _dejavu(18)
    grey = (60, 60, 60)
    im = Image.new("RGB", (700, 40), (255, 255, 255))
    d = ImageDraw.Draw(im)
    left, sep, right = "3.11.2 Documentation", " » ", "The Python Tutorial"
    d.text((10, 8), left + sep + right, font=font, fill=grey)
    _, top, a1, bottom = d.textbbox((10, 8), left, font=font)
    b0 = 10 + d.textlength(left + sep, font=font)
    b1 = d.textbbox((10, 8), left + sep + right, font=font)[2]
    a, b = (10.0, float(top), float(a1), float(bottom)), (float(b0), float(top), float(b1), float(bottom))
    image = np.asarray(im)
    assert glyph_between(image, a, b, OcrConfig())
    blank = np.asarray(im).copy()
    blank[:, int(a1) + 1 : int(b0) - 1] = 255  # the mark painted over: a blank gap
    assert not glyph_between(blank, a, b, OcrConfig())
    space = d.textlength("Documentation ", font=font) - d.textlength("Documentation", font=font)
    word = (10.0, float(top), 10 + d.textlength("3.11.2", font=font), float(bottom))
    after = (word[2] + space, float(top), float(a1), float(bottom))
    assert not glyph_between(image, word, after, OcrConfig())  # a word space is too narrow for a separator
    assert not glyph_between(image, a, (b[0], 200.0, b[2], 220.0), OcrConfig())  # not on one row: nothing between
    # Sphinx's "next | modules" in 14 px type, in the detector's 21 px boxes: the bar's gap is 0.7-0.8 box heights
    im = Image.new("RGB", (300, 40), (255, 255, 255))
    d = ImageDraw.Draw(im)
    small = _dejavu(14)
    d.text((10, 12), "next | modules", font=small, fill=grey)
    ink = (np.asarray(im) < 200).any(axis=(0, 2))
    a1 = d.textbbox((10, 12), "next", font=small)[2] - 1
    a1 = int(np.flatnonzero(ink[:a1])[-1]) + 1  # where "next"'s ink ends, and "modules"'s starts
    b0 = int(np.flatnonzero(ink[: int(d.textbbox((10, 12), "next | m", font=small)[2])])[-1])
    b0 = int(np.flatnonzero(~ink[:b0])[-1]) + 1
    assert 0.7 <= (b0 - a1) / 21 < 0.8, (a1, b0)
    assert glyph_between(np.asarray(im), (10.0, 10.0, float(a1), 31.0), (float(b0), 10.0, 120.0, 31.0), OcrConfig())


def test_an_underscore_below_the_band_is_ink_that_joins_an_identifier():
    """An underscore lies below the central band the gap split reads, so "idn2_to_ascii_4i" read as "idn2 to ascii"
    | "4i" unless its short low rule counts as ink (``_underscores``); a gap with nothing low in it, a low mark
    touching one word only (a descender's tail) and a link's long underline do not."""
    h = 20
    crop = np.full((h, 120, 3), 255, dtype=np.uint8)
    crop[4:15, 10:30] = 0  # a word in the band
    crop[4:15, 42:62] = 0  # the next word, an underscore's width after it
    crop[17:19, 30:42] = 0  # the underscore, low, between them
    crop[4:15, 80:100] = 0  # a third word, a word space after the second, nothing low between
    crop[17:19, 62:66] = 0  # a descender's tail into that space, touching the second word only
    ink = _ink_columns(crop, 32)
    under = np.zeros(crop.shape[1], dtype=bool)
    marks = _underscores(crop, 32, under, ink)
    assert marks[30:42].all() and not marks[62:80].any()
    assert not _underscores(crop, 32, np.ones(crop.shape[1], dtype=bool), ink).any()  # under a link's underline
    long = crop.copy()
    long[4:15, 42:62] = 255
    long[4:15, 70:90] = 0
    long[17:19, 30:70] = 0  # 40 px: two line heights, an underline's length, not an underscore
    assert not _underscores(long, 32, under, _ink_columns(long, 32)).any()
    pieces = OcrAnnotator(OcrConfig())._split_line(crop[:, :70], "abc_def")  # the gap split keeps the identifier whole
    assert pieces is not None and len(pieces) == 1


@pytest.mark.skipif(not DEJAVU.is_file(), reason="needs DejaVu fonts (fonts-dejavu-core)")
def test_a_stem_that_fills_a_tight_band_is_ink_but_a_lone_bar_is_not():
    """A detector box drawn tight to bold capitals leaves no background above or below their stems, so a stem has no
    intensity range in the central band: "DESCRIPTION" read as "DESCRI" | "P" | "ION" and "OPTIONS" as "OP" | "IONS".
    Such a solid column is ink beside a glyph's ink or under a "T"'s bar (``_ink_columns``); a lone bar between two
    words, which also fills the band, stays a gap."""
    bold = ImageFont.truetype(str(DEJAVU.with_name("DejaVuSans-Bold.ttf")), 24)
    for word in ("DESCRIPTION", "OPTIONS", "TITLE"):
        im = Image.new("RGB", (260, 60), "white")
        ImageDraw.Draw(im).text((10, 10), word, font=bold, fill=(0, 0, 0))
        pixels = np.asarray(im)
        rows = np.flatnonzero((pixels.min(axis=-1) < 128).any(axis=1))
        crop = np.ascontiguousarray(pixels[rows[0] : rows[-1] + 1])  # tight to the caps
        pieces = OcrAnnotator(OcrConfig())._split_line(crop, word)
        assert pieces is not None and len(pieces) == 1, (word, [(p.x0, p.x1) for p in pieces or []])
    # brackets reach past the letters: "][" between two texinfo links stays a gap
    font = _dejavu(28)
    im = Image.new("RGB", (320, 60), "white")
    ImageDraw.Draw(im).text((8, 10), "[Contents][Index]", font=font, fill=(0, 0, 238))
    pixels = np.asarray(im)
    rows = np.flatnonzero((pixels.min(axis=-1) < 128).any(axis=1))
    crop = np.ascontiguousarray(pixels[rows[0] : rows[-1] + 1])  # tight to the brackets, which fill the band
    ink = _ink_columns(crop, 32)
    close = 8 + font.getlength("[Contents")
    solid = (np.abs(crop.astype(int) - 255).max(axis=-1) >= 32).all(axis=0)  # whole height
    stems = [x for x in range(int(close), int(close + font.getlength("]["))) if solid[x]]
    assert len(stems) >= 2 and not ink[stems].any()
    h = 20
    crop = np.full((h, 140, 3), 255, dtype=np.uint8)
    crop[:, 10:40] = 0  # a word's ink fills the band and beyond, with range given by its counter
    crop[8:12, 15:35] = 255
    crop[:, 60:62] = 0  # a bar 1 line height off both words, filling the crop
    crop[:, 82:112] = 0
    crop[8:12, 87:107] = 255
    ink = _ink_columns(crop, 32)
    assert ink[10:40].all() and ink[82:112].all() and not ink[40:82].any()


def test_a_sans_serif_i_standing_alone_is_a_letter_and_a_bar_between_words_a_separator():
    """A sans-serif "I" is a bare stem with no range in the central band; set alone between word spaces, it stood
    off every other glyph's ink and was taken for a bar, so "7.10 How do I convert factors to numeric?" read as "7.10
    How do" | "convert factors to" with the "I" lost. A stem as tall as a capital that ends on the line's baseline is
    a letter (``_ink_columns``); a bar "|" descends below the baseline and still splits the line it stands in."""
    for size in (16, 28, 40):
        font = _dejavu(size)
        for text, pieces in (("How do I convert factors", 1), ("Home | About us", 2)):
            im = Image.new("RGB", (40 * size, 3 * size), "white")
            ImageDraw.Draw(im).text((10, size // 2), text, font=font, fill=(0, 0, 238))
            pixels = np.asarray(im)
            rows = np.flatnonzero((pixels.min(axis=-1) < 200).any(axis=1))
            pad = max(1, size // 8)  # a detector's box: a little margin round the ascenders and descenders
            crop = np.ascontiguousarray(pixels[rows[0] - pad : rows[-1] + 1 + pad])
            found = OcrAnnotator(OcrConfig())._split_line(crop, text)
            assert found is not None and len(found) == pieces, (size, text, [(p.x0, p.x1) for p in found or []])


@pytest.mark.skipif(not DEJAVU.is_file(), reason="needs DejaVu fonts (fonts-dejavu-core)")
def test_bold_capitals_in_a_tight_box_read_as_their_ink_not_as_the_background():
    """The detector may draw a box tight to bold capitals ("GNU" in a heading), whose ink then covers most of the
    crop: its median was the ink, so the text read white and never joined "Coding" beside it. An underlined link's
    crop, whose bottom edge is the underline, still reads as the link's colour."""
    bold = ImageFont.truetype(str(DEJAVU.with_name("DejaVuSans-Bold.ttf")), 72)
    im = Image.new("RGB", (400, 160), "white")
    ImageDraw.Draw(im).text((20, 20), "GNU", font=bold, fill=(0, 0, 0))
    pixels = np.asarray(im)
    rows = np.flatnonzero((pixels.min(axis=-1) < 128).any(axis=1))
    cols = np.flatnonzero((pixels.min(axis=-1) < 128).any(axis=0))
    box = (float(cols[0]), float(rows[0]), float(cols[-1] + 1), float(rows[-1] + 1))
    crop = pixels[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
    assert (crop.min(axis=-1) < 128).mean() > 0.5  # the ink is most of the crop
    colours = text_colours(pixels, box, OcrConfig())
    assert colours is not None and colours.max() < 60, colours
    blue = (0, 0, 238)
    im = Image.new("RGB", (400, 80), "white")
    d = ImageDraw.Draw(im)
    d.text((20, 20), "Introduction", font=_dejavu(24), fill=blue)
    d.line((20, 50, 180, 50), fill=blue, width=2)
    colours = text_colours(np.asarray(im), (20.0, 20.0, 181.0, 52.0), OcrConfig())
    assert colours is not None and np.abs(colours - np.array(blue)).max() < 60, colours


@pytest.mark.skipif(not DEJAVU.is_file(), reason="needs DejaVu fonts (fonts-dejavu-core)")
def test_an_underscore_under_a_box_drawn_tight_to_capitals_still_joins_the_identifier():
    """The detector's box of "GPG_ERR_E..." in monospace capitals ends above its underscores, which then cut it at
    every one ("GPG" | "ERR" | "E..."); the free rows under the box (``below``) hold them. A rule running under a
    table's whole row there is no underscore, and the rows another line's box covers are not searched (its ascenders
    under a word space would glue two words)."""
    mono = ImageFont.truetype(str(DEJAVU.with_name("DejaVuSansMono.ttf")), 30)
    annotator = OcrAnnotator(OcrConfig())
    for word in ("GPG_ERR_E...", "GCRY_MD_FLAG_HMAC", "FFI_BAD_TYPEDEF"):
        im = Image.new("RGB", (520, 70), "white")
        ImageDraw.Draw(im).text((10, 8), word, font=mono, fill=(0, 0, 0))
        pixels = np.asarray(im)
        caps = np.flatnonzero((pixels[:, :40].min(axis=-1) < 128).any(axis=1))  # the "G" or "F" alone: the caps' rows
        y0, y1 = int(caps[0]) - 2, int(caps[-1]) + 3
        crop, below = pixels[y0:y1], pixels[y1 : y1 + 9]
        assert (below.min(axis=-1) < 128).any(), "the underscores lie under the box"
        read = word.replace("_", " ")  # the recogniser sees no underscore either
        if word == "GPG_ERR_E...":
            assert len(annotator._split_line(crop, read) or []) == 3
        assert len(annotator._split_line(crop, read, below) or []) == 1, word
    im = Image.new("RGB", (520, 70), "white")
    d = ImageDraw.Draw(im)
    d.text((10, 8), "NAME", font=mono, fill=(0, 0, 0))
    d.text((108, 8), "VALUE", font=mono, fill=(0, 0, 0))  # a cell gap no longer than an underscore
    d.line((0, y1 + 4, 519, y1 + 4), fill=(0, 0, 0), width=2)  # the table's rule under the row
    pixels = np.asarray(im)
    assert len(annotator._split_line(pixels[y0:y1], "NAME VALUE", pixels[y1 : y1 + 9]) or []) == 2
    # the next line's box starts where its glyphs do: no row of it is free under the line above
    assert _free_rows_below([(10, 5, 300, 40), (10, 44, 200, 80), (400, 41, 500, 60)], 100) == [44, 100, 100]
    assert _free_rows_below([], 100) == []  # no boxes: nothing to look under
    # no free row under the box (the next line's box starts at once, or the screenshot ends): the crop alone, as before
    gpg = Image.new("RGB", (520, 70), "white")
    ImageDraw.Draw(gpg).text((10, 8), "GPG_ERR_E...", font=mono, fill=(0, 0, 0))
    crop = np.asarray(gpg)[y0:y1]
    none = crop[crop.shape[0] :]
    assert none.shape[0] == 0
    assert annotator._split_line(crop, "GPG ERR E...", none) == annotator._split_line(crop, "GPG ERR E...")


def test_a_dotted_underline_makes_its_text_underlined_as_a_solid_one_does():
    """ "translation" | "project": Sphinx's links wrap with their dotted underline, which :func:`underlined` reads as
    running from its first dot to its last, so rule 7 knows the two lines for one link's. Bare text is not
    underlined; a dotted rule under a third of the text leaves it undecided."""
    from screenmill.annotators.ocr_ink import underlined

    font = _dejavu(15)
    config = OcrConfig()
    for reach, want in ((1.0, True), (0.0, False), (0.4, None)):
        im = Image.new("RGB", (400, 24), (255, 255, 255))
        d = ImageDraw.Draw(im)
        x0, y0, x1, y1 = d.textbbox((4, 2), "translation project", font=font)
        d.text((4, 2), "translation project", font=font, fill=(187, 0, 0))
        if reach:
            _dotted(d, x0, x0 + int(reach * (x1 - x0)), min(22, y1 + 1), (187, 0, 0), 3, 1)
        assert underlined(np.asarray(im), (x0 - 1, 0, x1 + 1, 24), config) is want, reach


def test_a_dotted_underline_starting_after_a_label_of_its_colour_splits_the_label_from_the_link(annotator):
    """Sphinx's Alabaster side bar: "Previous: <a>Welcome to Click</a>", label and link one grey, the link underlined
    with dots. The dots are painted over before the line is read; where they ran is still the link's underline, so
    the line splits where it starts. Without the dots the line is one text."""
    font = _dejavu(20)  # at 15 px the detector's box leaves the dots out
    for dots in (True, False):
        im = Image.new("RGB", (500, 40), (255, 255, 255))
        d = ImageDraw.Draw(im)
        d.text((20, 10), "Previous: ", font=font, fill=(60, 60, 60))
        x0 = int(d.textlength("Previous: ", font=font)) + 20
        _x, _y, x1, _y1 = d.textbbox((x0, 10), "Welcome to Click", font=font)
        d.text((x0, 10), "Welcome to Click", font=font, fill=(60, 60, 60))
        if dots:
            _dotted(d, x0, x1, 10 + font.getmetrics()[0] + 1, (60, 60, 60))
        texts = [e.text for e in annotator.annotate(np.asarray(im))]
        if dots:
            assert "Welcome to Click" in texts and "Previous:" in texts, texts
        else:
            assert texts == ["Previous: Welcome to Click"], texts


def _skip_ink_underline(im: Image.Image, x0: int, x1: int, y: int, colour, skip: int = 1, rows: int = 1) -> None:
    """An underline ``rows`` thick on row ``y`` on, from x0 to x1, that skips the glyphs' ink crossing it by ``skip``
    pixels each side, as a browser draws it under descenders (``text-decoration-skip-ink``)."""
    px = np.asarray(im).copy()
    glyph = (px[y - 1 : y + rows + 1, :, :] < 200).any(axis=(0, 2))
    for x in range(x0, x1):
        if not glyph[max(0, x - skip) : x + skip + 1].any():
            px[y : y + rows, x] = colour
    im.paste(Image.fromarray(px))


def _underlined_word(
    text: str, font, lined: bool, size: tuple[int, int], top: int, colour, drop: int, pad, skip: int = 1, rows: int = 1
) -> bool | None:
    """``underlined`` of ``text`` drawn at (10, ``top``) on a white image of ``size``, with (``lined``) an underline
    ``drop`` px under its ascent that skips its descenders (:func:`_skip_ink_underline`), its box the text's padded
    by ``pad`` (x, y) and reaching the underline."""
    from screenmill.annotators.ocr_ink import underlined

    im = Image.new("RGB", size, (255, 255, 255))
    d = ImageDraw.Draw(im)
    x0, y0, x1, y1 = d.textbbox((10, top), text, font=font)
    d.text((10, top), text, font=font, fill=colour)
    base = top + font.getmetrics()[0] + drop
    if lined:
        _skip_ink_underline(im, x0, x1, base, colour, skip=skip, rows=rows)
    return underlined(np.asarray(im), (x0 - pad[0], y0 - pad[1], x1 + pad[0], max(y1, base) + pad[1]), OcrConfig())


def test_an_underline_broken_by_descenders_still_underlines_its_text():
    """ "https://git-" | "scm.com/downloads": the underline under a short link skips its descenders ("p", "g"), which
    leaves runs shorter than the 1.5 line heights a long run needs; a thin row under nearly all of the text, the rows
    above it not, is its underline. A short word too narrow for any run ("In") is told by that row as well; bare text
    is not underlined."""
    font = _dejavu(17)
    for text in ("https://git-", "In"):
        for lined in (True, False):
            got = _underlined_word(text, font, lined, (300, 40), 8, (10, 10, 255), drop=1, pad=(1, 2))
            assert (got is True) is lined, (text, lined, got)


def test_an_underline_skipped_wide_round_a_descender_still_underlines_a_short_word():
    """ "Bugs" of a link wrapped in a texinfo header at 3x: the browser skips the underline 20 px either side of the
    "g", so the row is ink under only three quarters of the word. Columns near a descender that crosses the row (ink
    right below it) do not count against it; a row through the glyphs themselves, with ink above it, and bare text
    are still no underline."""
    font = _dejavu(48)
    for text in ("Bugs", "page", "go to the page"):
        for lined in (True, False):
            got = _underlined_word(text, font, lined, (600, 100), 10, (0, 0, 238), drop=3, pad=(2, 3), skip=12, rows=3)
            assert (got is True) is lined, (text, lined, got)


def test_underlined_cannot_tell_for_a_box_blank_too_small_or_outside_the_image():
    """A blank crop, one too low or narrow to read, and a box past the screenshot's edge answer None (cannot tell),
    never an error: the short-word path looks for ink before it looks for a row under it."""
    from screenmill.annotators.ocr_ink import underlined

    im = np.full((40, 300, 3), 255, dtype=np.uint8)
    config = OcrConfig()
    for box in ((10, 5, 25, 30), (10, 5, 200, 30), (10, 5, 11, 30), (10, 5, 200, 9), (400, 50, 500, 80)):
        assert underlined(im, box, config) is None, box
