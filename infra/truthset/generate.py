"""Self-made pages for the OCR grouping's training data: seeded style families with the shapes OCR misses.

Issue 50's misses on unseen pages were headings wrapped over two lines, links with arrow or glyph characters,
version strings, short links in tab bars and footers, small or pale text on coloured backgrounds. This module
writes pages made of exactly those shapes (plus tables, cards, buttons, dark themes, several installed fonts), so
the pair table of :mod:`screenmill.annotators.ocr_learn` sees them with DOM truth. Everything is drawn from a
``random.Random(f"{family}:{seed}")``: the same family and seed give the same bytes on every machine.

A *site* is one style family and a seed range (``gen-<family>-<letter>``: seeds ``4*k .. 4*k+3``), so a site never
straddles the splits. :data:`DEV_FAMILIES` give the dev sites; :data:`FRESH_FAMILIES` are held out entirely (split
``fresh``, never trained or tuned on: score them once per model change). Render and dump as the truth set::

    python infra/truthset/generate.py /work/gen                 # pages + pages.jsonl (appends to an existing one)
    screenmill run --pages /work/gen --viewports 1280x800,390x844@3m --annotator none --output /work/gen-truth

The pages use no network, no script and only the fonts ``infra/setup.sh`` installs (DejaVu, Noto CJK).
"""

from __future__ import annotations

import argparse
import html
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path

#: Installed font stacks (``infra/setup.sh``): a page takes one for its body and maybe another for headings.
FONTS = (
    '"DejaVu Sans",sans-serif',
    '"DejaVu Serif",serif',
    '"DejaVu Sans Condensed","DejaVu Sans",sans-serif',
    '"Noto Sans CJK SC",sans-serif',
    '"Noto Serif CJK SC",serif',
    '"DejaVu Sans Light","DejaVu Sans",sans-serif',
)
MONO = '"DejaVu Sans Mono",monospace'
#: Glyphs links and buttons carry in the wild (before or after their words).
GLYPHS = ("→", "›", "»", "↗", "▸", "←", "‹", "«", "+", "×", "✓", "★", "…", "↓")
#: Light and dark palettes: background, surface, text, muted text, accent, accent text.
PALETTES = (
    ("#ffffff", "#f4f6f8", "#1d2430", "#7a8494", "#2563eb", "#ffffff"),
    ("#fffdf8", "#f3ede2", "#2d2a26", "#9a948a", "#2f4f3a", "#f4f1e8"),
    ("#f7f7fb", "#e9e7f5", "#24213a", "#8b87a8", "#6d28d9", "#ffffff"),
    ("#fdf6f6", "#f7e4e4", "#3a1f1f", "#b08f8f", "#b91c1c", "#fff5f5"),
    ("#eef7f3", "#d9eee5", "#12372a", "#6f9a89", "#0f766e", "#e7fff8"),
    ("#111827", "#1f2937", "#e5e7eb", "#6b7280", "#60a5fa", "#0b1220"),
    ("#0d1117", "#161b22", "#c9d1d9", "#6e7681", "#f78166", "#0d1117"),
    ("#1e1b2e", "#2a2640", "#e8e6f3", "#8e89ab", "#f5c542", "#1e1b2e"),
    ("#002b36", "#073642", "#93a1a1", "#586e75", "#b58900", "#002b36"),
)
WORDS = (
    "account billing cluster deploy export filter gateway history import invoice journal kernel ledger metric "
    "network option payment queue record storage ticket upload vendor widget archive backup channel domain event "
    "folder group insight license member notice policy report schedule session template volume workflow"
).split()
NAMES = "Acme Borealis Cobalt Driftwood Ember Fathom Granite Harbor Ironleaf Juniper Kestrel Lumen Meridian".split()
PLACES = "Oslo Lisbon Austin Kyoto Nairobi Quito Tallinn Perth Denver Porto Dublin Hanoi".split()


