"""What a person could see and click in one frame of a rendered page, read from the DOM (the script the browser runs).

:data:`EXTRACT_JS` runs in a page's frame (``frame.evaluate(EXTRACT_JS, options)``) and returns the frame's
elements, each a dict in the frame's CSS pixels (its viewport, after scrolling)::

    {"kind": "control" | "icon" | "text", "tag": "a", "role": "link", "name": "Pricing", "text": "Pricing",
     "label": None, "placeholder": None, "input_type": None, "box": [l, t, r, b], "point": [x, y], "order": 12,
     "href": "file:///site/pricing.html", "field": None, "alts": [], "alt": None}

``href`` is a link's resolved target, ``field`` a form field's ``name`` (else ``id``, ``autocomplete``): what
exploration (:mod:`screenmill.annotators.dom.explore`) reads; no label depends on them. ``alts`` are the names of a
control's images; the script's elements go through :func:`tidy` (names cleaned of icon-font glyphs and unprintable
code points; a logo link named by its visible text, the logo's alt kept in ``alt``) before anything reads them.
``rel`` (the script's last block) holds what :mod:`screenmill.annotators.relations` reads for the expressions
beyond the text: the element's landmark region, table row, colours and parents (the block's comment says each).

Which elements (the rules the DOM labels stand on; :mod:`screenmill.annotators.dom.labels` makes the instructions):

* **controls**: links with ``href``, buttons, inputs (not ``hidden``), selects, text areas, ``summary``, elements with
  an interactive ARIA role, ``contenteditable`` and ``onclick`` elements, ``tabindex >= 0``; disabled ones
  (``disabled``, ``aria-disabled="true"``) are left out: nobody can click them.
* **icons**: ``svg``, ``img``, ``i``/``span`` icon-font glyphs and ``[role=img]`` with an accessible name (``alt``,
  ``aria-label``, ``title``), outside any control (a control names its own icon).
* **text**: the owner of visible text (its nearest ancestor that is not a plain inline element), outside any
  control, whose text is all its own (no control or other owner inside: the words around an inline link are a
  fragment, never a label), with at most ``max_text_chars`` characters and one letter or digit; the box is the
  tight box of its glyphs.
* **lines** (role ``line``, kind ``text``): the text that is painted but is no element above, line by line: an owner's
  text that is too long (a paragraph, a code block), that keeps its author's line breaks (a code block of several
  lines: its lines are what a person names, not "./configure make make install"; a ``<br>`` between two lines of
  text: a manual's "**Input file location:**" above "INPUTFILE ...", an address), or that has a control or another
  owner inside (the words around an inline link), cut into visual lines and at every interruption by other text (the
  link), so "Read about <a>accessibility</a> first." gives the lines "Read about" and "first." beside the link. A
  visual line longer than ``max_text_chars`` characters (no instruction quotes it) is cut where its text nodes meet
  (an inline ``<code>``, ``<b>``: "This program," | "bzip2" | ", the associated library"). Each line has the tight box
  of its words, at most ``max_text_chars`` characters and one letter or digit. Without them, visible
  text a screenshot shows is in no truth element, and every correct OCR label of it would count as wrong.

Visible: a non-empty box inside the viewport and every clipping (``overflow``) ancestor, ``visibility: visible``,
an opacity product over the ancestors of at least 0.1, no ``aria-hidden="true"`` or ``inert`` ancestor.
Unoccluded: ``document.elementFromPoint`` at the click point is the element or inside it. The click point is the
first of a few points (centre first) across the first visible line box (a wrapped link's first line) that passes;
an element where none passes is covered and left out. Role and accessible name are Chromium's own accessibility
computation (``computedRole`` / ``computedName``, with ``--enable-blink-features=ComputedAccessibilityInfo``), with the
tag and the text as fall-back. Iframes are listed in ``frames`` (their content box and visible part), so the caller
can run the script inside them and keep what their parent shows.
"""

from __future__ import annotations

from screenmill.annotators.wording import printable

#: Bumped whenever the rules above change what is extracted (part of the DOM recipes' versions, so of config_hash).
#: 8: names tidied (:func:`tidy`: icon-font glyphs and unprintable code points out, a logo link named by its text).
EXTRACT_VERSION = "8"

