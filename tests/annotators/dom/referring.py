"""An independent checker of the referring expressions beyond the text (``annotators/relations.py``'s recipes).

It takes only an instruction's text and the page (reloaded at the screenshot's settings by
:mod:`tests.annotators.dom.verify`'s contained loader) and resolves the expression itself with its own DOM queries:
the row whose text holds the quoted cell, then the control of that role and name in it; the leaf element showing
the quoted text, then the nearest form field under it or the first icon or control left of it (walking
``elementFromPoint`` leftwards); the landmark of that kind (role + geometry), then the control in it; every button
or link of the named colour (its background, or its text colour, named by hue); the largest button by area; the
graphic or text-less control named the icon's words. It shares no code with the labeller.

``resolve(page, instruction, x, y)`` returns ``"hit"`` (the expression names exactly one element and a click at CSS
point ``(x, y)`` lands in it), ``"miss"``, ``"ambiguous"`` (it names more than one) or ``"none"`` (nothing).
"""

from __future__ import annotations

import re
from typing import Any

COLOURS = "red|orange|yellow|green|teal|blue|purple|pink|black"
FORMS = (
    ("row", re.compile(r'^click the "(.+)" ([a-z ]+?) in the row of "(.+)"$')),
    ("below", re.compile(r'^click the field below "(.+)"$')),
    ("left", re.compile(r'^click the icon to the left of "(.+)"$')),
    ("region", re.compile(r'^click the "(.+)" ([a-z ]+?) in the (top bar|side bar|dialog)$')),
    ("colour", re.compile(rf"^click the ({COLOURS}) (button|link)$")),
    ("size", re.compile(r"^click the large (button)$")),
    ("icon", re.compile(r"^click the ([a-z]+(?: [a-z]+)?) icon$")),
)