class Page:
    """One page being drawn: the seeded random source, its palette and fonts, and helpers for texts."""

    def __init__(self, family: str, seed: int) -> None:
        self.rng = random.Random(f"{family}:{seed}")
        r = self.rng
        self.bg, self.surface, self.fg, self.muted, self.accent, self.on_accent = r.choice(PALETTES)
        self.font, self.head_font = r.choice(FONTS), r.choice(FONTS)
        self.size = r.choice((12, 13, 14, 15, 16, 17))
        self.pale = r.random() < 0.5  # muted text paler still: the "small or pale text" misses
        self.radius = r.choice((0, 3, 6, 12, 20))
        self.header_bg = r.choice((self.surface, self.accent, self.bg))
        self.header_ink = self.on_accent if self.header_bg == self.accent else self.fg
        self.style = self._css()

    def words(self, lo: int, hi: int, cap: bool = True) -> str:
        text = " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(lo, hi)))
        return text[:1].upper() + text[1:] if cap else text

    def version(self) -> str:
        r = self.rng
        v = f"{r.randint(0, 12)}.{r.randint(0, 40)}.{r.randint(0, 19)}"
        return r.choice((f"v{v}", v, f"{v}-rc.{r.randint(1, 4)}", f"Version {v}", f"{v} LTS", f"release {v}"))

    def glyph_text(self, text: str) -> str:
        g = self.rng.choice(GLYPHS)
        return f"{g} {text}" if g in "←‹«+×✓★" else f"{text} {g}"

    def link(self, text: str, cls: str = "") -> str:
        c = f' class="{cls}"' if cls else ""
        return f'<a href="#"{c}>{html.escape(text)}</a>'

    def money(self) -> str:
        r = self.rng
        return r.choice(("$", "€", "£", "")) + f"{r.randint(1, 999)}.{r.choice(('00', '50', '99', '95'))}"

    def date(self) -> str:
        r = self.rng
        month = r.choice("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split())
        return r.choice(
            (
                f"{month} {r.randint(1, 28)}, 20{r.randint(19, 26)}",
                f"20{r.randint(19, 26)}-0{r.randint(1, 9)}-1{r.randint(0, 9)}",
            )
        )

    def _css(self) -> str:
        s, m, r = self.size, self.muted, self.rng
        pale = "opacity:.72;" if self.pale else ""
        return (
            f"body{{margin:0;font-family:{self.font};font-size:{s}px;color:{self.fg};background:{self.bg}}}"
            f"h1,h2,h3{{font-family:{self.head_font};line-height:1.2}}"
            f"a{{color:{self.accent};text-decoration:{self.rng.choice(('none', 'underline', 'none'))}}}"
            f".muted{{color:{m};font-size:{max(10, s - self.rng.choice((1, 2, 3, 4)))}px;{pale}}}"
            f".btn{{display:inline-block;padding:{self.rng.choice((4, 6, 8, 10))}px {self.rng.choice((8, 12, 16))}px;"
            f"border-radius:{self.radius}px;background:{self.accent};color:{self.on_accent};border:0;"
            f"font:inherit;text-decoration:none;margin:4px}}"
            f".btn.ghost{{background:transparent;color:{self.accent};border:1px solid {self.accent}}}"
            f".card{{background:{self.surface};border-radius:{self.radius}px;padding:14px;margin:8px}}"
            f".tabs{{display:flex;gap:{self.rng.choice((4, 12, 20, 28))}px;border-bottom:1px solid {m};"
            f"padding:0 16px;flex-wrap:wrap}}"
            f".tabs a{{padding:8px 2px;font-size:{max(11, s - 1)}px}}"
            f".tabs a.on{{border-bottom:2px solid {self.accent};font-weight:bold}}"
            f".badge{{display:inline-block;padding:1px 6px;border-radius:9px;font-size:{max(9, s - 4)}px;"
            f"background:{self.rng.choice(('#fde68a', '#bbf7d0', '#fecaca', '#c7d2fe', '#e5e7eb'))};color:#334}}"
            f"table{{border-collapse:collapse;margin:8px 16px}}td,th{{padding:6px 12px;text-align:left;"
            f"border-bottom:1px solid {self.surface}}}th{{color:{m}}}"
            f"footer{{padding:18px 24px;background:{self.surface};display:flex;flex-wrap:wrap;gap:16px;"
            f"font-size:{max(10, s - 2)}px}}footer a{{color:{m}}}"
            f"code,pre{{font-family:{MONO};font-size:{max(11, s - 1)}px}}"
            f".grid{{display:grid;grid-template-columns:repeat(auto-fill,minmax({r.choice((180, 220, 260))}px,1fr))}}"
            f"header{{display:flex;align-items:center;gap:18px;padding:12px 24px;flex-wrap:wrap;"
            f"background:{self.header_bg};color:{self.header_ink}}}"
            f"header a{{color:{self.header_ink}}}"
            f"main{{padding:8px 24px}}"
        )


def header(p: Page) -> str:
    links = "".join(p.link(p.words(1, 2)) for _ in range(p.rng.randint(3, 6)))
    extra = p.link(p.glyph_text("Sign in"), "btn") if p.rng.random() < 0.6 else ""
    return f"<header><strong>{p.rng.choice(NAMES)} {p.words(1, 1)}</strong>{links}{extra}</header>"


def tabs(p: Page) -> str:
    n = p.rng.randint(3, 7)
    on = p.rng.randrange(n)
    items = [p.words(1, 2) + (f" ({p.rng.randint(1, 99)})" if p.rng.random() < 0.3 else "") for _ in range(n)]
    return '<nav class="tabs">' + "".join(p.link(t, "on" if i == on else "") for i, t in enumerate(items)) + "</nav>"


def wrapping_heading(p: Page) -> str:
    # a long heading in a narrow box: it wraps over two or three lines (one element, several OCR lines)
    width = p.rng.choice((240, 300, 360, 420))
    size = p.rng.choice((22, 26, 30, 34))
    return f'<h1 style="max-width:{width}px;font-size:{size}px">{html.escape(p.words(5, 9))}</h1>'


def cards(p: Page) -> str:
    out = []
    for _ in range(p.rng.randint(3, 6)):
        badge = f'<span class="badge">{html.escape(p.rng.choice(("New", "Beta", "Pro", p.version())))}</span>'
        out.append(
            f'<div class="card"><h3 style="margin:4px 0">{html.escape(p.words(2, 5))}</h3>{badge}'
            f'<p class="muted">{html.escape(p.words(6, 14))}</p>'
            f"{p.link(p.glyph_text(p.rng.choice(('Learn more', 'Read the guide', 'Details', 'Open'))))}"
            f'<div><a class="btn" href="#">{html.escape(p.words(1, 2))}</a>'
            f'<a class="btn ghost" href="#">{html.escape(p.words(1, 2))}</a></div></div>'
        )
    return '<div class="grid">' + "".join(out) + "</div>"


def table(p: Page) -> str:
    cols = p.rng.randint(3, 5)
    head = "".join(f"<th>{html.escape(p.words(1, 2))}</th>" for _ in range(cols))
    cells = (
        lambda: p.link(p.words(1, 3)),
        lambda: html.escape(p.version()),
        lambda: html.escape(p.money()),
        lambda: html.escape(p.date()),
        lambda: f'<span class="badge">{html.escape(p.words(1, 1))}</span>',
        lambda: f'<span class="muted">{html.escape(p.words(1, 3, cap=False))}</span>',
    )
    kinds = [p.rng.choice(cells) for _ in range(cols)]
    rows = "".join("<tr>" + "".join(f"<td>{k()}</td>" for k in kinds) + "</tr>" for _ in range(p.rng.randint(4, 9)))
    return f"<table><tr>{head}</tr>{rows}</table>"


def footer(p: Page) -> str:
    links = [p.rng.choice(("Terms", "Privacy", "Docs", "API", "Help", "Status", "Blog", "Jobs", "FAQ", "RSS"))]
    links += [p.words(1, 1) for _ in range(p.rng.randint(3, 8))]
    tail = f'<span class="muted">© 20{p.rng.randint(15, 26)} {p.rng.choice(NAMES)} · {html.escape(p.version())}</span>'
    return "<footer>" + "".join(p.link(t) for t in links) + tail + "</footer>"


def sidebar_doc(p: Page) -> str:
    nav = "".join(
        f"<li>{p.link(p.glyph_text(p.words(1, 3)) if p.rng.random() < 0.3 else p.words(1, 3))}</li>"
        for _ in range(p.rng.randint(6, 12))
    )
    body = "".join(
        f"<h2>{html.escape(p.words(2, 6))}</h2><p>{html.escape(p.words(14, 30))} {p.link(p.words(1, 3, cap=False))}"
        f" {html.escape(p.words(4, 10, cap=False))}.</p>"
        + (
            f"<pre>$ {p.words(1, 1, cap=False)} --{p.words(1, 1, cap=False)} {html.escape(p.version())}</pre>"
            if p.rng.random() < 0.5
            else ""
        )
        for _ in range(p.rng.randint(2, 4))
    )
    ver = f'<p class="muted">{html.escape(p.version())} · {html.escape(p.date())}</p>'
    return (
        f'<div style="display:flex;gap:24px;padding:0 16px"><ul style="list-style:none;padding:0;min-width:170px">'
        f"{nav}</ul><div>{wrapping_heading(p)}{ver}{body}</div></div>"
    )


def form(p: Page) -> str:
    rows = []
    for _ in range(p.rng.randint(3, 6)):
        label = html.escape(p.words(1, 3))
        kind = p.rng.choice(("text", "checkbox", "select", "toggle"))
        if kind == "text":
            field = f'<input type="text" placeholder="{html.escape(p.words(1, 2))}" style="font:inherit">'
        elif kind == "checkbox":
            field = f'<label><input type="checkbox"> {html.escape(p.words(2, 4))}</label>'
        elif kind == "select":
            field = f'<select style="font:inherit"><option>{html.escape(p.words(1, 2))}</option></select>'
        else:
            field = (
                f'<button class="btn ghost">{html.escape(p.rng.choice(("On", "Off", "Enabled", "Disabled")))}</button>'
            )
        rows.append(f'<div style="margin:10px 0"><div class="muted">{label}</div>{field}</div>')
    buttons = f'<a class="btn" href="#">{p.glyph_text("Save")}</a><a class="btn ghost" href="#">Cancel</a>'
    return '<div class="card" style="max-width:520px">' + "".join(rows) + buttons + "</div>"


def hero(p: Page) -> str:
    band, ink = p.rng.choice(
        (
            (p.accent, p.on_accent),
            (p.surface, p.fg),
            ("#fde68a", "#78350f"),
            ("#0f172a", "#cbd5e1"),
            ("#e0f2fe", "#0369a1"),
        )
    )
    pale = p.rng.choice(("opacity:.6", "opacity:.8", ""))
    return (
        f'<section style="background:{band};color:{ink};padding:28px 24px">{wrapping_heading(p)}'
        f'<p style="{pale};font-size:{max(10, p.size - 2)}px">{html.escape(p.words(6, 14))}</p>'
        f'<a class="btn" href="#">{html.escape(p.glyph_text(p.words(1, 2)))}</a>'
        f'<a href="#" style="color:{ink};margin-left:12px">{html.escape(p.glyph_text(p.words(1, 3)))}</a></section>'
    )


def feed(p: Page) -> str:
    items = []
    for _ in range(p.rng.randint(4, 8)):
        items.append(
            f'<div style="padding:10px 0;border-bottom:1px solid {p.surface}">'
            f'{p.link(p.words(3, 9))} <span class="badge">{html.escape(p.words(1, 1))}</span>'
            f'<div class="muted">{html.escape(p.rng.choice(NAMES))} · {html.escape(p.date())} · '
            f"{p.rng.randint(0, 300)} replies · {p.link(p.glyph_text('reply'))}</div></div>"
        )
    return "<div>" + "".join(items) + "</div>"


def pricing(p: Page) -> str:
    out = []
    for name in p.rng.sample(("Free", "Starter", "Team", "Business", "Enterprise", "Hobby"), p.rng.randint(2, 4)):
        feats = "".join(f"<li>{html.escape(p.glyph_text(p.words(2, 4)))}</li>" for _ in range(p.rng.randint(3, 5)))
        out.append(
            f'<div class="card"><h3>{name}</h3><div style="font-size:28px">{html.escape(p.money())}'
            f'<span class="muted">/mo</span></div><ul>{feats}</ul><a class="btn" href="#">'
            f"{html.escape(p.rng.choice(('Start trial', 'Choose plan', 'Contact sales')))}</a></div>"
        )
    return '<div class="grid">' + "".join(out) + "</div>"


#: Each family: the sections of its pages in order (one section function may be drawn or not by the seed).
FAMILIES: dict[str, tuple[Callable[[Page], str], ...]] = {
    "docs": (header, sidebar_doc, footer),
    "landing": (header, hero, cards, footer),
    "dashboard": (header, tabs, cards, table, footer),
    "store": (header, tabs, cards, footer),
    "settings": (header, tabs, form, table, footer),
    "blog": (header, wrapping_heading, feed, footer),
    "pricing": (header, hero, pricing, table, footer),
    "forum": (header, tabs, wrapping_heading, feed, table, footer),
}
#: Families of the dev split (train + leave-one-site-out); the others are held out whole (split ``fresh``).
DEV_FAMILIES = ("docs", "landing", "dashboard", "store", "settings", "blog")
FRESH_FAMILIES = ("pricing", "forum")
SEEDS_PER_SITE = 4


def page_html(family: str, seed: int) -> str:
    """The page of one family and seed (deterministic)."""
    p = Page(family, seed)
    body = "".join(section(p) for section in FAMILIES[family])
    title = html.escape(f"{p.rng.choice(NAMES)} {family} {seed}")
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
        f'content="width=device-width,initial-scale=1"><title>{title}</title><style>{p.style}</style></head>'
        f"<body>{body}</body></html>\n"
    )


