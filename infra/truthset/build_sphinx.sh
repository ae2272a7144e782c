#!/usr/bin/env bash
# Build more truth-set pages: the Sphinx documentation shipped in four Python packages' source distributions, each
# in another theme (click: Pallets; attrs: Furo; python-dateutil: Read the Docs; babel: its own), built to HTML
# offline. Only the package registry is used (pip download of pinned sdists and of Sphinx); nothing else is fetched
# (intersphinx is switched off). The pages then join the truth set as dev sites:
#
#   bash infra/truthset/build_sphinx.sh /tmp/sphinx-docs          # ~2 min the first time
#   .venv/bin/python infra/truthset/collect.py /tmp/truthset --sphinx /tmp/sphinx-docs
#
# Sphinx and the themes go to their own venv (OUT/.venv), never the project's. OUT/<name>-html/ gets each build; a
# package whose download or build fails is reported and skipped (collect.py then skips its pages with a note).
set -euo pipefail
out="${1:?usage: build_sphinx.sh OUT}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
py="${PYTHON:-python3}"

# name, sdist, docs folder inside it
packages=(
  "click click==8.1.7 docs"
  "attrs attrs==23.2.0 docs"
  "dateutil python-dateutil==4.0.0 docs"
  "babel babel==2.19.0 docs"
)
tools=(
  sphinx==9.0.4 docutils==0.22.4 furo==2025.12.19 sphinx_rtd_theme==3.1.0 myst-parser==5.2.0
  Pallets-Sphinx-Themes==2.5.0 sphinx-issues==6.0.0 sphinx-tabs==3.5.0 sphinxcontrib-log-cabinet==1.0.1
  sphinx-notfound-page==1.1.0 sphinxcontrib-towncrier==0.5.0a0 towncrier==26.9.0 sphinxcontrib-github-alt==1.2
)

if [ ! -x "$out/.venv/bin/sphinx-build" ]; then
  echo "sphinx: installing Sphinx and themes into $out/.venv"
  "$py" -m venv "$out/.venv"
  "$out/.venv/bin/pip" install -q "${tools[@]}"
fi

for entry in "${packages[@]}"; do
  read -r name spec docs <<<"$entry"
  if [ -f "$out/$name-html/index.html" ]; then
    echo "sphinx: $name already built"
    continue
  fi
  (
    set -e
    mkdir -p "$out/src/$name"
    cd "$out/src/$name"
    "$out/.venv/bin/pip" download -q --no-deps --no-binary :all: "$spec" -d . >/dev/null
    archive=$(ls ./*.tar.gz | head -1)
    tar xzf "$archive"
    folder="${archive%.tar.gz}"
    # The package itself, for autodoc and for conf.py's version lookups.
    "$out/.venv/bin/pip" install -q --no-deps "$archive"
    "$out/.venv/bin/sphinx-build" -q -b html -D intersphinx_mapping= -D intersphinx_disabled_reftypes=* \
      "$folder/$docs" "$out/$name-html" 2>"$out/$name-build.log"
  ) || { echo "sphinx: $name failed, skipped (see $out/$name-build.log)" >&2; continue; }
  echo "sphinx: built $name ($(ls "$out/$name-html"/*.html | wc -l) pages)"
done
