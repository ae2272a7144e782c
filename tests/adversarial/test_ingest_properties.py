"""Property tests for ingest: whatever an episode manifest or a file name holds, every input ends in exactly one
storable record (a screenshot or a dead letter), the counts add up, and nothing raises.

The DoFn runs directly (no pipeline), so hypothesis can try hundreds of manifests in seconds; the records are then
converted to their explicit Arrow schemas the way the writer does (a lone surrogate or an int over int32 fails there).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from apache_beam.pvalue import TaggedOutput
from screenmill.pipelines.selftest.fixtures import encode, ui
from screenmill.schemas.records import Screenshot
from screenmill.stages.store.input_guard import check_local_file, input_root, printable

from tests.adversarial.ingest_fn import assert_storable, ingest

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies
given, settings, HealthCheck = hypothesis.given, hypothesis.settings, hypothesis.HealthCheck

GOOD = encode(ui(1), "PNG")
NAMES = ["a.png", "../a.png", "/etc/hostname", "sub", "missing.png", "\udcff.png", "a.png\x00", ".", "", "sub/b.png"]
text = st.text(max_size=8) | st.sampled_from(["\udcff", "a\ud800b", "\x00", "é" * 3])
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**31 - 2, max_value=2**31 + 2)
    | st.floats(allow_nan=True, allow_infinity=True)
    | text
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["step", "screenshot", "action", "actions", "x"]) | text, inner, max_size=4)
    ),
    max_leaves=8,
)
steps = st.fixed_dictionaries(
    {"step": st.integers(-2, 6) | values, "screenshot": st.sampled_from(NAMES) | values},
    optional={"action": values, "actions": values},
)
lines = st.lists(
    st.one_of(
        steps.map(lambda s: json.dumps(s, allow_nan=True)),
        values.map(lambda v: json.dumps(v, allow_nan=True)),
        st.text(max_size=20).filter(lambda t: "\n" not in t and "\r" not in t),
    ),
    max_size=8,
)
manifests = st.one_of(
    st.fixed_dictionaries({}, optional={"episode_id": values, "task": values, "task_en": values, "steps": values}),
    values.map(lambda v: {"steps": v} if isinstance(v, list) else v),
)
prop = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check(root: Path) -> list:
    outputs, fn = ingest(root)
    c = fn.counters
    assert c.total.value == c.forwarded.value + c.dropped_count == len(outputs)
    assert all(isinstance(o, Screenshot) or (isinstance(o, TaggedOutput) and o.tag == "dead_letter") for o in outputs)
    assert_storable(outputs)
    keys = [(o.episode_id, o.step_index) for o in outputs if isinstance(o, Screenshot) and o.step_index is not None]
    assert len(keys) == len(set(keys))  # one screenshot per episode step, whatever the manifest repeats
    return outputs


@prop
@given(manifest=manifests, step_lines=lines | st.none())
def test_any_episode_manifest_ends_in_storable_records(manifest, step_lines):
    with tempfile.TemporaryDirectory() as tmp:
        ep = Path(tmp) / "ep"
        (ep / "sub").mkdir(parents=True)
        (ep / "a.png").write_bytes(GOOD)
        (ep / "sub" / "b.png").write_bytes(encode(ui(2), "PNG"))
        (ep / "episode.json").write_text(json.dumps(manifest, allow_nan=True))
        if step_lines is not None:
            (ep / "steps.jsonl").write_text("\n".join(step_lines) + "\n")
        outputs = _check(Path(tmp))
        for o in outputs:
            if isinstance(o, Screenshot):
                assert o.source_uri.startswith(str(ep) + os.sep)  # never a file outside the episode folder


names = st.binary(min_size=1, max_size=12).filter(
    lambda b: b"/" not in b and b"\x00" not in b and b not in (b".", b"..")
)


@prop
@given(name=names, ext=st.sampled_from([b".png", b".jpg", b".webp", b".gif", b""]))
def test_any_file_name_bytes_end_in_one_storable_record(name, ext):
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.fsencode(tmp) + b"/" + name + ext, "wb") as f:
            f.write(GOOD)
        outputs = _check(Path(tmp))
        if ext in (b".png", b".jpg", b".webp"):
            [record] = outputs
            try:
                (name + ext).decode("utf-8")
                assert isinstance(record, Screenshot)
            except UnicodeDecodeError:
                assert (
                    record.value.reason == "unreadable" and printable(record.value.input_id) == record.value.input_id
                )


def test_check_local_file_refuses_what_a_read_must_not_touch(tmp_path):
    root, outside = tmp_path / "in", tmp_path / "out"
    root.mkdir()
    outside.mkdir()
    (outside / "s.png").write_bytes(GOOD)
    (root / "ok.png").write_bytes(GOOD)
    os.symlink(outside / "s.png", root / "out.png")
    os.symlink(root / "ok.png", root / "in.png")
    os.symlink("../in/ok.png", root / "rel.png")
    os.mkfifo(root / "fifo.png")
    real = input_root(str(root) + "/**")
    assert real == str(root.resolve())
    assert check_local_file(str(root / "ok.png"), real) == len(GOOD)
    assert check_local_file(str(root / "in.png"), real) == len(GOOD)
    assert check_local_file(str(root / "rel.png"), real) == len(GOOD)
    for path, reason in [
        (root / "out.png", "path_outside_root"),
        (root / "fifo.png", "unreadable"),
        (Path("/dev/zero"), "unreadable"),
        (root, "unreadable"),
        (root / "missing.png", "unreadable"),
    ]:
        with pytest.raises(ValueError) as err:
            check_local_file(str(path), real)
        assert err.value.reason == reason, path
    with pytest.raises(ValueError) as err:
        check_local_file(str(root / "ok.png"), real, max_bytes=10)
    assert err.value.reason == "too_large"
    with pytest.raises(ValueError) as err:
        check_local_file(os.fsdecode(os.fsencode(str(root)) + b"/\xff.png"), real)
    assert err.value.reason == "unreadable"
    assert check_local_file("gs://bucket/a.png", None) is None  # object stores: names only
    assert input_root("gs://bucket/**") is None
    assert input_root(str(root / "*.png")) == input_root(str(root / "ok.png")) == real
