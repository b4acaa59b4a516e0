#!/usr/bin/env bash
# Start nginx as a Bazel HTTP cache on 127.0.0.1:$PORT (default 19090), state in $DIR.
# ACCESS_LOG=1 logs every request to $DIR/access.log (method URI status bytes-sent bytes-received seconds).
# AUTH_HEADER='Bearer xyz' makes every /ac/ and /cas/ request without that Authorization header a 401.
# Needs: apt-get install -y --no-install-recommends nginx (block service auto-start first, see README).
# Prints the master's pid; stop with nginx-down.sh (same DIR). The store is $DIR/store.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${DIR:-/tmp/rc1-nginx}; PORT=${PORT:-19090}
command -v nginx >/dev/null || { echo "nginx-up.sh: nginx is not installed (apt-get install -y --no-install-recommends nginx)" >&2; exit 3; }
mkdir -p "$DIR/store" "$DIR/tmp"
# as root, nginx workers run as nobody: they must be able to write the store and the spool (and
# search every directory above them: a 0700 parent makes every request a 403)
if [ "$(id -u)" = 0 ]; then chown nobody "$DIR/store" "$DIR/tmp"; chmod 755 "$DIR"; fi
AUTH=''
if [ -n "${AUTH_HEADER:-}" ]; then
  case "$AUTH_HEADER" in *[\"\\\'\;\$]*) echo "nginx-up.sh: AUTH_HEADER may not contain quotes, backslashes, ; or \$" >&2; exit 2;; esac
  AUTH="if (\$http_authorization != \"$AUTH_HEADER\") { return 401; }"
fi
LOG=off
if [ "${ACCESS_LOG:-}" = 1 ]; then LOG='access.log rc1'; fi
awk -v port="$PORT" -v auth="$AUTH" -v alog="$LOG" '{ gsub(/@PORT@/, port); gsub(/@AUTH@/, auth); gsub(/@ACCESS_LOG@/, alog); print }' "$HERE/nginx-cache.conf.template" > "$DIR/nginx.conf"
chmod 600 "$DIR/nginx.conf"
setsid nginx -p "$DIR" -e stderr -c "$DIR/nginx.conf" </dev/null >"$DIR/stderr.log" 2>&1 &
echo $! > "$DIR/master.pid"
for _ in $(seq 1 250); do
  curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && { cat "$DIR/master.pid"; exit 0; }
  kill -0 "$(cat "$DIR/master.pid")" 2>/dev/null || break
  sleep 0.02
done
echo "nginx-up.sh: nginx did not come up on 127.0.0.1:$PORT:" >&2; cat "$DIR/stderr.log" >&2; exit 1
