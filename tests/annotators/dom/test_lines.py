"""Painted text that is no element of its own (a long paragraph, the words around an inline link, a code block of
several lines) is extracted line by line (role ``line``), so the DOM truth leaves no visible text out."""

from __future__ import annotations

from screenmill.annotators.dom.labels import dom_labels
from screenmill.annotators.dom.page import Viewport

from tests.annotators.dom.test_browser import page
from tests.annotators.test_ocr_producer import _shot

BODY = """
<p style="font:16px/1.4 sans-serif;width:600px;margin:10px">Read about <a href="#a">accessibility</a> first.</p>
<p style="font:16px/1.4 sans-serif;width:300px;margin:10px">This paragraph is long enough to wrap onto several lines
of the narrow column, and as a whole it is longer than an instruction may quote, so each line is its own text.</p>
<pre style="font:14px monospace;margin:10px">def main():
    print("hello world, this is a code block that is longer than one hundred and twenty characters in total")
    return 0</pre>
<pre style="font:14px monospace;margin:10px">./configure
make
make install</pre>
<h2 style="font:20px sans-serif;margin:10px">A short heading</h2>
<p style="font:16px sans-serif;margin:10px">Bold <b>words</b> inside one line</p>
"""


def _lines(els):
    return [e for e in els if e["role"] == "line"]


def test_text_that_is_no_element_is_extracted_line_by_line(host, tmp_path):
    got = host.render(page(tmp_path, "l.html", BODY), str(tmp_path), Viewport(800, 600), "light", 1)
    els = got.screens[0].elements
    lines = _lines(els)
    texts = [e["text"] for e in lines]
    assert texts[:2] == ["Read about", "first."]  # cut at the inline link, which is its own element
    assert any(e["role"] == "link" and e["text"] == "accessibility" for e in els)
    para = [t for t in texts[2:] if not t.startswith(("def main", "print(", "return 0", "./configure", "make"))]
    assert len(para) >= 3 and para[0].startswith("This paragraph is long") and " ".join(para).endswith("own text.")
    assert "def main():" in texts and "return 0" in texts and any(t.startswith('print("hello world') for t in texts)
    # a short code block's lines are the author's: each is a line, the block no element
    assert ["./configure", "make", "make install"] == [t for t in texts if t.startswith(("./configure", "make"))]
    assert not any(e["text"].startswith("./configure") for e in els if e["role"] != "line")
    # elements that are whole text owners are not repeated as lines
    assert "A short heading" not in texts and "Bold words inside one line" not in texts
    assert {e["text"] for e in els if e["role"] != "line"} >= {"A short heading", "Bold words inside one line"}
    for e in lines:  # one visual line each: a box no taller than a line, the click point inside it
        x0, y0, x1, y1 = e["box"]
        assert y1 - y0 < 30 and x0 <= e["point"][0] <= x1 and y0 <= e["point"][1] <= y1, e
    labels = dom_labels(_shot(800, 600), els, (800, 600), 1.0, "h", "r")
    assert {lb.instruction for lb in labels if lb.role == "line"} >= {'click "Read about"', 'click "first."'}


def test_the_space_between_highlighted_tokens_is_kept(host, tmp_path):
    # Pygments-style highlighting: each token a span, the spaces between them text nodes of their own
    body = (
        '<pre style="font:14px monospace;margin:10px"><span class="k">class</span> <span class="nc">Point</span>:\n'
        '    <span class="n">x</span><span class="p">:</span> <span class="nb">int</span></pre>'
        '<p style="font:16px/1.4 sans-serif;width:600px;margin:10px"><span>Absolute</span> <span>information</span>'
        ' <a href="#b">here</a> <span>and</span><span>there</span></p>'
    )
    got = host.render(page(tmp_path, "h.html", body), str(tmp_path), Viewport(800, 600), "light", 1)
    texts = [e["text"] for e in _lines(got.screens[0].elements)]
    assert texts == ["class Point:", "x: int", "Absolute information", "andthere"]


def test_a_line_break_the_author_put_in_makes_lines_where_a_trailing_one_does_not(host, tmp_path):
    # a manual page's option heading: a bold label, a <br>, the argument on the next line (groff's HTML)
    body = (
        '<p style="font:16px sans-serif;margin:10px"><b>Input file location:</b> <br>\nINPUTFILE ...</p>'
        '<p style="font:16px sans-serif;margin:10px">One line, then a break that ends it.<br></p>'
    )
    got = host.render(page(tmp_path, "br.html", body), str(tmp_path), Viewport(800, 600), "light", 1)
    els = got.screens[0].elements
    assert [e["text"] for e in _lines(els)] == ["Input file location:", "INPUTFILE ..."]
    assert not any(e["text"].startswith("Input file location: INPUTFILE") for e in els)
    assert any(e["role"] == "paragraph" and e["text"] == "One line, then a break that ends it." for e in els)


def test_a_line_too_long_to_quote_is_cut_where_its_text_nodes_meet(host, tmp_path):
    # one visual line of 140 characters with two inline code spans (a manual's legal notice at a desktop width)
    body = (
        '<p style="font:13px sans-serif;width:1400px;margin:10px">This program, <code>bzip2</code>, the associated '
        "library <code>libbzip2</code>, and all documentation, are copyright (C) 1996-2019 Julian Seward. All rights "
        "reserved.</p>"
    )
    got = host.render(page(tmp_path, "long.html", body), str(tmp_path), Viewport(1500, 400), "light", 1)
    texts = [e["text"] for e in _lines(got.screens[0].elements)]
    assert texts == [
        "This program,",
        "bzip2",
        ", the associated library",
        "libbzip2",
        ", and all documentation, are copyright (C) 1996-2019 Julian Seward. All rights reserved.",
    ], texts
