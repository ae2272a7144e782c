#!/usr/bin/env bash
# Install the Debian documentation packages whose HTML joins the truth set as dev sites (collect.py's DEB_DEV_SITES):
# GNU texinfo manuals (gettext, libgcrypt, libtool, the GNU coding standards), gtk-doc API references (GLib,
# GIO, GnuTLS, libidn2), the SQLite, PostgreSQL, git, libxml2 and Go documentation, the API references of Rust's
# standard library and Erlang/OTP, Python's own documentation, and the flex, R, Bash, MPFR, Mailutils and AutoGen
# manuals, and the m4 manual and json-c reference of the fresh split. Only Debian's package registry is used; a page of a package that is not installed is skipped by
# collect.py with a note.
#
#   sudo bash infra/truthset/install_docs.sh          # ~2 min, ~1 GB on disk
#   .venv/bin/python infra/truthset/collect.py /tmp/truthset
#
# Needs root (apt-get). Nothing here is needed by the pipeline or its tests.
set -euo pipefail
packages=(
  gettext-doc gnutls-doc libidn2-doc libgcrypt20-doc autoconf-doc libtool-doc libglib2.0-doc
  git-doc sqlite3-doc postgresql-doc-15 libxml2-doc golang-1.19-doc erlang-doc rust-doc python3-doc
  flex-doc r-doc-html bash-doc libmpfr-doc mailutils-doc autogen-doc
  m4-doc libjson-c-doc  # the held-out fresh split (collect.py's FRESH_SITES; ~2 MB): scored, never tuned on
)
if [ "$(id -u)" != 0 ]; then
  echo "install_docs.sh: needs root for apt-get (run it with sudo)" >&2
  exit 1
fi
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${packages[@]}"; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${packages[@]}"
fi
