"""The documentation: the README is a short front door with the two set-up commands on its first screen, CI runs the
README's test command, and every relative link of README.md and docs/*.md leads to a file (and heading) that exists."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_README_LINES = 200
FIRST_SCREEN_LINES = 24
#: The README's two commands, exactly: the main job on samples/ and the tests (``.ci/run`` runs the second).
MAIN_JOB = (
    "bash infra/setup.sh && .venv/bin/screenmill run --input samples --pages samples/pages --apps samples/apps.txt"
    " --output out   # main job (CPU)"
)
TESTS = "bash infra/test.sh" + " " * 107 + "# the tests"
TEST_COMMAND = "bash infra/test.sh"

_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^(```|~~~)")


def _pages() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def _prose(text: str) -> str:
    """``text`` without its fenced code blocks and inline code spans (no links there)."""
    out, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    found, fenced = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line.strip()):
            fenced = not fenced
        elif not fenced and (m := re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)):
            found.add(_anchor(m.group(1)))
    return found


def test_the_readme_is_a_front_door():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; move detail into docs/"


def test_the_first_screen_holds_the_two_commands():
    first = README.read_text(encoding="utf-8").splitlines()[:FIRST_SCREEN_LINES]
    assert MAIN_JOB in first
    assert TESTS in first
    assert first.index(TESTS) == first.index(MAIN_JOB) + 1  # one block: the job, then the tests


def test_ci_runs_the_readmes_test_command():
    commands = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert any(TEST_COMMAND in line for line in commands), commands


def test_every_relative_link_leads_somewhere():
    broken = []
    for page in _pages():
        for target in _LINK.findall(_prose(page.read_text(encoding="utf-8"))):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
                continue
            path, _, fragment = target.partition("#")
            dest = (page.parent / unquote(path)).resolve() if path else page
            if not dest.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif fragment and dest.suffix == ".md" and fragment not in _anchors(dest):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_the_link_checker_sees_links():
    # a guard on the checker itself: it finds the README's links into docs/ and GitHub's anchors
    targets = _LINK.findall(_prose(README.read_text(encoding="utf-8")))
    assert "docs/reason-codes.md" in targets and len(targets) >= 10
    heading = "Where the time goes: the manifest's `accounting`"
    assert _anchor(heading) == "where-the-time-goes-the-manifests-accounting"
    assert _anchor("Packed localize requests (`--pack 8`)") == "packed-localize-requests---pack-8"