EXTRACT_JS = r"""
(opts) => {
  const maxText = opts.maxTextChars || 120;
  const VW = window.innerWidth, VH = window.innerHeight;
  const CONTROL_SELECTOR = [
    'a[href]', 'button', 'input:not([type=hidden])', 'select', 'textarea', 'summary', '[contenteditable=""]',
    '[contenteditable=true]', '[onclick]', '[tabindex]:not([tabindex="-1"])',
    ...['button', 'link', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'checkbox', 'radio', 'switch',
        'option', 'combobox', 'textbox', 'searchbox', 'slider', 'spinbutton', 'treeitem'].map((r) => `[role=${r}]`),
  ].join(',');
  const SKIP_TEXT = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'TITLE', 'HEAD', 'SELECT', 'OPTION',
                             'TEXTAREA', 'IFRAME', 'svg', 'SVG', 'CANVAS']);
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const hasAlnum = (s) => /[\p{L}\p{N}]/u.test(s);

  const clipRect = (r, c) => ({l: Math.max(r.l, c.l), t: Math.max(r.t, c.t), r: Math.min(r.r, c.r),
                                b: Math.min(r.b, c.b)});
  const asRect = (d) => ({l: d.left, t: d.top, r: d.right, b: d.bottom});
  const empty = (r) => r.r - r.l < 1 || r.b - r.t < 1;
  // The part of rect `r` of `el` that its clipping ancestors and the viewport leave visible.
  const visiblePart = (el, r) => {
    let v = clipRect(r, {l: 0, t: 0, r: VW, b: VH});
    for (let e = el.parentElement; e && e !== document.documentElement; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible' || cs.contain.includes('paint')) {
        v = clipRect(v, asRect(e.getBoundingClientRect()));
      }
      if (cs.position === 'fixed') break;  // nothing above a fixed element clips it but the viewport
    }
    return v;
  };
  const styleVisible = (el) => {
    const cs = getComputedStyle(el);
    if (cs.visibility !== 'visible' || cs.display === 'none') return false;
    let opacity = 1;
    for (let e = el; e; e = e.parentElement) {
      opacity *= parseFloat(getComputedStyle(e).opacity);
      if (opacity < 0.1) return false;
    }
    return !el.closest('[aria-hidden="true"], [inert]');
  };
  const inside = (el, hit) => !!hit && (hit === el || el.contains(hit));
  // The first point across the visible part of `rects` (in order: a wrapped link's first line first) where the
  // element is what a click hits.
  const clickPoint = (el, rects) => {
    for (const raw of rects) {
      const v = visiblePart(el, raw);
      if (empty(v)) continue;
      const w = v.r - v.l, h = v.b - v.t;
      const xs = [0.5, 0.25, 0.75, 0.1, 0.9], ys = [0.5, 0.3, 0.7];
      for (const fy of ys) for (const fx of xs) {
        const x = v.l + fx * w, y = v.t + fy * h;
        if (inside(el, document.elementFromPoint(x, y))) return [x, y];
      }
    }
    return null;
  };
  const role = (el) => {
    const r = el.computedRole;
    if (r && r !== 'generic' && r !== 'none') return r;
    return el.getAttribute('role') || el.tagName.toLowerCase();
  };
  const name = (el) => norm(el.computedName || el.getAttribute('aria-label') || el.getAttribute('title') ||
                            el.getAttribute('alt') || '');
  const ownText = (el) => norm(el.innerText || '');
  // The names of the images inside a control (img alt, svg/[role=img] aria-label or <title>), in document order:
  // what Chromium's name of a logo link glues before its text ("Acme Logo Acme").
  const imageNames = (el) => [...el.querySelectorAll('img[alt], svg, [role=img]')].map((i) => norm(
    i.getAttribute('alt') || i.getAttribute('aria-label') || i.querySelector?.(':scope > title')?.textContent || ''))
    .filter((n) => n);
  const isDisabled = (el) => el.disabled === true || el.getAttribute('aria-disabled') === 'true' ||
                             !!el.closest('fieldset[disabled]');
  const fieldLabel = (el) => {
    if (el.labels && el.labels.length) return norm(el.labels[0].innerText);
    const by = el.getAttribute('aria-labelledby');
    if (by) return norm(by.split(/\s+/).map((id) => document.getElementById(id)?.innerText || '').join(' '));
    return null;
  };

  const out = [];
  const outEls = [];  // the element of each entry of `out` (for the relations block at the end)
  let order = 0;
  const emit = (el, kind, rects, fields) => {
    if (!styleVisible(el)) return;
    const box = visiblePart(el, fields.box || asRect(el.getBoundingClientRect()));
    if (empty(box)) return;
    const point = clickPoint(el, rects);
    if (!point) return;
    out.push({kind, tag: el.tagName.toLowerCase(), box: [box.l, box.t, box.r, box.b], point, order: order++,
              role: fields.role, name: fields.name, text: fields.text ?? null, label: fields.label ?? null,
              placeholder: fields.placeholder ?? null, input_type: fields.input_type ?? null,
              href: fields.href ?? null, field: fields.field ?? null, alts: fields.alts ?? []});
    outEls.push(el);
  };

  // 1. Controls.
  const controls = [...document.querySelectorAll(CONTROL_SELECTOR)].filter((el) => !isDisabled(el));
  const controlSet = new Set(controls);
  const inControl = (el) => {
    for (let e = el.parentElement; e; e = e.parentElement) if (controlSet.has(e)) return true;
    return false;
  };
  for (const el of controls) {
    const rects = [...el.getClientRects()].map(asRect);
    if (!rects.length) continue;
    const tag = el.tagName;
    const type = tag === 'INPUT' ? (el.getAttribute('type') || 'text').toLowerCase() : null;
    let text = ['INPUT', 'SELECT', 'TEXTAREA'].includes(tag) ? null : ownText(el);
    if (tag === 'INPUT' && ['submit', 'button', 'reset'].includes(type)) text = norm(el.value);
    if (tag === 'SELECT') text = norm(el.options[el.selectedIndex]?.text || '');
    emit(el, 'control', rects, {
      role: role(el), name: name(el), text: text && text.length <= maxText ? text : null,
      label: ['INPUT', 'SELECT', 'TEXTAREA'].includes(tag) ? fieldLabel(el) : null,
      placeholder: el.getAttribute('placeholder') ? norm(el.getAttribute('placeholder')) : null,
      input_type: type || (tag === 'TEXTAREA' ? 'textarea' : tag === 'SELECT' ? 'select' : null),
      href: (tag === 'A' || tag === 'AREA') && el.href ? String(el.href) : null, alts: imageNames(el),
      field: ['INPUT', 'SELECT', 'TEXTAREA'].includes(tag) ?
        (el.getAttribute('name') || el.id || el.getAttribute('autocomplete') || null) : null,
    });
  }

  // 2. Icons with a name, outside controls.
  for (const el of document.querySelectorAll('svg, img, i, span[class*=icon], [role=img]')) {
    if (inControl(el) || controlSet.has(el)) continue;
    const n = norm(el.getAttribute('aria-label') || el.getAttribute('alt') || el.getAttribute('title') ||
                   el.querySelector?.(':scope > title')?.textContent || '');
    if (!n || !hasAlnum(n)) continue;
    const rects = [...el.getClientRects()].map(asRect);
    if (!rects.length) continue;
    emit(el, 'icon', rects, {role: 'image', name: n, text: null});
  }

  // 3. Text owners outside controls: their own text's glyph boxes.
  const ownerOf = (node) => {
    let el = node.parentElement;
    while (el && el.parentElement && getComputedStyle(el).display === 'inline' && !controlSet.has(el) &&
           el.tagName !== 'LABEL') {
      el = el.parentElement;
    }
    return el;
  };
  const DISABLED = ':disabled, [aria-disabled="true"]';
  const runs = new Map();
  const mixed = new Set();  // elements with text of another owner (or of a control) inside: their own is a fragment
  const seq = new Map();  // text node -> its index among the painted text nodes (document order)
  // Painted text nodes that a whitespace-only text node precedes: the space between two highlighted tokens
  // ("<span>class</span> <span>Point</span>") is a node of its own, so a line would read "classPoint" without it.
  const spaceBefore = new Set();
  let blank = false;
  const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.nodeValue.trim()) { blank = true; continue; }
    let skip = false;
    for (let e = n.parentElement; e; e = e.parentElement) if (SKIP_TEXT.has(e.tagName)) { skip = true; break; }
    if (skip) continue;
    if (blank) spaceBefore.add(n);
    blank = false;
    seq.set(n, seq.size);
    const owner = ownerOf(n);
    if (owner) for (let e = owner.parentElement; e && !mixed.has(e); e = e.parentElement) mixed.add(e);
    if (!owner || controlSet.has(owner) || inControl(owner)) continue;
    if (!runs.has(owner)) runs.set(owner, []);
    runs.get(owner).push(n);
  }
  const TEXT_ROLES = new Set(['heading', 'paragraph', 'cell', 'columnheader', 'rowheader', 'listitem', 'caption',
                              'blockquote', 'code', 'term', 'definition', 'status', 'alert', 'note', 'tooltip']);
  const range = document.createRange();
  // The visual lines of an owner's text nodes, cut where other text interrupts them (an inline link): each a word
  // list with its rects. Words of the viewport's band only (text far above or below is not measured).
  const lineRuns = (nodes) => {
    const lines = [];
    let cur = null, prev = null, prevSeq = -2, gap = false;
    for (const n of nodes) {
      const s = n.nodeValue;
      const at = seq.get(n);
      if (at !== prevSeq + 1) cur = null;  // other text came in between
      prevSeq = at;
      if (spaceBefore.has(n)) gap = true;
      range.selectNodeContents(n);
      const whole = range.getBoundingClientRect();
      if (whole.bottom < -VH || whole.top > 2 * VH) { cur = null; gap = /\s$/.test(s); continue; }
      for (const m of s.matchAll(/\S+/g)) {
        range.setStart(n, m.index); range.setEnd(n, m.index + m[0].length);
        const rs = [...range.getClientRects()].filter((r) => r.width >= 1 && r.height >= 1);
        if (!rs.length) { gap = true; continue; }
        const r = rs[0];
        const space = gap || m.index > 0 && /\s/.test(s[m.index - 1]);
        if (!cur || (prev && (r.top >= prev.bottom - 1 || r.left < prev.left - 1))) { cur = []; lines.push(cur); }
        cur.push({word: m[0], space: cur.length > 0 && space, rects: rs, node: n});
        prev = rs[rs.length - 1];
        gap = false;
      }
      gap = /\s$/.test(s);
    }
    return lines;
  };
  // A code block's lines are the author's (white-space keeps its newlines): each is a line of its own, not one
  // element "#include <stdio.h> #include <string.h>" that nobody would name. So are the lines a <br> breaks between
  // (the only line break innerText shows of an owner with no other owner inside, where white-space collapses).
  const authoredLines = (owner) => /\n/.test((owner.innerText || '').trim());
  const lineText = (words) => words.map((w, k) => (k && w.space ? ' ' : '') + w.word).join('');
  // A line too long to quote is cut where its text nodes meet (an inline <code>, <b>, <span>: "This program," |
  // "bzip2" | ", the associated library"), the parts a page marks out in it; a part still too long is left out.
  const segments = (line) => {
    if (lineText(line).length <= maxText) return [line];
    const parts = [];
    for (const w of line) {
      if (!parts.length || parts[parts.length - 1][0].node !== w.node) parts.push([]);
      parts[parts.length - 1].push(w);
    }
    return parts;
  };
  const emitLines = (owner, nodes) => {
    for (const line of lineRuns(nodes)) {
      for (const part of segments(line)) {
        const text = lineText(part);
        if (!hasAlnum(text) || text.length > maxText) continue;
        const rects = part.flatMap((w) => w.rects.map(asRect));
        const box = rects.reduce((a, r) => ({l: Math.min(a.l, r.l), t: Math.min(a.t, r.t), r: Math.max(a.r, r.r),
                                             b: Math.max(a.b, r.b)}));
        emit(owner, 'text', [box], {role: 'line', name: text, text, box});
      }
    }
  };
  for (const [owner, nodes] of runs) {
    // "Read about ." of "Read about <a>accessibility</a>." is a fragment (the link is labelled): its lines are
    // emitted instead; a disabled control's text is no target either
    if (owner.closest(DISABLED)) continue;
    if (mixed.has(owner) || authoredLines(owner)) { emitLines(owner, nodes); continue; }
    const text = norm(owner.innerText);
    if (!text || !hasAlnum(text)) continue;
    if (text.length > maxText) { emitLines(owner, nodes); continue; }
    const rects = [];
    for (const n of nodes) {
      range.selectNodeContents(n);
      for (const r of range.getClientRects()) if (r.width >= 1 && r.height >= 1) rects.push(asRect(r));
    }
    if (!rects.length) continue;
    const box = rects.reduce((a, r) => ({l: Math.min(a.l, r.l), t: Math.min(a.t, r.t), r: Math.max(a.r, r.r),
                                         b: Math.max(a.b, r.b)}));
    const r = role(owner);
    emit(owner, 'text', rects, {role: TEXT_ROLES.has(r) ? r : 'text', name: text, text, box});
  }

  // 4. Relations (read by annotators/relations.py only; no text recipe depends on them): per element, `rel` =
  // {region, row, fg, bg, under, bg_image, graphic, up, zoom}. `region`: the innermost landmark that is a top bar,
  // side bar or dialog by its role and geometry ({kind: 'top' | 'side' | 'dialog', id}, nested ones of a kind
  // folded into the outermost), `row`: its table row ({id, text}: the row's text), colours as [r, g, b, a]: its
  // text (`fg`), its own background (`bg`), the first opaque background behind it (`under`); `bg_image`: a
  // background image or gradient (its CSS text: a gradient names its colours); `graphic`: it is or holds an svg /
  // img / icon glyph; `up`: ids of it, its parent and grandparent (what it is grouped with); `zoom`: the page's
  // (its boxes are zoomed by it).
  const rgba = (c) => {
    const m = /rgba?\(([^)]+)\)/.exec(c || '');
    if (!m) return null;
    const p = m[1].split(/[\s,/]+/).filter(Boolean).map(parseFloat);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const REGION_ROLES = new Set(['banner', 'navigation', 'complementary', 'dialog', 'alertdialog', 'search']);
  const regionIds = new Map(), rowIds = new Map(), upIds = new Map();
  const idOf = (map, e) => { if (!map.has(e)) map.set(e, map.size); return map.get(e); };
  const regionKind = (e) => {
    const r = e.computedRole || e.getAttribute('role') || '';
    if (!REGION_ROLES.has(r)) return null;
    if (r === 'dialog' || r === 'alertdialog') return 'dialog';
    const b = e.getBoundingClientRect();
    const v = clipRect(asRect(b), {l: 0, t: 0, r: VW, b: VH});
    if (b.top <= 0.1 * VH && b.bottom > 0 && v.r - v.l >= 0.6 * VW && b.height <= 0.25 * VH) return 'top';
    if (r !== 'search' && v.b - v.t >= 0.5 * VH && v.r - v.l <= 0.35 * VW &&
        (v.l <= 0.05 * VW || v.r >= 0.95 * VW)) return 'side';
    return null;
  };
  const regionOf = (el) => {
    let inner = null;
    for (let e = el.parentElement; e && e !== document.documentElement; e = e.parentElement) {
      const kind = regionKind(e);
      if (!kind) continue;
      if (!inner) inner = {kind, el: e};
      else if (inner.kind === kind) inner = {kind, el: e};  // nested of one kind: the outermost
    }
    return inner && {kind: inner.kind, id: idOf(regionIds, inner.el)};
  };
  const underOf = (el) => {
    for (let e = el.parentElement; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c && c[3] >= 0.9) return c;
    }
    return [255, 255, 255, 1];
  };
  for (let k = 0; k < out.length; k++) {
    const el = outEls[k], cs = getComputedStyle(el);
    const row = el.closest('tr, [role=row]');
    out[k].rel = {
      region: regionOf(el),
      row: row ? {id: idOf(rowIds, row), text: norm(row.innerText)} : null,
      fg: rgba(cs.color), bg: rgba(cs.backgroundColor), under: underOf(el),
      bg_image: cs.backgroundImage === 'none' ? null : cs.backgroundImage.slice(0, 400),
      graphic: ['svg', 'img', 'i'].includes(el.tagName.toLowerCase()) || !!el.querySelector('svg, img, i, [role=img]'),
      up: [el, el.parentElement, el.parentElement?.parentElement].filter(Boolean).map((e) => idOf(upIds, e)),
      zoom: visualViewport.scale,
    };
  }

  // Iframes: where their content shows, for the caller to descend into.
  const frames = [];
  for (const el of document.querySelectorAll('iframe, frame')) {
    if (!styleVisible(el)) continue;
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    const left = r.left + el.clientLeft + parseFloat(cs.paddingLeft);
    const top = r.top + el.clientTop + parseFloat(cs.paddingTop);
    const vis = visiblePart(el, {l: left, t: top, r: left + el.clientWidth - parseFloat(cs.paddingLeft) -
                                 parseFloat(cs.paddingRight),
                                 b: top + el.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom)});
    frames.push({name: el.getAttribute('name') || '', src: el.src || '', offset: [left, top],
                 visible: [vis.l, vis.t, vis.r, vis.b], index: frames.length});
  }
  return {elements: out, frames, nodes: document.getElementsByTagName('*').length, viewport: [VW, VH],
          scroll: [window.scrollX, window.scrollY],
          zoom: [visualViewport.scale, visualViewport.offsetLeft, visualViewport.offsetTop]};
}
"""


