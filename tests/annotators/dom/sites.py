"""Self-made multi-page sites for the exploration tests: a form that validates, tabs, a menu that opens, a link to
another page, a link to a remote host (blocked by the fence), a button that does nothing; and a page of the shapes
that made real pages' episodes differ from run to run (:func:`make_shapes`)."""

from __future__ import annotations

import shutil
import struct
import zlib
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


# The shapes of real pages whose episodes differed between runs: links the fence blocks and to a page not saved, tabs
# with CSS transitions that hide a pane on ``transitionend`` (Bootstrap's way, with a timer as fall-back), a JS
# calendar of today (``new Date()`` and ``Intl``'s format() without a date), a clock on ``setInterval``, a tip drawn
# with ``Math.random`` and ``crypto``, a spinner and a blinking caret in an autofocused field, a web font only the
# second tab uses (loaded when it opens) and a large image a button inserts (decoded off the main thread).
SHAPES = """<!doctype html><html><head><meta charset="utf-8"><title>Shapes</title>{style}<style>
@font-face {{ font-family: Late; src: url(late.ttf) }} .late {{ font-family: Late, serif; font-size: 22px }}
.tab {{ padding: 6px 12px; border: 1px solid #888; transition: background .4s, color .4s }}
.tab.on {{ background: #246; color: #fff }} .pane {{ opacity: 0; transition: opacity .5s }} .pane.on {{ opacity: 1 }}
#cal td {{ width: 26px; text-align: center }} #cal td.today {{ background: #fc0; border-radius: 50% }}
.spin {{ display: inline-block; width: 16px; height: 16px; border: 3px solid #ccc; border-top-color: #333;
  border-radius: 50%; animation: rot 1s linear infinite }} @keyframes rot {{ to {{ transform: rotate(360deg) }} }}
.blink {{ animation: blink 1s steps(1) infinite }} @keyframes blink {{ 50% {{ opacity: 0 }} }}
</style></head><body>
<nav><a href="http://blocked.invalid/page">Partner</a><a href="missing.html">Old page</a></nav>
<div role="tablist"><button class="tab on" role="tab" data-p="a">Overview</button><button class="tab" role="tab"
data-p="b">Details</button></div>
<div class="pane on" id="a">Overview of the lamp.</div>
<div class="pane" id="b" hidden><span class="late">Weight 2 kg</span></div>
<h2 id="month"></h2><p id="today"></p><button id="next">Next month</button><table id="cal"></table>
<p>Now: <span id="clock"></span> <span class="spin"></span><span class="blink">|</span></p>
<p>Tip: <b id="tip"></b> <span id="uuid"></span></p>
<label>Search <input id="q" type="search" autofocus></label> <button id="show">Show photo</button>
<div id="photo"></div>
<script>
const $ = (id) => document.getElementById(id);
for (const t of document.querySelectorAll('.tab')) t.addEventListener('click', () => {{
  for (const x of document.querySelectorAll('.tab')) x.classList.toggle('on', x === t);
  for (const p of document.querySelectorAll('.pane')) {{
    if (p.id === t.dataset.p) {{ p.hidden = false; requestAnimationFrame(() => p.classList.add('on')); continue; }}
    p.classList.remove('on');
    let done = false; const hide = () => {{ if (!done) {{ done = true; p.hidden = true; }} }};
    p.addEventListener('transitionend', hide, {{once: true}}); setTimeout(hide, 550);
  }}
}});
let shown = new Date();
function draw() {{
  $('month').textContent = shown.toLocaleDateString('en-US', {{month: 'long', year: 'numeric', timeZone: 'UTC'}});
  const first = new Date(Date.UTC(shown.getUTCFullYear(), shown.getUTCMonth(), 1)), now = new Date();
  const days = new Date(Date.UTC(shown.getUTCFullYear(), shown.getUTCMonth() + 1, 0)).getUTCDate();
  let html = '<tr>', col = first.getUTCDay();
  for (let i = 0; i < col; i++) html += '<td></td>';
  for (let d = 1; d <= days; d++) {{
    const today = d === now.getUTCDate() && shown.getUTCMonth() === now.getUTCMonth();
    html += `<td class="${{today ? 'today' : ''}}">${{d}}</td>`; if (++col % 7 === 0) html += '</tr><tr>';
  }}
  $('cal').innerHTML = html + '</tr>';
}}
$('next').onclick = () => {{
  shown = new Date(Date.UTC(shown.getUTCFullYear(), shown.getUTCMonth() + 1, 1)); draw();
}};
draw();
const long = new Intl.DateTimeFormat('en-US', {{dateStyle: 'full', timeZone: 'UTC'}});
$('today').textContent = 'Today is ' + long.format();
const tick = () => {{ $('clock').textContent = new Date().toISOString().slice(11, 19); }};
tick(); setInterval(tick, 1000);
$('tip').textContent = ['Drink water', 'Stretch', 'Take a walk', 'Call a friend'][Math.floor(Math.random() * 4)];
$('uuid').textContent = crypto.randomUUID().slice(0, 8) + ' ' + crypto.getRandomValues(new Uint32Array(1))[0];
$('show').onclick = () => {{ $('photo').innerHTML = '<img src="photo.png" alt="Photo" width="320" height="80">'; }};
</script></body></html>"""


def _png(width: int, height: int) -> bytes:
    """A PNG of horizontal colour bands (big enough that Chromium decodes it off the main thread)."""
    rows = b"".join(b"\x00" + bytes((y % 256, 80, 255 - y % 256)) * width for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    head = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def make_shapes(root: Path) -> Path:
    """Write :data:`SHAPES` as ``root/shapes/index.html`` with its image (and its web font: a system DejaVu font,
    where there is one); the folder. ``missing.html`` is not written."""
    site = root / "shapes"
    site.mkdir(parents=True, exist_ok=True)
    (site / "index.html").write_text(SHAPES.format(style=STYLE), encoding="utf-8")
    (site / "photo.png").write_bytes(_png(2400, 600))
    font = Path("/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf")
    if font.exists():
        shutil.copy(font, site / "late.ttf")
    return site
