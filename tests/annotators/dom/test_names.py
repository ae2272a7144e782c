"""Clean names on self-made pages in a real Chromium: icon-font glyphs (CSS generated content of the Private Use
Area, and a glyph written in the text) never reach an instruction, an icon-only button is an icon without a name,
and a logo link is named by its visible text (its logo's alt kept on the element)."""

from __future__ import annotations

import datetime as dt

from screenmill.annotators.dom.extract import tidy
from screenmill.annotators.dom.labels import dom_labels
from screenmill.annotators.dom.page import Viewport
from screenmill.schemas.records import Screenshot

GIF = "data:image/gif;base64,R0lGODlhAQABAAAAACw="
PAGE = f"""<!doctype html><html><head><style>
.fa {{ font-family: "FontAwesome", sans-serif; font-style: normal }}
.fa-photo::before {{ content: "\\f03e" }} .fa-filter::before {{ content: "\\f0b0" }}
.fa-search::before {{ content: "\\f002" }} .fa-cog::after {{ content: "\\F0013" }}
</style></head><body>
<nav><a href="photos.html"><i class="fa fa-photo"></i> Photos</a>
<a href="spam.html"><span class="fa fa-filter"></span> Spam <span>12</span></a>
<a href="settings.html">Settings<i class="fa fa-cog"></i></a></nav>
<button type="button" id="bare"><i class="fa fa-search"></i></button>
<button type="button" aria-label="Find"><i class="fa fa-search"></i></button>
<header><a href="index.html"><img alt="Acme Logo" src="{GIF}" width="24" height="24">Acme</a>
<a href="design.html"><img alt="Brand.logo" src="{GIF}" width="24" height="24"> Get the design file</a>
<a href="home.html"><img alt="Home" src="{GIF}" width="24" height="24"></a>
<a href="docs.html"><svg role="img" width="20" height="20"><title>Octo mark</title><circle cx="9" cy="9" r="8"/>
</svg>
Octo Docs</a></header>
<p><span>&#xf0b0;</span> Inbox&#x200b;</p>
</body></html>"""


def _render(host, tmp_path):
    (tmp_path / "icons.html").write_text(PAGE, encoding="utf-8")
    page = host.render((tmp_path / "icons.html").as_uri(), str(tmp_path), Viewport(800, 600), "light", 1)
    (screen,) = page.screens
    shot = Screenshot("s" * 64, "/x.png", 800, 600, "PNG", "RGB", 1, 10, dt.datetime.now(dt.UTC), "r")
    return screen.elements, dom_labels(shot, screen.elements, (800, 600), 1.0, "h", "r")


def _pua(s: str) -> bool:
    return any(0xE000 <= ord(c) <= 0xF8FF or ord(c) >= 0xF0000 for c in s)


def test_icon_glyphs_never_reach_an_instruction_and_logo_links_are_named_by_their_text(host, tmp_path):
    elements, labels = _render(host, tmp_path)
    got = {lb.instruction for lb in labels}
    assert labels and not [lb.instruction for lb in labels if _pua(lb.instruction) or _pua(lb.element_text or "")]
    assert not [e for e in elements if any(_pua(e.get(k) or "") for k in ("name", "text", "label", "placeholder"))]
    assert {'click "Photos"', 'click the "Photos" link', 'click "Spam 12"', 'click the "Spam 12" link'} <= got
    assert {'click "Settings"', 'click the "Settings" link', 'click "Inbox"'} <= got
    assert {'click "Find"', 'click the "Find" button'} <= got  # an icon button with a name of its own keeps it
    # the icon-only button: an icon without a name, in the elements (exploration can click it) but never labelled
    bare = [e for e in elements if e["role"] == "button" and e["name"] == ""]
    assert len(bare) == 1 and not [lb for lb in labels if lb.native_point == bare[0]["point"]]
    # logo links: by their visible text, the alt glued before it kept on the element only
    assert {'click "Acme"', 'click the "Acme" link', 'click the "Get the design file" link'} <= got
    assert 'click the "Octo Docs" link' in got  # an svg logo's <title> the same way
    assert not [i for i in got if "Logo" in i or "Brand.logo" in i or "mark" in i]
    alts = {e["name"]: e["alt"] for e in elements if e["role"] == "link"}
    assert alts["Acme"] == "Acme Logo" and alts["Get the design file"] == "Brand.logo" and alts["Photos"] is None
    assert alts["Octo Docs"] == "Octo mark"
    assert 'click the "Home" link' in got and alts["Home"] is None  # a link that is only a logo: named by its alt


def test_tidy_keeps_a_name_that_is_more_than_its_images_and_text():
    def link(name, text, alts):
        return tidy({"kind": "control", "role": "link", "name": name, "text": text, "alts": alts})

    assert link("Acme Logo Acme", "Acme", ["Acme Logo"])["name"] == "Acme"
    assert link("Acme Acme Logo", "Acme", ["Acme Logo"])["name"] == "Acme"  # the logo after the text
    assert link("Acme Logo Acme", "Acme", ["Acme Logo"])["alt"] == "Acme Logo"
    kept = link("Open the Acme store", "Acme", ["Acme Logo"])  # an aria-label of its own: the author's name stays
    assert kept["name"] == "Open the Acme store" and kept["alt"] is None
    assert link("\uf03e Photos", "Photos", [])["name"] == "Photos"
    assert link("\uf002", None, [])["name"] == ""