def site_of(family: str, seed: int) -> str:
    """The site of a family's seed: ``gen-<family>-a`` for seeds 0-3, ``-b`` for 4-7, ..."""
    return f"gen-{family}-{chr(ord('a') + seed // SEEDS_PER_SITE)}"


def generate(
    out: Path, sites_per_family: int = 2, families: tuple[str, ...] = tuple(FAMILIES), first_site: int = 0
) -> list[dict]:
    """Write every family's pages (``sites_per_family`` sites of :data:`SEEDS_PER_SITE` seeds, from site number
    ``first_site``: 0 is ``-a``) under ``out`` and append their manifest records to ``out/pages.jsonl`` (replacing
    earlier records of the same paths).

    Raises:
        ValueError: an unknown family, or fewer than one site per family.
    """
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown or sites_per_family < 1 or not 0 <= first_site < 26 - sites_per_family:
        raise ValueError(f"unknown families {unknown}, or sites {first_site} + {sites_per_family} not within a-z")
    records = []
    for family in families:
        for seed in range(first_site * SEEDS_PER_SITE, (first_site + sites_per_family) * SEEDS_PER_SITE):
            site = site_of(family, seed)
            path = f"{site}/page-{seed}.html"
            (out / site).mkdir(parents=True, exist_ok=True)
            (out / path).write_text(page_html(family, seed), encoding="utf-8")
            split = "dev" if family in DEV_FAMILIES else "fresh"
            records.append(
                {
                    "path": path,
                    "site": site,
                    "source": f"generated:{family}:{seed}",
                    "licence": "Apache-2.0",
                    "split": split,
                }
            )
    manifest = out / "pages.jsonl"
    mine = {r["path"] for r in records}
    old = []
    if manifest.is_file():
        old = [json.loads(x) for x in manifest.read_text(encoding="utf-8").splitlines() if x.strip()]
    with open(manifest, "w", encoding="utf-8") as f:
        for r in [r for r in old if r["path"] not in mine] + records:
            f.write(json.dumps(r) + "\n")
    return records


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="folder to fill (pages, pages.jsonl)")
    ap.add_argument("--sites-per-family", type=int, default=2, help="sites of 4 seeds per family (default 2)")
    ap.add_argument("--first-site", type=int, default=0, help="number of the first site (0: -a, the default)")
    args = ap.parse_args(argv)
    if args.sites_per_family < 1 or not 0 <= args.first_site < 26 - args.sites_per_family:
        print("generate: --sites-per-family must be at least 1, and the sites within a-z", file=sys.stderr)
        return 2
    records = generate(args.out, args.sites_per_family, first_site=args.first_site)
    for split in ("dev", "fresh"):
        sites = sorted({r["site"] for r in records if r["split"] == split})
        print(f"{split}: {sum(r['split'] == split for r in records)} pages of {len(sites)} sites: {', '.join(sites)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
