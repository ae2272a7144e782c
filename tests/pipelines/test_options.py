"""``--dom-recipes``: the DOM recipe mix of a pages run, and what it does to the run's config hash."""

from __future__ import annotations

from pathlib import Path

import pytest
from screenmill.pipelines.options import run_configs
from screenmill.pipelines.run import build_parser

SAMPLES = str(Path(__file__).resolve().parents[2] / "samples" / "pages")


def _hash(*argv: str) -> str:
    args, _ = build_parser().parse_known_args(["--output", "out", "--pages", SAMPLES, *argv])
    return run_configs(args, "20261123T154538Z-a1b2c3", False).config_hash


def test_the_default_mix_is_the_text_recipes_and_keeps_the_hash():
    args, _ = build_parser().parse_known_args(["--output", "out", "--pages", SAMPLES])
    render = run_configs(args, "r", False).render
    assert render.dom_recipes == ("text",) and "dom_recipe_mix" not in render.hash_view()
    assert _hash() == _hash("--dom-recipes", "text")


def test_each_other_mix_has_a_hash_of_its_own():
    mixes = ["text", "text,relational", "text,visual", "text,icon", "text,relational,visual,icon", "relational"]
    assert len({_hash("--dom-recipes", m) for m in mixes}) == len(mixes)


def test_an_unknown_family_is_one_clear_line(capsys):
    with pytest.raises(SystemExit) as exit_:
        _hash("--dom-recipes", "text,colour")
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "--dom-recipes: must be among text, relational, visual, icon, got colour" in err
