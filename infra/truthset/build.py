"""Render the hand-written pages in ``infra/truthset/pages/`` and write a ScreenSpot-style ground-truth set.

For every page this saves a PNG screenshot to ``samples/truth/<page>.png`` and appends one JSON record per visible
text unit to ``samples/truth/truth.jsonl``::

    {"img_filename": "login.png", "instruction": "Forgot password?", "bbox": [x, y, w, h], "data_type": "text",
     "element": "a"}

What counts as one text unit (read from the DOM, not from pixels):

* Every visible text node is given an *owner*: its nearest ancestor that is not a plain inline element (``display:
  inline`` and not interactive). Links, buttons, labels, ``[role]`` elements, flex/grid items, inline-blocks, table
  cells and block elements are owners, so "Sign in" in ``<button><span>Sign in</span></button>`` belongs to the
  button and each link of a nav bar is its own unit.
* An owner's text is split into *runs* where a child owner's text interrupts it (``Don't have an account?`` and the
  link ``Create one`` are two units), and each run into lines (a wrapped paragraph gives one unit per line).
* Placeholders and values of text inputs, labels of ``<input type=submit|button>`` and the shown option of a
  ``<select>`` are units too, with the control's box.
* Units without a letter or digit (icons, separators) are dropped; separators (``/ | · •``) at the ends are trimmed.
* A unit is kept only when it lies fully inside the viewport, is not clipped by an ``overflow`` ancestor, and
  ``elementFromPoint`` at five points across it (both ends included) hits the owner (nothing paints over it).

The box is the owner's border box for interactive owners (the click target: a button, a link, a label, a menu
item, a form control) and the tight box of the unit's glyphs otherwise. Boxes are in screenshot pixels (CSS pixels
times the device scale factor), ``[x, y, w, h]`` like ScreenSpot.

Needs the ``playwright`` Python package and a system Chromium (Debian: ``apt-get install -y chromium``); it never
downloads a browser (no ``playwright install``)::

    .venv/bin/python infra/truthset/build.py                 # all pages -> samples/truth/
    .venv/bin/python infra/truthset/build.py --out /tmp/truth --chromium /usr/bin/chromium
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = Path(__file__).resolve().parent / "pages"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--font-render-hinting=none",
]
DESKTOP = {"width": 1280, "height": 800, "scale": 1}
# page stem -> viewport; pages not listed render at DESKTOP.
VIEWPORTS = {"mobile": {"width": 390, "height": 844, "scale": 2}}

EXTRACT_JS = r"""
() => {
  const DPR = window.devicePixelRatio || 1;
  const VW = window.innerWidth, VH = window.innerHeight;
  const SKIP = new Set(['SCRIPT', 'STYLE', 'TITLE', 'HEAD', 'NOSCRIPT', 'SELECT', 'OPTION', 'TEXTAREA', 'svg']);
  const INTERACTIVE_TAGS = new Set(['A', 'BUTTON', 'LABEL', 'SUMMARY', 'SELECT', 'INPUT']);
  const ROLES = new Set(['button', 'link', 'menuitem', 'tab', 'option', 'switch', 'checkbox', 'radio', 'treeitem']);
  const SEP = /^[\s\/|·•›»>]+|[\s\/|·•›»>]+$/g;
  const hasAlnum = (s) => /[\p{L}\p{N}]/u.test(s);
  const isInteractive = (el) => INTERACTIVE_TAGS.has(el.tagName) || ROLES.has(el.getAttribute('role') || '');
  const describe = (el) => {
    const role = el.getAttribute('role');
    return role ? `${el.tagName.toLowerCase()}[role=${role}]` : el.tagName.toLowerCase();
  };
  const ownerOf = (node) => {
    let el = node.parentElement;
    while (el && el.parentElement && !isInteractive(el) && getComputedStyle(el).display === 'inline') {
      el = el.parentElement;
    }
    return el;
  };
  const visibleStyle = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.display === 'none' || cs.visibility === 'hidden' || cs.visibility === 'collapse') return false;
      if (parseFloat(cs.opacity) < 0.1) return false;
    }
    return true;
  };
  const clipped = (el, r) => {
    if (r.left < -0.5 || r.top < -0.5 || r.right > VW + 0.5 || r.bottom > VH + 0.5) return true;
    for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible') {
        const a = e.getBoundingClientRect();
        if (r.left < a.left - 0.5 || r.top < a.top - 0.5 || r.right > a.right + 0.5 || r.bottom > a.bottom + 0.5)
          return true;
      }
    }
    return false;
  };
  const unoccluded = (el, r) => {
    const y = (r.top + r.bottom) / 2;
    for (const f of [0, 0.25, 0.5, 0.75, 1]) {
      const inset = Math.min(2, (r.right - r.left) / 4);
      const x = Math.min(Math.max(r.left + f * (r.right - r.left), r.left + inset), r.right - inset);
      const hit = document.elementFromPoint(x, y);
      if (!hit || !(el === hit || el.contains(hit))) return false;
    }
    return true;
  };
  const out = [];
  const emit = (el, text, r, element) => {
    text = text.replace(/\s+/g, ' ').trim();
    if (!text || !hasAlnum(text)) return;
    if (r.width < 1 || r.height < 1) return;
    if (!visibleStyle(el) || clipped(el, r) || !unoccluded(el, r)) return;
    out.push({text, element, bbox: [r.left * DPR, r.top * DPR, r.width * DPR, r.height * DPR]});
  };

  // 1. Text nodes -> owners -> runs -> lines.
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const nodes = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.nodeValue.trim()) continue;
    let skip = false;
    for (let e = n.parentElement; e; e = e.parentElement) if (SKIP.has(e.tagName)) { skip = true; break; }
    if (!skip) nodes.push({node: n, owner: ownerOf(n)});
  }
  // runs: maximal sequences of consecutive (in document order) text nodes with the same owner
  const runs = [];
  for (const item of nodes) {
    const last = runs.length ? runs[runs.length - 1] : null;
    if (last && last.owner === item.owner) last.nodes.push(item.node);
    else runs.push({owner: item.owner, nodes: [item.node]});
  }
  const range = document.createRange();
  for (const run of runs) {
    // characters with their rects, split into lines
    const lines = [];
    let cur = null, prev = null;
    for (const n of run.nodes) {
      const s = n.nodeValue;
      for (let i = 0; i < s.length; i++) {
        range.setStart(n, i); range.setEnd(n, i + 1);
        const rects = range.getClientRects();
        const r = rects.length ? rects[0] : null;
        if (!r || r.width === 0 && r.height === 0) {  // collapsed whitespace
          if (cur) cur.push({c: ' ', r: null});
          continue;
        }
        const newLine = !cur || (prev && (r.top >= prev.bottom - 1 || r.left < prev.left - 1));
        if (newLine) { cur = []; lines.push(cur); }
        else if (prev && r.left - prev.right > 0.2 * r.height && cur.length && cur[cur.length - 1].c.trim())
          cur.push({c: ' ', r: null});  // visual gap between inline boxes ("Issues" + badge "37")
        cur.push({c: s[i], r});
        prev = r;
      }
    }
    for (const line of lines) {
      const text = line.map((x) => x.c).join('');
      const m = text.match(/^[\s\/|·•›»>]*/)[0].length;
      const e = text.length - text.match(/[\s\/|·•›»>]*$/)[0].length;
      const chars = line.slice(m, e).filter((x) => x.r && x.c.trim());
      if (!chars.length) continue;
      let l = Infinity, t = Infinity, rr = -Infinity, b = -Infinity;
      for (const {r} of chars) {
        l = Math.min(l, r.left); t = Math.min(t, r.top); rr = Math.max(rr, r.right); b = Math.max(b, r.bottom);
      }
      const glyphs = new DOMRect(l, t, rr - l, b - t);
      const el = run.owner;
      const box = (isInteractive(el) && lines.length === 1 && runs.filter((x) => x.owner === el).length === 1)
        ? el.getBoundingClientRect() : glyphs;
      emit(el, text.slice(m, e), box, describe(el));
    }
  }

  // 2. Form controls: placeholders, values, button inputs, the shown option of a select.
  const TEXT_INPUTS = new Set(['text', 'email', 'search', 'url', 'tel', 'number', 'password']);
  for (const el of document.querySelectorAll('input, select, textarea')) {
    const r = el.getBoundingClientRect();
    if (el.tagName === 'SELECT') {
      const opt = el.options[el.selectedIndex];
      if (opt) emit(el, opt.text, r, 'select');
      continue;
    }
    const type = (el.getAttribute('type') || 'text').toLowerCase();
    if (['submit', 'button', 'reset'].includes(type)) emit(el, el.value, r, `input[type=${type}]`);
    else if (TEXT_INPUTS.has(type) || el.tagName === 'TEXTAREA') {
      if (el.value && type !== 'password') emit(el, el.value, r, `${el.tagName.toLowerCase()}[value]`);
      else if (!el.value && el.placeholder) emit(el, el.placeholder, r, `${el.tagName.toLowerCase()}[placeholder]`);
    }
  }
  return out;
}
"""


def render(pages: list[Path], out: Path, chromium: str) -> list[dict]:
    """Render ``pages`` into ``out`` (PNG per page) and return the truth records.

    Args:
        pages: HTML files to render.
        out: output folder; created if missing.
        chromium: path of the Chromium executable (never downloaded).

    Returns:
        The records, in page order then document order.

    Raises:
        RuntimeError: when the playwright package is missing.
    """
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise RuntimeError(
            "needs the playwright package: .venv/bin/pip install playwright (no browser download)"
        ) from e
    from PIL import Image

    out.mkdir(parents=True, exist_ok=True)
    records: list[dict] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            for page_path in pages:
                vp = VIEWPORTS.get(page_path.stem, DESKTOP)
                ctx = browser.new_context(
                    viewport={"width": vp["width"], "height": vp["height"]},
                    device_scale_factor=vp["scale"],
                    java_script_enabled=True,
                    offline=True,
                )
                page = ctx.new_page()
                page.goto(page_path.resolve().as_uri(), wait_until="load")
                page.evaluate("document.fonts.ready")
                png = page.screenshot(type="png", full_page=False, animations="disabled", caret="hide")
                units = page.evaluate(EXTRACT_JS)
                ctx.close()
                name = f"{page_path.stem}.png"
                im = Image.open(io.BytesIO(png)).convert("RGB")
                im.save(out / name, optimize=True)  # lossless: the OCR sees what Chromium painted
                for u in units:
                    x, y, w, h = (round(v, 1) for v in u["bbox"])
                    records.append(
                        {
                            "img_filename": name,
                            "instruction": u["text"],
                            "bbox": [x, y, w, h],
                            "data_type": "text",
                            "element": u["element"],
                        }
                    )
                print(f"{name}: {im.width}x{im.height}, {len(units)} elements", file=sys.stderr)
        finally:
            browser.close()
    return records


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=Path, default=PAGES, help="folder of *.html pages")
    ap.add_argument("--out", type=Path, default=ROOT / "samples" / "truth", help="output folder")
    ap.add_argument("--chromium", default="/usr/bin/chromium", help="Chromium executable")
    args = ap.parse_args(argv)
    pages = sorted(args.pages.glob("*.html"))
    if not pages:
        ap.error(f"no *.html under {args.pages}")
    records = render(pages, args.out, args.chromium)
    with open(args.out / "truth.jsonl", "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} records for {len(pages)} pages -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
