"""The ``--apps`` file's lines and the display specs (no session needed)."""

from __future__ import annotations

import pytest
from screenmill.annotators.desktop.apps import AppSpec, package_of, parse_app_line, parse_display
from screenmill.annotators.dom.page import Viewport


def test_the_three_line_forms():
    assert parse_app_line("  # a comment") is None and parse_app_line("   ") is None
    assert parse_app_line("mousepad '/data/my notes.txt'") == AppSpec("mousepad", ("mousepad", "/data/my notes.txt"))
    assert parse_app_line("calc-big: galculator --x") == AppSpec("calc-big", ("galculator", "--x"))
    line = '{"name": "de", "command": "gnome-calculator", "env": {"LANG": "de_DE.UTF-8"}, "display": "800x600@2"}'
    assert parse_app_line(line) == AppSpec(
        "de", ("gnome-calculator",), (("LANG", "de_DE.UTF-8"),), Viewport(800, 600, 2)
    )
    assert parse_app_line('{"command": ["/usr/bin/speedcrunch"]}').name == "speedcrunch"


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("{not json", "not JSON"),
        ('{"name": "x"}', "needs a"),
        ('{"command": 3}', "must be a string or a list"),
        ('{"command": ["a"], "env": {"A": 1}}', '"env" must map'),
        ('{"command": ["a"], "display": "390x844@3m"}', "mobile"),
        ('{"name": "a b", "command": ["a"]}', "letters, digits"),
        ("x 'unclosed", "No closing quotation"),
    ],
)
def test_bad_lines_say_why(line, why):
    with pytest.raises(ValueError, match=why):
        parse_app_line(line)


def test_displays_are_viewports_without_mobile():
    assert parse_display("1920x1080@2") == Viewport(1920, 1080, 2.0)
    with pytest.raises(ValueError):
        parse_display("1920x")


def test_package_of_an_executable_not_packaged():
    assert package_of("no-such-command-here") == (None, None)
