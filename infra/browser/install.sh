#!/usr/bin/env bash
# Headless browser for the UI checks: Debian's chromium (apt) + the playwright Python package in the app venv,
# driven with `executable_path=/usr/bin/chromium`. Never downloads playwright's own browsers (no `playwright install`).
#
#   bash infra/browser/install.sh          # ~30 s the first time (apt ~25 s, pip ~3 s); then returns at once
#   VENV=/path/to/venv bash infra/browser/install.sh
#
# Idempotent. When something cannot be installed (not root, no apt-get, apt or pip failing) it says why and exits 0:
# the browser tests then skip.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${VENV:-$here/.venv}"
chromium=/usr/bin/chromium

give_up() {  # give_up WHY [LOG]: explain, show the end of LOG, exit 0 (the browser tests skip)
  echo "browser: $1 (the headless browser tests will skip)" >&2
  if [ -n "${2:-}" ] && [ -s "$2" ]; then tail -n 15 "$2" >&2; fi
  exit 0
}

# Fonts: DejaVu for Latin, Greek, Cyrillic, Arabic and Hebrew; Noto CJK for Chinese, Japanese and Korean (without
# it those pages render as empty boxes while their DOM labels name the text). Neither changes the Latin default.
have_fonts() { command -v fc-list >/dev/null 2>&1 && fc-list :lang=zh family | grep -q .; }
if [ ! -x "$chromium" ] || ! have_fonts; then
  [ "$(id -u)" -eq 0 ] \
    || give_up "$chromium or its fonts are missing and we are not root; run 'apt-get install chromium fonts-noto-cjk'"
  command -v apt-get >/dev/null 2>&1 || give_up "$chromium or its fonts are missing and there is no apt-get here"
  echo "browser: installing chromium and fonts (apt)"
  t0=$SECONDS
  log="$(mktemp)"
  trap 'rm -f "$log"' EXIT
  export DEBIAN_FRONTEND=noninteractive
  apt_install=(apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core fonts-noto-cjk fontconfig)
  # Refresh the package lists only when the first try fails (empty or stale lists on a fresh image).
  if ! "${apt_install[@]}" >"$log" 2>&1; then
    { apt-get update -q && "${apt_install[@]}"; } >"$log" 2>&1 || give_up "apt-get could not install chromium" "$log"
  fi
  [ -x "$chromium" ] || give_up "apt-get installed chromium but there is no $chromium"
  echo "browser: chromium and fonts installed in $((SECONDS - t0))s: $("$chromium" --version 2>/dev/null || echo '?')"
fi

[ -x "$venv/bin/python" ] || give_up "no virtualenv at $venv (run infra/setup.sh first), so no playwright"
if ! "$venv/bin/python" -c 'import playwright.sync_api' 2>/dev/null; then
  echo "browser: installing playwright into $venv (the Python package only; it drives $chromium)"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check playwright \
    || give_up "pip could not install playwright into $venv"
fi
echo "browser: ready ($chromium, playwright $("$venv/bin/python" -c \
  'import importlib.metadata as m; print(m.version("playwright"))'))"
