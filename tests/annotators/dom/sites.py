"""Self-made multi-page sites for the exploration tests: a form that validates, tabs, a menu that opens, a link to
another page, a link to a remote host (blocked by the fence), a button that does nothing."""

from __future__ import annotations

from pathlib import Path

STYLE = (
    '<meta name="viewport" content="width=device-width">'
    "<style>body{font:15px sans-serif;margin:12px;background:#fff} [hidden]{display:none!important}"
    " .msg{color:#b00} nav a{margin-right:12px} section{margin:8px 0}</style>"
)

INDEX = """<!doctype html><html><head><meta charset="utf-8"><title>Shop</title>{style}</head><body>
<nav><a href="pricing.html">Pricing</a><a href="http://example.invalid/">Partner site</a></nav>
<section><div role="tablist"><button role="tab" id="t1" aria-selected="true">Overview</button>
<button role="tab" id="t2" aria-selected="false">Specs</button></div>
<div id="p1">A lamp for every desk.</div><div id="p2" hidden>Height 40 cm, 3 W.</div></section>
<section><button id="menu" aria-haspopup="menu">Menu</button>
<ul role="menu" id="items" hidden><li role="menuitem" tabindex="0" id="settings">Settings</li></ul>
<p id="said"></p></section>
<section><form id="f" novalidate><label>Email <input type="email" name="email"></label>
<label>City <input name="city"></label>
<label>Country <select name="country"><option value="">Choose</option><option value="fr">France</option>
<option value="de">Germany</option></select></label>
<button type="submit">Send</button><p class="msg" id="err"></p></form></section>
<section><button id="nothing">Nothing</button></section>
<script>
const $ = (id) => document.getElementById(id);
const tab = (on, off) => {{ $('p' + on).hidden = false; $('p' + off).hidden = true;
  $('t' + on).setAttribute('aria-selected', 'true'); $('t' + off).setAttribute('aria-selected', 'false'); }};
$('t1').onclick = () => tab(1, 2);
$('t2').onclick = () => tab(2, 1);
$('menu').onclick = () => {{ $('items').hidden = !$('items').hidden; }};
$('settings').onclick = () => {{ $('said').textContent = 'Settings saved'; }};
$('f').onsubmit = (e) => {{ e.preventDefault(); const f = e.target;
  const ok = f.email.value.includes('@') && f.city.value.trim();
  $('err').textContent = ok ? 'Thanks, we will write to ' + f.email.value : 'Please give an email and a city'; }};
</script></body></html>"""

PRICING = """<!doctype html><html><head><meta charset="utf-8"><title>Pricing</title>{style}</head><body>
<h1>Pricing</h1><nav><a href="index.html">Home</a></nav><p>Lamp: 30 EUR</p><button id="buy">Buy</button>
<p id="cart"></p><script>document.getElementById('buy').onclick = () => {{
  document.getElementById('cart').textContent = 'One lamp in the cart'; }};</script></body></html>"""


# A button that does nothing (flat: no hover or focus style either), a long gap, a button below the fold.
QUIET = """<!doctype html><html><head><meta charset="utf-8">{style}<style>button{{all:unset;display:inline-block;
padding:4px;border:1px solid #333;background:#eee;outline:none}}</style></head><body><p>Quiet page</p>
<button>Nothing</button><div style="height:900px"></div><button>Bottom</button></body></html>"""


# A page that changes by itself: a clock ticking on a timer, a random banner, a carousel on an interval, a button whose
# message shows 400 ms after the click.
LIVE = """<!doctype html><html><head><meta charset="utf-8">{style}</head><body><p id="clock"></p>
<p id="banner"></p><p id="slide"></p><button id="save">Save</button><p id="said"></p><script>
const $ = (id) => document.getElementById(id);
const tick = () => {{ $('clock').textContent = new Date().toISOString() + ' / ' + performance.now().toFixed(1); }};
tick(); setInterval(tick, 100);
$('banner').textContent = 'Offer ' + Math.floor(Math.random() * 1e6);
let k = 0; setInterval(() => {{ $('slide').textContent = 'Slide ' + (++k % 5); }}, 700);
$('save').onclick = () => setTimeout(() => {{ $('said').textContent = 'Saved'; }}, 400);
</script></body></html>"""


def make_site(root: Path, quiet: bool = False) -> Path:
    """Write the shop (``index.html``, ``pricing.html``) under ``root/site``, and ``quiet.html`` and ``live.html``
    when asked; the folder."""
    site = root / "site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "index.html").write_text(INDEX.format(style=STYLE), encoding="utf-8")
    (site / "pricing.html").write_text(PRICING.format(style=STYLE), encoding="utf-8")
    if quiet:
        (site / "quiet.html").write_text(QUIET.format(style=STYLE), encoding="utf-8")
        (site / "live.html").write_text(LIVE.format(style=STYLE), encoding="utf-8")
    return site
