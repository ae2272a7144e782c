"""The review loop against a real Label Studio server on 127.0.0.1 (started and stopped by the session fixture).

Labels come from a real OCR run over two truth-set pages; reviews are created through the API the way a reviewer's
Submit does (accept, move a box, reject); `screenmill review pull` must turn them into `reviewed/` rows in exact
original pixels. A rerun must not duplicate tasks, and a push cut off by the server going down must be finished by a
rerun without losing or duplicating anything.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import shutil
import socket
import subprocess
import urllib.request
from pathlib import Path

import pytest
from screenmill.schemas.tables import read_shards
from screenmill.stages.clients.labelstudio import Connection, LabelStudioClient
from screenmill.stages.review import LABEL_CONFIG

REPO = Path(__file__).resolve().parents[2]
LS_VENV = Path(os.environ.get("LS_VENV", REPO / ".venv-label-studio"))
CHROMIUM = Path("/usr/bin/chromium")  # Debian's chromium, driven by playwright (never `playwright install`)

pytestmark = [
    pytest.mark.slow,  # a real Label Studio server (Django) started for the module, an OCR run pushed to it
    pytest.mark.skipif(
        not (LS_VENV / "bin" / "label-studio").exists(),
        reason="Label Studio is not installed (bash infra/label-studio/install.sh; infra/test.sh does it)",
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def label_studio(tmp_path_factory):
    pytest.importorskip("label_studio_sdk")
    files_root = tmp_path_factory.mktemp("ls-files")
    env = {
        **os.environ,
        "LS_VENV": str(LS_VENV),
        "LS_PORT": str(_free_port()),
        "LS_DATA_DIR": str(tmp_path_factory.mktemp("ls-data")),
        "LS_FILES_ROOT": str(files_root),
    }
    script = str(REPO / "infra/label-studio/start.sh")
    start = subprocess.run(["bash", script], env=env, capture_output=True, text=True, timeout=600)
    assert start.returncode == 0, start.stdout[-3000:] + start.stderr[-3000:]
    token_file = Path(env["LS_DATA_DIR"]) / "token"
    server = {
        "env": env,
        "files_root": files_root,
        "url": f"http://127.0.0.1:{env['LS_PORT']}",
        "token_file": token_file,
        "start": lambda: subprocess.run(
            ["bash", str(REPO / "infra/label-studio/start.sh")], env=env, check=True, capture_output=True, timeout=600
        ),  # fmt: skip
        "stop": lambda: subprocess.run(
            ["bash", str(REPO / "infra/label-studio/stop.sh")], env=env, check=True, capture_output=True, timeout=120
        ),  # fmt: skip
    }
    try:
        yield server
    finally:
        server["stop"]()


@pytest.fixture
def review_env(label_studio, monkeypatch):
    monkeypatch.setenv("LABEL_STUDIO_URL", label_studio["url"])
    monkeypatch.setenv("LABEL_STUDIO_TOKEN_FILE", str(label_studio["token_file"]))
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    return label_studio


@pytest.fixture(scope="module")
def labelled_run(label_studio, samples_dir):
    """A real OCR run over two truth pages placed under the server's files root."""
    pytest.importorskip("rapidocr_onnxruntime")
    from screenmill.pipelines.run import run

    inputs = label_studio["files_root"] / "shots"
    inputs.mkdir()
    for name in ("login.png", "settings.png"):
        shutil.copy(samples_dir / "truth" / name, inputs / name)
    out = label_studio["files_root"].parent / "review-out"
    run(["--input", str(inputs), "--output", str(out), "--quiet", "--ocr-threads", "2"])
    return out


def _client(server) -> LabelStudioClient:
    return LabelStudioClient(Connection(server["url"], server["token_file"].read_text().strip()))


def _push(out, project, *extra):
    from screenmill.pipelines.review import main

    args = ["push", str(out), "--project", project, "--qa-rate", "1.0", "--quota", "5", "--chunk-size", "2"]
    return main([*args, "--files-root", "/", *extra])


