"""``infra/truthset/generate.py``: seeded self-made pages, sites of whole seed ranges, families held out whole."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from tests.infra.test_truthset import _load


class _Texts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.texts: list[tuple[str, str]] = []  # (innermost tag, text)

    def handle_starttag(self, tag, attrs):
        if tag not in ("meta", "input", "br"):
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self.stack:
            del self.stack[len(self.stack) - 1 - self.stack[::-1].index(tag) :]

    def handle_data(self, data):
        if data.strip() and self.stack:
            self.texts.append((self.stack[-1], data.strip()))


def test_pages_are_deterministic_and_hold_the_shapes_ocr_misses(tmp_path):
    gen = _load("generate")
    assert gen.page_html("docs", 3) == gen.page_html("docs", 3)
    assert gen.page_html("docs", 3) != gen.page_html("docs", 4)
    texts, styles = [], []
    for family in gen.FAMILIES:
        for seed in range(4):
            page = gen.page_html(family, seed)
            parser = _Texts()
            parser.feed(page)
            texts += parser.texts
            styles.append(re.search(r"<style>(.*)</style>", page).group(1))
    links = [t for tag, t in texts if tag == "a"]
    assert any(g in t for t in links for g in "→›»↗") and any(g in t for t in links for g in "←‹«")  # glyph links
    assert any(re.search(r"\d+\.\d+\.\d+", t) for _, t in texts)  # version strings
    assert any(tag == "h1" and len(t.split()) >= 5 for tag, t in texts)  # headings long enough to wrap
    assert (
        all("font-family:" in s for s in styles)
        and len({re.search(r"font-family:([^;]+)", s)[1] for s in styles}) >= 4
    )
    dark = [s for s in styles if re.search(r"background:#(0d1117|111827|1e1b2e|002b36)}", s)]
    assert dark and len(dark) < len(styles)  # dark themes and light ones
    assert "http" not in "".join(styles) and "<script" not in gen.page_html("forum", 1)  # nothing to fetch or run


def test_generate_writes_sites_of_whole_seed_ranges_and_holds_families_out(tmp_path):
    gen = _load("generate")
    (tmp_path / "pages.jsonl").write_text(json.dumps({"path": "m4/a.html", "site": "m4", "split": "fresh"}) + "\n")
    records = gen.generate(tmp_path, sites_per_family=2)
    lines = [json.loads(x) for x in (tmp_path / "pages.jsonl").read_text().splitlines()]
    assert lines[0]["site"] == "m4" and lines[1:] == records  # appended to what was there
    assert len(records) == len(gen.FAMILIES) * 2 * gen.SEEDS_PER_SITE
    assert all((tmp_path / r["path"]).is_file() for r in records)
    split_of_site = {}
    for r in records:
        assert split_of_site.setdefault(r["site"], r["split"]) == r["split"]  # a site never straddles the splits
    family_splits = {r["source"].split(":")[1]: r["split"] for r in records}
    assert {f for f, s in family_splits.items() if s == "fresh"} == set(gen.FRESH_FAMILIES)
    assert set(gen.DEV_FAMILIES).isdisjoint(gen.FRESH_FAMILIES) and set(gen.DEV_FAMILIES) | set(
        gen.FRESH_FAMILIES
    ) == set(gen.FAMILIES)
    again = gen.generate(tmp_path, sites_per_family=2)  # idempotent: records replaced, not doubled
    assert len((tmp_path / "pages.jsonl").read_text().splitlines()) == len(again) + 1
    with pytest.raises(ValueError):
        gen.generate(tmp_path, families=("nope",))
    assert gen.main([str(tmp_path), "--sites-per-family", "0"]) == 2
    more = gen.generate(tmp_path / "c", sites_per_family=1, families=("docs",), first_site=2)
    assert {r["site"] for r in more} == {"gen-docs-c"} and {r["path"] for r in more} == {
        f"gen-docs-c/page-{s}.html" for s in range(8, 12)
    }


def test_fresh_debian_sites_are_their_own_split():
    collect = _load("collect")
    assert {collect.split_of(s.name) for s in collect.FRESH_SITES} == {"fresh"}
    used = {s.name for s in collect.SITES + collect.DEB_DEV_SITES + collect.MDBOOK_SITES}
    assert used.isdisjoint(collect.FRESH_SITE_NAMES)