def tidy(element: dict) -> dict:
    """An element as :data:`EXTRACT_JS` read it, its names made what a person would say (the Python half of the
    extraction: every reader of elements, labels and exploration, gets them through it).

    * ``name``, ``text``, ``label`` and ``placeholder`` are cleaned (:func:`screenmill.annotators.wording.printable`:
      icon-font glyphs of the Private Use Area and unprintable code points out): Chromium's name of a link with a
      Font Awesome ``::before`` glyph, ``"\\uf03e Photos"``, is ``"Photos"``; an icon-only button named ``"\\uf002"``
      is left with the name ``""``, an icon without a name (no text recipe labels it).
    * a control whose name is the names of its images (``alts``) around its visible text (a logo link:
      ``<a><img alt="Acme Logo">Acme</a>`` is named ``"Acme Logo Acme"``) is named by its visible text; the image
      names dropped stay in ``alt`` (None when nothing was dropped).

    Args:
        element: one element dict of :data:`EXTRACT_JS` (``alts``: its images' names, controls only).

    Returns:
        A new dict, the same keys plus ``alt``.
    """
    el = {**element}
    for key in ("name", "text", "label", "placeholder"):
        el[key] = None if el.get(key) is None else printable(el[key])
    el["alts"] = [a for a in (printable(a) for a in el.get("alts") or ()) if a]
    el["alt"], name, text = None, el["name"], el["text"]
    if el["alts"] and name and text and name.casefold() != text.casefold():
        rest, dropped = name, []
        for alt in el["alts"]:
            if rest.casefold().startswith(alt.casefold() + " "):
                rest = rest[len(alt) :].strip()
            elif rest.casefold().endswith(" " + alt.casefold()):
                rest = rest[: -len(alt)].strip()
            else:
                continue
            dropped.append(alt)
        if dropped and rest.casefold() == text.casefold():
            el["name"], el["alt"] = text, " ".join(dropped)
    return el


#: Whether the frame's iframe element ``index`` (in ``document.querySelectorAll('iframe, frame')`` order) is what a
#: click at each of ``points`` (parent-frame CSS px) hits: a child frame's element is kept only where this is true.
FRAME_HITS_JS = r"""
([index, points]) => {
  const el = document.querySelectorAll('iframe, frame')[index];
  return points.map(([x, y]) => !!el && document.elementFromPoint(x, y) === el);
}
"""