def test_push_review_pull(review_env, labelled_run, capsys):
    from screenmill.pipelines.review import main

    files_root = str(review_env["files_root"])
    assert _push(labelled_run, "loop", "--files-root", files_root) == 0
    out = capsys.readouterr().out
    assert "already_there=0 forwarded=5 imported=5" in out and "qa_sample=" in out
    assert _push(labelled_run, "loop", "--files-root", files_root) == 0  # rerun: nothing new
    assert "already_there=5 forwarded=5 imported=0" in capsys.readouterr().out

    client = _client(review_env)
    project = client.ensure_project("loop", LABEL_CONFIG)
    tasks = sorted(client.tasks(project), key=lambda t: t["data"]["label_id"])
    assert len(tasks) == 5 and len({t["data"]["label_id"] for t in tasks}) == 5
    assert all(t["data"]["image"].startswith("/data/local-files/?d=shots/") for t in tasks)
    assert all(len(t["predictions"]) == 1 for t in tasks)
    token = review_env["token_file"].read_text().strip()
    headers = {"Authorization": f"Token {token}"}
    request = urllib.request.Request(review_env["url"] + tasks[0]["data"]["image"], headers=headers)
    with urllib.request.urlopen(request, timeout=30) as served:  # the server really serves the screenshot
        assert served.status == 200 and served.headers["Content-Type"] == "image/png"
        assert served.read()[:8] == b"\x89PNG\r\n\x1a\n"

    def verdict(v):
        return {"from_name": "verdict", "to_name": "image", "type": "choices", "value": {"choices": [v]}}

    accept, move, reject = tasks[:3]
    client.annotate(accept["id"], copy.deepcopy(accept["predictions"][0]["result"]) + [verdict("accept")], 2.0)
    moved = copy.deepcopy(move["predictions"][0]["result"])
    moved[0]["value"].update(x=10.0, y=20.0, width=25.0, height=5.0)
    client.annotate(move["id"], moved + [verdict("fix")], 4.5)
    client.annotate(reject["id"], [verdict("reject")])

    assert main(["pull", str(labelled_run), "--project", "loop"]) == 0
    rows = {r["label_id"]: r for r in read_shards(str(labelled_run), "reviewed").to_pylist()}
    assert set(rows) == {accept["data"]["label_id"], move["data"]["label_id"], reject["data"]["label_id"]}
    a, m, r = (rows[t["data"]["label_id"]] for t in (accept, move, reject))
    assert (a["verdict"], a["x0"], a["lead_time_s"]) == ("accept", None, 2.0)
    w, h = moved[0]["original_width"], moved[0]["original_height"]
    assert m["verdict"] == "fix"
    assert (m["x0"], m["y0"], m["x1"], m["y1"]) == pytest.approx((0.1 * w, 0.2 * h, 0.35 * w, 0.25 * h), abs=1e-9)
    assert r["verdict"] == "reject"
    printed = capsys.readouterr().out
    assert "reviewed=3" in printed and "accepted=33.3%" in printed

    assert main(["pull", str(labelled_run), "--project", "loop"]) == 0  # a second pull replaces, never duplicates
    assert read_shards(str(labelled_run), "reviewed").num_rows == 3


def test_push_cut_off_by_an_outage_is_finished_by_a_rerun(review_env, labelled_run, monkeypatch, capsys):
    from screenmill.stages.clients import labelstudio

    files_root = str(review_env["files_root"])
    calls = {"n": 0}
    real_import = labelstudio.LabelStudioClient._import_chunk

    def import_then_die(self, project_id, chunk):
        calls["n"] += 1
        done = real_import(self, project_id, chunk)
        if calls["n"] == 1:
            review_env["stop"]()  # the server goes down after the first chunk
        return done

    monkeypatch.setattr(labelstudio.LabelStudioClient, "_import_chunk", import_then_die)
    assert _push(labelled_run, "outage", "--files-root", files_root) == 1
    assert "rerun to resume" in capsys.readouterr().err

    monkeypatch.setattr(labelstudio.LabelStudioClient, "_import_chunk", real_import)
    review_env["start"]()
    assert _push(labelled_run, "outage", "--files-root", files_root) == 0
    counts = dict(kv.split("=") for kv in capsys.readouterr().out.splitlines()[0].split())
    assert int(counts["already_there"]) >= 1 and int(counts["already_there"]) + int(counts["imported"]) == 5
    client = _client(review_env)
    keys = [t["data"]["label_id"] for t in client.tasks(client.ensure_project("outage", LABEL_CONFIG))]
    assert len(keys) == 5 and len(set(keys)) == 5


