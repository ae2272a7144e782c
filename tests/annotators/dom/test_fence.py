"""The request fence of a rendered page (:mod:`screenmill.annotators.dom.fence`) without a browser; what it blocks
in one is tested in ``test_browser.py``."""

from __future__ import annotations

import re

from screenmill.annotators.dom.fence import Fence


def test_fast_pattern_leaves_to_the_driver_only_safe_file_urls_under_a_root_without_escaping_symlinks(tmp_path):
    root = tmp_path / "site"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.css").write_text("p{}", encoding="utf-8")
    (root / "inner.css").symlink_to(root / "sub" / "a.css")  # a symlink that stays inside is fine
    pattern = Fence(f"file://{root}/p.html", str(root), ()).fast_pattern({})
    asks = lambda url: bool(re.search(pattern, url))  # noqa: E731 - matched: the fence's callback decides
    for url in (f"file://{root}/p.html", f"file://{root}/sub/a.css", f"file://{root}/inner.css", "data:,x"):
        assert not asks(url), url
    for url in (
        f"file://{root}/../secret.png",
        f"file://{root}/sub/../../secret.png",
        f"file://{root}/%2e%2e/secret.png",
        f"file://{root}/.hidden",
        f"file://{root}/a.png?x=1",
        f"file://{root}x/a.png",
        f"file://{tmp_path}/secret.png",
        "http://example.invalid/a.png",
        "ws://example.invalid/",
    ):
        assert asks(url), url
    (root / "out.png").symlink_to(tmp_path / "secret.png")  # a symlink that leaves the root: every request is asked
    assert Fence(f"file://{root}/p.html", str(root), ()).fast_pattern({}) == "**/*"
    assert Fence("https://example.com/", None, ()).fast_pattern({}) == "**/*"
