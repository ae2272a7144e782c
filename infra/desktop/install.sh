#!/usr/bin/env bash
# Desktop apps as a data source (`screenmill run --apps FILE`): Debian's Xvfb, the AT-SPI accessibility bus and its
# Python bindings, xdotool, the X window tools, the JWM window manager (decorations, `--window-manager`), and four
# small test / sample apps: galculator and mousepad (GTK 3), gnome-calculator (GTK 4), speedcrunch (Qt 5); GTK 4's
# Python bindings (gir1.2-gtk-4.0, 2 packages) for the self-made GTK 4 test app (tests/annotators/desktop/apps/).
#
#   bash infra/desktop/install.sh          # ~10-40 s the first time (apt); then returns at once
#
# The AT-SPI client runs inside each desktop session as the unprivileged app user under the system Python
# (/usr/bin/python3 with Debian's python3-gi), never in the venv: the venv's interpreter need not be runnable by that
# user, and a client keeps its bus for the life of its process. So nothing is built or pip-installed here.
# Idempotent. When something cannot be installed (not root, no apt-get, apt failing) it says why and exits 0: the
# desktop tests then skip.
set -euo pipefail

give_up() {  # give_up WHY [LOG]: explain, show the end of LOG, exit 0 (the desktop tests skip)
  echo "desktop: $1 (the desktop app tests will skip)" >&2
  if [ -n "${2:-}" ] && [ -s "$2" ]; then tail -n 15 "$2" >&2; fi
  exit 0
}

packages=(xvfb at-spi2-core gir1.2-atspi-2.0 python3-gi dbus-x11 dbus xdotool x11-utils util-linux jwm
  galculator mousepad gnome-calculator speedcrunch gir1.2-gtk-4.0)
have_all() {
  local tool
  for tool in Xvfb xdotool xwininfo xprop jwm dbus-daemon unshare setpriv galculator mousepad gnome-calculator speedcrunch; do
    command -v "$tool" >/dev/null 2>&1 || return 1
  done
  [ -x /usr/libexec/at-spi-bus-launcher ] || return 1
  /usr/bin/python3 -c 'import gi; gi.require_version("Atspi", "2.0"); from gi.repository import Atspi' 2>/dev/null &&
    /usr/bin/python3 -c 'import gi; gi.require_version("Gtk", "4.0"); from gi.repository import Gtk' 2>/dev/null
}

if ! have_all; then
  [ "$(id -u)" -eq 0 ] || give_up "desktop packages are missing and we are not root; run 'apt-get install ${packages[*]}'"
  command -v apt-get >/dev/null 2>&1 || give_up "desktop packages are missing and there is no apt-get here"
  echo "desktop: installing Xvfb, AT-SPI, xdotool and the test apps (apt)"
  t0=$SECONDS
  log="$(mktemp)"
  trap 'rm -f "$log"' EXIT
  export DEBIAN_FRONTEND=noninteractive
  apt_install=(apt-get install -y -q --no-install-recommends "${packages[@]}")
  # Refresh the package lists only when the first try fails (empty or stale lists on a fresh image).
  if ! "${apt_install[@]}" >"$log" 2>&1; then
    { apt-get update -q && "${apt_install[@]}"; } >"$log" 2>&1 || give_up "apt-get could not install them" "$log"
  fi
  have_all || give_up "apt-get ran but a tool is still missing" "$log"
  echo "desktop: installed in $((SECONDS - t0))s"
fi
echo "desktop: ready (Xvfb, AT-SPI $(dpkg-query -W -f '${Version}' at-spi2-core 2>/dev/null || echo '?'), galculator," \
  "mousepad, gnome-calculator, speedcrunch)"

# The self-made GTK 3 test app (tests/annotators/desktop/apps/gtk3_shapes.py, run by /usr/bin/python3): GTK 3's
# introspection data (gir1.2-gtk-3.0 and its 5 small dependencies: ~22 s of apt the first time, then nothing).
if ! /usr/bin/python3 -c 'import gi; gi.require_version("Gtk", "3.0"); from gi.repository import Gtk' 2>/dev/null; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "desktop: installing gir1.2-gtk-3.0 for the self-made GTK 3 test app (apt)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends gir1.2-gtk-3.0 >/dev/null 2>&1 \
      || echo "desktop: gir1.2-gtk-3.0 could not be installed (the self-made app's test will skip)" >&2
  else
    echo "desktop: gir1.2-gtk-3.0 is missing (apt-get install gir1.2-gtk-3.0; the self-made app's test will skip)" >&2
  fi
fi
