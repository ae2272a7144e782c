#!/usr/bin/env bash
# Start a local Label Studio server in the background, bound to 127.0.0.1 only, with SQLite in a data dir of ours.
#
#   bash infra/label-studio/start.sh          # installs first if needed (infra/label-studio/install.sh)
#   LS_PORT=8090 LS_DATA_DIR=/tmp/ls bash infra/label-studio/start.sh
#
# Exits 0 once the server answers and the API token works; non-zero (with the tail of the server log) otherwise.
# Idempotent: if our server is already up on this data dir it just prints the connection info again.
#
# Env (all optional):
#   LS_PORT            port on 127.0.0.1 (default 8089)
#   LS_DATA_DIR        SQLite db, media, secrets, pid, log, token (default <repo>/.label-studio-data)
#   LS_VENV            the Label Studio virtualenv (default <repo>/.venv-label-studio)
#   LS_ADMIN_EMAIL     admin login (default admin@screenmill.local)
#   LS_ADMIN_PASSWORD  admin password; when unset one is generated into <data dir>/admin_password (0600).
#                      Only used when the admin is created (first start); change it later in the UI or with
#                      `label-studio reset_password` (same env as below).
#   LS_FILES_ROOT      LOCAL_FILES_DOCUMENT_ROOT for /data/local-files/?d=... (default /)
#   LS_PUBLIC_URL      Label Studio's --host (public URL used in generated links; default empty = relative links)
#   LS_START_TIMEOUT   seconds to wait for the server (default 180)
# Any LABEL_STUDIO_* variable in the caller's env is passed through to the server (ours win where they clash).
set -euo pipefail
umask 077

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${LS_VENV:-$here/.venv-label-studio}"
port="${LS_PORT:-8089}"
data="${LS_DATA_DIR:-$here/.label-studio-data}"
files_root="${LS_FILES_ROOT:-/}"
admin_email="${LS_ADMIN_EMAIL:-admin@screenmill.local}"
timeout="${LS_START_TIMEOUT:-180}"
bind=127.0.0.1   # never 0.0.0.0 (label-studio's --internal-host default); put a reverse proxy in front to expose it

[[ "$port" =~ ^[0-9]+$ ]] || { echo "start: LS_PORT must be a number, got '$port'" >&2; exit 2; }
mkdir -p "$data"
data="$(cd "$data" && pwd)"
chmod 700 "$data"
pidfile="$data/label-studio.pid"
portfile="$data/label-studio.port"
log="$data/label-studio.log"
tokenfile="$data/token"
pwfile="$data/admin_password"
emailfile="$data/admin_email"
# The admin is created once; afterwards the recorded login wins over LS_ADMIN_EMAIL.
[ -s "$emailfile" ] && admin_email="$(cat "$emailfile")"
url="http://$bind:$port"

bash "$here/infra/label-studio/install.sh" >/dev/null
py="$venv/bin/python"

