#!/usr/bin/env bash
# Stop the Label Studio server started by start.sh (pid file in the data dir): TERM, then KILL after a timeout.
#
#   bash infra/label-studio/stop.sh
#   LS_DATA_DIR=/tmp/ls LS_STOP_TIMEOUT=20 bash infra/label-studio/stop.sh
#
# Idempotent: exits 0 when nothing is running.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
data="${LS_DATA_DIR:-$here/.label-studio-data}"
timeout="${LS_STOP_TIMEOUT:-15}"
pidfile="$data/label-studio.pid"

if [ ! -f "$pidfile" ]; then
  echo "stop: not running (no $pidfile)"
  exit 0
fi
pid="$(cat "$pidfile")"
# Only signal a live label-studio process (a stale pid file may name a recycled pid).
if ! { [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null \
       && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'label-studio'; }; then
  echo "stop: not running (stale pid file $pidfile removed)"
  rm -f "$pidfile" "$data/label-studio.port"
  exit 0
fi

# start.sh runs the server as a session/process-group leader (setsid): signal the group, else the pid.
signal() { kill "-$1" -- "-$pid" 2>/dev/null || kill "-$1" "$pid" 2>/dev/null || true; }
echo "stop: stopping Label Studio (pid $pid)"
signal TERM
for _ in $(seq $((timeout * 5))); do
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.2
done
if kill -0 "$pid" 2>/dev/null; then
  echo "stop: still alive after ${timeout}s, sending KILL"
  signal KILL
  for _ in $(seq 25); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
fi
if kill -0 "$pid" 2>/dev/null; then
  echo "stop: pid $pid did not exit" >&2
  exit 1
fi
rm -f "$pidfile" "$data/label-studio.port"
echo "stop: stopped"
