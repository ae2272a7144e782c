import io

import numpy as np
import pytest
from PIL import Image
from screenmill.schemas.images import ImageLimits, ImageRejected, inspect_image, load_rgb

from tests.conftest import bomb_png, png_bytes, ui_image, write_bad_inputs


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bad")
    expected = write_bad_inputs(folder)
    return {name: ((folder / name).read_bytes(), reason) for name, reason in expected.items()}


def test_each_bad_input_has_its_reason(cases):
    for name, (data, reason) in cases.items():
        if reason in (None, "duplicate", "unsupported_format"):
            continue
        with pytest.raises(ImageRejected) as err:
            inspect_image(data)
        assert err.value.reason == reason, name


def test_accepted_inputs_decode_to_rgb_of_the_reported_size(cases):
    for name in ("good.png", "sixteen_bit.png", "cmyk.jpg", "palette_alpha.png", "exif_rotated.jpg", "good.webp"):
        data, _ = cases[name]
        info = inspect_image(data)
        im = load_rgb(data)
        assert im.mode == "RGB", name
        assert im.size == (info.width, info.height), name


def test_exif_orientation_swaps_the_frame(cases):
    info = inspect_image(cases["exif_rotated.jpg"][0])
    assert (info.width, info.height, info.orientation) == (200, 400, 6)


def test_png_exif_orientation_is_read_without_decoding_pixels():
    exif = Image.Exif()
    exif[0x0112] = 8
    data = png_bytes(ui_image(400, 200), exif=exif)
    assert b"eXIf" in data
    info = inspect_image(data)
    assert (info.width, info.height, info.orientation) == (200, 400, 8)
    assert load_rgb(data).size == (200, 400)
    # without an eXIf chunk the orientation is the identity
    plain = inspect_image(png_bytes(ui_image(400, 200)))
    assert (plain.width, plain.height, plain.orientation) == (400, 200, 1)


def test_sixteen_bit_keeps_its_dynamic_range():
    arr = np.linspace(0, 65535, 256 * 64).reshape(64, 256).astype(np.uint16)
    im = load_rgb(png_bytes(Image.fromarray(arr)))
    got = np.asarray(im)[..., 0]
    assert got.min() == 0 and got.max() == 255  # not clipped to white, not crushed to black


def test_alpha_is_composited_on_white():
    im = Image.new("RGBA", (64, 64), (0, 0, 0, 0))
    rgb = np.asarray(load_rgb(png_bytes(im)))
    assert (rgb == 255).all()


def test_limits_are_configurable_and_checked():
    data = png_bytes(ui_image(640, 400))
    with pytest.raises(ImageRejected) as err:
        inspect_image(data, ImageLimits(max_pixels=640 * 400 - 1))
    assert err.value.reason == "decompression_bomb"
    with pytest.raises(ImageRejected) as err:
        inspect_image(data, ImageLimits(max_side=600))
    assert err.value.reason == "too_large"
    with pytest.raises(ValueError):
        ImageLimits(min_side=0)
    with pytest.raises(ValueError):
        ImageLimits(formats=("GIF",))


def test_bomb_is_refused_before_decoding():
    with pytest.raises(ImageRejected) as err:
        inspect_image(bomb_png(100_000, 100_000))
    assert err.value.reason == "decompression_bomb"


def test_truncated_jpeg_is_caught():
    buf = io.BytesIO()
    ui_image(800, 600).save(buf, "JPEG", quality=95)
    data = buf.getvalue()
    with pytest.raises(ImageRejected) as err:
        inspect_image(data[: len(data) * 2 // 3])
    assert err.value.reason == "truncated"