# http_status PATH [TOKEN]: print the HTTP status code (000 when nothing answers).
http_status() {
  local hdr=()
  [ -n "${2:-}" ] && hdr=(-H "Authorization: Token $2")
  curl -s -o /dev/null -w '%{http_code}' --max-time 5 "${hdr[@]}" "$url$1" 2>/dev/null || true
}
is_ours() {  # is_ours PID: alive and a label-studio process
  [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q 'label-studio'
}
print_info() {
  echo "start: Label Studio $("$py" -c 'import importlib.metadata as m; print(m.version("label-studio"))') is up on $url (pid $(cat "$pidfile"), log $log)"
  if [ -s "$pwfile" ]; then
    echo "start: admin login: $admin_email (password in: $pwfile)"
  else
    echo "start: admin login: $admin_email (password: the LS_ADMIN_PASSWORD given when it was created)"
  fi
  echo "start: API token (legacy, header 'Authorization: Token <key>') is in: $tokenfile"
  echo "export LABEL_STUDIO_URL=$url"
  echo "export LABEL_STUDIO_API_KEY=\"\$(cat $tokenfile)\""
}

# Already running?
if [ -f "$pidfile" ] && is_ours "$(cat "$pidfile")"; then
  running_port="$(cat "$portfile" 2>/dev/null || echo "?")"
  if [ "$running_port" != "$port" ]; then
    echo "start: already running for $data on port $running_port, not $port; stop it first:" \
         "LS_DATA_DIR=$data bash $here/infra/label-studio/stop.sh" >&2
    exit 1
  fi
  if [ "$(http_status /health)" = 200 ] && [ -s "$tokenfile" ] \
     && [ "$(http_status /api/current-user/whoami "$(cat "$tokenfile")")" = 200 ]; then
    echo "start: already running"
    print_info
    exit 0
  fi
  echo "start: pid $(cat "$pidfile") is running but not healthy; stop it first: bash $here/infra/label-studio/stop.sh" >&2
  exit 1
fi
rm -f "$pidfile"

# label-studio silently moves to the next free port when ours is taken: refuse instead.
if (exec 3<>"/dev/tcp/$bind/$port") 2>/dev/null; then
  echo "start: port $port on $bind is already in use (pick another with LS_PORT)" >&2
  exit 1
fi

# Password for a new admin: LS_ADMIN_PASSWORD, else the stored one, else a new generated one (0600).
admin_password() {
  if [ -n "${LS_ADMIN_PASSWORD:-}" ]; then
    rm -f "$pwfile"   # the admin gets the env password; a stale generated file would mislead
    printf '%s' "$LS_ADMIN_PASSWORD"
  else
    [ -s "$pwfile" ] || "$py" -c 'import secrets; print(secrets.token_urlsafe(18))' >"$pwfile"
    chmod 600 "$pwfile"
    cat "$pwfile"
  fi
}

# First start (no token yet): label-studio creates the admin, sets our generated legacy token on it and creates the
# organization with legacy tokens enabled. Later starts pass empty user vars (they shadow a stray USERNAME/PASSWORD).
user_env=(LABEL_STUDIO_USERNAME= LABEL_STUDIO_PASSWORD= LABEL_STUDIO_USER_TOKEN=)
if [ ! -s "$tokenfile" ]; then
  "$py" -c 'import secrets; print(secrets.token_hex(20))' >"$tokenfile"   # 40 chars = DRF Token.key max length
  chmod 600 "$tokenfile"
  printf '%s\n' "$admin_email" >"$emailfile"
  user_env=(LABEL_STUDIO_USERNAME="$admin_email" LABEL_STUDIO_PASSWORD="$(admin_password)"
            LABEL_STUDIO_USER_TOKEN="$(cat "$tokenfile")")
fi

# A clean environment: label-studio also reads unprefixed HOST, PORT, USERNAME, PASSWORD, DEBUG, DATABASE_NAME, ...
passthrough=()
for name in $(compgen -e); do
  if [[ "$name" == LABEL_STUDIO_* ]]; then passthrough+=("$name=${!name}"); fi
done
mkdir -p "$data/home" "$data/xdg/config" "$data/xdg/cache" "$data/xdg/data"

echo "start: starting Label Studio on $url (data $data, log $log)"
t0=$SECONDS
setsid env -i \
  PATH="$venv/bin:/usr/local/bin:/usr/bin:/bin" LANG=C.UTF-8 LC_ALL=C.UTF-8 \
  HOME="$data/home" XDG_CONFIG_HOME="$data/xdg/config" XDG_CACHE_HOME="$data/xdg/cache" XDG_DATA_HOME="$data/xdg/data" \
  "${passthrough[@]}" \
  LABEL_STUDIO_BASE_DATA_DIR="$data" \
  DJANGO_DB=sqlite LABEL_STUDIO_DATABASE_NAME="$data/label_studio.sqlite3" \
  LABEL_STUDIO_HOST="${LS_PUBLIC_URL:-}" \
  LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN=true \
  LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED=true LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT="$files_root" \
  SENTRY_DSN= FRONTEND_SENTRY_DSN= LABEL_STUDIO_SENTRY_DSN= LABEL_STUDIO_FRONTEND_SENTRY_DSN= \
  LABEL_STUDIO_COLLECT_ANALYTICS=false LABEL_STUDIO_LATEST_VERSION_CHECK=false \
  "${user_env[@]}" \
  "$venv/bin/label-studio" start --no-browser \
    --internal-host "$bind" --port "$port" --data-dir "$data" --enable-legacy-api-token \
  </dev/null >>"$log" 2>&1 &
pid=$!
echo "$pid" >"$pidfile"
echo "$port" >"$portfile"

fail() {
  echo "start: $1" >&2
  echo "----- last 40 lines of $log -----" >&2
  tail -n 40 "$log" >&2
  if kill -0 "$pid" 2>/dev/null; then kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true; fi
  rm -f "$pidfile"
  exit 1
}

until [ "$(http_status /health)" = 200 ]; do
  kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; fail "the server exited during start-up"; }
  [ $((SECONDS - t0)) -lt "$timeout" ] || fail "no answer on $url/health after ${timeout}s"
  sleep 1