RESOLVE_JS = r"""
([form, args, x, y]) => {
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const low = (s) => norm(s).toLowerCase();
  const VW = innerWidth, VH = innerHeight;
  const clip = (r) => ({l: Math.max(r.left, 0), t: Math.max(r.top, 0), r: Math.min(r.right, VW),
                        b: Math.min(r.bottom, VH)});
  const shown = (e) => {
    const c = clip(e.getBoundingClientRect());
    if (c.r - c.l < 1 || c.b - c.t < 1) return false;
    const cs = getComputedStyle(e);
    return cs.visibility === 'visible' && cs.display !== 'none' && !e.closest('[aria-hidden="true"], [inert]');
  };
  const all = [...document.querySelectorAll('body *')].filter(shown);
  const NOUNS = {'button': ['button'], 'link': ['link'], 'text field': ['textbox'], 'search box': ['searchbox'],
                 'checkbox': ['checkbox'], 'radio button': ['radio'], 'tab': ['tab'], 'menu item': ['menuitem'],
                 'drop-down': ['combobox'], 'switch': ['switch'], 'option': ['option']};
  const is = (e, noun) => (NOUNS[noun] || []).includes(e.computedRole);
  const outermost = (list) => list.filter((e) => !list.some((o) => o !== e && o.contains(e)));
  // elements showing exactly `t` (innermost: none of their children shows it all)
  const showing = (t) => all.filter((e) => low(e.innerText) === low(t) &&
                                       ![...e.children].some((c) => low(c.innerText) === low(t)));
  const CONTROL = 'button, a[href], input, select, textarea, [role=button], [role=link]';
  let found = [];
  if (form === 'row') {
    const [name, noun, cell] = args;
    const rows = all.filter((e) => e.matches('tr, [role=row]') && low(e.innerText).includes(low(cell)));
    if (rows.length > 1) return 'ambiguous';
    const named = (e) => is(e, noun) && low(e.computedName) === low(name);
    if (rows.length) found = all.filter((e) => rows[0].contains(e) && named(e));
  } else if (form === 'below' || form === 'left') {
    const anchors = showing(args[0]);
    if (anchors.length > 1) return 'ambiguous';
    if (!anchors.length) return 'none';
    // the anchor's glyphs (its box may hold an icon of its own: an item of an icon and a text)
    const walker = document.createTreeWalker(anchors[0], NodeFilter.SHOW_TEXT), range = document.createRange();
    const rects = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      range.selectNodeContents(n);
      rects.push(...[...range.getClientRects()].filter((r) => r.width >= 1 && r.height >= 1));
    }
    if (!rects.length) return 'none';
    const a = {left: Math.min(...rects.map((r) => r.left)), right: Math.max(...rects.map((r) => r.right)),
               top: Math.min(...rects.map((r) => r.top)), bottom: Math.max(...rects.map((r) => r.bottom))};
    if (form === 'below') {
      const fields = all.filter((e) => e.matches(
        'input:not([type=hidden]):not([type=checkbox]):not([type=radio]):not([type=submit]):not([type=button])' +
        ':not([type=reset]):not([type=image]), textarea, select'));
      const under = fields.map((e) => [e, e.getBoundingClientRect()])
        .filter(([, r]) => r.top >= a.bottom - 2 && Math.min(r.right, a.right) > Math.max(r.left, a.left))
        .sort((p, q) => p[1].top - q[1].top);
      if (under.length) {
        const [first, r] = under[0];
        const beside = fields.filter((e) => e !== first && e.getBoundingClientRect().top < r.bottom &&
                                     e.getBoundingClientRect().bottom > r.top);
        found = [first, ...beside];
      }
    } else {
      const cy = (a.top + a.bottom) / 2;
      for (let px = a.left - 1; px >= a.left - 40 && !found.length; px -= 1) {
        for (let e = document.elementFromPoint(px, cy); e && e !== document.body; e = e.parentElement) {
          if (e.contains(anchors[0])) break;
          if (e.matches('svg, img, i, [role=img], ' + CONTROL)) { found = [e]; break; }
        }
      }
    }
  } else if (form === 'region') {
    const [name, noun, where] = args;
    const kind = (e) => {
      const role = e.computedRole;
      if (role === 'dialog' || role === 'alertdialog') return 'dialog';
      if (!['banner', 'navigation', 'complementary', 'search'].includes(role)) return null;
      const r = e.getBoundingClientRect(), c = clip(r);
      if (r.top <= 0.1 * VH && c.r - c.l >= 0.6 * VW && r.height <= 0.25 * VH) return 'top bar';
      if (role !== 'search' && c.b - c.t >= 0.5 * VH && c.r - c.l <= 0.35 * VW &&
          (c.l <= 0.05 * VW || c.r >= 0.95 * VW)) return 'side bar';
      return null;
    };
    const regions = outermost([...document.querySelectorAll('body *')].filter((e) => kind(e) === where));
    if (regions.length > 1) return 'ambiguous';
    if (regions.length) {
      found = all.filter((e) => regions[0].contains(e) && is(e, noun) && low(e.computedName) === low(name));
    }
  } else if (form === 'colour') {
    const [colour, noun] = args;
    const rgb = (s) => (/rgba?\(([^)]+)\)/.exec(s) || [null, '0,0,0,0'])[1].split(/[\s,/]+/).map(Number);
    const hueName = (c) => {
      if (c.length > 3 && c[3] < 0.9) return null;
      const [r, g, b] = c.slice(0, 3).map((v) => v / 255);
      const mx = Math.max(r, g, b), mn = Math.min(r, g, b), l = (mx + mn) / 2, d = mx - mn;
      if (l < 0.12) return 'black';
      const s = d === 0 ? 0 : d / (1 - Math.abs(2 * l - 1));
      if (s < 0.35 || l < 0.25 || l > 0.85) return null;
      let h = mx === r ? ((g - b) / d) % 6 : mx === g ? (b - r) / d + 2 : (r - g) / d + 4;
      h = (h * 60 + 360) % 360;
      return h < 15 ? 'red' : h < 42 ? 'orange' : h < 70 ? 'yellow' : h < 165 ? 'green' : h < 195 ? 'teal' :
             h < 260 ? 'blue' : h < 295 ? 'purple' : h < 340 ? 'pink' : 'red';
    };
    const colourOf = (e) => {
      const cs = getComputedStyle(e), bg = rgb(cs.backgroundColor);
      if (noun === 'button' && cs.backgroundImage === 'none' && (bg.length < 4 || bg[3] >= 0.9)) return hueName(bg);
      return noun === 'button' && cs.backgroundImage !== 'none' ? 'gradient' : hueName(rgb(cs.color));
    };
    found = all.filter((e) => is(e, noun) && colourOf(e) === colour);
  } else if (form === 'size') {
    const area = (e) => { const c = clip(e.getBoundingClientRect()); return (c.r - c.l) * (c.b - c.t); };
    const buttons = all.filter((e) => is(e, 'button')).sort((p, q) => area(q) - area(p));
    const close = buttons.length > 1 && area(buttons[0]) < 1.5 * area(buttons[1]);
    found = buttons.slice(0, close ? 2 : 1);
  } else if (form === 'icon') {
    if (showing(args[0]).length) return 'ambiguous';  // a text of those words: the icon of it?
    found = outermost(all.filter((e) => e.matches('svg, img, i, [role=img], ' + CONTROL) && !norm(e.innerText) &&
                                 !e.value && low(e.computedName) === args[0]));
  }
  found = outermost(found);
  if (found.length > 1) return 'ambiguous';
  if (!found.length) return 'none';
  const hit = document.elementFromPoint(x, y);
  if (!hit) return 'miss';
  const el = found[0];
  return el.contains(hit) || (hit.contains(el) && hit.matches(CONTROL)) ? 'hit' : 'miss';
}
"""


def form_of(instruction: str) -> tuple[str, list[str]] | None:
    """The expression's form and its quoted parts, or None for an instruction of none of the forms."""
    for form, pattern in FORMS:
        m = pattern.match(instruction)
        if m:
            return form, list(m.groups())
    return None


def resolve(page: Any, instruction: str, x: float, y: float) -> str:
    """``hit`` / ``miss`` / ``ambiguous`` / ``none`` (module docstring); ``unparsed`` for an unknown form."""
    parsed = form_of(instruction)
    if parsed is None:
        return "unparsed"
    return page.evaluate(RESOLVE_JS, [parsed[0], parsed[1], x, y])