# Non-transparent bounding box of every Konva layer of the labeling view's image, in canvas pixels.
_KONVA_LAYERS_JS = """() => [...document.querySelectorAll('.lsf-main-view .konvajs-content canvas')].map((c) => {
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let x0 = c.width, y0 = c.height, x1 = -1, y1 = -1;
  for (let y = 0; y < c.height; y++) for (let x = 0; x < c.width; x++) {
    if (d[(y * c.width + x) * 4 + 3] === 0) continue;
    x0 = Math.min(x0, x); y0 = Math.min(y0, y); x1 = Math.max(x1, x); y1 = Math.max(y1, y);
  }
  return {w: c.width, h: c.height, box: x1 < 0 ? null : [x0, y0, x1 + 1, y1 + 1]};
})"""


@pytest.mark.skipif(
    not CHROMIUM.exists() or importlib.util.find_spec("playwright") is None,
    reason=f"needs {CHROMIUM} and the playwright package (bash infra/browser/install.sh; infra/test.sh does it)",
)
def test_labeling_ui_shows_the_predicted_box(review_env, labelled_run, tmp_path, capsys):
    """A pushed task opened in the real labeling UI (headless Chromium) shows the predicted box and click point."""
    from playwright.sync_api import expect, sync_playwright

    assert _push(labelled_run, "browser", "--files-root", str(review_env["files_root"])) == 0
    capsys.readouterr()
    client = _client(review_env)
    project = client.ensure_project("browser", LABEL_CONFIG)
    task = sorted(client.tasks(project), key=lambda t: t["data"]["label_id"])[0]
    predicted = {r["type"]: r for r in task["predictions"][0]["result"]}
    box, point = predicted["rectanglelabels"], predicted["keypointlabels"]
    data_dir = Path(review_env["env"]["LS_DATA_DIR"])
    email = (data_dir / "admin_email").read_text().strip()
    # start.sh writes a generated password to the data dir, unless LS_ADMIN_PASSWORD was given
    password = review_env["env"].get("LS_ADMIN_PASSWORD") or (data_dir / "admin_password").read_text().strip()
    url = review_env["url"]

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.set_default_timeout(30_000)
            try:
                page.goto(f"{url}/user/login/")
                page.fill("input[name=email]", email)
                page.fill("input[name=password]", password)
                with page.expect_navigation():
                    page.click("button[type=submit]")
                assert "/user/login" not in page.url, "login through the form failed"

                # The data manager opens one task in the labeling view with ?task=<id> (it adds &tab=<view>).
                page.goto(f"{url}/projects/{project}/data?task={task['id']}")
                image = page.locator(".lsf-main-view .lsf-image img")
                image.wait_for(state="attached")
                page.wait_for_function("(img) => img.complete && img.naturalWidth > 0", arg=image.element_handle())
                natural = image.evaluate("(img) => [img.naturalWidth, img.naturalHeight]")
                assert natural == [box["original_width"], box["original_height"]]

                # The prediction becomes the draft annotation: its regions are listed in the side panel ...
                regions = page.locator(".lsf-outliner-item__title")
                expect(regions.filter(has_text="target")).to_have_count(1)
                expect(regions.filter(has_text="click")).to_have_count(1)
                expect(regions).to_have_count(2)
                assert f"task={task['id']}" in page.url

                # ... and drawn on the image: one Konva layer holds exactly the predicted box (the click point lies
                # inside it, or sticks out by at most its radius); the other layers are empty or the full image.
                layers = page.evaluate(_KONVA_LAYERS_JS)
            finally:
                page.screenshot(path=str(tmp_path / "labeling.png"))
        finally:
            browser.close()

    w, h = layers[0]["w"], layers[0]["h"]
    drawn = [layer["box"] for layer in layers if layer["box"] not in (None, [0, 0, w, h])]
    assert len(drawn) == 1, f"expected one layer with regions, got {layers}"
    x0, y0, x1, y1 = drawn[0]
    v, pv, tol = box["value"], point["value"], 3
    bx0, by0 = v["x"] * w / 100, v["y"] * h / 100
    bx1, by1 = (v["x"] + v["width"]) * w / 100, (v["y"] + v["height"]) * h / 100
    px, py, r = pv["x"] * w / 100, pv["y"] * h / 100, pv["width"] * w / 100
    where = f"drawn {drawn[0]}, predicted box {(bx0, by0, bx1, by1)}, point {(px, py)} r={r}"
    assert x0 <= bx0 + tol and y0 <= by0 + tol and x1 >= bx1 - tol and y1 >= by1 - tol, where
    assert x0 >= min(bx0, px - r) - tol and y0 >= min(by0, py - r) - tol, where
    assert x1 <= max(bx1, px + r) + tol and y1 <= max(by1, py + r) + tol, where