done

# The token must work. If it does not (token file lost, an admin made elsewhere, legacy tokens switched off), repair it
# in the database: make sure the admin exists, enable legacy tokens for its organization, write its token to the file.
if [ "$(http_status /api/current-user/whoami "$(cat "$tokenfile")")" != 200 ]; then
  echo "start: the token in $tokenfile is not accepted; repairing the admin user and token in the database"
  (cd "$data" && env -i PATH="$PATH" HOME="$data/home" XDG_CONFIG_HOME="$data/xdg/config" \
     XDG_CACHE_HOME="$data/xdg/cache" XDG_DATA_HOME="$data/xdg/data" "${passthrough[@]}" \
     LABEL_STUDIO_BASE_DATA_DIR="$data" DJANGO_DB=sqlite LABEL_STUDIO_DATABASE_NAME="$data/label_studio.sqlite3" \
     SENTRY_DSN= FRONTEND_SENTRY_DSN= LABEL_STUDIO_COLLECT_ANALYTICS=false LABEL_STUDIO_LATEST_VERSION_CHECK=false \
     LS_ADMIN_EMAIL="$admin_email" LS_ADMIN_EMAIL_GIVEN="${LS_ADMIN_EMAIL:-}" LS_ADMIN_PASSWORD="${LS_ADMIN_PASSWORD:-}" LS_DATA="$data" \
     "$py" - <<'PY'
import os, secrets, sys, pathlib
import label_studio
sys.path.insert(0, str(pathlib.Path(label_studio.__file__).parent))
os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'label_studio.core.settings.label_studio')
import django
django.setup()
from organizations.models import Organization
from rest_framework.authtoken.models import Token
from users.models import User

data = pathlib.Path(os.environ['LS_DATA'])


def write_secret(name, text):
    fd = os.open(data / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, 'w') as f:
        f.write(text + '\n')


email = os.environ['LS_ADMIN_EMAIL']
user = User.objects.filter(email=email).first()
if user is None and not os.environ.get('LS_ADMIN_EMAIL_GIVEN'):
    # no login recorded or asked for: keep using the superuser that is already there, if any
    user = User.objects.filter(is_superuser=True).order_by('id').first()
    email = user.email if user else email
if user is None:
    password = os.environ.get('LS_ADMIN_PASSWORD', '')
    if password:
        (data / 'admin_password').unlink(missing_ok=True)
    elif (data / 'admin_password').is_file():
        password = (data / 'admin_password').read_text().strip()
    else:
        password = secrets.token_urlsafe(18)
        write_secret('admin_password', password)
    user = User.objects.create_user(email=email, password=password)
    user.is_staff = user.is_superuser = True
    user.save()
org = user.active_organization or Organization.objects.first()
if org is None:
    org = Organization.create_organization(created_by=user, title='Label Studio', legacy_api_tokens_enabled=True)
elif not org.has_user(user):
    org.add_user(user)
if user.active_organization_id != org.id:
    user.active_organization = org
    user.save(update_fields=['active_organization'])
org.jwt.legacy_api_tokens_enabled = True
org.jwt.save()
token, _ = Token.objects.get_or_create(user=user)
write_secret('token', token.key)
write_secret('admin_email', email)
print(f'repaired: admin {email}, legacy tokens enabled, token written')
PY
  ) >>"$log" 2>&1 || fail "could not repair the admin user/token (see the log)"
  [ "$(http_status /api/current-user/whoami "$(cat "$tokenfile")")" = 200 ] || fail "the API token is still not accepted"
fi

echo "start: ready after $((SECONDS - t0))s"
print_info
