#!/usr/bin/env bash
# Install Label Studio into its OWN virtualenv (never the app's .venv: label-studio pins old pytz, Django 5.2, ... and
# brings its own label-studio-sdk).
#
#   bash infra/label-studio/install.sh
#   LS_VENV=/path/to/venv LS_VERSION=1.23.2 bash infra/label-studio/install.sh
#
# Idempotent: a stamp file (keyed on the version and this script) makes a second call return at once.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${LS_VENV:-$here/.venv-label-studio}"
version="${LS_VERSION:-1.23.2}"   # newest 1.23.x on PyPI when this was written
py="${PYTHON:-python3}"
stamp="$venv/.screenmill-label-studio-$(printf '%s\n' "$version" | cat - "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)"

if [ -f "$stamp" ]; then
  echo "label-studio: $(cat "$stamp") in $venv is up to date"
  exit 0
fi

"$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "label-studio 1.23 needs Python >= 3.10")'
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
quiet_pip() {  # pip, minus the harmless "Location ... is ignored" lines some local mirrors cause
  "$venv/bin/python" -m pip --disable-pip-version-check "$@" 2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2)
}
quiet_pip install -q --upgrade pip
quiet_pip install -q "label-studio==$version"

installed="$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("label-studio"))')"
[ "$installed" = "$version" ] || { echo "label-studio: expected $version, got $installed" >&2; exit 1; }
rm -f "$venv"/.screenmill-label-studio-*
echo "label-studio $installed" >"$stamp"
echo "label-studio: $installed ready -> $venv (start it with: bash $here/infra/label-studio/start.sh)"
